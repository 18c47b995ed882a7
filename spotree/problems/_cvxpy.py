"""CVXPY problems as spotree decision problems (:func:`from_cvxpy`)."""

from __future__ import annotations

import threading

import numpy as np

from .._compat import import_optional
from ._base import DecisionProblem

__all__ = ["from_cvxpy", "CVXPYProblem"]

_OK = ("optimal", "optimal_inaccurate")


def _name(obj):
    name = getattr(obj, "name", None)
    try:
        return name() if callable(name) else str(name)
    except Exception:  # pragma: no cover - defensive: a name is only for messages
        return type(obj).__name__


class CVXPYProblem(DecisionProblem):
    """A convex CVXPY problem with objective ``cost @ decision`` (see :func:`from_cvxpy`).

    The problem is compiled once (CVXPY's DPP: only the parameter ``cost``
    changes between solves) and re-solved for every cost vector.

    Attributes
    ----------
    problem : cvxpy.Problem
        The problem solved: the user's constraints (the same expressions) and
        objective ``cost @ decision`` over a private copy of ``cost``.
    cost : cvxpy.Parameter
        The parameter passed (its value is left alone).
    decision : cvxpy.Variable
    solver : str or None
    solver_options : dict
    """

    def __init__(self, problem, cost, decision, solver=None, solver_options=None):
        cp = import_optional("cvxpy", "from_cvxpy")
        if not isinstance(problem, cp.Problem):
            raise TypeError(f"The 'problem' parameter of from_cvxpy must be a cvxpy.Problem. "
                            f"Got {type(problem).__name__} instead.")
        if not isinstance(cost, cp.Parameter):
            raise TypeError(f"The 'cost' parameter of from_cvxpy must be a cvxpy.Parameter. "
                            f"Got {type(cost).__name__} instead.")
        if not isinstance(decision, cp.Variable):
            raise TypeError(f"The 'decision' parameter of from_cvxpy must be a cvxpy.Variable. "
                            f"Got {type(decision).__name__} instead.")
        if len(cost.shape) not in (1, 2) or cost.shape != decision.shape:
            raise ValueError(f"The 'cost' and 'decision' parameters of from_cvxpy must be 1-D "
                             f"or 2-D, of the same shape. Got shapes {cost.shape} and "
                             f"{decision.shape} instead.")
        if not any(p is cost for p in problem.parameters()):
            raise ValueError(f"The 'cost' parameter of from_cvxpy ({_name(cost)}) is not a "
                             f"parameter of the problem.")
        if not any(v is decision for v in problem.variables()):
            raise ValueError(f"The 'decision' parameter of from_cvxpy ({_name(decision)}) is "
                             f"not a variable of the problem.")
        if solver_options is not None and not isinstance(solver_options, dict):
            raise ValueError(f"The 'solver_options' parameter of from_cvxpy must be a dict or "
                             f"None. Got {type(solver_options).__name__} instead.")
        self.sense = "max" if isinstance(problem.objective, cp.Maximize) else "min"
        self._check_objective(problem.objective.expr, cost, decision)
        for k, constraint in enumerate(problem.constraints):
            if any(p is cost for p in constraint.parameters()):
                raise ValueError(
                    f"The 'cost' parameter of from_cvxpy ({_name(cost)}) appears in "
                    f"constraint {k} of the problem ({constraint}); it may appear only in "
                    f"the objective cost @ decision, since the feasible set must not change "
                    f"with the cost vector. Use another cvxpy.Parameter in the constraints.")
        if not problem.is_dcp(dpp=True):
            raise ValueError(
                "The 'problem' parameter of from_cvxpy must be DCP and DPP-compliant "
                "(problem.is_dcp(dpp=True) is False), so that it is compiled once and only "
                "the cost parameter changes between solves. Keep cost only in the objective "
                "cost @ x, and see CVXPY's documentation on disciplined parametrized "
                "programming.")
        # The objective is cost @ decision (checked above), solved with a
        # private Parameter of no attributes: spotree solves for any real cost
        # vector (the SPO+ loss at 2 c_hat - c, SPOBoost's subgradients), which
        # CVXPY refuses for a cost declared nonneg=True ("Parameter value must
        # be nonnegative") or with bounds.
        self._cost = cp.Parameter(cost.shape)
        objective = (self._cost @ decision if len(cost.shape) == 1
                     else cp.sum(cp.multiply(self._cost, decision)))
        self.problem = cp.Problem(type(problem.objective)(objective), problem.constraints)
        self.cost = cost
        self.decision = decision
        self._integer = _integer_entries(decision)
        self.solver = solver
        self.solver_options = dict(solver_options or {})
        # A 2-D cost and decision are flattened in C (row-major) order.
        self.n_costs = int(np.prod(cost.shape))
        self._model_lock = threading.Lock()
        self._exact_gap = {}
        # One solve with a zero objective: compiles the problem and finds out
        # whether it is feasible.
        self._solve_one(np.zeros(self.n_costs), None)
        if self._integer.any():
            self._exact_gap = _exact_gap_options(self.problem.solver_stats.solver_name,
                                                 self.solver_options)

    @staticmethod
    def _check_objective(expr, cost, decision):
        """The objective must be exactly ``cost @ decision`` (checked at random points)."""
        hint = ("The objective of the problem passed to from_cvxpy must be exactly cost @ "
                "decision (Minimize or Maximize; for 2-D ones, cp.sum(cp.multiply(cost, "
                "decision))), linear in the cost parameter; ")
        params = expr.parameters()
        if len(params) != 1 or params[0] is not cost:
            raise ValueError(hint + f"it depends on the parameters "
                             f"{[_name(p) for p in params]}.")
        variables = expr.variables()
        if len(variables) != 1 or variables[0] is not decision:
            raise ValueError(hint + f"it depends on the variables "
                             f"{[_name(v) for v in variables]}.")
        saved = (cost.value, decision.value)
        rng = np.random.default_rng(0)
        try:
            for _ in range(3):
                # Points of the leaves' own domains (nonneg=True, boolean=True,
                # bounds=...): CVXPY refuses any other value.
                a = cost.project(rng.normal(size=cost.shape))
                b = decision.project(rng.normal(size=decision.shape))
                cost.value, decision.value = a, b
                got = float(np.asarray(expr.value))
                if abs(got - np.sum(a * b)) > 1e-9 * np.sum(np.abs(a) * np.abs(b)):
                    raise ValueError(hint + "it is not (it differs from cost @ decision at a "
                                     "random point).")
        finally:
            cost.value, decision.value = saved

    def _solve_one(self, c, i):
        where = "" if i is None else f" for cost vector {i}"
        # Scaled by a power of two (exact) to a largest entry in [0.5, 1):
        # solvers' tolerances are absolute, so costs of order 1e-9 got
        # decisions half as good as the optimum and costs of order 1e9
        # failed; the optimal decisions do not depend on a positive scale.
        peak = np.abs(c).max(initial=0.0)
        c = np.ldexp(c, -int(np.frexp(peak)[1])) if 0.0 < peak < np.inf else c
        self._cost.value = c.reshape(self._cost.shape)  # C order, as the decision below
        try:
            self.problem.solve(solver=self.solver,
                               **_fresh({**self.solver_options, **self._exact_gap}))
        except Exception as exc:
            raise ValueError(f"The CVXPY problem passed to from_cvxpy could not be solved"
                             f"{where} ({type(exc).__name__}: {exc}).") from exc
        status = self.problem.status
        if status not in _OK:
            what = {"infeasible": "infeasible", "infeasible_inaccurate": "infeasible",
                    "unbounded": "unbounded", "unbounded_inaccurate": "unbounded",
                    "infeasible_or_unbounded": "infeasible or unbounded"}.get(
                        status, "not solved")
            raise ValueError(f"The CVXPY problem passed to from_cvxpy is {what}{where} "
                             f"(status {status!r}); every cost vector needs a finite optimum. "
                             f"Check its constraints and variable bounds.")
        w = np.asarray(self.decision.value, dtype=np.float64).reshape(-1)
        if w.shape != (self.n_costs,) or not np.isfinite(w).all():
            raise ValueError(f"The CVXPY problem passed to from_cvxpy returned no finite "
                             f"decision{where} (status {status!r}).")
        # Boolean and integer entries come back from the solver up to its
        # tolerance (ECOS_BB: 1.00000000006, 3.6e-11): snapped to the integers
        # they stand for, as LinearProgram does (+ 0.0: no -0.).
        w[self._integer] = np.round(w[self._integer]) + 0.0
        return w

    def _solve(self, C):
        W = np.empty_like(C)
        # The problem's parameter and variable values are shared state.
        with self._model_lock:
            for i in range(C.shape[0]):
                W[i] = self._solve_one(C[i], i)
        return W, np.einsum("ij,ij->i", C, W)

    def __getstate__(self):
        import cvxpy as cp

        state = super().__getstate__()
        # A fresh Problem over the same expressions: the solved problem caches
        # solver data that may not pickle; the copy compiles on first use.
        state["problem"] = cp.Problem(self.problem.objective, self.problem.constraints)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._model_lock = threading.Lock()
        # Pickles made before the private cost parameter and the integer
        # mask: their objective is over the user's cost parameter.
        if "_cost" not in state:
            self._cost = self.cost
        if "_integer" not in state:
            self._integer = _integer_entries(self.decision)
        if "_exact_gap" not in state:
            self._exact_gap = {}

    def __deepcopy__(self, memo):
        # CVXPY's own deep copy gives the leaves new ids but not the caches
        # keyed by them (the copy then crashes in CVXPY's C++ core); a pickle
        # round trip keeps every expression consistent.
        import pickle

        return pickle.loads(pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL))

    def to_dict(self):
        raise NotImplementedError("A problem made by from_cvxpy cannot be written to JSON. "
                                  "Save the model without it and pass the problem again when "
                                  "loading.")

    def __repr__(self):
        return (f"from_cvxpy(n_costs={self.n_costs}, sense={self.sense!r}, "
                f"solver={self.solver!r})")


