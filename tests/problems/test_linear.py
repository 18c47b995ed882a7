"""LinearProgram and news_recommendation against scipy's solvers and brute force."""

import copy
import itertools
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from spotree.problems import LinearProgram, news_recommendation, problem_from_dict
from spotree.problems._base import solver_session

RTOL = 1e-9
#: HiGHS's default dual feasibility tolerance.
HIGHS_DUAL_TOL = 1e-7


def random_lp(seed, d=4, n_ub=5, n_eq=1, free=False, sense="min", basis_cache=True):
    """A random feasible, bounded LP (feasible at a known interior-ish point)."""
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-1, 1, d)
    A_ub = rng.normal(size=(n_ub, d))
    b_ub = A_ub @ x0 + rng.uniform(0.1, 1.0, n_ub)
    A_eq = rng.normal(size=(n_eq, d)) if n_eq else None
    b_eq = A_eq @ x0 if n_eq else None
    if free:
        # Free variables, bounded only through the constraints.
        A_ub = np.vstack([A_ub, np.eye(d), -np.eye(d)])
        b_ub = np.concatenate([b_ub, np.full(2 * d, 2.0)])
        bounds = [(None, None)] * d
    else:
        bounds = (-2.0, 2.0)
    return LinearProgram(A_ub, b_ub, A_eq, b_eq, bounds=bounds, sense=sense,
                         basis_cache=basis_cache)


def linprog_values(problem, C):
    sign = problem.sign
    out = []
    for c in C:
        res = linprog(sign * c, A_ub=problem.A_ub, b_ub=problem.b_ub, A_eq=problem.A_eq,
                      b_eq=problem.b_eq, bounds=problem.bounds, method="highs")
        assert res.status == 0
        out.append(sign * res.fun)
    return np.array(out)


def assert_feasible(problem, W, tol=1e-7):
    if problem.A_ub is not None:
        assert (W @ problem.A_ub.T <= problem.b_ub + tol).all()
    if problem.A_eq is not None:
        residual = W @ problem.A_eq.T - problem.b_eq
        np.testing.assert_allclose(residual, 0.0, atol=tol)
    assert (W >= problem._lo - tol).all() and (W <= problem._hi + tol).all()


def close(a, b, scale):
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=RTOL * scale)


# ------------------------------------------------------------------ solve
@pytest.mark.parametrize("sense", ["min", "max"])
@pytest.mark.parametrize("basis_cache", [False, True])
@pytest.mark.parametrize("free", [False, True])
def test_solve_matches_linprog(sense, basis_cache, free):
    problem = random_lp(0, free=free, sense=sense, basis_cache=basis_cache)
    C = np.random.default_rng(1).normal(size=(40, problem.n_costs))
    W, z = problem.solve(C)
    assert W.shape == C.shape and z.shape == (40,)
    close(z, linprog_values(problem, C), np.abs(C).max())
    close(z, np.einsum("ij,ij->i", C, W), np.abs(C).max())
    assert_feasible(problem, W)


@pytest.mark.parametrize("basis_cache", [False, True])
def test_solve_gives_no_negative_zeros(basis_cache):
    """Variables at an upper bound of 0 came back as -0. from HiGHS (and the basis cache):
    print(W) showed "-0." and json.dumps "-0.0". On sum w = -1, -1 <= w <= 0 the optimum
    (by hand) is w = -1 at the dearest cost, 0 elsewhere: +0., as a user would write it."""
    problem = LinearProgram(A_eq=np.ones((1, 4)), b_eq=[-1.0], bounds=(-1, 0),
                            basis_cache=basis_cache)
    C = np.random.default_rng(1).normal(size=(20, 4))
    W, _ = problem.solve(C)
    want = -(C == C.max(axis=1, keepdims=True)).astype(float) + 0.0
    np.testing.assert_array_equal(W, want)
    assert not np.signbit(W[W == 0]).any()
    assert "-0" not in str(W) and "-0.0" not in json.dumps(W.tolist())


def brute_force_integer(problem, C):
    """Enumerate all integer points of the (finite) bounds box."""
    grids = [np.arange(lo, hi + 1) for lo, hi in zip(problem._lo, problem._hi)]
    P = np.array(list(itertools.product(*grids)), dtype=float)
    ok = (P @ problem.A_ub.T <= problem.b_ub + 1e-9).all(axis=1)
    if problem.A_eq is not None:
        ok &= (np.abs(P @ problem.A_eq.T - problem.b_eq) <= 1e-9).all(axis=1)
    G = C @ P[ok].T
    return G.min(axis=1) if problem.sense == "min" else G.max(axis=1)


@pytest.mark.parametrize("sense", ["min", "max"])
def test_milp_matches_enumeration_and_scipy_milp(sense):
    rng = np.random.default_rng(4)
    A_ub = rng.uniform(0.5, 2.0, size=(3, 4))
    problem = LinearProgram(A_ub, np.full(3, 6.0), bounds=(-1, 3), integrality=np.ones(4),
                            sense=sense)
    assert problem.is_milp
    C = rng.normal(size=(25, 4))
    W, z = problem.solve(C)
    close(z, brute_force_integer(problem, C), np.abs(C).max())
    np.testing.assert_array_equal(W, np.round(W))  # exact integers
    assert_feasible(problem, W)
    for c, zi in zip(C, z):
        res = milp(problem.sign * c, constraints=LinearConstraint(A_ub, -np.inf, 6.0),
                   bounds=Bounds(-1, 3), integrality=np.ones(4),
                   options={"mip_rel_gap": 0.0})
        assert res.status == 0
        assert abs(problem.sign * res.fun - zi) <= RTOL * max(1.0, abs(zi))


def test_mixed_integer_matches_scipy_milp():
    rng = np.random.default_rng(5)
    A_ub = rng.uniform(0.2, 1.5, size=(4, 5))
    b_ub = np.full(4, 4.5)
    integrality = np.array([1, 0, 1, 0, 1])
    problem = LinearProgram(A_ub, b_ub, bounds=(0, 4), integrality=integrality, sense="max")
    C = rng.uniform(-1, 2, size=(20, 5))
    W, z = problem.solve(C)
    assert_feasible(problem, W)
    np.testing.assert_array_equal(W[:, [0, 2, 4]], np.round(W[:, [0, 2, 4]]))
    for c, zi in zip(C, z):
        res = milp(-c, constraints=LinearConstraint(A_ub, -np.inf, b_ub), bounds=Bounds(0, 4),
                   integrality=integrality, options={"mip_rel_gap": 0.0})
        assert abs(-res.fun - zi) <= RTOL * max(1.0, abs(zi))
    # Its vertex list (the slices' vertices) gives the same maxima.
    V = problem.vertices()
    assert V is not None
    close(problem.solve_vertices(C)[1], z, np.abs(C).max())


def test_milp_decisions_are_exact_integers():
    # HiGHS returned -0.9999999999999999 and -2.0000000000000004 for these
    # integer variables (found by fuzzing); the decisions must be the exact
    # integer points that brute force over the box lists.
    A_ub = np.array([[-0.74, 0.46, -0.87, 0.35], [0.76, -1.72, 0.37, 0.31],
                     [0.09, 0.83, 0.28, -1.34], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0],
                     [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, -1.0]])
    b_ub = np.array([1.0, 1.0, 0.0, 2.0, 2.0, 1.0, 1.0])
    bounds = [(-2, None), (0, 1), (-2, None), (None, None)]
    box = [range(-2, 3), range(0, 2), range(-2, 3), range(-1, 2)]  # implied by the rows
    P = np.array(list(itertools.product(*box)), dtype=float)
    P = P[(P @ A_ub.T <= b_ub + 1e-9).all(axis=1)]
    C = np.array([[1.0, 0.0, -2.0, 2.0], [2.0, -1.0, 1.0, -2.0]])
    for c in C:
        problem = LinearProgram(A_ub, b_ub, bounds=bounds, integrality=1, sense="max")
        W, z = problem.solve([c])
        assert any(np.array_equal(W[0], p) for p in P), W
        assert not (np.signbit(W) & (W == 0)).any()  # no -0.
        assert z[0] == (P @ c).max()


def test_milp_infeasible_although_relaxation_feasible():
    with pytest.raises(ValueError, match="infeasible"):
        LinearProgram(A_eq=[[2.0]], b_eq=[1.0], bounds=(0, 5), integrality=[1])


# --------------------------------------------------------------- vertices
@pytest.mark.parametrize("seed", range(4))
def test_vertices_cross_check(seed):
    problem = random_lp(seed, d=4, n_ub=4, n_eq=seed % 2, free=seed >= 2, sense="max")
    V = problem.vertices()
    assert V is not None and V.ndim == 2 and V.shape[1] == problem.n_costs
    assert_feasible(problem, V, tol=1e-8)
    # Deduplicated and in lexicographic order.
    assert len(np.unique(np.round(V, 8), axis=0)) == len(V)
    assert all(tuple(a) < tuple(b) for a, b in zip(np.round(V, 8), np.round(V[1:], 8)))
    C = np.random.default_rng(seed + 10).normal(size=(200, problem.n_costs))
    _, z = problem.solve(C)
    Wv, zv, k = problem.solve_vertices(C)
    close(zv, z, np.abs(C).max())
    # Every listed point is a vertex: n_costs linearly independent active constraints.
    d = problem.n_costs
    rows = [problem.A_ub, -np.eye(d), np.eye(d)]
    rhs = [problem.b_ub, -problem._lo, problem._hi]
    if problem.A_eq is not None:
        rows.append(problem.A_eq)
        rhs.append(problem.b_eq)
    M, b = np.vstack(rows), np.concatenate(rhs)
    for v in V:
        active = np.isfinite(b) & (np.abs(M @ v - b) <= 1e-8)
        assert np.linalg.matrix_rank(M[active]) == d


