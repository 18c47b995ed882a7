"""Everything spotree does with HiGHS, in one place.

This is the only module of spotree's problems that imports ``highspy``. The
rest of the package sees plain numpy/scipy data and the small
:class:`HighsModel` wrapper:

- a silent HiGHS instance with one thread (see :func:`new_highs`);
- a model built from a CSC matrix and bound vectors, whose objective is
  changed and re-solved (warm-started from the last basis) for each cost
  vector;
- runs with an optional time limit, with the thread-pool retry of
  :func:`run_highs`, and statuses reported as short strings;
- the basic variables of the last optimal basis, for the basis cache;
- :func:`solve_once` for one long mixed-integer solve (the optimal tree's
  MILP), which Ctrl-C stops (:func:`run_interruptible`);
- :func:`read_model` for MPS and LP files.

A HiGHS instance must not be used by two threads at once (it segfaults):
:class:`~spotree.problems.LinearProgram` keeps one :class:`HighsModel` per
thread. HiGHS itself gives each user thread its own task scheduler.
"""

from __future__ import annotations

import os
import tempfile
import warnings

import numpy as np

__all__ = ["HighsModel", "new_highs", "read_model", "run_highs", "run_interruptible",
           "solve_once"]

# Short status names returned by HighsModel.run.
OPTIMAL = "optimal"
INFEASIBLE = "infeasible"
UNBOUNDED = "unbounded"
INFEASIBLE_OR_UNBOUNDED = "infeasible or unbounded"
TIME_LIMIT = "time limit"
OTHER = "other"

#: HiGHS's default ``infinite_bound``: bounds and right-hand sides of at least
#: this magnitude are infinite to HiGHS.
INFINITE_BOUND = 1e20
#: HiGHS's default ``large_matrix_value``: a model with a constraint coefficient
#: of at least this magnitude is rejected.
LARGE_MATRIX_VALUE = 1e15
# ... and reads those below this as zero.
SMALL_MATRIX_VALUE = 1e-9
#: The smallest matrix entry HiGHS's file readers can keep (the floor of its
#: small_matrix_value option).
READ_SMALL_MATRIX_VALUE = 1e-12


def new_highs(threads=1):
    """A silent HiGHS instance.

    ``highspy.Highs()`` installs Python callbacks in its constructor, which
    prints the HiGHS banner before output can be switched off; the compiled
    core class does not, so it is preferred when this highspy exposes it.

    With the default ``threads=0`` HiGHS reads the CPU topology from /sys on
    every run, which doubles the time of a small warm-started LP; spotree's
    models ask for one thread (see :func:`run_highs` for the fallback).
    """
    import highspy

    core = getattr(getattr(highspy, "_core", None), "_Highs", None)
    h = core() if core is not None else highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", int(threads))
    return h


def _option(h, name):
    value = h.getOptionValue(name)
    return value[1] if isinstance(value, tuple) else value  # (status, value) in 1.x


def run_highs(h):
    """Run HiGHS; return its model status (a ``highspy.HighsModelStatus``).

    A model asking for one thread fails without a status when HiGHS's task
    scheduler of the calling thread was already started with another size
    (by another model of the process); it is then run again with the
    default thread setting.
    """
    import highspy

    h.run()
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kNotset and _option(h, "threads") != 0:
        h.setOptionValue("threads", 0)
        h.run()
        status = h.getModelStatus()
    return status


def _short_status(status):
    import highspy

    MS = highspy.HighsModelStatus
    return {MS.kOptimal: OPTIMAL, MS.kInfeasible: INFEASIBLE, MS.kUnbounded: UNBOUNDED,
            MS.kUnboundedOrInfeasible: INFEASIBLE_OR_UNBOUNDED,
            MS.kTimeLimit: TIME_LIMIT}.get(status, OTHER)


#: Rows whose largest coefficient is below this are multiplied by a power of
#: two that brings it into [1, 2) (see :func:`_scale_small_rows`).
_SMALL_ROW = 2.0 ** -10
#: ... unless a finite bound of the row would then reach this.
_SCALED_BOUND_MAX = 1e15


