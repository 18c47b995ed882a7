"""The decision-problem abstraction: a batch oracle for min/max c^T w over S."""

from __future__ import annotations

import copy
import functools
import numbers
import pickle
import threading
from contextlib import contextmanager

import numpy as np

from .._validation import check_costs, check_same_rows, cost_names, holds_kind

__all__ = ["DecisionProblem", "FiniteDecisions", "CallableProblem", "describe_not_a_problem",
           "resolve_problem", "check_problem_attributes", "null_space_basis", "row_space_basis",
           "solver_session", "current_session", "check_picklable"]

#: Largest n_costs for which a difference basis is computed (an SVD of a
#: matrix with n_costs columns).
DIFFERENCE_BASIS_MAX_COSTS = 2000

_SENSES = ("min", "max")


# The solver session of each thread (see solver_session).
_SESSION = threading.local()


@contextmanager
def solver_session():
    """Let the solves of one fit, on this thread, start from each other's state.

    A problem with solver state (the warm starts and basis cache of
    :class:`~spotree.problems.LinearProgram`) starts every batch from a
    clean state, so that a batch's decisions depend on the batch alone, not
    on what was solved before. A fit solves many related batches, where
    warm starts pay: inside this block, the solves of this thread start
    afresh once, at their first batch, and then carry their state from one
    batch to the next, so the fit's results still depend only on its data.
    Nested blocks join the outermost one.
    """
    if getattr(_SESSION, "token", None) is not None:
        yield
        return
    _SESSION.token = object()
    try:
        yield
    finally:
        _SESSION.token = None


def current_session():
    """The token of this thread's :func:`solver_session`, or None outside one."""
    return getattr(_SESSION, "token", None)


def solve_is_thread_safe(problem):
    """Whether threads may call ``problem.solve`` at once without a lock.

    Only built-in problems whose solve keeps no state between calls (no
    solver handle, no cache written while solving) say so, by
    ``_thread_safe_solve = True`` in their own class body: a subclass, which
    may override the solve, is not covered unless it says so itself, and any
    other problem (a user's oracle, HiGHS, CVXPY, PyEPO) takes turns.
    """
    own = vars(problem) if hasattr(problem, "__dict__") else {}
    # (A solve set on the instance is a user's code too.)
    return (type(problem).__dict__.get("_thread_safe_solve", False) is True
            and "solve" not in own and "_solve" not in own)


def _check_sense(sense):
    if sense not in _SENSES:
        raise ValueError(f"sense must be 'min' or 'max'; got {sense!r}.")
    return sense


