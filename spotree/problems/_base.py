"""The decision-problem abstraction: a batch oracle for min/max c^T w over S."""

from __future__ import annotations

import numpy as np

from .._validation import check_costs

__all__ = ["DecisionProblem", "FiniteDecisions", "CallableProblem"]

_SENSES = ("min", "max")


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

    n_costs: int
    sense: str = "min"

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
        C = check_costs(C, n_costs=self.n_costs)
        if C.shape[0] == 0:
            return np.empty((0, self.n_costs)), np.empty(0)
        W, _ = self._solve(C)
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
        C = check_costs(C, n_costs=self.n_costs)
        W = check_costs(W, n_costs=self.n_costs, name="W")
        if W.shape[0] != C.shape[0]:
            raise ValueError(f"C and W must have the same number of rows; got "
                             f"{C.shape[0]} and {W.shape[0]}.")
        return np.einsum("ij,ij->i", C, W)

    def vertices(self):
        """Candidate optimal decisions as a (K, n_costs) array, or None.

        When the problem can list a finite set of decisions that always
        contains an optimal one (the vertices of a polytope, the paths of a
        graph), it is returned here and :meth:`solve_vertices` gives the same
        answers as :meth:`solve` up to ties. ``None`` means no list is
        available (too many vertices, or an unknown feasible set).
        """
        if not hasattr(self, "_vertex_cache"):
            V = self._vertices()
            if V is not None:
                V = np.ascontiguousarray(V, dtype=np.float64)
                V.setflags(write=False)
            self._vertex_cache = V
        return self._vertex_cache

    def solve_vertices(self, C, V=None):
        """Solve a batch by enumeration over the vertex list.

        Ties are broken deterministically towards the vertex listed first
        (lowest row index of ``vertices()``).

        Returns
        -------
        W, z, index : ndarrays of shapes (m, d), (m,), (m,)
        """
        V = self.vertices() if V is None else V
        if V is None:
            raise ValueError(f"{type(self).__name__} has no vertex list.")
        C = check_costs(C, n_costs=self.n_costs)
        G = C @ V.T
        k = np.argmin(G, axis=1) if self.sense == "min" else np.argmax(G, axis=1)
        W = V[k]
        return W, np.einsum("ij,ij->i", C, W), k

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

    # ------------------------------------------------------------- helpers
    def __getstate__(self):
        state = self.__dict__.copy()
        # Solver handles and caches are rebuilt lazily on the other side.
        for key in list(state):
            if key.startswith("_model") or key == "_vertex_cache":
                del state[key]
        return state

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

    def __init__(self, V, sense="min"):
        # A private copy: vertices() marks its array read-only.
        V = check_costs(V, name="V", allow_empty=False).copy()
        self.V = V
        self.sense = _check_sense(sense)
        self.n_costs = V.shape[1]

    def _vertices(self):
        return self.V

    def _solve(self, C):
        W, z, _ = self.solve_vertices(C)
        return W, z

    def describe_decision(self, w):
        """``"option k"``: the index of the candidate row equal to ``w``."""
        k = int(np.argmin(np.abs(self.V - np.asarray(w)[None, :]).sum(axis=1)))
        return f"option {k}"

    def to_dict(self):
        return {"type": "finite", "decisions": self.V.tolist(), "sense": self.sense}

    def __repr__(self):
        return (f"FiniteDecisions(n_decisions={self.V.shape[0]}, n_costs={self.n_costs}, "
                f"sense={self.sense!r})")


class CallableProblem(DecisionProblem):
    """Wrap any user oracle as a batch decision problem.

    Parameters
    ----------
    oracle : callable
        ``oracle(c) -> w`` for one cost vector of shape (d,), or, with
        ``batched=True``, ``oracle(C) -> W`` for a matrix of shape (m, d).
        It must return optimal decisions in the problem's sense; the values
        are computed as ``c^T w``. The callable must be picklable (a
        module-level function or class instance) for parallel fits.
    n_costs : int
        Dimension of the cost vectors.
    sense : {"min", "max"}, default="min"
    batched : bool, default=False
        Whether ``oracle`` takes a whole batch at once.
    vertices : array-like of shape (K, d) or None, default=None
        An optional list of candidate decisions that always contains an
        optimal one; enables the fast split search.

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

    def __init__(self, oracle, n_costs, sense="min", batched=False, vertices=None):
        if not callable(oracle):
            raise TypeError(f"oracle must be callable; got {type(oracle).__name__}.")
        if (not isinstance(n_costs, (int, np.integer)) or isinstance(n_costs, bool)
                or n_costs < 1):
            raise ValueError(f"n_costs must be a positive int; got {n_costs!r}.")
        self.oracle = oracle
        self.n_costs = int(n_costs)
        self.sense = _check_sense(sense)
        self.batched = bool(batched)
        self.V = None if vertices is None else check_costs(
            vertices, n_costs=self.n_costs, name="vertices", allow_empty=False).copy()

    def _vertices(self):
        return self.V

    def _solve(self, C):
        if self.batched:
            W = np.asarray(self.oracle(C), dtype=np.float64)
        else:
            W = np.array([np.asarray(self.oracle(c), dtype=np.float64) for c in C])
        if W.shape != C.shape:
            raise ValueError(f"oracle returned decisions of shape {W.shape}; expected "
                             f"{C.shape}.")
        return W, np.einsum("ij,ij->i", C, W)