def _fresh(options):
    """A copy of ``options`` whose dict values are copies too: CVXPY's SciPy
    interface writes into the ``scipy_options`` dict it is given."""
    return {k: dict(v) if isinstance(v, dict) else v for k, v in options.items()}


def _exact_gap_options(solver_name, options):
    """Options that make a MIP solver prove optimality, for a problem with integer entries.

    HiGHS (directly, or through SciPy's milp) stops its branch and bound at a
    relative gap of 1e-4: CVXPY then reported a knapsack decision 4e-5 below
    the optimum as optimal, so that z* was wrong and an SPO loss could be
    negative. spotree's own MILPs solve to a zero gap; so do these, unless
    the user's ``solver_options`` set the gap.
    """
    if solver_name == "HIGHS":
        gaps = ("mip_rel_gap", "mip_abs_gap")
        return {} if any(k in options for k in gaps) else dict.fromkeys(gaps, 0.0)
    if solver_name == "SCIPY":
        given = options.get("scipy_options")
        given = given if isinstance(given, dict) else {}
        if "mip_rel_gap" not in given:
            return {"scipy_options": {**given, "mip_rel_gap": 0.0}}
    return {}


def _integer_entries(decision):
    """Mask of the entries of ``decision`` declared boolean or integer."""
    mask = np.zeros(decision.shape, dtype=bool)
    for idx in (decision.boolean_idx, decision.integer_idx):
        # A tuple of index arrays (boolean=True) or a list of index tuples
        # (boolean=[(0,), (2,)]).
        for where in ([idx] if isinstance(idx, tuple) else idx):
            mask[tuple(where)] = True
    return mask.reshape(-1)  # C order, as the decisions


