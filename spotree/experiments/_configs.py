"""The paper's experiments as data: method registry and run grids.

A *run* is one JSON-ready dict (experiment, method, data setting, depth,
seed, ...). Its hash is its cache key, so any change to a setting is a new
run and an unchanged one is never recomputed.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from dataclasses import dataclass, field

from ..forest import SPOForest
from ..tree import OptimalSPOTree, SPOTree

__all__ = ["Method", "METHODS", "register_method", "EXPERIMENTS", "make_grid", "run_key",
           "CONFIG_VERSION", "parse_seeds", "depth_label"]

#: Bumped when the meaning of a run changes, so stale cache files are ignored.
CONFIG_VERSION = 1


@dataclass(frozen=True)
class Method:
    """One method of the experiments.

    Parameters
    ----------
    name : str
        Label in tables and figures, e.g. ``"SPOT"``.
    estimator : type
        The estimator class, e.g. :class:`~spotree.SPOTree`; it is built as
        ``estimator(problem, **params, ...)``.
    kind : {"tree", "forest", "optimal"}
        How the runner fits it: a greedy tree pruned on the validation set,
        a forest with ``max_features`` tuned on the validation set
        (:func:`~spotree.tune_max_features`), or an optimal tree at a fixed
        depth, pruned on the validation set.
    params : dict
        Constructor parameters, e.g. ``{"criterion": "spo"}``.
    """

    name: str
    estimator: type
    kind: str
    params: dict = field(default_factory=dict)

    def depths(self, depths):
        """The depths this method runs at: forests are unrestricted only,
        optimal trees need a fixed depth."""
        if self.kind == "forest":
            return [None]
        if self.kind == "optimal":
            return [d for d in depths if d is not None]
        return list(depths)


METHODS = {}


def register_method(method):
    """Add (or replace) a method of the experiments; returns it."""
    if method.kind not in ("tree", "forest", "optimal"):
        raise ValueError(f"Method.kind must be 'tree', 'forest' or 'optimal'; got "
                         f"{method.kind!r}.")
    if not (isinstance(method.estimator, type) and hasattr(method.estimator, "fit")):
        raise TypeError(f"Method.estimator must be an estimator class; got "
                        f"{method.estimator!r}.")
    METHODS[method.name] = method
    return method


for _m in (Method("SPOT", SPOTree, "tree", {"criterion": "spo"}),
           Method("CART", SPOTree, "tree", {"criterion": "mse"}),
           # The paper's "SPOT MILP": an optimal tree of fixed depth. OptimalSPOTree's
           # default exact search minimizes the same objective as the MILP, faster.
           Method("SPOT Optimal", OptimalSPOTree, "optimal", {"time_limit": 60}),
           Method("SPO Forest", SPOForest, "forest", {"criterion": "spo"}),
           Method("CART Forest", SPOForest, "forest", {"criterion": "mse"})):
    register_method(_m)


def depth_label(d):
    """"1", "2", ... or "unrestricted" for a run's depth (None, or "" from a CSV)."""
    return "unrestricted" if d in (None, "", "None") else str(int(float(d)))


def parse_seeds(text):
    """``"10"`` -> seeds 0..9; ``"0,3,7"`` -> those; ``"2:5"`` -> 2, 3, 4."""
    text = str(text).strip()
    try:
        if "," in text:
            seeds = [int(s) for s in text.split(",") if s.strip()]
        elif ":" in text:
            lo, hi = (int(s) for s in text.split(":"))
            seeds = list(range(lo, hi))
        else:
            seeds = list(range(int(text)))
    except ValueError:
        raise ValueError(f"--seeds must be a count (10), a list (0,3,7) or a range (2:5); "
                         f"got {text!r}.") from None
    if not seeds or any(s < 0 for s in seeds):
        raise ValueError(f"--seeds must name at least one non-negative seed; got {text!r}.")
    return seeds


# Each experiment: the full grid (paper) and the --quick grid.
EXPERIMENTS = {
    "shortest-path": {
        "description": "Noisy shortest path on a 4x4 grid (paper section 5.1)",
        "full": {
            "settings": [
                {"n_train": 200, "depths": [1, 2, 3, None], "noises": [0.0, 0.25]},
                {"n_train": 10000, "depths": [2, 4, 6, None], "noises": [0.0, 0.5]},
            ],
            "degrees": [2, 10], "seeds": 10, "n_test": 1000, "min_samples_leaf": 20,
            "validation_fraction": 0.2, "n_estimators": 100, "max_features_grid": [2, 3, 4, 5],
            "methods": ["SPOT", "CART", "SPOT Optimal", "SPO Forest", "CART Forest"],
        },
        "quick": {
            "settings": [{"n_train": 200, "depths": [1, 2, 3, None], "noises": [0.0, 0.25]}],
            "degrees": [2, 10], "seeds": 5, "n_test": 1000, "min_samples_leaf": 20,
            "validation_fraction": 0.2, "n_estimators": 50, "max_features_grid": [2, 3, 4, 5],
            "methods": ["SPOT", "CART", "SPO Forest", "CART Forest"],
        },
    },
    "illustrative": {
        "description": "Two roads, one feature: SPOT vs CART (paper section 3.1)",
        "full": {"depths": [1, 2, 3, 4], "n_train": 10000, "n_test": 10000, "seeds": 1,
                 "methods": ["SPOT", "CART"]},
        "quick": {"depths": [1, 2, 3, 4], "n_train": 10000, "n_test": 10000, "seeds": 1,
                  "methods": ["SPOT", "CART"]},
    },
    "news": {
        "description": "News article recommendation, 9 constraint sets (paper section 5.2)",
        "full": {"constraint_sets": 9, "depths": [2, 4, 6, None], "min_samples_leaf": 10000,
                 "n_estimators": 50, "max_features_grid": [2, 3, 4, 5],
                 "synthetic_sizes": [5130, 5105, 8768],
                 "methods": ["SPOT", "CART", "SPOT Optimal", "SPO Forest", "CART Forest"]},
        "quick": {"constraint_sets": 3, "depths": [2, None], "min_samples_leaf": 10000,
                  "n_estimators": 10, "max_features_grid": [2, 3, 4, 5],
                  "synthetic_sizes": [1500, 1500, 2000],
                  "methods": ["SPOT", "CART"]},
    },
}


