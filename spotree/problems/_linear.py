"""Linear and mixed-integer programs solved with HiGHS, and the news problem.

:class:`LinearProgram` holds the data of ``min`` (or ``max``) ``c^T w`` over
``S = {w : A_ub w <= b_ub, A_eq w = b_eq, lo <= w <= hi, w_j integer for
integrality[j] == 1}`` as plain arrays. The HiGHS model is built once, lazily,
and only its objective changes from one cost vector to the next.

For pure LPs an optional **basis cache** answers most cost vectors of a batch
without calling HiGHS: an optimal basis stays optimal for every cost vector
whose reduced costs have the right signs, and that test is one small matrix
product for a whole batch. The tree code solves thousands of strongly
correlated cost vectors (prefix sums of sorted samples), for which a handful of
bases answers nearly everything.
"""

from __future__ import annotations

import itertools
import numbers
from math import comb, prod

import numpy as np

from ._base import DecisionProblem, _check_sense

__all__ = ["LinearProgram", "news_recommendation"]


# ----------------------------------------------------------------- HiGHS
def _new_highs():
    """A silent HiGHS instance.

    ``highspy.Highs()`` installs Python callbacks in its constructor, which
    prints the HiGHS banner before output can be switched off; the compiled
    core class does not, so it is preferred when this highspy exposes it.
    """
    import highspy

    core = getattr(getattr(highspy, "_core", None), "_Highs", None)
    h = core() if core is not None else highspy.Highs()
    h.setOptionValue("output_flag", False)
    # With the default threads=0 HiGHS reads the CPU topology from /sys on
    # every run, which doubles the time of a small warm-started LP. One
    # thread is also what spotree's other HiGHS models ask for; HiGHS's
    # thread pool is global, and see _run_highs for a pool of another size.
    h.setOptionValue("threads", 1)
    return h


def _run_highs(h):
    """Run HiGHS; return the model status.

    A model asking for one thread fails without a status when another part
    of the process already started HiGHS's global thread pool with a
    different size; it is then run again with the default thread setting.
    """
    import highspy

    h.run()
    status = h.getModelStatus()
    threads = h.getOptionValue("threads")
    threads = threads[1] if isinstance(threads, tuple) else threads  # (status, value) in 1.x
    if status == highspy.HighsModelStatus.kNotset and threads != 0:
        h.setOptionValue("threads", 0)
        h.run()
        status = h.getModelStatus()
    return status


def _status_name(h, status):
    try:
        return h.modelStatusToString(status)
    except Exception:  # pragma: no cover - depends on the highspy version
        return str(status)


class _InfeasibleError(ValueError):
    """Raised for an empty feasible set (a ValueError, so users catch that)."""


# ------------------------------------------------------------ validation
def _check_matrix(A, name):
    """``A`` as a finite float64 2-D array, or None (also for zero rows)."""
    if A is None:
        return None
    if hasattr(A, "toarray"):  # scipy sparse
        A = A.toarray()
    try:
        arr = np.array(A, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"The '{name}' parameter of LinearProgram must be a 2-D array of "
                         f"numbers or None. Got {type(A).__name__} instead.") from None
    if arr.ndim != 2:
        raise ValueError(f"The '{name}' parameter of LinearProgram must be a 2-D array of "
                         f"shape (n_constraints, n_costs). Got an array of shape "
                         f"{arr.shape} instead; write one constraint as [[...]].")
    if arr.size and not np.isfinite(arr).all():
        raise ValueError(f"The '{name}' parameter of LinearProgram contains NaN or "
                         "infinity; constraint coefficients must be finite.")
    return arr


def _check_vector(b, name, n, A_name):
    try:
        arr = np.array(b, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"The '{name}' parameter of LinearProgram must be a 1-D array of "
                         f"numbers. Got {type(b).__name__} instead.") from None
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"The '{name}' parameter of LinearProgram must have shape ({n},) "
                         f"to match the {n} row(s) of '{A_name}'. Got shape {arr.shape} "
                         "instead.")
    if not np.isfinite(arr).all():
        raise ValueError(f"The '{name}' parameter of LinearProgram contains NaN or "
                         "infinity; right-hand sides must be finite.")
    return arr


def _is_bound_scalar(v):
    return v is None or isinstance(v, (numbers.Real, np.floating, np.integer))


