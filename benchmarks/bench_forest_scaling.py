"""How SPOForest's fit time scales with cores, against scikit-learn's RandomForestRegressor.

For each ``n_jobs`` in ``--jobs`` (default 1, 2, 4, 8, 16, capped at the
machine's cores) both forests are fitted on the same data with the same
settings, alternately (so load drifts hit both alike), and the script prints
each one's median time, its speed-up over its own ``n_jobs=1`` time, and the
ratio of the two times. Cases (``--only`` picks a comma-separated subset):

- ``grid``: ``make_shortest_path(10000, degree=2, noise=0.5)`` on the 4x4 grid,
  100 trees, min_samples_leaf=20, max_features=3, ``ridge_features=False``
  (the peer's columns): the vertex path, run on threads;
- ``icon``: the ICON energy knapsack (650 days x 196 features, 48 items,
  capacity 120; skipped when ``--data`` lacks it), 100 trees,
  min_samples_leaf=5, max_features="sqrt": the compiled knapsack path;
- ``lp``: the same kind of 45-node road network as ``bench_realistic.py``
  (the Uber Movement network when present, else a random DAG), 1000 rows,
  given as a ``LinearProgram`` (HiGHS): 20 trees, the process path.

Target, per case and ``n_jobs`` > 1: SPOForest's speed-up is at least 0.8
times the peer's (``scaling`` column), i.e. spotree uses the cores about as
well as scikit-learn does. The peer's own speed-up is printed, so a machine
where neither scales shows as such. The script exits non-zero on a miss.

Run: ``python benchmarks/bench_forest_scaling.py [--repeat 3] [--jobs 1 2 4 8 16]
[--only grid,icon,lp] [--data DIR]``
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from sklearn.ensemble import RandomForestRegressor

from spotree import SPOForest
from spotree.datasets import make_shortest_path
from spotree.problems import Knapsack, LinearProgram, ShortestPath

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_pair  # noqa: E402  (the benchmarks folder)
from bench_realistic import DEFAULT_DATA, icon_data, uber_data, random_dag_data  # noqa: E402

CASES = ("grid", "icon", "lp")
TARGET = 0.8


def _cases(only, data):
    """(name, problem, X, C, forest settings) of each case whose data exist."""
    out = []
    if "grid" in only:
        X, C = make_shortest_path(10000, degree=2, noise=0.5, random_state=0)
        out.append(("4x4 grid, n=10000, threads", ShortestPath((4, 4)), X, C,
                    dict(n_estimators=100, min_samples_leaf=20, max_features=3),
                    dict(ridge_features=False)))
    if "icon" in only:
        icon = icon_data(data, 650)
        if icon is None:
            print("icon: skipped (no ICON data under --data)")
        else:
            X, C, weights = icon
            out.append(("ICON knapsack, 650 days", Knapsack(weights, 120), X, C,
                        dict(n_estimators=100, min_samples_leaf=5, max_features="sqrt"), {}))
    if "lp" in only:
        X, C, A, b, name = uber_data(data, 1000) or random_dag_data(1000)
        out.append((f"{name} network as LinearProgram, 1000 rows",
                    LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1)), X, C,
                    dict(n_estimators=20, min_samples_leaf=5, max_features="sqrt"), {}))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--only", default=",".join(CASES))
    parser.add_argument("--data", default=DEFAULT_DATA, help="the realdata folder")
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    jobs = sorted({j for j in args.jobs if 1 <= j <= cores} | {1})
    only = set(args.only.split(","))
    print(f"{cores} cores; n_jobs {jobs}; median of {args.repeat}; target: SPOForest's "
          f"speed-up >= {TARGET} x RandomForestRegressor's")
    ok = True
    for name, problem, X, C, settings, extra in _cases(only, args.data):
        print(f"\n{name}: {settings}")
        print(f"{'n_jobs':>6} {'spotree s':>10} {'sklearn s':>10} {'ratio':>6} "
              f"{'speed-up':>9} {'peer':>6} {'scaling':>8}")
        # Compile the kernels and start the worker pools before any timing.
        small = dict(settings, n_estimators=4)
        for n_jobs in jobs:
            SPOForest(problem, n_jobs=n_jobs, **small, **extra).fit(X[:200], C[:200])
            RandomForestRegressor(n_jobs=n_jobs, **small).fit(X[:200], C[:200])
        base = None
        for n_jobs in jobs:
            ts, tc, _, _, _ = median_pair(
                args.repeat,
                lambda: SPOForest(problem, n_jobs=n_jobs, random_state=0, **settings,
                                  **extra).fit(X, C),
                lambda: RandomForestRegressor(n_jobs=n_jobs, random_state=0,
                                              **settings).fit(X, C))
            if base is None:
                base = (ts, tc)
            up, peer = base[0] / ts, base[1] / tc
            scaling = up / peer
            verdict = ""
            if n_jobs > 1:
                hit = scaling >= TARGET
                ok &= hit
                verdict = "PASS" if hit else "MISS"
            print(f"{n_jobs:>6} {ts:10.3f} {tc:10.3f} {ts / tc:6.2f} {up:9.2f} {peer:6.2f} "
                  f"{scaling:8.2f} {verdict}", flush=True)
    print("\nALL TARGETS MET" if ok else "\nSOME TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
