"""The basis cache of LinearProgram: optimal bases with optimality certificates.

An optimal basis of an LP stays optimal for every cost vector whose reduced
costs have the right signs, and primal feasibility does not depend on the
costs. After HiGHS solves one cost vector, the basis is turned into a
*certificate* that tests many other cost vectors at once; the tree's split
search solves thousands of strongly correlated cost vectors (prefix sums of
sorted samples), most of which an earlier basis answers.

The LP is taken in the computational form ``A w - r = 0`` with variables
``x = (w, r)`` (``r`` the row activities), costs ``(c, 0)`` and bounds
``lo_x <= x <= hi_x``. For a basis with basic columns ``B`` of ``[A, -I]``
the duals are ``y = B^-T c_B`` and the reduced costs ``d = c_x - [A, -I]^T y``,
linear in ``c``. A nonbasic variable at its lower bound needs ``d >= 0``,
one at its upper bound ``d <= 0``, a free nonbasic one ``d = 0``; fixed
variables need nothing.

Two kinds of certificates:

- :class:`DenseCache` (small LPs): the matrix ``G`` with ``G c`` the signed
  reduced costs, explicit; all cached bases are tested in one product.
- :class:`FactoredCache` (large or sparse LPs): the sparse LU factors of
  ``B``; a test costs two triangular solves and a sparse product per cost
  vector, never an ``n x n`` dense matrix.

Neither kind calls multi-threaded BLAS in its tests (a compiled loop for
the dense kind, sparse triangular solves for the factored one), so nothing
here touches the process-wide BLAS thread limits, and a cache can run in
each of several threads at once.
"""

from __future__ import annotations

import numpy as np

from ._certificate_kernels import (duals_certify, factored_certifies, first_certifying,
                                  lu_solve_transposed, nonbasic_signs)

__all__ = ["DenseCache", "FactoredCache", "nonbasic_conditions"]


# ---------------------------------------------------------- certificates
def nonbasic_conditions(x, lo, hi, basic):
    """Which nonbasic variables need ``d >= 0``, ``d <= 0`` or ``d = 0``.

    The status of a nonbasic variable is read from its value: the simplex
    method keeps it exactly at a bound (or at zero when it is free); one
    found away from both bounds gets the safe condition ``d = 0``.

    Returns
    -------
    nonbasic : ndarray of int
        Indices (into ``x``) of the nonbasic variables that are not fixed.
    sign : ndarray of float
        +1 where ``d >= 0`` is needed (at the lower bound), -1 where ``d <= 0``
        is needed (at the upper bound), 0 where ``d`` must vanish.
    """
    return nonbasic_signs(np.ascontiguousarray(x, dtype=np.float64), lo, hi,
                          np.ascontiguousarray(basic, dtype=np.int64), 1e-9)


class _Cache:
    """Slots of (certificate, vertex), least recently used evicted first.

    The cache also keeps decayed counts of rows it answered and of HiGHS
    calls, so that the solver can stop paying for certificates on batches
    where cached bases are rarely reused (see :meth:`paying`).
    """

    decay = 0.97
    #: Hits per HiGHS call below which the cache stops paying for itself.
    pay_ratio = 1.0

    def __init__(self, size):
        self.size = size
        self.clear()

    def clear(self):
        """Forget every basis and count, as a new cache (see ``LinearProgram._fresh_start``)."""
        self.entries = []
        self.W = []
        self.last_used = []
        self.tick = 0
        self.mru = -1
        self.hits = 8.0  # prior credit: a new cache is given a chance to pay
        self.calls = 0.0
        self.skipped = 0

    def __len__(self):
        return len(self.entries)

    def add(self, entry, w):
        self.tick += 1
        if len(self.entries) < self.size:
            k = len(self.entries)
            self.entries.append(entry)
            self.W.append(w)
            self.last_used.append(self.tick)
        else:
            k = int(np.argmin(self.last_used))
            self.entries[k], self.W[k] = entry, w
            self.last_used[k] = self.tick
        self.mru = k
        self._changed()
        return k

    def _changed(self):
        pass

    def vertices_of(self, ks):
        return np.vstack(self.W)[ks]

    def touch(self, ks):
        self.tick += 1
        for k in ks:
            self.last_used[k] = self.tick

    def record(self, hits=0, calls=0):
        self.hits = self.hits * self.decay ** calls + hits
        self.calls = self.calls * self.decay ** calls + calls

    def paying(self):
        """Whether recent HiGHS calls each saved at least ``pay_ratio`` more calls."""
        return self.hits >= self.pay_ratio * self.calls


