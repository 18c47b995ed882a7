"""Peak memory of fit and predict, and the fitted model's size, against scikit-learn.

Every measurement runs in a fresh Python process (numba's allocations are not
seen by tracemalloc, so the operating system's count is read): the process
imports, makes the data, fits a small warm-up model of the same kind on the
first 500 rows (kernels loaded, worker pools started), then resets its peak
resident set size (``/proc/self/clear_refs``) and fits. Reported per row:

- ``base``: the resident set size (MB) before the fit (imports, data, warm-up);
- ``fit peak``: the peak resident set size during the fit (MB, raw);
- ``fit +``: the peak minus ``base``, what the fit itself needs (MB);
- ``pred +``: the same for ``predict`` on the training rows (MB);
- ``model``: the pickled fitted model (MB, ``pickle`` protocol 5).

With worker processes (``backend="loky"``) the peaks of the workers are
added to the parent's (each worker's own peak above its resident size
before the fit): an upper bound, since shared pages (joblib's memory maps)
are counted in every process and the peaks need not coincide. Peaks are
robust to machine load; no time is reported (see bench_scale.py). The
children run with ``MALLOC_MMAP_THRESHOLD_=65536`` (glibc): every array
above 64 kB is mapped on its own and returned on free, so what one step
freed does not stay resident and hide the next step's needs.

Data (``--n`` rows, default 100000): ``sp4`` and ``sp5``, the paper's
shortest path (``make_shortest_path(n, grid=(g, g), degree=2, noise=0.5)``;
4x4: 24 edges, 20 paths; 5x5: 40 edges, 70 paths; both on the vertex path);
``knap``, PyEPO's knapsack with 32 items and 2 resources (capacity 20, the
compiled-solver path). Models (all with min_samples_leaf=20):

- SPOTree(max_depth=8) against DecisionTreeRegressor(max_depth=8);
- SPOForest(20 trees, max_features=3, ridge_features=False) against
  RandomForestRegressor (same settings) at n_jobs=1 and 2, the forest's
  default backend (threads on these problems) and, at n_jobs=2, worker
  processes (``joblib.parallel_config(backend="loky")``);
- SPOBoost(20 rounds, init="linear", no early stopping) against
  scikit-learn's boosting of a multi-output target,
  ``MultiOutputRegressor(HistGradientBoostingRegressor(max_iter=20,
  early_stopping=False))`` (scikit-learn's boosters are single-output).

Targets, each printed with PASS/FAIL (the script exits non-zero on a miss),
set from the measurements at their introduction (stop 36) with room for
what a user would accept of a method that keeps per-row decision statistics:

- fit +: at most ``FIT_RATIO`` x the peer's, or at most ``FIT_DATA`` x the
  bytes of the training data (X and C as float64) plus ``FIT_MODEL`` x the
  pickled model, whichever is larger (a peer that needs almost nothing must
  not make every O(n) statistic fail: a spotree fit keeps the scaled costs,
  the optimal values, the vertex matrix G = C V^T and the presorted rows;
  and ``criterion="auto"`` holds the pilot trees of both criteria at once);
- pred +: at most ``PRED_RATIO`` x the peer's, or at most ``PRED_OUT`` x
  the bytes of the predictions (n x d float64), whichever is larger;
- model: per node, at most ``MODEL_RATIO`` x the peer's bytes per node (a
  spotree node stores its decision next to its mean cost, 2 d floats where
  scikit-learn stores d); for the booster, whose peer has one tree per cost
  and round, the whole pickle at most ``MODEL_RATIO`` x the peer's.

Run: ``python benchmarks/bench_memory.py [--n 100000] [--repeat 1]
[--only sp4,sp5,knap] [--models tree,forest,forest2,forest2p,boost]``
(``--repeat`` takes the median of that many fresh processes per row.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

#: Targets (see the module docstring).
FIT_RATIO, FIT_DATA, FIT_MODEL = 10.0, 12.0, 2.0
PRED_RATIO, PRED_OUT = 3.0, 3.0
MODEL_RATIO = 2.5

DATA = ("sp4", "sp5", "knap")
MODELS = ("tree", "forest", "forest2", "forest2p", "boost")
LEAF = 20
FOREST_TREES = 20
BOOST_ROUNDS = 20


# ------------------------------------------------------------- child side
def make_data(name, n):
    """X, C and the problem of data set ``name`` with ``n`` rows."""
    if name in ("sp4", "sp5"):
        from spotree.datasets import make_shortest_path
        from spotree.problems import ShortestPath

        g = 4 if name == "sp4" else 5
        X, C = make_shortest_path(n, grid=(g, g), degree=2, noise=0.5, random_state=0)
        return X, C, ShortestPath((g, g))
    if name == "knap":
        from spotree.datasets import make_pyepo_knapsack
        from spotree.problems import Knapsack

        X, C, weights = make_pyepo_knapsack(n, n_items=32, n_resources=2, degree=4,
                                            noise=0.5, random_state=0)
        return X, C, Knapsack(weights, np.full(2, 20.0))
    raise ValueError(f"unknown data {name!r}; choose among {DATA}")


def model_context(model):
    """A new joblib context for ``model``: processes, or the estimator's own choice.

    One per ``with`` block: ``parallel_config`` sets its configuration when
    made and restores the previous one on exit, so a second block of the same
    object ran with joblib's default (the estimator's threads).
    """
    import contextlib

    from joblib import parallel_config

    return parallel_config(backend="loky") if model == "forest2p" else contextlib.nullcontext()


def make_model(side, model, problem):
    """The estimator of ``side`` ("spotree" or "sklearn") for ``model`` and its
    joblib context (see :func:`model_context`; for one ``with`` block)."""
    n_jobs = 2 if model.startswith("forest2") else 1
    ctx = model_context(model)
    if side == "spotree":
        from spotree import SPOBoost, SPOForest, SPOTree

        if model == "tree":
            return SPOTree(problem, max_depth=8, min_samples_leaf=LEAF), ctx
        if model.startswith("forest"):
            return SPOForest(problem, n_estimators=FOREST_TREES, max_features=3,
                             min_samples_leaf=LEAF, ridge_features=False, n_jobs=n_jobs,
                             random_state=0), ctx
        return SPOBoost(problem, n_estimators=BOOST_ROUNDS, init="linear",
                        n_iter_no_change=None, min_samples_leaf=LEAF, random_state=0), ctx
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
    from sklearn.multioutput import MultiOutputRegressor
    from sklearn.tree import DecisionTreeRegressor

    if model == "tree":
        return DecisionTreeRegressor(max_depth=8, min_samples_leaf=LEAF, random_state=0), ctx
    if model.startswith("forest"):
        return RandomForestRegressor(n_estimators=FOREST_TREES, max_features=3,
                                     min_samples_leaf=LEAF, n_jobs=n_jobs, random_state=0), ctx
    return MultiOutputRegressor(HistGradientBoostingRegressor(
        max_iter=BOOST_ROUNDS, early_stopping=False, min_samples_leaf=LEAF,
        random_state=0)), ctx


def _status(pid, key):
    """A ``/proc/PID/status`` field in MB (0 where the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def _reset_peak(pid):
    """Set the peak resident size of ``pid`` back to its current size."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _workers():
    import psutil

    return [p.pid for p in psutil.Process().children(recursive=True)]


def _peak_of(action, include_workers):
    """Run ``action``; the resident size before it and its peak increment (MB)."""
    import gc

    gc.collect()
    me = os.getpid()
    pids = [me] + (_workers() if include_workers else [])
    before = {pid: _status(pid, "VmRSS") for pid in pids}
    for pid in pids:
        _reset_peak(pid)
    action()
    after = [me] + (_workers() if include_workers else [])
    inc = 0.0
    for pid in after:
        # A worker started during the action counts whole.
        inc += max(_status(pid, "VmHWM") - before.get(pid, 0.0), 0.0)
    return before[me], inc


def node_counts(est):
    """(nodes, leaves) of a fitted estimator, summed over its trees."""
    trees = []
    if hasattr(est, "tree_"):
        trees = [est.tree_]
    elif hasattr(est, "estimators_") and hasattr(est.estimators_[0], "tree_"):
        trees = [e.tree_ for e in est.estimators_]
    elif hasattr(est, "estimators_") and hasattr(est.estimators_[0], "_predictors"):
        # MultiOutputRegressor of HistGradientBoostingRegressor
        for e in est.estimators_:
            for it in e._predictors:
                for p in it:
                    nodes = p.nodes
                    trees.append((len(nodes), int(nodes["is_leaf"].sum())))
        return sum(t[0] for t in trees), sum(t[1] for t in trees)
    elif hasattr(est, "estimators_"):
        for e in est.estimators_:
            t = getattr(e, "tree_", None)
            if t is not None:
                trees.append(t)
    nodes = sum(int(t.node_count) for t in trees)
    leaves = sum(int((t.children_left == -1).sum()) for t in trees)
    return nodes, leaves


def measure(side, data, model, n):
    """One row's figures in this (fresh) process, as a dict."""
    import pickle

    X, C, problem = make_data(data, n)
    est, ctx = make_model(side, model, problem)
    from sklearn.base import clone

    warm = clone(est)
    if model == "boost":
        warm.set_params(**({"n_estimators": 2} if side == "spotree"
                           else {"estimator__max_iter": 2}))
    elif model != "tree":
        warm.set_params(n_estimators=4)
    with ctx:
        warm.fit(X[:500], C[:500])
        warm.predict(X[:500])
    del warm
    procs = model == "forest2p"
    with model_context(model):
        base, fit_inc = _peak_of(lambda: est.fit(X, C), procs)
        _, pred_inc = _peak_of(lambda: est.predict(X), procs)
    nodes, leaves = node_counts(est)
    return {"base": base, "fit_peak": base + fit_inc, "fit_inc": fit_inc,
            "pred_inc": pred_inc, "model": len(pickle.dumps(est, protocol=5)) / 2 ** 20,
            "nodes": nodes, "leaves": leaves,
            "data_mb": (X.size + C.size) * 8 / 2 ** 20, "out_mb": C.size * 8 / 2 ** 20}


# ------------------------------------------------------------ parent side
def run_child(side, data, model, n):
    """Measure one row in a fresh process (its figures as a dict)."""
    # Every array above 64 kB in its own memory map, returned on free: by
    # default glibc raises that threshold after the first large free, so
    # freed arrays stay resident and hide the next step's own needs.
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                          json.dumps([side, data, model, n])],
                         env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"measurement {side} {data} {model} n={n} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_child(side, data, model, n, repeat):
    runs = [run_child(side, data, model, n) for _ in range(repeat)]
    return {k: float(np.median([r[k] for r in runs])) for k in runs[0]}


