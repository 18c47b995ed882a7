"""Brute-force vertex lists of small LPs and point lists of small MILPs.

All work on the row-bound form ``rlo <= A w <= rhi``, ``lo <= w <= hi`` of
a LinearProgram and decline (return None) before doing anything expensive
when the enumeration would exceed its limits; only then is a sparse ``A``
made dense.
"""

from __future__ import annotations

import itertools
from math import comb, prod

import numpy as np

__all__ = ["integer_points", "lp_vertices", "mixed_points"]

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
        keep = _independent_rows(A_eq)
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


def _independent_rows(A_eq):
    """Indices of the first rows of ``A_eq`` that span its row space."""
    rank = np.linalg.matrix_rank(A_eq)
    keep = []
    for i in range(A_eq.shape[0]):
        if len(keep) == rank:
            break
        if np.linalg.matrix_rank(A_eq[keep + [i]]) > len(keep):
            keep.append(i)
    return keep


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
    sizes = _grid_sizes(box_lo, box_hi, max_points)
    if sizes is None:
        return None
    if A.shape[0] * d > _MAX_DENSE_ENTRIES:
        return None
    P = _grid(box_lo, box_hi)
    if A.shape[0]:
        P = P[_rows_hold(_dense(A), rlo, rhi, P)]
    if P.shape[0] == 0 or P.shape[0] > max_vertices:
        return None
    return P


def _grid_sizes(box_lo, box_hi, max_points):
    """Integer values per coordinate of the box, or None beyond ``max_points`` points."""
    lo, hi = np.ceil(box_lo - 1e-9), np.floor(box_hi + 1e-9)
    sizes = hi - lo + 1
    if (sizes <= 0).any() or np.log2(sizes).sum() > np.log2(max_points) + 1:
        return None
    if prod(int(s) for s in sizes) > max_points:
        return None
    return sizes


def _grid(box_lo, box_hi):
    """The integer points of the box, in lexicographic order."""
    lo, hi = np.ceil(box_lo - 1e-9), np.floor(box_hi + 1e-9)
    grids = [np.arange(a, b + 1) for a, b in zip(lo, hi)]
    # "ij" indexing, flattened in C order, lists the points in lexicographic
    # order; 40 times faster than a list of itertools.product's tuples (278
    # -> 7 ms for 195,112 points), which LinearProgram.solve now waits for.
    # + 0.0: np.ceil(-1e-9) is -0.
    mesh = np.meshgrid(*grids, indexing="ij")
    return np.stack(mesh, axis=-1).reshape(-1, len(lo)).astype(np.float64) + 0.0


def _rows_hold(A, rlo, rhi, P):
    """Whether each integer point of ``P`` (rows) meets ``rlo <= A p <= rhi``."""
    act = P @ A.T
    # Relative to each row's terms at the point: an absolute 1e-9 let every
    # point of the box through a row 1e-10 x + 1e-10 y <= 1e-10. The points
    # are exact, so only the rounding of the sums is allowed for: 1e-9 of
    # the terms let (1, 1) through 500000001 x + 500000000 y <= 1e9.
    terms = np.abs(P) @ np.abs(A).T
    lo_ok = act >= rlo - 1e-12 * (terms + np.abs(rlo))
    hi_ok = act <= rhi + 1e-12 * (terms + np.abs(rhi))
    return (lo_ok & hi_ok).all(axis=1)


