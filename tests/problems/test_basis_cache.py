"""Basis certificates (spotree/problems/_basis_cache.py) against linprog and brute force.

A certificate may only accept a cost vector for which its vertex is
optimal: every acceptance is checked against scipy's linprog on the same
data, for both kinds of certificates and for the test that uses HiGHS's own
factorization.
"""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from spotree.problems import LinearProgram
from spotree.problems._basis_cache import DenseCache, FactoredCache, nonbasic_conditions
from spotree.problems._certificate_kernels import (dual_bound, first_certifying,
                                                  lu_solve_transposed)


def lp_optimum(A, rl, ru, lo, hi, c):
    res = milp(c, constraints=LinearConstraint(A, rl, ru), bounds=Bounds(lo, hi))
    assert res.status == 0
    return res.fun


def random_row_form(seed, d=5, m=4):
    """Row-bound data with <=, >=, = and ranged rows and mixed bounds, feasible at x0."""
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-1, 1, d)
    A = rng.normal(size=(m, d)) * (rng.random((m, d)) < 0.7)
    A[np.arange(m), np.arange(m) % d] += 1.0
    act = A @ x0
    rl, ru = np.full(m, -np.inf), np.full(m, np.inf)
    for i in range(m):
        kind = i % 4
        if kind in (0, 3):
            ru[i] = act[i] + rng.uniform(0.1, 1)
        if kind in (1, 3):
            rl[i] = act[i] - rng.uniform(0.1, 1)
        if kind == 2:
            rl[i] = ru[i] = act[i]
    lo = np.where(rng.random(d) < 0.7, -2.0, -np.inf)
    hi = np.full(d, 2.0)
    # A variable without a lower bound is bounded below by a ">=" row.
    free = np.flatnonzero(np.isinf(lo))
    A = np.vstack([A, np.eye(d)[free]])
    rl = np.r_[rl, np.full(free.size, -3.0)]
    ru = np.r_[ru, np.full(free.size, np.inf)]
    return A, rl, ru, lo, hi


def solved_basis(problem, c):
    model = problem._model()
    status, w = model.solve(c)
    assert w is not None
    basic = model.basic_variables()
    return model, w, basic, np.concatenate([w, problem._A @ w])


def lp_from_rows(A, rl, ru, lo, hi):
    eq = rl == ru
    up, down = ~eq & np.isfinite(ru), ~eq & np.isfinite(rl)
    A_ub = np.vstack([A[up], -A[down]])
    return LinearProgram(A_ub=A_ub if len(A_ub) else None,
                         b_ub=np.r_[ru[up], -rl[down]] if len(A_ub) else None,
                         A_eq=A[eq] if eq.any() else None, b_eq=rl[eq] if eq.any() else None,
                         bounds=[(None if np.isinf(a) else a, b) for a, b in zip(lo, hi)])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.sampled_from([1e-3, 0.1, 1.0]))
def test_certificates_only_accept_costs_their_vertex_solves(seed, scale):
    A, rl, ru, lo, hi = random_row_form(seed)
    problem = lp_from_rows(A, rl, ru, lo, hi)
    rng = np.random.default_rng(seed)
    c0 = rng.normal(size=problem.n_costs)
    model, w, basic, x = solved_basis(problem, c0)
    m = problem.n_rows
    lo_x = np.r_[problem._lo, problem._rlo]
    hi_x = np.r_[problem._hi, problem._rhi]
    dense = DenseCache(4, np.hstack([problem._A.toarray(), -np.eye(m)]), lo_x, hi_x)
    factored = FactoredCache(4, problem._A, lo_x, hi_x)
    kd = dense.add(dense.certificate(basic, x), w)
    kf = factored.add(factored.certificate(basic, x), w)
    # Cost vectors near c0 (some share its basis, some do not).
    C = c0 + scale * rng.normal(size=(40, problem.n_costs)) * np.abs(c0).max()
    C[0] = c0
    sc = np.abs(C).max(axis=1)
    ok_d = dense.check_one(kd, C, sc)
    ok_f = factored.check_one(kf, C, sc)
    e = factored.conditions(basic, x)
    n_follow = factored.follow(e, model.transpose_solve, C, np.arange(len(C)), sc)
    assert ok_d[0] and ok_f[0] and n_follow >= 1  # the basis solves its own cost vector
    # HiGHS's factorization and SuperLU's give the same run.
    assert ok_f[:n_follow].all() and (n_follow == len(C) or not ok_f[n_follow])
    for i in np.flatnonzero(ok_d | ok_f):
        best = lp_optimum(problem._A.toarray(), problem._rlo, problem._rhi, problem._lo,
                          problem._hi, C[i])
        assert C[i] @ w <= best + 1e-9 * max(1.0, abs(best)), (i, C[i] @ w, best)
    # Away from ties, the two kinds agree.
    margin = np.abs(C @ w - np.array([
        lp_optimum(problem._A.toarray(), problem._rlo, problem._rhi, problem._lo,
                   problem._hi, c) for c in C]))
    clear = margin > 1e-6
    np.testing.assert_array_equal(ok_d[clear], ok_f[clear])