def from_cvxpy(problem, cost, decision, solver=None, solver_options=None):
    """A convex CVXPY problem as a spotree decision problem.

    The problem's objective must be ``cp.Minimize(cost @ decision)`` or
    ``cp.Maximize(cost @ decision)`` with ``cost`` a :class:`cvxpy.Parameter`
    and ``decision`` a :class:`cvxpy.Variable` of the same length; the
    constraints may be anything CVXPY accepts (quadratic, second-order cone,
    semidefinite...), which is what :class:`LinearProgram` cannot express,
    but may not involve ``cost``.
    The problem is compiled once (it must be DPP-compliant) and re-solved for
    every cost vector; the values are ``c^T w`` of the returned decisions, so
    they carry the solver's accuracy (about 1e-8 relative for interior-point
    solvers).

    ``cost`` and ``decision`` may also be 2-D, of one shape ``(n, m)`` (an
    assignment problem's ``x[i, j]``), with the objective
    ``cp.sum(cp.multiply(cost, decision))``. They are flattened in C
    (row-major) order: entry ``i * m + j`` of a cost vector (a column of
    ``C``) is ``cost[i, j]``, and the same entry of a decision is
    ``decision[i, j]``; ``W.reshape(-1, n, m)`` gives the decisions back as
    matrices.

    Entries of ``decision`` declared ``boolean`` or ``integer`` come back
    as exact integers (solvers return them up to their tolerance). Such a
    problem is solved by a MIP solver's branch and bound, which stops at its
    own optimality gap: with HiGHS (CVXPY's usual choice) or SciPy, spotree
    asks for a gap of 0, as for its own MILPs, unless ``solver_options``
    sets one (``mip_rel_gap``, ``mip_abs_gap``; for SciPy, in
    ``scipy_options``); with another MIP solver, pass its gap option (for
    example ``MIPGap`` for Gurobi), since its default (often 1e-4
    relative) returns decisions short of the optimum.

    The problem pickles (a fresh copy of its expressions, compiled again on
    first use in each process), so forests fit in parallel processes. Each
    solve sets ``decision.value`` of the variable passed; the cost vector
    (times a power of two, which puts its largest entry in [0.5, 1) so that
    the solver's tolerances are relative to it) goes to a private copy of
    ``cost`` without its attributes, since any real cost vector may be solved
    for (the SPO+ loss solves for ``2 c_hat - c``), also with a ``cost``
    declared ``nonneg=True``. Other
    parameters of the constraints (a risk budget, say) must have values,
    and are the objects passed, not copies: in this process, a value changed
    later changes the feasible set of the problem and of the models fitted
    on it (whose stored decisions were optimal for the old one).

    Parameters
    ----------
    problem : cvxpy.Problem
    cost : cvxpy.Parameter of shape (d,) or (n, m)
    decision : cvxpy.Variable of the same shape as ``cost``
    solver : str or None, default=None
        Passed to ``problem.solve`` (None lets CVXPY choose).
    solver_options : dict or None, default=None
        More keyword arguments of ``problem.solve``.

    Returns
    -------
    CVXPYProblem

    Raises
    ------
    ImportError
        If cvxpy is not installed (``pip install spotree[cvxpy]``).
    TypeError, ValueError
        For arguments of the wrong type, an objective other than ``cost @
        decision``, ``cost`` in a constraint, a problem that is not DPP, or an
        infeasible problem (found by one solve at construction); on solving,
        for a cost vector with no finite optimum (unbounded).

    Examples
    --------
    >>> import cvxpy as cp
    >>> from spotree.problems import from_cvxpy
    >>> c, x = cp.Parameter(3), cp.Variable(3)
    >>> ball = cp.Problem(cp.Minimize(c @ x), [cp.sum_squares(x) <= 1])
    >>> problem = from_cvxpy(ball, c, x, solver="CLARABEL")
    >>> W, z = problem.solve([[3.0, 0.0, 4.0]])
    >>> round(float(z[0]), 5)
    -5.0
    """
    return CVXPYProblem(problem, cost, decision, solver=solver, solver_options=solver_options)
