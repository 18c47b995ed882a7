"""SPOBoost against the field's baselines on PyEPO's benchmarks (issue 11).

Test normalized regret and fit time of SPOBoost, SPOForest (max_features tuned
on validation), SPOTree (pruned on validation), SPOPlusLinear, two-stage least
squares, two-stage random forest (CART forest, tuned the same way), gradient
boosting with loss "mse" and, where PyEPO is installed, PyEPO's own SPO+ linear
model (``nn.Linear``, Adam lr 0.01, batch 32, 20 epochs) on the same data: the
5x5 shortest path and a 32-item, 2-resource knapsack (capacity 20 each), PyEPO's
generators with noise half-width 0.5, 5 features, 1000 test rows.

Usage::

    python benchmarks/bench_pyepo.py --quick          # a small grid, minutes
    python benchmarks/bench_pyepo.py                  # the whole grid (long)
    python benchmarks/bench_pyepo.py --rows out.jsonl # keep (and resume from) every row

On a small shared machine, ``OMP_NUM_THREADS=1`` (and ``OPENBLAS_NUM_THREADS=1``,
``MKL_NUM_THREADS=1``) makes the many small oracle products much faster (the knapsack's
most of all) without changing any result; results/bench_pyepo_n1000.md says which rows
were run that way.

Targets (exit status 1 when one is missed; only checked where the grid has the
data): SPOBoost's mean test regret below the SPO+ linear model's (PyEPO's where
installed, else SPOPlusLinear trained to convergence) at every degree with
n_train 1000, on both problems; SPOBoost's mean fit time at n_train 1000 on the
shortest path at most 5 s; SPOPlusLinear's mean regret within 5% of PyEPO's.

For an experiment runner: :func:`run_pyepo_comparison` returns one dict per
(problem, degree, n_train, seed, method) with the regret and the fit time;
:func:`summarize` and :func:`check_targets` turn them into a table and the
target verdicts. Everything here uses spotree's public API (and PyEPO/torch
when present).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

import spotree
from spotree import (ShortestPath, SPOBoost, SPOForest, SPOPlusLinear, SPOTree,
                     tune_max_features)
from spotree.datasets import make_pyepo_knapsack, make_pyepo_shortest_path
from spotree.metrics import normalized_spo_loss
from spotree.problems import FiniteDecisions, LinearProgram

N_TEST = 1000
NOISE = 0.5
N_FEATURES = 5
CAPACITY = 20.0
FOREST_TREES = 50
METHODS = ("SPOBoost", "SPOForest", "SPOTree", "SPOPlusLinear", "LS", "RF", "GB-mse",
           "PyEPO SPO+")


# -------------------------------------------------------------- problems
def _knapsack_points(weights, capacities):
    """Every 0/1 vector that fits (depth-first, items in order)."""
    m = weights.shape[1]
    chosen, out = [], []

    def walk(j, used):
        if j == m:
            out.append(list(chosen))
            return
        walk(j + 1, used)
        nu = used + weights[:, j]
        if (nu <= capacities + 1e-9).all():
            chosen.append(j)
            walk(j + 1, nu)
            chosen.pop()

    walk(0, np.zeros(weights.shape[0]))
    V = np.zeros((len(out), m))
    for k, items in enumerate(out):
        V[k, items] = 1.0
    return V


def knapsack_problem(weights, capacities):
    """The 0/1 multi-dimensional knapsack ``max c^T w, weights @ w <= capacities``.

    Until spotree has its ``Knapsack`` problem class this lists every feasible
    0/1 point (a few thousand for PyEPO's instances) as a
    :class:`FiniteDecisions`: exact for any costs, negative ones included, and
    much faster than a MILP per row. Swap in one line::

        return spotree.problems.Knapsack(weights, capacities)
    """
    return FiniteDecisions(_knapsack_points(weights, capacities), sense="max")


def _check_knapsack(problem, weights, capacities, rng):
    """The enumeration agrees with HiGHS's MILP on random costs (signs mixed)."""
    milp = LinearProgram(A_ub=weights, b_ub=capacities, bounds=(0, 1),
                         integrality=np.ones(weights.shape[1]), sense="max")
    C = rng.normal(size=(10, weights.shape[1])) + 0.5
    z_enum = problem.solve(C)[1]
    z_milp = milp.solve(C)[1]
    if not np.allclose(z_enum, z_milp, atol=1e-7):
        raise AssertionError("knapsack enumeration disagrees with the MILP")


def make_data(problem_name, degree, n_train, seed, n_test=N_TEST):
    """PyEPO-style data: one draw of n_train + n_test rows, split; and the problem."""
    n = n_train + n_test
    if problem_name == "shortest_path":
        X, C = make_pyepo_shortest_path(n, n_features=N_FEATURES, grid=(5, 5),
                                        degree=degree, noise=NOISE, random_state=seed)
        problem = ShortestPath((5, 5))
    elif problem_name == "knapsack":
        X, C, weights = make_pyepo_knapsack(n, n_items=32, n_resources=2,
                                            n_features=N_FEATURES, degree=degree,
                                            noise=NOISE, random_state=seed)
        problem = _knapsack_cache(weights)
    else:
        raise ValueError(f"unknown problem {problem_name!r}")
    return problem, X[:n_train], C[:n_train], X[n_train:], C[n_train:]


_KNAPSACKS = {}


def _knapsack_cache(weights):
    key = weights.tobytes()
    if key not in _KNAPSACKS:
        caps = np.full(weights.shape[0], CAPACITY)
        problem = knapsack_problem(weights, caps)
        _check_knapsack(problem, weights, caps, np.random.default_rng(0))
        _KNAPSACKS[key] = problem
    return _KNAPSACKS[key]


# --------------------------------------------------------------- methods
def _split(X, C, seed, frac=0.2):
    """A 20% validation part for the methods that tune or prune on one."""
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    n_val = max(1, int(round(frac * X.shape[0])))
    va, tr = perm[:n_val], perm[n_val:]
    return X[tr], C[tr], X[va], C[va]


def _fit_forest(problem, X, C, seed, criterion):
    Xtr, Ctr, Xva, Cva = _split(X, C, seed)
    template = SPOForest(problem, n_estimators=FOREST_TREES, criterion=criterion,
                         min_samples_leaf=5, random_state=seed)
    best, _ = tune_max_features(template, Xtr, Ctr, Xva, Cva, candidates=(2, 3, 4, 5))
    return best


def _fit_tree(problem, X, C, seed):
    Xtr, Ctr, Xva, Cva = _split(X, C, seed)
    tree = SPOTree(problem, min_samples_leaf=5, random_state=seed).fit(Xtr, Ctr)
    return tree.prune(Xva, Cva)


class _LeastSquares:
    """Two-stage least squares: one linear regression per cost."""

    def fit(self, X, C):
        A = np.column_stack([X, np.ones(X.shape[0])])
        self.coef_ = np.linalg.lstsq(A, C, rcond=None)[0]
        return self

    def predict(self, X):
        return np.column_stack([X, np.ones(X.shape[0])]) @ self.coef_


def _pyepo_model_class():
    """A PyEPO optimization model that solves with a spotree problem (exact, fast)."""
    from pyepo import EPO
    from pyepo.model.opt import optModel

    class SpotreeOptModel(optModel):
        # PyEPO reads an attribute named "problem" as its own modelling DSL.
        def __init__(self, problem):
            self.spotree_problem = problem
            self.modelSense = EPO.MINIMIZE if problem.sense == "min" else EPO.MAXIMIZE
            # PyEPO solves one row at a time: a product with the vertex list
            # is much cheaper per call than the batched solver.
            V = problem.vertices()
            self._V = None if V is None else (problem.sign * V)
            super().__init__()

        def get_config(self):
            return {"problem": self.spotree_problem}

        def _getModel(self):
            return None, list(range(self.spotree_problem.n_costs))

        def setObj(self, c):
            self._c = np.asarray(c, dtype=np.float64).reshape(1, -1)

        def solve(self):
            if self._V is not None:
                k = int(np.argmin(self._V @ self._c[0]))
                w = self.spotree_problem.vertices()[k]
                return w.copy(), float(w @ self._c[0])
            W, z = self.spotree_problem.solve(self._c)
            return W[0], float(z[0])

    return SpotreeOptModel


class _PyEPOSPOPlus:
    """PyEPO's SPO+ with torch.nn.Linear: Adam lr 0.01, batch 32, 20 epochs."""

    def __init__(self, problem, seed, epochs=20):
        self.problem, self.seed, self.epochs = problem, seed, epochs

    def fit(self, X, C):
        import pyepo
        import torch
        from torch.utils.data import DataLoader

        torch.manual_seed(self.seed)
        optmodel = _pyepo_model_class()(self.problem)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = pyepo.data.dataset.optDataset(optmodel, X.astype(np.float32),
                                                 C.astype(np.float32))
        loader = DataLoader(data, batch_size=32, shuffle=True)
        self.lin = torch.nn.Linear(X.shape[1], C.shape[1])
        opt = torch.optim.Adam(self.lin.parameters(), lr=0.01)
        spop = pyepo.func.SPOPlus(optmodel, processes=1)
        for _ in range(self.epochs):
            for x, c, w, z in loader:
                loss = spop(self.lin(x), c, w, z)
                opt.zero_grad()
                loss.backward()
                opt.step()
        return self

    def predict(self, X):
        import torch

        with torch.no_grad():
            return self.lin(torch.tensor(X, dtype=torch.float32)).numpy().astype(np.float64)


def pyepo_available():
    try:
        import pyepo  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def fit_method(name, problem, X, C, seed, boost_params=None):
    """Fit one method; returns an object with ``predict(X) -> costs``."""
    if name == "SPOBoost":
        return SPOBoost(problem, random_state=seed, **(boost_params or {})).fit(X, C)
    if name.startswith("SPOBoost-"):  # e.g. "SPOBoost-auto": another start
        return SPOBoost(problem, init=name.split("-", 1)[1], random_state=seed,
                        **(boost_params or {})).fit(X, C)
    if name == "GB-mse":
        return SPOBoost(problem, loss="mse", random_state=seed).fit(X, C)
    if name == "SPOForest":
        return _fit_forest(problem, X, C, seed, "spo")
    if name == "RF":
        return _fit_forest(problem, X, C, seed, "mse")
    if name == "SPOTree":
        return _fit_tree(problem, X, C, seed)
    if name == "SPOPlusLinear":
        return SPOPlusLinear(problem, random_state=seed).fit(X, C)
    if name == "SPOPlusLinear-conv":
        # "Trained to convergence": many more epochs, smaller steps at the end.
        model = SPOPlusLinear(problem, max_iter=100, random_state=seed).fit(X, C)
        return model.set_params(warm_start=True, learning_rate=0.001, max_iter=50).fit(X, C)
    if name == "LS":
        return _LeastSquares().fit(X, C)
    if name == "PyEPO SPO+":
        return _PyEPOSPOPlus(problem, seed).fit(X, C)
    raise ValueError(f"unknown method {name!r}")


def run_pyepo_comparison(problems=("shortest_path", "knapsack"), degrees=(1, 2, 4, 6),
                         n_trains=(100, 1000, 5000), seeds=range(5), methods=None,
                         n_test=N_TEST, rows_path=None, progress=print, boost_params=None):
    """Regret and fit time of every method on every (problem, degree, n_train, seed).

    Parameters
    ----------
    problems, degrees, n_trains, seeds : sequences
    methods : sequence of str or None
        Default: all of :data:`METHODS` (PyEPO's only where installed).
    n_test : int
    rows_path : str or None
        A JSON-lines file: rows already there are reused (resume), new rows
        appended as they are computed.
    progress : callable or None
        Called with one line of text per fitted model.
    boost_params : dict or None
        Extra SPOBoost parameters.

    Returns
    -------
    rows : list of dict
        Keys ``problem, degree, n_train, seed, method, regret, fit_time``.
    """
    if methods is None:
        methods = [m for m in METHODS if m != "PyEPO SPO+" or pyepo_available()]
    done = {}
    if rows_path and os.path.exists(rows_path):
        with open(rows_path) as fh:
            for line in fh:
                r = json.loads(line)
                done[(r["problem"], r["degree"], r["n_train"], r["seed"], r["method"])] = r
    rows = []
    for problem_name in problems:
        for n_train in n_trains:
            for degree in degrees:
                for seed in seeds:
                    data = None
                    for method in methods:
                        key = (problem_name, degree, n_train, seed, method)
                        if key in done:
                            rows.append(done[key])
                            continue
                        if data is None:
                            data = make_data(problem_name, degree, n_train, seed, n_test)
                        problem, X, C, Xt, Ct = data
                        t0 = time.perf_counter()
                        model = fit_method(method, problem, X, C, seed, boost_params)
                        fit_time = time.perf_counter() - t0
                        regret = normalized_spo_loss(Ct, model.predict(Xt), problem=problem)
                        row = {"problem": problem_name, "degree": degree, "n_train": n_train,
                               "seed": seed, "method": method, "regret": float(regret),
                               "fit_time": float(fit_time)}
                        if method.startswith("SPOBoost") or method == "GB-mse":
                            row["rounds"] = int(model.n_iter_)
                            row["kept"] = int(model.best_iteration_)
                        rows.append(row)
                        if rows_path:
                            with open(rows_path, "a") as fh:
                                fh.write(json.dumps(row) + "\n")
                        if progress:
                            progress(f"{problem_name:>13} n={n_train:<5} deg={degree} "
                                     f"seed={seed} {method:<14} regret={regret:.4f} "
                                     f"fit={fit_time:6.2f}s")
    return rows


# --------------------------------------------------------------- reports
def summarize(rows):
    """Mean and standard deviation of regret and fit time per cell and method."""
    cells = {}
    for r in rows:
        key = (r["problem"], r["n_train"], r["degree"], r["method"])
        cells.setdefault(key, []).append(r)
    out = []
    for (problem, n_train, degree, method), rs in sorted(cells.items()):
        reg = np.array([r["regret"] for r in rs])
        ft = np.array([r["fit_time"] for r in rs])
        out.append({"problem": problem, "n_train": n_train, "degree": degree,
                    "method": method, "n_seeds": len(rs), "regret": float(reg.mean()),
                    "regret_std": float(reg.std(ddof=1)) if len(rs) > 1 else 0.0,
                    "fit_time": float(ft.mean())})
    return out


def format_table(summary, methods=None):
    """One line per (problem, n_train, method); mean regret (std) per degree; fit time."""
    methods = methods or sorted({s["method"] for s in summary}, key=_method_order)
    degrees = sorted({s["degree"] for s in summary})
    by = {(s["problem"], s["n_train"], s["degree"], s["method"]): s for s in summary}
    lines = []
    head = ("| problem | n_train | method | "
            + " | ".join(f"deg {d}" for d in degrees) + " | mean fit (s) |")
    lines += [head, "|" + "---|" * (4 + len(degrees))]
    for problem in sorted({s["problem"] for s in summary}, reverse=True):
        for n_train in sorted({s["n_train"] for s in summary}):
            for m in methods:
                cells = [by.get((problem, n_train, d, m)) for d in degrees]
                if not any(cells):
                    continue
                vals = [f"{c['regret']:.4f} ({c['regret_std']:.4f})" if c else "-"
                        for c in cells]
                times = [c["fit_time"] for c in cells if c]
                lines.append(f"| {problem} | {n_train} | {m} | " + " | ".join(vals)
                             + f" | {np.mean(times):.2f} |")
    return "\n".join(lines)


def _method_order(m):
    order = list(METHODS) + ["SPOPlusLinear-conv", "SPOBoost-auto", "SPOBoost-linear"]
    return order.index(m) if m in order else len(order)


def check_targets(summary):
    """The issue's targets, each as (name, passed or None when not measured, detail)."""
    by = {(s["problem"], s["n_train"], s["degree"], s["method"]): s for s in summary}
    out = []
    have_pyepo = any(s["method"] == "PyEPO SPO+" for s in summary)
    ref = "PyEPO SPO+" if have_pyepo else "SPOPlusLinear-conv"
    for problem in ("shortest_path", "knapsack"):
        degs = sorted({s["degree"] for s in summary if s["problem"] == problem
                       and s["n_train"] == 1000})
        for d in degs:
            b = by.get((problem, 1000, d, "SPOBoost"))
            r = by.get((problem, 1000, d, ref))
            if b and r:
                out.append((f"SPOBoost < {ref} regret, {problem}, n=1000, deg {d}",
                            b["regret"] < r["regret"],
                            f"{b['regret']:.4f} vs {r['regret']:.4f}"))
    times = [s["fit_time"] for s in summary if s["problem"] == "shortest_path"
             and s["n_train"] == 1000 and s["method"] == "SPOBoost"]
    if times:
        out.append(("SPOBoost fit time, shortest path, n=1000 <= 5 s", max(times) <= 5.0,
                    f"mean per degree up to {max(times):.2f} s"))
    if have_pyepo:
        for s in summary:
            if s["method"] != "SPOPlusLinear":
                continue
            p = by.get((s["problem"], s["n_train"], s["degree"], "PyEPO SPO+"))
            if p and s["n_train"] == 1000:
                out.append((f"SPOPlusLinear within 5% of PyEPO, {s['problem']}, n=1000, "
                            f"deg {s['degree']}", s["regret"] <= 1.05 * p["regret"],
                            f"{s['regret']:.4f} vs {p['regret']:.4f}"))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a small grid: degrees 1 and 6; shortest path at n_train 1000 "
                             "with 2 seeds, knapsack at n_train 200 with 1 seed")
    parser.add_argument("--problems", nargs="+", default=["shortest_path", "knapsack"])
    parser.add_argument("--degrees", nargs="+", type=int, default=[1, 2, 4, 6])
    parser.add_argument("--n-train", nargs="+", type=int, default=[100, 1000, 5000])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--methods", nargs="+", default=None)
    parser.add_argument("--rows", default=None, help="JSON-lines file to resume and append")
    parser.add_argument("--init-study", action="store_true",
                        help="compare SPOBoost's init options instead (shortest path, "
                             "n_train 1000)")
    args = parser.parse_args(argv)
    if args.quick:
        args.degrees = [1, 6]
    print(f"spotree {spotree.__version__}; PyEPO installed: {pyepo_available()}; "
          f"{os.cpu_count()} CPUs visible")
    if args.init_study:
        rows = []
        for init in ("mean", "linear", "spo+", "auto"):
            part = run_pyepo_comparison(["shortest_path"], args.degrees, [1000],
                                        range(args.seeds), ["SPOBoost"],
                                        boost_params={"init": init}, progress=None)
            for r in part:
                r["method"] = f"SPOBoost init={init}"
            rows += part
        print(format_table(summarize(rows)))
        return 0
    methods = args.methods
    if methods is None:
        methods = [m for m in METHODS if m != "PyEPO SPO+" or pyepo_available()]
        if not pyepo_available():
            methods.append("SPOPlusLinear-conv")
    if args.quick:
        # The knapsack oracle is the slow part: a smaller knapsack grid.
        plan = [(p, [1000] if p == "shortest_path" else [200],
                 2 if p == "shortest_path" else 1) for p in args.problems]
    else:
        plan = [(p, args.n_train, args.seeds) for p in args.problems]
    rows = []
    for problem_name, n_trains, n_seeds in plan:
        rows += run_pyepo_comparison([problem_name], args.degrees, n_trains, range(n_seeds),
                                     methods, rows_path=args.rows)
    summary = summarize(rows)
    print()
    print(format_table(summary))
    print()
    failed = 0
    for name, ok, detail in check_targets(summary):
        status = "PASS" if ok else "MISS"
        failed += not ok
        print(f"{status}  {name}: {detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
