"""What a fit needs from the decision problem, computed once (and shared by a forest).

:class:`FitData` holds the training data in the form the compiled growth
routine reads: the costs in the minimization sense and divided by a power of
two (so that every tolerance is relative and costs of any magnitude grow the
same tree), the optimal value ``z*(c_i)`` of every row, the matrix
``G = C V^T`` where the problem lists its vertices, category codes, and the
rows sorted by every feature. It also chooses the split-search path by a
cost model (see :func:`choose_mode`).

A forest builds one FitData and grows every tree from it with other sample
weights, so the oracle is called once per forest, not once per tree.
"""

from __future__ import annotations

import math

import numpy as np

from ..problems._compiled import solve_rows
from ._kernels import MODE_ORACLE, MODE_SOLVER, MODE_VERTEX, filter_order

__all__ = ["FitData", "choose_mode", "power_of_two_scale", "VERTEX_PATH_MAX_ENTRIES"]

#: Largest n_samples * n_vertices for which G = C V^T is precomputed.
VERTEX_PATH_MAX_ENTRIES = 50_000_000
#: Entries of the per-row temporaries computed a block of rows at a time.
_ROW_BLOCK_ENTRIES = 1 << 16

def choose_mode(problem, n_samples, path="auto"):
    """The split-search path for ``problem``: ``(mode, V, oracle)``.

    The vertex path costs about ``2 K`` operations per row and candidate (K
    vertices) and ``n K`` memory; the compiled-solver path about twice the
    cost of one compiled solve. ``"auto"`` takes the cheaper of those that
    exist, and the batched oracle path when neither does.

    Parameters
    ----------
    problem : DecisionProblem
    n_samples : int
    path : {"auto", "vertex", "solver", "oracle"}
        Force a path (for tests and benchmarks); a forced path the problem
        cannot take raises ValueError.
    """
    oracle = problem.compiled_oracle()
    V = None
    if path in ("auto", "vertex"):
        # Only list the vertices when they can be cheaper than the solver.
        V = problem.vertices()
        if V is not None and n_samples * V.shape[0] > VERTEX_PATH_MAX_ENTRIES:
            V = None
    if path == "vertex":
        if V is None:
            raise ValueError(f"{type(problem).__name__} has no usable vertex list for "
                             "path='vertex'.")
        return MODE_VERTEX, V, None
    if path == "solver":
        if oracle is None:
            raise ValueError(f"{type(problem).__name__} has no compiled solver for "
                             "path='solver'.")
        return MODE_SOLVER, None, oracle
    if path == "oracle":
        return MODE_ORACLE, None, None
    if path != "auto":
        raise ValueError(f"path must be 'auto', 'vertex', 'solver' or 'oracle'; got {path!r}.")
    if V is not None and (oracle is None or V.shape[0] <= oracle.cost):
        return MODE_VERTEX, V, None
    if oracle is not None:
        return MODE_SOLVER, None, oracle
    return MODE_ORACLE, None, None


def power_of_two_scale(C):
    """A power of two near max|C|: dividing by it is exact and brings costs near 1."""
    m = float(np.max(np.abs(C))) if C.size else 0.0
    if not m > 0.0 or not math.isfinite(m):
        return 1.0
    return math.ldexp(1.0, math.frexp(m)[1] - 1)