def _parse_bound(v, j, side):
    """One bound as a float (+-inf for None) and its stored form (None for inf)."""
    where = "" if j is None else f" of variable {j}"
    if v is None:
        return (-np.inf if side == "lower" else np.inf), None
    if isinstance(v, bool) or not _is_bound_scalar(v):
        raise ValueError(f"The 'bounds' parameter of LinearProgram has a {side} bound"
                         f"{where} that is not a number or None: {v!r}.")
    v = float(v)
    if np.isnan(v):
        raise ValueError(f"The 'bounds' parameter of LinearProgram has a NaN {side} bound"
                         f"{where}; use None for no bound.")
    if (side == "lower" and v == np.inf) or (side == "upper" and v == -np.inf):
        raise ValueError(f"The 'bounds' parameter of LinearProgram has an infinite {side} "
                         f"bound{where} pointing the wrong way ({v}); no w satisfies it.")
    return v, (None if np.isinf(v) else v)


def _parse_pair(pair, j):
    try:
        items = list(pair)
    except TypeError:
        items = None
    if items is None or len(items) != 2 or not all(_is_bound_scalar(x) for x in items):
        where = "" if j is None else f" for variable {j}"
        raise ValueError(f"The 'bounds' parameter of LinearProgram must be a (lo, hi) pair or "
                         f"a sequence of n_costs such pairs (None = unbounded). Got "
                         f"{pair!r}{where} instead.")
    lo, lo_s = _parse_bound(items[0], j, "lower")
    hi, hi_s = _parse_bound(items[1], j, "upper")
    if lo > hi:
        where = "" if j is None else f" of variable {j}"
        raise ValueError(f"The 'bounds' parameter of LinearProgram has lower bound {lo} > "
                         f"upper bound {hi}{where}; the problem is infeasible.")
    return lo, hi, (lo_s, hi_s)


def _parse_bounds(bounds):
    """Return ``(kind, lo, hi, stored)``; kind is 'pair' or 'list'."""
    if bounds is None or isinstance(bounds, (str, bytes)):
        raise ValueError("The 'bounds' parameter of LinearProgram must be a (lo, hi) pair or a "
                         "sequence of n_costs such pairs (None = unbounded, e.g. (None, None) "
                         f"for free variables). Got {bounds!r} instead.")
    if isinstance(bounds, np.ndarray):
        bounds = bounds.tolist()
    try:
        items = list(bounds)
    except TypeError:
        raise ValueError("The 'bounds' parameter of LinearProgram must be a (lo, hi) pair or a "
                         f"sequence of n_costs such pairs. Got {bounds!r} instead.") from None
    if len(items) == 2 and all(_is_bound_scalar(x) for x in items):
        lo, hi, stored = _parse_pair(items, None)
        return "pair", lo, hi, stored
    if not items:
        raise ValueError("The 'bounds' parameter of LinearProgram is an empty sequence; give "
                         "a (lo, hi) pair or one pair per variable.")
    parsed = [_parse_pair(p, j) for j, p in enumerate(items)]
    lo = np.array([p[0] for p in parsed])
    hi = np.array([p[1] for p in parsed])
    return "list", lo, hi, [p[2] for p in parsed]


# ------------------------------------------------------------ basis cache
_BLAS_CONTROLLER = []


def _single_threaded_blas():
    """Context limiting BLAS to one thread (or doing nothing without threadpoolctl).

    The certificate checks are products with a few dozen columns, called once
    per cache miss: a BLAS thread pool only adds synchronization to them, and
    on a busy machine that costs ten times the product itself.
    """
    from contextlib import nullcontext

    if not _BLAS_CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController

            _BLAS_CONTROLLER.append(ThreadpoolController())
        except Exception:  # pragma: no cover - threadpoolctl comes with scikit-learn
            _BLAS_CONTROLLER.append(None)
    ctl = _BLAS_CONTROLLER[0]
    return nullcontext() if ctl is None else ctl.limit(limits=1, user_api="blas")