def test_integer_point_vertices():
    # w1 >= 0 comes from a constraint, not a bound: the box is found by the solver.
    problem = LinearProgram([[1.0, 1.0], [0.0, -1.0]], [2.5, 0.0], bounds=[(0, 2), (None, 2)],
                            integrality=[1, 1])
    V = problem.vertices()
    expected = np.array([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [2, 0]], dtype=float)
    np.testing.assert_array_equal(V, expected)
    C = np.random.default_rng(0).normal(size=(50, 2))
    _, z = problem.solve(C)
    close((C @ V.T).min(axis=1), z, np.abs(C).max())


def test_vertex_limits_return_none():
    problem = random_lp(1)
    problem.max_bases_enumerated = 3
    assert problem.vertices() is None
    problem = random_lp(1)
    problem.max_vertices = 1
    assert problem.vertices() is None


def small_mixed(sense="min"):
    """A mixed-integer set whose slices have vertices on a grid of 0.5.

    x0 integer in [0, 3]; x1 integer bounded only by rows (its box comes
    from the LP relaxation); x2 continuous and free, bounded through rows
    that move with x0 and x1; x3, x4 continuous, tied to x0 by an equality.
    With integer costs, ties are frequent and values exact.
    """
    A_ub = [[0, -1, 0, 0, 0],             # x1 >= -1
            [1, 1, 0, 0, 0],              # x0 + x1 <= 3
            [-1, 0, 1, 0, 0],             # x2 <= x0 + 1.5
            [0, -1, -1, 0, 0],            # x2 >= -x1 - 0.5
            [0, 0, 1, 1, 0]]              # x2 + x3 <= 4
    b_ub = [1, 3, 1.5, 0.5, 4]
    A_eq, b_eq = [[-0.5, 0, 0, 1, 1]], [2]
    bounds = [(0, 3), (None, None), (None, None), (0, None), (0, 1.5)]
    return LinearProgram(A_ub, b_ub, A_eq, b_eq, bounds=bounds, integrality=[1, 1, 0, 0, 0],
                         sense=sense)


def assert_lexicographically_smallest_optimum(problem, c, w):
    """No optimal point of the problem is lexicographically smaller than ``w`` (scipy.milp).

    With the first ``j`` coordinates at ``w``'s (fixed by bounds, exact) and
    ``c.w`` at most ``w``'s value, no smaller ``j``-th coordinate is
    feasible. ``w`` is exactly feasible: its values are on a grid of 0.5.
    """
    s, d = problem.sign, problem.n_costs
    rows = [LinearConstraint(s * c, -np.inf, s * c @ w + 1e-9)]
    if problem.A_ub is not None:
        rows.append(LinearConstraint(problem.A_ub, -np.inf, problem.b_ub))
    if problem.A_eq is not None:
        rows.append(LinearConstraint(problem.A_eq, problem.b_eq, problem.b_eq))
    lo, hi = problem._lo.copy(), problem._hi.copy()
    for j in range(d):
        if problem.integrality[j]:
            below = hi.copy()
            below[j] = w[j] - 1
            res = milp(np.zeros(d), constraints=rows, bounds=Bounds(lo, below),
                       integrality=problem.integrality)
            assert res.status == 2, (c, w, j, res.x)          # infeasible
        else:
            res = milp(np.eye(d)[j], constraints=rows, bounds=Bounds(lo, hi),
                       integrality=problem.integrality, options={"mip_rel_gap": 0.0})
            assert res.status == 0 and res.fun >= w[j] - 1e-7, (c, w, j, res.x)
        lo[j] = hi[j] = w[j]


@pytest.mark.parametrize("sense", ["min", "max"])
def test_mixed_integer_vertices_break_ties_lexicographically(sense):
    # Among tied optima, solve_vertices takes the lexicographically smallest
    # optimal point of the whole feasible set (a vertex of its slice), as the
    # docstring says; checked against scipy.milp.
    problem = small_mixed(sense)
    V = problem.vertices()
    assert V is not None
    rng = np.random.default_rng(0 if sense == "min" else 1)
    C = np.vstack([np.zeros(5), rng.integers(-1, 2, size=(7, 5))]).astype(float)
    W, z, _ = problem.solve_vertices(C)
    _, z_highs = highs_only(small_mixed(sense)).solve(C)
    np.testing.assert_array_equal(z, z_highs)
    for c, w in zip(C, W):
        assert_lexicographically_smallest_optimum(problem, c, w)


def test_tree_on_a_mixed_integer_program_same_with_and_without_vertices():
    from spotree import SPOTree

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    C = np.column_stack([X[:, 0], -X[:, 1], X[:, 0] * X[:, 2], X[:, 2], 1 - X[:, 1]])
    C += 0.3 * rng.normal(size=C.shape)
    fits = []
    for max_vertices in (5000, 0):
        problem = small_mixed("max")
        problem.max_vertices = max_vertices           # 0: no list, the solver path
        fits.append(SPOTree(problem, max_depth=2, min_samples_leaf=5, thresholds=4).fit(X, C))
    with_list, without = fits
    assert with_list.n_oracle_calls_ == 0 and without.n_oracle_calls_ > 0
    assert with_list.tree_.node_count >= 5
    np.testing.assert_array_equal(with_list.tree_.feature, without.tree_.feature)
    np.testing.assert_array_equal(with_list.tree_.threshold, without.tree_.threshold)
    np.testing.assert_allclose(with_list.predict_decision(X), without.predict_decision(X),
                               atol=1e-9)


def highs_only(problem):
    """``problem`` with solve() on HiGHS: no vertex list to scan."""
    problem._model_listed = None
    return problem


def random_milp(seed, sense, mixed):
    """A small random bounded MILP (pure or mixed) and its scipy.milp pieces."""
    rng = np.random.default_rng(seed)
    d = 4
    A_ub = rng.uniform(-0.5, 1.5, size=(3, d))
    b_ub = rng.uniform(2.0, 5.0, size=3)
    integrality = np.array([1, 1, 0, 0] if mixed else [1, 1, 1, 1])
    # (scipy.milp returned a suboptimal point for an integer variable with
    # the bound 2.5: integer variables get integer bounds.)
    bounds = [(0, 3), (-1, 2), (0, 2.5 if mixed else 2), (0, 4)]
    problem = LinearProgram(A_ub, b_ub, bounds=bounds, integrality=integrality, sense=sense)
    return problem, LinearConstraint(A_ub, -np.inf, b_ub), Bounds(*np.array(bounds).T)


@pytest.mark.parametrize("mixed", [False, True])
@pytest.mark.parametrize("sense", ["min", "max"])
def test_milp_solve_scans_its_vertex_list_and_matches_scipy_milp(sense, mixed, monkeypatch):
    # A small MILP's batch is answered from its vertex list, without HiGHS;
    # the optimal values are scipy.milp's, both senses, pure and mixed.
    monkeypatch.setattr(LinearProgram, "_solve_highs", lambda self, Cm: pytest.fail("HiGHS"))
    for seed in range(3):
        problem, rows, bounds = random_milp(seed, sense, mixed)
        C = np.random.default_rng(seed + 20).normal(size=(6, 4))
        W, z = problem.solve(C)
        assert problem._listed() is not None
        assert_feasible(problem, W, tol=1e-8)
        np.testing.assert_array_equal(W[:, :2], np.round(W[:, :2]))
        for c, w, zi in zip(C, W, z):
            res = milp(problem.sign * c, constraints=rows, bounds=bounds,
                       integrality=problem.integrality, options={"mip_rel_gap": 0.0})
            assert res.status == 0
            assert abs(problem.sign * res.fun - zi) <= 1e-7 * max(1.0, abs(zi)), (c, w, res.x)
        np.testing.assert_array_equal(z, problem.value(C, W))


@pytest.mark.parametrize("sense", ["min", "max"])
def test_milp_solve_ties_give_the_lexicographically_smallest_optimum(sense):
    # Integer costs on grids of 0.5: many ties. Each row gets the
    # lexicographically smallest optimal decision, checked coordinate by
    # coordinate with scipy.milp, whether solved alone or in the batch.
    rng = np.random.default_rng(3 if sense == "min" else 4)
    C = np.vstack([np.zeros(5), rng.integers(-1, 2, size=(5, 5))]).astype(float)
    problem = small_mixed(sense)
    W, z = problem.solve(C)
    for i, (c, w) in enumerate(zip(C, W)):
        assert_lexicographically_smallest_optimum(problem, c, w)
        np.testing.assert_array_equal(problem.solve(C[i:i + 1])[0][0], w)
    _, z_highs = highs_only(small_mixed(sense)).solve(C)
    close(z, z_highs, 1.0)
    pure = LinearProgram([[1.0, 1.0, 1.0]], [2.0], bounds=(0, 2), integrality=1, sense=sense)
    Cp = np.vstack([np.zeros(3), rng.integers(-1, 2, size=(4, 3))]).astype(float)
    for c, w in zip(Cp, pure.solve(Cp)[0]):
        assert_lexicographically_smallest_optimum(pure, c, w)


def test_milp_without_a_cheap_vertex_list_goes_to_highs(monkeypatch):
    calls = []
    highs = LinearProgram._solve_highs
    monkeypatch.setattr(LinearProgram, "_solve_highs",
                        lambda self, Cm: calls.append(len(Cm)) or highs(self, Cm))
    C = np.random.default_rng(0).normal(size=(3, 3))
    # 101^3 integer points: no list at all.
    big = LinearProgram([[1.0, 1.0, 1.0]], [150.0], bounds=(0, 100), integrality=1)
    W, z = big.solve(C)
    assert big._listed() is None and calls == [3]
    for c, zi in zip(C, z):
        res = milp(c, constraints=LinearConstraint([[1.0, 1.0, 1.0]], -np.inf, 150.0),
                   bounds=Bounds(0, 100), integrality=np.ones(3))
        assert abs(res.fun - zi) <= 1e-9 * max(1.0, abs(zi))
    # A mixed program listed by vertices() but with more work than solve() waits for.
    problem, _, _ = random_milp(0, "min", mixed=True)
    problem._max_listed_work = 10
    assert problem.vertices() is not None
    problem.solve(C[:1].repeat(4, axis=1)[:, :4])
    assert problem._listed() is None and calls == [3, 1]
    # A list too long to scan.
    problem, _, _ = random_milp(0, "min", mixed=False)
    problem._max_vertex_scan = 4
    problem.solve(np.ones((2, 4)))
    assert calls == [3, 1, 2]


