"""Vertex and integer point enumeration (spotree/problems/_vertex_enum.py) on the row-bound form."""

import itertools
import time

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from spotree.problems._vertex_enum import integer_points, lp_vertices, mixed_points


def ranged_polytope(seed, d=3, m=3):
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(0.2, 0.8, d)
    A = rng.normal(size=(m, d))
    act = A @ x0
    rl = act - rng.uniform(0.05, 0.5, m)
    ru = act + rng.uniform(0.05, 0.5, m)
    ru[0] = np.inf  # one ">=" row
    return A, rl, ru, np.zeros(d), np.ones(d)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("sparse", [False, True])
def test_lp_vertices_with_ranged_rows(seed, sparse):
    A, rl, ru, lo, hi = ranged_polytope(seed)
    d = A.shape[1]
    V = lp_vertices(sp.csr_matrix(A) if sparse else A, rl, ru, lo, hi, 200_000, 5000)
    assert V is not None
    # Every listed point is feasible and has d linearly independent active
    # constraints (rows on either side, bounds).
    act = V @ A.T
    assert (act >= rl - 1e-9).all() and (act <= ru + 1e-9).all()
    assert (V >= lo - 1e-9).all() and (V <= hi + 1e-9).all()
    M = np.vstack([A, A, np.eye(d), np.eye(d)])
    b = np.concatenate([rl, ru, lo, hi])
    for v in V:
        active = np.isfinite(b) & (np.abs(M @ v - b) <= 1e-8)
        assert np.linalg.matrix_rank(M[active]) == d
    # Every optimum (scipy's milp on the same row form) is attained at a vertex.
    for c in np.random.default_rng(seed).normal(size=(60, d)):
        res = milp(c, constraints=LinearConstraint(A, rl, ru), bounds=Bounds(lo, hi))
        assert abs((V @ c).min() - res.fun) <= 1e-9


def test_lp_vertices_equality_rows_and_limits():
    # The simplex in R^3 written with an equality row.
    A = np.ones((1, 3))
    V = lp_vertices(A, np.ones(1), np.ones(1), np.zeros(3), np.full(3, np.inf), 200_000, 5000)
    np.testing.assert_array_equal(V, [[0, 0, 1], [0, 1, 0], [1, 0, 0]])
    assert lp_vertices(A, np.ones(1), np.ones(1), np.zeros(3), np.full(3, np.inf), 2,
                       5000) is None
    assert lp_vertices(A, np.ones(1), np.ones(1), np.zeros(3), np.full(3, np.inf), 200_000,
                       2) is None


def test_large_sparse_problem_declines_without_densifying():
    # 20,000 x 50,000 dense would need 8 GB; the enumeration must decline first.
    n, m = 50_000, 20_000
    rng = np.random.default_rng(0)
    A = sp.csr_matrix((np.ones(100_000), (rng.integers(0, m, 100_000),
                                          rng.integers(0, n, 100_000))), shape=(m, n))
    t0 = time.process_time()
    assert lp_vertices(A, np.full(m, -np.inf), np.ones(m), np.zeros(n), np.ones(n), 200_000,
                       5000) is None
    assert integer_points(A, np.full(m, -np.inf), np.ones(m), np.zeros(n), np.ones(n),
                          200_000, 5000) is None
    assert time.process_time() - t0 < 30  # generous: only guards against densifying


@pytest.mark.parametrize("seed", range(3))
def test_integer_points_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 2, size=(2, 3))
    rl = np.array([-np.inf, -1.0])
    ru = np.array([3.0, 2.5])
    lo, hi = np.array([-1.0, 0.0, 0.0]), np.array([2.0, 2.0, 3.0])
    P = integer_points(A, rl, ru, lo, hi, 200_000, 5000)
    grid = np.array(list(itertools.product(*[range(int(a), int(b) + 1)
                                             for a, b in zip(lo, hi)])), dtype=float)
    act = grid @ A.T
    expected = grid[((act >= rl - 1e-9) & (act <= ru + 1e-9)).all(axis=1)]
    np.testing.assert_array_equal(P, expected)
    assert integer_points(A, rl, ru, lo, hi, 10, 5000) is None  # box too large


