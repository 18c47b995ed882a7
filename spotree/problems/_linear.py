"""LinearProgram: linear and mixed-integer programs solved with HiGHS.

:class:`LinearProgram` holds the data of ``min`` (or ``max``) ``c^T w`` over
``S = {w : A_ub w <= b_ub, A_eq w = b_eq, lo <= w <= hi, w_j integer for
integrality[j] == 1}`` as plain arrays (dense or scipy.sparse), and
internally in HiGHS's row-bound form ``rlo <= A w <= rhi``. The HiGHS
plumbing is in :mod:`._highs`, the basis cache in :mod:`._basis_cache`, the
vertex enumeration in :mod:`._vertex_enum`.
"""

from __future__ import annotations

import numbers
import os
import threading
import time
from concurrent.futures import wait
from typing import NamedTuple

import numpy as np

from . import _highs
from ._base import DecisionProblem, _check_sense, current_session, null_space_basis
from ._basis_cache import DenseCache, FactoredCache
from ._lp_data import (_check_matrix, _check_names, _check_time_limit, _check_vector,
                       _matrix_to_json, _parse_bounds, _rows_from_views, read_model_file)
from ._vertex_enum import integer_points, lp_vertices, mixed_points

__all__ = ["LinearProgram"]


class _InfeasibleError(ValueError):
    """Raised for an empty feasible set (a ValueError, so users catch that)."""


class CheckTimeLimitError(ValueError):
    """The feasibility and boundedness checks did not finish within ``check_time_limit``.

    A ValueError, so users catch that; its own class lets the readers of spec
    and model files (which set the limit themselves) say how to lift it.
    """


class _BatchStopped(Exception):
    """Ends a block of a threaded batch whose caller has stopped waiting."""


# Guards the lazy creation of an instance's per-thread state.
_LOCAL_LOCK = threading.Lock()


