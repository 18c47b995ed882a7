"""Greedy SPOT vs CART on the paper's small shortest-path setting (section 5.1).

n = 200 samples per seed: the first 40 are the validation set used for
pruning, the other 160 train the tree; 1000 test points share the training
set's B. min_samples_leaf=20, depths 1, 2, 3 and unrestricted, degree 2 and
10, noise 0 and 0.25, 10 seeds. Prints the mean (std) test normalized SPO
loss per cell and SPOT's improvement over CART; the paper reports 26.7%,
26.8%, 23.1% and 23.6% at depths 1, 2, 3 and unrestricted (averaged over the
four degree/noise cells).

Run: ``python benchmarks/bench_paper_trees.py [--seeds 10]``
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from spotree import SPOTree, ShortestPath
from spotree.datasets import make_shortest_path
from spotree.metrics import normalized_spo_loss


def run(seeds, n=200, n_val=40, n_test=1000):
    problem = ShortestPath((4, 4))
    rows = []
    for degree in (2, 10):
        for noise in (0.0, 0.25):
            for seed in range(seeds):
                X, C, B = make_shortest_path(n, degree=degree, noise=noise,
                                             random_state=seed, return_B=True)
                Xt, Ct = make_shortest_path(n_test, degree=degree, noise=noise, B=B,
                                            random_state=10_000 + seed)
                Xv, Cv, Xf, Cf = X[:n_val], C[:n_val], X[n_val:], C[n_val:]
                for depth in (1, 2, 3, None):
                    for crit in ("spo", "mse"):
                        model = SPOTree(problem, criterion=crit, max_depth=depth,
                                        min_samples_leaf=20).fit(Xf, Cf).prune(Xv, Cv)
                        loss = normalized_spo_loss(Ct, model.predict(Xt), problem=problem)
                        rows.append((degree, noise, depth, crit, seed, loss,
                                     model.get_n_leaves()))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    t = time.perf_counter()
    rows = run(args.seeds)
    elapsed = time.perf_counter() - t
    arr = np.array([(r[0], r[1], -1 if r[2] is None else r[2], r[3] == "spo", r[5], r[6])
                    for r in rows], dtype=float)
    print(f"Test normalized SPO loss, mean (sample std) over {args.seeds} seeds; "
          f"leaves in brackets ({elapsed:.1f} s)")
    print(f"{'degree':>6} {'noise':>5} {'depth':>5} {'SPOT':>17} {'CART':>17} "
          f"{'improv.':>8} {'SPOT<CART':>9}")
    impr_by_depth = {}
    all_better = True
    for degree in (2, 10):
        for noise in (0.0, 0.25):
            for depth in (1, 2, 3, -1):
                sel = (arr[:, 0] == degree) & (arr[:, 1] == noise) & (arr[:, 2] == depth)
                s = arr[sel & (arr[:, 3] == 1)]
                c = arr[sel & (arr[:, 3] == 0)]
                ms, mc = s[:, 4].mean(), c[:, 4].mean()
                imp = 100 * (mc - ms) / mc
                impr_by_depth.setdefault(depth, []).append(imp)
                all_better &= ms < mc
                print(f"{degree:6d} {noise:5.2f} {'none' if depth < 0 else int(depth):>5} "
                      f"{ms:7.4f} ({s[:, 4].std(ddof=1):.4f}) [{s[:, 5].mean():4.1f}] "
                      f"{mc:7.4f} ({c[:, 4].std(ddof=1):.4f}) [{c[:, 5].mean():4.1f}] "
                      f"{imp:7.1f}% {'yes' if ms < mc else 'NO':>9}")
    paper = {1: 26.7, 2: 26.8, 3: 23.1, -1: 23.6}
    print("\nMean improvement of SPOT over CART across the four cells (paper in brackets):")
    for depth in (1, 2, 3, -1):
        print(f"  depth {'none' if depth < 0 else depth}: "
              f"{np.mean(impr_by_depth[depth]):5.1f}%  [{paper[depth]}%]")
    print("\nSPOT below CART in every cell:", "yes" if all_better else "NO")
    return 0 if all_better else 1


if __name__ == "__main__":
    sys.exit(main())