class DecisionProblem:
    """Base class of decision problems ``min`` (or ``max``) of ``c^T w`` over ``w in S``.

    The batch is the primitive: :meth:`solve` takes a matrix of cost vectors,
    one per row, and returns the optimal decisions and values for all of them.
    A subclass implements :meth:`_solve` (validated float64 input, at least one
    row) and, optionally, :meth:`_vertices` when the candidate optimal
    decisions form a short list; the tree code then scores splits with a
    matrix product instead of oracle calls.

    Subclasses keep plain-data state only (arrays, shapes, strings) so that a
    problem pickles, clones and travels to joblib or dask workers. Solver
    handles must be created lazily and dropped in ``__getstate__``.

    Attributes
    ----------
    n_costs : int
        Dimension d of the cost and decision vectors.
    sense : {"min", "max"}
        Whether the problem minimizes or maximizes ``c^T w``.
    """

    #: Largest vertex list that :meth:`vertices` returns; beyond it, None.
    max_vertices = 5000
    #: Entries of the (rows x vertices) value matrix that :meth:`solve_vertices`
    #: forms at once.
    _vertex_block = 1 << 22
    #: Whether threads may call :meth:`solve` of one instance at once (see
    #: :func:`solve_is_thread_safe`: only where the class itself says so).
    _thread_safe_solve = False
    #: Whether ``_solve`` returns decisions in an array of its own, that
    #: :meth:`solve` may change in place (spotree's problems; not
    #: :class:`CallableProblem`, whose oracle may return an array it keeps).
    _solve_gives_new_array = True

    n_costs: int
    sense: str = "min"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # A user's class may override solve itself rather than _solve: its
        # answers then bypassed every check of solve's output, and a NaN
        # decision or one row for a batch went on into fits and scores (NaN
        # predictions, IndexErrors far away). Its output is checked as
        # _solve's is, the user's code otherwise unchanged.
        own = cls.__dict__.get("solve")
        if (callable(own) and not _is_own_code(own)
                and not getattr(own, "_spotree_checked", False)):
            cls.solve = _checked_solve(own)

    # ------------------------------------------------------------------ API
    @property
    def sign(self):
        """+1 for a minimization problem, -1 for a maximization problem.

        ``sign * c^T w`` is the cost that the problem minimizes, so every
        loss in spotree is computed as ``sign * (value - optimum)``.
        """
        return 1.0 if self.sense == "min" else -1.0

    def solve(self, C):
        """Optimal decisions and values for a batch of cost vectors.

        Parameters
        ----------
        C : array-like of shape (m, n_costs)
            Cost vectors, one per row.

        Returns
        -------
        W : ndarray of shape (m, n_costs)
            An optimal decision for each row.
        z : ndarray of shape (m,)
            The optimal value of each row, in the problem's own sense
            (minimum for ``"min"``, maximum for ``"max"``).
        """
        C = check_costs(C, n_costs=self.n_costs, names=cost_names(self))
        if C.shape[0] == 0:
            return np.empty((0, self.n_costs)), np.empty(0)
        Cs = _unoverflowed(C)
        if Cs is C and not _is_own_code(type(self)._solve):
            # A subclass's own _solve gets a copy: one that works on its
            # argument in place (C *= -1 to minimize) changed the caller's
            # costs, and the values c^T w computed below from them.
            Cs = C.copy()
        out = self._solve(Cs)
        # z is recomputed below from the decisions, so only W is checked.
        W, _ = _check_solve_pair(f"{type(self).__name__}._solve", out, *C.shape, values=False)
        W = _positive_zeros(W, out[0], self._solve_gives_new_array
                            and _is_own_code(type(self)._solve))
        # The value of the returned decision, summed the way value() sums it,
        # so that spo_loss(C, C) is exactly zero.
        return W, np.einsum("ij,ij->i", C, W)

    def value(self, C, W):
        """Row-wise objective values ``c_i^T w_i``.

        Parameters
        ----------
        C, W : array-like of shape (m, n_costs)

        Returns
        -------
        ndarray of shape (m,)
        """
        C = check_costs(C, n_costs=self.n_costs, names=cost_names(self))
        W = check_costs(W, n_costs=self.n_costs, name="W", names=cost_names(self))
        check_same_rows(C, W, ("C", "W"))
        return np.einsum("ij,ij->i", C, W)

    def vertices(self):
        """Candidate optimal decisions as a (K, n_costs) array, or None.

        When the problem can list a finite set of decisions that always
        contains an optimal one (the vertices of a polytope, the paths of a
        graph), it is returned here and :meth:`solve_vertices` gives the same
        answers as :meth:`solve` up to ties. ``None`` means no list is
        available (too many vertices, or an unknown feasible set).
        """
        return self._cached("_vertex_cache", self._checked_vertices)

    def _checked_vertices(self):
        # A subclass's list is checked once: a wrong width or a NaN failed
        # deep in the split search (a matmul error, or NaN decisions).
        V = self._vertices()
        if V is None:
            return None
        V = np.asarray(V, dtype=np.float64)
        if V.ndim != 2 or V.shape[0] == 0 or V.shape[1] != self.n_costs:
            raise ValueError(f"{type(self).__name__}._vertices returned an array of shape "
                             f"{V.shape}; expected (K, {self.n_costs}) with K >= 1: one "
                             "candidate decision per row (or None for no list).")
        if not np.isfinite(V).all():
            raise ValueError(f"{type(self).__name__}._vertices returned NaN or infinity.")
        return V

    def solve_vertices(self, C, V=None):
        """Solve a batch by enumeration over the vertex list.

        Ties are broken deterministically towards the vertex listed first
        (lowest row index of ``vertices()``).

        Parameters
        ----------
        C : array-like of shape (m, n_costs)
            Cost vectors, one per row.
        V : array-like of shape (K, n_costs) or None, default=None
            The candidate decisions to choose from; None means ``vertices()``.

        Returns
        -------
        W, z, index : ndarrays of shapes (m, d), (m,), (m,)
        """
        if V is None:
            V = self.vertices()
            if V is None:
                raise ValueError(f"{type(self).__name__} has no vertex list.")
        else:
            # A list failed with "'list' object has no attribute 'shape'", a
            # wrong width with numpy's matmul message.
            V = check_costs(V, n_costs=self.n_costs, name="V", allow_empty=False)
        C = check_costs(C, n_costs=self.n_costs, names=cost_names(self))
        k = self._best_vertices(C, V)
        W = V[k]
        return W, np.einsum("ij,ij->i", C, W), k

    def _best_vertices(self, C, V, width=None):
        """Index of the first optimal row of ``V`` for each row of ``C`` (checked)."""
        pick = np.argmin if self.sense == "min" else np.argmax
        # In blocks of rows: the values of all vertices for all rows at once
        # would take m * K floats (40 GB for a million rows and 5000 vertices).
        step = max(1, self._vertex_block // max(V.shape[0], 1))
        k = np.empty(C.shape[0], dtype=np.intp)
        Cs = _unoverflowed(C, V, width)
        for s in range(0, C.shape[0], step):
            k[s:s + step] = pick(Cs[s:s + step] @ V.T, axis=1)
        return k

    def difference_basis(self):
        """An orthonormal basis of a subspace holding every difference of two decisions.

        Every feasible decision ``w`` lies in ``w_0 + span(B)`` for the
        returned ``B`` of shape (n_costs, r): a shortest path's decisions
        differ by circulations (the null space of the node-edge incidence
        matrix), an LP's by the null space of ``A_eq``. SPOBoost's trees fit
        SPO+ subgradients, which are such differences, in these ``r``
        coordinates instead of ``n_costs`` (the same squared errors, since
        ``B`` is orthonormal). ``None`` means no smaller subspace is known.

        Returns
        -------
        ndarray of shape (n_costs, r) or None
        """
        return self._cached("_difference_cache", lambda: (
            self._checked_basis() if self.n_costs <= DIFFERENCE_BASIS_MAX_COSTS else None))

    def _checked_basis(self):
        B = self._difference_basis()
        if B is None:
            return None
        B = np.asarray(B, dtype=np.float64)
        if B.ndim != 2 or B.shape[0] != self.n_costs or not np.isfinite(B).all():
            raise ValueError(f"{type(self).__name__}._difference_basis returned an array of "
                             f"shape {B.shape}; expected finite (n_costs, r) = "
                             f"({self.n_costs}, r) with orthonormal columns (or None).")
        return B

    def _cached(self, attr, compute):
        """``compute()`` once per instance, as a read-only float array (or None)."""
        if not hasattr(self, attr):
            A = compute()
            if A is not None:
                A = np.ascontiguousarray(A, dtype=np.float64)
                A.setflags(write=False)
            setattr(self, attr, A)
        return getattr(self, attr)

    def cost_shape_hint(self, shape, name="C"):
        """A sentence for the error on costs of the wrong shape, or None.

        Cost arrays must be 2-D, ``(n_samples, n_costs)``. When they are not
        (or have another number of columns), the error names the argument
        and the shapes; a problem whose costs have a natural shape of their
        own (an assignment's agents by tasks) adds here how to flatten them.

        Parameters
        ----------
        shape : tuple of int
            The shape of the costs given.
        name : str, default="C"
            The argument's name, as the error message uses it.

        Returns
        -------
        str or None
        """
        return None

    def compiled_oracle(self):
        """A :class:`~spotree.problems._compiled.CompiledOracle`, or None.

        Problems with an exact solver written for numba (grid and DAG shortest
        paths, knapsacks) return its plain-data description; the tree's split
        search then solves candidate children inside its compiled sweep.
        """
        return None

    def relaxation(self):
        """A problem whose optimal value bounds this one's from the optimist's side, or None.

        For a mixed-integer program, its LP relaxation: ``sign * z`` of the
        relaxation is at most ``sign * z`` of the problem for every cost
        vector. The split search uses it to rule out candidates without an
        exact solve.
        """
        return None

    # ------------------------------------------------------------ subclass
    def _solve(self, C):  # pragma: no cover - abstract
        raise NotImplementedError

    def _vertices(self):
        return None

    def _difference_basis(self):
        # From the vertex list where there is one: the decisions that matter
        # (the optimal ones) are among the vertices.
        V = self.vertices()
        if V is None or V.shape[0] < 2:
            return None
        return row_space_basis(V[1:] - V[0])

    # ------------------------------------------------------------- helpers
    def __getstate__(self):
        state = self.__dict__.copy()
        # Solver handles and caches are rebuilt lazily on the other side.
        for key in list(state):
            if key.startswith("_model") or key in ("_vertex_cache", "_difference_cache"):
                del state[key]
        return state

    def __deepcopy__(self, memo):
        # As copy.deepcopy does it (the __getstate__ state, deep-copied, then
        # __setstate__), except that a value that cannot be deep-copied (a
        # lock or solver handle of a user's subclass) is shared by the copy,
        # as CallableProblem shares such an oracle: scikit-learn's clone
        # deep-copies the problem, so SPOForest and GridSearchCV failed on
        # such a subclass with "cannot pickle '_thread.lock' object".
        state = self.__getstate__()
        if not isinstance(state, dict):  # a subclass's own state format
            return copy._reconstruct(self, memo, *self.__reduce_ex__(4))
        cls = type(self)
        new = cls.__new__(cls)
        memo[id(self)] = new
        copied, shared = {}, False
        for key, value in state.items():
            try:
                copied[key] = copy.deepcopy(value, memo)
            except Exception:
                copied[key], shared = value, True
            if isinstance(value, _OracleCarrier) and copied[key].shared:
                shared = True
        setstate = getattr(new, "__setstate__", None)
        if setstate is not None:
            setstate(copied)
        else:
            new.__dict__.update(copied)
        if shared:
            # Read by SPOForest: threads growing trees on copies that share
            # such a value take turns calling them (a "_model" name: neither
            # pickled nor copied, see __getstate__).
            new.__dict__["_model_shares_state"] = True
        return new

    def __repr__(self):
        return f"{type(self).__name__}(n_costs={self.n_costs}, sense={self.sense!r})"

    def to_dict(self):
        """A JSON-ready description of the problem (see :func:`problem_from_dict`)."""
        raise NotImplementedError(f"{type(self).__name__} cannot be written to JSON.")


class FiniteDecisions(DecisionProblem):
    """Choose the best of a finite list of candidate decisions.

    ``S = {V[0], ..., V[K-1]}``. The paper's illustrative two-road problem is
    ``FiniteDecisions(np.eye(2))``: choose the cheaper road. Ties go to the
    candidate listed first.

    Parameters
    ----------
    V : array-like of shape (K, d)
        The candidate decisions, one per row.
    sense : {"min", "max"}, default="min"

    Examples
    --------
    >>> import numpy as np
    >>> from spotree.problems import FiniteDecisions
    >>> roads = FiniteDecisions(np.eye(2))
    >>> W, z = roads.solve([[3.0, 2.0], [1.0, 5.0]])
    >>> W
    array([[0., 1.],
           [1., 0.]])
    >>> z
    array([2., 1.])
    """

    # solve reads the vertex list only (see solve_is_thread_safe).
    _thread_safe_solve = True

    def __init__(self, V, sense="min"):
        # A private copy: vertices() marks its array read-only.
        V = check_costs(V, name="V", allow_empty=False).copy()
        self.V = V
        self.sense = _check_sense(sense)
        self.n_costs = V.shape[1]

    def _vertices(self):
        return self.V

    @property
    def _solve_gives_new_array(self):
        # solve_vertices indexes the list afresh, unless a subclass's own
        # returns an array that it keeps.
        return _is_own_code(type(self).solve_vertices)

    def _solve(self, C):
        W, z, _ = self.solve_vertices(C)
        return W, z

    def describe_decision(self, w):
        """``"option k"``: the index of the candidate row equal to ``w``.

        A vector equal to no row (a mix of rows, zeros) is listed by its
        non-zero entries, ``"w = {0: 0.5, 1: 0.5}"`` (``"w = 0"``), marked
        as no option: naming the nearest row would pass it off as that one.
        """
        w = np.asarray(w, dtype=np.float64).reshape(-1)
        dist = np.abs(self.V - w[None, :]).max(axis=1)
        k = int(np.argmin(dist))
        scale = max(np.abs(self.V).max(initial=0.0), np.abs(w).max(initial=0.0), 1.0)
        if dist[k] <= 1e-9 * scale:
            return f"option {k}"
        nz = np.flatnonzero(np.abs(w) > 1e-9 * scale)
        entries = ("w = 0" if nz.size == 0 else
                   "w = {" + ", ".join(f"{j}: {w[j]:.4g}" for j in nz) + "}")
        return f"{entries} (no option)"

    def to_dict(self):
        return {"type": "finite", "decisions": self.V.tolist(), "sense": self.sense}

    def __repr__(self):
        return (f"FiniteDecisions(n_decisions={self.V.shape[0]}, n_costs={self.n_costs}, "
                f"sense={self.sense!r})")


def _unoverflowed(C, V=None, width=None):
    """``C`` with each row whose values could overflow divided by a power of two.

    A row of costs near the largest float (1e308) made the sums of a path or
    of a subset infinite: the DAG solver then found no path and returned a
    decision of zeros, and ties among infinite values picked arbitrary
    vertices. Dividing a row by a power of two changes no minimizer and is
    exact (only entries 1e-300 times smaller than the row's largest can lose
    bits); rows whose largest entry times the largest possible sum of
    ``|w_j|`` (``n_costs``, or the vertex list's) stays below 2**1000 are
    returned as they are. ``width``, when given, is that largest sum, known
    beforehand.
    """
    peak = np.abs(C).max(axis=1, initial=0.0)
    if width is None:
        width = (float(C.shape[1]) if V is None
                 else max(float(np.abs(V).sum(axis=1).max()), 1.0))
    e = np.frexp(peak)[1] + int(np.ceil(np.log2(width)))
    big = e > 1000
    if not big.any():
        return C
    C = C.copy()
    C[big] = np.ldexp(C[big], (1000 - e[big])[:, None])
    return C


def _checked_solve(solve):
    """``solve`` (a subclass's own) with its output checked: see ``__init_subclass__``."""

    @functools.wraps(solve)
    def checked(self, C, *args, **kwargs):
        return _check_solve_output(self, C, solve(self, C, *args, **kwargs))

    checked._spotree_checked = True
    return checked


def _check_solve_output(problem, C, out):
    """The pair ``(W, z)`` that an overridden ``solve`` returned for ``C``, as float
    arrays, or a ValueError naming the class and what it should have returned."""
    name = f"{type(problem).__name__}.solve"
    try:
        Cn = np.asarray(C, dtype=np.float64)
    except (TypeError, ValueError):
        Cn = None
    if Cn is None or Cn.ndim != 2:
        # Not a batch (spotree always passes one): whatever the user's own
        # convention for a single vector is, it is left alone.
        return out
    rows, d = Cn.shape[0], problem.n_costs
    if rows == 0 and isinstance(out, (tuple, list)) and len(out) == 2 \
            and np.size(out[0]) == 0 and np.size(out[1]) == 0:
        return np.empty((0, d)), np.empty(0)
    W, z = _check_solve_pair(name, out, rows, d)
    if np.isfinite(Cn).all():
        # Every loss is c^T w_hat - z: a value that is not the decision's own
        # cost (an objective constant, the other sense) shifts every regret.
        with np.errstate(over="ignore", invalid="ignore"):
            own = np.einsum("ij,ij->i", Cn, W)
            scale = np.einsum("ij,ij->i", np.abs(Cn), np.abs(W)) + np.abs(z)
            off = np.abs(z - own) > 1e-6 * scale
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise ValueError(f"{name} returned the value {float(z[i]):.10g} for cost vector "
                             f"{i}, whose decision costs c^T w = {float(own[i]):.10g}; z must "
                             "be c^T w of the "
                             "decision returned (leave out any objective constant).")
    return _positive_zeros(W, out[0], False), z


def _positive_zeros(W, returned, new_array):
    """``W + 0.0``: ``W`` with every -0. turned into 0., in place where ``W`` is solve's own.

    HiGHS gives -0. for a variable at an upper bound of 0: it printed as "-0."
    and saved as "-0.0" in JSON. ``W + 0.0`` made a second (m, n_costs) array
    next to ``W`` (6.4 MB for 20,000 rows of 40 costs, the size of the
    decisions themselves), so ``W`` is changed in place when nobody else holds
    it: when ``np.asarray`` made it from ``returned`` (a list, another dtype),
    or when ``new_array`` says that the ``_solve`` that returned it (spotree's
    own) allocates its output. A user's array (a cached decision, a read-only
    one) is copied as before.
    """
    if W.base is None and W.flags.writeable and (W is not returned or new_array):
        np.add(W, 0.0, out=W)
        return W
    return W + 0.0


def _check_solve_pair(name, out, rows, d, values=True):
    """The pair ``(W, z)`` that ``name`` (a subclass's ``_solve`` or overridden
    ``solve``) returned for ``rows`` cost vectors of length ``d``, as float arrays.

    Both paths check their output here, so that they refuse the same outputs
    with the same messages. With ``values=False`` (``_solve``, whose values are
    recomputed from the decisions and may be None) ``z`` is returned unchecked.

    Raises
    ------
    ValueError
        Naming ``name`` and what it should have returned: not a pair, not
        numeric, decisions or values of the wrong shape, NaN or infinity.
    """
    shape = f"({rows}, {d})"
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        # Unpacking an array of decisions took its rows for the pair: "too
        # many values to unpack", or row 0 taken for the decisions.
        what = (f"an array of shape {np.shape(out)}" if isinstance(out, np.ndarray)
                else type(out).__name__)
        raise ValueError(f"{name} returned {what}; it must return a pair (W, z): the "
                         f"decisions, shape {shape}, and their values c^T w, one per row.")
    try:
        W = np.asarray(out[0], dtype=np.float64)
        z = np.asarray(out[1], dtype=np.float64) if values else out[1]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must return a pair of numeric arrays (W, z): the decisions, "
                         f"shape {shape}, and their values c^T w.") from None
    if W.shape != (rows, d):
        # The values c^T w would broadcast a single row over the batch.
        raise ValueError(f"{name} returned decisions of shape {W.shape} for {rows} cost "
                         f"vectors of length {d}; it must return one decision per cost "
                         f"vector, shape {shape}.")
    if not np.isfinite(W).all():
        i = int(np.flatnonzero(~np.isfinite(W).all(axis=1))[0])
        raise ValueError(f"{name} returned a decision containing NaN or infinity for cost "
                         f"vector {i}.")
    if values:
        if z.shape != (rows,):
            raise ValueError(f"{name} returned values of shape {z.shape}; it must return one "
                             f"value c^T w per cost vector, shape ({rows},).")
        if not np.isfinite(z).all():
            raise ValueError(f"{name} returned a value that is NaN or infinite for cost "
                             f"vector {int(np.flatnonzero(~np.isfinite(z))[0])}.")
    return W, z