class FitData:
    """Training statistics that do not depend on the sample weights.

    Parameters
    ----------
    problem : DecisionProblem
    X : ndarray of shape (n, p)
        Features (NaN marks a missing value).
    C : ndarray of shape (n, d)
        Validated costs.
    is_categorical : ndarray of bool of shape (p,)
    need_spo : bool
        Whether the criterion uses the SPO loss (otherwise no G is built).
    path : str, default="auto"
        See :func:`choose_mode`.

    Attributes
    ----------
    scale : float
        The power of two the costs are divided by.
    Cm : ndarray of shape (n, d)
        ``sign * C / scale``.
    zs : ndarray of shape (n,)
        ``sign * z*(c_i) / scale`` (the minimization-sense optimum).
    G : ndarray of shape (n, K) or (n, 0)
    mode : int
    """

    def __init__(self, problem, X, C, is_categorical, *, need_spo=True, path="auto"):
        self.problem = problem
        self.sign = problem.sign
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        # One feature's values contiguous (the split search reads a feature at a time).
        self.XT = np.ascontiguousarray(self.X.T)
        n, p = X.shape
        self.is_categorical = np.ascontiguousarray(is_categorical, dtype=np.bool_)
        mode, V, oracle = choose_mode(problem, n, path)
        if not need_spo and mode == MODE_VERTEX:
            # Squared error needs no G; the decisions come from one batch at the end.
            V = None
        self.mode, self.V, self.oracle = mode, V, oracle
        self._set_costs(C)
        self._categories(p)
        # Rows sorted by every feature once; a tree keeps the rows it uses
        # with a stable filter instead of sorting again.
        keys = self.X.T
        if self.is_categorical.any():
            keys = np.where(self.is_categorical[:, None], self.codes.T.astype(np.float64), keys)
        # NaN sorts last: the rows missing a feature end every sorted segment.
        # int32 (rows fit): half the memory that every split's partition
        # moves, a few percent of a forest tree's time on the Uber data.
        idx = np.int32 if n < 2 ** 31 else np.int64
        self.order = np.ascontiguousarray(np.argsort(keys, axis=1, kind="stable"), dtype=idx)
        # The features with a missing value on some row (each tree looks only
        # at these for its own rows: see missing_features).
        self._nan_features = np.flatnonzero(np.isnan(self.X).any(axis=0))

    def with_costs(self, C):
        """The same rows, features and problem with other costs ``C`` (validated).

        SPOBoost grows one tree per round on new targets: the sorted rows and
        the categories are shared, only what depends on the costs is computed
        again (exactly as a new ``FitData`` would).
        """
        import copy

        other = copy.copy(self)
        other._set_costs(C)
        return other

    def _set_costs(self, C):
        """Everything that depends on the costs: scale, scaled costs, G and optima."""
        self.C = C
        n, d = C.shape
        mode, V = self.mode, self.V
        self.scale = power_of_two_scale(C)
        # (Divided in place: sign * C and its quotient were two n x d arrays at once.)
        Cm = np.ascontiguousarray(self.sign * C)
        Cm /= self.scale
        self.Cm = Cm
        self.sq = np.einsum("ij,ij->i", self.Cm, self.Cm)
        self.n_oracle_calls = 0
        if V is not None:
            self.G = np.ascontiguousarray(self.Cm @ V.T)
            # With a complete vertex list the optimum is the best vertex; this
            # keeps node losses exactly consistent with the split sweep.
            self.zs = self.G.min(axis=1)
        else:
            self.G = np.empty((n, 0))
            if mode == MODE_SOLVER:
                W = np.empty((n, d))
                self.zs = solve_rows(self.oracle, self.Cm, W)
                gave_up = np.isnan(self.zs)
                if gave_up.any():
                    # A search limit of the compiled solver: the problem's own
                    # solve has an exact fallback.
                    self.zs[gave_up] = self.sign * self.solve(C[gave_up])[1] / self.scale
            else:
                self.zs = self.sign * self.solve(C)[1] / self.scale
        self.zs = np.ascontiguousarray(self.zs, dtype=np.float64)
        # Per row, for every tree's tolerances and bounds (see grow_tree):
        # |z*| + max |c|, and the sum of |c|.
        # (In blocks of rows, each row's reduction the same: |Cm| whole was one
        # more n x d array, the peak of a single tree's fit.)
        self.tol_rows = np.empty(n)
        self.abs_rows = np.empty(n)
        step = max(_ROW_BLOCK_ENTRIES // max(d, 1), 1)
        for i in range(0, n, step):
            absC = np.abs(self.Cm[i:i + step])
            self.tol_rows[i:i + step] = np.abs(self.zs[i:i + step]) + absC.max(axis=1,
                                                                                initial=0.0)
            self.abs_rows[i:i + step] = absC.sum(axis=1)

    def _categories(self, p):
        """Integer codes of categorical features (missing = the number of categories)."""
        n = self.X.shape[0]
        self.cat_values = [None] * p
        self.n_codes = np.zeros(p, dtype=np.int64)
        if not self.is_categorical.any():
            self.codes = np.zeros((n, 0), dtype=np.int64)
            return
        self.codes = np.zeros((n, p), dtype=np.int64)
        for f in np.flatnonzero(self.is_categorical):
            x = self.X[:, f]
            present = ~np.isnan(x)
            values, inv = np.unique(x[present], return_inverse=True)
            self.cat_values[f] = values
            self.n_codes[f] = values.size
            code = np.full(n, values.size, dtype=np.int64)
            code[present] = inv
            self.codes[:, f] = code

    # ---------------------------------------------------------------- oracle
    #: A lock held around every call of ``solve``, or None (see SPOForest's
    #: threads, which share the problem).
    solve_lock = None

    def solve(self, C):
        """Batched oracle call in the problem's units (counted for benchmarks)."""
        self.n_oracle_calls += 1
        if self.solve_lock is None:
            return self.problem.solve(C)
        with self.solve_lock:
            return self.problem.solve(C)

    def solve_scaled(self, R):
        """Decisions and minimization-sense values (in scaled units) of rows ``R``.

        ``R`` holds minimization-sense scaled cost vectors, as the kernels
        write them.
        """
        W, z = self.solve(self.sign * self.scale * R)
        return W, self.sign * z / self.scale

    def on_oracle_path(self):
        """A copy of these statistics that grows trees through the batched oracle."""
        import copy

        other = copy.copy(self)
        other.mode, other.oracle = MODE_ORACLE, None
        return other

    def missing_features(self, active):
        """Whether each feature is missing (NaN) on some row marked ``active`` (a mask)."""
        out = np.zeros(self.X.shape[1], dtype=bool)
        cols = self._nan_features
        if cols.size:
            # Only the columns with a NaN at all: copying every active row
            # took ~0.5 ms per forest tree on 650 x 196 features.
            out[cols] = np.isnan(self.X[np.ix_(active, cols)]).any(axis=0)
        return out

    def active_order(self, active):
        """The sorted rows of every feature restricted to ``active`` (a mask), in
        ``[0]`` of an array (2, p, m), whose ``[1]`` is scratch (the growth's
        second copy, see ``partition_segment``)."""
        if active.all():
            out = np.empty((2,) + self.order.shape, dtype=self.order.dtype)
            out[0] = self.order
            return out
        # Compiled: the boolean-mask filter took ~2-4 ms per forest tree.
        order = self.order
        return filter_order(order, np.ascontiguousarray(active, dtype=np.bool_),
                            int(np.count_nonzero(active)))