def test_milp_vertex_list_is_made_once_across_threads(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    made = []
    enumerate_ = LinearProgram._vertices
    monkeypatch.setattr(LinearProgram, "_vertices",
                        lambda self, *a: made.append(1) or enumerate_(self, *a))
    C = np.random.default_rng(0).normal(size=(5, 5))
    for problem in (small_mixed(), LinearProgram([[1.0, 1.0, 1.0]], [150.0], bounds=(0, 100),
                                                 integrality=1)):
        made.clear()
        c = C[:, :problem.n_costs]
        with ThreadPoolExecutor(4) as pool:
            out = list(pool.map(lambda _: problem.solve(c)[1], range(8)))
        problem.solve(c)
        problem.vertices()
        assert len(made) == 1                 # also after a decline (the second problem)
        for z in out:
            np.testing.assert_array_equal(z, out[0])


def test_mixed_integer_vertex_limits_return_none():
    problem = small_mixed()
    n = problem.vertices().shape[0]
    for attr, value, expected in [("max_bases_enumerated", 3, None),
                                  ("max_vertices", n - 1, None), ("max_vertices", n, n)]:
        problem = small_mixed()
        setattr(problem, attr, value)
        V = problem.vertices()
        assert (V is None) if expected is None else V.shape[0] == expected


# ------------------------------------------------------------ basis cache
def count_highs_calls(problem, monkeypatch):
    calls = []
    original = problem._solve_one

    def counted(h, c, i):
        calls.append(i)
        return original(h, c, i)

    monkeypatch.setattr(problem, "_solve_one", counted)
    return calls


@pytest.mark.parametrize("kind", ["prefix_sums", "random"])
@pytest.mark.parametrize("sense", ["min", "max"])
def test_basis_cache_equals_no_cache(kind, sense, monkeypatch):
    rng = np.random.default_rng(11)
    cached = random_lp(5, d=5, n_ub=6, sense=sense)
    plain = random_lp(5, d=5, n_ub=6, sense=sense, basis_cache=False)
    if kind == "prefix_sums":
        C = np.cumsum(rng.uniform(0.1, 1.0, size=(3000, 5)) * [1, -1, 1, -1, 1], axis=0)
    else:
        C = rng.normal(size=(1500, 5))
    calls = count_highs_calls(cached, monkeypatch)
    with solver_session():  # as in a fit: the cache is kept from call to call
        Wc, zc = cached.solve(C)
        Wp, zp = plain.solve(C)
        close(zc, zp, np.abs(C).max())
        np.testing.assert_allclose(Wc, Wp, atol=1e-7)  # generic costs: unique optima
        close(zc, np.einsum("ij,ij->i", C, Wc), np.abs(C).max())
        assert len(calls) < len(C) / 10  # the cache answers most rows
        # A second pass is answered from the cache alone.
        del calls[:]
        W2, z2 = cached.solve(C[:500])
        assert len(calls) <= 5
        close(z2, zp[:500], np.abs(C).max())
    # Outside a session each call starts with an empty cache: its first row
    # goes to HiGHS.
    del calls[:]
    cached.solve(C[:500])
    assert calls[:1] == [0]


def test_basis_cache_news_prefix_sums_and_eviction(monkeypatch):
    problem = news_recommendation(random_state=1)
    plain = news_recommendation(random_state=1)
    plain.basis_cache = False
    problem.basis_cache_size = 2  # force evictions
    rng = np.random.default_rng(0)
    P = rng.uniform(0, 1, size=(2000, 6))
    C = np.vstack([np.cumsum(P, axis=0), P])
    W, z = problem.solve(C)
    Wp, zp = plain.solve(C)
    close(z, zp, np.abs(C).max())
    assert len(problem._basis_cache()) == 2


def test_basis_cache_degenerate_ties():
    # Redundant, degenerate constraints and integer-valued costs with many ties.
    A_ub = np.array([[1, 1, 0], [1, 1, 0], [0, 1, 1], [1, 0, 1], [1, 1, 1]], dtype=float)
    b_ub = np.array([1, 1, 1, 1, 1.5])
    cached = LinearProgram(A_ub, b_ub, bounds=(0, 1), sense="max")
    plain = LinearProgram(A_ub, b_ub, bounds=(0, 1), sense="max", basis_cache=False)
    C = np.random.default_rng(3).integers(-2, 3, size=(400, 3)).astype(float)
    Wc, zc = cached.solve(C)
    _, zp = plain.solve(C)
    close(zc, zp, 2.0)
    close(zc, linprog_values(plain, C), 2.0)
    assert_feasible(cached, Wc)


def test_bounds_only_problem_cache():
    problem = LinearProgram(bounds=[(0, 1), (-1, 2), (3, 3)])
    C = np.random.default_rng(0).normal(size=(100, 3))
    W, z = problem.solve(C)
    expected = np.where(C >= 0, [0, -1, 3], [1, 2, 3])
    np.testing.assert_allclose(W[:, :2], expected[:, :2])
    close(z, (C * expected).sum(axis=1), np.abs(C).max())


@pytest.mark.parametrize("d", [3, 70])  # explicit and factored certificates
def test_rows_without_a_nonzero_do_not_crash(d):
    # HiGHS solves an LP whose rows have no nonzero (entries under its 1e-9
    # tolerance are dropped) as a box, without a basis factorization; asking
    # it for the basic variables crashed the process (segmentation fault).
    lo, hi = -1.0, 2.0
    C = np.random.default_rng(0).normal(size=(40, d))
    best = np.minimum(C * lo, C * hi).sum(axis=1)  # the box's optimum
    tiny = np.full((1, d), 1e-12)
    for problem in (LinearProgram(A_ub=np.zeros((2, d)), b_ub=[1.0, 0.0], bounds=(lo, hi)),
                    LinearProgram(A_eq=np.zeros((1, d)), b_eq=[0.0], bounds=(lo, hi)),
                    LinearProgram(A_ub=tiny, b_ub=[1.0], bounds=(lo, hi)),
                    LinearProgram(A_ub=np.zeros((1, d)), b_ub=[1.0], bounds=(lo, hi),
                                  integrality=np.ones(d)).relaxation()):
        W, z = problem.solve(C)
        close(z, best, np.abs(C).max())
        assert ((W >= lo) & (W <= hi)).all()
        exact = np.arange(40) % 3 == 0
        _, zb = problem.solve_or_bound(C, exact)
        close(zb[exact], best[exact], np.abs(C).max())
        assert (zb <= best + 1e-9).all()


def test_basis_cache_on_uncorrelated_costs_backs_off():
    # Random costs on a larger LP: most rows need HiGHS, the cache stops
    # factorizing every basis, and results stay exact.
    cached = random_lp(3, d=12, n_ub=20)
    plain = random_lp(3, d=12, n_ub=20, basis_cache=False)
    C = np.random.default_rng(0).normal(size=(300, 12))
    Wc, zc = cached.solve(C)
    Wp, zp = plain.solve(C)
    assert cached._basis_cache().skipped > 0
    close(zc, zp, np.abs(C).max())
    np.testing.assert_allclose(Wc, Wp, atol=1e-7)


@pytest.mark.parametrize("basis_cache", [True, False])
def test_non_optimal_status_at_solve_time_raises(basis_cache):
    problem = random_lp(3, d=8, n_ub=10, basis_cache=basis_cache)
    C = np.random.default_rng(0).normal(size=(5, 8))
    problem.solve(C[:1])
    problem._model().set_option("simplex_iteration_limit", 0)
    with pytest.raises(ValueError, match="did not find an optimal solution for cost vector"):
        problem.solve(-C)


@pytest.mark.parametrize("basis_cache", [True, False])
def test_degenerate_feasible_sets(basis_cache):
    # A single feasible point (no inequality is needed to pin it down).
    point = LinearProgram(A_eq=[[1.0, 1.0], [1.0, -1.0]], b_eq=[1.0, 0.0],
                          bounds=(None, None), basis_cache=basis_cache)
    np.testing.assert_allclose(point.vertices(), [[0.5, 0.5]])
    C = np.random.default_rng(0).normal(size=(30, 2))
    W, z = point.solve(C)
    np.testing.assert_allclose(W, 0.5)
    close(z, C.sum(axis=1) / 2, np.abs(C).max())
    # Linearly dependent equality rows.
    dup = LinearProgram(A_eq=[[1.0, 1.0], [2.0, 2.0]], b_eq=[1.0, 2.0], basis_cache=basis_cache)
    np.testing.assert_allclose(dup.vertices(), [[0.0, 1.0], [1.0, 0.0]])
    W, z = dup.solve(C)
    close(z, C.min(axis=1), np.abs(C).max())


# ----------------------------------------------------------------- errors
def test_infeasible_raises_at_construction():
    with pytest.raises(ValueError, match="infeasible"):
        LinearProgram(A_ub=[[1.0, 1.0]], b_ub=[-1.0], bounds=(0, None))
    with pytest.raises(ValueError, match="lower bound 2.0 > upper bound 1.0 of variable 1"):
        LinearProgram(bounds=[(0, 1), (2, 1)])


def test_unbounded_raises_at_construction():
    with pytest.raises(ValueError, match=r"unbounded: variable w\[1\] is unbounded above"):
        LinearProgram(A_ub=[[1.0, -1.0]], b_ub=[1.0], bounds=[(0, 1), (0, None)])
    with pytest.raises(ValueError, match="unbounded"):
        LinearProgram(A_eq=[[1.0, 1.0]], b_eq=[1.0], bounds=(None, None))
    with pytest.raises(ValueError, match="unbounded"):
        LinearProgram(A_ub=[[1.0, 1.0]], b_ub=[3.0], bounds=(None, 2), integrality=[1, 1])


@pytest.mark.parametrize("kwargs, match", [
    (dict(A_ub=[1.0, 2.0], b_ub=[1.0]), "'A_ub' parameter .* 2-D"),
    (dict(A_ub=[[1.0, np.nan]], b_ub=[1.0]), "'A_ub' parameter .* NaN"),
    (dict(A_ub=[[1.0, 2.0]], b_ub=[1.0, 2.0]), r"'b_ub' parameter .* shape \(1,\)"),
    (dict(A_ub=[[1.0, 2.0]], b_ub=[np.inf]), "'b_ub' parameter .* infinity"),
    (dict(A_ub=[[1.0, 2.0]]), "'A_ub' parameter .* without 'b_ub'"),
    (dict(b_eq=[1.0]), "'b_eq' parameter .* without 'A_eq'"),
    (dict(A_ub=[[1.0, 2.0]], b_ub=[1.0], A_eq=[[1.0, 1.0, 1.0]], b_eq=[1.0]),
     "disagree on the number of variables"),
    (dict(A_ub=[[1.0, 2.0]], b_ub=[1.0], bounds=[(0, 1)] * 3), "disagree"),
    (dict(), "cannot infer the number of variables"),
    (dict(A_eq=[[1.0, 1.0]], b_eq=[1.0], bounds=(0, np.nan)), "NaN upper bound"),
    (dict(A_eq=[[1.0, 1.0]], b_eq=[1.0], bounds=(np.inf, None)), "infinite lower bound"),
    (dict(A_eq=[[1.0, 1.0]], b_eq=[1.0], bounds=None), "'bounds' parameter"),
    (dict(A_eq=[[1.0, 1.0]], b_eq=[1.0], bounds="0,1"), "'bounds' parameter"),
    (dict(A_eq=[[1.0, 1.0]], b_eq=[1.0], bounds=[(0, 1, 2), (0, 1, 2)]), "'bounds' parameter"),
    (dict(A_eq=[[1.0, 1.0]], b_eq=[1.0], integrality=[1, 2]), "'integrality' parameter"),
    (dict(A_eq=[[1.0, 1.0]], b_eq=[1.0], integrality=[1]), "'integrality' parameter"),
    (dict(A_eq=[[1.0, 1.0]], b_eq=[1.0], sense="maximize"), "sense must be 'min' or 'max'"),
    (dict(A_eq=[[1.0, 1.0]], b_eq=[1.0], basis_cache="yes"), "'basis_cache' parameter"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LinearProgram(**kwargs)


def test_numbers_highs_reads_as_infinite_or_refuses():
    import scipy.sparse as sp

    # A bound of 1e20 or more is infinite to HiGHS but passed the boundedness
    # check, so the problem failed when solved ("status: Unbounded"); such
    # right-hand sides and coefficients of 1e15 or more made HiGHS refuse the
    # model without saying which argument. Now each is a clear error.
    for kwargs, match in [
        (dict(bounds=[(0, 1e20), (0, 1)]), r"'bounds' .* upper bound 1e\+20 of variable 0"),
        (dict(bounds=(-1e25, 0), A_ub=[[-1.0, -1.0]], b_ub=[1.0]), r"lower bound -1e\+25"),
        (dict(A_ub=[[1.0, 1.0]], b_ub=[1e20]), r"'b_ub' .* entry 1e\+20 \(row 0\)"),
        (dict(A_eq=[[1.0, 1.0], [1.0, 0.0]], b_eq=[1.0, -3e21]), r"'b_eq' .* \(row 1\)"),
        (dict(A_ub=[[1e15, 1.0]], b_ub=[1.0], bounds=(0, 1)), r"'A_ub' .* magnitude 1e\+15"),
        (dict(A_eq=sp.csr_matrix([[1.0, -2e16]]), b_eq=[1.0], bounds=(0, 1)), r"'A_eq' .* 2e\+16"),
    ]:
        with pytest.raises(ValueError, match=match):
            LinearProgram(**kwargs)
    # Just below those limits HiGHS solves it: w_0 <= 9e19 / 9e14 = 1e5.
    lp = LinearProgram(A_ub=[[9e14, 1.0]], b_ub=[9e19], bounds=[(0, 1e19), (0, 1)])
    W, z = lp.solve([[-1.0, 1.0]])
    np.testing.assert_allclose(W, [[1e5, 0.0]], rtol=1e-12)
    W, z = LinearProgram(bounds=[(0, 9e19), (0, 1)]).solve([[-1.0, 1.0]])
    np.testing.assert_array_equal(W, [[9e19, 0.0]])


@pytest.mark.parametrize("C, match", [
    (np.array([[np.nan, 1.0, 1, 1, 1, 1]]), "NaN or infinity"),
    (np.ones((2, 5)), "5 columns"),
    (np.ones(6), "2-D"),
])
def test_bad_costs(C, match):
    with pytest.raises(ValueError, match=match):
        news_recommendation(random_state=0).solve(C)


def test_empty_batch():
    problem = news_recommendation(random_state=0)
    W, z = problem.solve(np.empty((0, 6)))
    assert W.shape == (0, 6) and z.shape == (0,)


# ------------------------------------------------- pickling, copies, JSON
@pytest.mark.parametrize("basis_cache", [True, False])
def test_pickle_and_deepcopy_after_solve(basis_cache):
    problem = random_lp(2, basis_cache=basis_cache)
    C = np.random.default_rng(0).normal(size=(50, problem.n_costs))
    W, z = problem.solve(C)
    assert hasattr(problem._state(), "model")
    state = problem.__getstate__()
    assert not any(key.startswith("_model") for key in state)
    for clone in (pickle.loads(pickle.dumps(problem)), copy.deepcopy(problem)):
        assert not hasattr(clone._state(), "model")
        W2, z2 = clone.solve(C)
        close(z2, z, np.abs(C).max())
        np.testing.assert_allclose(W2, W, atol=1e-7)
    W3, z3 = problem.solve(C)  # the original still works
    close(z3, z, np.abs(C).max())


def test_to_dict_round_trip():
    problem = LinearProgram(A_ub=[[1.0, 2.0, 0.5]], b_ub=[4.0], A_eq=[[1.0, 0.0, 1.0]],
                            b_eq=[1.0], bounds=[(0, None), (-1, 3), (None, 2)],
                            integrality=[0, 1, 0], sense="max")
    spec = json.loads(json.dumps(problem.to_dict()))
    assert spec["type"] == "linear_program"
    assert spec["bounds"] == [[0.0, None], [-1.0, 3.0], [None, 2.0]]
    assert spec["integrality"] == [0, 1, 0]
    again = problem_from_dict(spec)
    assert isinstance(again, LinearProgram)
    assert again.to_dict() == problem.to_dict()
    C = np.random.default_rng(0).normal(size=(20, 3))
    close(again.solve(C)[1], problem.solve(C)[1], np.abs(C).max())

    news = news_recommendation(random_state=0)
    spec = json.loads(json.dumps(news.to_dict()))
    assert spec["bounds"] == [0.0, None] and spec["integrality"] is None and spec["b_eq"] == [1.0]
    again = problem_from_dict(spec)
    np.testing.assert_array_equal(again.A_ub, news.A_ub)
    assert again.sense == "max"


# ------------------------------------------------------------- properties
FREE_LP = random_lp(8, d=3, n_ub=3, free=True)


@settings(max_examples=40, deadline=None)
@given(C=arrays(np.float64, st.tuples(st.integers(1, 8), st.just(3)),
                elements=st.floats(-10, 10, allow_nan=False, width=64)),
       a=st.floats(0.01, 100))
def test_scaling_invariance_and_value_free_lp(C, a):
    W, z = FREE_LP.solve(C)
    close(z, FREE_LP.value(C, W), np.abs(C).max(initial=1.0))
    _, za = FREE_LP.solve(a * C)
    # Each solve is optimal to HiGHS's dual feasibility tolerance (absolute,
    # on the reduced costs; an objective shortfall up to it times |w|_1), and
    # scaling by a scales the first solve's (see test_news's twin).
    size = np.abs(W).sum(axis=1).max(initial=1.0)
    np.testing.assert_allclose(za, a * z, rtol=RTOL,
                               atol=RTOL * a * np.abs(C).max(initial=1.0)
                               + HIGHS_DUAL_TOL * (1.0 + a) * size)


@pytest.mark.parametrize("basis_cache", [False, True])
def test_tiny_and_huge_costs_are_solved_exactly(basis_cache):
    # HiGHS's optimality tolerances are absolute: costs of order 1e-8 got
    # vertices ~30% worse than the optimum, costs of order 1e9 failed to
    # solve. The minimizer does not depend on the costs' scale.
    rng = np.random.default_rng(1)
    A = rng.uniform(0, 1, (50, 40))
    b = A.sum(axis=1) * 0.4
    C = rng.normal(size=40) + 0.01 * rng.normal(size=(40, 40))
    C[::5] *= -1
    ref = np.array([linprog(c, A_ub=A, b_ub=b, bounds=(0, 1), method="highs").fun for c in C])
    for scale in (1e-8, 1e9):
        problem = LinearProgram(A_ub=A, b_ub=b, bounds=(0, 1), basis_cache=basis_cache)
        W, z = problem.solve(scale * C)
        close(z / scale, ref, np.abs(C).max())
        assert_feasible(problem, W)


@pytest.mark.parametrize("basis_cache", [False, True])
@pytest.mark.parametrize("row_scale", [1e-6, 1e-10, 1e-14])
def test_rows_of_tiny_coefficients_are_kept(basis_cache, row_scale):
    # HiGHS treats matrix entries below 1e-9 as zero: a row 1e-10 x <= 1e-10
    # was dropped and the answer broke it. Multiplying a row and its bounds by
    # a positive number does not change the feasible set, so the solutions
    # must be linprog's on the unscaled rows.
    rng = np.random.default_rng(2)
    A = rng.uniform(0, 1, (6, 5))
    b = A.sum(axis=1) * 0.4
    A_eq = np.ones((1, 5))
    s = np.array([row_scale, 1.0, row_scale, 1.0, row_scale, 1.0])[:, None]
    C = rng.normal(size=(30, 5))
    ref = np.array([linprog(c, A_ub=A, b_ub=b, A_eq=A_eq, b_eq=[1.5], bounds=(0, 1),
                            method="highs").fun for c in C])
    problem = LinearProgram(A_ub=s * A, b_ub=s[:, 0] * b, A_eq=row_scale * A_eq,
                            b_eq=[1.5 * row_scale], bounds=(0, 1), basis_cache=basis_cache)
    W, z = problem.solve(C)
    close(z, ref, np.abs(C).max())
    close(np.einsum("ij,ij->i", C, W), ref, np.abs(C).max())
    assert (W @ A.T <= b + 1e-7).all() and np.allclose(W.sum(axis=1), 1.5, atol=1e-7)


@pytest.mark.parametrize("basis_cache", [False, True])
@pytest.mark.parametrize("size", [1e-5, 1e-9, 1e-12])
def test_lps_of_tiny_bounds_are_solved_exactly(basis_cache, size):
    # HiGHS's feasibility tolerance is absolute (1e-7): with every bound and
    # right-hand side of order 1e-9 its decisions broke bounds and rows by
    # several times their size (values up to 9 times the optimum). w = size * u
    # maps the LP onto one of unit size, which linprog solves.
    rng = np.random.default_rng(3)
    A = rng.integers(-3, 4, (4, 5)).astype(float)
    u0 = rng.uniform(0.2, 0.8, 5)
    b = A @ u0 + rng.uniform(0.1, 1.0, 4)
    A_eq = np.ones((1, 5))
    C = rng.normal(size=(30, 5))
    ref = np.array([linprog(c, A_ub=A, b_ub=b, A_eq=A_eq, b_eq=[u0.sum()], bounds=(0, 1),
                            method="highs").fun for c in C])
    problem = LinearProgram(A_ub=A, b_ub=size * b, A_eq=A_eq, b_eq=[size * u0.sum()],
                            bounds=(0, size), basis_cache=basis_cache)
    W, z = problem.solve(C)
    close(z / size, ref, np.abs(C).max())
    U = W / size
    assert (U >= -1e-9).all() and (U <= 1 + 1e-9).all()
    assert (U @ A.T <= b + 1e-9).all() and np.allclose(U.sum(axis=1), u0.sum(), atol=1e-9)


def test_coefficients_highs_would_drop_are_named_in_a_warning():
    # Tiny beside the rest of its row, 1e-10 stays below HiGHS's 1e-9 after
    # the row is scaled, so HiGHS reads it as zero and the decision breaks
    # the row: x2 <= 1e10 here, HiGHS answers its bound 1e12.
    import warnings

    with pytest.warns(RuntimeWarning, match=r"1 constraint coefficient.*variable 1, 1\.0e-10 "
                                            r"times the largest of its row"):
        LinearProgram(A_ub=[[1.0, 1e-10]], b_ub=[1.0], bounds=(0, 1e12))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a row tiny as a whole is scaled: no warning
        LinearProgram(A_ub=[[1e-10, 1e-10]], b_ub=[1e-10], A_eq=[[1.0, 1.0]], b_eq=[1e-10],
                      bounds=(0, 10))


def test_works_after_another_highs_model_started_the_thread_pool():
    # HiGHS's thread pool is per process: run in a fresh interpreter where a
    # default-threads highspy model runs first.
    code = """
import numpy as np, highspy
from scipy.optimize import linprog
h = highspy._core._Highs() if hasattr(highspy, "_core") else highspy.Highs()
h.setOptionValue("output_flag", False)
lp = highspy.HighsLp()
lp.num_col_ = 1
lp.col_cost_ = np.array([1.0]); lp.col_lower_ = np.array([0.0]); lp.col_upper_ = np.array([1.0])
lp.a_matrix_.start_ = np.array([0, 0], dtype=np.int32)
h.passModel(lp)
h.run()
from spotree.problems import news_recommendation
p = news_recommendation(random_state=0)
C = np.random.default_rng(0).uniform(0, 1, size=(20, 6))
_, z = p.solve(C)
ref = [-linprog(-c, A_ub=p.A_ub, b_ub=p.b_ub, A_eq=p.A_eq, b_eq=p.b_eq).fun for c in C]
assert np.allclose(z, ref, rtol=1e-9, atol=1e-12), (z, ref)
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# ------------------------------------------------------------------ sparse
def sparse_lp_arrays(seed, d=40, n_ub=25, n_eq=5, density=0.15):
    """A random sparse LP (box-bounded, feasible at x0) as scipy.sparse matrices."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    x0 = rng.uniform(0.2, 0.8, d)
    A_ub = sp.random(n_ub, d, density=density, random_state=seed, format="csr",
                     data_rvs=lambda k: rng.normal(size=k))
    A_eq = sp.random(n_eq, d, density=density, random_state=seed + 1, format="csr",
                     data_rvs=lambda k: rng.normal(size=k))
    return dict(A_ub=A_ub, b_ub=A_ub @ x0 + rng.uniform(0.1, 1, n_ub), A_eq=A_eq,
                b_eq=A_eq @ x0, bounds=(0, 1))


@pytest.mark.parametrize("fmt", ["csr_matrix", "coo_array", "csc_array"])
def test_sparse_input_stays_sparse_and_matches_dense(fmt):
    import scipy.sparse as sp

    arrays = sparse_lp_arrays(0)
    conv = getattr(sp, fmt)
    sparse = LinearProgram(**{**arrays, "A_ub": conv(arrays["A_ub"]),
                              "A_eq": conv(arrays["A_eq"])})
    dense = LinearProgram(**{**arrays, "A_ub": arrays["A_ub"].toarray(),
                             "A_eq": arrays["A_eq"].toarray()})
    assert sp.issparse(sparse.A_ub) and sp.issparse(sparse.A_eq)
    assert sp.issparse(sparse._A) and not sp.issparse(dense.A_ub)
    C = np.random.default_rng(1).normal(size=(50, sparse.n_costs))
    Ws, zs = sparse.solve(C)
    _, zd = dense.solve(C)
    close(zs, zd, np.abs(C).max())
    close(zs, linprog_values(dense, C), np.abs(C).max())
    assert_feasible(sparse, Ws)
    # The caller's matrix is not modified (it is copied into CSR form).
    assert type(arrays["A_ub"]) is sp.csr_matrix


def test_sparse_bad_entries():
    import scipy.sparse as sp

    A = sp.csr_matrix(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="'A_ub' parameter .* NaN"):
        LinearProgram(A_ub=A, b_ub=[1.0])
    with pytest.raises(ValueError, match="'A_eq' parameter .* NaN or infinity"):
        LinearProgram(A_eq=sp.csr_matrix(np.array([[1.0, np.inf]])), b_eq=[1.0])


@pytest.mark.parametrize("sense", ["min", "max"])
def test_larger_sparse_lp_factored_cache_matches_plain_highs(sense, monkeypatch):
    # d * (d + n_rows) is above the explicit-certificate size: the cache
    # uses sparse LU factors and HiGHS's own factorization.
    from spotree.problems._basis_cache import FactoredCache

    arrays = sparse_lp_arrays(3, d=80, n_ub=40, n_eq=8)
    cached = LinearProgram(**arrays, sense=sense)
    plain = LinearProgram(**arrays, sense=sense, basis_cache=False)
    assert isinstance(cached._basis_cache(), FactoredCache)
    rng = np.random.default_rng(2)
    x = np.sort(rng.uniform(size=1200))
    P = (rng.uniform(0.5, 1.5, 80) + x[:, None] * rng.normal(size=80)) * rng.uniform(
        0.5, 1.5, size=(1200, 80))
    C = np.vstack([np.cumsum(P, axis=0), np.cumsum(P[::-1], axis=0)])
    calls = count_highs_calls(cached, monkeypatch)
    Wc, zc = cached.solve(C)
    _, zp = plain.solve(C)
    close(zc, zp, np.abs(C).max())
    close(zc, np.einsum("ij,ij->i", C, Wc), np.abs(C).max())
    assert_feasible(cached, Wc)
    assert len(calls) < 0.2 * len(C)  # bases were reused (107 and 173 calls here)
    # Stored bases (factorized by SuperLU, tested in the compiled loop)
    # answer most of a second pass over the first rows.
    assert len(cached._basis_cache()) >= 8
    del calls[:]
    W2, z2 = cached.solve(C[:300])
    assert len(calls) < 100  # 8 and 43 here
    close(z2, zp[:300], np.abs(C).max())
    np.testing.assert_allclose(W2, Wc[:300], atol=1e-7)
    close(zp[:100], linprog_values(plain, C[:100]), np.abs(C).max())


# -------------------------------------------------------------- time limits
def market_split(m=4, n=30, seed=0):
    """A Cornuejols-Dawande market-split instance: sum_j a_ij x_j = floor(sum_j a_ij / 2).

    With m = 4 and n = 30 binary variables it is (almost surely) infeasible
    and proving it takes branch and bound far longer than a second (over
    90 s with HiGHS 1.16 on a busy 2-core machine).
    """
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 100, size=(m, n)).astype(float)
    return A, np.floor(A.sum(axis=1) / 2)


def test_check_time_limit_stops_a_hard_milp():
    A, b = market_split()
    with pytest.raises(ValueError, match=r"feasibility check of the LinearProgram did not "
                                         r"finish within the check time limit of 0\.5 s.*"
                                         r"'check_time_limit'"):
        LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1), integrality=np.ones(30),
                      check_time_limit=0.5)
    # A small instance of the same family finishes within the limit.
    A, b = market_split(m=2, n=6, seed=1)
    with pytest.raises(ValueError, match="infeasible") as info:
        LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1), integrality=np.ones(6),
                      check_time_limit=30.0)
    assert "time limit" not in str(info.value)