def _brute_vertices(M, b, d):
    """Vertices of {w : M w <= b} by exact-rank enumeration of active sets (slow, small d)."""
    out = []
    for rows in itertools.combinations(range(M.shape[0]), d):
        sub = M[list(rows)]
        if np.linalg.matrix_rank(sub) < d:
            continue
        x = np.linalg.solve(sub, b[list(rows)])
        if (M @ x <= b + 1e-12 * (np.abs(M) @ np.abs(x) + np.abs(b))).all():
            out.append(x)
    return np.unique(np.array(out), axis=0)


@pytest.mark.parametrize("scale", [1.0, 1e-6, 1e-10])
def test_lp_vertices_of_tiny_polytopes(scale):
    # Coefficients of 1e-10 and a polytope of any size: an absolute tolerance
    # of 1e-9 let the box's corners through the row x + 2y <= 1.5 (in units
    # of 1e-10), and rounding to 1e-9 merged vertices of a box 1e-10 wide.
    A = np.array([[1e-10, 2e-10]])
    lo, hi = np.zeros(2), np.full(2, scale)
    rhs = np.array([1.5e-10 * scale])
    V = lp_vertices(A, np.full(1, -np.inf), rhs, lo, hi, 200_000, 5000)
    M = np.vstack([A, -np.eye(2), np.eye(2)])
    b = np.concatenate([rhs, -lo, hi])
    expected = _brute_vertices(M, b, 2)
    assert expected.shape == (4, 2)
    assert V is not None and V.shape == expected.shape
    np.testing.assert_allclose(V, expected, rtol=1e-12, atol=0)
    # Bounds alone, [0, 1] x [0, 1e-10]: four corners (two before).
    hi = np.array([1.0, 1e-10])
    V = lp_vertices(np.zeros((0, 2)), np.zeros(0), np.zeros(0), lo, hi, 200_000, 5000)
    np.testing.assert_array_equal(V, [[0, 0], [0, hi[1]], [hi[0], 0], [hi[0], hi[1]]])
    assert not np.signbit(V).any()


def test_integer_points_respect_rows_of_tiny_coefficients():
    # 1e-10 x + 1e-10 y <= 1e-10 on the box [0, 3]^2: the points with x + y <= 1
    # (all 16 passed an absolute tolerance of 1e-9), with no -0. entries.
    A = np.array([[1e-10, 1e-10]])
    P = integer_points(A, np.full(1, -np.inf), np.full(1, 1e-10), np.zeros(2),
                       np.full(2, 3.0), 200_000, 5000)
    expected = [p for p in itertools.product(range(4), repeat=2) if sum(p) <= 1]
    np.testing.assert_array_equal(P, expected)
    assert not np.signbit(P).any()
    # A ">=" side too: x + y >= 5 in units of 1e-10.
    P = integer_points(A, np.full(1, 5e-10), np.full(1, np.inf), np.zeros(2),
                       np.full(2, 3.0), 200_000, 5000)
    np.testing.assert_array_equal(P, [(2, 3), (3, 2), (3, 3)])


