"""Compiled kernels of the exact depth-limited search (:mod:`spotree.tree._optimal_search`).

The best tree of depth at most 2 on a sample subset with a vertex list
(:func:`depth2_prepare`, :func:`depth2_depth1`, :func:`depth2_root_start`,
:func:`depth2_pair`, :func:`depth2_root_finish`), and the threshold helper
:func:`midpoints`. Separate from the greedy growth's kernels so that a fit
compiles only the kernels it runs.
"""

from __future__ import annotations

import numpy as np

from .._numba import jit
from ._kernels import midpoint


@jit
def midpoints(lo, hi):
    """:func:`midpoint` of every pair ``(lo[k], hi[k])``."""
    out = np.empty(lo.shape[0])
    for k in range(lo.shape[0]):
        out[k] = midpoint(lo[k], hi[k])
    return out


# ----------------------------------------------- exact search: depth <= 2
# The best tree of depth at most 2 on a sample subset, with a vertex list:
# leaf costs are min_k of summed rows of G (already weighted and signed), and
# every leaf must hold min_leaf of ``cnt``. The work is cut into calls that
# each take a bounded time (one root feature against one child feature and a
# range of root cuts), so that the Python driver stays responsive.
@jit
def _min_row(a, K):
    m = a[0]
    for k in range(1, K):
        if a[k] < m:
            m = a[k]
    return m


@jit
def _min_diff(a, b, K):
    m = a[0] - b[0]
    for k in range(1, K):
        v = a[k] - b[k]
        if v < m:
            m = v
    return m


@jit
def depth2_prepare(idx, B, n_bins, G, cnt):
    """Per-feature bin compression and per-bin sums of a subset.

    Returns ``CB`` (compressed bin of every subset row and feature), ``occ``
    (original bin of every compressed bin), ``nc`` (bins per feature), ``H``
    and ``HW`` (per-bin sums of G and of cnt), ``tot`` (sum of G) and ``W``.
    """
    n_s = idx.shape[0]
    p = B.shape[1]
    K = G.shape[1]
    tot = np.zeros(K)
    W = 0.0
    for a in range(n_s):
        i = idx[a]
        W += cnt[i]
        for k in range(K):
            tot[k] += G[i, k]
    max_bins = 1
    for j in range(p):
        if n_bins[j] > max_bins:
            max_bins = n_bins[j]
    maxc = max(min(max_bins, n_s), 1)
    CB = np.empty((n_s, p), dtype=np.int64)
    occ = np.zeros((p, maxc), dtype=np.int64)
    nc = np.zeros(p, dtype=np.int64)
    cmap = np.empty(max_bins, dtype=np.int64)
    seen = np.zeros(max_bins, dtype=np.bool_)
    H = np.zeros((p, maxc, K))
    HW = np.zeros((p, maxc))
    for j in range(p):
        for a in range(n_s):
            seen[B[idx[a], j]] = True
        c = 0
        for b in range(n_bins[j]):
            if seen[b]:
                cmap[b] = c
                occ[j, c] = b
                c += 1
                seen[b] = False
        nc[j] = c
        for a in range(n_s):
            i = idx[a]
            cb = cmap[B[i, j]]
            CB[a, j] = cb
            HW[j, cb] += cnt[i]
            for k in range(K):
                H[j, cb, k] += G[i, k]
    return CB, occ, nc, H, HW, tot, W


@jit
def _child_split(HL, HLW, Hj, HWj, right, P, w_child, m2, min_leaf, penalty, tol, best, acc):
    """Best cut by one feature of a set of rows, from per-bin sums; ``right`` takes a complement.

    The rows are those summed per bin in ``HL``/``HLW`` (G and count) or,
    with ``right``, the others of ``Hj``/``HWj`` (per-bin sums of all rows:
    the right child of a root cut). ``P`` is their G sum and ``w_child``
    their count. Returns ``(cost, bin)`` of the last cut found below
    ``best - tol`` (bin -1: none); ``acc`` is scratch of length K.
    """
    K = P.shape[0]
    acc[:] = 0.0
    wl = 0.0
    arg = -1
    for c2 in range(m2 - 1):
        wl += HWj[c2] - HLW[c2] if right else HLW[c2]
        for k in range(K):
            acc[k] += Hj[c2, k] - HL[c2, k] if right else HL[c2, k]
        if wl < min_leaf:
            continue
        if w_child - wl < min_leaf:
            break
        cost = _min_row(acc, K) + _min_diff(P, acc, K) + penalty
        if cost < best - tol:
            best = cost
            arg = c2
    return best, arg