def test_check_time_limit_is_not_kept_for_solving():
    problem = LinearProgram(A_eq=np.ones((1, 3)), b_eq=[1.0], check_time_limit=5.0)
    assert problem.solve([[3.0, 1.0, 2.0]])[1][0] == 1.0
    assert "check_time_limit" not in problem.__dict__


@pytest.mark.parametrize("limit", [0, -1.0, np.nan, "5", True])
def test_bad_check_time_limit(limit):
    with pytest.raises(ValueError, match="'check_time_limit' parameter of LinearProgram must "
                                         "be a positive number of seconds or None"):
        LinearProgram(A_eq=np.ones((1, 3)), b_eq=[1.0], check_time_limit=limit)


def test_boundedness_check_names_the_unbounded_variable():
    # Several one-sided variables; only w[2] can grow (w[0] + w[1] <= 1
    # bounds the others, w[3] is bounded above by a constraint).
    A_ub = [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, -1.0, 0.0]]
    with pytest.raises(ValueError, match=r"variable w\[2\] is unbounded above"):
        LinearProgram(A_ub=A_ub, b_ub=[1.0, 3.0, 0.0],
                      bounds=[(0, None), (0, None), (None, None), (None, 5)])
    # w[3] unbounded below only.
    with pytest.raises(ValueError, match=r"variable w\[3\] is unbounded below"):
        LinearProgram(A_ub=A_ub[:1], b_ub=[1.0], bounds=[(0, None), (0, None), (0, 1),
                                                         (None, 5)])
    ok = LinearProgram(A_ub=A_ub + [[0, 0, 1.0, 0], [0, 0, 0, -1.0]], b_ub=[1, 3, 0, 2, 4],
                       bounds=[(0, None), (0, None), (None, None), (None, 5)])
    C = np.random.default_rng(0).normal(size=(30, 4))
    close(ok.solve(C)[1], linprog_values(ok, C), np.abs(C).max())