class _BasisCache:
    """Optimal bases with their certificates, in a fixed number of slots.

    Entry ``k`` holds a vertex ``w_k`` and a matrix ``G_k`` such that ``w_k``
    minimizes ``c^T w`` over S whenever ``G_k c >= 0`` (each row of ``G_k`` is a
    signed reduced cost of a nonbasic variable as a linear function of ``c``).
    A row is accepted with a tolerance ``rtol * ||G_k row||_1 * max|c|``, which
    only absorbs rounding errors of the product. Slots are reused least
    recently used first.

    The cache also keeps decayed counts of rows it answered and of HiGHS
    calls, so that the solver can stop paying for certificates on batches
    where cached bases are rarely reused (see :meth:`paying`).
    """

    rtol = 1e-11
    decay = 0.97

    def __init__(self, size):
        self.size = size
        self.G = []
        self.gtol = []
        self.W = []
        self.last_used = []
        self.tick = 0
        self.mru = -1
        self.dirty = True
        self.hits = 8.0  # prior credit: a new cache is given a chance to pay
        self.calls = 0.0
        self.skipped = 0

    def __len__(self):
        return len(self.G)

    def _stack(self):
        if self.dirty:
            self.G_all = np.vstack(self.G)
            self.gtol_all = np.concatenate(self.gtol)
            self.starts = np.cumsum([0] + [g.shape[0] for g in self.G[:-1]])
            self.W_all = np.vstack(self.W)
            self.dirty = False

    def add(self, G, w):
        if G.shape[0] == 0:  # a single feasible point: optimal for every c
            G = np.zeros((1, G.shape[1]))
        gtol = self.rtol * np.abs(G).sum(axis=1)
        self.tick += 1
        if len(self.G) < self.size:
            k = len(self.G)
            self.G.append(G)
            self.gtol.append(gtol)
            self.W.append(w)
            self.last_used.append(self.tick)
        else:
            k = int(np.argmin(self.last_used))
            self.G[k], self.gtol[k], self.W[k] = G, gtol, w
            self.last_used[k] = self.tick
        self.dirty = True
        self.mru = k
        return k

    def check_one(self, k, C, scale):
        """Boolean mask of the rows of C certified by entry k."""
        D = C @ self.G[k].T
        D += scale[:, None] * self.gtol[k][None, :]
        return (D >= 0).all(axis=1)

    def check_all(self, C, scale):
        """Index of the first entry certifying each row of C, or -1."""
        self._stack()
        D = C @ self.G_all.T
        D += scale[:, None] * self.gtol_all[None, :]
        ok = np.logical_and.reduceat(D >= 0, self.starts, axis=1)
        first = np.argmax(ok, axis=1)
        return np.where(ok[np.arange(len(first)), first], first, -1)

    def vertices_of(self, ks):
        self._stack()
        return self.W_all[ks]

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