def test_nonbasic_conditions_read_bounds_from_values():
    x = np.array([0.0, 2.0, 0.5, 0.0, 3.0, 1.0, 7.0])
    lo = np.array([0.0, 0.0, 0.0, -np.inf, 3.0, 1.0, -np.inf])
    hi = np.array([1.0, 2.0, 1.0, np.inf, 3.0, 5.0, 9.0])
    basic = np.array([2])
    nb, sign = nonbasic_conditions(x, lo, hi, basic)
    # 0 at lower, 1 at upper, 2 basic, 3 free nonbasic, 4 fixed (skipped),
    # 5 at lower, 6 away from its only bound: must have a zero reduced cost.
    np.testing.assert_array_equal(nb, [0, 1, 3, 5, 6])
    np.testing.assert_array_equal(sign, [1, -1, 0, 1, 0])


@pytest.mark.parametrize("seed", range(5))
def test_lu_solve_transposed_matches_dense_solve(seed):
    from scipy.sparse.linalg import splu

    rng = np.random.default_rng(seed)
    n = 30
    B = sp.random(n, n, density=0.1, random_state=seed, format="csc") + sp.diags(
        rng.uniform(1, 2, n))
    lu = splu(B.tocsc())
    b = rng.normal(size=n)
    L, U = lu.L.tocsc(), lu.U.tocsc()
    u, v = np.empty(n), np.empty(n)
    lu_solve_transposed(b, L.indptr.astype(np.int64), L.indices.astype(np.int64), L.data,
                        U.indptr.astype(np.int64), U.indices.astype(np.int64), U.data,
                        lu.perm_r.astype(np.int64), lu.perm_c.astype(np.int64), u, v)
    y = u[lu.perm_r]
    np.testing.assert_allclose(y, np.linalg.solve(B.toarray().T, b), rtol=1e-10, atol=1e-12)


def test_first_certifying_matches_brute_force():
    rng = np.random.default_rng(0)
    sizes = [3, 1, 4, 2]
    G = rng.normal(size=(sum(sizes), 5))
    gtol = np.full(sum(sizes), 1e-11)
    stops = np.cumsum(sizes)
    starts = stops - sizes
    C = rng.normal(size=(400, 5))
    sc = np.abs(C).max(axis=1)
    for entries in ([0, 1, 2, 3], [2, 0], [3]):
        got = first_certifying(C, sc, G, gtol, starts, stops, np.array(entries))
        for i, c in enumerate(C):
            expect = next((k for k in entries
                           if (G[starts[k]:stops[k]] @ c + sc[i] * gtol[starts[k]:stops[k]]
                               >= 0).all()), -1)
            assert got[i] == expect


def test_cache_evicts_least_recently_used():
    cache = DenseCache(2, np.hstack([np.ones((1, 2)), -np.eye(1)]), np.zeros(3),
                       np.ones(3))
    g = (np.zeros((1, 2)), np.zeros(1))
    assert cache.add(g, np.zeros(2)) == 0
    assert cache.add(g, np.ones(2)) == 1
    cache.touch([0])
    assert cache.add(g, np.full(2, 2.0)) == 1  # slot 1 was the least recently used
    np.testing.assert_array_equal(cache.vertices_of([0, 1]), [[0, 0], [2, 2]])


def test_paying_counts_hits_per_call():
    cache = DenseCache(2, np.zeros((0, 2)), np.zeros(2), np.ones(2))
    assert cache.paying()  # prior credit
    for _ in range(40):
        cache.record(calls=1)
    assert not cache.paying()
    cache.record(hits=100)
    assert cache.paying()