# ------------------------------------------------------------- relaxation
def knapsack_milp(seed, sense="max", d=9, n_res=2):
    rng = np.random.default_rng(seed)
    A = rng.uniform(1, 5, size=(n_res, d)).round(2)
    return LinearProgram(A_ub=A, b_ub=A.sum(axis=1) / 2, bounds=(0, 1),
                         integrality=np.ones(d), sense=sense)


@pytest.mark.parametrize("sense", ["min", "max"])
def test_relaxation_bounds_the_milp(sense):
    problem = knapsack_milp(0, sense=sense)
    relax = problem.relaxation()
    assert isinstance(relax, LinearProgram) and not relax.is_milp and relax.integrality is None
    assert relax.basis_cache and relax.sense == sense
    assert problem.relaxation() is relax  # built once
    C = np.random.default_rng(1).normal(size=(60, problem.n_costs))
    _, z = problem.solve(C)
    _, zr = relax.solve(C)
    # Independent check of the relaxation's values with linprog.
    close(zr, linprog_values(relax, C), np.abs(C).max())
    assert (problem.sign * zr <= problem.sign * z + 1e-9).all()
    assert (problem.sign * zr < problem.sign * z - 1e-6).any()  # the gap is real here


def test_relaxation_equals_milp_on_totally_unimodular_problem():
    # Bipartite assignment (3 x 3): the constraint matrix is totally
    # unimodular, so the LP relaxation has integral vertices.
    A_eq = np.zeros((6, 9))
    for i in range(3):
        A_eq[i, 3 * i:3 * i + 3] = 1
        A_eq[3 + i, i::3] = 1
    problem = LinearProgram(A_eq=A_eq, b_eq=np.ones(6), bounds=(0, 1),
                            integrality=np.ones(9))
    C = np.random.default_rng(2).normal(size=(50, 9))
    _, z = problem.solve(C)
    Wr, zr = problem.relaxation().solve(C)
    close(zr, z, np.abs(C).max())
    np.testing.assert_allclose(Wr, np.round(Wr), atol=1e-9)