def mixed_points(A, rlo, rhi, lo, hi, integer, box_lo, box_hi, max_bases, max_vertices):
    """Candidate optimal points of a mixed-integer program, or None.

    Fixing the integer variables at an integer point ``z`` of the box
    ``[box_lo, box_hi]`` (over those variables) leaves an LP in the
    continuous ones, the slice at ``z``; a linear objective over the
    bounded mixed-integer set attains its optimum at a vertex of some
    nonempty slice. The union of the slices' vertices is returned,
    deduplicated and sorted lexicographically (it also holds the points that
    are vertices of a slice but not of the convex hull: telling them apart
    would take an LP per point).

    Each slice is enumerated as :func:`lp_vertices` does, with the same
    choices of active inequalities for every ``z`` (only the right-hand
    sides move), so the work is the number of integer points of the box
    times the number of choices; it runs when that is at most ``max_bases``
    and returns None otherwise, or when there are more than
    ``max_vertices`` points.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix of shape (m, d)
    rlo, rhi : ndarray of shape (m,)
        Row bounds (``rlo == rhi`` for an equality row).
    lo, hi : ndarray of shape (d,)
        Variable bounds, possibly infinite.
    integer : ndarray of bool of shape (d,)
        The integer variables; at least one of each kind.
    box_lo, box_hi : ndarray of shape (d,)
        A finite box around the feasible set on the integer variables
        (other entries are not read).
    max_bases, max_vertices : int

    Returns
    -------
    ndarray of shape (K, d) or None
    """
    n_rows, d = A.shape
    integer = np.asarray(integer, dtype=bool)
    J, K = np.flatnonzero(integer), np.flatnonzero(~integer)
    dk = K.size
    if (n_rows + 2 * d) * d > _MAX_DENSE_ENTRIES:
        return None
    sizes = _grid_sizes(box_lo[J], box_hi[J], max_bases)
    if sizes is None:
        return None
    n_z = prod(int(s) for s in sizes)
    A = _dense(A)
    AK, AJ = A[:, K], A[:, J]
    # Rows without continuous terms only restrict z; the others make the
    # slices' rows, with right-hand sides that depend on z.
    mixed = np.abs(AK).max(axis=1, initial=0.0) > 0
    eq = mixed & (rlo == rhi)
    up = mixed & ~eq & np.isfinite(rhi)
    down = mixed & ~eq & np.isfinite(rlo)
    fin_lo, fin_hi = np.flatnonzero(np.isfinite(lo[K])), np.flatnonzero(np.isfinite(hi[K]))
    n_ineq = int(up.sum() + down.sum()) + fin_lo.size + fin_hi.size
    n_eq = int(eq.sum())
    # comb(n_ineq, k) is unimodal in k, and dk - n_eq <= k <= dk.
    if n_z * min(comb(n_ineq, max(dk - n_eq, 0)), comb(n_ineq, dk)) > max_bases:
        return None
    Z = _grid(box_lo[J], box_hi[J])
    Z = Z[_rows_hold(AJ[~mixed], rlo[~mixed], rhi[~mixed], Z)]
    if Z.shape[0] == 0:
        return None
    # The slice at z: GK w_K <= h - GJ z (rows scaled by their largest
    # continuous coefficient) and EK w_K = e - EJ z.
    I = np.eye(dk)
    GK = np.vstack([AK[up], -AK[down], -I[fin_lo], I[fin_hi]])
    GJ = np.vstack([AJ[up], -AJ[down], np.zeros((fin_lo.size + fin_hi.size, J.size))])
    h = np.concatenate([rhi[up], -rlo[down], -lo[K][fin_lo], hi[K][fin_hi]])
    EK, EJ, e = AK[eq], AJ[eq], rlo[eq]
    peak = np.abs(GK).max(axis=1, initial=0.0)
    GK, GJ, h = GK / peak[:, None], GJ / peak[:, None], h / peak
    peak = np.abs(EK).max(axis=1, initial=0.0)
    EK, EJ, e = EK / peak[:, None], EJ / peak[:, None], e / peak
    keep = _independent_rows(EK) if n_eq else []
    k = dk - len(keep)
    if n_z * comb(n_ineq, k) > max_bases:
        return None
    # Right-hand sides of every row for every z (rows x z), and their size.
    Hz = h[:, None] - GJ @ Z.T
    Ez = e[:, None] - EJ @ Z.T
    h_size = np.abs(h)[:, None] + np.abs(GJ) @ np.abs(Z).T
    e_size = np.abs(e)[:, None] + np.abs(EJ) @ np.abs(Z).T
    Zn = np.abs(Z).max(axis=1, initial=0.0)
    points = []
    n_points = 0
    combos = itertools.combinations(range(n_ineq), k)
    step = max(1, 20000 // Z.shape[0])
    while True:
        chunk = list(itertools.islice(combos, step))
        if not chunk:
            break
        block = np.array(chunk, dtype=np.intp).reshape(len(chunk), k)
        M = np.concatenate([np.broadcast_to(EK[keep], (len(block), len(keep), dk)),
                            GK[block]], axis=1)
        s = np.linalg.svd(M, compute_uv=False)
        regular = s[:, -1] > 1e-10 * s[:, 0]
        if not regular.any():
            continue
        block, M = block[regular], M[regular]
        # One solve per basis for all z at once: rhs of shape (bases, dk, z).
        rhs = np.concatenate([np.broadcast_to(Ez[keep], (len(block), len(keep), Z.shape[0])),
                              Hz[block]], axis=1)
        X = np.linalg.solve(M, rhs).transpose(0, 2, 1)         # (bases, z, dk)
        # Tolerances as in lp_vertices, relative to the whole point and to
        # each row's right-hand side with its integer terms; every equality
        # row is checked (a dependent one may not hold at every z).
        # The integer terms are exact up to the rounding of their sums: 1e-9
        # of them let (1, 1, 0) through 500000001 z0 + 500000000 z1 + x <= 1e9.
        size = np.maximum(np.abs(X).max(axis=2, initial=0.0), Zn[None, :])
        feasible = (X @ GK.T <= Hz.T + (1e-9 * size[..., None] + 1e-12 * h_size.T)).all(axis=2)
        if n_eq:
            feasible &= (np.abs(X @ EK.T - Ez.T)
                         <= 1e-9 * size[..., None] + 1e-12 * e_size.T).all(axis=2)
        b_idx, z_idx = np.nonzero(feasible)
        if b_idx.size:
            W = np.empty((b_idx.size, d))
            W[:, K] = X[b_idx, z_idx]
            W[:, J] = Z[z_idx]
            points.append(_unique_points(W))
            n_points += points[-1].shape[0]
            if n_points > 4 * max_vertices:
                points = [_unique_points(np.vstack(points))]
                n_points = points[0].shape[0]
                if n_points > max_vertices:
                    return None
    if not points:
        return None
    V = _unique_points(np.vstack(points))
    return V if V.shape[0] <= max_vertices else None
