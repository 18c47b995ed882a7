"""Run an experiment's grid: cached, resumable, parallel (joblib or dask), with progress.

Fit times are honest: before its first timed fit of a method, each process
fits that method once on a few rows (:func:`warm_up`), which compiles the
numba kernels or loads them from numba's cache; that time is reported apart.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import zipfile

import numpy as np
from joblib import Parallel, cpu_count, delayed, parallel_config

from .. import _compat, _schema
from .._atomic import atomic_write
from ..datasets import load_yahoo_r6, make_illustrative, make_news, make_shortest_path
from ..datasets._yahoo import _list_files
from ..forest import tune_max_features
from ..metrics import normalized_spo_loss
from ..problems import FiniteDecisions, ShortestPath, news_recommendation
from . import _energy, _figures, _pyepo, _tables
from ._configs import (METHODS, _plain, code_fingerprint, keyed, make_grid, pyepo_skip_note,
                       run_key)

__all__ = ["run_experiment", "execute_run", "warm_up"]


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return value


# ----------------------------------------------------------------- one run
def _split_validation(X, C, fraction, sw=None):
    """The first ``fraction`` of the training rows validate, the rest train (paper 5.1)."""
    n_val = int(round(fraction * X.shape[0]))
    parts = (X[n_val:], C[n_val:], X[:n_val], C[:n_val])
    if sw is None:
        return parts + (None, None)
    return parts + (sw[n_val:], sw[:n_val])


def _fit_method(method, problem, run, X, C, sw, X_val, C_val, sw_val):
    """Fit one method as the paper does; returns (estimator, fit seconds, info dict).

    Trees (greedy or optimal) are grown to the run's depth and, when
    validation rows are given, pruned on them; forests get ``max_features``
    tuned on the validation rows.
    """
    seed = int(run.get("seed", run.get("constraint_set", 0)))
    common = dict(random_state=seed, **method.params)
    if "min_leaf_weight" in run:
        # News: each leaf holds at least this many records, the rows' sample
        # weights (min_samples_leaf counts rows whatever their weights, so 10,000
        # of them would forbid every split). Trees and forests take it as a
        # fraction of the training weight (a forest: of each tree's bootstrap
        # weight); optimal trees only count rows: as many as hold it on average.
        w = np.ones(X.shape[0]) if sw is None else np.asarray(sw, dtype=np.float64)
        if method.kind == "optimal":
            common["min_samples_leaf"] = max(1, int(np.ceil(run["min_leaf_weight"]
                                                            / w.mean())))
        else:
            common["min_weight_fraction_leaf"] = min(0.5, run["min_leaf_weight"] / w.sum())
    else:
        common["min_samples_leaf"] = run.get("min_samples_leaf", 1)
    info = {}
    t0 = time.perf_counter()
    if method.kind == "forest":
        # The tuner shares the oracle statistics across the candidates.
        template = method.estimator(problem, n_estimators=run["n_estimators"], n_jobs=1,
                                    **common)
        grid = [min(f, X.shape[1]) for f in run["max_features_grid"]]
        est, res = tune_max_features(template, X, C, X_val, C_val, candidates=grid,
                                     sample_weight=sw, sample_weight_val=sw_val)
        info.update(val_normalized_spo_loss=float(res.val_loss[res.best_index]),
                    max_features=res.best_max_features)
    else:
        est = method.estimator(problem, max_depth=run.get("depth"), **common)
        est.fit(X, C, sample_weight=sw)
        if method.kind == "optimal" and isinstance(getattr(est, "result_", None), dict):
            # "time_limit": the best tree found, not one proven optimal.
            info["search_status"] = est.result_.get("status")
        if X_val is not None:
            est = est.prune(X_val, C_val, sample_weight=sw_val)
    secs = time.perf_counter() - t0
    if X_val is not None and method.kind != "forest":
        # For the row only, so outside the fit time (a quarter of it at n = 200).
        info["val_normalized_spo_loss"] = normalized_spo_loss(
            C_val, est.predict(X_val), problem=problem, sample_weight=sw_val)
    return est, secs, info


def _tree_shape(est):
    out = {}
    if hasattr(est, "get_n_leaves"):
        out["n_leaves"] = int(est.get_n_leaves())
    if hasattr(est, "get_depth"):
        out["fitted_depth"] = int(est.get_depth())
    return out


def _run_shortest_path(run, data=None):
    # One RandomState per (setting, seed): SPOT and CART see identical data.
    ss = np.random.SeedSequence([run["seed"], run["n_train"], run["degree"],
                                 int(round(1000 * run["noise"]))])
    rng = np.random.RandomState(ss.generate_state(1)[0])
    X, C, B = make_shortest_path(run["n_train"], degree=run["degree"], noise=run["noise"],
                                 random_state=rng, return_B=True)
    Xt, Ct = make_shortest_path(run["n_test"], degree=run["degree"], noise=run["noise"], B=B,
                                random_state=rng)
    problem = ShortestPath((4, 4))
    X_fit, C_fit, X_val, C_val, _, _ = _split_validation(X, C, run["validation_fraction"])
    method = METHODS[run["method"]]
    est, secs, info = _fit_method(method, problem, run, X_fit, C_fit, None, X_val, C_val, None)
    row = dict(normalized_spo_loss=normalized_spo_loss(Ct, est.predict(Xt), problem=problem),
               fit_time=secs, **_tree_shape(est), **info)
    return row, {}


def _run_illustrative(run, data=None):
    problem = FiniteDecisions(np.eye(2))
    X, C = make_illustrative(run["n_train"], random_state=run["seed"])
    # Wrapped: the last 1000 seeds passed numpy's 2**32 - 1 (the same draw below them).
    Xt, Ct = make_illustrative(run["n_test"], random_state=(run["seed"] + 1000) % 2**32)
    method = METHODS[run["method"]]
    # No pruning here: the paper compares trees grown to each depth.
    est, secs, info = _fit_method(method, problem, run, X, C, None, None, None, None)
    W_opt, _ = problem.solve(Ct)
    wrong = np.mean(np.any(np.abs(est.predict_decision(Xt) - W_opt) > 1e-9, axis=1))
    grid = np.linspace(0.0, 1.0, 1001)
    W_grid = est.predict_decision(grid.reshape(-1, 1))
    # Here, not spotree.plotting.decision_boundaries: rows are cached under the hash of
    # the library code without the plots, so an edit there would keep stale rows.
    steps = np.flatnonzero(np.any(np.abs(np.diff(W_grid, axis=0)) > 1e-9, axis=1))
    bounds = 0.5 * (grid[steps] + grid[steps + 1])
    tree = est.tree_
    row = dict(normalized_spo_loss=normalized_spo_loss(Ct, est.predict(Xt), problem=problem),
               fit_time=secs, wrong_decisions=float(wrong),
               root_threshold=float(tree.threshold[0]) if tree.node_count > 1 else None,
               decision_boundaries=" ".join(f"{b:.3f}" for b in bounds) or "none",
               **_tree_shape(est))
    extra = {"x": grid, "C_pred": est.predict(grid.reshape(-1, 1)),
             "W_pred": W_grid}
    return row, extra


def news_synthetic_data(sizes, random_state=0):
    """make_news split into train / validation / test of the given sizes (one draw,
    so the three sets share one distribution)."""
    X, C, w = make_news(int(sum(sizes)), random_state=random_state)
    a, b = sizes[0], sizes[0] + sizes[1]
    return {"X_train": X[:a], "C_train": C[:a], "sample_weight_train": w[:a],
            "X_val": X[a:b], "C_val": C[a:b], "sample_weight_val": w[a:b],
            "X_test": X[b:], "C_test": C[b:], "sample_weight_test": w[b:]}


def _run_news(run, data=None):
    if data is None:
        data = news_synthetic_data(run["synthetic_sizes"])
    # The real log may keep a number of article types other than the paper's 6.
    problem = news_recommendation(n_articles=data["C_train"].shape[1],
                                  random_state=run["constraint_set"])
    method = METHODS[run["method"]]
    est, secs, info = _fit_method(method, problem, run, data["X_train"], data["C_train"],
                                  data["sample_weight_train"], data["X_val"], data["C_val"],
                                  data["sample_weight_val"])
    Ct, wt = data["C_test"], data["sample_weight_test"]
    W = est.predict_decision(data["X_test"])
    _, z = problem.solve(Ct)
    click = float(np.dot(wt, np.einsum("ij,ij->i", Ct, W)) / wt.sum())
    row = dict(click_probability=click, optimal_click_probability=float(np.dot(wt, z) / wt.sum()),
               normalized_spo_loss=normalized_spo_loss(Ct, est.predict(data["X_test"]),
                                                       problem=problem, sample_weight=wt),
               fit_time=secs, **_tree_shape(est), **info)
    return row, {}


_RUNNERS = {"shortest-path": _run_shortest_path, "illustrative": _run_illustrative,
            "news": _run_news, "pyepo": _pyepo.run_pyepo, "energy": _energy.run_energy}

#: (experiment, method) -> warm-up seconds, for this process.
_WARM = {}


def _tiny(run):
    """The run on a few rows: the same problem type, method and code paths.

    Depth is a run-time argument of the compiled code, so a shallow tree
    compiles the same kernels (and an optimal tree of depth 6 would be slow).
    """
    tiny = dict(run, seed=0)
    if tiny.get("depth") is not None:
        tiny["depth"] = min(tiny["depth"], 2)
    if run["experiment"] == "shortest-path":
        tiny.update(n_train=100, n_test=20, min_samples_leaf=5)
    elif run["experiment"] == "illustrative":
        tiny.update(n_train=100, n_test=20)
    elif run["experiment"] == "pyepo":
        tiny.update(n_train=60, n_test=20)
    elif run["experiment"] == "energy":
        tiny.update(max_days=40)
        if "n_estimators" in run["params"] or run["model"] in ("forest", "random-forest"):
            tiny["params"] = dict(run["params"], n_estimators=2)
    else:
        tiny.update(synthetic_sizes=[200, 100, 50])
    if "n_estimators" in run:
        tiny.update(n_estimators=2, max_features_grid=run["max_features_grid"][:1])
    return tiny


def warm_up(run):
    """Fit the run's method once on a few rows, once per process; returns the seconds.

    The first fit of a process compiles the numba kernels (or loads them from
    numba's on-disk cache). Doing it here keeps that time out of the timed
    fits; :func:`execute_run` reports it separately.
    """
    key = (run["experiment"], run["method"])
    if key in _WARM:
        return 0.0
    t0 = time.perf_counter()
    _RUNNERS[run["experiment"]](_tiny(run), None)
    _WARM[key] = secs = time.perf_counter() - t0
    return secs


def _interrupted(exc):
    """Whether ``exc`` wraps a KeyboardInterrupt (numba turns one raised inside
    compiled code into a SystemError)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def execute_run(run, data=None):
    """Run one configuration; errors come back as ``{"error": ...}``, Ctrl-C propagates.

    Returns
    -------
    dict with ``run``, and either ``row`` (scalars for the CSV), ``extra``
    (arrays for the figures), ``seconds`` (the run's wall time) and
    ``warmup`` (seconds spent by :func:`warm_up` before it), or ``error``.
    """
    try:
        warm = warm_up(run)
        t0 = time.perf_counter()
        row, extra = _RUNNERS[run["experiment"]](run, data)
        secs = time.perf_counter() - t0
        return {"run": run, "row": _jsonable(row), "extra": _jsonable(extra),
                "seconds": secs, "warmup": warm}
    except Exception as exc:  # reported by the parent, never cached
        if _interrupted(exc):
            raise KeyboardInterrupt from None
        msg = " ".join(str(exc).split())
        return {"run": run, "error": f"{type(exc).__name__}: {msg}"}


def _execute_alone(run, data=None, method=None):
    """:func:`execute_run` in a parallel worker: its own joblib calls (a forest's
    trees) run sequentially there, so nothing nests (with dask, nested calls
    would ship every tree back through the scheduler).

    ``method``: the run's :class:`Method` as the parent process knows it; a
    worker process has only the built-in methods, not those added (or
    replaced) by :func:`register_method`.
    """
    if method is not None:
        METHODS[run["method"]] = method
    with parallel_config(backend="sequential"):
        return execute_run(run, data)


# ---------------------------------------------------------------- progress
class _Progress:
    """One status line on stderr (rewritten in place on a terminal).

    The time left is estimated from finished runs only: per method, the mean
    wall time of its finished runs times its runs left, over the workers. No
    estimate is shown before a run of every remaining method has finished;
    before the first, the line says the kernels are compiling.
    """

    def __init__(self, label, enabled=True, stream=None):
        self.label, self.total, self.done, self.cached = label, 0, 0, 0
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.perf_counter()
        self.last = -1.0
        self.errors = 0
        self.workers = 1
        self.left = {}       # method -> runs not finished
        self.durations = {}  # method -> wall times of its finished runs

    def start(self, todo, total, cached, workers):
        self.total, self.done, self.cached, self.workers = total, cached, cached, workers
        for r in todo:
            self.left[r["method"]] = self.left.get(r["method"], 0) + 1

    def eta(self):
        left = {m: n for m, n in self.left.items() if n}
        if not left:
            return ""
        if not self.durations:
            return ", compiling kernels and fitting the first runs"
        waiting = [m for m in left if m not in self.durations]
        if waiting:
            return f", ETA after the first {waiting[0]} run"
        work = sum(n * float(np.mean(self.durations[m])) for m, n in left.items())
        return f", about {work / max(1, min(self.workers, sum(left.values()))):.0f}s left"

    def finished(self, rec):
        m = rec["run"]["method"]
        self.left[m] = self.left.get(m, 1) - 1
        if "error" in rec:
            self.errors += 1
        elif "seconds" in rec:
            self.durations.setdefault(m, []).append(rec["seconds"])
        self.update(1)

    def update(self, n=0, force=False):
        self.done += n
        if not self.enabled:
            return
        now = time.perf_counter() - self.t0
        if not (force or self.tty or now - self.last >= 2.0 or self.done == self.total):
            return
        self.last = now
        err = f", {self.errors} failed" if self.errors else ""
        msg = (f"[{self.label}] {self.done}/{self.total} runs ({self.cached} cached{err}), "
               f"{now:.0f}s{self.eta()}")
        if self.tty:
            self.stream.write("\r" + msg.ljust(78) + ("\n" if self.done == self.total else ""))
        else:
            self.stream.write(msg + "\n")
        self.stream.flush()

    def note(self, msg):
        if self.enabled:
            if self.tty:
                self.stream.write("\r" + " " * 78 + "\r")
            self.stream.write(f"[{self.label}] {msg}\n")
            self.stream.flush()


# ------------------------------------------------------------------ runner
def _load_cached(path, run):
    try:
        with open(path) as fh:
            # Tagged non-finite numbers ({"__float__": "NaN"}), and the NaN and
            # Infinity literals that older cache files hold.
            rec = json.load(fh, object_pairs_hook=_schema._unique_keys)
    except (OSError, ValueError):
        return None
    if (not isinstance(rec, dict) or not isinstance(rec.get("run"), dict) or "row" not in rec
            or keyed(rec["run"]) != keyed(_jsonable(run))):
        return None  # a stale, foreign or damaged file: recompute
    # The data where they are now (a moved file with the same fingerprint).
    return dict(rec, run=_jsonable(run))


_NEWS_DEFAULTS = {"n_user_clusters": 10000, "n_article_clusters": 7, "min_records": 50,
                  "random_state": 0}


def _news_data_id(data_dir, options=None):
    """The log files, preprocessing parameters and cache id of the real news data
    (from the files, the parameters and the library code)."""
    files = _list_files(data_dir)
    unknown = set(options or {}) - set(_NEWS_DEFAULTS) - {"min_article_coverage"}
    if unknown:
        raise ValueError(f"unknown news data option(s): {sorted(unknown)}.")
    # Numpy numbers as Python ones: np.int64(30) failed json.dumps below (the cache id).
    params = dict(_NEWS_DEFAULTS, **_plain(dict(options or {})))
    for k, v in params.items():
        try:
            json.dumps(v, allow_nan=False)
        except (TypeError, ValueError):
            raise ValueError(f"data_options {k} must be a plain number (it names the cached "
                             f"preprocessed log); got {v!r:.80}.") from None
    stamp = [(os.path.basename(f), os.path.getsize(f), int(os.path.getmtime(f)))
             for f in files]
    # With the code's hash, as the runs' keys: other preprocessing code is other data.
    blob = json.dumps([stamp, params, code_fingerprint()])
    data_id = "yahoo-" + hashlib.sha1(blob.encode()).hexdigest()[:12]
    return files, params, data_id


def _news_data(files, params, data_id, cache_dir, progress):
    """Preprocess the real Yahoo! log once; the arrays are cached as .npz."""
    path = os.path.join(cache_dir, f"{data_id}.npz")
    keys = [f"{a}_{s}" for a in ("X", "C", "sample_weight") for s in ("train", "val", "test")]
    if os.path.exists(path):
        try:
            # Opened here: np.load(path) leaves its handle open on a damaged file.
            with open(path, "rb") as fh, np.load(fh) as z:
                if all(k in z for k in keys):
                    return {k: z[k] for k in keys}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile):
            pass  # a damaged cache file: preprocess again, as for a damaged run
    progress.note(f"preprocessing the Yahoo! log ({len(files)} files; once, cached in "
                  f"{path})")
    out = load_yahoo_r6(files, verbose=progress.enabled, **params)
    data = {k: out[k] for k in keys}
    atomic_write(path, lambda fh: np.savez(fh, **data), mode="wb")
    return data


