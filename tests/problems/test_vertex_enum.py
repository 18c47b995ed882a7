"""Vertex and integer point enumeration (spotree/problems/_vertex_enum.py) on the row-bound form."""

import itertools
import time

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from spotree.problems._vertex_enum import integer_points, lp_vertices


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
