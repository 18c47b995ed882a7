"""The paper's experiments as data: method registry and run grids.

A *run* is one JSON-ready dict (experiment, method, data setting, depth,
seed, ...). Its hash is its cache key, so any change to a setting is a new
run and an unchanged one is never recomputed.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import numbers
import pathlib
from collections.abc import MutableMapping
from dataclasses import dataclass, field

__all__ = ["Method", "METHODS", "register_method", "EXPERIMENTS", "make_grid", "run_key",
           "CONFIG_VERSION", "parse_seeds", "depth_label", "PyEPOMethod", "PYEPO_METHODS",
           "PYEPO_PROBLEMS", "PYEPO_MIN_N_TRAIN", "PYEPO_MODELS", "pyepo_available",
           "pyepo_skip_note", "register_pyepo_method", "pyepo_method_needs_pyepo",
           "ENERGY_METHODS", "ENERGY_SCALINGS"]

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


class _Registry(MutableMapping):
    """``METHODS``: a dict of name -> :class:`Method` whose built-in entries are
    made on first read. Their names are known without importing any estimator
    (scikit-learn, numba: over a second), so that ``spotree reproduce
    --methods`` checks a command line at once."""

    def __init__(self):
        self._items = {}

    def __getitem__(self, name):
        item = self._items[name]
        if not isinstance(item, Method):
            item = self._items[name] = item()
        return item

    def __setitem__(self, name, method):
        self._items[name] = method

    def __delitem__(self, name):
        del self._items[name]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __repr__(self):
        return repr(dict(self))


METHODS = _Registry()


def _builtin(name, module, cls, kind, params):
    """Register a built-in method whose estimator (``cls`` of ``spotree.<module>``)
    is imported on first read."""
    def load():
        return Method(name, getattr(importlib.import_module(f"..{module}", __package__), cls),
                      kind, params)

    METHODS._items[name] = load


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


_builtin("SPOT", "tree", "SPOTree", "tree", {"criterion": "spo"})
_builtin("CART", "tree", "SPOTree", "tree", {"criterion": "mse"})
# The paper's "SPOT MILP": an optimal tree of fixed depth. OptimalSPOTree's
# default exact search minimizes the same objective as the MILP, faster.
_builtin("SPOT Optimal", "tree", "OptimalSPOTree", "optimal", {"time_limit": 60})
# The paper's forests split on the features alone (no ridge features).
_builtin("SPO Forest", "forest", "SPOForest", "forest",
         {"criterion": "spo", "ridge_features": False})
_builtin("CART Forest", "forest", "SPOForest", "forest",
         {"criterion": "mse", "ridge_features": False})


@dataclass(frozen=True)
class PyEPOMethod:
    """One method of the PyEPO comparison (``spotree reproduce pyepo``).

    Parameters
    ----------
    name : str
        Label in tables and figures, e.g. ``"SPOBoost"``.
    model : {"boost", "forest", "tree", "linear", "linear-conv", "least-squares", \
"poly-ridge", "mlp", "hgb", "pyepo"}
        How :mod:`spotree.experiments._pyepo` fits it.
    params : dict
        Constructor parameters of the estimator, e.g. ``{"loss": "mse"}``
        (for "pyepo": ``loss`` "spo+" or "pfyl", ``net`` "linear" or "mlp").
    description : str
        One line for summary.md.
    """

    name: str
    model: str
    params: dict = field(default_factory=dict)
    description: str = ""


#: How :mod:`spotree.experiments._pyepo` can fit a method.
PYEPO_MODELS = ("boost", "forest", "tree", "linear", "linear-conv", "least-squares",
                "poly-ridge", "mlp", "hgb", "pyepo")

#: The PyEPO comparison's methods, in table order. "SPOPlusLinear-conv" is
#: not in the default grids: the benchmark's SPO+ reference when PyEPO is missing.
PYEPO_METHODS = {m.name: m for m in (
    PyEPOMethod("SPOBoost", "boost", {},
                "gradient-boosted trees on the SPO+ loss (spotree.SPOBoost, defaults)"),
    PyEPOMethod("SPOForest", "forest", {"criterion": "spo"},
                "SPO forest (its default ridge features: the trees also split on each "
                "cost's ridge prediction), max_features in {2, 3, 4, 5} chosen on the "
                "validation rows"),
    PyEPOMethod("SPOTree", "tree", {"criterion": "spo"},
                "greedy SPO tree, pruned on the validation rows"),
    PyEPOMethod("SPOPlusLinear", "linear", {},
                "linear model trained on the SPO+ loss (Adam, lr 0.01, batch 32, 20 epochs)"),
    PyEPOMethod("LS", "least-squares", {},
                "two-stage: least-squares linear regression of the costs, then optimize"),
    PyEPOMethod("PolyRidge", "poly-ridge", {"max_degree": 6},
                "two-stage: ridge regression on polynomial features (standardized), the "
                "degree (1 to 6) and the penalty chosen by leave-one-out error (RidgeCV)"),
    PyEPOMethod("MLP", "mlp", {"hidden_layer_sizes": [64, 64]},
                "two-stage: scikit-learn MLPRegressor, two hidden layers of 64, standardized "
                "features and costs, early stopping on 10% of the rows"),
    PyEPOMethod("RF", "forest", {"criterion": "mse", "ridge_features": False},
                "two-stage random forest (CART forest on the features alone), max_features "
                "tuned like SPOForest"),
    PyEPOMethod("HGB", "hgb", {},
                "two-stage gradient boosting: scikit-learn HistGradientBoostingRegressor, one "
                "per cost, early stopping on 10% of the rows"),
    PyEPOMethod("SPOBoost-mse", "boost", {"loss": "mse"},
                "ablation, not a competitor: SPOBoost with loss='mse' (the same start and "
                "rule for keeping trees, the trees fitted to squared error)"),
    PyEPOMethod("PyEPO SPO+", "pyepo", {"loss": "spo+", "net": "linear"},
                "PyEPO's own SPO+ with a torch nn.Linear (Adam, lr 0.01, batch 32, 20 epochs)"),
    PyEPOMethod("PyEPO SPO+ NN", "pyepo", {"loss": "spo+", "net": "mlp"},
                "PyEPO's SPO+ with a one-hidden-layer network (32 ReLU units), as above"),
    PyEPOMethod("PyEPO PFYL", "pyepo", {"loss": "pfyl", "net": "linear"},
                "PyEPO's perturbed Fenchel-Young loss (10 samples, sigma 1) with nn.Linear, "
                "as above"),
    PyEPOMethod("PyEPO PFYL NN", "pyepo", {"loss": "pfyl", "net": "mlp"},
                "PyEPO's perturbed Fenchel-Young loss with the one-hidden-layer network"),
    PyEPOMethod("SPOPlusLinear-conv", "linear-conv", {},
                "SPOPlusLinear trained to convergence (100 epochs, then 50 at lr 0.001)"),
)}


def register_pyepo_method(method):
    """Add (or replace) a method of the PyEPO comparison; returns it.

    Its runs carry the model and the parameters, so parallel workers fit
    them without this registration (e.g. a variant of SPOBoost compared in
    ``benchmarks/bench_pyepo.py``).
    """
    if not isinstance(method, PyEPOMethod):
        raise TypeError(f"method must be a PyEPOMethod; got {type(method).__name__}.")
    if method.model not in PYEPO_MODELS:
        raise ValueError(f"PyEPOMethod.model must be one of {', '.join(PYEPO_MODELS)}; got "
                         f"{method.model!r}.")
    PYEPO_METHODS[method.name] = method
    return method


def pyepo_method_needs_pyepo(name):
    """Whether a PyEPO-comparison method needs pyepo and torch."""
    return PYEPO_METHODS[name].model == "pyepo"


#: The PyEPO comparison's problems: name -> description.
PYEPO_PROBLEMS = {
    "shortest-path": "shortest path on a 5x5 grid (40 edges), PyEPO's generator",
    "knapsack": "0/1 knapsack, 32 items, 2 resources of capacity 20, PyEPO's generator",
}


#: The ICON energy comparison's methods (``spotree reproduce energy``), in table order.
ENERGY_METHODS = {m.name: m for m in (
    PyEPOMethod("SPOTree", "tree", {},
                "greedy SPO tree grown on the 550 training days, pruned on the 100 "
                "validation days"),
    PyEPOMethod("SPOForest", "forest", {},
                "spotree.SPOForest with its defaults (criterion 'auto': SPO or "
                "squared-error trees, whichever decides better out of bag)"),
    PyEPOMethod("SPOBoost", "boost", {},
                "gradient-boosted trees on the SPO+ loss (spotree.SPOBoost, defaults)"),
    PyEPOMethod("SPOPlusLinear", "linear", {},
                "linear model on the SPO+ loss (spotree.SPOPlusLinear, defaults)"),
    PyEPOMethod("LS-item", "item-least-squares", {},
                "two-stage least squares at item level: one linear model of an item's 8 "
                "features shared by the 48 items (the benchmark's own baseline)"),
    PyEPOMethod("LS-day", "least-squares", {},
                "two-stage least squares at day level: the 48 values from the 196 day "
                "features"),
    PyEPOMethod("RF", "random-forest", {},
                "two-stage random forest (scikit-learn RandomForestRegressor, defaults)"),
)}

#: Capacities and feature scalings of the energy comparison.
ENERGY_SCALINGS = ("raw", "standardized")


def pyepo_available():
    """Whether PyEPO's own SPO+ can run here (pyepo and torch importable)."""
    from .. import _compat

    return bool(_compat.PYEPO_INSTALLED and _compat.TORCH_INSTALLED)