def _energy_data_id(data):
    """Absolute path of the ICON energy file and its fingerprint (cache key)."""
    path = os.path.abspath(os.fspath(data))
    if os.path.isdir(path):
        path = os.path.join(path, "Data.npz")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"--data: no ICON energy file at {path!r}; expected Data.npz "
                                f"of the PredOpt benchmarks or a folder holding it.")
    return path, _energy.data_id(path)


def _workers(jobs):
    if jobs == -1:
        # As many as joblib runs: the CPUs this process may use.
        return max(1, int(cpu_count()))
    return jobs


def run_experiment(experiment, *, quick=False, out=None, jobs=1, seeds=None, methods=None,
                   n_train=None, depths=None, data=None, data_options=None, scheduler=None,
                   progress=True, figures=True, stream=None, problems=None, degrees=None,
                   noises=None, cells=None, capacities=None, scalings=None):
    """Run (or resume) one of the paper's experiments and write its results.

    Each run is cached as ``<out>/cache/<hash>.json`` as soon as it finishes,
    so an interrupted experiment (Ctrl-C raises KeyboardInterrupt) resumes
    where it stopped and a finished one only redraws its tables and figures.
    ``results.csv``, ``summary.md`` and the figures are written at the end,
    each atomically. Every argument is checked before any folder is created.

    Parameters
    ----------
    experiment : {"shortest-path", "illustrative", "news", "pyepo", "energy"}
    quick : bool, default=False
        The reduced grid (minutes instead of hours).
    out : str or path-like, default=None
        Output directory; ``./spotree-results/<experiment>`` by default.
    jobs : int, default=1
        Parallel runs (joblib processes); -1 for all cores.
    seeds : list of int, default=None
        Override the seeds (news: the constraint sets), each in [0, 2**32 - 1].
    methods : list of str, default=None
        Override the methods (see :data:`spotree.experiments.METHODS`; for
        pyepo, :data:`spotree.experiments.PYEPO_METHODS`).
    n_train : list of int, default=None
        Shortest path: only these training sizes (200 and/or 10000). PyEPO:
        the training sizes.
    depths : list of (int or None), default=None
        Override the depths.
    data : str or path-like, default=None
        News: directory of the licensed Yahoo! R6A log; synthetic
        :func:`~spotree.datasets.make_news` data when None. Energy (required):
        the ICON energy file ``Data.npz`` or its folder
        (:func:`~spotree.datasets.load_icon_energy`).
    data_options : dict, default=None
        News with ``data``: overrides of the preprocessing parameters of
        :func:`~spotree.datasets.load_yahoo_r6` (``n_user_clusters=10000``,
        ``n_article_clusters=7``, ``min_records=50``, ``min_article_coverage``).
    scheduler : str, default=None
        Address of a dask.distributed scheduler to send the runs to (each
        run then uses one worker thread: its own joblib calls are sequential).
    progress : bool, default=True
        Report progress on stderr.
    figures : bool, default=True
        Draw PNG figures (needs matplotlib).
    stream : file-like, default=None
        Where progress goes (standard error by default).
    problems : list of str, default=None
        PyEPO: the problems, ``"shortest-path"`` and/or ``"knapsack"``.
    degrees : list of int, default=None
        PyEPO: the polynomial degrees of the cost model.
    noises : list of float, default=None
        PyEPO: the half-widths of the multiplicative noise.
    cells : list, default=None
        PyEPO: only these cells, each ``(problem, n_train, noise, degree)`` or
        ``"problem:n_train:noise:degree"`` (see :func:`make_grid`).
    capacities : list of number, default=None
        Energy: the knapsack capacities (default 60, 120, 180).
    scalings : list of {"raw", "standardized"}, default=None
        Energy: the feature scalings (default both).

    Returns
    -------
    dict with ``rows`` (one dict per run), ``records`` (rows with their run
    settings and figure data), ``errors``, ``files`` (paths written),
    ``summary`` (the markdown text), ``n_runs``, ``n_cached`` and
    ``warmup_seconds``.

    Raises
    ------
    ValueError
        For an unknown experiment or method, a grid with no runs, ``jobs``
        other than -1 or a positive int, ``data`` for another experiment, or
        an energy ``data`` file that is not the benchmark's (checked before
        any folder is created).
    FileNotFoundError
        When ``data`` names no file or folder.
    """
    if not (isinstance(jobs, (int, np.integer)) and not isinstance(jobs, bool)
            and (jobs == -1 or jobs >= 1)):
        raise ValueError(f"jobs must be -1 or a positive int; got {jobs!r}.")
    out = os.fspath(out) if out is not None else os.path.join("spotree-results", experiment)
    if data is not None and experiment not in ("news", "energy"):
        raise ValueError(f"--data is only used by the news and energy experiments, not "
                         f"{experiment!r}.")
    news = energy = None
    if data is not None and experiment == "news":
        news = _news_data_id(data, data_options)
    elif data is not None:
        energy = _energy_data_id(data)
        # A file that is not the benchmark's fails here, once, before any folder
        # is made (not in every run); the loaded data stay cached for the runs.
        lightest = float(_energy.energy_data(energy[0], 0, False, energy[1]).weights.min())
    runs = make_grid(experiment, quick=quick, seeds=seeds, methods=methods, n_train=n_train,
                     depths=depths, problems=problems, degrees=degrees, noises=noises,
                     cells=cells, capacities=capacities, scalings=scalings,
                     data_id=news[2] if news else (energy[1] if energy else None),
                     data_path=energy[0] if energy else None)
    small = [r["capacity"] for r in runs if energy and r["capacity"] < lightest]
    if small:  # no item fits: every decision is empty and every regret 0 / 0
        raise ValueError(f"--capacities {small[0]:g} is below the lightest item's weight "
                         f"({lightest:g}): no item fits.")
    if not runs:
        raise ValueError("no runs to do: the selected methods have no run at the selected "
                         "depths (optimal trees need a fixed depth, forests are "
                         "unrestricted).")
    # Everything is checked: from here on, files are written.
    cache_dir = os.path.join(out, "cache")
    os.makedirs(cache_dir, exist_ok=True)
    prog = _Progress(experiment, enabled=progress, stream=stream)
    data_arrays = _news_data(*news, cache_dir, prog) if news else None
    keys = [run_key(r) for r in runs]
    if len(set(keys)) != len(keys):  # the same run twice (e.g. repeated seeds)
        uniq = dict(zip(keys, runs))
        keys, runs = list(uniq), list(uniq.values())
    results = {}
    for k, r in zip(keys, runs):
        rec = _load_cached(os.path.join(cache_dir, f"{k}.json"), r)
        if rec is not None:
            results[k] = rec
    todo = [(k, r) for k, r in zip(keys, runs) if k not in results]
    prog.start([r for _, r in todo], len(runs), len(results), _workers(jobs))
    if experiment == "news" and data is None:
        prog.note("no --data given: running on synthetic make_news data, not the Yahoo! "
                  "log (see `spotree reproduce --help`)")
    notes = [pyepo_skip_note(methods)] if experiment == "pyepo" else []
    notes = [n for n in notes if n]
    for n in notes:
        prog.note(n)
    prog.update(force=True)
    errors, warmups = [], []

    def collect(k, rec):
        if "error" in rec:
            errors.append(rec)
            prog.note(f"run failed: {rec['run']['method']} {_short(rec['run'])}: "
                      f"{rec['error']}")
        else:
            if rec.get("warmup"):
                warmups.append(rec["warmup"])
            # Strict JSON, as the model files (see _schema.FLOAT_TAG): a NaN
            # score was written as the literal NaN, which JavaScript's
            # JSON.parse, jq and other strict readers refuse.
            doc = _schema.strict_json(rec)
            atomic_write(os.path.join(cache_dir, f"{k}.json"),
                         lambda fh: json.dump(doc, fh, allow_nan=False))
            results[k] = rec
        prog.finished(rec)

    if todo:
        if jobs == 1 and scheduler is None:
            for k, r in todo:
                collect(k, execute_run(r, data_arrays))
        else:
            _run_parallel(todo, data_arrays, jobs, scheduler, collect, prog)
    records = [dict(results[k]["run"], **results[k]["row"], key=k, _extra=results[k]["extra"])
               for k in keys if k in results]
    rows = [{k: v for k, v in r.items() if k != "_extra"} for r in records]
    files = {}
    meta = {"experiment": experiment, "quick": quick,
            "errors": [e["error"] for e in errors], "n_runs": len(runs),
            "n_cached": prog.cached, "n_fitted": len(todo) - len(errors),
            "warmup_seconds": float(sum(warmups)), "n_warmups": len(warmups),
            "notes": notes,
            "data": news[2] if news else ("synthetic" if experiment == "news" else
                                          (energy[1] if energy else None))}
    if figures and rows and not _compat.MATPLOTLIB_INSTALLED:
        prog.note("matplotlib is not installed, so no figures are drawn: "
                  "pip install spotree[plot]")
    elif figures and rows:
        files.update(_figures.draw(experiment, records, out))
    files["results.csv"] = _tables.write_csv(rows, os.path.join(out, "results.csv"))
    captions = {f: _figures.CAPTIONS.get(f, "") for f in files if f.endswith(".png")}
    text = _tables.summary_markdown(experiment, rows, meta, figures=captions)
    files["summary.md"] = os.path.join(out, "summary.md")
    atomic_write(files["summary.md"], lambda fh: fh.write(text))
    return {"rows": rows, "records": records, "errors": errors, "files": files,
            "summary": text, "n_runs": len(runs), "n_cached": prog.cached,
            "warmup_seconds": meta["warmup_seconds"]}


