"""SPOTree fit time against scikit-learn's CART, side by side in one process.

Targets (issue 3):

- shortest path, ``make_shortest_path(10000, degree=2, noise=0.5)``,
  min_samples_leaf=20, all thresholds, depths 2, 6 and unrestricted:
  SPOTree fit time / ``DecisionTreeRegressor`` fit time <= 3, for
  ``criterion="spo"`` and ``criterion="mse"``;
- news recommendation (LinearProgram, d=6, 5 constraints) on
  ``make_news(5000)``, unrestricted depth, minimum leaf weight 5% of the
  total: fit <= 10 s (on the vertex path and, for reference, on the oracle
  path with 99 quantile thresholds);
- a LinearProgram with d=50 and no vertex list, thresholds=99: fit works;
  the time and the number of oracle calls are printed.

Timings are medians of ``--repeat`` runs, interleaving the two estimators so
that machine noise hits both alike.

Run: ``python benchmarks/bench_tree.py [--repeat 7] [--quick]``
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from sklearn.tree import DecisionTreeRegressor

from spotree import SPOTree
from spotree.datasets import make_news, make_shortest_path
from spotree.problems import CallableProblem, LinearProgram, ShortestPath, news_recommendation


def _time(fn, repeat):
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def bench_shortest_path(repeat, n):
    X, C = make_shortest_path(n, degree=2, noise=0.5, random_state=0)
    sp = ShortestPath((4, 4))
    SPOTree(sp, max_depth=2, min_samples_leaf=20).fit(X[:200], C[:200])  # load compiled code
    print(f"\nShortest path 4x4, n={n}, min_samples_leaf=20, all thresholds "
          f"(median of {repeat})")
    print(f"{'depth':>6} {'criterion':>9} {'spotree s':>10} {'sklearn s':>10} "
          f"{'ratio':>6} {'leaves':>7} {'target':>8}")
    ok = True
    for depth in (2, 6, None):
        for crit in ("spo", "mse"):
            ts, tc = [], []
            for _ in range(repeat):
                ts += _time(lambda: SPOTree(sp, criterion=crit, max_depth=depth,
                                            min_samples_leaf=20).fit(X, C), 1)
                tc += _time(lambda: DecisionTreeRegressor(max_depth=depth,
                                                          min_samples_leaf=20).fit(X, C), 1)
            model = SPOTree(sp, criterion=crit, max_depth=depth, min_samples_leaf=20).fit(X, C)
            ratio = np.median(ts) / np.median(tc)
            ok &= ratio <= 3
            print(f"{str(depth):>6} {crit:>9} {np.median(ts):10.4f} {np.median(tc):10.4f} "
                  f"{ratio:6.2f} {model.get_n_leaves():7d} "
                  f"{'PASS' if ratio <= 3 else 'FAIL':>8}")
    return ok


def bench_news(repeat):
    X, C, w = make_news(5000, random_state=0)
    problem = news_recommendation(random_state=0)
    oracle = CallableProblem(lambda C: problem.solve(C)[0], n_costs=problem.n_costs,
                             sense=problem.sense,
                             batched=True)
    print("\nNews recommendation LP (d=6, 5 constraints), make_news(5000), unrestricted "
          "depth, min leaf weight 5%")
    print(f"{'path':>28} {'fit s':>8} {'leaves':>7} {'oracle calls':>13} {'target':>8}")
    # Load the compiled code of both paths (each is its own compiled variant).
    for prob in (problem, oracle):
        SPOTree(prob, max_depth=1, thresholds=99).fit(X[:100], C[:100])
    ok = True
    for label, prob, thr, rep in (("vertex list (K=%d), all thr." % problem.vertices().shape[0],
                                   problem, "all", repeat),
                                  ("oracle, 99 quantiles", oracle, 99, 1)):
        times = _time(lambda: SPOTree(prob, min_samples_leaf=0.05, thresholds=thr)
                      .fit(X, C, sample_weight=w), rep)
        m = SPOTree(prob, min_samples_leaf=0.05, thresholds=thr).fit(X, C, sample_weight=w)
        t = float(np.median(times))
        ok &= t <= 10
        print(f"{label:>28} {t:8.2f} {m.get_n_leaves():7d} {m.n_oracle_calls_:13d} "
              f"{'PASS' if t <= 10 else 'FAIL':>8}")
    return ok


def bench_lp50(n):
    rng = np.random.RandomState(0)
    d = 50
    # A budgeted selection LP: 0 <= w <= 1, sum w = 10, three knapsack rows.
    A_ub = rng.exponential(1.0, size=(3, d))
    problem = LinearProgram(A_ub=A_ub, b_ub=np.full(3, 15.0), A_eq=np.ones((1, d)),
                            b_eq=[10.0], bounds=(0, 1))
    problem.max_vertices = 0  # no vertex list: every split is scored by the oracle
    X = rng.uniform(size=(n, 5))
    B = rng.binomial(1, 0.5, size=(d, 5))
    C = (X @ B.T / np.sqrt(5) + 1) ** 2 * rng.uniform(0.75, 1.25, size=(n, d))
    t = time.perf_counter()
    m = SPOTree(problem, thresholds=99, min_samples_leaf=20, max_depth=4).fit(X, C)
    t = time.perf_counter() - t
    print(f"\nLinearProgram d={d} without vertex list, n={n}, thresholds=99, depth<=4, "
          f"min leaf 20")
    print(f"fit {t:.2f} s, {m.get_n_leaves()} leaves, {m.n_oracle_calls_} batched oracle "
          f"calls")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeat = 3 if args.quick else args.repeat
    ok = bench_shortest_path(repeat, args.n)
    ok &= bench_news(repeat)
    bench_lp50(2000 if args.quick else 5000)
    print("\nall targets met" if ok else "\nSOME TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