def pyepo_skip_note(methods=None):
    """The summary's note when the default grid leaves out PyEPO's methods, else None."""
    if methods is not None or pyepo_available():
        return None
    return ("PyEPO's methods (PyEPO SPO+, PFYL and their networks) were skipped: they need "
            "pyepo and torch, which are not installed (pip install spotree[pyepo] torch). "
            "The other methods ran as usual.")


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
    "pyepo": {
        "description": "SPOBoost, forests, trees and SPO+ vs two-stage methods and PyEPO's "
                       "decision-focused methods on PyEPO's shortest path and knapsack, "
                       "with the Bayes floor",
        "full": {
            "problems": ["shortest-path", "knapsack"], "degrees": [1, 2, 4, 6],
            "n_train": [100, 1000, 5000], "noises": [0.0, 0.5], "seeds": 5, "n_test": 1000,
            "n_features": 5, "validation_fraction": 0.2, "min_samples_leaf": 5,
            "n_estimators": 50, "max_features_grid": [2, 3, 4, 5],
            "methods": ["SPOBoost", "SPOForest", "SPOTree", "SPOPlusLinear", "LS", "PolyRidge",
                        "MLP", "RF", "HGB", "SPOBoost-mse", "PyEPO SPO+", "PyEPO SPO+ NN", "PyEPO PFYL",
                        "PyEPO PFYL NN"],
        },
        "quick": {
            "problems": ["shortest-path", "knapsack"], "degrees": [1, 6], "n_train": [200],
            "noises": [0.5], "seeds": 3, "n_test": 1000, "n_features": 5,
            "validation_fraction": 0.2, "min_samples_leaf": 5, "n_estimators": 20,
            "max_features_grid": [2, 3, 4, 5],
            "methods": ["SPOBoost", "SPOForest", "SPOTree", "SPOPlusLinear", "LS", "PolyRidge",
                        "MLP", "RF", "SPOBoost-mse", "PyEPO SPO+"],
        },
    },
    "energy": {
        "description": "ICON energy prices as a 48-item knapsack (real data, the JAIR 2024 "
                       "decision-focused learning benchmark)",
        "full": {"seeds": 5, "capacities": [60, 120, 180], "scalings": ["raw", "standardized"],
                 "n_estimators": None,
                 "methods": ["SPOTree", "SPOForest", "SPOBoost", "SPOPlusLinear", "LS-item",
                             "LS-day", "RF"]},
        "quick": {"seeds": 1, "capacities": [120], "scalings": ["raw"], "n_estimators": 20,
                  "methods": ["SPOTree", "SPOForest", "SPOBoost", "SPOPlusLinear", "LS-item",
                              "LS-day", "RF"]},
    },
    "news": {
        "description": "News article recommendation, 9 constraint sets (paper section 5.2)",
        # The paper's leaves hold at least 10,000 interaction records "computed
        # using the sample weights": a weight, not a number of rows (user clusters).
        "full": {"constraint_sets": 9, "depths": [2, 4, 6, None], "min_leaf_weight": 10000,
                 "n_estimators": 50, "max_features_grid": [2, 3, 4, 5],
                 "synthetic_sizes": [5130, 5105, 8768],
                 "methods": ["SPOT", "CART", "SPOT Optimal", "SPO Forest", "CART Forest"]},
        "quick": {"constraint_sets": 3, "depths": [2, None], "min_leaf_weight": 10000,
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


#: The installed packages whose versions can change a run's numbers (scikit-learn
#: fits the two-stage methods, HiGHS solves linear programs, numba compiles the
#: kernels); the PyEPO comparison adds PyEPO's own methods' packages.
_LIBRARIES = ("numpy", "scipy", "scikit-learn", "highspy", "numba")
_PYEPO_LIBRARIES = ("pyepo", "torch")


def library_versions(experiment):
    """``"numpy 2.1.3, scipy ..."``: the versions of the packages an experiment's
    results depend on (``-`` for one not installed), part of each run's key."""
    import importlib.metadata

    names = _LIBRARIES + (_PYEPO_LIBRARIES if experiment == "pyepo" else ())
    out = []
    for name in names:
        try:
            out.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            out.append(f"{name} -")
    return ", ".join(out)


def _plain(value):
    """``value`` with numpy scalars as Python numbers (containers kept)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if hasattr(value, "item") and type(value).__module__ == "numpy" and value.ndim == 0:
        return value.item()
    return value


def _json_runs(runs):
    """The runs, their numpy scalars made Python numbers: a method's params with
    np.int64(5) failed the cache key ("Object of type int64 is not JSON
    serializable") after the output folder was made. Anything else that is no
    JSON value is named here, before any folder."""
    out = [_plain(r) for r in runs]
    for r in out:
        try:
            json.dumps(r)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"method {r['method']!r}: its params must be JSON values "
                             f"(numbers, strings, bools, None, lists and dicts: they make "
                             f"the run's cache key); {exc}.") from None
    return out


#: Run fields that say where the data are, not what they are (their fingerprint,
#: ``data``, is keyed): with the path keyed, moving the data recomputed every run.
NOT_KEYED = ("data_path",)


def keyed(run):
    """The fields of ``run`` that define it (all but :data:`NOT_KEYED`)."""
    return {k: v for k, v in run.items() if k not in NOT_KEYED}


def run_key(run):
    """Stable hash of a run's settings (its cache file name)."""
    blob = json.dumps(keyed(run), sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def _method_fields(m):
    """A run's fields naming its method: with the estimator class and the kind, so a
    method registered under a built-in name (same parameters) is a new run, not the
    built-in's cached one."""
    cls = m.estimator
    return dict(method=m.name, params=m.params, kind=m.kind,
                estimator=f"{cls.__module__}.{cls.__qualname__}")


def _select_methods(grid, methods):
    names = grid["methods"] if methods is None else list(methods)
    unknown = [m for m in names if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; known: {sorted(METHODS)}.")
    return [METHODS[m] for m in names]


def _check_ints(values, name, low, none_ok=False, high=None):
    """``values`` as a list of Python ints in [``low``, ``high``] (None kept with
    ``none_ok``).

    numpy ints are ints here: they went into the runs as they were, and a run
    holding a numpy int cannot be written as JSON (its cache key), so
    ``seeds=np.arange(3)`` failed with "Object of type int64 is not JSON
    serializable"; a float seed (1.5) was truncated by some experiments.
    """
    if values is None:
        return None
    out = []
    for v in values:
        if v is None and none_ok:
            out.append(None)
        elif (isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < low
              or (high is not None and v > high)):
            what = (f"ints >= {low}" if high is None else
                    f"ints in [{low}, {'2**32 - 1' if high == SEED_MAX else high}]")
            what += " or None" if none_ok else ""
            raise ValueError(f"{name} must be {what}; got {v!r}.")
        else:
            out.append(int(v))
    if not out:
        raise ValueError(f"{name} must name at least one value; got none.")
    return out


#: The largest seed: numpy's RandomState, which every run seeds, takes no larger.
SEED_MAX = 2**32 - 1

#: Fewest training rows of a PyEPO comparison run (20% of them validate).
PYEPO_MIN_N_TRAIN = 20


def _names(values):
    return ", ".join(repr(v) for v in values)


def _check_cells(cells):
    """``[(problem, n_train, noise, degree), ...]`` from tuples or "p:n:noise:deg" strings."""
    out = []
    for cell in cells:
        parts = cell.split(":") if isinstance(cell, str) else list(cell)
        try:
            problem, n, noise, degree = parts
            out.append((str(problem), int(n), float(noise), int(degree)))
        except (TypeError, ValueError):
            raise ValueError(f"cells: each cell is (problem, n_train, noise, degree) or "
                             f"'problem:n_train:noise:degree', e.g. "
                             f"'shortest-path:1000:0.5:6'; got {cell!r}.") from None
    if not out:
        raise ValueError("cells: name at least one cell.")
    return out


def _pyepo_grid(base, grid, seeds, methods, n_train, degrees, problems, depths, noises,
                cells=None):
    """The runs of ``spotree reproduce pyepo``; every selection is checked first."""
    if depths is not None:
        raise ValueError("--depths does not apply to the pyepo experiment (its trees are "
                         "pruned, its forests and boosted trees unrestricted).")
    if cells is not None:
        cells = _check_cells(cells)
        for name, given, k in (("problems", problems, 0), ("n_train", n_train, 1),
                               ("noises", noises, 2), ("degrees", degrees, 3)):
            if given is not None:
                raise ValueError(f"cells name the {name} already; do not pass both.")
        problems, n_train, noises, degrees = (list(dict.fromkeys(c[k] for c in cells))
                                              for k in range(4))
    problems = list(grid["problems"] if problems is None else problems)
    unknown = [p for p in problems if p not in PYEPO_PROBLEMS]
    if not problems or unknown:
        raise ValueError(f"--problems: unknown problem(s) {_names(unknown or problems)}; "
                         f"choose from {', '.join(PYEPO_PROBLEMS)}.")
    names = [m for m in grid["methods"] if not pyepo_method_needs_pyepo(m)
             or pyepo_available()] if methods is None else list(methods)
    unknown = [m for m in names if m not in PYEPO_METHODS]
    if not names or unknown:
        raise ValueError(f"--methods: unknown method(s) {_names(unknown or names)} for the "
                         f"pyepo experiment; known: {_names(PYEPO_METHODS)}.")
    needy = [m for m in names if pyepo_method_needs_pyepo(m)]
    if needy and not pyepo_available():
        raise ImportError(f"--methods {_names(needy)} requires pyepo and torch, which are not "
                          f"installed: pip install spotree[pyepo] torch")
    sizes = list(grid["n_train"] if n_train is None else n_train)
    if not sizes or any(int(n) < PYEPO_MIN_N_TRAIN for n in sizes):
        raise ValueError(f"--n-train must be at least {PYEPO_MIN_N_TRAIN} for the pyepo "
                         f"experiment; got {sizes}.")
    degs = list(grid["degrees"] if degrees is None else degrees)
    if not degs or any(int(d) < 1 for d in degs):
        raise ValueError(f"--degrees must be positive ints; got {degs}.")
    noise_list = list(grid["noises"] if noises is None else noises)
    if not noise_list or any(not 0.0 <= float(e) <= 1.0 for e in noise_list):
        raise ValueError(f"--noise must be half-widths in [0, 1]; got {noise_list}.")
    seed_list = seeds if seeds is not None else list(range(grid["seeds"]))
    runs = []
    for problem in problems:
        shape = ({"grid": [5, 5]} if problem == "shortest-path" else
                 {"n_items": 32, "n_resources": 2, "capacity": 20.0})
        for n in sizes:
            for noise in noise_list:
                for degree in degs:
                    if cells is not None and (problem, int(n), float(noise),
                                              int(degree)) not in cells:
                        continue
                    for name in names:
                        m = PYEPO_METHODS[name]
                        for seed in seed_list:
                            run = dict(base, method=name, model=m.model, params=m.params,
                                       problem=problem, n_train=int(n), degree=int(degree),
                                       seed=int(seed), n_test=grid["n_test"],
                                       noise=float(noise), n_features=grid["n_features"],
                                       validation_fraction=grid["validation_fraction"],
                                       min_samples_leaf=grid["min_samples_leaf"], **shape)
                            if m.model == "forest":
                                run.update(n_estimators=grid["n_estimators"],
                                           max_features_grid=grid["max_features_grid"])
                            runs.append(run)
    return runs


def _energy_grid(base, grid, seeds, methods, capacities, scalings, data_id, data_path):
    """The runs of ``spotree reproduce energy``; every selection is checked first."""
    if data_path is None:
        raise ValueError("the energy experiment needs --data: the ICON energy file "
                         "(Data.npz of the PredOpt benchmarks) or its folder.")
    names = list(grid["methods"] if methods is None else methods)
    unknown = [m for m in names if m not in ENERGY_METHODS]
    if not names or unknown:
        raise ValueError(f"--methods: unknown method(s) {_names(unknown or names)} for the "
                         f"energy experiment; known: {_names(ENERGY_METHODS)}.")
    caps = list(grid["capacities"] if capacities is None else capacities)
    if not caps or any(not 0 < float(c) < float("inf") for c in caps):
        raise ValueError(f"--capacities must be finite positive numbers; got {caps}.")
    scales = list(grid["scalings"] if scalings is None else scalings)
    bad = [s for s in scales if s not in ENERGY_SCALINGS]
    if not scales or bad:
        raise ValueError(f"--scaling must be among {_names(ENERGY_SCALINGS)}; got "
                         f"{_names(bad or scales)}.")
    seed_list = seeds if seeds is not None else list(range(grid["seeds"]))
    runs = []
    for scaling in scales:
        for cap in caps:
            for name in names:
                m = ENERGY_METHODS[name]
                params = dict(m.params)
                if grid["n_estimators"] and m.model in ("forest", "random-forest"):
                    params["n_estimators"] = grid["n_estimators"]
                for seed in seed_list:
                    runs.append(dict(base, method=name, model=m.model, params=params,
                                     capacity=float(cap), scaling=scaling, seed=int(seed),
                                     data=data_id, data_path=data_path))
    return runs


def make_grid(experiment, *, quick=False, seeds=None, methods=None, n_train=None,
              depths=None, data_id=None, problems=None, degrees=None, noises=None,
              cells=None, capacities=None, scalings=None, data_path=None):
    """All runs of an experiment.

    Parameters
    ----------
    experiment : {"shortest-path", "illustrative", "news", "pyepo", "energy"}
    quick : bool, default=False
        The reduced grid of ``--quick``.
    seeds : list of int, default=None
        Overrides the grid's seeds (for news: the constraint sets), each in
        [0, 2**32 - 1].
    methods : list of str, default=None
        Overrides the grid's methods (names of :data:`METHODS`; for pyepo, of
        :data:`PYEPO_METHODS`). By default pyepo runs PyEPO's methods only where
        pyepo and torch are installed.
    n_train : list of int, default=None
        Shortest path: keep these training sizes of the grid. PyEPO: the
        training sizes (any, at least :data:`PYEPO_MIN_N_TRAIN`).
    depths : list of (int or None), default=None
        Overrides the depths (not for pyepo).
    data_id : str, default=None
        News only: fingerprint of the real data (None: synthetic make_news).
    problems : list of str, default=None
        PyEPO only: problems among :data:`PYEPO_PROBLEMS`.
    degrees : list of int, default=None
        PyEPO only: polynomial degrees of the cost model.
    noises : list of float, default=None
        PyEPO only: half-widths of the multiplicative noise (the full grid's
        are 0 and 0.5).
    cells : list, default=None
        PyEPO only: run just these cells, each ``(problem, n_train, noise,
        degree)`` or ``"problem:n_train:noise:degree"`` (instead of the
        product of ``problems``, ``n_train``, ``noises`` and ``degrees``).
    capacities : list of number, default=None
        Energy only: knapsack capacities (the benchmark's are 60, 120, 180).
    scalings : list of {"raw", "standardized"}, default=None
        Energy only: the feature scalings.
    data_path : str, default=None
        Energy only (required): absolute path of the data file; with
        ``data_id``, its fingerprint.

    Returns
    -------
    runs : list of dict

    Raises
    ------
    ValueError
        For an unknown experiment, method or problem, training sizes not in
        the grid, an option of another experiment, or a forest method for the
        illustrative experiment (it compares single trees).
    ImportError
        For PyEPO's methods named in ``methods`` without pyepo and torch.
    """
    if experiment not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {experiment!r}; choose one of "
                         f"{', '.join(EXPERIMENTS)}.")
    grid = EXPERIMENTS[experiment]["quick" if quick else "full"]
    # Beyond SEED_MAX every run failed on its random_state, after the folder was made.
    seeds = _check_ints(seeds, "--seeds", 0, high=SEED_MAX)
    degrees = _check_ints(degrees, "--degrees", 1)
    n_train = _check_ints(n_train, "--n-train", 1)
    if depths is not None:
        depths = _check_ints(depths, "--depths", 1, none_ok=True)
    from .. import __version__

    # Changed code is a new run: cached results of older code are never reused,
    # neither across releases nor across edits of a development checkout, nor
    # across versions of the packages that fit and solve.
    base = {"experiment": experiment, "version": CONFIG_VERSION, "spotree": __version__,
            "code": code_fingerprint(), "libraries": library_versions(experiment)}
    if experiment == "pyepo":
        for flag, value in (("--capacities", capacities), ("--scaling", scalings)):
            if value is not None:
                raise ValueError(f"{flag} applies to the energy experiment only.")
        return _json_runs(_pyepo_grid(base, grid, seeds, methods, n_train, degrees, problems,
                                      depths, noises, cells))
    if experiment == "energy":
        for flag, value in (("--problems", problems), ("--degrees", degrees),
                            ("--noise", noises), ("cells", cells), ("--n-train", n_train),
                            ("--depths", depths)):
            if value is not None:
                raise ValueError(f"{flag} does not apply to the energy experiment.")
        return _json_runs(_energy_grid(base, grid, seeds, methods, capacities, scalings,
                                       data_id, data_path))
    for flag, value in (("--problems", problems), ("--degrees", degrees), ("--noise", noises),
                        ("cells", cells), ("--capacities", capacities),
                        ("--scaling", scalings)):
        if value is not None:
            raise ValueError(f"{flag} applies to the pyepo experiment only, not "
                             f"{experiment!r}.")
    if n_train is not None and experiment != "shortest-path":
        raise ValueError(f"--n-train applies to the shortest-path and pyepo experiments "
                         f"only, not {experiment!r}.")
    chosen = _select_methods(grid, methods)
    runs = []
    if experiment == "shortest-path":
        seed_list = seeds if seeds is not None else list(range(grid["seeds"]))
        settings = [s for s in grid["settings"] if n_train is None or s["n_train"] in n_train]
        sizes = [s["n_train"] for s in grid["settings"]]
        # Every size asked for, not just one: 200,500 ran n = 200 and dropped 500 unsaid.
        if n_train is not None and (not n_train or any(n not in sizes for n in n_train)):
            raise ValueError(f"--n-train must be among {sizes} for this grid; got "
                             f"{list(n_train)}.")
        for s in settings:
            for degree in grid["degrees"]:
                for noise in s["noises"]:
                    for m in chosen:
                        for depth in m.depths(depths if depths is not None else s["depths"]):
                            for seed in seed_list:
                                run = dict(base, **_method_fields(m),
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
        # Its rows and figure describe one tree (root split, decision boundaries on
        # [0, 1]), and it has no validation rows to tune a forest's max_features on.
        forests = [m.name for m in chosen if m.kind == "forest"]
        if forests:
            raise ValueError(f"--methods {_names(forests)}: the illustrative experiment "
                             "compares single trees (its table shows each tree's root split "
                             "and decision boundaries); forests run in the shortest-path and "
                             "news experiments.")
        seed_list = seeds if seeds is not None else list(range(grid["seeds"]))
        for m in chosen:
            for depth in m.depths(depths if depths is not None else grid["depths"]):
                for seed in seed_list:
                    runs.append(dict(base, **_method_fields(m), depth=depth, seed=seed,
                                     n_train=grid["n_train"], n_test=grid["n_test"]))
    else:  # news
        seed_list = seeds if seeds is not None else list(range(grid["constraint_sets"]))
        for m in chosen:
            for depth in m.depths(depths if depths is not None else grid["depths"]):
                for k in seed_list:
                    run = dict(base, **_method_fields(m), depth=depth, constraint_set=k,
                               min_leaf_weight=grid["min_leaf_weight"],
                               data=data_id or "synthetic")
                    if data_id is None:
                        run["synthetic_sizes"] = grid["synthetic_sizes"]
                    if m.kind == "forest":
                        run.update(n_estimators=grid["n_estimators"],
                                   max_features_grid=grid["max_features_grid"])
                    runs.append(run)
    return _json_runs(runs)