def _scale_small_rows(A, row_lower, row_upper):
    """Rows of tiny coefficients multiplied by powers of two; ``(A, lower, upper)``.

    HiGHS treats matrix entries below 1e-9 as zero and checks rows against
    an absolute feasibility tolerance (1e-7), so a row ``1e-10 x <= 1e-10``
    was dropped: the LP was solved without it and the answer broke it. A
    power of two keeps every value exact and the feasible set the same; only
    rows whose largest coefficient is below ``_SMALL_ROW`` are touched, so
    well-scaled models are passed as they are. The columns (and so the
    decisions) and the objective are unchanged.
    """
    n_rows = A.shape[0]
    if not n_rows or not A.nnz:
        return A, row_lower, row_upper
    peak = np.asarray(abs(A).max(axis=1).todense()).ravel()
    small = (peak > 0) & (peak < _SMALL_ROW)
    if not small.any():
        return A, row_lower, row_upper
    lower = np.asarray(row_lower, dtype=np.float64)
    upper = np.asarray(row_upper, dtype=np.float64)
    # The exponent that puts the row's peak in [1, 2), lowered where a finite
    # bound would otherwise come close to HiGHS's infinity.
    e = np.where(small, -np.frexp(peak)[1] + 1, 0).astype(np.int64)
    with np.errstate(divide="ignore", over="ignore"):
        bound = np.fmax(np.where(np.isfinite(lower), np.abs(lower), 0.0),
                        np.where(np.isfinite(upper), np.abs(upper), 0.0))
        room = np.where(bound > 0, np.floor(np.log2(_SCALED_BOUND_MAX / bound)), e)
    # (At most 2**1000, so that even a subnormal peak's factor stays finite.)
    e = np.clip(np.minimum(e, room), 0, 1000).astype(np.int64)
    factor = np.ldexp(1.0, e)
    import scipy.sparse as sp

    A = (sp.diags(factor) @ A).tocsc()
    return A, lower * factor, upper * factor


#: An LP whose finite bounds and right-hand sides are all below this in
#: magnitude has its variables scaled (see :func:`_variable_scale`).
_SMALL_LP = 2.0 ** -10


def _variable_scale(col_lower, col_upper, row_lower, row_upper):
    """The power of two ``s`` by which an LP of tiny bounds is solved in ``w / s``.

    HiGHS's primal feasibility tolerance is absolute (1e-7): on an LP whose
    bounds and right-hand sides are all of order 1e-9, its "optimal"
    decisions broke the bounds and rows by several times their size (values
    up to 9 times the true optimum). Solving for ``u = w / s`` over the
    bounds divided by ``s`` (exact: a power of two) and the same matrix
    puts the largest finite bound in [1, 2); the costs, the basis and the
    duals are unchanged. 1 when some finite bound is at least
    ``_SMALL_LP`` or all are zero. Integer variables are never scaled.
    """
    values = np.concatenate([np.ravel(v) for v in (col_lower, col_upper, row_lower,
                                                   row_upper)]).astype(np.float64)
    peak = np.abs(values[np.isfinite(values)]).max(initial=0.0)
    if not 0.0 < peak < _SMALL_LP:
        return 1.0
    return float(np.ldexp(1.0, int(np.frexp(peak)[1]) - 1))


def warn_dropped(A, row_lower, row_upper, stacklevel=2):
    """Warn when HiGHS will read nonzero entries of the rows ``A`` as zero.

    HiGHS says so in its log, which spotree silences. What is left after
    :func:`_scale_small_rows` are entries far smaller than the rest of their
    row, which only rescaling the variables can keep. ``stacklevel`` as in
    :func:`warnings.warn`, counted from the caller.
    """
    A = _scale_small_rows(A.tocsc(), row_lower, row_upper)[0]
    tiny = (A.data != 0) & (np.abs(A.data) < SMALL_MATRIX_VALUE)
    if tiny.any():
        k = int(np.argmin(np.where(tiny, np.abs(A.data), np.inf)))
        col = int(np.searchsorted(A.indptr, k, side="right") - 1)
        row = A.getrow(int(A.indices[k])).data
        warnings.warn(f"{int(tiny.sum())} constraint coefficient(s) are below HiGHS's "
                      f"{SMALL_MATRIX_VALUE:g} even after each row is scaled (the smallest is "
                      f"on variable {col}, {abs(A.data[k]) / np.abs(row).max():.1e} times the "
                      "largest of its row); HiGHS reads them as zero, so its decisions may "
                      "break those constraints. Rescale the variables of the model.",
                      RuntimeWarning, stacklevel=stacklevel + 1)