def test_relaxation_none_for_lp_and_not_pickled():
    assert random_lp(0).relaxation() is None
    problem = knapsack_milp(1)
    problem.relaxation()
    assert "_model_relaxation" in problem.__dict__
    clone = pickle.loads(pickle.dumps(problem))
    assert "_model_relaxation" not in clone.__dict__
    C = np.random.default_rng(3).normal(size=(10, problem.n_costs))
    close(clone.relaxation().solve(C)[1], problem.relaxation().solve(C)[1], np.abs(C).max())


# ---------------------------------------------------------------- threads
THREAD_SCRIPT = r'''
import threading
import numpy as np
import joblib
import threadpoolctl
from sklearn.model_selection import GridSearchCV
from spotree.datasets import make_news
from spotree.metrics import make_spo_scorer
from spotree.problems import news_recommendation
from spotree.tree import SPOTree

def blas():
    return sorted((i["filepath"], i["num_threads"]) for i in threadpoolctl.threadpool_info()
                  if i["user_api"] == "blas")

before = blas()
rng = np.random.default_rng(0)
P = rng.uniform(0, 1, size=(3000, 6))
C = np.vstack([np.cumsum(P, axis=0), P])

# 1. Separate instances solving in concurrent threads: BLAS limits unchanged.
def own(seed, out):
    p = news_recommendation(6, 5, random_state=0)
    for _ in range(5):
        out[seed] = p.solve(C[seed::3])[1]
out = {}
ts = [threading.Thread(target=own, args=(s, out)) for s in range(3)]
[t.start() for t in ts]; [t.join() for t in ts]
assert blas() == before, ("BLAS limits changed", before, blas())
print("phase 1 ok", flush=True)

# 2. One instance shared by 8 threads: the answers of a serial solve.
lp = news_recommendation(6, 5, random_state=0)
serial = news_recommendation(6, 5, random_state=0)
serial.basis_cache = False
expected = serial.solve(C)[1]
errors = []
def shared(k):
    for rep in range(4):
        idx = np.random.default_rng(k * 10 + rep).permutation(len(C))[:2000]
        z = lp.solve(C[idx])[1]
        if not np.allclose(z, expected[idx], rtol=1e-9, atol=1e-9):
            errors.append(k)
ts = [threading.Thread(target=shared, args=(k,)) for k in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
assert not errors, errors
print("phase 2 ok", flush=True)

# 3. The threaded grid search of issue 9 (the scorer shares the problem).
X, Cn, _ = make_news(600, random_state=0)
grid = {"max_depth": [1, 2, 3]}
with joblib.parallel_config(backend="threading"):
    gs = GridSearchCV(SPOTree(lp), grid, scoring=make_spo_scorer(lp), n_jobs=4, cv=3).fit(X, Cn)
with joblib.parallel_config(backend="sequential"):
    ref = GridSearchCV(SPOTree(lp), grid, scoring=make_spo_scorer(lp), cv=3).fit(X, Cn)
np.testing.assert_allclose(gs.cv_results_["mean_test_score"],
                           ref.cv_results_["mean_test_score"], rtol=1e-9)
assert blas() == before, ("BLAS limits changed", before, blas())
print("ok")
'''