# ------------------------------------------------------------ the problem
class LinearProgram(DecisionProblem):
    """A bounded linear or mixed-integer program, solved with HiGHS.

    ``S = {w in R^d : A_ub w <= b_ub, A_eq w = b_eq, lo <= w <= hi}``, with
    ``w_j`` integer where ``integrality[j] == 1``. The arguments follow
    :func:`scipy.optimize.linprog`.

    The feasible set must be nonempty and bounded, so that every cost vector
    has a finite optimum. Both are checked at construction: one solve with a
    zero objective for feasibility, then, for every variable whose own bound
    is infinite on one side, one solve minimizing (or maximizing) that
    variable over the LP relaxation; a variable that can grow without limit
    makes the problem unbounded. Each of these solves warm-starts from the
    previous one.

    Parameters
    ----------
    A_ub : array-like of shape (n_ub, d) or None, default=None
        Inequality constraint matrix.
    b_ub : array-like of shape (n_ub,) or None, default=None
        Inequality right-hand side; required with ``A_ub``.
    A_eq : array-like of shape (n_eq, d) or None, default=None
        Equality constraint matrix.
    b_eq : array-like of shape (n_eq,) or None, default=None
        Equality right-hand side; required with ``A_eq``.
    bounds : (lo, hi) pair or sequence of d pairs, default=(0, None)
        Bounds of the variables, as in :func:`scipy.optimize.linprog`: one
        pair for all variables or one pair per variable; ``None`` (or an
        infinity of the right sign) means no bound.
    integrality : array-like of shape (d,) of {0, 1} or None, default=None
        1 marks an integer variable; None means a pure LP.
    sense : {"min", "max"}, default="min"
        ``"max"`` is solved as the minimization of ``-c``.
    basis_cache : bool, default=True
        For pure LPs, reuse optimal bases across cost vectors (see Notes).
        Ignored for MILPs.

    Attributes
    ----------
    n_costs : int
        Number of variables d, inferred from the matrices or the bounds.
    A_ub, b_ub, A_eq, b_eq : ndarray or None
        The validated constraints (a matrix with zero rows is stored as None).
    bounds : tuple or list of tuple
        The validated bounds, ``None`` for an infinite bound.
    integrality : ndarray of shape (d,) or None
    is_milp : bool
        Whether some variable is integer.

    Notes
    -----
    **Solving.** The HiGHS model is created on first use and kept in an
    attribute that is dropped on pickling (and rebuilt on the other side);
    each cost vector only changes the objective and re-runs the dual simplex
    from the previous basis. HiGHS runs with one thread: with its default
    setting it reads the CPU topology on every run, which doubles the cost of
    a small LP (if another model of the process already started HiGHS's
    global thread pool with another size, the default is used instead). An
    instance is not safe to share between threads; processes (joblib, dask)
    each get their own copy.

    **Basis cache** (pure LPs). After each HiGHS solve, the optimal basis is
    factorized with numpy on the computational form ``A w - r = 0`` (``r``
    the row activities, bounded by the right-hand sides) and turned into a
    matrix ``G`` whose product with ``c`` gives the signed reduced costs of
    the nonbasic variables. The basis' vertex is optimal for every ``c`` with
    ``G c >= 0``: primal feasibility does not depend on ``c``. A batch is
    first tested against the most recently used basis, then against all
    cached bases (at most ``basis_cache_size``, least recently used evicted),
    in one matrix product; only the rows that no basis certifies go to
    HiGHS. The tolerance only absorbs rounding (``1e-11 * ||G_row||_1 *
    max|c|``), so values agree with HiGHS's to about that precision; among
    tied optimal vertices the returned one may depend on the cache's history.
    When recent HiGHS calls stop paying for themselves (cached bases answer
    fewer rows than go to HiGHS, e.g. uncorrelated costs on a large LP), only
    every 16th new basis is factorized, so the cache then costs about what
    plain HiGHS calls cost. The certificate products run with BLAS limited
    to one thread (through threadpoolctl), as they are far too small to gain
    from a thread pool. The cache is dropped on pickling.

    **Vertices.** :meth:`vertices` lists the vertices of a pure LP by brute
    force: every choice of ``d - rank(A_eq)`` active inequalities (rows of
    ``A_ub`` and finite variable bounds) is solved and kept when feasible.
    It runs when the number of choices is at most ``max_bases_enumerated``
    (200,000) and returns None otherwise, or when there are more than
    ``max_vertices`` vertices. For a MILP whose variables are all integer,
    the feasible integer points of the bounding box are listed under the same
    limits (every optimum is attained at one of them); a mixed-integer
    program has no vertex list. Vertices are deduplicated and sorted
    lexicographically, so :meth:`solve_vertices` breaks ties towards the
    lexicographically smallest optimal vertex.

    Examples
    --------
    The probability simplex in R^3: choose the cheapest coordinate.

    >>> import numpy as np
    >>> from spotree.problems import LinearProgram
    >>> lp = LinearProgram(A_eq=np.ones((1, 3)), b_eq=[1.0])
    >>> W, z = lp.solve([[3.0, 1.0, 2.0], [0.5, 4.0, 1.0]])
    >>> W.round(12) + 0.0
    array([[0., 1., 0.],
           [1., 0., 0.]])
    >>> z
    array([1. , 0.5])
    >>> lp.vertices()
    array([[0., 0., 1.],
           [0., 1., 0.],
           [1., 0., 0.]])
    """

    #: Largest number of candidate bases (or integer points) that
    #: :meth:`vertices` enumerates.
    max_bases_enumerated = 200_000
    #: Number of optimal bases kept by the basis cache.
    basis_cache_size = 64
    #: Rows per block of the cached solve; bounds the work per cache miss.
    _chunk = 2048

    def __init__(self, A_ub=None, b_ub=None, A_eq=None, b_eq=None, bounds=(0, None),
                 integrality=None, sense="min", basis_cache=True):
        A_ub = _check_matrix(A_ub, "A_ub")
        A_eq = _check_matrix(A_eq, "A_eq")
        for A, b, an, bn in ((A_ub, b_ub, "A_ub", "b_ub"), (A_eq, b_eq, "A_eq", "b_eq")):
            if (A is None) != (b is None):
                given, missing = (an, bn) if b is None else (bn, an)
                raise ValueError(f"The '{given}' parameter of LinearProgram was given without "
                                 f"'{missing}'; pass both or neither.")
        kind, lo, hi, stored_bounds = _parse_bounds(bounds)

        sizes = {}
        if A_ub is not None:
            sizes["A_ub"] = A_ub.shape[1]
        if A_eq is not None:
            sizes["A_eq"] = A_eq.shape[1]
        if kind == "list":
            sizes["bounds"] = len(stored_bounds)
        if not sizes:
            raise ValueError("LinearProgram cannot infer the number of variables: pass "
                             "'A_ub', 'A_eq' or one (lo, hi) pair per variable in 'bounds'.")
        if len(set(sizes.values())) > 1:
            detail = ", ".join(f"{k} has {v}" for k, v in sizes.items())
            raise ValueError(f"The arguments of LinearProgram disagree on the number of "
                             f"variables: {detail}.")
        d = next(iter(sizes.values()))
        if d < 1:
            raise ValueError("LinearProgram needs at least one variable; the constraint "
                             "matrices have 0 columns.")

        if A_ub is not None:
            b_ub = _check_vector(b_ub, "b_ub", A_ub.shape[0], "A_ub")
            if A_ub.shape[0] == 0:
                A_ub = b_ub = None
        if A_eq is not None:
            b_eq = _check_vector(b_eq, "b_eq", A_eq.shape[0], "A_eq")
            if A_eq.shape[0] == 0:
                A_eq = b_eq = None

        if integrality is not None:
            try:
                integ = np.array(integrality, dtype=np.float64)
            except (TypeError, ValueError):
                integ = None
            if integ is None or integ.shape != (d,) or not np.isin(integ, (0.0, 1.0)).all():
                raise ValueError(f"The 'integrality' parameter of LinearProgram must be None or "
                                 f"an array of {d} values in {{0, 1}}. Got {integrality!r} "
                                 "instead.")
            integrality = integ.astype(np.int8)

        self.A_ub, self.b_ub, self.A_eq, self.b_eq = A_ub, b_ub, A_eq, b_eq
        self.bounds = stored_bounds
        self.integrality = integrality
        self.sense = _check_sense(sense)
        if not isinstance(basis_cache, (bool, np.bool_)):
            raise ValueError(f"The 'basis_cache' parameter of LinearProgram must be a bool. "
                             f"Got {basis_cache!r} instead.")
        self.basis_cache = bool(basis_cache)
        self.n_costs = d
        self.is_milp = integrality is not None and bool(integrality.any())
        self._lo = np.broadcast_to(lo, (d,)).astype(np.float64)
        self._hi = np.broadcast_to(hi, (d,)).astype(np.float64)
        self._check_feasible_and_bounded()

    # ----------------------------------------------------------- model data
    @property
    def n_rows(self):
        """Number of constraint rows (inequalities, then equalities)."""
        return sum(A.shape[0] for A in (self.A_ub, self.A_eq) if A is not None)

    def _rows(self):
        """The stacked constraint matrix and row activity bounds."""
        d = self.n_costs
        blocks, rlo, rhi = [], [], []
        if self.A_ub is not None:
            blocks.append(self.A_ub)
            rlo.append(np.full(len(self.b_ub), -np.inf))
            rhi.append(self.b_ub)
        if self.A_eq is not None:
            blocks.append(self.A_eq)
            rlo.append(self.b_eq)
            rhi.append(self.b_eq)
        if not blocks:
            return np.zeros((0, d)), np.zeros(0), np.zeros(0)
        return np.vstack(blocks), np.concatenate(rlo), np.concatenate(rhi)

    def _build_highs(self, integer):
        import highspy

        d = self.n_costs
        A, rlo, rhi = self._rows()
        inf = highspy.kHighsInf
        lp = highspy.HighsLp()
        lp.num_col_ = d
        lp.num_row_ = A.shape[0]
        lp.col_cost_ = np.zeros(d)
        lp.col_lower_ = np.where(np.isinf(self._lo), -inf, self._lo)
        lp.col_upper_ = np.where(np.isinf(self._hi), inf, self._hi)
        lp.row_lower_ = np.where(np.isinf(rlo), -inf, rlo)
        lp.row_upper_ = np.where(np.isinf(rhi), inf, rhi)
        # Column-wise sparse storage of A, built without scipy.sparse.
        nz = A.T != 0
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.num_col_ = d
        lp.a_matrix_.num_row_ = A.shape[0]
        lp.a_matrix_.start_ = np.concatenate([[0], np.cumsum(nz.sum(axis=1))]).astype(np.int32)
        lp.a_matrix_.index_ = np.nonzero(nz)[1].astype(np.int32)
        lp.a_matrix_.value_ = A.T[nz]
        if integer:
            lp.integrality_ = [highspy.HighsVarType.kInteger if v else
                               highspy.HighsVarType.kContinuous for v in self.integrality]
        h = _new_highs()
        if integer:
            # Exact optima: HiGHS stops at a 1e-4 relative gap by default.
            h.setOptionValue("mip_rel_gap", 0.0)
            h.setOptionValue("mip_abs_gap", 0.0)
        else:
            # Presolve would be redone on every objective change; the warm
            # dual simplex from the last basis is faster for a new objective.
            h.setOptionValue("presolve", "off")
        status = h.passModel(lp)
        if status != highspy.HighsStatus.kOk:  # pragma: no cover - validated data
            raise ValueError(f"HiGHS rejected the LinearProgram model (status {status}).")
        return h

    def _highs(self):
        h = getattr(self, "_model_highs", None)
        if h is None:
            h = self._model_highs = self._build_highs(self.is_milp)
            self._model_cols = np.arange(self.n_costs, dtype=np.int32)
            # The computational form [A, -I] x = 0 of the basis cache, with
            # the bounds of x = (w, r).
            A, rlo, rhi = self._rows()
            self._model_form = (np.hstack([A, -np.eye(A.shape[0])]),
                                np.concatenate([self._lo, rlo]),
                                np.concatenate([self._hi, rhi]))
        return h

    def _run(self, h, c):
        """Minimize ``c^T w`` on model h; return (model status, w or None)."""
        import highspy

        h.changeColsCost(self.n_costs, self._model_cols, c)
        status = _run_highs(h)
        if status == highspy.HighsModelStatus.kOptimal:
            return status, np.array(h.getSolution().col_value, dtype=np.float64)
        return status, None

    def _check_feasible_and_bounded(self):
        import highspy

        MS = highspy.HighsModelStatus
        h = self._highs()
        d = self.n_costs
        status, _ = self._run(h, np.zeros(d))
        if status in (MS.kInfeasible, MS.kUnboundedOrInfeasible):
            kind = "mixed-integer program" if self.is_milp else "linear program"
            raise _InfeasibleError(f"The LinearProgram is infeasible: no w satisfies the "
                                   f"constraints and bounds of this {kind} (HiGHS status: "
                                   f"{_status_name(h, status)}).")
        if status != MS.kOptimal:
            raise ValueError(f"HiGHS could not decide whether the LinearProgram is feasible "
                             f"(status: {_status_name(h, status)}).")
        # Boundedness of S: a variable free on one side must be bounded by the
        # constraints. Checked on the LP relaxation (for rational data a
        # nonempty MILP is bounded iff its relaxation is).
        relax = h if not self.is_milp else self._build_highs(False)
        for j in range(d):
            for side, inf_side, sgn in (("below", self._lo[j], 1.0), ("above", self._hi[j], -1.0)):
                if np.isfinite(inf_side):
                    continue
                c = np.zeros(d)
                c[j] = sgn
                status, _ = self._run(relax, c)
                if status in (MS.kUnbounded, MS.kUnboundedOrInfeasible):
                    raise ValueError(
                        f"The LinearProgram is unbounded: variable w[{j}] is unbounded "
                        f"{side} on the feasible set, so some cost vectors have no finite "
                        "optimum. Add a bound for it in 'bounds' or constraints that "
                        "limit it.")
                if status != MS.kOptimal:
                    raise ValueError(f"HiGHS could not decide whether w[{j}] is bounded "
                                     f"{side} (status: {_status_name(relax, status)}).")
        h.changeColsCost(d, self._model_cols, np.zeros(d))

    # ---------------------------------------------------------------- solve
    def _solve(self, C):
        Cm = C if self.sense == "min" else -C
        if self.basis_cache and not self.is_milp:
            with _single_threaded_blas():
                W = self._solve_cached(Cm)
        else:
            W = np.empty_like(C)
            h = self._highs()
            for i in range(C.shape[0]):
                W[i] = self._solve_one(h, Cm[i], i)
        return W, np.einsum("ij,ij->i", C, W)

    def _solve_one(self, h, c, i):
        status, w = self._run(h, c)
        if w is None:
            raise ValueError(f"HiGHS did not find an optimal solution for cost vector {i} "
                             f"(status: {_status_name(h, status)}).")
        return w

    def _solve_cached(self, Cm):
        cache = getattr(self, "_model_basis_cache", None)
        if cache is None:
            cache = self._model_basis_cache = _BasisCache(self.basis_cache_size)
        h = self._highs()
        m = Cm.shape[0]
        W = np.empty_like(Cm)
        scale = np.abs(Cm).max(axis=1)
        for start in range(0, m, self._chunk):
            sub = Cm[start:start + self._chunk]
            sc = scale[start:start + self._chunk]
            Wsub = W[start:start + sub.shape[0]]
            owner = np.full(sub.shape[0], -1)
            if len(cache):
                ok = cache.check_one(cache.mru, sub, sc)
                owner[ok] = cache.mru
                rest = np.flatnonzero(~ok)
                if rest.size and len(cache) > 1:
                    owner[rest] = cache.check_all(sub[rest], sc[rest])
                hit = owner >= 0
                if hit.any():
                    # Copy now: a slot may be overwritten by a later miss.
                    Wsub[hit] = cache.vertices_of(owner[hit])
                    cache.touch(np.unique(owner[hit]))
                    cache.mru = int(owner[hit][-1])
                    cache.record(hits=int(hit.sum()))
            pending = np.flatnonzero(owner < 0)
            while pending.size:
                i = pending[0]
                w = self._solve_one(h, sub[i], start + i)
                Wsub[i] = w
                pending = pending[1:]
                cache.record(calls=1)
                # When cached bases are rarely reused (uncorrelated costs on a
                # large LP), certificates cost more than they save: then only
                # every 16th HiGHS basis is added, to notice when reuse returns.
                if not cache.paying():
                    cache.skipped += 1
                    if cache.skipped % 16:
                        continue
                G = self._certificate(h)
                if G is not None:
                    k = cache.add(G, w)
                    if pending.size:
                        ok = cache.check_one(k, sub[pending], sc[pending])
                        Wsub[pending[ok]] = w
                        pending = pending[~ok]
                        cache.record(hits=int(ok.sum()))
        return W

    def _certificate(self, h):
        """Signed reduced-cost matrix G of HiGHS's current optimal basis.

        In the computational form ``A w - r = 0`` with variables ``x = (w, r)``
        and costs ``(c, 0)``, the reduced costs are ``c_x - [A, -I]^T B^-T c_B``,
        linear in c. A nonbasic variable at its lower bound needs a
        nonnegative reduced cost, one at its upper bound a nonpositive one, a
        free nonbasic variable a zero one; fixed variables need nothing.
        Returns None when the basis is unusable (invalid or ill-conditioned).
        """
        import highspy

        basis = h.getBasis()
        if not basis.valid:
            return None
        BS = highspy.HighsBasisStatus
        d = self.n_costs
        full, lo, hi = self._model_form
        n_rows = full.shape[0]
        status = np.array([int(s) for s in basis.col_status] + [int(s) for s in basis.row_status])
        is_basic = status == int(BS.kBasic)
        basic = np.flatnonzero(is_basic)
        if basic.size != n_rows:
            return None
        # E maps c (d,) to the costs of all d + n_rows variables.
        E = np.eye(d + n_rows, d)
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
        st = status[~is_basic]
        R, lo, hi = R[~is_basic], lo[~is_basic], hi[~is_basic]
        fixed = lo == hi
        at_lower = ~fixed & (st == int(BS.kLower)) & np.isfinite(lo)
        at_upper = ~fixed & (st == int(BS.kUpper)) & np.isfinite(hi)
        # Free nonbasic (or an unexpected status): the reduced cost must vanish.
        other = ~fixed & ~at_lower & ~at_upper
        return np.vstack([R[at_lower], -R[at_upper], R[other], -R[other]])

    # ------------------------------------------------------------- vertices
    def _vertices(self):
        if self.is_milp:
            return self._integer_points()
        return self._lp_vertices()

    def _lp_vertices(self):
        d = self.n_costs
        # Inequalities G w <= h: rows of A_ub, then finite bounds.
        G = [] if self.A_ub is None else [self.A_ub]
        hv = [] if self.b_ub is None else [self.b_ub]
        fin_lo = np.flatnonzero(np.isfinite(self._lo))
        fin_hi = np.flatnonzero(np.isfinite(self._hi))
        G += [-np.eye(d)[fin_lo], np.eye(d)[fin_hi]]
        hv += [-self._lo[fin_lo], self._hi[fin_hi]]
        G, hv = np.vstack(G), np.concatenate(hv)
        # Independent equality rows (the system is consistent: S is nonempty).
        if self.A_eq is not None:
            rank = np.linalg.matrix_rank(self.A_eq)
            keep = []
            for i in range(self.A_eq.shape[0]):
                if np.linalg.matrix_rank(self.A_eq[keep + [i]]) > len(keep):
                    keep.append(i)
                if len(keep) == rank:
                    break
            Aeq, beq = self.A_eq[keep], self.b_eq[keep]
        else:
            Aeq, beq = np.zeros((0, d)), np.zeros(0)
        k = d - Aeq.shape[0]
        n_ineq = G.shape[0]
        if comb(n_ineq, k) > self.max_bases_enumerated:
            return None
        scale = max(1.0, np.abs(hv).max(initial=0.0), np.abs(beq).max(initial=0.0))
        tol = 1e-9 * scale
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
            feasible = (X @ G.T <= hv + tol).all(axis=1)
            if Aeq.shape[0]:
                feasible &= (np.abs(X @ Aeq.T - beq) <= tol).all(axis=1)
            V = np.vstack([V, X[feasible]])
            V[np.abs(V) < 1e-12 * scale] = 0.0
            # Deduplicate (a degenerate vertex has many bases); np.unique also
            # sorts the rounded rows lexicographically.
            _, first = np.unique(np.round(V / scale, 9), axis=0, return_index=True)
            V = V[first]
            if V.shape[0] > self.max_vertices:
                return None
        return V if V.shape[0] else None

    def _integer_points(self):
        if not self.integrality.all():
            return None
        lo, hi = self._box()
        lo, hi = np.ceil(lo - 1e-9), np.floor(hi + 1e-9)
        sizes = (hi - lo + 1).astype(np.int64)
        if (sizes <= 0).any() or prod(int(s) for s in sizes) > self.max_bases_enumerated:
            return None
        grids = [np.arange(a, b + 1) for a, b in zip(lo, hi)]
        # itertools.product yields the points in lexicographic order.
        P = np.array(list(itertools.product(*grids)), dtype=np.float64).reshape(-1, self.n_costs)
        ok = np.ones(len(P), dtype=bool)
        tol = 1e-9 * max(1.0, np.abs(P).max(initial=0.0))
        if self.A_ub is not None:
            ok &= (P @ self.A_ub.T <= self.b_ub + tol).all(axis=1)
        if self.A_eq is not None:
            ok &= (np.abs(P @ self.A_eq.T - self.b_eq) <= tol).all(axis=1)
        P = P[ok]
        if P.shape[0] == 0 or P.shape[0] > self.max_vertices:
            return None
        return P

    def _box(self):
        """Smallest box around the LP relaxation of S (finite: S is bounded)."""
        lo, hi = self._lo.copy(), self._hi.copy()
        if np.isfinite(lo).all() and np.isfinite(hi).all():
            return lo, hi
        relax = self._build_highs(False)
        for j in range(self.n_costs):
            for sgn in (1.0, -1.0):
                if np.isfinite(lo[j] if sgn > 0 else hi[j]):
                    continue
                c = np.zeros(self.n_costs)
                c[j] = sgn
                _, w = self._run(relax, c)
                if sgn > 0:
                    lo[j] = w[j]
                else:
                    hi[j] = w[j]
        return lo, hi

    # ----------------------------------------------------------------- misc
    def to_dict(self):
        def tolist(a):
            return None if a is None else a.tolist()

        bounds = (list(self.bounds) if isinstance(self.bounds, tuple)
                  else [list(p) for p in self.bounds])
        return {
            "type": "linear_program",
            "A_ub": tolist(self.A_ub),
            "b_ub": tolist(self.b_ub),
            "A_eq": tolist(self.A_eq),
            "b_eq": tolist(self.b_eq),
            "bounds": bounds,
            "integrality": None if self.integrality is None else self.integrality.tolist(),
            "sense": self.sense,
            "basis_cache": self.basis_cache,
        }

    def __repr__(self):
        kind = "MILP" if self.is_milp else "LP"
        return (f"LinearProgram(n_costs={self.n_costs}, n_rows={self.n_rows}, {kind}, "
                f"sense={self.sense!r})")