def random_mixed(seed):
    """A small bounded mixed-integer set in row-bound form, feasible at ``x0``.

    General integers in small boxes, continuous variables bounded, half
    bounded or free (a free one is bounded by a ranged row of its own),
    equality rows and ranged or one-sided rows mixing both kinds, and a row
    on the integer variables alone.
    """
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 6))
    integer = rng.permutation(np.r_[True, False, rng.random(d - 2) < 0.5])
    I, K = np.flatnonzero(integer), np.flatnonzero(~integer)
    lo, hi = np.full(d, -np.inf), np.full(d, np.inf)
    lo[I] = rng.integers(-2, 1, I.size)
    hi[I] = lo[I] + rng.integers(1, 4, I.size)
    kind = rng.integers(0, 3, K.size)                  # 0 boxed, 1 lo only, 2 free
    lo[K[kind < 2]] = rng.uniform(-1, 0, (kind < 2).sum())
    hi[K[kind == 0]] = lo[K[kind == 0]] + rng.uniform(1, 3, (kind == 0).sum())
    x0 = np.zeros(d)
    x0[I] = rng.integers(lo[I], hi[I] + 1)
    x0[K] = np.where(np.isfinite(lo[K]), lo[K] + rng.uniform(0.1, 0.9, K.size), 0.3)
    rows = [rng.normal(size=d) for _ in range(int(rng.integers(1, 4)))]
    rows.append(np.where(integer, rng.integers(-1, 3, d), 0.0))      # integers only
    for j in K:  # every continuous variable bounded by a ranged row
        r = np.where(np.isfinite(lo) & np.isfinite(hi), rng.normal(size=d), 0.0)
        r[j] = 1.0
        rows.append(r)
    A = np.array(rows)
    act = A @ x0
    rlo = act - rng.uniform(0.2, 2.0, len(A))
    rhi = act + rng.uniform(0.2, 2.0, len(A))
    rhi[0] = np.inf                                     # a ">=" row
    if rng.random() < 0.7:                              # an equality row
        rlo[1] = rhi[1] = act[1]
    return A, rlo, rhi, lo, hi, integer


def milp_value(c, A, rlo, rhi, lo, hi, integer):
    res = milp(c, constraints=LinearConstraint(A, rlo, rhi), bounds=Bounds(lo, hi),
               integrality=integer.astype(int), options={"mip_rel_gap": 0.0})
    assert res.status == 0
    # HiGHS's integers are integral only to 1e-6 (1.99999961 moved the value
    # by 1e-6): the LP with the integers fixed at their rounded values.
    z = np.round(res.x[integer])
    if (z == res.x[integer]).all():
        return res.fun
    lo, hi = lo.copy(), hi.copy()
    lo[integer] = hi[integer] = z
    res = milp(c, constraints=LinearConstraint(A, rlo, rhi), bounds=Bounds(lo, hi))
    assert res.status == 0
    return res.fun


@pytest.mark.parametrize("seed", range(6))
def test_mixed_points_attain_milp_optimum(seed):
    A, rlo, rhi, lo, hi, integer = random_mixed(seed)
    d = A.shape[1]
    V = mixed_points(A, rlo, rhi, lo, hi, integer, lo, hi, 200_000, 5000)
    assert V is not None
    # Every listed point is feasible, with integer values where required.
    np.testing.assert_array_equal(V[:, integer], np.round(V[:, integer]))
    act = V @ A.T
    tol = 1e-9 * (1 + np.abs(V) @ np.abs(A).T)
    assert (act >= rlo - tol).all() and (act <= rhi + tol).all()
    assert (V >= lo - 1e-9).all() and (V <= hi + 1e-9).all()
    # Sorted lexicographically (coordinates within rounding count as equal),
    # no duplicates.
    for u, v in zip(V[:-1], V[1:]):
        differ = np.flatnonzero(np.abs(u - v) > 1e-9 * (1 + np.abs(V).max(axis=0)))
        assert differ.size and u[differ[0]] < v[differ[0]], (u, v)
    # The min and the max of c.w over the list are scipy.milp's (the optimum
    # is attained at a listed point), for random costs and the coordinates'
    # extremes.
    rng = np.random.default_rng(100 + seed)
    costs = np.vstack([rng.normal(size=(5, d)), np.eye(d)[:2]])
    for c in costs:
        for s in (1.0, -1.0):
            f = milp_value(s * c, A, rlo, rhi, lo, hi, integer)
            assert abs((V @ (s * c)).min() - f) <= 1e-7 * (1 + abs(f)), (c, s)


