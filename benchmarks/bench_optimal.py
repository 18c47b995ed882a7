"""OptimalSPOTree against STreeD, the MILP's gap, and optimal vs greedy trees.

Issue 4. Three parts, all on the paper's shortest path data
(``make_shortest_path``, 4x4 grid, 5 features, min_samples_leaf=20):

1. ``method="search"`` side by side in one process with STreeD (PyPI
   ``pystreed``): ``STreeDInstanceCostSensitiveClassifier`` fitted on the
   binarized features ``[x_j <= t]`` over exactly the candidate thresholds
   the search uses, with the per-sample cost matrix ``G = C V^T`` over the 20
   paths. Both must reach the same optimal training SPO loss. Targets: depth
   2 no slower than 2x STreeD, depth 3 no slower than 5x; depth 2 with all
   thresholds on 160 samples in <= 1 s. Times are medians of ``--repeat``
   runs (one run for depth 3), the two solvers interleaved. The search time
   is the whole ``fit`` (binning, search, building ``tree_``); STreeD's is its
   ``fit`` on the prepared binary matrix.
2. ``method="milp"`` on HiGHS, warm-started from the greedy tree: status,
   objective, bound and gap after ``--milp-time`` seconds (the issue asks for
   60; the default is shorter to keep a plain run quick).
3. Training and test normalized SPO loss of optimal vs greedy trees at depths
   2 and 3: n = 200 split 160 train / 40 validation, degree 2 and 10, noise
   0.25, ``--seeds`` datasets, test set of 1000 samples from the same B.
   Unpruned trees, and trees pruned on the validation set (the paper's
   protocol).

``--crosscheck 6`` adds a depth-3 check on small data (n=80, 7 quantile
thresholds) of both solvers against an exhaustive recursion over every split.

Run: ``python benchmarks/bench_optimal.py [--repeat 3] [--milp-time 60] [--seeds 10]
[--skip-depth3-streed] [--crosscheck 6] [--quick]``
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from pystreed import STreeDInstanceCostSensitiveClassifier

from spotree import OptimalSPOTree, SPOTree
from spotree.datasets import make_shortest_path
from spotree.metrics import normalized_spo_loss
from spotree.problems import ShortestPath
from spotree.tree._optimal_search import candidate_thresholds

MIN_LEAF = 20


def _binarize(X, thresholds):
    return np.hstack([(X[:, [j]] <= t[None, :]).astype(np.int32)
                      for j, t in enumerate(thresholds)])


def _streed_fit(Xb, G, depth, time_limit):
    model = STreeDInstanceCostSensitiveClassifier(max_depth=depth, min_leaf_node_size=MIN_LEAF,
                                                  time_limit=time_limit)
    t = time.perf_counter()
    model.fit(Xb, G)
    elapsed = time.perf_counter() - t
    pred = np.asarray(model.predict(Xb), dtype=np.int64)
    return elapsed, float(G[np.arange(len(pred)), pred].sum())


def _check_search_tree(est, X, G, z, thresholds, on_grid_required):
    """Independent check of a search tree: leaf weights, candidate thresholds, loss.

    With all thresholds the tree places each threshold halfway between the
    node's own neighbouring values, which is off the global grid but routes
    the training samples the same way.
    """
    t = est.tree_
    leaves = est.apply(X)
    sizes = np.bincount(leaves, minlength=t.node_count)[t.is_leaf]
    loss = sum(G[leaves == leaf].sum(axis=0).min() for leaf in np.unique(leaves)) - z.sum()
    on_grid = all(np.isclose(thresholds[t.feature[n]], t.threshold[n]).any()
                  for n in np.flatnonzero(~t.is_leaf))
    return bool(sizes.min() >= MIN_LEAF and (on_grid or not on_grid_required)), float(loss)


def _search_fit(X, C, sp, depth, thresholds):
    t = time.perf_counter()
    est = OptimalSPOTree(sp, max_depth=depth, min_samples_leaf=MIN_LEAF,
                         global_thresholds=thresholds, time_limit=3600).fit(X, C)
    return time.perf_counter() - t, est


def bench_search(repeat, skip_depth3_streed, quick):
    sp = ShortestPath((4, 4))
    V = sp.vertices()
    X0, C0 = make_shortest_path(200, degree=2, noise=0.25, random_state=0)
    _search_fit(X0, C0, sp, 3, 9)  # load the compiled kernels before timing
    cases = [(160, 2, 99, 2.0), (8000, 2, 99, 2.0), (160, 2, "all", None),
             (160, 3, 99, 5.0)]
    if quick:
        cases = [c for c in cases if c[0] == 160 and c[1] == 2]
    print("\n1. Exact search vs STreeD (shortest path 4x4, degree 2, noise 0.25, "
          f"min_samples_leaf={MIN_LEAF})")
    print(f"{'n':>6} {'depth':>5} {'thresholds':>10} {'search s':>9} {'STreeD s':>9} "
          f"{'ratio':>6} {'target':>7} {'search loss':>12} {'STreeD loss':>12} {'losses':>13}")
    ok = True
    unchecked = []
    for n, depth, q, target in cases:
        X, C = make_shortest_path(n, degree=2, noise=0.25, random_state=1)
        G = C @ V.T
        _, z = sp.solve(C)
        thr = candidate_thresholds(X, q)
        Xb = _binarize(X, thr)
        reps = 1 if depth >= 3 else repeat
        ts, tt, loss_s, loss_t = [], [], None, None
        for _ in range(reps):
            t, est = _search_fit(X, C, sp, depth, q)
            ts.append(t)
            loss_s = est.result_["objective"] * n
            assert est.result_["status"] == "optimal"
            if depth >= 3 and skip_depth3_streed:
                continue
            t, loss = _streed_fit(Xb, G, depth, 3600)
            tt.append(t)
            loss_t = loss - z.sum()
        t_s = float(np.median(ts))
        t_t = float(np.median(tt)) if tt else float("nan")
        ratio = t_s / t_t if tt else float("nan")
        valid, loss_check = _check_search_tree(est, X, G, z, thr, q != "all")
        assert valid and abs(loss_check - loss_s) <= 1e-7 * max(1.0, loss_s)
        same = loss_t is not None and abs(loss_s - loss_t) <= 1e-7 * max(1.0, abs(loss_t))
        if loss_t is None:
            verdict = "-"
        elif same:
            verdict = "equal"
        else:
            verdict = "search lower" if loss_s < loss_t else "STreeD lower"
        if target is None:
            tgt = "<=1 s"
            met = t_s <= 1.0
        else:
            tgt = f"<={target:g}x"
            met = (not tt) or ratio <= target
            if not tt:  # STreeD skipped: the ratio target is not checked, not met
                tgt = "unchecked"
                unchecked.append(f"n={n} depth {depth}")
        # The search's tree was re-checked above (leaf weights, thresholds on
        # the grid, loss recomputed from its partition), so a lower loss than
        # STreeD's is a valid better tree, not a bug.
        ok &= met and (loss_t is None or loss_s <= loss_t + 1e-7 * max(1.0, abs(loss_t)))
        lt = f"{loss_t:12.4f}" if loss_t is not None else f"{'skipped':>12}"
        print(f"{n:>6} {depth:>5} {str(q):>10} {t_s:9.3f} {t_t:9.3f} {ratio:6.2f} {tgt:>7} "
              f"{loss_s:12.4f} {lt} {verdict:>13}")
    if unchecked:
        print("time ratio targets NOT checked (STreeD skipped): " + ", ".join(unchecked))
    return ok


def bench_crosscheck(n_seeds):
    """Depth 3 on small data: search and STreeD against exhaustive recursion."""
    sp = ShortestPath((4, 4))
    V = sp.vertices()
    min_leaf = 10
    print(f"\n1b. Depth 3, n=80, 7 quantile thresholds, min leaf {min_leaf}: training loss "
          "of the search and of STreeD against an exhaustive recursion over every split")
    print(f"{'seed':>4} {'exhaustive':>11} {'search':>11} {'STreeD':>11}")
    for seed in range(n_seeds):
        X, C = make_shortest_path(80, degree=2, noise=0.25, random_state=seed)
        G = C @ V.T
        _, z = sp.solve(C)
        thr = candidate_thresholds(X, 7)
        cols = [X[:, j] <= t for j, ts in enumerate(thr) for t in ts]
        memo = {}

        def best(mask, d):
            key = (mask.tobytes(), d)
            if key not in memo:
                b = G[mask].sum(axis=0).min()
                if d > 0:
                    for col in cols:
                        left, right = mask & col, mask & ~col
                        if left.sum() >= min_leaf and right.sum() >= min_leaf:
                            b = min(b, best(left, d - 1) + best(right, d - 1))
                memo[key] = b
            return memo[key]

        exhaustive = best(np.ones(80, dtype=bool), 3) - z.sum()
        est = OptimalSPOTree(sp, max_depth=3, min_samples_leaf=min_leaf,
                             global_thresholds=7).fit(X, C)
        model = STreeDInstanceCostSensitiveClassifier(max_depth=3,
                                                      min_leaf_node_size=min_leaf,
                                                      time_limit=600)
        model.fit(np.array(cols).T.astype(np.int32), G)
        pred = np.asarray(model.predict(np.array(cols).T.astype(np.int32)), dtype=np.int64)
        streed = G[np.arange(80), pred].sum() - z.sum()
        print(f"{seed:>4} {exhaustive:11.6f} {est.result_['objective'] * 80:11.6f} "
              f"{streed:11.6f}")


def bench_milp(milp_time):
    sp = ShortestPath((4, 4))
    X, C = make_shortest_path(200, degree=2, noise=0.25, random_state=1)
    X, C = X[:160], C[:160]
    print(f"\n2. MILP on HiGHS after {milp_time:g} s (160 samples, warm start = greedy tree)")
    print(f"{'depth':>5} {'binaries':>8} {'status':>20} {'greedy':>9} {'MILP':>9} "
          f"{'bound':>9} {'gap':>7} {'optimum':>9} {'B&B nodes':>9}")
    for depth in (2, 3):
        est = OptimalSPOTree(sp, max_depth=depth, min_samples_leaf=MIN_LEAF, method="milp",
                             time_limit=milp_time, random_state=0).fit(X, C)
        r = est.result_
        opt = OptimalSPOTree(sp, max_depth=depth, min_samples_leaf=MIN_LEAF).fit(X, C)
        print(f"{depth:>5} {r['n_binaries']:>8} {r['status']:>20} "
              f"{r['warm_start_objective']:9.5f} {r['objective']:9.5f} {r['bound']:9.5f} "
              f"{r['gap']:7.2%} {opt.result_['objective']:9.5f} {r['n_nodes_explored']:>9}")


def bench_generalization(n_seeds):
    sp = ShortestPath((4, 4))
    print(f"\n3. Normalized SPO loss, optimal (search, all thresholds) vs greedy, "
          f"{n_seeds} seeds, 160 train / 40 validation / 1000 test, noise 0.25")
    print(f"{'degree':>6} {'depth':>5} {'method':>8} {'train':>8} {'test':>8} "
          f"{'test pruned':>11} {'fit s':>7}")
    for degree in (2, 10):
        for depth in (2, 3):
            rows = {"greedy": [], "optimal": []}
            for seed in range(n_seeds):
                X, C, B = make_shortest_path(200, degree=degree, noise=0.25,
                                             random_state=seed, return_B=True)
                Xt, Ct = make_shortest_path(1000, degree=degree, noise=0.25, B=B,
                                            random_state=10_000 + seed)
                Xtr, Ctr, Xva, Cva = X[:160], C[:160], X[160:], C[160:]
                for name, est in (("greedy", SPOTree(sp, max_depth=depth,
                                                     min_samples_leaf=MIN_LEAF)),
                                  ("optimal", OptimalSPOTree(sp, max_depth=depth,
                                                             min_samples_leaf=MIN_LEAF))):
                    t = time.perf_counter()
                    est.fit(Xtr, Ctr)
                    t = time.perf_counter() - t
                    pruned = est.prune(Xva, Cva)
                    rows[name].append((
                        normalized_spo_loss(Ctr, est.predict(Xtr), problem=sp),
                        normalized_spo_loss(Ct, est.predict(Xt), problem=sp),
                        normalized_spo_loss(Ct, pruned.predict(Xt), problem=sp), t))
            for name, vals in rows.items():
                m = np.mean(vals, axis=0)
                print(f"{degree:>6} {depth:>5} {name:>8} {m[0]:8.4f} {m[1]:8.4f} "
                      f"{m[2]:11.4f} {m[3]:7.3f}")
            better = np.mean([o[0] <= g[0] + 1e-12 for o, g in zip(rows["optimal"],
                                                                   rows["greedy"])])
            print(f"{'':>6} {'':>5} optimal train loss <= greedy in {better:.0%} of seeds")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--milp-time", type=float, default=20.0)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--skip-depth3-streed", action="store_true",
                        help="do not run STreeD at depth 3 (it takes tens of seconds)")
    parser.add_argument("--crosscheck", type=int, default=0, metavar="SEEDS",
                        help="also compare search and STreeD with exhaustive recursion at "
                             "depth 3 on SEEDS small datasets")
    parser.add_argument("--quick", action="store_true",
                        help="depth-2 search on 160 samples, 5 s MILP, 2 seeds")
    args = parser.parse_args()
    if args.quick:
        args.milp_time, args.seeds, args.repeat = 5.0, 2, 1
    ok = bench_search(args.repeat, args.skip_depth3_streed, args.quick)
    if args.crosscheck:
        bench_crosscheck(args.crosscheck)
    bench_milp(args.milp_time)
    bench_generalization(args.seeds)
    print("\nsearch time targets met and search loss <= STreeD loss everywhere checked:", ok)
    if args.skip_depth3_streed:
        print("(--skip-depth3-streed: the depth-3 time ratio was not checked)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
