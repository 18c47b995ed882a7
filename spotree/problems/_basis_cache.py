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

from ._certificate_kernels import first_certifying

__all__ = ["DenseCache", "FactoredCache", "nonbasic_conditions"]


# ---------------------------------------------------------- certificates
def nonbasic_conditions(x, lo, hi, basic):
    """Which nonbasic variables need ``d >= 0``, ``d <= 0`` or ``d = 0``.

    The status of a nonbasic variable is read from its value: the simplex
    method keeps it exactly at a bound (or at zero when it is free).

    Returns
    -------
    nonbasic : ndarray of int
        Indices (into ``x``) of the nonbasic variables that are not fixed.
    sign : ndarray of float
        +1 where ``d >= 0`` is needed (at the lower bound), -1 where ``d <= 0``
        is needed (at the upper bound), 0 where ``d`` must vanish.
    """
    is_basic = np.zeros(x.shape[0], dtype=bool)
    is_basic[basic] = True
    nb = np.flatnonzero(~is_basic & (lo != hi))
    xn, ln, hn = x[nb], lo[nb], hi[nb]
    tol = 1e-9 * np.maximum(1.0, np.abs(xn))
    d_lo = np.where(np.isfinite(ln), np.abs(xn - ln), np.inf)
    d_hi = np.where(np.isfinite(hn), np.abs(xn - hn), np.inf)
    sign = np.zeros(nb.shape[0])
    at_lo = (d_lo <= tol) & (d_lo <= d_hi)
    at_hi = (d_hi <= tol) & ~at_lo
    sign[at_lo] = 1.0
    sign[at_hi] = -1.0
    return nb, sign


class _Cache:
    """Slots of (certificate, vertex), least recently used evicted first.

    The cache also keeps decayed counts of rows it answered and of HiGHS
    calls, so that the solver can stop paying for certificates on batches
    where cached bases are rarely reused (see :meth:`paying`).
    """

    decay = 0.97

    def __init__(self, size):
        self.size = size
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
        """Whether recent HiGHS calls each saved at least one more call."""
        return self.hits >= self.calls


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
    """One factorized basis: what a test of reduced-cost signs needs."""

    __slots__ = ("lu", "basic_cols", "basic_pos", "nb_cols", "nb_rows", "sign_cols",
                 "sign_rows", "AN_T", "absAN_T")


class FactoredCache(_Cache):
    """Certificates as sparse LU factors of the basis (large or sparse LPs).

    A test of ``k`` cost vectors solves ``B^T Y = C_B^T`` with the stored
    factors and forms the reduced costs ``C_N - A_N^T Y``: about
    ``k * (nnz(LU) + nnz(A))`` operations, where an explicit certificate
    would cost ``k * d^2``. A row is accepted when every reduced cost has
    the right sign up to ``rtol * (|c_j| + |A_j|^T |y| + max|c|)``, a bound
    on the rounding error of computing it.

    Testing every cached basis on every row would cost more than the HiGHS
    calls it saves, so :meth:`check_all` tries only the ``n_recent`` most
    recently used bases, and a new basis is tried on a growing window of
    the next pending rows (see :meth:`window`).
    """

    rtol = 1e-10
    n_recent = 8

    def __init__(self, size, A, lo, hi):
        import scipy.sparse as sp

        super().__init__(size)
        self.A = sp.csc_matrix(A)
        self.m, self.d = self.A.shape
        self.full = sp.hstack([self.A, -sp.identity(self.m, format="csc")]).tocsc()
        self.lo, self.hi = lo, hi

    def certificate(self, basic, x):
        from scipy.sparse.linalg import splu

        m, d = self.m, self.d
        e = _Factored()
        if m:
            B = self.full[:, basic].tocsc()
            try:
                e.lu = splu(B)
            except RuntimeError:  # singular
                return None
            # Accuracy of the factors on a probe right-hand side.
            probe = np.linspace(1.0, 2.0, m)
            y = e.lu.solve(probe, trans="T")
            if not np.isfinite(y).all() or (
                    np.abs(B.T @ y - probe).max() > 1e-9 * (1.0 + np.abs(y).max())):
                return None
        else:
            e.lu = None
        is_col = basic < d
        e.basic_cols = basic[is_col]
        e.basic_pos = np.flatnonzero(is_col)
        nb, sign = nonbasic_conditions(x, self.lo, self.hi, basic)
        col = nb < d
        e.nb_cols, e.sign_cols = nb[col], sign[col]
        e.nb_rows, e.sign_rows = nb[~col] - d, sign[~col]
        AN = self.A[:, e.nb_cols]
        e.AN_T = AN.T.tocsr()
        e.absAN_T = abs(e.AN_T)
        return e

    def check_one(self, k, C, scale):
        """Boolean mask of the rows of C certified by entry k."""
        e = self.entries[k]
        n = C.shape[0]
        if self.m:
            CB = np.zeros((self.m, n))
            CB[e.basic_pos] = C[:, e.basic_cols].T
            Y = e.lu.solve(CB, trans="T")  # (m, n) duals
            if Y.ndim == 1:
                Y = Y[:, None]
        else:
            Y = np.zeros((0, n))
        ok = np.ones(n, dtype=bool)
        rt = self.rtol
        if e.nb_cols.size:
            CN = C[:, e.nb_cols].T
            D = CN - e.AN_T @ Y
            tol = rt * (np.abs(CN) + e.absAN_T @ np.abs(Y) + scale[None, :])
            ok &= _signs_ok(D, tol, e.sign_cols)
        if e.nb_rows.size:
            # The reduced cost of a row activity r_i (column -e_i) is y_i.
            Yr = Y[e.nb_rows]
            tol = rt * (np.abs(Yr) + scale[None, :])
            ok &= _signs_ok(Yr, tol, e.sign_rows)
        return ok

    def check_all(self, C, scale):
        """Index of an entry certifying each row of C, or -1 (recent entries only)."""
        owner = np.full(C.shape[0], -1)
        rest = np.arange(C.shape[0])
        for k in np.argsort(self.last_used)[::-1][:self.n_recent]:
            if not rest.size:
                break
            ok = self.check_one(int(k), C[rest], scale[rest])
            owner[rest[ok]] = k
            rest = rest[~ok]
        return owner

    def window(self, n_pending):
        return min(n_pending, 32)


def _signs_ok(D, tol, sign):
    """Columns of D (one per cost vector) whose entries have the required signs."""
    s = sign[:, None]
    ok = np.where(s > 0, D >= -tol, np.where(s < 0, D <= tol, np.abs(D) <= tol))
    return ok.all(axis=0)
