"""The cost of an SPO split on realistic problems, against scikit-learn in one process (issue 17).

Rows (``--only`` picks a comma-separated subset; rows whose data are absent
are skipped with a note):

- ``icon_forest``: ICON energy knapsack (48 items, one resource, capacity 120;
  650 days x 196 features), SPOForest 100 trees, min_samples_leaf=5,
  max_features="sqrt", n_jobs=2, against RandomForestRegressor with the same
  settings. Target: ratio <= 5.
- ``icon_tree``: the same data, 550 days: SPOTree depth 6, min_samples_leaf=20,
  pruned on the next 100 days, against DecisionTreeRegressor (same depth and
  leaf size). Target: ratio <= 10.
- ``dag_forest``: a 45-node, ~90-edge road network (the Uber Movement Los Angeles
  network when present, else a random DAG of that size), 1000 rows x ~200
  features, SPOForest 100 trees (same settings as ``icon_forest``) through
  ``ShortestPath.from_edges`` against RandomForestRegressor (target <= 3), and
  the same network given as ``LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1))``
  (target: at most 1.2x the from_edges time).
- ``boost``: SPOBoost with its defaults on the ICON data and on the network. No
  scikit-learn peer does the same work, so the time is reported as a ratio to a
  RandomForestRegressor fit on the same data in the same process (a yardstick
  for the machine's speed), and compared with the ratio of SPOBoost before
  the issue-17 work (:data:`BOOST_BEFORE`, measured on a quiet machine):
  target at least 30% less. The predictions' fingerprint is compared with
  that version's and printed. It is not a target, but the issue's target asks
  for the same predictions: SPOBoost's defaults changed after the baseline,
  so this row compares two models; ``boost_same`` below measures one model
  with the same predictions, as the target asks.
- ``boost_same``: the issue's SPOBoost target as asked, "the same predictions":
  one model that both versions fit alike (``BOOST_SAME``: a linear start, 60
  rounds, no early stopping), on the ICON data and on the network, as a ratio
  to the RandomForestRegressor fit in the same process, against that ratio of
  the code before the issue-17 work (:data:`BOOST_SAME_BEFORE`). Target: at
  most 0.7 times the ratio before, with the same predictions (the
  fingerprints within 1e-9). Run under the old code (``PYTHONPATH`` on a
  checkout of 0622044) this row prints the ratio to record.
- ``sparse_lp``: the sparse LP of ``_sparse_lp.py`` (500 variables x 200 rows,
  read from an MPS file), n=5000, depth 4, 99 quantile thresholds. Target <= 60 s.
  The peer column is a yardstick of the machine's speed, not a competitor:
  scipy's linprog solving 50 of the cost vectors from scratch. The row also
  prints the fit's CPU time (on a shared machine the wall time above it is
  time spent waiting for a core).
- ``cold``: ``SPOTree(ShortestPath((4, 4)), max_depth=2).fit`` on 200 rows in a
  fresh process with an empty kernel cache (target <= 10 s including import and
  compilation), then again with that cache filled (target <= 1.5 s including
  import). Both run as a user's first and second run would: Python may write
  its bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped from their
  environment; pip writes it at install), so the second run reads spotree's
  compiled modules as an installed package does. The peer column of the
  warm row is the floor no spotree change can lower: a fresh process that
  imports only scikit-learn's estimator base and numba (the median of three).

Data are read from ``../shared/realdata/`` relative to the repository root
(``--data`` overrides). Times are medians of ``--repeat`` runs with the two
estimators interleaved; kernels are compiled before any timing (except in the
cold row). The script exits non-zero when a target is missed.

Run: ``python benchmarks/bench_realistic.py [--repeat 1] [--only icon_tree,cold]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor

from spotree import SPOBoost, SPOForest, SPOTree
from spotree.problems import Knapsack, LinearProgram, ShortestPath

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_pair, timed  # noqa: E402  (the benchmarks folder)

HERE = os.path.dirname(os.path.abspath(__file__))


def _default_data():
    """``../shared/realdata`` next to the repository, else next to a folder above it
    (a git worktree kept in a subfolder of the main checkout's parent)."""
    folder = os.path.dirname(HERE)
    for _ in range(3):
        candidate = os.path.join(os.path.dirname(folder), "shared", "realdata")
        if os.path.isdir(candidate):
            return candidate
        folder = os.path.dirname(folder)
    return os.path.join(os.path.dirname(os.path.dirname(HERE)), "shared", "realdata")


DEFAULT_DATA = _default_data()
FOREST = dict(n_estimators=100, min_samples_leaf=5, max_features="sqrt", n_jobs=2)

#: SPOBoost (defaults, random_state=0) time / RandomForestRegressor (FOREST
#: settings) time on the same data, and a fingerprint of the predictions
#: (sum, sum of squares of predict(X) on the first 100 rows) of SPOBoost as it
#: was before the issue-17 work (main at 0622044). The ratios were first
#: recorded under a load of 9-11 (12.10 for ICON, 4.75 for the network), which
#: flattered every later run; they were measured again at stop 23 on the quiet
#: 2-core machine (load about 1), that commit's code in its own worktree, run
#: alternately with the current code, two runs of a median of 3 each: ICON
#: 6.49 and 6.71, network 3.64 and 3.80 (the fingerprints reproduced exactly).
#: The means are below. The network row uses ShortestPath.from_edges.
#: SPOBoost's defaults changed after this baseline (init="auto", ab14142; the
#: start chosen by 5-fold cross-validation and trees kept only for a
#: significant validation gain, 803e623), so its predictions differ from it:
#: the row compares the two versions' defaults, not one model's speed
#: (the ``boost_same`` row measures that, with the same predictions).
BOOST_BEFORE = {
    "icon": (6.60, (5737016.989894875, 8502110255.757836)),
    "dag": (3.72, (2086939.9726556544, 6612877661.939287)),
}

#: One SPOBoost model that the code before the issue-17 work (0622044) and
#: the current code fit alike: their defaults differ (see above), these
#: settings do not.
BOOST_SAME = dict(init="linear", n_iter_no_change=None, n_estimators=60)

#: Ratio SPOBoost(BOOST_SAME) / RandomForestRegressor(FOREST) and the
#: fingerprint of the predictions of the code at 0622044, measured with this
#: row at stop 24 on the quiet 2-core machine (load about 1): that commit's
#: ``spotree`` on PYTHONPATH, alternated with the current code, two runs of a
#: median of 3 each: ICON 12.97 and 12.13 (SPOBoost 3.27 s), network 5.82 and
#: 5.82 (2.47-2.49 s). The means are below; the fingerprints reproduced.
BOOST_SAME_BEFORE = {
    "icon": (12.55, (1508007.3080544581, 628889822.2940576)),
    "dag": (5.82, (1144030.1886885138, 185865262.96905467)),
}

# ------------------------------------------------------------------ data
def icon_data(root, n_days):
    """ICON energy knapsack days: X (n_days, 196), C (n_days, 48), weights.

    One row per day: the four day-level features (holiday flag, day of week,
    week, month) and the four per-period features (wind forecast, load
    forecast, day-ahead price, CO2 intensity) of the 48 half-hours; the costs
    are the 48 item values. Days shuffled as the JAIR benchmark does.
    """
    path = os.path.join(root, "icon_energy_knapsack", "Data.npz")
    if not os.path.exists(path):
        return None
    from sklearn.utils import shuffle

    f = np.load(path)
    X = np.vstack([f["X_1gtrain"], f["X_1gtest"]])[:, 1:]
    y = np.concatenate([f["y_train"], f["y_test"]])
    days = X.shape[0] // 48
    X = X.reshape(days, 48, 8)
    feats = np.hstack([X[:, 0, :4], X[:, :, 4:].reshape(days, -1)])
    C = y.reshape(days, 48)
    feats, C = shuffle(feats, C, random_state=0)
    return feats[:n_days], C[:n_days], f["weights"].astype(float)


def uber_frames(root, span="oneyear"):
    """The Uber Los Angeles files of one span ("oneyear", "twoyear", ...): the
    feature table (a DataFrame), C (n, 93), A (45, 93) and b (45,); None where absent."""
    folder = os.path.join(root, "uber_movement_la_shortest_path")
    if not os.path.exists(os.path.join(folder, f"X_{span}.csv")):
        return None
    import pandas as pd

    frame = pd.read_csv(os.path.join(folder, f"X_{span}.csv"))
    C = pd.read_csv(os.path.join(folder, f"Y_{span}.csv")).to_numpy(dtype=float)
    A = pd.read_csv(os.path.join(folder, "A_node_edge_incidence.csv")).to_numpy(dtype=float)
    b = pd.read_csv(os.path.join(folder, "b_supply.csv")).to_numpy(dtype=float).ravel()
    return frame, C, A, b


def uber_features(frame):
    """The 197 numeric features: the table with its period one-hot encoded."""
    import pandas as pd

    return pd.get_dummies(frame, columns=["Period"], dtype=float).to_numpy(dtype=float)


def uber_data(root, n_rows):
    """The Uber Los Angeles network: X (n_rows, 197), C (n_rows, 93), A (45, 93), b (45,)."""
    data = uber_frames(root)
    if data is None:
        return None
    frame, C, A, b = data
    return uber_features(frame)[:n_rows], C[:n_rows], A, b, "Uber Movement LA"


def random_dag_data(n_rows, n_nodes=45, n_edges=90, p=200, seed=0):
    """A random DAG of the network's size and synthetic costs (when the Uber data are absent)."""
    rng = np.random.default_rng(seed)
    edges = {(k, k + 1) for k in range(n_nodes - 1)}
    while len(edges) < n_edges:
        a, b = sorted(rng.choice(n_nodes, size=2, replace=False))
        if b - a <= 6:
            edges.add((int(a), int(b)))
    edges = sorted(edges)
    A = np.zeros((n_nodes, n_edges))
    for e, (t, h) in enumerate(edges):
        A[t, e], A[h, e] = -1.0, 1.0
    b = np.zeros(n_nodes)
    b[0], b[-1] = -1.0, 1.0
    X = rng.normal(size=(n_rows, p))
    B = rng.binomial(1, 0.5, size=(n_edges, 5))
    C = ((X[:, :5] @ B.T / np.sqrt(5) + 3) ** 2 / 3.5 ** 2 + 1) * rng.uniform(
        0.5, 1.5, size=(n_rows, n_edges))
    return X, C, A, b, "random DAG"


def edges_of(A):
    """(n_nodes, edges): tail = row of -1, head = row of +1; a column with one
    entry gets its missing end at an extra node (the row left out)."""
    n = A.shape[0]
    edges = []
    for e in range(A.shape[1]):
        t = np.flatnonzero(A[:, e] < 0)
        h = np.flatnonzero(A[:, e] > 0)
        edges.append((int(t[0]) if t.size else n, int(h[0]) if h.size else n))
    return n + 1, edges


# --------------------------------------------------------------- helpers


def _row(name, ts, tc, target, extra=""):
    ratio = ts / tc
    ok = ratio <= target
    print(f"{name:<44} {ts:9.3f} {tc:9.3f} {ratio:8.2f} {'<= ' + str(target):>7} "
          f"{'PASS' if ok else 'FAIL'}  {extra}", flush=True)
    return ok


def _header():
    print(f"{'row':<44} {'spotree':>9} {'peer':>9} {'ratio':>8} {'target':>7}")


# ------------------------------------------------------------------ rows
def bench_icon_forest(args):
    data = icon_data(args.data, 650)
    if data is None:
        print("icon_forest: skipped (no ICON data)")
        return True
    X, C, weights = data
    ks = Knapsack(weights, 120)
    SPOForest(ks, **dict(FOREST, n_estimators=4)).fit(X[:100], C[:100])  # compile
    RandomForestRegressor(**dict(FOREST, n_estimators=4)).fit(X[:100], C[:100])
    ts, tc, est, _, _ = median_pair(
        args.repeat, lambda: SPOForest(ks, random_state=0, **FOREST).fit(X, C),
        lambda: RandomForestRegressor(random_state=0, **FOREST).fit(X, C))
    leaves = np.mean([t.get_n_leaves() for t in est.estimators_])
    return _row("ICON knapsack, SPOForest 100 trees, 650 days", ts, tc, 5,
                f"{leaves:.0f} leaves/tree")


def bench_icon_tree(args):
    data = icon_data(args.data, 650)
    if data is None:
        print("icon_tree: skipped (no ICON data)")
        return True
    X, C, weights = data
    ks = Knapsack(weights, 120)
    kw = dict(max_depth=6, min_samples_leaf=20)
    SPOTree(ks, max_depth=2, min_samples_leaf=20).fit(X[:100], C[:100])  # compile
    ts, tc, est, _, _ = median_pair(
        args.repeat,
        lambda: SPOTree(ks, **kw).fit(X[:550], C[:550]).prune(X[550:], C[550:]),
        lambda: DecisionTreeRegressor(**kw).fit(X[:550], C[:550]))
    return _row("ICON knapsack, pruned SPOTree depth 6, 550 d", ts, tc, 10,
                f"{est.get_n_leaves()} leaves after pruning")


def _network(args):
    data = uber_data(args.data, 1000)
    if data is None:
        data = random_dag_data(1000)
    return data


def bench_dag_forest(args):
    X, C, A, b, name = _network(args)
    n_nodes, edges = edges_of(A)
    source, target = int(np.flatnonzero(b < 0)[0]), int(np.flatnonzero(b > 0)[0])
    sp = ShortestPath.from_edges(n_nodes, edges, source, target)
    lp = LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1))
    lp_forest = dict(FOREST, n_estimators=args.lp_trees)
    SPOForest(sp, **dict(FOREST, n_estimators=4)).fit(X[:100], C[:100])  # compile
    SPOForest(lp, **dict(FOREST, n_estimators=2)).fit(X[:100], C[:100])
    RandomForestRegressor(**dict(FOREST, n_estimators=4)).fit(X[:100], C[:100])
    ts, tc, est, _, _ = median_pair(
        args.repeat, lambda: SPOForest(sp, random_state=0, **FOREST).fit(X, C),
        lambda: RandomForestRegressor(random_state=0, **FOREST).fit(X, C))
    shape = f"{X.shape[0]} x {X.shape[1]}, {A.shape[0]} nodes, {A.shape[1]} edges"
    ok = _row(f"{name} network, SPOForest from_edges", ts, tc, 3, shape)
    t_lp, est_lp = timed(lambda: SPOForest(lp, random_state=0, **lp_forest).fit(X, C))
    t_lp_100 = t_lp * FOREST["n_estimators"] / args.lp_trees
    same = ""
    if args.lp_trees == FOREST["n_estimators"]:
        # The same trees give the same predicted costs (decisions may differ on ties).
        agree = np.allclose(est.predict(X[:200]), est_lp.predict(X[:200]), rtol=1e-9)
        same = f"same predictions as from_edges: {agree}"
    note = (f"{args.lp_trees} trees, scaled to 100: " if args.lp_trees != 100 else "") + same
    ok &= _row(f"{name} network as LinearProgram (vs from_edges)", t_lp_100, ts, 1.2, note)
    return ok