def _highs_lp(A, col_lower, col_upper, row_lower, row_upper, integrality=None, cost=None,
              offset=0.0):
    """A ``highspy.HighsLp`` from a sparse matrix and bound vectors (``+-inf``: none)."""
    import highspy

    A, row_lower, row_upper = _scale_small_rows(A.tocsc(), row_lower, row_upper)
    n_rows, n_cols = A.shape
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = n_cols
    lp.num_row_ = n_rows
    lp.col_cost_ = (np.zeros(n_cols) if cost is None
                    else np.ascontiguousarray(cost, dtype=np.float64))
    lp.offset_ = float(offset)
    lp.col_lower_ = np.where(np.isinf(col_lower), -inf, col_lower)
    lp.col_upper_ = np.where(np.isinf(col_upper), inf, col_upper)
    lp.row_lower_ = np.where(np.isinf(row_lower), -inf, row_lower)
    lp.row_upper_ = np.where(np.isinf(row_upper), inf, row_upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_ = n_cols
    lp.a_matrix_.num_row_ = n_rows
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data.astype(np.float64)
    if integrality is not None and np.any(integrality):
        lp.integrality_ = [highspy.HighsVarType.kInteger if v else
                           highspy.HighsVarType.kContinuous for v in integrality]
    return lp


_INTERRUPT_CALLBACKS = ("kCallbackSimplexInterrupt", "kCallbackIpmInterrupt",
                        "kCallbackMipInterrupt")


#: Seconds a Ctrl-C waits for an interrupted HiGHS run to return.
_STOP_WAIT = 0.5


def run_interruptible(h, poll=0.05):
    """:func:`run_highs` that Ctrl-C (SIGINT) stops within about ``poll`` seconds.

    A HiGHS run holds the calling thread in compiled code, where Python
    cannot raise KeyboardInterrupt. So the run goes to a worker thread, and
    the calling thread waits for it in short steps: on KeyboardInterrupt it
    raises HiGHS's user-interrupt flag (read by HiGHS's simplex, interior
    point and branch-and-bound interrupt callbacks), waits up to half a
    second for the run to return (else it returns on its own at HiGHS's
    next check of the flag), and raises the KeyboardInterrupt again.

    Parameters
    ----------
    h : highspy Highs instance with a model passed
    poll : float, default=0.05
        Seconds between two checks of the worker.

    Returns
    -------
    highspy.HighsModelStatus
    """
    import threading

    import highspy

    stop = threading.Event()

    def callback(callback_type, message, data_out, data_in, user_data):
        if data_in is not None and stop.is_set():
            data_in.user_interrupt = True

    h.setCallback(callback, None)
    types = highspy.cb.HighsCallbackType
    for name in _INTERRUPT_CALLBACKS:
        h.startCallback(getattr(types, name))
    outcome = {}
    # The caller waits on this event, not on Thread.join: a KeyboardInterrupt
    # that lands in join(timeout) makes Python (before 3.13) mark the running
    # thread as stopped, so the join after it returned at once, the callback
    # was removed and HiGHS ran on in the background until its time limit.
    done = threading.Event()

    def work():
        try:
            outcome["status"] = run_highs(h)
        except BaseException as exc:  # handed to the calling thread
            outcome["error"] = exc
        finally:
            # On this thread, once HiGHS has returned: never during a run.
            h.setCallback(None, None)
            done.set()

    worker = threading.Thread(target=work, name="spotree-highs", daemon=True)
    try:
        worker.start()
        while not done.wait(poll):
            pass
    except KeyboardInterrupt:
        stop.set()
        # HiGHS reads the flag at its next check, which some phases of a MIP
        # reach only after a second or two (2.0 s on the interrupt
        # benchmark's MILP, load ~2): the caller gets its KeyboardInterrupt
        # after a short wait, and the run ends on its own soon after.
        done.wait(_STOP_WAIT)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["status"]


def solve_once(A, col_lower, col_upper, row_lower, row_upper, integrality, cost, *,
               offset=0.0, start=None, time_limit=None, random_seed=0, verbose=False):
    """Minimize ``cost @ x + offset`` once, Ctrl-C stopping the run (a long MILP).

    Parameters
    ----------
    A : scipy.sparse matrix of shape (n_rows, n_cols)
    col_lower, col_upper, row_lower, row_upper : ndarray
        Bounds, ``+-inf`` for none.
    integrality : ndarray of shape (n_cols,)
        Nonzero marks an integer variable.
    cost : ndarray of shape (n_cols,)
    offset : float, default=0.0
    start : ndarray of shape (n_cols,) or None
        A feasible solution to start from.
    time_limit : float or None
        Seconds; None for none.
    random_seed : int, default=0
    verbose : bool, default=False
        HiGHS's log on the console.

    Returns
    -------
    dict
        ``status`` (HiGHS's name of the model status, e.g. ``"Optimal"`` or
        ``"Time limit reached"``), ``x`` (None without a feasible solution),
        ``objective`` (inf without one), ``bound``, ``gap``, ``n_nodes``.

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C, once HiGHS has stopped.
    """
    import highspy

    h = new_highs(threads=1)
    h.setOptionValue("output_flag", bool(verbose))
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("random_seed", int(random_seed))
    # HiGHS's default relative gap (1e-4) let it call "Optimal" a tree 7e-5
    # above the optimum. (Its absolute gap, 1e-6, is kept: the model's
    # tolerances blur its objective at that level anyway.)
    h.setOptionValue("mip_rel_gap", 0.0)
    status = h.passModel(_highs_lp(A, col_lower, col_upper, row_lower, row_upper,
                                   integrality, cost, offset))
    if status == highspy.HighsStatus.kError:  # pragma: no cover - built by spotree
        raise ValueError("HiGHS rejected the model.")
    if start is not None:
        sol = highspy.HighsSolution()
        sol.col_value = list(np.asarray(start, dtype=np.float64))
        sol.value_valid = True
        h.setSolution(sol)
    run_interruptible(h)
    info = h.getInfo()
    has_sol = info.primal_solution_status >= 1
    return dict(status=h.modelStatusToString(h.getModelStatus()),
                x=np.array(h.getSolution().col_value) if has_sol else None,
                objective=float(info.objective_function_value) if has_sol else np.inf,
                bound=float(info.mip_dual_bound), gap=float(info.mip_gap),
                n_nodes=int(info.mip_node_count))


class HighsModel:
    """A HiGHS model ``min c^T w`` over fixed rows and bounds; only ``c`` changes.

    Parameters
    ----------
    A : scipy.sparse matrix of shape (n_rows, n_cols)
        The constraint matrix; converted to CSC (HiGHS's column-wise form).
    col_lower, col_upper : ndarray of shape (n_cols,)
        Variable bounds (``+-inf`` for none).
    row_lower, row_upper : ndarray of shape (n_rows,)
        Row activity bounds (equal for an equality row).
    integrality : ndarray of shape (n_cols,) or None
        Nonzero marks an integer variable. A mixed-integer model is solved
        to a zero gap (HiGHS stops at a 1e-4 relative gap by default).

    Not safe to share between threads: give each thread its own.
    """

    def __init__(self, A, col_lower, col_upper, row_lower, row_upper, integrality=None):
        import highspy

        n_rows, n_cols = A.shape
        self.is_mip = integrality is not None and bool(np.any(integrality))
        # Decisions are w = scale * (HiGHS's solution); see _variable_scale.
        self.scale = 1.0 if self.is_mip else _variable_scale(col_lower, col_upper, row_lower,
                                                             row_upper)
        if self.scale != 1.0:
            col_lower, col_upper, row_lower, row_upper = (
                np.asarray(v, dtype=np.float64) / self.scale
                for v in (col_lower, col_upper, row_lower, row_upper))
        lp = _highs_lp(A, col_lower, col_upper, row_lower, row_upper, integrality)
        h = new_highs()
        if self.is_mip:
            h.setOptionValue("mip_rel_gap", 0.0)
            h.setOptionValue("mip_abs_gap", 0.0)
            # HiGHS accepts integer solutions that break a row by up to its
            # mip_feasibility_tolerance (1e-6, absolute): it took both items of
            # weights 0.5 and 0.5000005 into a knapsack of capacity 1, and
            # HiGHS 1.16 answered "Infeasible" or "Solve error" on such
            # near-tolerance programs. Integer points' activities are exact up
            # to rounding, and the continuous part is solved to the same 1e-9.
            h.setOptionValue("primal_feasibility_tolerance", 1e-9)
            h.setOptionValue("mip_feasibility_tolerance", 1e-9)
        else:
            # Presolve would be redone on every objective change; the warm
            # simplex from the last basis is faster for a new objective.
            h.setOptionValue("presolve", "off")
        status = h.passModel(lp)
        if status == highspy.HighsStatus.kError:  # pragma: no cover - validated data
            raise ValueError(f"HiGHS rejected the LinearProgram model (status {status}).")
        self.h = h
        self._lp = lp  # passed again by reset()
        self.n_cols = n_cols
        self.n_rows = n_rows
        # Rows without a nonzero HiGHS keeps (entries below its 1e-9 matrix
        # tolerance are dropped): HiGHS then solves the LP as a box without
        # the simplex method, so no basis factorization exists, and asking
        # for one (getBasicVariables) crashes the process.
        nnz = h.getNumNz() if hasattr(h, "getNumNz") else A.count_nonzero()
        self._no_factor = n_rows > 0 and int(nnz) == 0
        self._cols = np.arange(n_cols, dtype=np.int32)
        self._time_limit = np.inf
        self._strategy = None
        self._forget()

    def reset(self):
        """Forget every earlier solve: the next one starts as on a new model.

        The model is passed to HiGHS again, which drops its basis,
        factorization and every other trace of earlier runs (the next solve
        is the dual simplex method from scratch), and so are the last
        direction, the reference basis and the far starts' work. A solve
        sequence after ``reset()`` returns the same decisions, bit for bit,
        as on a new model (HiGHS's ``clearSolver`` alone did not: 103 of 120
        rows of a 20 x 30 LP differed), for 0.05 to 0.12 ms instead of a new
        model's 0.2 to 0.4 ms. Options set on the model are kept.
        """
        import highspy

        if self.h.passModel(self._lp) == highspy.HighsStatus.kError:  # pragma: no cover
            raise ValueError("HiGHS rejected the LinearProgram model.")
        self._forget()

    def _forget(self):
        self._last_direction = None
        self._reference = None
        self._deferred = None
        self.n_far = 0
        self.n_retry = 0
        self._far_work = [0.0, 0.0]  # decayed work per far solve, per start
        self._far_n = [0, 0]
        self.status = None

    # ------------------------------------------------------------------ run
    def set_costs(self, c):
        self.h.changeColsCost(self.n_cols, self._cols, np.ascontiguousarray(c, dtype=np.float64))

    def run(self, time_limit=None):
        """Solve with the current costs; return a short status string.

        ``time_limit`` (seconds, None for none) applies to this run only.
        """
        limit = np.inf if time_limit is None else max(float(time_limit), 1e-3)
        if limit != self._time_limit:
            self.h.setOptionValue("time_limit", limit)
            self._time_limit = limit
        self.status = run_highs(self.h)
        return _short_status(self.status)

    #: A cost vector is "near" the previous one when the L1 distance between
    #: the two L1-normalized vectors is at most this (see :meth:`solve`).
    warm_distance = 0.1
    #: How a far cost vector starts: "auto" (whichever of the two below took
    #: less work per far solve lately; the other is tried every 32nd far
    #: solve), "reference" (primal simplex from the reference basis, else the
    #: last one) or "scratch" (dual simplex from scratch).
    far_start = "auto"
    _FAR_SCRATCH, _FAR_REFERENCE = 0, 1
    _explore_every = 32
    _decay = 0.8
    #: The work of a far solve is counted in simplex iterations, not measured
    #: time, so that the choice, and with it the vertex returned among tied
    #: optima and its last bits, is the same on every run. A primal iteration
    #: from the reference counts this many dual ones from scratch: measured
    #: on the benchmarks' 500 x 200 network LP, 2.34e-5 against 1.61e-5 CPU
    #: seconds per iteration with its tree's costs, and 2.59e-5 against
    #: 1.82e-5 with uniform costs (the factorization of the start included).
    _primal_iteration_work = 1.45

    # HiGHS's simplex_strategy values.
    _DUAL, _PRIMAL = 1, 4

    def _use(self, strategy):
        if strategy != self._strategy:
            self.h.setOptionValue("simplex_strategy", strategy)
            self._strategy = strategy

    def solve(self, c, time_limit=None):
        """Minimize ``c^T w``; return ``(status, w)`` (w is None unless optimal).

        Only the costs change between solves, so every optimal basis stays
        primal feasible: an LP is re-solved by the primal simplex method from
        a feasible basis. A cost vector near the previous one (the tree's
        prefix sums of neighbouring thresholds differ by ~1e-3 in normalized
        L1 distance) starts from the last basis. A far one starts either
        from the reference basis of :meth:`set_reference` or
        :meth:`defer_reference` (the optimum of a batch's mean direction),
        with the primal method, or from scratch with the dual method,
        whichever has lately cost less work per far solve on this model
        (simplex iterations, see :attr:`far_start`): neither wins everywhere. Measured on the
        500-variable network LP of the benchmarks: a batch of neighbouring
        children's costs takes ~2 primal iterations per row from the last
        basis (8 with the dual method, 370 when left and right children
        alternate and each starts from scratch); the tree's per-sample costs
        (positive, one shared pattern times noise) take 220 primal
        iterations from the reference, 3.9 ms, against 436 dual ones from
        scratch, 5.4 ms; costs uniform on [-1, 1] take 842 primal iterations
        from the reference, 14.7 ms, against 346 dual ones, 4.2 ms. The first
        solve of a model starts from scratch with the dual method.

        ``c`` is handed to HiGHS scaled by a power of two (exact) to a largest
        entry in [0.5, 1): HiGHS's optimality tolerances are absolute (1e-7
        on the reduced costs), so costs of order 1e-8 got vertices 30% worse
        than the optimum and costs of order 1e9 failed to solve, while the
        minimizer does not depend on a positive scale.
        """
        c = np.array(c, dtype=np.float64)
        peak = np.abs(c).max(initial=0.0)
        if 0.0 < peak < np.inf:
            c = np.ldexp(c, -int(np.frexp(peak)[1]))
        if not self.is_mip:
            total = np.abs(c).sum()
            u = c / total if total > 0 else c
            last = self._last_direction
            arm = None
            if last is None:
                self._use(self._DUAL)
            elif np.abs(u - last).sum() > self.warm_distance:
                self.n_far += 1
                arm = self._far_arm()
                if arm == self._FAR_REFERENCE:
                    if self._deferred is not None:
                        ref, self._deferred = self._deferred, None
                        self.set_reference(ref)
                    if self._reference is not None:
                        self.h.setBasis(self._reference)
                    self._use(self._PRIMAL)
                else:
                    self.h.clearSolver()
                    self._use(self._DUAL)
            else:
                self._use(self._PRIMAL)
            self._last_direction = u
        self.set_costs(c)
        status = self.run(time_limit)
        work = self._run_work()
        if status in (OTHER, UNBOUNDED, INFEASIBLE_OR_UNBOUNDED) and self._strategy == self._PRIMAL:
            # HiGHS's primal method can stop short of optimality ("unknown"
            # status with a dual infeasibility left, seen on a 2-row knapsack
            # relaxation): solved again with the dual method from scratch.
            self.n_retry += 1
            self.h.clearSolver()
            self._use(self._DUAL)
            status = self.run(time_limit)
            work += self._run_work()
        if not self.is_mip and arm is not None:
            self._record_far(arm, work)
        if status == OPTIMAL:
            w = np.asarray(self.h.getSolution().col_value, dtype=np.float64)
            return status, (w * self.scale if self.scale != 1.0 else w)
        return status, None

    def _far_arm(self):
        """How the next far cost vector starts (see :attr:`far_start`)."""
        if self.far_start == "reference":
            return self._FAR_REFERENCE
        if self.far_start == "scratch":
            return self._FAR_SCRATCH
        n = self._far_n
        if min(n) < 2:  # each start tried twice first
            return self._FAR_SCRATCH if n[0] <= n[1] else self._FAR_REFERENCE
        best = (self._FAR_SCRATCH if self._far_work[0] <= self._far_work[1]
                else self._FAR_REFERENCE)
        if self.n_far % self._explore_every == 0:
            return 1 - best
        return best

    def _run_work(self):
        """The last run's work, in dual simplex iterations (see ``_primal_iteration_work``).

        One more iteration for the run itself, so that a start already optimal
        is cheap, not free.
        """
        its = int(self.h.getInfo().simplex_iteration_count) + 1
        return its * (self._primal_iteration_work if self._strategy == self._PRIMAL else 1.0)

    def _record_far(self, arm, work):
        n = self._far_n[arm]
        self._far_work[arm] = (work if n == 0 else
                               self._decay * self._far_work[arm] + (1 - self._decay) * work)
        self._far_n[arm] = n + 1

    def defer_reference(self, c):
        """Make the optimum of ``c`` the reference basis when a far cost vector first needs it.

        A batch whose rows are all near each other, or answered without
        HiGHS (the basis cache of a small LP), then pays no solve for it.
        """
        self._deferred = None if self.is_mip else np.array(c, dtype=np.float64)

    def set_reference(self, c):
        """Solve ``c`` and keep its optimal basis as the start of far cost vectors.

        Returns the status (the reference is kept only when optimal); a MILP
        keeps none.
        """
        status, _ = self.solve(c)
        if status == OPTIMAL and not self.is_mip:
            self._reference = self.h.getBasis()
        return status

    def status_name(self):
        """HiGHS's own name of the last run's model status."""
        try:
            return self.h.modelStatusToString(self.status)
        except Exception:  # pragma: no cover - depends on the highspy version
            return str(self.status)

    # ---------------------------------------------------------------- basis
    def basic_variables(self):
        """Basic variables of the last optimal LP basis, or None.

        Returns an int array of length ``n_rows``: ``j`` for column ``j`` and
        ``n_cols + i`` for the activity of row ``i`` (HiGHS numbers rows
        ``-1 - i``). None also when the rows have no nonzero (no factorization).
        """
        if self._no_factor:
            return None
        status, basic = self.h.getBasicVariables()
        if int(status) != 0:  # HighsStatus.kOk
            return None
        basic = np.asarray(basic, dtype=np.int64)
        return np.where(basic >= 0, basic, self.n_cols - 1 - basic)

    def transpose_solve(self, rhs):
        """``y`` with ``B^T y = rhs`` for the last optimal basis, or None.

        Uses HiGHS's own factorization of the basis, so it is only valid
        until the next run. ``B`` holds the columns of ``[A, I]`` of the basic
        variables in the order of :meth:`basic_variables` (a basic row
        activity forces ``y_i = 0`` whatever the sign of its column).
        """
        solve = getattr(self.h, "getBasisTransposeSolve", None)
        if solve is None or self._no_factor:
            return None
        status, y = solve(np.ascontiguousarray(rhs, dtype=np.float64))
        if int(status) != 0:  # HighsStatus.kOk
            return None
        return np.asarray(y, dtype=np.float64)

    def set_option(self, name, value):
        """Set a HiGHS option (tests use it to force a failing run)."""
        self.h.setOptionValue(name, value)


# ----------------------------------------------------------------- files
def _read_errors(log_path):
    """HiGHS's parse errors from its log, and the line number of the first.

    The LP reader follows an error with a ``--> file:line:column`` line and
    the offending source line; the location goes into the message (the
    source line itself is the caller's to show).
    """
    try:
        with open(log_path, encoding="utf-8", errors="replace") as fh:
            lines = [raw.strip() for raw in fh]
    except OSError:  # pragma: no cover - the log is ours
        return "", None
    out, where = [], None
    for k, ln in enumerate(lines):
        if not ln.startswith("ERROR") or len(out) == 3:
            continue
        text = ln.split(":", 1)[1].strip()
        nxt = lines[k + 1] if k + 1 < len(lines) else ""
        parts = nxt.rsplit(":", 2)
        if nxt.startswith("-->") and len(parts) == 3 and parts[1].isdigit():
            if where is None:
                where = int(parts[1])
            text = f"line {parts[1]}, column {parts[2]}: {text}"
        out.append(text)
    return "; ".join(out), where


def _ignored_entries(log_path):
    """The entries of a model file that HiGHS's reader dropped, from its log.

    The MPS reader skips an entry for an undefined row, or a second value for
    the same entry, with a warning ending in ``": ignored"`` (its section
    summaries say ``"ignored <count> ..."``, and are not repeated here). The
    LP reader drops a constant on the left-hand side of a constraint
    (``x + y + 2 <= 4`` is read as ``x + y <= 4``) with a warning that says
    it "is ignored", followed by a ``--> file:line:column`` line.
    """
    try:
        with open(log_path, encoding="utf-8", errors="replace") as fh:
            lines = [raw.strip() for raw in fh]
    except OSError:  # pragma: no cover - the log is ours
        return []
    out = []
    for k, ln in enumerate(lines):
        if not ln.startswith("WARNING"):
            continue
        text = ln.split(":", 1)[1].strip()
        if text.endswith(": ignored"):
            out.append(text[:-len(": ignored")])
        elif text.endswith(" is ignored"):
            where = lines[k + 1] if k + 1 < len(lines) else ""
            line_col = where.rsplit(":", 2)[-2:] if where.startswith("-->") else None
            out.append(text[:-len(" is ignored")]
                       + (f" (line {line_col[0]}, column {line_col[1]})" if line_col else ""))
    return out


def read_model(path):
    """Read an MPS or LP file with HiGHS; return the model as plain data.

    Parameters
    ----------
    path : str
        An existing ``.mps`` or ``.lp`` file (optionally ``.gz``).

    Returns
    -------
    dict
        ``A`` (scipy.sparse CSC, n_rows x n_cols), ``col_lower``,
        ``col_upper``, ``row_lower``, ``row_upper`` (float arrays, ``+-inf``
        for no bound), ``integrality`` (int8 array: 1 integer, 0 continuous,
        2 semi-continuous or semi-integer), ``col_names`` (list of str),
        ``sense`` ("min" or "max"), ``costs`` (the file's objective),
        ``ignored`` (HiGHS's descriptions of the entries its reader dropped:
        undefined rows, duplicate values; empty for a clean file).

    Raises
    ------
    ValueError
        If HiGHS cannot read the file; the message holds HiGHS's reason.
    """
    import highspy
    import scipy.sparse as sp

    h = new_highs()
    with tempfile.TemporaryDirectory(prefix="spotree-highs-") as tmp:
        # HiGHS reports parse errors through its log: send it to a file and
        # keep the console quiet.
        log = os.path.join(tmp, "read.log")
        h.setOptionValue("log_to_console", False)
        h.setOptionValue("log_file", log)
        h.setOptionValue("output_flag", True)
        # The reader drops entries below small_matrix_value (1e-9 by default);
        # read down to HiGHS's floor, so that LinearProgram's row scaling
        # (see _scale_small_rows) sees them, as for matrices given directly.
        h.setOptionValue("small_matrix_value", READ_SMALL_MATRIX_VALUE)
        status = h.readModel(str(path))
        h.setOptionValue("output_flag", False)
        h.setOptionValue("log_file", "")
        if status == highspy.HighsStatus.kError:
            reason, line = _read_errors(log)
            exc = ValueError(f"HiGHS could not read {path}"
                             + (f": {reason}" if reason else "") + ".")
            exc.line = line  # the file's line of the first error, or None
            raise exc
        ignored = _ignored_entries(log)
    lp = h.getLp()
    n_cols, n_rows = int(lp.num_col_), int(lp.num_row_)
    a = lp.a_matrix_
    if a.format_ != highspy.MatrixFormat.kColwise:  # pragma: no cover - readers give colwise
        h.ensureColwise() if hasattr(h, "ensureColwise") else None
        lp = h.getLp()
        a = lp.a_matrix_
    A = sp.csc_matrix((np.asarray(a.value_, dtype=np.float64),
                       np.asarray(a.index_, dtype=np.int64),
                       np.asarray(a.start_, dtype=np.int64)), shape=(n_rows, n_cols))

    def bounds(v):
        v = np.asarray(v, dtype=np.float64)
        v = v.copy()
        v[v >= highspy.kHighsInf] = np.inf
        v[v <= -highspy.kHighsInf] = -np.inf
        return v

    VT = highspy.HighsVarType
    codes = {VT.kContinuous: 0, VT.kInteger: 1}
    integrality = np.array([codes.get(t, 2) for t in lp.integrality_], dtype=np.int8)
    if integrality.size == 0:
        integrality = np.zeros(n_cols, dtype=np.int8)
    names = list(lp.col_names_) if len(lp.col_names_) == n_cols else [
        f"c{j}" for j in range(n_cols)]
    sense = "max" if lp.sense_ == highspy.ObjSense.kMaximize else "min"
    return dict(A=A, col_lower=bounds(lp.col_lower_), col_upper=bounds(lp.col_upper_),
                row_lower=bounds(lp.row_lower_), row_upper=bounds(lp.row_upper_),
                integrality=integrality, col_names=names, sense=sense,
                costs=np.asarray(lp.col_cost_, dtype=np.float64), ignored=ignored)