def test_shared_instance_in_threads_and_blas_limits():
    # Before per-thread HiGHS models this segfaulted (phase 2 or 3), and a
    # per-call BLAS limit left BLAS pinned to one thread (phase 1). Run in a
    # fresh interpreter so that a crash fails this test, not the session.
    out = subprocess.run([sys.executable, "-c", THREAD_SCRIPT], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, (out.returncode, out.stdout, out.stderr[-3000:])
    assert out.stdout.strip().endswith("ok")


def test_per_thread_models_are_distinct():
    import threading

    problem = random_lp(1)
    problem.solve(np.ones((1, problem.n_costs)))
    mine = problem._model()
    seen = []

    def work():
        problem.solve(np.ones((1, problem.n_costs)))
        seen.append(problem._model())

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen[0] is not mine
    assert problem._model() is mine


def test_the_thread_pool_of_one_batch_survives_a_larger_batch():
    # Threads sharing a problem with n_jobs: one has been handed the pool for
    # a batch of two blocks when another thread's larger batch asks for
    # three. The first pool was shut down for a bigger one, and the first
    # thread's batch failed with "cannot schedule new futures after shutdown".
    arrays = sparse_lp_arrays(5, d=30, n_ub=20, n_eq=3)
    problem = LinearProgram(**arrays, n_jobs=3)
    C = np.random.default_rng(1).normal(size=(400, 30))
    pool = problem._pool(2)  # as in _solve_highs of a batch of 128 to 191 rows
    W, z = problem.solve(C)  # 400 rows: three blocks
    assert list(pool.map(abs, [-1, -2])) == [1, 2]
    assert_feasible(problem, W)
    close(z, LinearProgram(**arrays).solve(C)[1], np.abs(C).max())


def test_a_failed_threaded_batch_stops_its_other_blocks():
    # With n_jobs the batch is cut into blocks solved on the instance's
    # threads. When the caller stops waiting (Ctrl-C, or an error in one
    # block), the other blocks went on to their last row: after a Ctrl-C the
    # threads stayed busy, and the next solve queued behind them (9.7 s for
    # a 200-row solve after interrupting a 40,000-row batch). Here block 0
    # fails at its first row; block 1 counts the rows it solves.
    import threading

    arrays = sparse_lp_arrays(5, d=30, n_ub=20, n_eq=3)
    problem = LinearProgram(**arrays, basis_cache=False, n_jobs=2)
    C = np.random.default_rng(2).normal(size=(4000, 30))
    solved = {}
    real = LinearProgram._solve_one

    def counting(self, model, c, i):
        if i == 0:
            raise ValueError("block 0 fails")
        name = threading.current_thread().name
        solved[name] = solved.get(name, 0) + 1
        return real(self, model, c, i)

    problem._solve_one = counting.__get__(problem)
    with pytest.raises(ValueError, match="block 0 fails"):
        problem.solve(C)
    problem.__dict__["_model_pool"][1].shutdown(wait=True)  # every block has ended
    assert sum(solved.values()) < 2000  # block 1 holds rows 2000-3999
    # A new pool's solve gives the answers of a serial one.
    del problem._solve_one, problem.__dict__["_model_pool"]
    close(problem.solve(C[:300])[1], LinearProgram(**arrays).solve(C[:300])[1],
          np.abs(C).max())


@pytest.mark.parametrize("basis_cache", [True, False])
def test_n_jobs_threads_give_the_same_answers(basis_cache):
    arrays = sparse_lp_arrays(5, d=30, n_ub=20, n_eq=3)
    serial = LinearProgram(**arrays, basis_cache=basis_cache)
    threaded = LinearProgram(**arrays, basis_cache=basis_cache, n_jobs=3)
    rng = np.random.default_rng(0)
    C = np.vstack([rng.normal(size=(300, 30)), np.cumsum(rng.uniform(size=(300, 30)), axis=0)])
    W1, z1 = serial.solve(C)
    W3, z3 = threaded.solve(C)
    close(z3, z1, np.abs(C).max())
    close(z3, np.einsum("ij,ij->i", C, W3), np.abs(C).max())
    assert_feasible(threaded, W3)
    pool = threaded.__dict__["_model_pool"]
    assert pool[0] == 3  # three threads, each with its own HiGHS model
    # Small batches stay in the calling thread; the pool is not pickled.
    threaded.solve(C[:10])
    clone = pickle.loads(pickle.dumps(threaded))
    assert "_model_pool" not in clone.__dict__ and clone.n_jobs == 3
    close(clone.solve(C)[1], z1, np.abs(C).max())
    # Each thread numbers its rows within the whole batch (error messages
    # name the cost vector): without the cache every row goes to HiGHS once.
    plain = LinearProgram(**arrays, basis_cache=False, n_jobs=3)
    seen = []
    original = plain._solve_one

    def recorded(model, c, i):
        seen.append(i)
        np.testing.assert_array_equal(c, C[i])
        return original(model, c, i)

    plain._solve_one = recorded
    plain.solve(C)
    assert sorted(seen) == list(range(len(C)))


def test_n_jobs_minus_one_counts_the_cpus_this_process_may_use(monkeypatch):
    # -1 took os.cpu_count(): on a machine of 64 CPUs of which the process may
    # use 2 (taskset, a container's cpuset), 64 threads and 64 blocks, where
    # joblib's n_jobs=-1 (and the compiled solvers' pool) count 2.
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    lp = LinearProgram(A_eq=np.ones((1, 3)), b_eq=[1.0], n_jobs=-1)
    assert lp._n_threads() == 2


@pytest.mark.parametrize("n_jobs", [0, -2, 1.5, "2", True])
def test_bad_n_jobs(n_jobs):
    with pytest.raises(ValueError, match="'n_jobs' parameter of LinearProgram must be None, "
                                         "-1 or a positive int"):
        LinearProgram(A_eq=np.ones((1, 3)), b_eq=[1.0], n_jobs=n_jobs)


def test_unsettled_boundedness_check_is_an_error(monkeypatch):
    # If HiGHS gives no verdict on the combined check and every variable
    # alone is bounded, the problem is not silently accepted (with or
    # without free variables).
    from spotree.problems import _highs

    original = _highs.HighsModel.solve

    def flaky(self, c, time_limit=None):
        if np.count_nonzero(c) > 1:
            self.status = None
            return _highs.OTHER, None
        return original(self, c, time_limit)

    monkeypatch.setattr(_highs.HighsModel, "solve", flaky)
    A_ub = [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]
    for bounds in ([(0, None), (0, None), (-1, 1)], [(0, None), (0, None), (None, None)]):
        with pytest.raises(ValueError, match="could not decide whether the LinearProgram is "
                                             "bounded"):
            LinearProgram(A_ub=A_ub, b_ub=[1.0, 1.0, 1.0], bounds=bounds)


# ------------------------------------------------------------ dual bounds
@pytest.mark.parametrize("sense", ["min", "max"])
@pytest.mark.parametrize("seed", range(3))
def test_solve_or_bound_exact_rows_and_optimist_side_bounds(sense, seed):
    problem = random_lp(seed, d=6, n_ub=5, n_eq=1, sense=sense)
    rng = np.random.default_rng(seed)
    # A correlated walk of cost vectors, as the tree's sweep produces.
    C = rng.normal(size=6) + 0.15 * np.cumsum(rng.normal(size=(40, 6)), axis=0)
    exact = np.zeros(40, dtype=bool)
    exact[::8] = True
    # Positive multiples of an exact row share its optimal basis: just after
    # it (bounded from its basis) and just before the next one (bounded from
    # the next one's), the bound must be the optimum itself.
    C[1] = 2.0 * C[0]
    C[15] = 0.5 * C[16]
    W, z = problem.solve_or_bound(C, exact)
    ref = linprog_values(problem, C)
    scale = np.abs(C).max()
    close(z[exact], ref[exact], scale)
    close(problem.value(C[exact], W[exact]), ref[exact], scale)
    assert not W[~exact].any()
    slack = RTOL * scale * (1 + np.abs(ref))
    if sense == "min":
        assert (z[~exact] <= ref[~exact] + slack[~exact]).all()
    else:
        assert (z[~exact] >= ref[~exact] - slack[~exact]).all()
    close(z[[1, 15]], ref[[1, 15]], scale)
    # Most rows of the walk get a finite bound close to the optimum.
    assert np.isfinite(z).all()


def test_solve_or_bound_argument_checks():
    problem = random_lp(0)
    with pytest.raises(ValueError, match="'exact' parameter of solve_or_bound"):
        problem.solve_or_bound(np.ones((3, 4)), [1, 0, 1])
    with pytest.raises(ValueError, match="integer variables"):
        knapsack_milp(0).solve_or_bound(np.ones((2, 9)), np.ones(2, dtype=bool))


# ------------------------------------------------------------ difference_basis
@pytest.mark.parametrize("seed", range(4))
def test_difference_basis_is_the_null_space_of_a_eq(seed):
    rng = np.random.default_rng(seed)
    d, k = 7, int(rng.integers(1, 5))
    A_eq = rng.normal(size=(k, d))
    if seed % 2:
        A_eq = np.vstack([A_eq, A_eq[:1] + A_eq[-1:]])  # a dependent row
    lp = LinearProgram(A_eq=A_eq, b_eq=A_eq @ np.full(d, 0.5), bounds=(0, 1))
    B = lp.difference_basis()
    assert B.shape == (d, d - np.linalg.matrix_rank(A_eq))
    np.testing.assert_allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-12)
    np.testing.assert_allclose(A_eq @ B, 0.0, atol=1e-12)
    # The decisions of random costs differ within span(B), to HiGHS's tolerance.
    W = lp.solve(rng.normal(size=(30, d)))[0]
    D = W - W[0]
    np.testing.assert_allclose(D - D @ B @ B.T, 0.0, atol=1e-7)


def test_difference_basis_none_without_equalities_or_too_wide():
    lp = LinearProgram(A_ub=np.ones((1, 3)), b_ub=[1.0], bounds=(0, 1))
    assert lp.difference_basis() is None
    from spotree.problems._base import DIFFERENCE_BASIS_MAX_COSTS

    d = DIFFERENCE_BASIS_MAX_COSTS + 1
    wide = LinearProgram(A_eq=np.ones((1, d)), b_eq=[1.0], bounds=(0, 1))
    assert wide.difference_basis() is None


def test_a_single_integrality_value_applies_to_every_variable_as_in_linprog():
    # linprog reads integrality=1 as "every variable integer"; LinearProgram
    # refused it.
    from scipy.optimize import linprog

    c = np.array([-1.0, -1.0])
    res = linprog(c, A_ub=[[2.0, 2.0]], b_ub=[3.0], bounds=(0, 2), integrality=1)
    lp = LinearProgram(A_ub=[[2.0, 2.0]], b_ub=[3.0], bounds=(0, 2), integrality=1)
    assert lp.is_milp and list(lp.integrality) == [1, 1]
    assert lp.solve([c])[1][0] == pytest.approx(res.fun) == -1.0
    assert not LinearProgram(A_ub=[[2.0, 2.0]], b_ub=[3.0], bounds=(0, 2), integrality=0).is_milp
    with pytest.raises(ValueError, match=r"'integrality' parameter of LinearProgram must be None, "
                                         r"0 or 1"):
        LinearProgram(A_ub=[[2.0, 2.0]], b_ub=[3.0], bounds=(0, 2), integrality=2)


@pytest.mark.parametrize("integrality", [None, 1])
def test_vertices_of_a_tiny_scale_lp_match_solve(integrality):
    # A row of coefficients 1e-10: vertices() listed the box's corners (it
    # ignored the row), so solve_vertices, which the tree's split search
    # uses, answered (3, 3) where solve and linprog answer a point with x + y <= 1.
    lp = LinearProgram(A_ub=[[1e-10, 1e-10]], b_ub=[1e-10], bounds=(0, 3),
                       integrality=integrality)
    C = np.random.default_rng(0).normal(size=(20, 2))
    _, z_vert, _ = lp.solve_vertices(C)
    for c, zv in zip(C, z_vert):
        ref = linprog(c, A_ub=[[1.0, 1.0]], b_ub=[1.0], bounds=(0, 3),
                      integrality=integrality, method="highs")
        assert zv == pytest.approx(ref.fun, abs=1e-9)


