"""Where the time of ``spotree reproduce --scheduler`` goes, against ``--jobs N`` (issue 15).

Runs one experiment's grid (``shortest-path --quick`` by default) through both
parallel paths of :func:`spotree.experiments.run_experiment`, alternating them
``--reps`` times on fresh workers kept for the whole script: joblib's process pool
(``--jobs N``) and a dask.distributed cluster of N one-thread worker processes
(``--scheduler``; also one N-thread worker with ``--threads``). Each task reports
its wall time and the CPU time of its own thread, so the script separates

- the runs' own work (sum of task CPU seconds: the same code in both paths),
- what the machine's load and sharing took (task wall minus task CPU),
- and the time no task ran on a worker (workers x wall minus task wall):
  start-up, imports, kernel loading, scheduling and the tail of the grid.

A loaded machine moves wall times by 2x between repetitions, so compare the CPU
and idle columns, and the medians of wall over several repetitions. Target (exit
status 1 on a miss): the median wall time of the dask path at most 1.05 x that of
``--jobs N``. Report the machine and its load (printed) with the numbers.

Usage::

    python benchmarks/bench_scheduler.py --reps 3
    python benchmarks/bench_scheduler.py --experiment pyepo --reps 2
    python benchmarks/bench_scheduler.py --joblib-default   # also the pre-issue-15 setting
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def timed_run(run, data=None):
    """The runner's parallel task, with its wall and thread CPU seconds."""
    from spotree.experiments._runner import _execute_alone

    c0, w0 = time.thread_time(), time.perf_counter()
    rec = _execute_alone(run, data)
    rec["task_cpu"], rec["task_wall"] = time.thread_time() - c0, time.perf_counter() - w0
    return rec


def one_pass(runs, workers, address, pre_dispatch=None):
    """Wall seconds and the tasks' records of one pass over ``runs``."""
    from joblib import Parallel, delayed, parallel_config

    from spotree.experiments._runner import SCHEDULER_PRE_DISPATCH

    t0 = time.perf_counter()
    tasks = (delayed(timed_run)(r) for r in runs)
    if address is None:
        recs = list(Parallel(n_jobs=workers, return_as="generator_unordered")(tasks))
    else:
        from dask.distributed import Client

        # As run_experiment does with --scheduler.
        with Client(address, timeout="20s"), parallel_config(backend="dask"):
            recs = list(Parallel(n_jobs=-1, return_as="generator_unordered",
                                 pre_dispatch=pre_dispatch or SCHEDULER_PRE_DISPATCH)(tasks))
    return time.perf_counter() - t0, recs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--experiment", default="shortest-path")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", action="store_true",
                        help="also one dask worker with --workers threads")
    parser.add_argument("--joblib-default", action="store_true",
                        help="also the dask path with joblib's default pre_dispatch (two "
                             "batches per worker), which the runner used before issue 15")
    args = parser.parse_args(argv)
    from dask.distributed import LocalCluster

    from spotree.experiments import make_grid

    runs = make_grid(args.experiment, quick=True)
    print(f"{len(runs)} runs of {args.experiment} --quick; {os.cpu_count()} CPUs; load "
          f"{os.getloadavg()[0]:.1f}")
    t0 = time.perf_counter()
    clusters = {"dask": LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                     processes=True, dashboard_address=None)}
    print(f"dask cluster of {args.workers} processes started in "
          f"{time.perf_counter() - t0:.1f} s (not counted below)")
    if args.threads:
        clusters["dask-threads"] = LocalCluster(n_workers=1, threads_per_worker=args.workers,
                                                processes=True, dashboard_address=None)
    modes = [("jobs", None)] + [(m, c.scheduler_address) for m, c in clusters.items()]
    if args.joblib_default:
        modes.append(("dask-2*n_jobs", clusters["dask"].scheduler_address))
    walls = {m: [] for m, _ in modes}
    print("pass  mode          wall s   task CPU s   load+sharing s   idle s")
    try:
        for i in range(args.reps):
            for mode, address in modes[i % len(modes):] + modes[:i % len(modes)]:
                wall, recs = one_pass(runs, args.workers, address,
                                      "2*n_jobs" if mode == "dask-2*n_jobs" else None)
                errors = [r["error"] for r in recs if "error" in r]
                if errors:
                    raise SystemExit(f"{mode}: {len(errors)} runs failed: {errors[0]}")
                cpu = sum(r["task_cpu"] for r in recs)
                task_wall = sum(r["task_wall"] for r in recs)
                walls[mode].append(wall)
                print(f"{i:4d}  {mode:13s}{wall:7.1f}   {cpu:10.1f}   {task_wall - cpu:14.1f}"
                      f"   {args.workers * wall - task_wall:6.1f}", flush=True)
    finally:
        for c in clusters.values():
            c.close()
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    ratio = statistics.median(walls["dask"]) / statistics.median(walls["jobs"])
    ok = ratio <= 1.05
    print(f"{'PASS' if ok else 'MISS'}  median wall, scheduler / --jobs {args.workers}: "
          f"{ratio:.2f} (target <= 1.05)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
