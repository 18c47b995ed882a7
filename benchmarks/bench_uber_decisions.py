"""Decisions of spotree's defaults on real travel times: the Uber Movement Los Angeles network.

A measurement, not a target (no issue sets one; the script exits 0 unless it
fails to run): the test normalized regret of the shortest path that each model's
predicted travel times choose on the 93-edge downtown Los Angeles network of
Kallus and Mao (Stochastic Optimization Forests, 2023), with the two-year data
(3640 rows of (day, period), 197 features: weather, weekday, month, the period
one-hot, and each edge's travel time 1 and 7 days earlier). Each seed splits
the rows in half at random, stratified on (period, weekday) as the paper does,
and fits on one half:

- ``mean``: the training mean of every edge (the same path for every row);
- ``LS``: two-stage least squares per edge;
- ``RF``: scikit-learn's RandomForestRegressor with its defaults (100 trees);
- ``SPOForest`` and ``SPOBoost``: spotree's defaults (the forest's is
  ``criterion="auto"``: SPO or squared-error trees, whichever make the better
  out-of-bag decisions on the first 20 trees of each);
- ``SPOForest spo``: the forest of SPO trees (``criterion="spo"``, the
  paper's forest and the default until ``"auto"``);
- ``SPOForest mse`` and ``SPOBoost ridge``: the two changes of a default that
  did better on this network's design seeds (``criterion="mse"``, the
  forest's trees grown for squared error; ``init="ridge"``, the boosting
  started from ridge regression instead of the cross-validated choice), as a
  user would try them.

Columns: the mean regret over the seeds, and each method's paired difference
from ``RF`` with its standard error over the seeds. The data are read from
``--data`` (the ``uber_movement_la_shortest_path`` folder of
``../shared/realdata``; the licence of that copy forbids shipping it). Without
them the script says so and exits 0.

Usage::

    python benchmarks/bench_uber_decisions.py --data ../shared/realdata --seeds 0:5 --jobs 2
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from joblib import Parallel, delayed
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from spotree import SPOBoost, SPOForest
from spotree.experiments import parse_seeds
from spotree.metrics import normalized_spo_loss
from spotree.problems import ShortestPath

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_realistic import (edges_of, uber_features,  # noqa: E402  (scripts, not a package)
                             uber_frames)

METHODS = ("mean", "LS", "RF", "SPOForest", "SPOBoost", "SPOForest spo", "SPOForest mse",
           "SPOBoost ridge")


def load(root):
    """(X, C, problem, strata) of the two-year Uber data, or None where absent."""
    data = uber_frames(root, "twoyear")
    if data is None:
        return None
    frame, C, A, b = data
    strata = (frame["Period"].astype(str) + "/" + frame["weekday"].astype(str)).to_numpy()
    X = uber_features(frame)
    n_nodes, edges = edges_of(A)
    s, t = int(np.flatnonzero(b < 0)[0]), int(np.flatnonzero(b > 0)[0])
    return X, C, ShortestPath.from_edges(n_nodes, edges, s, t), strata


def one_seed(data, seed):
    X, C, problem, strata = data
    tr, te = train_test_split(np.arange(len(X)), test_size=0.5, random_state=seed,
                              stratify=strata)
    out = {}
    with threadpool_limits(1):
        for name in METHODS:
            t = time.perf_counter()
            if name == "mean":
                P = np.tile(C[tr].mean(axis=0), (len(te), 1))
            elif name == "LS":
                P = LinearRegression().fit(X[tr], C[tr]).predict(X[te])
            elif name == "RF":
                P = RandomForestRegressor(random_state=seed).fit(X[tr], C[tr]).predict(X[te])
            elif name.startswith("SPOForest"):
                kw = ({"criterion": name.split()[1]} if " " in name else {})
                P = SPOForest(problem, random_state=seed, **kw).fit(X[tr], C[tr]).predict(X[te])
            else:
                kw = {"init": "ridge"} if name.endswith("ridge") else {}
                P = SPOBoost(problem, random_state=seed, **kw).fit(X[tr], C[tr]).predict(X[te])
            out[name] = (normalized_spo_loss(C[te], P, problem=problem),
                         time.perf_counter() - t)
    return seed, out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.path.join("..", "shared", "realdata"))
    parser.add_argument("--seeds", default="0:5", help="e.g. 0:5 or 0,3,7")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    data = load(args.data)
    if data is None:
        print(f"no Uber data under {args.data!r}: nothing to measure")
        return 0
    seeds = parse_seeds(args.seeds)
    print(f"Uber LA shortest path: {data[0].shape[0]} rows, {data[0].shape[1]} features, "
          f"{data[1].shape[1]} edges; half to fit; seeds {seeds}; {os.cpu_count()} CPUs")
    runs = dict(Parallel(n_jobs=args.jobs)(delayed(one_seed)(data, s) for s in seeds))
    regret = {m: np.array([runs[s][m][0] for s in seeds]) for m in METHODS}
    print("\n| method | regret | minus RF | fit s |\n|---|---|---|---|")
    for m in METHODS:
        d = regret[m] - regret["RF"]
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
        fit = np.mean([runs[s][m][1] for s in seeds])
        print(f"| {m} | {regret[m].mean():.5f} | {d.mean():+.5f} ± {se:.5f} | {fit:.2f} |")
    print("\nper seed: " + "; ".join(
        f"{s}: " + " ".join(f"{m}={runs[s][m][0]:.5f}" for m in METHODS) for s in seeds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
