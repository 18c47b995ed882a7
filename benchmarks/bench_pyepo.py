"""SPOBoost against the field's baselines on PyEPO's benchmarks (issue 11).

Test normalized regret and fit time of SPOBoost, SPOForest (max_features tuned
on validation), SPOTree (pruned on validation), SPOPlusLinear, two-stage least
squares, two-stage random forest (CART forest, tuned the same way), gradient
boosting with loss "mse" and, where PyEPO and torch are installed, PyEPO's own
SPO+ linear model (``nn.Linear``, Adam lr 0.01, batch 32, 20 epochs) on the
same data: the 5x5 shortest path and a 32-item, 2-resource knapsack (capacity
20 each), PyEPO's generators with noise half-width 0.5, 5 features, 1000 test
rows.

The experiment itself lives in the library (``spotree reproduce pyepo``, see
:mod:`spotree.experiments._pyepo`): this script runs its runs one by one,
prints its tables and checks the issue's targets on them.

Usage::

    python benchmarks/bench_pyepo.py --quick          # a small grid, minutes
    python benchmarks/bench_pyepo.py                  # the whole grid (long)
    python benchmarks/bench_pyepo.py --rows out.jsonl # keep (and resume from) every row

Rows in ``--rows`` are keyed by the run's settings and the library's code
fingerprint (as ``spotree reproduce`` caches them), so rows of other code are
recomputed, not mixed in.

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
:func:`summarize` and :func:`check_targets` turn them into cells and the
target verdicts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import spotree
from spotree.experiments import PYEPO_METHODS, execute_run, make_grid, pyepo_available
from spotree.experiments._configs import run_key
from spotree.experiments._tables import pyepo_cells, pyepo_tables

N_TEST = 1000
METHODS = tuple(m for m in PYEPO_METHODS if m != "SPOPlusLinear-conv")


def _problem(name):
    """The library's problem name ("shortest-path"); "shortest_path" is accepted."""
    return name.replace("_", "-")


def _method(label):
    """``(library method, parameter overrides)`` of a label: "SPOBoost-<init>" is
    SPOBoost with that ``init``."""
    if label.startswith("SPOBoost-"):
        return "SPOBoost", {"init": label.split("-", 1)[1]}
    return label, {}


def _runs(problems, degrees, n_trains, seeds, methods, n_test, boost_params):
    runs = []
    for label in methods:
        name, extra = _method(label)
        for run in make_grid("pyepo", problems=[_problem(p) for p in problems],
                             degrees=list(degrees), n_train=list(n_trains), seeds=list(seeds),
                             methods=[name]):
            if PYEPO_METHODS[name].model == "boost" and (extra or boost_params):
                run["params"] = dict(run["params"], **extra, **(boost_params or {}))
            run["n_test"] = n_test
            runs.append((label, run))
    return runs


def run_pyepo_comparison(problems=("shortest-path", "knapsack"), degrees=(1, 2, 4, 6),
                         n_trains=(100, 1000, 5000), seeds=range(5), methods=None,
                         n_test=N_TEST, rows_path=None, progress=print, boost_params=None):
    """Regret and fit time of every method on every (problem, degree, n_train, seed).

    Parameters
    ----------
    problems, degrees, n_trains, seeds : sequences
    methods : sequence of str or None
        Default: all of :data:`METHODS` (PyEPO's only where installed);
        "SPOBoost-<init>" is SPOBoost with that ``init``.
    n_test : int
    rows_path : str or None
        A JSON-lines file: rows of the same runs already there are reused
        (resume), new rows appended as they are computed.
    progress : callable or None
        Called with one line of text per fitted model.
    boost_params : dict or None
        Extra parameters of the boosting methods.

    Returns
    -------
    rows : list of dict
        The run's settings and ``method, regret, fit_time`` (``regret`` is the
        test ``normalized_spo_loss``).
    """
    if methods is None:
        methods = [m for m in METHODS if m != "PyEPO SPO+" or pyepo_available()]
    done = {}
    if rows_path and os.path.exists(rows_path):
        with open(rows_path) as fh:
            for line in fh:
                r = json.loads(line)
                if "key" in r:
                    done[r["key"]] = r
    rows = []
    for label, run in _runs(problems, degrees, n_trains, seeds, methods, n_test, boost_params):
        key = run_key(dict(run, label=label))
        if key in done:
            rows.append(done[key])
            continue
        rec = execute_run(run)  # the method's first fit of this process warms up first
        if "error" in rec:
            raise RuntimeError(f"{label} {run['problem']} n={run['n_train']} "
                               f"deg={run['degree']} seed={run['seed']}: {rec['error']}")
        row = dict(rec["run"], **rec["row"], method=label,
                   regret=rec["row"]["normalized_spo_loss"], key=key)
        rows.append(row)
        if rows_path:
            with open(rows_path, "a") as fh:
                fh.write(json.dumps(row) + "\n")
        if progress:
            progress(f"{run['problem']:>13} n={run['n_train']:<5} deg={run['degree']} "
                     f"seed={run['seed']} {label:<14} regret={row['regret']:.4f} "
                     f"fit={row['fit_time']:6.2f}s")
    return rows