# ------------------------------------------------------------ the problem
class LinearProgram(DecisionProblem):
    """A bounded linear or mixed-integer program, solved with HiGHS.

    ``S = {w in R^d : A_ub w <= b_ub, A_eq w = b_eq, lo <= w <= hi}``, with
    ``w_j`` integer where ``integrality[j] == 1``. The arguments follow
    :func:`scipy.optimize.linprog`; the matrices may be scipy.sparse, and
    stay sparse. :meth:`from_file` reads an MPS or LP file.

    The feasible set must be nonempty and bounded, so that every cost vector
    has a finite optimum. Both are checked at construction with HiGHS: one
    solve with a zero objective for feasibility; then, over the LP
    relaxation, one solve that pushes every variable with one infinite
    bound towards it at once, and two solves per free variable. A variable
    that can grow without limit makes the problem unbounded. These checks
    can take long for a hard MILP (proving a small 0/1 program infeasible
    can take minutes): ``check_time_limit`` bounds their total time.

    Parameters
    ----------
    A_ub : array-like or scipy.sparse matrix of shape (n_ub, d) or None, default=None
        Inequality constraint matrix.
    b_ub : array-like of shape (n_ub,) or None, default=None
        Inequality right-hand side; required with ``A_ub``.
    A_eq : array-like or scipy.sparse matrix of shape (n_eq, d) or None, default=None
        Equality constraint matrix.
    b_eq : array-like of shape (n_eq,) or None, default=None
        Equality right-hand side; required with ``A_eq``.
    bounds : (lo, hi) pair or sequence of d pairs, default=(0, None)
        Bounds of the variables, as in :func:`scipy.optimize.linprog`: one
        pair for all variables (also as a sequence of one pair, when the
        matrices give d) or one pair per variable; ``None`` (or an infinity
        of the right sign) means no bound.
    integrality : array-like of shape (d,) of {0, 1}, 0, 1 or None, default=None
        1 marks an integer variable; None means a pure LP. A single 0 or 1
        applies to every variable, as in :func:`scipy.optimize.linprog`.
        Integer variables come back as exact integers.
    sense : {"min", "max"}, default="min"
        ``"max"`` is solved as the minimization of ``-c``.
    basis_cache : bool, default=True
        For pure LPs, reuse optimal bases across cost vectors (see Notes).
        Ignored for MILPs.
    variable_names : sequence of d str or None, default=None
        Names of the variables (the cost columns), for example the column
        names of a model file. Stored, written to JSON and used to describe
        decisions; a DataFrame of costs whose columns are these names in
        another order is refused (costs are read by position).
    check_time_limit : float or None, default=None
        Seconds allowed for the feasibility and boundedness checks at
        construction (None: no limit). When they do not finish in time, a
        ValueError says so. Problems built from specs and saved models get a
        finite default (see :func:`~spotree.problems.problem_from_dict`), as
        does an MPS or LP file given to ``spotree fit --problem``;
        :meth:`from_file` sets none unless given one.
    n_jobs : int or None, default=None
        Threads that solve a large batch (-1: one per CPU this process may
        use, as joblib counts them; None: 1). The batch is cut into
        contiguous blocks of at least 64 cost vectors, one per thread, each
        with its own HiGHS model and basis cache (HiGHS runs without holding
        the GIL). Each block starts afresh (see Notes, "Reproducibility"),
        so the decisions depend on the number of blocks: against
        ``n_jobs=None``, their last bits (and, among tied optimal vertices,
        which one is returned) may differ, not the optimal values beyond
        rounding. A runtime setting, not part of the
        problem: not written by :meth:`to_dict`. Leave it at None inside
        processes or threads that already run in parallel.

    Attributes
    ----------
    n_costs : int
        Number of variables d, inferred from the matrices or the bounds.
    A_ub, b_ub, A_eq, b_eq : ndarray, scipy.sparse matrix or None
        The validated constraints (a matrix with zero rows is stored as
        None; a sparse matrix is stored in CSR form).
    bounds : tuple or list of tuple
        The validated bounds, ``None`` for an infinite bound.
    integrality : ndarray of shape (d,) or None
    is_milp : bool
        Whether some variable is integer.
    variable_names : list of str or None
    n_jobs : int or None

    Raises
    ------
    ValueError
        For malformed arguments, an empty or unbounded feasible set, or
        checks that did not finish within ``check_time_limit``.

    Notes
    -----
    **Solving.** Each thread that solves gets its own HiGHS model, created
    on first use and dropped on pickling (and rebuilt on the other side);
    each cost vector only changes the objective, so every optimal basis
    stays feasible. A pure LP is re-solved by the primal simplex method from
    the previous basis when the new cost vector points nearly the same way
    as the previous one; otherwise either by the primal method from the
    optimal basis of the batch's mean direction (solved when a batch of at
    least 16 rows of an LP with factored certificates, see below, first
    needs it) or by the dual method from scratch, whichever has lately cost
    fewer simplex iterations on this thread's model (see
    :class:`~spotree.problems._highs.HighsModel`). HiGHS runs with one
    thread: with its default setting it reads the CPU topology on every
    run, which doubles the cost of a small LP.

    **Reproducibility.** Every call of :meth:`solve` (and of
    :meth:`solve_or_bound`) starts from a clean state: the warm starts and
    the basis cache of earlier calls are dropped (each ``n_jobs`` block
    starts afresh too), so its decisions depend only on the batch, bit for
    bit: the same batch solved twice, or after other batches, by this
    instance, a copy or threads sharing it (each thread has its own state),
    returns the same ``W`` and ``z``, also among tied optimal vertices (the
    choice of start counts simplex iterations rather than measuring time,
    so it is the same on every run). Only the same batch: a row solved in
    another batch (alone, or among other rows) starts from other bases and
    may get another of its tied optimal vertices (the same value up to
    rounding). A fit of spotree's estimators is the
    exception: its many related batches keep their warm starts from one
    batch to the next, from a clean start at the beginning of the fit, so a
    fit too depends only on its data. With ``n_jobs`` threads inside such a
    fit, which thread solved which block before can change which of tied
    optimal vertices is returned and the last bits of a decision (not the
    optimal values beyond rounding). The clean start costs a solve from
    scratch per call and a basis cache rebuilt from the batch's own rows:
    single-row calls took 1.2 to 1.4 times as long as when they followed
    each other, batches of 50 to 600 rows 1.0 to 1.2 times. A MILP that
    :meth:`solve` answers from its vertex list (see "Vertices") gets, for
    each row, the lexicographically smallest optimal decision, whatever the
    batch and whatever was solved before.

    **Basis cache** (pure LPs). After each HiGHS solve, the optimal basis is
    turned into a certificate that tests whether it is also optimal for
    other cost vectors: for small LPs an explicit matrix ``G`` with ``G c``
    the signed reduced costs of the nonbasic variables (all cached bases
    are tested in one product), for larger ones the sparse LU factors of
    the basis (a test costs two triangular solves and a sparse product per
    cost vector). Primal feasibility does not depend on ``c``. A batch is
    first tested against the most recently used basis, then against the
    cached bases (at most ``basis_cache_size``, least recently used evicted;
    only the 8 most recent for factored certificates); only the rows that no
    basis certifies go to HiGHS, and each new basis is tried on the rows
    that follow it. The tolerances only absorb rounding, so values agree
    with HiGHS's to about ``1e-10`` relative; among tied optimal vertices
    the returned one depends on the batch's rows and their order. When
    recent HiGHS calls stop paying for themselves (cached bases answer fewer rows than
    go to HiGHS, e.g. uncorrelated costs on a large LP), only every 16th new
    basis is factorized. LPs with more than 50,000 rows are solved without
    the cache. The certificate tests run in compiled loops and sparse
    solves, not in multi-threaded BLAS, so they leave the process's BLAS
    thread limits alone. Each thread has its own cache, emptied at the
    start of each call (see "Reproducibility"); all are dropped on pickling.

    **Networks.** A pure shortest path written as an LP, ``A_eq`` a
    node-edge incidence matrix, ``b_eq`` with one -1 (the source) and one
    +1 (the target), every bound ``0 <= w_j`` with an upper bound of at
    least 1, and no other rows (see
    :meth:`ShortestPath.from_incidence <spotree.problems.ShortestPath.from_incidence>`
    for the reading of ``A``, including columns with a single nonzero),
    is recognized on first use and solved without HiGHS: by the compiled
    dynamic program of :meth:`ShortestPath.from_edges
    <spotree.problems.ShortestPath.from_edges>` when the graph is acyclic
    (any costs; its paths are then the LP's vertices, and :meth:`vertices`
    lists them), and by a compiled label-setting (Dijkstra) solver when it
    has cycles and the costs are non-negative. A cost vector with a
    negative cost on an edge of a cycle or of a source-target path of a
    cyclic graph goes to HiGHS (the LP may then send flow around a cycle).
    Values are HiGHS's up to rounding; among tied optimal paths the
    compiled solvers' rules apply. The problem, its attributes and
    :meth:`to_dict` are unchanged.

    **Vertices.** :meth:`vertices` lists the vertices of a pure LP by brute
    force: every choice of ``d - rank(A_eq)`` active inequalities (rows of
    ``A_ub`` and finite variable bounds) is solved and kept when feasible.
    It runs when the number of choices is at most ``max_bases_enumerated``
    (200,000) and returns None otherwise, or when there are more than
    ``max_vertices`` vertices. For a MILP whose variables are all integer,
    the feasible integer points of the bounding box (of the LP relaxation,
    found with HiGHS where a bound is infinite) are listed under the same
    limits (every optimum is attained at one of them). For a mixed-integer
    program, fixing the integer variables at an integer point of their box
    leaves an LP in the continuous ones, a slice, and every optimum is
    attained at a vertex of a slice: the vertices of all nonempty slices are
    listed, enumerated as above with the same choices of active inequalities
    in every slice. It runs when the integer points times the choices are at
    most ``max_bases_enumerated``, and returns None otherwise or beyond
    ``max_vertices`` points (the list may hold points of a slice that are
    not vertices of the convex hull of ``S``; they are feasible, and never
    the only optimum). The points are deduplicated and sorted
    lexicographically, so :meth:`solve_vertices` breaks ties towards the
    lexicographically smallest optimal decision (a vertex of the LP, an
    integer point, or a vertex of a slice, so always in the list).

    A MILP's :meth:`solve` scans that list instead of calling HiGHS (the
    same rule: values are HiGHS's up to rounding, ties go to the
    lexicographically smallest optimal decision) when it is cheap: at most
    1,000,000 entries (vertices times ``n_costs``) and, for a mixed-integer
    program, at most 10,000 integer points times choices to enumerate.
    Whether it is is decided once per instance, at the first solve (which
    makes the list, once, also when threads solve at once, and not again
    after a decline): for the programs measured, 2 ms (53 points of a
    4-variable mixed program) to 0.16 s (677 of the 131,072 points of 17
    binaries), a row then costing microseconds where HiGHS took 0.4 to
    15 ms. A network MILP keeps its compiled solver; a pure LP, HiGHS and
    the basis cache.

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

    #: Largest number of candidate bases (or integer points; or integer
    #: points times bases of a slice, for a mixed-integer program) that
    #: :meth:`vertices` enumerates.
    max_bases_enumerated = 200_000
    #: A MILP's :meth:`solve` scans its vertex list instead of calling HiGHS
    #: while n_vertices * n_costs is at most this (see Notes, "Vertices").
    _max_vertex_scan = 1_000_000
    #: ... and, for a mixed-integer program, while listing takes at most this
    #: much work (integer points times choices, as max_bases_enumerated counts).
    _max_listed_work = 10_000
    #: Number of optimal bases kept by the basis cache.
    basis_cache_size = 64
    #: Rows per block of the cached solve; bounds the work per cache miss.
    _chunk = 2048
    #: Explicit certificates while d * (d + n_rows) is at most this.
    _dense_certificate_size = 4096
    #: No basis cache above this many rows.
    _max_cached_rows = 50_000
    #: With n_jobs, each thread gets at least this many cost vectors.
    _min_rows_per_thread = 64
    #: Batches of at least this many rows set a reference basis first.
    _min_reference_rows = 16

    def __init__(self, A_ub=None, b_ub=None, A_eq=None, b_eq=None, bounds=(0, None),
                 integrality=None, sense="min", basis_cache=True, *, variable_names=None,
                 check_time_limit=None, n_jobs=None):
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
        if (kind == "list" and len(stored_bounds) == 1 and len(set(sizes.values())) == 1
                and next(iter(sizes.values())) > 1):
            # One pair in a list applies to every variable, as linprog reads
            # bounds=[(0, None)] (it was refused: "bounds has 1").
            kind, lo, hi, stored_bounds = "pair", lo[0], hi[0], stored_bounds[0]
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
            if integ is not None and integ.shape == ():
                integ = np.full(d, integ)  # one value for every variable, as linprog reads it
            if integ is None or integ.shape != (d,) or not np.isin(integ, (0.0, 1.0)).all():
                raise ValueError(f"The 'integrality' parameter of LinearProgram must be None, "
                                 f"0 or 1 (for every variable), or an array of {d} values in "
                                 f"{{0, 1}}. Got {integrality!r} instead.")
            integrality = integ.astype(np.int8)
        if not isinstance(basis_cache, (bool, np.bool_)):
            raise ValueError(f"The 'basis_cache' parameter of LinearProgram must be a bool. "
                             f"Got {basis_cache!r} instead.")
        names = _check_names(variable_names, d)
        limit = _check_time_limit(check_time_limit)

        A, rlo, rhi = _rows_from_views(A_ub, b_ub, A_eq, b_eq, d)
        self._set(A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, stored_bounds=stored_bounds,
                  lo=lo, hi=hi, A=A, rlo=rlo, rhi=rhi, integrality=integrality,
                  sense=_check_sense(sense), basis_cache=bool(basis_cache), names=names)
        self.n_jobs = n_jobs
        self._n_threads()  # validates n_jobs
        _highs.warn_dropped(A, rlo, rhi, stacklevel=2)
        self._check_feasible_and_bounded(limit)

    def _set(self, *, A_ub, b_ub, A_eq, b_eq, stored_bounds, lo, hi, A, rlo, rhi,
             integrality, sense, basis_cache, names):
        d = A.shape[1]
        self.A_ub, self.b_ub, self.A_eq, self.b_eq = A_ub, b_ub, A_eq, b_eq
        self.bounds = stored_bounds
        self.integrality = integrality
        self.sense = sense
        self.basis_cache = basis_cache
        self.variable_names = names
        self.n_jobs = None
        self.n_costs = d
        self.is_milp = integrality is not None and bool(integrality.any())
        self._lo = np.broadcast_to(lo, (d,)).astype(np.float64)
        self._hi = np.broadcast_to(hi, (d,)).astype(np.float64)
        # The row-bound form rlo <= A w <= rhi that HiGHS and the basis cache use.
        self._A, self._rlo, self._rhi = A, rlo, rhi
        self._model_local = threading.local()

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._model_local = threading.local()

    # ------------------------------------------------------------ from file
    @classmethod
    def from_file(cls, path, sense=None, *, basis_cache=True, check_time_limit=None,
                  n_jobs=None):
        """Read an LP or MILP from an MPS or LP file (through HiGHS's readers).

        Pyomo, gurobipy, PuLP, CVXPY and JuMP all write these formats. The
        file's objective is ignored (spotree supplies the cost vectors); its
        constraints, bounds and integer columns define the feasible set, and
        its column names are kept in :attr:`variable_names`, in the file's
        column order, which is the order of the cost vectors. Ranged,
        equality, "at least" and "at most" rows and bounds of every kind are
        taken as they are (free rows, such as extra objective rows of an MPS
        file, are dropped); the linprog-style attributes ``A_ub``/``A_eq``
        are sparse views of them. An MPS file gives ranged rows in its
        ``RANGES`` section; HiGHS's LP reader takes each row as ``terms sense
        constant`` only, and refuses a double-sided row such as
        ``-3 <= x - y <= 0.5`` (write it as two rows); the error names the
        line.

        An MPS file marks integer columns between ``MARKER`` lines; a column
        so marked without a bound in the ``BOUNDS`` section is binary (bounds
        0 and 1), the MPS convention HiGHS follows (so do most solvers). A
        writer that means a general integer must write its bounds (PuLP
        does); check :attr:`bounds` after reading.

        Parameters
        ----------
        path : str or path-like
            An ``.mps`` or ``.lp`` file (``.gz`` compressed files too, when
            HiGHS was built with zlib).
        sense : {"min", "max"} or None, default=None
            The sense of the decision problem; None takes the file's own
            objective sense.
        basis_cache : bool, default=True
        check_time_limit : float or None, default=None
        n_jobs : int or None, default=None
            See :class:`LinearProgram`.

        Returns
        -------
        LinearProgram

        Raises
        ------
        FileNotFoundError
            If the file does not exist.
        ValueError
            If the file cannot be parsed, has entries that HiGHS's reader
            would drop or misread (a row or column name that is not defined,
            a value given twice, a value field that is not a number), has
            semi-continuous columns, or describes an infeasible or unbounded
            problem; the message starts with the path. The objective sense an
            MPS file states in its OBJSENSE section is kept as written.

        Examples
        --------
        >>> import os, tempfile
        >>> from spotree.problems import LinearProgram
        >>> text = '''Maximize
        ...  obj: 3 beans + 2 corn
        ... Subject To
        ...  land: beans + corn <= 10
        ...  labour: 2 beans + corn <= 15
        ... End
        ... '''
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = os.path.join(tmp, "farm.lp")
        ...     with open(path, "w") as fh:
        ...         _ = fh.write(text)
        ...     farm = LinearProgram.from_file(path)
        >>> farm.variable_names, farm.sense
        (['beans', 'corn'], 'max')
        >>> W, z = farm.solve([[3.0, 2.0]])
        >>> float(z[0])
        25.0
        """
        path = os.fspath(path)
        if sense is not None:
            _check_sense(sense)
        if not isinstance(basis_cache, (bool, np.bool_)):
            raise ValueError(f"The 'basis_cache' parameter of LinearProgram.from_file must be "
                             f"a bool. Got {basis_cache!r} instead.")
        limit = _check_time_limit(check_time_limit, "LinearProgram.from_file")
        parts = read_model_file(path)
        path = parts.pop("path")
        if sense is not None:
            parts["sense"] = sense
        self = cls.__new__(cls)
        self._set(**parts, basis_cache=bool(basis_cache))
        self.n_jobs = n_jobs
        self._n_threads()  # validates n_jobs
        _highs.warn_dropped(self._A, self._rlo, self._rhi, stacklevel=2)
        try:
            self._check_feasible_and_bounded(limit)
        except ValueError as exc:
            raise type(exc)(f"{path}: {exc}") from None
        return self

    # ----------------------------------------------------------- model data
    @property
    def n_rows(self):
        """Number of constraint rows (in the row-bound form: a ranged row counts once)."""
        return self._A.shape[0]

    def _state(self):
        """This thread's HiGHS models and basis cache (a ``threading.local``)."""
        local = self.__dict__.get("_model_local")
        if local is None:
            with _LOCAL_LOCK:
                local = self.__dict__.get("_model_local")
                if local is None:
                    local = self._model_local = threading.local()
        return local

    def _model(self):
        """This thread's HiGHS model of the problem (a MILP keeps its integrality)."""
        state = self._state()
        model = getattr(state, "model", None)
        if model is None:
            model = state.model = _highs.HighsModel(
                self._A, self._lo, self._hi, self._rlo, self._rhi,
                self.integrality if self.is_milp else None)
        return model

    def _relaxed_model(self):
        """This thread's HiGHS model of the LP relaxation."""
        if not self.is_milp:
            return self._model()
        state = self._state()
        model = getattr(state, "relaxed", None)
        if model is None:
            model = state.relaxed = _highs.HighsModel(self._A, self._lo, self._hi,
                                                      self._rlo, self._rhi)
        return model

    def _check_feasible_and_bounded(self, time_limit=None):
        start = time.monotonic()

        def remaining(what):
            if time_limit is None:
                return None
            left = time_limit - (time.monotonic() - start)
            if left <= 0:
                timeout(what)
            return left

        def timeout(what):
            raise CheckTimeLimitError(
                f"The {what} of the LinearProgram did not finish within the check time "
                f"limit of {time_limit:g} s. Building a LinearProgram runs HiGHS to check "
                "that the feasible set is nonempty and bounded; pass a larger "
                "'check_time_limit' (None for no limit) if the problem comes from a source "
                "you trust.")

        d = self.n_costs
        kind = "mixed-integer program" if self.is_milp else "linear program"
        model = self._model()
        status, _ = model.solve(np.zeros(d), remaining("feasibility check"))
        if status == _highs.TIME_LIMIT:
            timeout("feasibility check")
        if status in (_highs.INFEASIBLE, _highs.INFEASIBLE_OR_UNBOUNDED):
            raise _InfeasibleError(f"The LinearProgram is infeasible: no w satisfies the "
                                   f"constraints and bounds of this {kind} (HiGHS status: "
                                   f"{model.status_name()}).")
        if status != _highs.OPTIMAL:
            raise ValueError(f"HiGHS could not decide whether the LinearProgram is feasible "
                             f"(status: {model.status_name()}).")
        # Boundedness of S, on the LP relaxation (for rational data a nonempty
        # MILP is bounded iff its relaxation is). Minimizing sum_j s_j w_j
        # over the variables with one infinite bound (s_j = +1 when it is the
        # lower one, -1 when the upper) is unbounded iff one of them can grow
        # towards its infinite side: along a recession direction y every term
        # s_j y_j is <= 0, and < 0 where y moves w_j towards that side. Free
        # variables are checked one by one; when the combined check fails,
        # the one-sided variables too, to name the culprit.
        relax = model if not self.is_milp else self._relaxed_model()
        inf_lo, inf_hi = np.isinf(self._lo), np.isinf(self._hi)
        one_sided = inf_lo != inf_hi
        combined_failed = None
        candidates = []
        if one_sided.any():
            c = np.where(one_sided & inf_lo, 1.0, 0.0) - np.where(one_sided & inf_hi, 1.0, 0.0)
            status, _ = relax.solve(c, remaining("boundedness check"))
            if status == _highs.TIME_LIMIT:
                timeout("boundedness check")
            if status != _highs.OPTIMAL:
                combined_failed = relax.status_name()
                candidates = np.flatnonzero(one_sided)
        candidates = sorted(set(candidates) | set(np.flatnonzero(inf_lo & inf_hi)))
        for j in candidates:
            for side, infinite, sgn in (("below", inf_lo[j], 1.0), ("above", inf_hi[j], -1.0)):
                if not infinite:
                    continue
                c = np.zeros(d)
                c[j] = sgn
                status, _ = relax.solve(c, remaining("boundedness check"))
                if status == _highs.TIME_LIMIT:
                    timeout("boundedness check")
                if status in (_highs.UNBOUNDED, _highs.INFEASIBLE_OR_UNBOUNDED):
                    # Models from files are named by their column names.
                    name = ("" if self.variable_names is None
                            else f" ({self.variable_names[j]!r})")
                    raise ValueError(
                        f"The LinearProgram is unbounded: variable w[{j}]{name} is unbounded "
                        f"{side} on the feasible set, so some cost vectors have no finite "
                        "optimum. Add a bound for it in 'bounds' or constraints that "
                        "limit it.")
                if status != _highs.OPTIMAL:
                    raise ValueError(f"HiGHS could not decide whether w[{j}] is bounded "
                                     f"{side} (status: {relax.status_name()}).")
        if combined_failed is not None:
            # The combined check failed but no single variable is unbounded:
            # HiGHS reported a status it could not settle.
            raise ValueError(f"HiGHS could not decide whether the LinearProgram is bounded "
                             f"(status: {combined_failed}).")

    # ------------------------------------------------------------- networks
    def _network(self):
        """The recognized path network (see Notes), or None; built on first use."""
        net = self.__dict__.get("_model_network", False)
        if net is False:
            net = self._model_network = _recognize_network(self)
        return net

    def compiled_oracle(self):
        """The compiled path solver when the LP is a recognized network, else None.

        See Notes, "Networks".
        """
        net = self._network()
        return None if net is None else net.oracle

    # ---------------------------------------------------------------- solve
    def _solve(self, C):
        net = self._network()
        if net is None and self.is_milp:
            listed = self._listed()
            if listed is not None:
                # Ties: the first optimal point of the sorted list, so the
                # lexicographically smallest optimal decision (see Notes).
                V, width = listed
                W = V[self._best_vertices(C, V, width)]
                return W, np.einsum("ij,ij->i", C, W)
        Cm = C if self.sense == "min" else -C
        if net is None:
            W = self._solve_highs(Cm)
        else:
            from ._compiled import solve_rows

            W = np.empty_like(Cm)
            z = solve_rows(net.oracle, Cm, W)
            gave_up = np.isnan(z)
            if gave_up.any():
                # Negative costs on a graph with cycles: a min-cost flow.
                W[gave_up] = self._solve_highs(Cm[gave_up])
        return W, np.einsum("ij,ij->i", C, W)

    def _fresh_start(self, session):
        """Start this thread's solves afresh, unless they belong to ``session``.

        Drops the warm starts (HiGHS's basis, the last direction, the far
        starts' work) and the basis cache, in place: the next batch is solved
        as on a new instance, so that its decisions depend on the batch alone
        (see Notes, "Reproducibility"). Inside a ``solver_session`` (a fit),
        only its first batch on this thread starts afresh.
        """
        state = self._state()
        if session is not None and getattr(state, "session", None) is session:
            return
        state.session = session
        model, cache = getattr(state, "model", None), getattr(state, "cache", None)
        if model is not None:
            model.reset()
        if cache is not None:
            cache.clear()

    def _solve_highs(self, Cm):
        m = Cm.shape[0]
        n_threads = min(self._n_threads(), m // self._min_rows_per_thread)
        session = current_session()
        if n_threads > 1:
            # Contiguous blocks keep consecutive (correlated) rows together.
            bounds = np.linspace(0, m, n_threads + 1).astype(int)
            stop = threading.Event()

            def block(k):
                state = self._state()
                state.stop = stop
                try:
                    # The caller's session: a fit's blocks keep their threads' state.
                    self._fresh_start(session)
                    return self._solve_serial(Cm[bounds[k]:bounds[k + 1]], bounds[k])
                finally:
                    state.stop = None

            pool = self._pool(n_threads)
            futures = [pool.submit(block, k) for k in range(n_threads)]
            try:
                W = np.vstack([f.result() for f in futures])
            except BaseException:
                # Ctrl-C, or an error in one block: the other blocks stop at
                # their next row instead of keeping the threads (and the
                # next batch, queued behind them) busy to their last row.
                stop.set()
                for f in futures:
                    f.cancel()
                wait(futures)
                raise
        else:
            self._fresh_start(session)
            W = self._solve_serial(Cm, 0)
        if self.is_milp:
            # HiGHS returns integer variables only up to its integrality
            # tolerance (-0.9999999999999999 for -1 was seen): snap them to
            # the integers they stand for, as the vertex list has them
            # (+ 0.0 turns -0. into 0.).
            cols = self.integrality != 0
            W[:, cols] = np.round(W[:, cols]) + 0.0
        return W

    def _solve_serial(self, Cm, offset):
        """Minimizers for the rows of Cm in this thread (row i is cost vector offset + i)."""
        if (not self.is_milp and Cm.shape[0] >= self._min_reference_rows
                and self.n_costs * (self.n_costs + self.n_rows) > self._dense_certificate_size):
            # Far rows of the batch start from the optimum of its mean
            # direction (see HighsModel.solve): one solve more, when the
            # first far row reaches HiGHS. Not for small LPs (explicit
            # certificates), whose few far rows cost less than that solve.
            U = Cm / np.maximum(np.abs(Cm).sum(axis=1), 1e-300)[:, None]
            self._model().defer_reference(U.mean(axis=0))
        if self.basis_cache and not self.is_milp and self.n_rows <= self._max_cached_rows:
            return self._solve_cached(Cm, offset)
        W = np.empty_like(Cm)
        model = self._model()
        for i in range(Cm.shape[0]):
            W[i] = self._solve_one(model, Cm[i], offset + i)
        return W

    def _n_threads(self):
        n_jobs = getattr(self, "n_jobs", None)
        if n_jobs is None:
            return 1
        if (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral)
                or n_jobs == 0 or n_jobs < -1):
            raise ValueError(f"The 'n_jobs' parameter of LinearProgram must be None, -1 or a "
                             f"positive int. Got {n_jobs!r} instead.")
        if n_jobs == -1:
            # The CPUs this process may use (affinity, a container's quota), as
            # joblib's n_jobs=-1 counts them; not all the machine's.
            from joblib import cpu_count

            return max(1, int(cpu_count()))
        return int(n_jobs)

    def _pool(self, n_threads):
        """A thread pool kept on the instance (not pickled), so that its threads
        keep their HiGHS models and basis caches from one batch to the next.

        Made once with ``n_jobs`` threads (started as needed), never replaced:
        a pool grown for a larger batch shut down the one that another thread
        sharing the problem had just been handed ("cannot schedule new
        futures after shutdown").
        """
        with _LOCAL_LOCK:
            pool = self.__dict__.get("_model_pool")
            if pool is None or pool[0] < n_threads:
                from concurrent.futures import ThreadPoolExecutor

                n = max(n_threads, self._n_threads())
                pool = self._model_pool = (n, ThreadPoolExecutor(
                    n, thread_name_prefix="spotree-lp"))
        return pool[1]

    def _solve_one(self, model, c, i):
        stop = getattr(self._state(), "stop", None)
        if stop is not None and stop.is_set():
            raise _BatchStopped
        status, w = model.solve(c)
        if w is None:
            raise ValueError(f"HiGHS did not find an optimal solution for cost vector {i} "
                             f"(status: {model.status_name()}).")
        return w

    def _basis_cache(self):
        """This thread's basis cache (created on first use)."""
        state = self._state()
        cache = getattr(state, "cache", None)
        if cache is None:
            d, m = self.n_costs, self.n_rows
            lo_x = np.concatenate([self._lo, self._rlo])
            hi_x = np.concatenate([self._hi, self._rhi])
            if d * (d + m) <= self._dense_certificate_size:
                full = np.hstack([self._A.toarray(), -np.eye(m)])
                cache = DenseCache(self.basis_cache_size, full, lo_x, hi_x)
            else:
                cache = FactoredCache(self.basis_cache_size, self._A, lo_x, hi_x)
            state.cache = cache
        return cache

    def _solve_cached(self, Cm, offset=0):
        cache = self._basis_cache()
        model = self._model()
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
                # Testing more stored bases costs more than it saves once the
                # cache stopped paying for itself (factored certificates).
                if rest.size and len(cache) > 1 and (cache.paying()
                                                     or isinstance(cache, DenseCache)):
                    owner[rest] = cache.check_all(sub[rest], sc[rest])
                hit = owner >= 0
                if hit.any():
                    # Copy now: a slot may be overwritten by a later miss.
                    Wsub[hit] = cache.vertices_of(owner[hit])
                    cache.touch(np.unique(owner[hit]))
                    cache.mru = int(owner[hit][-1])
                    cache.record(hits=int(hit.sum()))
            pending = np.flatnonzero(owner < 0)
            factored = isinstance(cache, FactoredCache)
            while pending.size:
                i = pending[0]
                w = self._solve_one(model, sub[i], offset + start + i)
                Wsub[i] = w
                pending = pending[1:]
                cache.record(calls=1)
                if factored:
                    pending = self._follow_basis(cache, model, w, sub, sc, Wsub, pending)
                    continue
                # When cached bases are rarely reused (uncorrelated costs on a
                # large LP), certificates cost more than they save: then only
                # every 16th HiGHS basis is added, to notice when reuse returns.
                if not cache.paying():
                    cache.skipped += 1
                    if cache.skipped % 16:
                        continue
                entry = self._certificate(model, cache, w)
                if entry is None or not pending.size:
                    if entry is not None:
                        cache.add(entry, w)
                    continue
                k = cache.add(entry, w)
                pending = self._try_new_basis(cache, k, w, sub, sc, Wsub, pending)
        return W

    @staticmethod
    def _try_new_basis(cache, k, w, sub, sc, Wsub, pending):
        """Answer the pending rows that basis k certifies; return the others.

        The rows are tried in blocks that double in size while the basis
        answers at least half of a block: consecutive rows of a correlated
        batch share their optimal basis, distant ones rarely do.
        """
        size = cache.window(pending.size)
        pos, left = 0, []
        while pos < pending.size:
            block = pending[pos:pos + size]
            ok = cache.check_one(k, sub[block], sc[block])
            Wsub[block[ok]] = w
            cache.record(hits=int(ok.sum()))
            left.append(block[~ok])
            pos += block.size
            if 2 * ok.sum() < block.size:
                break
            size *= 2
        left.append(pending[pos:])
        return np.concatenate(left)

    def _follow_basis(self, cache, model, w, sub, sc, Wsub, pending):
        """Answer the pending rows that HiGHS's new basis solves (large LPs).

        The rows right after a solved one are tested with HiGHS's own
        factorization, until the first miss; a basis that answers a long run
        is also factorized and stored for later batches.
        """
        if not pending.size and len(cache):
            return pending
        # On batches whose rows rarely share a basis (uncorrelated costs),
        # only every 16th basis is followed, to notice when reuse returns.
        if not cache.paying():
            cache.skipped += 1
            if cache.skipped % 16:
                return pending
        basic = model.basic_variables()
        if basic is None or basic.size != self.n_rows:
            return pending
        e = cache.conditions(basic, np.concatenate([w, self._A @ w]))
        n = cache.follow(e, model.transpose_solve, sub, pending, sc) if pending.size else 0
        Wsub[pending[:n]] = w
        cache.record(hits=n)
        # Store long runs (and the first basis, so that a later batch has
        # something to start from).
        if (n >= cache.long_run or not len(cache)) and cache.factorize(e) is not None:
            cache.add(e, w)
        return pending[n:]

    def _certificate(self, model, cache, w):
        """The cache's certificate of HiGHS's current optimal basis, or None."""
        basic = model.basic_variables()
        if basic is None or basic.size != self.n_rows:
            return None
        x = np.concatenate([w, self._A @ w])
        return cache.certificate(basic, x)

    # ------------------------------------------------------- dual bounds
    def solve_or_bound(self, C, exact):
        """Solve some rows of a batch exactly and bound the others by weak duality.

        The rows are taken in order (neighbouring rows should have similar
        costs, as the tree's children of consecutive thresholds do). A row
        marked in ``exact`` is solved with HiGHS, from the last basis; every
        other row gets the better of the weak-duality bounds from the optimal
        bases of the exact rows before and after it (the duals ``y = B^-T c_B``
        that a basis gives the row): for a pure LP,
        ``c.w >= sum_j min((c - A^T y)_j lo_j, (c - A^T y)_j hi_j) + sum_i
        min(y_i rlo_i, y_i rhi_i)`` at every feasible ``w`` (multipliers
        pointing at an infinite row bound are set to 0 first). The bound is
        the optimal value when that basis is optimal for the row too, and
        falls away smoothly as the row moves from it. No basis cache is used.

        Parameters
        ----------
        C : array-like of shape (m, n_costs)
            Cost vectors in the problem's sense.
        exact : array-like of bool of shape (m,)
            Rows to solve exactly. A row with no exact row on either side
            gets an infinite bound.

        Returns
        -------
        W : ndarray of shape (m, n_costs)
            Optimal decisions of the exact rows, zeros elsewhere.
        z : ndarray of shape (m,)
            Optimal values of the exact rows; elsewhere a bound on the
            optimal value from the optimist's side: a lower bound for
            ``sense="min"``, an upper bound for ``"max"`` (possibly
            infinite).

        Raises
        ------
        ValueError
            For a MILP (no duals) or malformed arguments.
        """
        from .._validation import check_costs

        if self.is_milp:
            raise ValueError("LinearProgram.solve_or_bound needs a pure LP; this problem has "
                             "integer variables (bound its relaxation() instead).")
        C = check_costs(C, n_costs=self.n_costs)
        exact = np.asarray(exact)
        if exact.shape != (C.shape[0],) or exact.dtype != bool:
            raise ValueError(f"The 'exact' parameter of solve_or_bound must be a boolean array "
                             f"of shape ({C.shape[0]},). Got {exact.dtype} of shape "
                             f"{exact.shape} instead.")
        sign = 1.0 if self.sense == "min" else -1.0
        Cm = sign * C
        m, d = C.shape
        W = np.zeros((m, d))
        z = np.full(m, -np.inf)
        self._fresh_start(current_session())
        model = self._model()
        A = self._A.tocsc()
        A = (A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data.astype(np.float64))
        yc = np.empty(self.n_rows)
        take = slack = None
        since = []  # rows bounded since the last exact row
        for i in range(m):
            if exact[i]:
                W[i] = self._solve_one(model, Cm[i], i)
                z[i] = Cm[i] @ W[i]
                basic = model.basic_variables()
                take = slack = None
                if basic is not None and basic.size == self.n_rows:
                    take, slack = np.where(basic < d, basic, 0), basic >= d
                    # The rows since the last exact row are bounded again with
                    # this basis, the nearer one for those just before i.
                    for k in since:
                        z[k] = max(z[k], self._dual_bound(model, Cm[k], take, slack, A, yc))
                since = []
            elif take is not None:
                z[i] = self._dual_bound(model, Cm[i], take, slack, A, yc)
                since.append(i)
            else:
                since.append(i)
        return W, sign * z

    def _dual_bound(self, model, c, take, slack, A, yc):
        """The weak-duality bound of ``c`` from the duals of HiGHS's current basis."""
        from ._certificate_kernels import dual_bound

        if self.n_rows:
            cb = c[take]
            cb[slack] = 0.0
            y = model.transpose_solve(cb)
            if y is None:
                return -np.inf
        else:
            y = np.zeros(0)
        return dual_bound(c, y, *A, self._lo, self._hi, self._rlo, self._rhi, yc)

    # ----------------------------------------------------------- relaxation
    def relaxation(self):
        """The LP relaxation of a MILP as a LinearProgram (None for an LP).

        The same rows and bounds without integrality, with the basis cache,
        built once and kept on the instance (not pickled). Its optimal value
        bounds the MILP's from the optimist's side: ``sign * z_relax <=
        sign * z`` for every cost vector.

        Returns
        -------
        LinearProgram or None

        Examples
        --------
        >>> from spotree.problems import LinearProgram
        >>> milp = LinearProgram(A_ub=[[2.0, 2.0]], b_ub=[3.0], bounds=(0, 1),
        ...                      integrality=[1, 1], sense="max")
        >>> float(milp.solve([[1.0, 1.0]])[1][0])
        1.0
        >>> float(milp.relaxation().solve([[1.0, 1.0]])[1][0])
        1.5
        """
        if not self.is_milp:
            return None
        relax = self.__dict__.get("_model_relaxation")
        if relax is None:
            relax = LinearProgram.__new__(LinearProgram)
            # Feasible and bounded: the MILP is (checked at construction).
            relax._set(A_ub=self.A_ub, b_ub=self.b_ub, A_eq=self.A_eq, b_eq=self.b_eq,
                       stored_bounds=self.bounds, lo=self._lo, hi=self._hi, A=self._A,
                       rlo=self._rlo, rhi=self._rhi, integrality=None, sense=self.sense,
                       basis_cache=True, names=self.variable_names)
            self._model_relaxation = relax
        relax.sense = self.sense
        relax.n_jobs = getattr(self, "n_jobs", None)
        return relax

    # ------------------------------------------------------------- vertices
    def vertices(self):
        # One enumeration per instance, also when threads ask at once.
        if "_vertex_cache" not in self.__dict__:
            with self._vertex_lock():
                return super().vertices()
        return self._vertex_cache

    vertices.__doc__ = DecisionProblem.vertices.__doc__

    def _vertex_lock(self):
        """The instance's lock for listing its vertices (not pickled)."""
        with _LOCAL_LOCK:
            lock = self.__dict__.get("_model_vertex_lock")
            if lock is None:
                lock = self._model_vertex_lock = threading.RLock()
        return lock

    def _listed(self):
        """``(V, width)`` when :meth:`solve` scans a MILP's list ``V``, else None.

        Decided once per instance (also after a decline), from the instance
        alone, so that the tie rule does not depend on the batch. ``width``
        is the largest ``sum_j |V_kj|`` (for the overflow guard).
        """
        listed = self.__dict__.get("_model_listed", False)
        if listed is False:
            with self._vertex_lock():
                listed = self.__dict__.get("_model_listed", False)
                if listed is False:
                    listed = self._model_listed = self._find_list()
        return listed

    def _find_list(self):
        full = self.max_bases_enumerated
        # A grid of integer points is listed fast (7 ms for 195,112 points);
        # the slices of a mixed program cost up to ~10 us per choice and
        # point (1.3 s for 131,560 here), paid by the first solve: those take
        # at most _max_listed_work.
        cap = full if (self.integrality != 0).all() else min(full, self._max_listed_work)
        if cap == full:
            V = self.vertices()
        else:
            V = self._vertices(cap)
            if V is not None:
                # The list that vertices() makes (the limit only declines).
                V = self._cached("_vertex_cache", lambda: V)
        if V is None or V.size > self._max_vertex_scan:
            return None
        return V, max(float(np.abs(V).sum(axis=1).max()), 1.0)

    def _difference_basis(self):
        # Feasible points differ by solutions of A_eq x = 0 (the inequality
        # rows and bounds only narrow that down). Not the vertex list: it
        # may take an enumeration of bases.
        if self.A_eq is None:
            return None
        A = self.A_eq.toarray() if hasattr(self.A_eq, "toarray") else self.A_eq
        return null_space_basis(A)

    def _vertices(self, max_bases=None):
        max_bases = self.max_bases_enumerated if max_bases is None else max_bases
        net = self._network()
        if net is not None and net.dag is not None:
            # An acyclic network's vertices are its source-target paths
            # (sorted as the enumeration below sorts them).
            V = net.dag._vertices()
            return None if V is None else np.unique(V, axis=0)
        if self.is_milp:
            integer = self.integrality != 0
            lo, hi = self._box(np.flatnonzero(integer))
            if integer.all():
                return integer_points(self._A, self._rlo, self._rhi, lo, hi,
                                      max_bases, self.max_vertices)
            return mixed_points(self._A, self._rlo, self._rhi, self._lo, self._hi, integer,
                                lo, hi, max_bases, self.max_vertices)
        return lp_vertices(self._A, self._rlo, self._rhi, self._lo, self._hi,
                           max_bases, self.max_vertices)

    def _box(self, columns=None):
        """Smallest box around the LP relaxation of S (finite: S is bounded).

        Only the variables in ``columns`` (all when None) are bounded; the
        other entries are the variable bounds.
        """
        lo, hi = self._lo.copy(), self._hi.copy()
        columns = np.arange(self.n_costs) if columns is None else columns
        if np.isfinite(lo[columns]).all() and np.isfinite(hi[columns]).all():
            return lo, hi
        relax = self._relaxed_model()
        for j in columns:
            for sgn in (1.0, -1.0):
                if np.isfinite(lo[j] if sgn > 0 else hi[j]):
                    continue
                c = np.zeros(self.n_costs)
                c[j] = sgn
                w = self._solve_one(relax, c, j)
                if sgn > 0:
                    lo[j] = w[j]
                else:
                    hi[j] = w[j]
        return lo, hi

    # ----------------------------------------------------------------- misc
    def describe_decision(self, w):
        """The non-zero entries of ``w``, by variable name when there are names.

        ``"w = {chairs: 12, tables: 3}"`` for a model read from a file (the
        exports and plots show each leaf's decision this way); by index,
        ``"w = {0: 12, 1: 3}"``, without names.
        """
        w = np.asarray(w, dtype=np.float64).reshape(-1)
        # Relative to the largest entry: an absolute 1e-9 read every decision
        # of an LP whose bounds are of order 1e-9 as "w = 0".
        nz = np.flatnonzero(np.abs(w) > 1e-9 * np.abs(w).max(initial=0.0))
        if nz.size == 0:
            return "w = 0"
        names = self.variable_names or [str(k) for k in range(w.size)]
        return "w = {" + ", ".join(f"{names[k]}: {w[k]:.4g}" for k in nz) + "}"

    def to_dict(self):
        """A JSON-ready description; sparse matrices are written as triplets.

        ``problem_from_dict(lp.to_dict())`` rebuilds an equal problem.
        """
        bounds = (list(self.bounds) if isinstance(self.bounds, tuple)
                  else [list(p) for p in self.bounds])
        return {
            "type": "linear_program",
            "A_ub": _matrix_to_json(self.A_ub),
            "b_ub": None if self.b_ub is None else self.b_ub.tolist(),
            "A_eq": _matrix_to_json(self.A_eq),
            "b_eq": None if self.b_eq is None else self.b_eq.tolist(),
            "bounds": bounds,
            "integrality": None if self.integrality is None else self.integrality.tolist(),
            "sense": self.sense,
            "basis_cache": self.basis_cache,
            "variable_names": None if self.variable_names is None else list(
                self.variable_names),
        }

    def __repr__(self):
        kind = "MILP" if self.is_milp else "LP"
        return (f"LinearProgram(n_costs={self.n_costs}, n_rows={self.n_rows}, {kind}, "
                f"sense={self.sense!r})")


class _Network(NamedTuple):
    """A LinearProgram recognized as a shortest path: its compiled solver,
    and the DAG problem when the graph is acyclic (else None)."""

    oracle: object
    dag: object


def _recognize_network(lp):
    """``_Network`` for a LinearProgram that is a single-path network, else None."""
    from scipy.sparse import csgraph
    import scipy.sparse as sp

    from ._compiled import label_setting_oracle
    from ._shortest_path import DAGShortestPath, _topological_order, incidence_network

    if lp.n_rows == 0 or not (np.all(lp._lo == 0.0) and np.all(lp._hi >= 1.0)):
        return None
    if not (np.isfinite(lp._rlo).all() and np.array_equal(lp._rlo, lp._rhi)):
        return None
    net = incidence_network(lp._A, lp._rlo)
    if isinstance(net, str):
        return None
    n, tail, head, source, target = net
    order, cycle = _topological_order(n, tail, head)
    if cycle is None:
        dag = DAGShortestPath(n, np.column_stack([tail, head]), source, target)
        return _Network(dag.compiled_oracle(), dag)
    # Edges whose cost matters: on a cycle (both ends in one strongly
    # connected component) or on a source-target path. No feasible flow
    # uses the others (a flow is a path plus cycles).
    graph = sp.csr_matrix((np.ones(tail.size), (tail, head)), shape=(n, n))
    _, comp = csgraph.connected_components(graph, directed=True, connection="strong")
    from_source = np.zeros(n, dtype=bool)
    from_source[csgraph.breadth_first_order(graph, source, return_predecessors=False)] = True
    to_target = np.zeros(n, dtype=bool)
    to_target[csgraph.breadth_first_order(graph.T.tocsr(), target,
                                          return_predecessors=False)] = True
    relevant = (comp[tail] == comp[head]) | (from_source[tail] & to_target[head])
    return _Network(label_setting_oracle(n, tail, head, source, target, relevant), None)