def _is_own_code(func):
    """Whether ``func`` is defined in spotree (not in a user's subclass)."""
    return (getattr(func, "__module__", None) or "").startswith("spotree.")


def _svd_rank(A, full):
    """The right singular vectors of ``A`` (rows of ``vt``) and its numerical rank."""
    _, s, vt = np.linalg.svd(A, full_matrices=full)
    rank = int(np.count_nonzero(s > max(A.shape) * np.finfo(float).eps * s[0])) if s.size else 0
    return vt, rank


def row_space_basis(D):
    """Orthonormal basis (columns) of the span of the rows of ``D``, by SVD."""
    D = np.asarray(D, dtype=np.float64)
    if D.shape[0] == 0:
        return np.zeros((D.shape[1], 0))
    vt, rank = _svd_rank(D, full=False)
    return vt[:rank].T


def null_space_basis(A):
    """Orthonormal basis (columns) of ``{x : A x = 0}``, by SVD."""
    A = np.asarray(A, dtype=np.float64)
    if A.shape[0] == 0:
        return np.eye(A.shape[1])
    vt, rank = _svd_rank(A, full=True)
    return vt[rank:].T


def oracle_name(oracle):
    """A short name for a user oracle, for error messages."""
    func = getattr(oracle, "func", None)  # functools.partial
    if func is not None and callable(func):
        return f"partial({oracle_name(func)})"
    name = getattr(oracle, "__qualname__", None) or getattr(oracle, "__name__", None)
    if isinstance(name, str):
        return name
    text = repr(oracle)
    return text if len(text) <= 80 else text[:77] + "..."