# --------------------------------------------------------------- reports
def summarize(rows):
    """Mean and standard deviation of regret and mean fit time per cell and method
    (:func:`spotree.experiments._tables.pyepo_cells`)."""
    return pyepo_cells(rows)


def format_table(rows):
    """The library's tables: one per problem and n_train, mean regret (std) per degree."""
    return "\n".join(pyepo_tables(rows)).rstrip()


def check_targets(summary):
    """The issue's targets, each as (name, passed, detail)."""
    by = {(s["problem"], s["n_train"], s["degree"], s["method"]): s for s in summary}
    out = []
    have_pyepo = any(s["method"] == "PyEPO SPO+" for s in summary)
    ref = "PyEPO SPO+" if have_pyepo else "SPOPlusLinear-conv"
    for problem in ("shortest-path", "knapsack"):
        degs = sorted({s["degree"] for s in summary if s["problem"] == problem
                       and s["n_train"] == 1000})
        for d in degs:
            b = by.get((problem, 1000, d, "SPOBoost"))
            r = by.get((problem, 1000, d, ref))
            if b and r:
                out.append((f"SPOBoost < {ref} regret, {problem}, n=1000, deg {d}",
                            b["regret"] < r["regret"],
                            f"{b['regret']:.4f} vs {r['regret']:.4f}"))
    times = [s["fit_time"] for s in summary if s["problem"] == "shortest-path"
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
    parser.add_argument("--problems", nargs="+", default=["shortest-path", "knapsack"],
                        type=_problem, choices=["shortest-path", "knapsack"])
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
            part = run_pyepo_comparison(["shortest-path"], args.degrees, [1000],
                                        range(args.seeds), ["SPOBoost"],
                                        boost_params={"init": init}, progress=None)
            for r in part:
                r["method"] = f"SPOBoost init={init}"
            rows += part
        print(format_table(rows))
        return 0
    methods = args.methods
    if methods is None:
        methods = [m for m in METHODS if m != "PyEPO SPO+" or pyepo_available()]
        if not pyepo_available():
            methods.append("SPOPlusLinear-conv")
    if args.quick:
        # The knapsack oracle is the slow part: a smaller knapsack grid.
        plan = [(p, [1000] if p == "shortest-path" else [200],
                 2 if p == "shortest-path" else 1) for p in args.problems]
    else:
        plan = [(p, args.n_train, args.seeds) for p in args.problems]
    rows = []
    for problem_name, n_trains, n_seeds in plan:
        rows += run_pyepo_comparison([problem_name], args.degrees, n_trains, range(n_seeds),
                                     methods, rows_path=args.rows)
    summary = summarize(rows)
    print()
    print(format_table(rows))
    print()
    failed = 0
    for name, ok, detail in check_targets(summary):
        status = "PASS" if ok else "MISS"
        failed += not ok
        print(f"{status}  {name}: {detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