@jit
def depth2_depth1(occ, nc, H, HW, tot, W, min_leaf, penalty, tol, out):
    """Best tree of depth <= 1; writes the split to ``out[0:2]`` (-1: a leaf)."""
    p = H.shape[0]
    K = H.shape[2]
    best = _min_row(tot, K)
    out[:] = -1
    if W < 2.0 * min_leaf:
        return best
    pl = np.empty(K)
    for j in range(p):
        cost, c = _child_split(H[j], HW[j], H[j], HW[j], False, tot, W, nc[j], min_leaf,
                               penalty, tol, best, pl)
        if c >= 0:
            best = cost
            out[:] = -1
            out[0] = j
            out[1] = occ[j, c]
    return best


@jit
def depth2_root_start(j1, CB, nc, H, HW, tot, order, start, wLc, PL, bestL, bestR, splL,
                      splR):
    """Set up root feature j1: rows sorted by its bin, leaf costs of every root cut."""
    n_s = CB.shape[0]
    K = H.shape[2]
    m1 = nc[j1]
    start[: m1 + 1] = 0
    for a in range(n_s):
        start[CB[a, j1] + 1] += 1
    for c in range(m1):
        start[c + 1] += start[c]
    fill = start[:m1].copy()
    for a in range(n_s):
        c = CB[a, j1]
        order[fill[c]] = a
        fill[c] += 1
    PL[:] = 0.0
    wl = 0.0
    for c in range(m1 - 1):
        wl += HW[j1, c]
        wLc[c] = wl
        for k in range(K):
            PL[k] += H[j1, c, k]
        bestL[c] = _min_row(PL, K)
        bestR[c] = _min_diff(tot, PL, K)
        splL[c, 0] = -1
        splR[c, 0] = -1


@jit
def depth2_pair(j1, j2, c1_lo, c1_hi, idx, CB, occ, nc, H, HW, G, cnt, tot, W, min_leaf,
                penalty, order, start, wLc, HL, HLW, PL, bestL, bestR, splL, splR, tol):
    """Best child splits on feature j2 for the root cuts c1 in [c1_lo, c1_hi) of j1.

    ``HL``/``HLW``/``PL`` carry the per-bin sums of the rows left of the root
    cut from one call to the next (start with ``c1_lo = 0`` on zeroed
    arrays, then continue where the last call stopped).
    """
    K = G.shape[1]
    m2 = nc[j2]
    m1 = nc[j1]
    pl = np.empty(K)
    pr = np.empty(K)
    PR = np.empty(K)
    for c1 in range(c1_lo, min(c1_hi, m1 - 1)):
        for s in range(start[c1], start[c1 + 1]):
            a = order[s]
            i = idx[a]
            c2 = CB[a, j2]
            HLW[c2] += cnt[i]
            for k in range(K):
                HL[c2, k] += G[i, k]
                PL[k] += G[i, k]
        wL = wLc[c1]
        wR = W - wL
        if wR < min_leaf:
            return c1 + 1, True
        if wL < min_leaf:
            continue
        # The left child of the root cut, then the right one.
        for side in range(2):
            right = side == 1
            w_child = wR if right else wL
            if w_child < 2.0 * min_leaf:
                continue
            if right:
                for k in range(K):
                    PR[k] = tot[k] - PL[k]
            best = bestR if right else bestL
            spl = splR if right else splL
            cost, c2 = _child_split(HL, HLW, H[j2], HW[j2], right, PR if right else PL,
                                    w_child, m2, min_leaf, penalty, tol, best[c1],
                                    pr if right else pl)
            if c2 >= 0:
                best[c1] = cost
                spl[c1, 0] = j2
                spl[c1, 1] = occ[j2, c2]
    return min(c1_hi, m1 - 1), min(c1_hi, m1 - 1) >= m1 - 1


@jit
def depth2_root_finish(j1, occ, nc, W, min_leaf, penalty, wLc, bestL, bestR, splL, splR,
                       best, tol, out):
    """Combine the children of every root cut of j1; improves ``best``/``out``."""
    for c1 in range(nc[j1] - 1):
        wL = wLc[c1]
        if wL < min_leaf or W - wL < min_leaf:
            continue
        # bestL/bestR already include the penalty of a child split.
        cost = bestL[c1] + bestR[c1] + penalty
        if cost < best - tol:
            best = cost
            out[0] = j1
            out[1] = occ[j1, c1]
            out[2] = splL[c1, 0]
            out[3] = splL[c1, 1] if splL[c1, 0] >= 0 else -1
            out[4] = splR[c1, 0]
            out[5] = splR[c1, 1] if splR[c1, 0] >= 0 else -1
    return best