def test_bounds_as_a_list_of_one_pair_apply_to_every_variable():
    # scipy.optimize.linprog reads bounds=[(0, 1)] as the bounds of every
    # variable; LinearProgram refused it ("A_ub has 3, bounds has 1").
    A_ub, b_ub = [[1.0, 2.0, 3.0]], [4.0]
    lp = LinearProgram(A_ub=A_ub, b_ub=b_ub, bounds=[(0, 1)])
    assert lp.bounds == (0.0, 1.0)
    for c in np.random.default_rng(0).normal(size=(10, 3)):
        ref = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=[(0, 1)], method="highs")
        assert lp.solve([c])[1][0] == pytest.approx(ref.fun, abs=1e-9)
    # Without matrices one pair in a list is one variable, as before; two
    # pairs for three columns are still an error.
    assert LinearProgram(bounds=[(0, 1)]).n_costs == 1
    with pytest.raises(ValueError, match="A_ub has 3, bounds has 2"):
        LinearProgram(A_ub=A_ub, b_ub=b_ub, bounds=[(0, 1), (0, 1)])


def test_integer_program_decisions_keep_the_rows_beyond_highs_mip_tolerance():
    # HiGHS's mip_feasibility_tolerance (1e-6, absolute) let integer points
    # break a row by 8e-7, and on this 5-item 0/1 program HiGHS 1.16 answered
    # "Infeasible" for every cost vector (scipy's milp, another HiGHS build,
    # solves it). The feasible integer points are listed by brute force.
    Wt = np.array([[0.5, 0.5000005, 0.25, 0.2500003, 0.7500002]])
    lp = LinearProgram(A_ub=Wt, b_ub=[1.0], bounds=(0, 1), integrality=1, sense="max")
    C = np.random.default_rng(11).uniform(0.5, 2.0, size=(20, 5))
    W, z = lp.solve(C)
    P = np.array(list(itertools.product([0.0, 1.0], repeat=5)))
    P = P[(P @ Wt.T <= 1.0).all(axis=1)]
    assert (W @ Wt.T <= 1.0 + 1e-9).all()
    np.testing.assert_allclose(z, (C @ P.T).max(axis=1), rtol=1e-12)


@pytest.mark.parametrize("weights, cap, integrality, c", [
    # HiGHS took items 1 and 4 (weight 2.0000002 > 2) for a value of 2.387.
    ([0.5000001, 0.7500002, 1.2499999, 0.9999999, 1.25, 1.7500001], 2.0, [1, 1, 1, 1, 1, 0],
     [0.861, 1.144, 0.408, -0.021, 1.243, -0.493]),
    # HiGHS 1.16 stopped with "Solve error" (solve raised).
    ([1.7500002, 1.7500002, 0.2499999, 1.7500001], 3.5, [1, 0, 0, 0],
     [1.545, 1.896, 0.113, 1.88]),
])
def test_mixed_integer_decisions_keep_the_rows_beyond_highs_mip_tolerance(weights, cap,
                                                                           integrality, c):
    # The optimum by hand: every 0/1 choice of the integer variables, the
    # continuous ones then filled by value per weight (an LP knapsack).
    w, c, integ = np.array(weights), np.array(c), np.array(integrality, dtype=bool)
    lp = LinearProgram(A_ub=[weights], b_ub=[cap], bounds=(0, 1), integrality=integrality,
                       sense="max")
    W, z = lp.solve([c])
    best = -np.inf
    for bits in itertools.product([0.0, 1.0], repeat=int(integ.sum())):
        x = np.zeros(len(w))
        x[integ] = bits
        room = cap - w @ x
        if room < 0:
            continue
        for j in sorted(np.flatnonzero(~integ & (c > 0)), key=lambda j: -c[j] / w[j]):
            x[j] = min(1.0, room / w[j])
            room -= x[j] * w[j]
        best = max(best, c @ x)
    assert W[0] @ w <= cap + 1e-9
    assert z[0] == pytest.approx(best, abs=1e-7)


def test_describe_decision_of_a_tiny_scale_lp_shows_its_entries():
    # Entries below an absolute 1e-9 were left out: every decision of this
    # LP (the simplex scaled by 1e-9) read "w = 0".
    lp = LinearProgram(A_eq=np.ones((1, 3)), b_eq=[1e-9])
    W, _ = lp.solve([[3.0, 1.0, 2.0]])
    assert lp.describe_decision(W[0]) == "w = {1: 1e-09}"
    assert lp.describe_decision([5e-10, 0.0, 5e-10]) == "w = {0: 5e-10, 2: 5e-10}"
    # Rounding noise beside entries of size 1 stays hidden, as before.
    assert lp.describe_decision([1.0, 1e-17, 0.5]) == "w = {0: 1, 2: 0.5}"
    assert lp.describe_decision([0.0, 0.0, 0.0]) == "w = 0"


def test_same_batch_gives_the_same_decisions_bit_for_bit_whatever_the_clock(monkeypatch):
    # The far solves' start (primal from a reference basis or dual from
    # scratch) was chosen by measured CPU time, so fresh instances solving the
    # same batch returned other tied vertices and other last bits (6 distinct
    # results in 6 runs of 300 rows with these clocks). Each run gets a clock of its
    # own, advancing by random amounts, in every function of the time module.
    import time

    rng = np.random.default_rng(0)
    A = rng.integers(0, 3, size=(6, 12)).astype(float)
    C = rng.integers(-3, 2, size=(200, 12)).astype(float)  # many tied optima
    results = []
    for seed in range(3):
        ticks = np.random.default_rng(seed).exponential(1e-3, size=100_000).cumsum()
        counter = iter(ticks)
        with monkeypatch.context() as m:
            for name in ("thread_time", "process_time", "perf_counter", "monotonic", "time"):
                m.setattr(time, name, lambda: float(next(counter)))
            W, z = LinearProgram(A_ub=A, b_ub=np.full(6, 4.0), bounds=(0, 1)).solve(C)
        results.append((W, z))
    for W, z in results[1:]:
        np.testing.assert_array_equal(W, results[0][0])
        np.testing.assert_array_equal(z, results[0][1])
    # And the decisions are optimal (scipy's HiGHS, from scratch, on a sample).
    for i in range(0, 200, 29):
        ref = linprog(C[i], A_ub=A, b_ub=np.full(6, 4.0), bounds=(0, 1))
        assert results[0][1][i] == pytest.approx(ref.fun, abs=1e-9)
        assert (A @ results[0][0][i] <= 4.0 + 1e-9).all()


def _history_lps():
    """A 0/1 LP with many tied optima (explicit certificates), a generic dense LP
    and a larger one (factored certificates, a reference basis per batch)."""
    rng = np.random.default_rng(0)
    A = rng.integers(0, 3, size=(6, 12)).astype(float)
    tied = (dict(A_ub=A, b_ub=np.full(6, 4.0), bounds=(0, 1)),
            lambda r, n: r.integers(-3, 2, size=(n, 12)).astype(float))
    generic = (dict(A_ub=rng.uniform(0, 1, (20, 30)), b_ub=np.full(20, 5.0), bounds=(0, 1)),
               lambda r, n: -r.uniform(0, 1, (n, 30)))
    large = (dict(A_ub=rng.uniform(0, 1, (40, 60)), b_ub=np.full(40, 5.0), bounds=(0, 1)),
             lambda r, n: -r.uniform(0, 1, (n, 60)) - 0.5)
    return [tied, generic, large]


@pytest.mark.parametrize("case", range(3))
def test_a_batch_gives_the_same_decisions_whatever_was_solved_before(case):
    # The warm starts and the basis cache carried over from one call to the
    # next: the same batch solved again returned other tied vertices and
    # other last bits (10 of 200 rows of the tied LP, 15 of 300 of the
    # generic one, |dz| up to 3e-11 on the large one). Each call now starts
    # afresh, so it matches a new instance's answer bit for bit.
    kwargs, costs = _history_lps()[case]
    rng = np.random.default_rng(5)
    C, other = costs(rng, 100), costs(rng, 60)
    lp = LinearProgram(**kwargs)
    W, z = lp.solve(C)
    for before in ([], [C], [other], [other, C[:1]]):
        for B in before:
            lp.solve(B)
        W2, z2 = lp.solve(C)
        np.testing.assert_array_equal(W2, W)
        np.testing.assert_array_equal(z2, z)
    W3, z3 = pickle.loads(pickle.dumps(lp)).solve(C)
    np.testing.assert_array_equal(W3, W)
    np.testing.assert_array_equal(z3, z)
    # Optimal (scipy's linprog, an independent HiGHS run from scratch) on a sample.
    for i in range(0, 100, 33):
        ref = linprog(C[i], A_ub=kwargs["A_ub"], b_ub=kwargs["b_ub"], bounds=(0, 1))
        assert z[i] == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
        assert (kwargs["A_ub"] @ W[i] <= kwargs["b_ub"] + 1e-9).all()
        assert (W[i] >= -1e-9).all() and (W[i] <= 1 + 1e-9).all()


def test_threaded_batches_and_bounds_do_not_depend_on_earlier_calls():
    # Each n_jobs block starts afresh too (it began from whatever its thread
    # had solved last), and so does solve_or_bound.
    kwargs, costs = _history_lps()[1]
    rng = np.random.default_rng(6)
    C, other = costs(rng, 256), costs(rng, 256)
    lp = LinearProgram(**kwargs, n_jobs=2)
    W, z = lp.solve(C)
    exact = np.arange(256) % 3 == 0
    Wb, zb = lp.solve_or_bound(C, exact)
    lp.solve(other)
    lp.solve_or_bound(other, exact)
    for W2, z2 in (lp.solve(C), lp.solve(C)):
        np.testing.assert_array_equal(W2, W)
        np.testing.assert_array_equal(z2, z)
    Wb2, zb2 = lp.solve_or_bound(C, exact)
    np.testing.assert_array_equal(Wb2, Wb)
    np.testing.assert_array_equal(zb2, zb)
    # The exact rows are optimal, the others lower bounds (sense "min").
    ref = np.array([linprog(C[i], A_ub=kwargs["A_ub"], b_ub=kwargs["b_ub"],
                            bounds=(0, 1)).fun for i in range(0, 256, 51)])
    np.testing.assert_allclose(z[::51], ref, rtol=1e-9, atol=1e-9)
    assert (zb[::51] <= ref + 1e-9).all()
    np.testing.assert_allclose(zb[exact], z[exact], rtol=1e-9, atol=1e-9)