class DenseCache(_Cache):
    """Certificates as explicit matrices ``G`` (small LPs).

    Entry ``k`` holds a vertex ``w_k`` and ``G_k`` such that ``w_k`` minimizes
    ``c^T w`` whenever ``G_k c >= 0``. A row is accepted with a tolerance
    ``rtol * ||G_k row||_1 * max|c|``, which only absorbs rounding errors of
    the product.
    """

    rtol = 1e-11

    def __init__(self, size, full, lo, hi):
        super().__init__(size)
        self.full, self.lo, self.hi = full, lo, hi  # [A, -I] (dense) and bounds of x
        self.d = full.shape[1] - full.shape[0]

    def clear(self):
        super().clear()
        self.dirty = True

    def certificate(self, basic, x):
        """``(G, gtol)`` for the basis with basic variables ``basic``, or None."""
        d = self.d
        full = self.full
        n_rows = full.shape[0]
        E = np.eye(d + n_rows, d)  # maps c (d,) to the costs of all d + n_rows variables
        if n_rows:
            B = full[:, basic]
            try:
                Y = np.linalg.solve(B.T, E[basic])  # duals y = Y c
            except np.linalg.LinAlgError:
                return None
            # A nearly singular basis gives an inaccurate certificate: skip it.
            if not np.isfinite(Y).all() or np.abs(B.T @ Y - E[basic]).max() > 1e-9:
                return None
            R = E - full.T @ Y
        else:
            R = E
        nb, sign = nonbasic_conditions(x, self.lo, self.hi, basic)
        R = R[nb]
        free = sign == 0
        G = np.vstack([sign[~free, None] * R[~free], R[free], -R[free]])
        if G.shape[0] == 0:  # a single feasible point: optimal for every c
            G = np.zeros((1, d))
        return G, self.rtol * np.abs(G).sum(axis=1)

    def _changed(self):
        self.dirty = True

    def _stack(self):
        if self.dirty:
            self.G_all = np.ascontiguousarray(np.vstack([e[0] for e in self.entries]))
            self.gtol_all = np.concatenate([e[1] for e in self.entries])
            sizes = np.array([e[0].shape[0] for e in self.entries], dtype=np.int64)
            self.stops = np.cumsum(sizes)
            self.starts = self.stops - sizes
            self.W_all = np.vstack(self.W)
            self.dirty = False

    def _first(self, C, scale, entries):
        self._stack()
        return first_certifying(np.ascontiguousarray(C), np.ascontiguousarray(scale),
                                self.G_all, self.gtol_all, self.starts, self.stops,
                                np.asarray(entries, dtype=np.int64))

    def check_one(self, k, C, scale):
        """Boolean mask of the rows of C certified by entry k."""
        return self._first(C, scale, [k]) >= 0

    def check_all(self, C, scale):
        """Index of the first entry certifying each row of C, or -1."""
        return self._first(C, scale, np.arange(len(self.entries)))

    def vertices_of(self, ks):
        self._stack()
        return self.W_all[ks]

    def window(self, n_pending):
        return n_pending  # checking every pending row is cheap here


class _Factored:
    """One basis: its nonbasic sign conditions, and its LU factors once stored."""

    __slots__ = ("basic", "basic_col", "L", "U", "perm_r", "perm_c", "nb_cols", "sign_cols",
                 "nb_rows", "sign_rows")


def _csc_arrays(M):
    M = M.tocsc()
    return (M.indptr.astype(np.int64), M.indices.astype(np.int64),
            M.data.astype(np.float64))