_PICKLE_HINT = (
    "Make it picklable: use a function defined at module level (not a lambda or a "
    "nested function), a functools.partial of one, or an instance of a class with "
    "__call__ whose attributes pickle (create solver handles lazily inside __call__ and "
    "drop them in __getstate__). For a PyEPO model use spotree.problems.from_pyepo(model), "
    "which rebuilds the model in each worker.")


class _NotPicklable(TypeError):
    """Raised by an oracle that knows why it cannot be pickled; passed on as is."""


def _dump_oracle(oracle):
    """The oracle as bytes, by cloudpickle (which joblib uses), or a clear TypeError.

    cloudpickle is what joblib's process workers use, so lambdas and functions
    of ``__main__`` keep working there; what it cannot pickle (a solver's
    SWIG handle, a lock) gets a message that says how to fix it.
    """
    try:
        import cloudpickle as dumper  # a dependency of joblib >= 1.5
    except ImportError:  # pragma: no cover - older joblib vendors it
        try:
            from joblib.externals import cloudpickle as dumper
        except ImportError:
            dumper = pickle
    try:
        return dumper.dumps(oracle, protocol=pickle.HIGHEST_PROTOCOL)
    except _NotPicklable:
        raise
    except Exception as exc:  # pickling raises many types (TypeError, PicklingError...)
        raise TypeError(f"The oracle {oracle_name(oracle)} of a CallableProblem cannot be "
                        f"pickled ({type(exc).__name__}: {exc}), and pickling is needed to "
                        f"copy the problem to other processes (SPOForest(n_jobs=...), "
                        f"CallableProblem(n_jobs=...), pickle.dump). {_PICKLE_HINT}") from exc