@pytest.mark.parametrize("d", [3, 4])
def test_tiny_lp_all_costs_on_a_grid_match_brute_force(d):
    # Exhaustive over integer cost vectors in {-1, 0, 1}^d (many ties): the
    # cached solve's values equal the best vertex of the cube's corner list.
    problem = LinearProgram(A_ub=[np.ones(d)], b_ub=[d - 1.5], bounds=(0, 1))
    C = np.array(list(itertools.product([-1.0, 0.0, 1.0], repeat=d)))
    C = np.vstack([C, C[::-1], C])
    _, z = problem.solve(C)
    corners = np.array(list(itertools.product([0.0, 1.0], repeat=d)))
    V = corners[corners.sum(axis=1) <= d - 1.5]
    # The LP's vertices include fractional ones; the optimum over the
    # polytope is at most the best feasible corner and is checked by milp.
    for c, zi in zip(C, z):
        assert zi <= (V @ c).min() + 1e-12
        assert abs(zi - lp_optimum(np.ones((1, d)), [-np.inf], [d - 1.5], np.zeros(d),
                                   np.ones(d), c)) <= 1e-9


# ------------------------------------------------------------- dual bounds
def _row_bound_lp(seed):
    """A random LP in row-bound form with every kind of row, and its linprog form."""
    rng = np.random.default_rng(seed)
    d, k = 7, 6
    A = rng.normal(size=(k, d))
    act = A @ rng.uniform(-1, 1, d)
    rlo = act - rng.uniform(0.2, 1, k)
    rhi = act + rng.uniform(0.2, 1, k)
    rlo[:2] = -np.inf  # "at most" rows
    rhi[2:4] = np.inf  # "at least" rows
    rlo[4] = rhi[4] = act[4]  # an equality; row 5 stays ranged
    lo, hi = np.full(d, -2.0), np.full(d, 2.0)
    up, dn = np.isfinite(rhi), np.isfinite(rlo)
    A_ub = np.vstack([A[up], -A[dn]])
    b_ub = np.r_[rhi[up], -rlo[dn]]
    return A, rlo, rhi, lo, hi, (A_ub, b_ub, up, dn)


@pytest.mark.parametrize("seed", range(3))
def test_dual_bound_is_weak_duality_and_tight_at_the_optimal_duals(seed):
    A, rlo, rhi, lo, hi, (A_ub, b_ub, up, dn) = _row_bound_lp(seed)
    csc = sp.csc_matrix(A)
    arrays = (csc.indptr.astype(np.int64), csc.indices.astype(np.int64), csc.data)
    yc = np.empty(A.shape[0])
    rng = np.random.default_rng(10 + seed)
    for c in rng.normal(size=(10, A.shape[1])):
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=list(zip(lo, hi)))
        assert res.status == 0
        scale = 1.0 + abs(res.fun)
        # Any multipliers: never above the optimum (weak duality).
        for y in rng.normal(scale=2.0, size=(50, A.shape[0])):
            assert dual_bound(c, y, *arrays, lo, hi, rlo, rhi, yc) <= res.fun + 1e-9 * scale
        # linprog's duals (per row: its upper side's minus its lower side's
        # marginal): the bound is the optimum.
        mu = res.ineqlin.marginals
        y = np.zeros(A.shape[0])
        y[up] += mu[:up.sum()]
        y[dn] -= mu[up.sum():]
        assert abs(dual_bound(c, y, *arrays, lo, hi, rlo, rhi, yc) - res.fun) <= 1e-8 * scale


def test_dual_bound_is_minus_infinity_when_a_reduced_cost_points_at_no_bound():
    A = sp.csc_matrix(np.array([[1.0, 1.0]]))
    arrays = (A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data)
    lo, hi = np.array([-np.inf, 0.0]), np.array([1.0, 1.0])
    rlo, rhi = np.array([-np.inf]), np.array([1.0])
    yc = np.empty(1)
    # Reduced cost of w0 is 1 - 0 > 0 and w0 has no lower bound: no bound.
    assert dual_bound(np.array([1.0, 0.0]), np.zeros(1), *arrays, lo, hi, rlo, rhi, yc) == -np.inf
    # y = 1 > 0 on a row without a lower side is set to 0 first (so the same).
    assert dual_bound(np.array([1.0, 0.0]), np.ones(1), *arrays, lo, hi, rlo, rhi, yc) == -np.inf
    # c = (-1, 0), y = -1: reduced costs (0, 1), bound y * rhi = -1, the optimum.
    assert dual_bound(np.array([-1.0, 0.0]), -np.ones(1), *arrays, lo, hi, rlo, rhi, yc) == -1.0
