"""Brute-force vertex lists of small LPs and integer point lists of small MILPs.

Both work on the row-bound form ``rlo <= A w <= rhi``, ``lo <= w <= hi`` of
a LinearProgram and decline (return None) before doing anything expensive
when the enumeration would exceed its limits; only then is a sparse ``A``
made dense.
"""

from __future__ import annotations

import itertools
from math import comb, prod

import numpy as np

__all__ = ["integer_points", "lp_vertices"]

# A matrix larger than this is never made dense for an enumeration.
_MAX_DENSE_ENTRIES = 1_000_000


def _dense(A):
    return A.toarray() if hasattr(A, "toarray") else np.asarray(A, dtype=np.float64)


def _inequalities(A, rlo, rhi, lo, hi):
    """``G w <= h`` from the non-equality rows and the finite variable bounds."""
    d = A.shape[1]
    eq = rlo == rhi
    up = ~eq & np.isfinite(rhi)
    down = ~eq & np.isfinite(rlo)
    fin_lo = np.flatnonzero(np.isfinite(lo))
    fin_hi = np.flatnonzero(np.isfinite(hi))
    I = np.eye(d)
    G = np.vstack([A[up], -A[down], -I[fin_lo], I[fin_hi]])
    h = np.concatenate([rhi[up], -rlo[down], -lo[fin_lo], hi[fin_hi]])
    return _normalized(G, h)


def _normalized(G, h):
    """Rows of ``G w <= h`` (or ``= h``) divided by their largest coefficient.

    The same set, with rows of comparable size: the regularity test of a
    basis and the feasibility tolerances are then relative to each row, not
    to coefficients of 1 (a row ``1e-10 x <= 1e-10`` was met by any point).
    """
    peak = np.abs(G).max(axis=1, initial=0.0)
    peak[peak == 0] = 1.0
    return G / peak[:, None], h / peak


def _slack(G, h, X):
    """Feasibility tolerance of each point of ``X`` (rows) on each row of ``G w <= h``.

    ``1e-9`` of the point's largest coordinate times the row's largest
    coefficient, plus ``1e-9`` of the right-hand side: it scales with the
    data, and covers the rounding of a solve, which is relative to the whole
    point (a coordinate of 0 comes out as 1e-17 beside coordinates of 1).
    """
    return 1e-9 * (np.abs(X).max(axis=1, initial=0.0)[:, None]
                   * np.abs(G).max(axis=1, initial=0.0)[None, :] + np.abs(h))