def news_recommendation(n_articles=6, n_constraints=5, random_state=None):
    """The news article recommendation problem of the paper (section 5.2).

    ``max p^T w`` subject to ``w >= 0``, ``sum(w) = 1`` and ``a_m^T w <= 1``
    for ``m = 1..n_constraints``, with the entries of each ``a_m`` drawn
    i.i.d. from Exponential(1). ``w`` is the probability of recommending each
    article type and ``p`` the user's click probabilities.

    A drawn constraint set can be infeasible (for instance when every entry
    of some ``a_m`` exceeds 1). Then the whole matrix is drawn again from the
    same generator, so the result is still a deterministic function of
    ``random_state``; after 1,000 infeasible draws a ValueError is raised.

    Parameters
    ----------
    n_articles : int, default=6
        Number of article types d.
    n_constraints : int, default=5
        Number of constraints M.
    random_state : int, RandomState instance or None, default=None
        Seed of the constraint draw.

    Returns
    -------
    LinearProgram
        A maximization problem with ``n_costs = n_articles``.

    Examples
    --------
    >>> from spotree.problems import news_recommendation
    >>> problem = news_recommendation(random_state=0)
    >>> problem.n_costs, problem.sense, problem.A_ub.shape
    (6, 'max', (5, 6))
    """
    from sklearn.utils import check_random_state

    for name, value, low in (("n_articles", n_articles, 1), ("n_constraints", n_constraints, 0)):
        if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                or value < low):
            raise ValueError(f"The '{name}' parameter of news_recommendation must be an int in "
                             f"the range [{low}, inf). Got {value!r} instead.")
    rng = check_random_state(random_state)
    d, M = int(n_articles), int(n_constraints)
    for _ in range(1000):
        A = rng.exponential(1.0, size=(M, d))
        try:
            return LinearProgram(A_ub=A if M else None, b_ub=np.ones(M) if M else None,
                                 A_eq=np.ones((1, d)), b_eq=[1.0], bounds=(0, None),
                                 sense="max")
        except _InfeasibleError:
            pass
    raise ValueError(f"news_recommendation drew 1000 infeasible constraint sets with "
                     f"n_articles={d} and n_constraints={M}; use fewer constraints.")
