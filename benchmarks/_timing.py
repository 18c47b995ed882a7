"""Timing helpers shared by the benchmark scripts (spotree against a peer in one process)."""

from __future__ import annotations

import time

import numpy as np


def timed(fn):
    """``(seconds, result)`` of one call of ``fn``."""
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def median_pair(repeat, ours, theirs):
    """Alternate ``ours`` and ``theirs`` ``repeat`` times (so load drifts hit both alike).

    Returns the two median times, the last result of ``ours`` and both lists of times.
    """
    ts, tc, out = [], [], None
    for _ in range(repeat):
        t, out = timed(ours)
        ts.append(t)
        tc.append(timed(theirs)[0])
    return float(np.median(ts)), float(np.median(tc)), out, ts, tc