def _fingerprint(model, X):
    P = model.predict(X[:100])
    return float(P.sum()), float((P * P).sum())


def _boost_cases(args):
    """SPOBoost's data: ICON (when present) and the network through from_edges."""
    cases = []
    icon = icon_data(args.data, 650)
    if icon is not None:
        X, C, weights = icon
        cases.append(("icon", "ICON knapsack, 650 days", Knapsack(weights, 120), X, C))
    X, C, A, b, name = _network(args)
    n_nodes, edges = edges_of(A)
    sp = ShortestPath.from_edges(n_nodes, edges, int(np.flatnonzero(b < 0)[0]),
                                 int(np.flatnonzero(b > 0)[0]))
    cases.append(("dag", f"{name} network, 1000 rows", sp, X, C))
    return cases


def bench_boost(args):
    ok = True
    for key, label, problem, X, C in _boost_cases(args):
        SPOBoost(problem, n_estimators=3, random_state=0).fit(X[:200], C[:200])  # compile
        RandomForestRegressor(**dict(FOREST, n_estimators=4)).fit(X[:100], C[:100])
        ts, tc, est, _, _ = median_pair(
            args.repeat, lambda: SPOBoost(problem, random_state=0).fit(X, C),
            lambda: RandomForestRegressor(random_state=0, **FOREST).fit(X, C))
        ratio = ts / tc
        fp = _fingerprint(est, X)
        before = BOOST_BEFORE.get(key)
        rounds = len(est.estimators_)
        if before is None:
            print(f"SPOBoost defaults, {label:<26} {ts:9.3f} {tc:9.3f} {ratio:8.2f} "
                  f"(no baseline recorded) rounds={rounds} fingerprint={fp!r}", flush=True)
            continue
        b_ratio, b_fp = before
        same = np.allclose(fp, b_fp, rtol=1e-9, atol=0.0)
        target = 0.7 * b_ratio
        # Only the time decides: the defaults changed since the baseline.
        row_ok = ratio <= target
        ok &= row_ok
        print(f"SPOBoost defaults, {label:<26} {ts:9.3f} {tc:9.3f} {ratio:8.2f} "
              f"{'<= %.2f' % target:>7} {'PASS' if row_ok else 'FAIL'}  before {b_ratio:.2f}; "
              f"same predictions: {same}; rounds={rounds}", flush=True)
    return ok


