"""Checks that the decisions stored in a model file belong to its decision problem.

A model file stores, for every node, the mean cost vector ``value`` and the
decision ``decision`` taken there. Scores are computed from the decisions
without calling the oracle again, so a file whose decisions are not feasible
(edited to all zeros, say) would score as a perfect model: the SPO loss of a
decision better than the optimum is negative. :func:`check_decisions` refuses
such files. What it checks, in order:

1. **Feasibility of every distinct decision**, exactly where the problem
   allows it without solver work:

   - a :class:`~spotree.problems.LinearProgram`: the constraints, bounds and
     integrality, each row within ``1e-6`` of its magnitude
     (``|A_i| . max|w| + |b_i|``, so the test does not depend on units);
   - any other problem with a vertex list (``vertices()`` not None:
     :class:`~spotree.problems.FiniteDecisions`, shortest paths with at most
     ``max_vertices`` paths, a :class:`~spotree.problems.CallableProblem`
     given its vertices): the decision equals one of the vertices within
     ``1e-6`` of the largest vertex entry;
   - otherwise (a user oracle, a large grid): no decision may be better than
     the oracle's optimum for any of the cost vectors of step 2 and 32 random
     ones (``sign * (c.w - z*(c)) >= -tol``). This is a necessary condition
     only: a decision that no tried cost vector exposes passes.

2. **Optimality for the stored value.** The oracle is called on the stored
   ``value`` of every node (of 1,024 nodes drawn with a fixed seed when the
   file holds more, so that loading costs a bounded number of solves), and
   each node's decision must reach the optimum, ``|sign * (value.w -
   z*(value))| <= tol``. A flipped ``sense``, another problem of the same size
   passed to ``load(..., problem=p)``, or a decision edited to another
   feasible one fails here.

Every tolerance is relative: cost vectors are scaled to a largest entry of 1
before use (which changes no optimal decision), and ``tol = 1e-6 * (|c|.|w| +
|c|.|w*|)``, the magnitude of the two dot products compared, which bounds their
rounding error and the solvers' relative tolerances. Scaling the costs of a
model by any positive factor gives the same verdict.
"""

from __future__ import annotations

import numpy as np

from .._schema import SchemaError
from ..problems import LinearProgram

__all__ = ["check_decisions"]

#: Relative tolerance of every check (rounding, solver feasibility tolerances).
RTOL = 1e-6
#: Most node values re-solved at load.
MAX_SOLVES = 1024
#: Random cost vectors added when feasibility cannot be tested exactly.
N_RANDOM = 32


def _rowdot(A, B):
    return np.einsum("ij,ij->i", A, B)


def _unit_rows(K):
    """Rows scaled to a largest absolute entry of 1 (zero rows stay zero)."""
    s = np.abs(K).max(axis=1, keepdims=True)
    return K / np.where(s > 0, s, 1.0)


def _distinct_rows(D):
    """The distinct rows of D and the index of each one's first occurrence."""
    D = np.ascontiguousarray(D)
    # Rows compared as raw bytes: sorting them is much faster than np.unique(axis=0).
    rows = D.view(np.dtype((np.void, D.dtype.itemsize * D.shape[1]))).ravel()
    _, first = np.unique(rows, return_index=True)
    return D[first], first


# -------------------------------------------------------------- feasibility
def _bounds_arrays(bounds, d):
    pairs = [bounds] * d if isinstance(bounds, tuple) else list(bounds)
    lo = np.array([-np.inf if p[0] is None else p[0] for p in pairs], dtype=np.float64)
    hi = np.array([np.inf if p[1] is None else p[1] for p in pairs], dtype=np.float64)
    return lo, hi


def _lp_violation(problem, W):
    """Largest relative constraint violation of each row of W (0 when feasible)."""
    W = np.asarray(W, dtype=np.float64)
    size = np.abs(W).max(axis=1)                        # max|w| per decision
    viol = np.zeros(W.shape[0])

    def worst(excess, magnitude):
        # excess, magnitude: (n_constraints, n_decisions)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(excess > 0, excess / magnitude, 0.0)
        r = np.where((excess > 0) & ~(magnitude > 0), np.inf, r)
        return r.max(axis=0, initial=0.0)

    for A, b, eq in ((problem.A_ub, problem.b_ub, False), (problem.A_eq, problem.b_eq, True)):
        if A is None:
            continue
        r = np.asarray(A @ W.T) - np.asarray(b, dtype=np.float64)[:, None]
        row_norm = np.asarray(abs(A).sum(axis=1)).ravel()
        magnitude = row_norm[:, None] * size[None, :] + np.abs(b)[:, None]
        viol = np.maximum(viol, worst(np.abs(r) if eq else r, magnitude))
    lo, hi = _bounds_arrays(problem.bounds, problem.n_costs)
    for excess, bound in ((lo[None, :] - W, lo), (W - hi[None, :], hi)):
        finite = np.isfinite(bound)
        if finite.any():
            magnitude = size[:, None] + np.abs(bound[finite])[None, :]
            viol = np.maximum(viol, worst(excess[:, finite].T, magnitude.T))
    integ = getattr(problem, "integrality", None)
    if integ is not None and np.asarray(integ).any():
        cols = np.flatnonzero(np.asarray(integ))
        frac = np.abs(W[:, cols] - np.round(W[:, cols]))
        # Integers have a natural unit: the distance to the nearest one is
        # measured in it (HiGHS accepts 1e-6), relative beyond 1.
        viol = np.maximum(viol, (frac / np.maximum(1.0, np.abs(W[:, cols]))).max(axis=1))
    return viol