def check_picklable(problem):
    """Pickle ``problem`` as joblib's worker processes do, or raise a TypeError that says why not.

    A problem's own explanation (a :class:`CallableProblem` naming its
    oracle) goes on as it is; any other problem that fails to pickle gets
    one that names its class and the attributes that do not pickle, and the
    fix its docs give: solver handles under attribute names that start with
    ``_model``, which :class:`DecisionProblem` drops when pickling.

    Parameters
    ----------
    problem : DecisionProblem

    Raises
    ------
    TypeError
    """
    try:
        _cloudpickle().dumps(problem, protocol=pickle.HIGHEST_PROTOCOL)
    except _NotPicklable:
        raise
    except Exception as exc:
        if isinstance(problem, CallableProblem):
            raise  # _dump_oracle's message names the oracle and the fix
        state = getattr(problem, "__dict__", {})
        getstate = getattr(problem, "__getstate__", None)
        try:
            state = getstate() if callable(getstate) else state
        except Exception:
            pass
        bad = []
        for key, value in (state.items() if isinstance(state, dict) else ()):
            try:
                _cloudpickle().dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:
                bad.append(f"{key!r} ({type(value).__name__})")
        which = (f" Its attribute{'s' if len(bad) > 1 else ''} {', '.join(bad)} cannot be "
                 f"pickled." if bad else "")
        raise TypeError(
            f"The problem {type(problem).__name__} cannot be pickled ({type(exc).__name__}: "
            f"{exc}), and pickling is needed to send it to other processes (SPOForest(n_jobs="
            f"...) grows trees in processes when the problem is solved by calls to it).{which} "
            f"Keep only plain data on the instance and create solver handles lazily, under "
            f"attribute names that start with '_model' (DecisionProblem drops those when "
            f"pickling), or fit on threads (joblib.parallel_config(backend='threading')) or "
            f"with n_jobs=1.") from exc


def _cloudpickle():
    try:
        import cloudpickle  # a dependency of joblib >= 1.5
    except ImportError:  # pragma: no cover - older joblib vendors it
        try:
            from joblib.externals import cloudpickle
        except ImportError:
            return pickle
    return cloudpickle


class _OracleCarrier:
    """Carries a user oracle through pickling (see :func:`_dump_oracle`)."""

    __slots__ = ("oracle", "shared")

    def __init__(self, oracle, shared=False):
        # shared: a deep copy that could not copy the oracle and holds the
        # original (see DecisionProblem.__deepcopy__).
        self.oracle, self.shared = oracle, shared

    def __reduce__(self):
        return (_load_oracle, (_dump_oracle(self.oracle),))

    def __deepcopy__(self, memo):
        # Deep copies (scikit-learn's clone) never pickle; an oracle that
        # cannot be deep-copied (it holds a lock or a solver handle) is shared.
        try:
            return _OracleCarrier(copy.deepcopy(self.oracle, memo))
        except Exception:
            return _OracleCarrier(self.oracle, shared=True)


def _load_oracle(data):
    return _OracleCarrier(pickle.loads(data))


def _split_output(out, batched):
    """``(decisions, values or None)`` from what an oracle returned.

    A pair ``(w, z)`` (as PyEPO's ``solve`` returns) is recognised by the
    dimensions of its parts: a decision array and a scalar (per row), or a
    matrix and a vector (batched).
    """
    if isinstance(out, tuple) and len(out) == 2:
        first, second = out
        want = 2 if batched else 1
        if np.ndim(first) == want and np.ndim(second) == want - 1:
            return first, second
    return out, None


def _add_note(exc, note):
    """Add ``note`` to an exception's notes (shown under its message; Python >= 3.11)."""
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # pragma: no cover - Python 3.10 keeps the note, without showing it
        exc.__notes__ = [*getattr(exc, "__notes__", []), note]