def bench_boost_same(args):
    ok = True
    for key, label, problem, X, C in _boost_cases(args):
        SPOBoost(problem, random_state=0, **dict(BOOST_SAME, n_estimators=3)).fit(
            X[:200], C[:200])  # compile
        RandomForestRegressor(**dict(FOREST, n_estimators=4)).fit(X[:100], C[:100])
        ts, tc, est, _, _ = median_pair(
            args.repeat, lambda: SPOBoost(problem, random_state=0, **BOOST_SAME).fit(X, C),
            lambda: RandomForestRegressor(random_state=0, **FOREST).fit(X, C))
        ratio = ts / tc
        fp = _fingerprint(est, X)
        before = BOOST_SAME_BEFORE.get(key)
        if before is None:
            print(f"SPOBoost same model, {label:<24} {ts:9.3f} {tc:9.3f} {ratio:8.2f} "
                  f"(no baseline recorded) fingerprint={fp!r}", flush=True)
            continue
        b_ratio, b_fp = before
        same = bool(np.allclose(fp, b_fp, rtol=1e-9, atol=0.0))
        target = 0.7 * b_ratio
        row_ok = ratio <= target and same
        ok &= row_ok
        print(f"SPOBoost same model, {label:<24} {ts:9.3f} {tc:9.3f} {ratio:8.2f} "
              f"{'<= %.2f' % target:>7} {'PASS' if row_ok else 'FAIL'}  before {b_ratio:.2f}; "
              f"same predictions: {same}", flush=True)
    return ok