_FINGERPRINT = []


def code_fingerprint():
    """Hash of the library code that produces results (not the CLI or the plots)."""
    if not _FINGERPRINT:
        root = pathlib.Path(__file__).resolve().parents[1]
        h = hashlib.sha1()
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel.startswith(("cli", "plotting", "__main__", "experiments/_figures",
                               "experiments/_tables")):
                continue
            h.update(rel.encode())
            h.update(path.read_bytes())
        _FINGERPRINT.append(h.hexdigest()[:12])
    return _FINGERPRINT[0]


def run_key(run):
    """Stable hash of a run's settings (its cache file name)."""
    blob = json.dumps(run, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def _select_methods(grid, methods):
    names = grid["methods"] if methods is None else list(methods)
    unknown = [m for m in names if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; known: {sorted(METHODS)}.")
    return [METHODS[m] for m in names]


def make_grid(experiment, *, quick=False, seeds=None, methods=None, n_train=None,
              depths=None, data_id=None):
    """All runs of an experiment.

    Parameters
    ----------
    experiment : {"shortest-path", "illustrative", "news"}
    quick : bool, default=False
        The reduced grid of ``--quick``.
    seeds : list of int, default=None
        Overrides the grid's seeds (for news: the constraint sets).
    methods : list of str, default=None
        Overrides the grid's methods (names of :data:`METHODS`).
    n_train : list of int, default=None
        Shortest path only: keep these training sizes.
    depths : list of (int or None), default=None
        Overrides the depths.
    data_id : str, default=None
        News only: fingerprint of the real data (None: synthetic make_news).

    Returns
    -------
    runs : list of dict

    Raises
    ------
    ValueError
        For an unknown experiment or method, or training sizes not in the grid.
    """
    if experiment not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {experiment!r}; choose one of "
                         f"{', '.join(EXPERIMENTS)}.")
    grid = EXPERIMENTS[experiment]["quick" if quick else "full"]
    chosen = _select_methods(grid, methods)
    from .. import __version__

    # Changed code is a new run: cached results of older code are never reused,
    # neither across releases nor across edits of a development checkout.
    base = {"experiment": experiment, "version": CONFIG_VERSION, "spotree": __version__,
            "code": code_fingerprint()}
    runs = []
    if experiment == "shortest-path":
        seed_list = seeds if seeds is not None else list(range(grid["seeds"]))
        settings = [s for s in grid["settings"] if n_train is None or s["n_train"] in n_train]
        if n_train is not None and not settings:
            raise ValueError(f"--n-train must be among "
                             f"{[s['n_train'] for s in grid['settings']]} for this grid; got "
                             f"{n_train}.")
        for s in settings:
            for degree in grid["degrees"]:
                for noise in s["noises"]:
                    for m in chosen:
                        for depth in m.depths(depths if depths is not None else s["depths"]):
                            for seed in seed_list:
                                run = dict(base, method=m.name, params=m.params,
                                           n_train=s["n_train"], degree=degree,
                                           noise=noise, depth=depth, seed=seed,
                                           n_test=grid["n_test"],
                                           min_samples_leaf=grid["min_samples_leaf"],
                                           validation_fraction=grid["validation_fraction"])
                                if m.kind == "forest":
                                    run.update(n_estimators=grid["n_estimators"],
                                               max_features_grid=grid["max_features_grid"])
                                runs.append(run)
    elif experiment == "illustrative":
        seed_list = seeds if seeds is not None else list(range(grid["seeds"]))
        for m in chosen:
            for depth in m.depths(depths if depths is not None else grid["depths"]):
                for seed in seed_list:
                    runs.append(dict(base, method=m.name, params=m.params, depth=depth, seed=seed,
                                     n_train=grid["n_train"], n_test=grid["n_test"]))
    else:  # news
        seed_list = seeds if seeds is not None else list(range(grid["constraint_sets"]))
        for m in chosen:
            for depth in m.depths(depths if depths is not None else grid["depths"]):
                for k in seed_list:
                    run = dict(base, method=m.name, params=m.params, depth=depth, constraint_set=k,
                               min_samples_leaf=grid["min_samples_leaf"],
                               data=data_id or "synthetic")
                    if data_id is None:
                        run["synthetic_sizes"] = grid["synthetic_sizes"]
                    if m.kind == "forest":
                        run.update(n_estimators=grid["n_estimators"],
                                   max_features_grid=grid["max_features_grid"])
                    runs.append(run)
    return runs