def test_mixed_points_decline_beyond_the_limits():
    A, rlo, rhi, lo, hi, integer = random_mixed(0)
    V = mixed_points(A, rlo, rhi, lo, hi, integer, lo, hi, 200_000, 5000)
    assert V is not None and V.shape[0] > 2
    n_z = np.prod(hi[integer] - lo[integer] + 1)
    assert mixed_points(A, rlo, rhi, lo, hi, integer, lo, hi, int(n_z) - 1, 5000) is None
    assert mixed_points(A, rlo, rhi, lo, hi, integer, lo, hi, 200_000, V.shape[0] - 1) is None
    assert mixed_points(A, rlo, rhi, lo, hi, integer, lo, hi, 200_000,
                        V.shape[0]) is not None
    # A box of 1e30 integer points declines at once (no grid is built).
    lo2, hi2 = lo.copy(), hi.copy()
    lo2[integer], hi2[integer] = -1e15, 1e15
    t0 = time.process_time()
    assert mixed_points(A, rlo, rhi, lo, hi, integer, lo2, hi2, 200_000, 5000) is None
    assert time.process_time() - t0 < 1


def test_mixed_points_check_every_equality_row():
    # Both equalities fix x2 + x3 (dependent in the continuous variables),
    # and together z1 = 4 - 2 z0: only the slices at z = (1, 2) and (2, 0)
    # are nonempty, though each row alone holds on many more.
    A = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, -1.0, 2.0, 2.0], [0.0, 0.0, 1.0, -1.0]])
    rlo, rhi = np.array([2.0, 0.0, -np.inf]), np.array([2.0, 0.0, 1.0])
    lo, hi = np.zeros(4), np.array([3.0, 3.0, 5.0, 5.0])
    integer = np.array([True, True, False, False])
    V = mixed_points(A, rlo, rhi, lo, hi, integer, lo, hi, 200_000, 5000)
    np.testing.assert_array_equal(V, [[1, 2, 0, 1], [1, 2, 1, 0], [2, 0, 0, 0]])
    # Brute force over the integer box, one linprog per slice (scipy 1.10's
    # milp crashed the interpreter on these dependent equalities).
    up, down = np.isfinite(rhi), np.isfinite(rlo)
    for c in np.random.default_rng(0).normal(size=(4, 4)):
        f = np.inf
        for z0, z1 in itertools.product(range(4), range(4)):
            b = A[:, :2] @ [z0, z1]
            res = linprog(c[2:], A_ub=np.vstack([A[up, 2:], -A[down, 2:]]),
                          b_ub=np.r_[rhi[up] - b[up], b[down] - rlo[down]],
                          bounds=list(zip(lo[2:], hi[2:])))
            if res.status == 0:
                f = min(f, c[0] * z0 + c[1] * z1 + res.fun)
        assert abs((V @ c).min() - f) <= 1e-9 * (1 + abs(f))


def test_points_do_not_break_rows_of_large_integer_coefficients():
    # Integer points are exact: 1e-9 of the row's terms (about 1 here) let
    # (1, 1) through 500000001 x + 500000000 y <= 1e9 (weight 1e9 + 1), in
    # pure and mixed lists alike, and LinearProgram.solve now scans them.
    A = np.array([[500_000_001.0, 500_000_000.0, 1.0]])
    rlo, rhi = np.array([-np.inf]), np.array([1e9])
    P = integer_points(A[:, :2], rlo, rhi, np.zeros(2), np.ones(2), 100, 100)
    np.testing.assert_array_equal(P, [[0, 0], [0, 1], [1, 0]])
    V = mixed_points(A, rlo, rhi, np.zeros(3), np.ones(3), np.array([True, True, False]),
                     np.zeros(3), np.ones(3), 100, 100)
    # Exact integer arithmetic on the integer part; x is 0 or 1 at every vertex.
    assert all(500_000_001 * int(v[0]) + 500_000_000 * int(v[1]) + int(v[2]) <= 10**9
               for v in V)
    assert {tuple(v) for v in V} == {(0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1), (1, 0, 0),
                                     (1, 0, 1)}