def _short_repr(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _show_costs(c, head=8):
    """A cost vector for a message: in full when short, else its first entries."""
    if c.size <= head:
        return repr(c.tolist())
    return repr(c[:head].tolist())[:-1] + f", ... ({c.size} entries)]"


def _call_rows(oracle, C, offset=0, total=None):
    """Call a per-row oracle on every row of C (runs in joblib workers too).

    An exception raised by the oracle goes on as it is (the user's own type,
    which they may catch), with a note naming the oracle and the row: the
    bare error of a solver deep in a fit said neither.
    """
    out = []
    for i, c in enumerate(C):
        try:
            res = oracle(c)
        except Exception as exc:
            _add_note(exc, f"(raised by the oracle {oracle_name(oracle)} of a CallableProblem "
                           f"for cost vector {offset + i} of a batch of "
                           f"{len(C) if total is None else total}: c = {_show_costs(c)})")
            raise
        out.append(_split_output(res, batched=False))
    return out


def _call_rows_carried(carrier, C, offset, total):
    return _call_rows(carrier.oracle, C, offset, total)


def _check_n_jobs(n_jobs):
    if n_jobs is None:
        return None
    if (not isinstance(n_jobs, numbers.Integral) or isinstance(n_jobs, bool) or n_jobs == 0):
        raise ValueError(f"The 'n_jobs' parameter of CallableProblem must be a nonzero int or "
                         f"None. Got {n_jobs!r} instead.")
    return int(n_jobs)


def _looks_like_pyepo(obj):
    return all(hasattr(obj, a) for a in ("setObj", "solve", "modelSense", "num_cost"))


def resolve_problem(problem, C):
    """The problem an estimator fits: ``problem``, or for None the choice among C's columns.

    ``problem=None`` means "pick the cheapest of the d options",
    ``FiniteDecisions(np.eye(d))`` with d the number of columns of ``C``.

    Parameters
    ----------
    problem : DecisionProblem or None
        The estimator's ``problem`` parameter.
    C : ndarray of shape (n_samples, n_costs)
        The validated realized costs (see ``spotree._validation.check_realized_costs``).

    Returns
    -------
    DecisionProblem

    Raises
    ------
    TypeError
        If ``problem`` is neither None nor a DecisionProblem.
    ValueError
        If ``C`` does not have one column per cost of the problem, or the
        problem's ``n_costs`` or ``sense`` is not valid (see
        :func:`check_problem_attributes`).
    """
    if problem is None:
        if C.shape[1] == 0:
            raise ValueError("C has no columns: with problem=None each column of C is the "
                             "cost of one option to choose from.")
        return FiniteDecisions(np.eye(C.shape[1]))
    if not isinstance(problem, DecisionProblem):
        raise TypeError(describe_not_a_problem(problem))
    check_problem_attributes(problem)
    if C.shape[1] != problem.n_costs:
        raise ValueError(f"C has {C.shape[1]} columns but the problem has "
                         f"n_costs={problem.n_costs}: each row must hold one cost per "
                         "decision variable.")
    return problem


def check_problem_attributes(problem):
    """Check the ``n_costs`` and ``sense`` that a DecisionProblem subclass sets itself.

    Built-in problems validate them at construction; a user's subclass sets
    them in its own ``__init__``. Every piece of spotree reads ``sense ==
    "min"`` as minimization and anything else as maximization, so a sense
    of ``"minimize"`` or ``"Min"`` was fitted and scored as a maximization
    without a word.

    Parameters
    ----------
    problem : DecisionProblem

    Raises
    ------
    TypeError
        If ``n_costs`` is missing.
    ValueError
        If ``n_costs`` is not a positive int or ``sense`` is not ``"min"``
        or ``"max"``; the message names the class.
    """
    name = type(problem).__name__
    n_costs = getattr(problem, "n_costs", None)
    if n_costs is None:
        raise TypeError(f"{name} has no n_costs: a DecisionProblem subclass "
                        "sets n_costs (and sense) in __init__.")
    if not isinstance(n_costs, numbers.Integral) or isinstance(n_costs, bool) or n_costs < 1:
        raise ValueError(f"{name}.n_costs must be a positive int (the length of the cost and "
                         f"decision vectors); got {n_costs!r} ({type(n_costs).__name__}).")
    sense = getattr(problem, "sense", None)
    if not isinstance(sense, str) or sense not in _SENSES:
        raise ValueError(f"{name}.sense must be 'min' or 'max'; got {sense!r}. A "
                         f"DecisionProblem subclass sets it in __init__ (anything but 'min' "
                         f"was taken for 'max').")
    return problem


def describe_not_a_problem(obj, what="problem"):
    """The TypeError message for an object passed where a DecisionProblem is expected.

    It says what to wrap the object with: :func:`~spotree.problems.from_pyepo`
    for a PyEPO model, :func:`~spotree.problems.from_cvxpy` for a CVXPY
    problem, :class:`CallableProblem` for a function.

    Parameters
    ----------
    obj : object
    what : str, default="problem"
        The argument's name, as the message shows it.

    Returns
    -------
    str

    Examples
    --------
    >>> from spotree.problems import describe_not_a_problem
    >>> print(describe_not_a_problem(len))  # doctest: +ELLIPSIS
    problem must be a spotree DecisionProblem (or None); got builtin_function_or_method. ...
    """
    msg = (f"{what} must be a spotree DecisionProblem (or None); got "
           f"{type(obj).__name__}.")
    if isinstance(obj, type):
        # A class is callable: the message said to wrap it as an oracle.
        name = obj.__name__
        if issubclass(obj, DecisionProblem):
            return (f"{what} must be a spotree DecisionProblem instance (or None); got the "
                    f"class {name} itself. Pass an instance: {what}={name}(...).")
        return (f"{what} must be a spotree DecisionProblem (or None); got the class "
                f"{name}, not an instance.")
    module = type(obj).__module__ or ""
    if _looks_like_pyepo(obj):
        return (f"{msg} It looks like a PyEPO optModel: wrap it with "
                f"spotree.problems.from_pyepo(model), which keeps the model's column order "
                f"and can run in parallel workers.")
    if module.startswith("cvxpy") and hasattr(obj, "parameters"):
        return (f"{msg} For a CVXPY problem whose objective is cost @ x with a cvxpy "
                f"Parameter cost, use spotree.problems.from_cvxpy(problem, cost, x).")
    if callable(obj):
        return (f"{msg} To use a function that returns an optimal decision for a cost "
                f"vector, wrap it: spotree.problems.CallableProblem(oracle, n_costs=...).")
    return (f"{msg} Use one of spotree.problems (ShortestPath, Knapsack, Assignment, "
            f"LinearProgram, FiniteDecisions, CallableProblem, from_pyepo, from_cvxpy).")


class CallableProblem(DecisionProblem):
    """Wrap any user oracle as a batch decision problem.

    Parameters
    ----------
    oracle : callable
        ``oracle(c) -> w`` for one cost vector of shape (d,), or, with
        ``batched=True``, ``oracle(C) -> W`` for a matrix of shape (m, d). It
        must return optimal decisions in the problem's sense; their values are
        computed as ``c^T w``. It may instead return a pair ``(w, z)`` (or
        ``(W, z)`` batched), as PyEPO's ``solve`` does, where ``z`` is the
        objective value of ``w``: it is then checked against ``c^T w``.
    n_costs : int
        Dimension of the cost vectors.
    sense : {"min", "max"}, default="min"
    batched : bool, default=False
        Whether ``oracle`` takes a whole batch at once.
    vertices : array-like of shape (K, d) or None, default=None
        An optional list of candidate decisions that always contains an
        optimal one; enables the fast split search.
    n_jobs : int or None, default=None
        Solve the rows of a batch in this many processes (joblib; -1 means
        all cores, None or 1 one at a time in this process). Only for
        ``batched=False``; it pays when one call takes milliseconds or more.
    value_rtol : float, default=1e-6
        Relative tolerance of the check ``z == c^T w`` for oracles that
        return values, relative to ``sum_j |c_j w_j|``.

    Notes
    -----
    **Checks.** Every output is checked: its shape (one decision of length
    ``n_costs`` per cost vector), finiteness, and for ``(w, z)`` pairs the
    value. A failed check raises a ValueError that names the oracle, the row
    and what to fix. An exception the oracle raises itself goes on with its
    own type, with a note naming the oracle and the cost vector (its row in
    the batch, and its entries). The oracle gets its own copy of the costs,
    which it may change in place.

    **Pickling.** The problem pickles (for parallel forests and
    ``n_jobs``) when its oracle does: the oracle travels by cloudpickle,
    as in joblib's workers, so lambdas and functions of a script work too.
    An oracle holding something that cannot be pickled (a solver handle, a
    lock) raises a TypeError that says how to make it picklable. Copies
    with :func:`copy.deepcopy` (as scikit-learn's ``clone`` makes) never
    pickle; an oracle that cannot be deep-copied is shared by the copy.

    Examples
    --------
    Wrap scipy's LP solver (any third-party solver works the same way):

    >>> import numpy as np
    >>> from scipy.optimize import linprog
    >>> from spotree.problems import CallableProblem
    >>> def simplex_lp(c):
    ...     return linprog(c, A_eq=np.ones((1, 3)), b_eq=[1.0], bounds=(0, None)).x
    >>> problem = CallableProblem(simplex_lp, n_costs=3)
    >>> W, z = problem.solve([[3.0, 1.0, 2.0]])
    >>> W.round(6), z.round(6)
    (array([[0., 1., 0.]]), array([1.]))
    """

    # The oracle's decisions may be an array it keeps (see solve).
    _solve_gives_new_array = False

    def __init__(self, oracle, n_costs, sense="min", batched=False, vertices=None,
                 n_jobs=None, value_rtol=1e-6):
        if not callable(oracle):
            raise TypeError(f"oracle must be callable; got {type(oracle).__name__}."
                            + (" It looks like a PyEPO optModel: use "
                               "spotree.problems.from_pyepo(model) instead."
                               if _looks_like_pyepo(oracle) else ""))
        if (not isinstance(n_costs, (int, np.integer)) or isinstance(n_costs, bool)
                or n_costs < 1):
            raise ValueError(f"n_costs must be a positive int; got {n_costs!r}.")
        self.oracle = oracle
        self.n_costs = int(n_costs)
        self.sense = _check_sense(sense)
        self.batched = bool(batched)
        self.V = None if vertices is None else check_costs(
            vertices, n_costs=self.n_costs, name="vertices", allow_empty=False).copy()
        self.n_jobs = _check_n_jobs(n_jobs)
        if self.n_jobs not in (None, 1) and self.batched:
            raise ValueError("The 'n_jobs' parameter of CallableProblem applies to per-row "
                             "oracles only; a batched oracle (batched=True) parallelizes "
                             "itself. Use n_jobs=None.")
        if (not isinstance(value_rtol, numbers.Real) or isinstance(value_rtol, bool)
                or not 0 <= value_rtol < 1):
            raise ValueError(f"The 'value_rtol' parameter of CallableProblem must be a float "
                             f"in the range [0, 1). Got {value_rtol!r} instead.")
        self.value_rtol = float(value_rtol)

    def _vertices(self):
        return self.V

    # -------------------------------------------------------------- solve
    def _solve(self, C):
        name = oracle_name(self.oracle)
        # The oracle gets its own copy: one that works on its argument in
        # place (c *= -1 to minimize) changed the caller's costs, and the
        # values c^T w computed below from them.
        C_own = C.copy()
        if self.batched:
            try:
                out = self.oracle(C_own)
            except Exception as exc:
                _add_note(exc, f"(raised by the batched oracle {name} of a CallableProblem for "
                               f"a batch of {C.shape[0]} cost vectors)")
                raise
            W, z = _split_output(out, batched=True)
            if z is None and isinstance(W, tuple) and len(W) == 2:
                self._check_unread_pair(W, name, rows=C.shape[0])
            W = self._as_array(W, name, "decisions")
            if W.shape != C.shape:
                raise ValueError(
                    f"The oracle {name} returned decisions of shape {W.shape} for a batch of "
                    f"shape {C.shape}; expected {C.shape}. A batched oracle (batched=True) "
                    f"must return one decision of length n_costs={self.n_costs} per row of "
                    f"its input, or a pair (W, z).")
            if z is not None:
                z = self._as_array(z, name, "values").reshape(-1)
                if z.shape[0] != C.shape[0]:
                    raise ValueError(f"The oracle {name} returned {z.shape[0]} values for a "
                                     f"batch of {C.shape[0]} cost vectors; a pair (W, z) "
                                     f"needs one value per row.")
            self._check_finite(W, z, name)
        else:
            outs = self._call_rows(C_own)
            W = np.empty_like(C)
            z = np.empty(C.shape[0]) if any(o[1] is not None for o in outs) else None
            for i, (w, zi) in enumerate(outs):
                if zi is None and isinstance(w, tuple) and len(w) == 2:
                    self._check_unread_pair(w, name, row=i)
                w = self._as_array(w, name, "a decision", i)
                if w.shape != (self.n_costs,):
                    raise ValueError(
                        f"The oracle {name} returned a decision of shape {w.shape} for cost "
                        f"vector {i}; expected ({self.n_costs},). A per-row oracle must "
                        f"return one decision of length n_costs={self.n_costs} for a cost "
                        f"vector of that length (or a pair (w, objective value)); for an "
                        f"oracle that takes the whole batch, pass batched=True.")
                W[i] = w
                if z is not None:
                    z[i] = np.nan if zi is None else self._as_array(
                        zi, name, "a value", i).reshape(-1)[0]
            self._check_finite(W, z, name)
        cw = np.einsum("ij,ij->i", C, W)
        if z is not None:
            scale = np.abs(C * W).sum(axis=1) + np.abs(z)
            bad = np.flatnonzero(np.abs(z - cw) > self.value_rtol * scale)
            if bad.size:
                i = bad[0]
                raise ValueError(
                    f"The oracle {name} returned the value {float(z[i])!r} for cost vector {i}, "
                    f"but its decision's value c^T w is {float(cw[i])!r} ({bad.size} of "
                    f"{len(z)} rows disagree beyond the relative tolerance "
                    f"value_rtol={self.value_rtol:g}). Return the objective value of the "
                    f"returned decision for that cost vector, in the problem's sense "
                    f"(sense={self.sense!r}), or return the decision alone.")
        return W, cw

    def _call_rows(self, C):
        n_jobs = self.n_jobs
        if n_jobs in (None, 1) or C.shape[0] < 2:
            return _call_rows(self.oracle, C)
        from joblib import Parallel, delayed, effective_n_jobs

        k = min(effective_n_jobs(n_jobs), C.shape[0])
        if k < 2:
            return _call_rows(self.oracle, C)
        # Fail early with a clear message rather than joblib's generic one.
        _dump_oracle(self.oracle)
        chunks = np.array_split(C, k)
        starts = np.cumsum([0] + [len(chunk) for chunk in chunks[:-1]])
        parts = Parallel(n_jobs=k, prefer="processes")(
            delayed(_call_rows_carried)(_OracleCarrier(self.oracle), chunk, int(start), len(C))
            for chunk, start in zip(chunks, starts))
        return [o for part in parts for o in part]

    def _check_unread_pair(self, out, name, rows=None, row=None):
        """A 2-tuple that ``_split_output`` did not read as ``(w, z)`` (``(W, z)`` for
        ``rows`` cost vectors, batched): a pair whose parts have other shapes (a
        column ``w``, a length-1 ``z``) was reported as decisions "that are not an
        array of numbers (tuple)"."""
        try:
            shapes = [np.shape(part) for part in out]
        except ValueError:  # a ragged part: the checks below name it
            return
        if rows is None:
            # Two numbers are a decision of length 2; any other 2-tuple that
            # is not a pair fails the checks below, with a message about a tuple.
            if shapes == [(), ()] and self.n_costs == 2:
                return
            want, where = f"a decision of shape ({self.n_costs},) and a single number z, " \
                          f"the objective value of w", f" for cost vector {row}"
            fix = "flatten a column w with w.ravel(), and take z = float(z)"
            pair = "(w, z)"
        else:
            # Two rows are a batch of 2 decisions.
            if rows == 2 and shapes == [(self.n_costs,)] * 2:
                return
            want, where = (f"decisions of shape ({rows}, {self.n_costs}) and one value per "
                           f"row, shape ({rows},)"), ""
            fix = "reshape z with z.ravel()"
            pair = "(W, z)"
        raise ValueError(
            f"The oracle {name} returned a pair whose parts have shapes {shapes[0]} and "
            f"{shapes[1]}{where}; a pair {pair} must hold {want} ({fix}), or the oracle "
            f"returns the decisions alone.")

    @staticmethod
    def _as_array(value, name, what, row=None):
        where = "" if row is None else f" for cost vector {row}"
        if what in ("decisions", "a decision") and holds_kind(value, "c"):
            # numpy casts them to float with only a ComplexWarning: their
            # imaginary parts were dropped.
            raise ValueError(f"The oracle {name} returned {what} of complex numbers{where} "
                             f"(dtype {np.asarray(value).dtype}); it must return a decision "
                             "vector of real numbers.")
        try:
            if holds_kind(value, "c"):  # a value z (as a Python complex is refused)
                raise TypeError
            return np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            if what in ("values", "a value"):
                # The second item of a pair (w, z): a solver's status string
                # ('optimal') was met with "it must return a decision vector".
                want = ("the second item of a pair (W, z) must hold the objective values of "
                        "the decisions W" if what == "values" else
                        "the second item of a pair (w, z) must be the objective value of w")
                raise ValueError(f"The oracle {name} returned a pair whose second item{where} "
                                 f"is not {'numbers' if what == 'values' else 'a number'} "
                                 f"({type(value).__name__}: {_short_repr(value)}); {want}, "
                                 f"or the oracle returns the decisions alone.") from None
            raise ValueError(f"The oracle {name} returned {what}{where} that is not an array "
                             f"of numbers ({type(value).__name__}); it must return a "
                             f"decision vector of floats.") from None

    def _check_finite(self, W, z, name):
        if not np.isfinite(W).all():
            i = int(np.argwhere(~np.isfinite(W))[0][0])
            raise ValueError(f"The oracle {name} returned a decision containing NaN or "
                             f"infinity for cost vector {i}. It must return a finite optimal "
                             f"decision for every cost vector; check that the solver found "
                             f"an optimum (an infeasible or unbounded model, or a failed "
                             f"solve, often shows up this way).")
        if z is not None and not np.isfinite(z).all():
            i = int(np.argwhere(~np.isfinite(z))[0][0])
            raise ValueError(f"The oracle {name} returned a NaN or infinite value for cost "
                             f"vector {i}, or returned a value for some cost vectors but not "
                             f"others. Return (w, z) with the finite objective value of w "
                             f"for every cost vector, or w alone.")

    # ----------------------------------------------------------- pickling
    def __getstate__(self):
        state = super().__getstate__()
        state["oracle"] = _OracleCarrier(self.oracle)
        return state

    def __setstate__(self, state):
        oracle = state.get("oracle")
        if isinstance(oracle, _OracleCarrier):
            state = dict(state, oracle=oracle.oracle)
        self.__dict__.update(state)

    def to_dict(self):
        raise NotImplementedError(
            f"CallableProblem cannot be written to JSON: its oracle "
            f"{oracle_name(self.oracle)} is code. Save the model without it and pass the "
            f"problem again when loading.")