def bench_sparse_lp(args):
    sys.path.insert(0, HERE)
    from _sparse_lp import write_sparse_lp

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "network.mps")
        data = write_sparse_lp(path)
        lp = LinearProgram.from_file(path)
    import scipy.sparse as sp
    from scipy.optimize import linprog

    A, rlo, rhi = data["A"], data["row_lower"], data["row_upper"]
    lo, hi = data["col_lower"], data["col_upper"]
    up, dn = np.isfinite(rhi), np.isfinite(rlo)
    n = 5000
    rng = np.random.default_rng(0)
    p, d = 5, lp.n_costs
    X = rng.normal(size=(n, p))
    B = rng.binomial(1, 0.5, size=(d, p))
    C = ((X @ B.T / np.sqrt(p) + 3) ** 2 / 3.5 ** 2 + 1) * rng.uniform(0.5, 1.5, size=(n, d))
    SPOTree(lp, max_depth=1, thresholds=9, min_samples_leaf=20).fit(X[:200], C[:200])
    cpu = time.process_time()
    t, est = timed(lambda: SPOTree(lp, max_depth=4, thresholds=99, min_samples_leaf=20)
                    .fit(X, C))
    cpu = time.process_time() - cpu
    # A yardstick of the machine's speed under its current load: scipy's
    # linprog (its own HiGHS wrapper, from scratch) on 50 of the cost vectors.
    ty, _ = timed(lambda: [linprog(c, A_ub=sp.vstack([A[up], -A[dn]]),
                                   b_ub=np.r_[rhi[up], -rlo[dn]],
                                   bounds=list(zip(lo, hi)), method="highs")
                           for c in C[:50]])
    ok = t <= 60.0
    print(f"{'sparse LP 500 x 200, n=5000, depth 4, 99 q':<44} {t:9.3f} {ty:9.3f} "
          f"{t / ty:8.2f} {'<= 60 s':>7} {'PASS' if ok else 'FAIL'}  fit CPU {cpu:.1f} s; "
          f"peer: 50 linprog solves; {est.n_oracle_calls_} oracle calls, "
          f"{est.get_n_leaves()} leaves", flush=True)
    return ok