class FactoredCache(_Cache):
    """Certificates for large or sparse LPs: sparse LU factors, and HiGHS's own.

    Building a certificate (a sparse LU of the basis) costs about as much as
    a HiGHS call here, and most reuse in a correlated batch comes from the
    rows right after the one HiGHS solved. So after each HiGHS solve,
    :meth:`follow` tests the next pending rows one by one with HiGHS's own
    factorization of the new basis (``B^T y = c_B``, then the reduced costs
    ``c_N - A_N^T y`` in a compiled loop), until the first row the basis does
    not solve. A basis that solved at least ``long_run`` rows this way is
    likely to recur, and only then is it factorized (scipy's SuperLU) and
    stored; stored bases are tested by :meth:`check_one` / :meth:`check_all`
    (the ``n_recent`` most recently used) at the start of later batches.

    A row is accepted when every reduced cost has the right sign up to
    ``rtol * (|c_j| + |A_j|^T |y| + max|c|)``, a bound on the rounding error
    of computing it. No dense ``n x n`` work anywhere.
    """

    rtol = 1e-10
    n_recent = 8
    long_run = 4

    def __init__(self, size, A, lo, hi):
        import scipy.sparse as sp

        super().__init__(size)
        self.A = sp.csc_matrix(A)
        self.m, self.d = self.A.shape
        self.full = sp.hstack([self.A, -sp.identity(self.m, format="csc")]).tocsc()
        self.A_arrays = _csc_arrays(self.A)
        self.lo, self.hi = lo, hi

    def conditions(self, basic, x):
        """The sign conditions of a basis (without factors)."""
        d = self.d
        e = _Factored()
        e.basic = basic
        e.basic_col = np.where(basic < d, basic, -1).astype(np.int64)
        nb, sign = nonbasic_conditions(x, self.lo, self.hi, basic)
        col = nb < d
        e.nb_cols, e.sign_cols = nb[col].astype(np.int64), sign[col]
        e.nb_rows, e.sign_rows = (nb[~col] - d).astype(np.int64), sign[~col]
        e.L = None
        return e

    def follow(self, e, transpose_solve, C, rows, scale):
        """How many of ``rows`` (in order) the basis ``e`` solves, up to the first miss.

        ``transpose_solve(rhs)`` solves ``B^T y = rhs`` for this basis (HiGHS's
        factorization, valid right after the solve that found it).
        """
        n = 0
        take = np.maximum(e.basic_col, 0)
        slack = e.basic_col < 0
        for i in rows:
            cb = C[i, take]
            cb[slack] = 0.0
            y = transpose_solve(cb)
            if y is None or not duals_certify(C, i, y, scale[i], e.nb_cols, e.sign_cols,
                                              e.nb_rows, e.sign_rows, *self.A_arrays,
                                              self.rtol):
                break
            n += 1
        return n

    def factorize(self, e):
        """Add LU factors to the conditions ``e``; return it, or None if singular."""
        from scipy.sparse.linalg import splu

        m = self.m
        if m:
            B = self.full[:, e.basic].tocsc()
            try:
                lu = splu(B)
            except RuntimeError:  # singular
                return None
            e.L, e.U = _csc_arrays(lu.L), _csc_arrays(lu.U)
            e.perm_r = lu.perm_r.astype(np.int64)
            e.perm_c = lu.perm_c.astype(np.int64)
            # Accuracy of the factors, as the compiled test uses them, on a
            # probe right-hand side: a nearly singular basis is skipped.
            probe = np.linspace(1.0, 2.0, m)
            u, v = np.empty(m), np.empty(m)
            lu_solve_transposed(probe, *e.L, *e.U, e.perm_r, e.perm_c, u, v)
            y = u[e.perm_r]
            if not np.isfinite(y).all() or (
                    np.abs(B.T @ y - probe).max() > 1e-9 * (1.0 + np.abs(y).max())):
                return None
        else:
            e.L = e.U = (np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0))
            e.perm_r = e.perm_c = np.zeros(0, np.int64)
        return e

    def certificate(self, basic, x):
        """The factored certificate of a basis, or None."""
        return self.factorize(self.conditions(basic, x))

    def _test(self, e, C, rows, scale):
        out = np.empty(rows.shape[0], dtype=np.bool_)
        factored_certifies(C, rows, scale, e.basic_col, *e.L, *e.U, e.perm_r, e.perm_c,
                           e.nb_cols, e.sign_cols, e.nb_rows, e.sign_rows, *self.A_arrays,
                           self.rtol, out)
        return out

    def check_one(self, k, C, scale):
        """Boolean mask of the rows of C certified by entry k."""
        C = np.ascontiguousarray(C)
        return self._test(self.entries[k], C, np.arange(C.shape[0]),
                          np.ascontiguousarray(scale))

    def check_all(self, C, scale):
        """Index of an entry certifying each row of C, or -1 (recent entries only)."""
        C = np.ascontiguousarray(C)
        scale = np.ascontiguousarray(scale)
        owner = np.full(C.shape[0], -1)
        rest = np.arange(C.shape[0])
        for k in np.argsort(self.last_used)[::-1][:self.n_recent]:
            if not rest.size:
                break
            ok = self._test(self.entries[int(k)], C, rest, scale)
            owner[rest[ok]] = k
            rest = rest[~ok]
        return owner

    def window(self, n_pending):
        return min(n_pending, 32)