def _in_list(U, V):
    """Whether each row of U equals a row of V within RTOL * max|V|."""
    tol = RTOL * np.abs(V).max(initial=0.0)
    found = np.zeros(U.shape[0], dtype=bool)
    block = max(1, int(2e7 // max(1, V.size)))
    for s in range(0, U.shape[0], block):
        diff = np.abs(U[s:s + block, None, :] - V[None, :, :]).max(axis=2)
        found[s:s + block] = (diff <= tol).any(axis=1)
    return found


def _exact_infeasible(problem, U):
    """Rows of U proven infeasible, or None when no exact test applies (see module doc)."""
    if isinstance(problem, LinearProgram):
        return _lp_violation(problem, U) > RTOL
    V = problem.vertices()
    if V is None:
        return None
    return ~_in_list(U, np.asarray(V, dtype=np.float64))


# ------------------------------------------------------------------- check
def check_decisions(trees, problem, where="trees"):
    """Refuse stored decisions that are infeasible or not optimal (see module doc).

    Parameters
    ----------
    trees : list of Tree
    problem : DecisionProblem
        With ``n_costs`` equal to the trees' ``n_outputs``.
    where : str, default="trees"
        Path of ``trees`` in the document, for error messages.

    Raises
    ------
    ValueError
        A :class:`spotree._schema.SchemaError` naming the first offending
        ``trees[i].decision[t]``.
    """
    if not trees:
        return
    D = np.vstack([t.decision for t in trees])
    values = np.vstack([t.value for t in trees])
    owner = np.concatenate([np.full(t.node_count, i) for i, t in enumerate(trees)])
    node = np.concatenate([np.arange(t.node_count) for t in trees])
    sense = f"a {problem.sense!r} problem"
    pname = type(problem).__name__

    def fail(k, message):
        raise SchemaError(f"{where}[{owner[k]}].decision[{node[k]}]", message)

    U, first = _distinct_rows(D)
    bad = _exact_infeasible(problem, U)
    if bad is not None and bad.any():
        fail(int(first[bad].min()),
             f"is not a feasible decision of the model's problem ({pname}, {sense}).")

    N = D.shape[0]
    rng = np.random.default_rng(0)
    sample = (np.arange(N) if N <= MAX_SOLVES
              else np.sort(rng.choice(N, MAX_SOLVES, replace=False)))
    K = _unit_rows(values[sample])
    Dk = D[sample]
    if bad is None:
        d = problem.n_costs
        g = rng.standard_normal((N_RANDOM, d))
        q = N_RANDOM // 4
        g[:q] = np.abs(g[:q])
        g[q:2 * q] = -np.abs(g[q:2 * q])
        K = np.vstack([K, _unit_rows(g)])
    W_opt, z = problem.solve(K)
    sign = problem.sign

    # 2. Each sampled node's decision is optimal for its own value.
    m = sample.size
    gap = sign * (_rowdot(K[:m], Dk) - z[:m])
    scale = _rowdot(np.abs(K[:m]), np.abs(Dk)) + _rowdot(np.abs(K[:m]), np.abs(W_opt[:m]))
    tol = RTOL * scale
    worse = np.flatnonzero(gap > tol)
    if worse.size:
        i = int(worse[0])
        fail(int(sample[i]),
             f"is not optimal for the node's value under the model's problem ({pname}, "
             f"{sense}): value . decision = {K[i] @ Dk[i]:.6g} but the optimum is "
             f"{z[i]:.6g} (value scaled to a largest entry of 1). The problem or its sense "
             "differs from the one the model was fitted with, or the file was edited.")
    better = np.flatnonzero(gap < -tol)
    if better.size:
        i = int(better[0])
        fail(int(sample[i]),
             f"is better than the optimum of the node's value under the model's problem "
             f"({pname}, {sense}), so it is not a feasible decision of that problem.")

    # 1c. Without an exact test: no distinct decision beats any optimum.
    if bad is None:
        absK = np.abs(K)
        base = _rowdot(absK, np.abs(W_opt))
        block = max(1, int(2e7 // max(1, K.size)))
        beaten = np.zeros(U.shape[0], dtype=bool)
        for s in range(0, U.shape[0], block):
            Ub = U[s:s + block]
            gapU = sign * (K @ Ub.T - z[:, None])
            tolU = RTOL * (absK @ np.abs(Ub).T + base[:, None])
            beaten[s:s + block] = (gapU < -tolU).any(axis=0)
        if beaten.any():
            fail(int(first[beaten].min()),
                 f"is better than the optimum of the model's problem ({pname}, {sense}) "
                 "for some cost vector, so it is not a feasible decision of that problem.")
