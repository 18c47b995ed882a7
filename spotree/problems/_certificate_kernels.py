"""Compiled test of cost vectors against explicit basis certificates.

Kept apart from :mod:`._basis_cache` so that edits there do not change the
fingerprint of spotree's kernel cache (see :mod:`spotree._numba`).
"""

from __future__ import annotations

import numpy as np

from .._numba import jit

__all__ = ["dual_bound", "duals_certify", "factored_certifies", "first_certifying",
           "lu_solve_transposed", "nonbasic_signs"]


@jit
def first_certifying(C, scale, G, gtol, starts, stops, entries):
    """For each row ``c`` of C, the first ``k`` of ``entries`` whose certificate holds.

    Entry ``k`` owns the rows ``starts[k]:stops[k]`` of ``G``; it certifies
    ``c`` when ``G[r] @ c + scale * gtol[r] >= 0`` for all of them. The test
    of an entry stops at its first failing row, so a batch costs far less
    than the full product ``C @ G.T``. Returns -1 where no entry holds.

    A plain loop rather than BLAS: the products are small (a few dozen
    columns), and BLAS thread limits are global to the process, so limiting
    them per call breaks under threads.
    """
    n, d = C.shape
    out = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        for t in range(entries.shape[0]):
            k = entries[t]
            ok = True
            for r in range(starts[k], stops[k]):
                s = scale[i] * gtol[r]
                for j in range(d):
                    s += G[r, j] * C[i, j]
                if not s >= 0.0:  # NaN fails too
                    ok = False
                    break
            if ok:
                out[i] = k
                break
    return out


@jit
def lu_solve_transposed(b, Lp, Li, Lx, Up, Ui, Ux, perm_r, perm_c, u, v):
    """Solve ``B^T y = b`` from SuperLU factors ``Pr B Pc = L U`` (scipy's splu).

    ``L`` and ``U`` are given as CSC arrays. ``B^T = Pc U^T L^T Pr``, so the
    solve is ``z = Pc^T b``, ``U^T v = z`` (forward), ``L^T u = v``
    (backward), ``y = Pr^T u``. Writes ``u`` (and uses ``v`` as scratch); the
    solution is ``y[r] = u[perm_r[r]]``.
    """
    m = b.shape[0]
    for p in range(m):
        u[perm_c[p]] = b[p]  # z, kept in u for now
    for k in range(m):
        s = u[k]
        diag = 0.0
        for q in range(Up[k], Up[k + 1]):
            r = Ui[q]
            if r < k:
                s -= Ux[q] * v[r]
            elif r == k:
                diag = Ux[q]
        v[k] = s / diag
    for k in range(m - 1, -1, -1):
        s = v[k]
        diag = 1.0
        for q in range(Lp[k], Lp[k + 1]):
            r = Li[q]
            if r > k:
                s -= Lx[q] * u[r]
            elif r == k:
                diag = Lx[q]
        u[k] = s / diag


@jit
def _holds(D, tol, sign):
    # Written so that NaN fails every test.
    if sign > 0:
        return D >= -tol
    if sign < 0:
        return D <= tol
    return abs(D) <= tol


@jit
def duals_certify(C, i, y, sc, nb_cols, sign_cols, nb_rows, sign_rows, Ap, Ai, Ax, rtol):
    """Whether the duals ``y`` of a basis prove it optimal for the costs ``C[i]``.

    The reduced cost of nonbasic column ``j`` is ``c_j - A[:, j]^T y`` and
    that of the activity of row ``r`` is ``y_r``; each must have the sign its
    bound needs, up to ``rtol * (|c_j| + |A[:, j]|^T |y| + sc)`` (rounding).
    Stops at the first failing reduced cost. ``A`` is given as CSC arrays.
    """
    for q in range(nb_rows.shape[0]):
        yr = y[nb_rows[q]]
        if not _holds(yr, rtol * (abs(yr) + sc), sign_rows[q]):
            return False
    for q in range(nb_cols.shape[0]):
        j = nb_cols[q]
        s = C[i, j]
        a = abs(s)
        for e in range(Ap[j], Ap[j + 1]):
            prod = Ax[e] * y[Ai[e]]
            s -= prod
            a += abs(prod)
        if not _holds(s, rtol * (a + sc), sign_cols[q]):
            return False
    return True