_COLD = ("import time; t0 = time.perf_counter(); import numpy as np; "
         "from spotree import SPOTree; from spotree.problems import ShortestPath; "
         "from spotree.datasets import make_shortest_path; "
         "X, C = make_shortest_path(200, random_state=0); "
         "SPOTree(ShortestPath((4, 4)), max_depth=2).fit(X, C); "
         "print(time.perf_counter() - t0)")


_FLOOR = ("import time; t0 = time.perf_counter(); import numpy, sklearn.base, numba; "
          "print(time.perf_counter() - t0)")


def _fresh_process(code, env):
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return time.perf_counter() - t0, float(out.stdout.strip().splitlines()[-1])


def bench_cold(args):
    ok = True
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, SPOTREE_CACHE_DIR=cache)
        # A user's Python writes bytecode on the first run (pip at install).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for label, target in (("cold start (empty kernel cache)", 10.0),
                              ("warm start (cache filled)", 1.5)):
            wall, inner = _fresh_process(_COLD, env)
            row_ok = wall <= target
            ok &= row_ok
            peer = ratio = ""
            if target == 1.5:
                floor = float(np.median([_fresh_process(_FLOOR, env)[0] for _ in range(3)]))
                peer, ratio = f"{floor:9.3f}", f"{wall / floor:8.2f}"
            print(f"{label + ', depth-2 SPOTree 4x4, 200 rows':<44} {wall:9.3f} {peer:>9} "
                  f"{ratio:>8} {'<= %g s' % target:>7} {'PASS' if row_ok else 'FAIL'}  "
                  f"(in-process {inner:.2f} s"
                  + ("; peer: a fresh process importing numpy, sklearn.base and numba only)"
                     if peer else ")"), flush=True)
    return ok


ROWS = {"icon_forest": bench_icon_forest, "icon_tree": bench_icon_tree,
        "dag_forest": bench_dag_forest, "boost": bench_boost, "boost_same": bench_boost_same,
        "sparse_lp": bench_sparse_lp,
        "cold": bench_cold}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", default=",".join(ROWS),
                        help="comma-separated rows: " + ", ".join(ROWS))
    parser.add_argument("--data", default=DEFAULT_DATA, help="the realdata folder")
    parser.add_argument("--lp-trees", type=int, default=100,
                        help="trees of the LinearProgram forest (its time is scaled to 100)")
    args = parser.parse_args(argv)
    names = args.only.split(",")
    unknown = [n for n in names if n not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; choose among {list(ROWS)}")
    print(f"load: {os.getloadavg()[0]:.2f} (1-min average), {os.cpu_count()} cores")
    _header()
    ok = True
    for name in names:
        ok &= ROWS[name](args)
    print("\nall targets met" if ok else "\nSOME TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