LABELS = {"tree": "tree", "forest": "forest n_jobs=1", "forest2": "forest n_jobs=2",
          "forest2p": "forest n_jobs=2 loky", "boost": "boost"}


def header():
    print(f"{'data':<5} {'model':<21} {'side':<8} {'base':>7} {'fit peak':>9} {'fit +':>8} "
          f"{'pred +':>7} {'model':>7} {'nodes':>7} {'B/node':>7}   targets")


def row(data, model, s, c):
    """Print the pair of rows of one model; whether its targets hold."""
    fit_lim = max(FIT_RATIO * c["fit_inc"], FIT_DATA * s["data_mb"] + FIT_MODEL * s["model"])
    pred_lim = max(PRED_RATIO * c["pred_inc"], PRED_OUT * s["out_mb"])
    bpn_s = s["model"] * 2 ** 20 / max(s["nodes"], 1)
    bpn_c = c["model"] * 2 ** 20 / max(c["nodes"], 1)
    if model == "boost":
        model_check = ("model", s["model"] <= MODEL_RATIO * c["model"],
                       f"model <= {MODEL_RATIO * c['model']:.2f}")
    else:
        model_check = ("model", bpn_s <= MODEL_RATIO * bpn_c,
                       f"B/node <= {MODEL_RATIO * bpn_c:.0f}")
    checks = [("fit", s["fit_inc"] <= fit_lim, f"fit+ <= {fit_lim:.0f}"),
              ("pred", s["pred_inc"] <= pred_lim, f"pred+ <= {pred_lim:.0f}"), model_check]
    ok = all(c_[1] for c_ in checks)
    verdict = "  ".join(f"{text} {'PASS' if good else 'FAIL'}" for _, good, text in checks)
    for side, r, bpn, tail in (("spotree", s, bpn_s, verdict), ("sklearn", c, bpn_c, "")):
        print(f"{data:<5} {LABELS[model]:<21} {side:<8} {r['base']:7.1f} {r['fit_peak']:9.1f} "
              f"{r['fit_inc']:8.1f} {r['pred_inc']:7.1f} {r['model']:7.2f} {int(r['nodes']):>7} "
              f"{bpn:7.0f}   {tail}", flush=True)
    return ok


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="training rows")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", default=",".join(DATA),
                        help="comma-separated data sets: " + ", ".join(DATA))
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated models: " + ", ".join(MODELS))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(*json.loads(args.child))))
        return 0
    datas, models = args.only.split(","), args.models.split(",")
    unknown = [d for d in datas if d not in DATA] + [m for m in models if m not in MODELS]
    if unknown:
        parser.error(f"unknown {unknown}; data among {list(DATA)}, models among {list(MODELS)}")
    print(f"Peak memory (MB) of a fresh process per row, n={args.n} rows, "
          f"min_samples_leaf={LEAF}, median of {args.repeat}")
    header()
    ok = True
    for data in datas:
        for model in models:
            s = median_child("spotree", data, model, args.n, args.repeat)
            c = median_child("sklearn", data, model, args.n, args.repeat)
            ok &= row(data, model, s, c)
    print("\nall targets met" if ok else "\nSOME TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