def _short(run):
    keys = ("problem", "n_train", "degree", "noise", "depth", "capacity", "scaling", "seed",
            "constraint_set")
    return " ".join(f"{k}={run[k]}" for k in keys if k in run)


#: Batches of runs in flight per dask worker thread (see _run_parallel).
SCHEDULER_PRE_DISPATCH = "8*n_jobs"


def _run_parallel(todo, data, jobs, scheduler, collect, prog):
    tasks = (delayed(_execute_alone)(r, data, METHODS[r["method"]] if r["experiment"] in
                                     ("shortest-path", "illustrative", "news") else None)
             for _, r in todo)
    by_run = {json.dumps(_jsonable(r), sort_keys=True): k for k, r in todo}

    def consume(results):
        for rec in results:
            collect(by_run[json.dumps(_jsonable(rec["run"]), sort_keys=True)], rec)

    if scheduler is not None:
        distributed = _compat.import_optional("dask.distributed", purpose="--scheduler")
        with distributed.Client(scheduler, timeout="20s") as client:
            prog.workers = max(1, sum(client.nthreads().values()))
            # Eight batches per worker thread wait at the scheduler, which hands the next
            # one to a worker as soon as it frees. With joblib's default (two per worker)
            # each hand-out waits for this process to read a result and send the next
            # batch: a round trip through three processes per run, slow when the cores
            # are busy. benchmarks/bench_scheduler.py, shortest-path --quick on the
            # loaded 2-core machine: workers idle 16-19 s of a 44 s warm pass with the
            # default (1.16-1.38x --jobs 2), 3-10 s with eight per worker, 1-2 s with
            # --jobs 2. All runs at once idled 6 s too but took 1.3-1.7 s to stop on
            # Ctrl-C (cancelling every future); eight per worker stops in 0.06 s.
            with parallel_config(backend="dask"):
                consume(Parallel(n_jobs=-1, return_as="generator_unordered",
                                 pre_dispatch=SCHEDULER_PRE_DISPATCH)(tasks))
    else:
        consume(Parallel(n_jobs=jobs, return_as="generator_unordered")(tasks))