def lp_vertices(A, rlo, rhi, lo, hi, max_bases, max_vertices):
    """All vertices of ``{w : rlo <= A w <= rhi, lo <= w <= hi}``, or None.

    Every choice of ``d - rank(A_eq)`` active inequalities (non-equality rows
    and finite variable bounds) is solved with the equality rows and kept
    when feasible. Runs when the number of choices is at most ``max_bases``;
    returns None otherwise, or when there are more than ``max_vertices``
    vertices. The vertices are deduplicated and sorted lexicographically.
    """
    n_rows, d = A.shape
    eq = rlo == rhi
    n_eq = int(eq.sum())
    n_ineq = (int((~eq & np.isfinite(rhi)).sum()) + int((~eq & np.isfinite(rlo)).sum())
              + int(np.isfinite(lo).sum()) + int(np.isfinite(hi).sum()))
    # Decline big problems before making anything dense.
    if (n_rows + 2 * d) * d > _MAX_DENSE_ENTRIES:
        return None
    # comb(n_ineq, k) is unimodal in k, and d - n_eq <= k <= d.
    if min(comb(n_ineq, max(d - n_eq, 0)), comb(n_ineq, d)) > max_bases:
        return None
    A = _dense(A)
    G, hv = _inequalities(A, rlo, rhi, lo, hi)
    # Independent equality rows (the system is consistent: S is nonempty).
    if n_eq:
        A_eq, b_eq = A[eq], rlo[eq]
        rank = np.linalg.matrix_rank(A_eq)
        keep = []
        for i in range(A_eq.shape[0]):
            if np.linalg.matrix_rank(A_eq[keep + [i]]) > len(keep):
                keep.append(i)
            if len(keep) == rank:
                break
        Aeq, beq = _normalized(A_eq[keep], b_eq[keep])
    else:
        Aeq, beq = np.zeros((0, d)), np.zeros(0)
    k = d - Aeq.shape[0]
    if comb(n_ineq, k) > max_bases:
        return None
    V = np.zeros((0, d))
    combos = itertools.combinations(range(n_ineq), k)
    while True:
        chunk = list(itertools.islice(combos, 20000))
        if not chunk:
            break
        block = np.array(chunk, dtype=np.intp).reshape(len(chunk), k)
        M = np.concatenate([np.broadcast_to(Aeq, (len(block),) + Aeq.shape), G[block]], axis=1)
        rhs = np.concatenate([np.broadcast_to(beq, (len(block), len(beq))), hv[block]], axis=1)
        s = np.linalg.svd(M, compute_uv=False)
        regular = s[:, -1] > 1e-10 * s[:, 0]
        if not regular.any():
            continue
        X = np.linalg.solve(M[regular], rhs[regular][..., None])[..., 0]
        # Tolerances relative to the point and the (normalized) row, and
        # rounding relative to each coordinate's size: an absolute 1e-9 (or
        # 1e-9 of the largest right-hand side, at least 1) let points break
        # rows of size 1e-10 and merged vertices 1e-10 apart.
        feasible = (X @ G.T <= hv + _slack(G, hv, X)).all(axis=1)
        if Aeq.shape[0]:
            feasible &= (np.abs(X @ Aeq.T - beq) <= _slack(Aeq, beq, X)).all(axis=1)
        V = np.vstack([V, X[feasible]])
        V = _unique_points(V)
        if V.shape[0] > max_vertices:
            return None
    return V if V.shape[0] else None


def _unique_points(V):
    """The distinct rows of ``V`` (a degenerate vertex has many bases), sorted."""
    # Rounding noise of a solve is relative to the whole point; the rounding
    # below to each coordinate's own size, so that vertices of a box 1e-10
    # high stay apart.
    V[np.abs(V) < 1e-12 * np.abs(V).max(axis=1, initial=0.0)[:, None]] = 0.0
    V += 0.0  # no -0. entries (a bound lo = 0 gives -0. at the origin)
    scale = np.abs(V).max(axis=0, initial=0.0)
    scale[scale == 0] = 1.0
    # np.unique also sorts the rounded rows lexicographically.
    _, first = np.unique(np.round(V / scale, 9), axis=0, return_index=True)
    return V[first]


def integer_points(A, rlo, rhi, box_lo, box_hi, max_points, max_vertices):
    """The feasible integer points of the box ``[box_lo, box_hi]``, or None.

    Listed in lexicographic order when the box holds at most ``max_points``
    integer points and at most ``max_vertices`` of them are feasible.
    """
    d = A.shape[1]
    lo, hi = np.ceil(box_lo - 1e-9), np.floor(box_hi + 1e-9)
    sizes = hi - lo + 1
    if (sizes <= 0).any() or np.log2(sizes).sum() > np.log2(max_points) + 1:
        return None
    if prod(int(s) for s in sizes) > max_points:
        return None
    if A.shape[0] * d > _MAX_DENSE_ENTRIES:
        return None
    grids = [np.arange(a, b + 1) for a, b in zip(lo, hi)]
    # itertools.product yields the points in lexicographic order.
    # + 0.0: np.ceil(-1e-9) is -0.
    P = np.array(list(itertools.product(*grids)), dtype=np.float64).reshape(-1, d) + 0.0
    if A.shape[0]:
        A = _dense(A)
        act = P @ A.T
        # Relative to each row's terms at the point: an absolute 1e-9 let every
        # point of the box through a row 1e-10 x + 1e-10 y <= 1e-10.
        lo_ok = act >= rlo - 1e-9 * (np.abs(P) @ np.abs(A).T + np.abs(rlo))
        hi_ok = act <= rhi + 1e-9 * (np.abs(P) @ np.abs(A).T + np.abs(rhi))
        P = P[(lo_ok & hi_ok).all(axis=1)]
    if P.shape[0] == 0 or P.shape[0] > max_vertices:
        return None
    return P