@jit
def factored_certifies(C, rows, scale, basic_col, Lp, Li, Lx, Up, Ui, Ux, perm_r, perm_c,
                       nb_cols, sign_cols, nb_rows, sign_rows, Ap, Ai, Ax, rtol, out):
    """Test rows of C against one factorized basis; ``out[t]`` for row ``rows[t]``.

    The duals solve ``B^T y = c_B`` (``basic_col[p]`` is the column of ``c``
    that costs basic variable ``p``, -1 for a row activity), then
    :func:`duals_certify` tests them.
    """
    m = basic_col.shape[0]
    cb = np.empty(m)
    u = np.empty(m)
    v = np.empty(m)
    y = np.empty(m)
    for t in range(rows.shape[0]):
        i = rows[t]
        for p in range(m):
            j = basic_col[p]
            cb[p] = C[i, j] if j >= 0 else 0.0
        if m:
            lu_solve_transposed(cb, Lp, Li, Lx, Up, Ui, Ux, perm_r, perm_c, u, v)
            for r in range(m):
                y[r] = u[perm_r[r]]
        out[t] = duals_certify(C, i, y, scale[i], nb_cols, sign_cols, nb_rows, sign_rows,
                               Ap, Ai, Ax, rtol)


@jit
def nonbasic_signs(x, lo, hi, basic, tol_rel):
    """Sign conditions of the nonbasic variables of a basis, read from their values.

    Returns ``(nb, sign)``: the nonbasic variables that are not fixed, with
    +1 where the reduced cost must be >= 0 (at the lower bound), -1 where
    it must be <= 0 (at the upper bound) and 0 where it must vanish (a free
    nonbasic variable, or one away from both bounds).
    """
    n = x.shape[0]
    is_basic = np.zeros(n, dtype=np.bool_)
    for p in range(basic.shape[0]):
        is_basic[basic[p]] = True
    nb = np.empty(n, dtype=np.int64)
    sign = np.empty(n)
    k = 0
    for j in range(n):
        if is_basic[j] or lo[j] == hi[j]:
            continue
        tol = tol_rel * max(1.0, abs(x[j]))
        d_lo = abs(x[j] - lo[j]) if np.isfinite(lo[j]) else np.inf
        d_hi = abs(x[j] - hi[j]) if np.isfinite(hi[j]) else np.inf
        nb[k] = j
        if d_lo <= tol and d_lo <= d_hi:
            sign[k] = 1.0
        elif d_hi <= tol:
            sign[k] = -1.0
        else:
            sign[k] = 0.0
        k += 1
    return nb[:k], sign[:k]


@jit
def dual_bound(c, y, Ap, Ai, Ax, lo, hi, rlo, rhi, yc):
    """Lower bound on ``min c.w`` over ``rlo <= A w <= rhi, lo <= w <= hi`` from multipliers ``y``.

    Weak duality, valid for every ``y``: for a feasible ``w`` with row
    activities ``r = A w``, ``c.w = (c - A^T y).w + y.r``, and each term is
    at least its minimum over the bounds. Multipliers whose row has no bound
    on the side they would need (``y_i > 0`` with ``rlo_i = -inf``, ``y_i < 0``
    with ``rhi_i = +inf``) are set to 0 first (in ``yc``, scratch), so only a
    column whose reduced cost points at an infinite bound makes the bound
    ``-inf``. With ``y`` the duals of a basis that is optimal for ``c`` the
    bound is the optimal value (up to rounding). ``A`` is given as CSC arrays.
    """
    total = 0.0
    for i in range(y.shape[0]):
        v = y[i]
        if v > 0.0:
            if rlo[i] == -np.inf:
                v = 0.0
            else:
                total += v * rlo[i]
        elif v < 0.0:
            if rhi[i] == np.inf:
                v = 0.0
            else:
                total += v * rhi[i]
        elif not v == 0.0:  # NaN
            return -np.inf
        yc[i] = v
    for j in range(c.shape[0]):
        s = c[j]
        for e in range(Ap[j], Ap[j + 1]):
            s -= Ax[e] * yc[Ai[e]]
        if s > 0.0:
            if lo[j] == -np.inf:
                return -np.inf
            total += s * lo[j]
        elif s < 0.0:
            if hi[j] == np.inf:
                return -np.inf
            total += s * hi[j]
        elif not s == 0.0:  # NaN
            return -np.inf
    return total
