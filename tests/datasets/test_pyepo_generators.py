"""PyEPO's generators: the formulas recomputed from the drawn B, x and noise, PyEPO's own
outputs for fixed seeds (where PyEPO is installed), column order, bad input."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from spotree.datasets import (make_pyepo_knapsack, make_pyepo_shortest_path,
                              pyepo_shortest_path_columns)
from spotree.problems import ShortestPath


def _replay_shortest_path(seed, n, p, grid, deg, noise):
    """The documented draws, made by hand: B (PyEPO order), x, eps."""
    rows, cols = grid
    d = (rows - 1) * cols + (cols - 1) * rows
    rnd = np.random.RandomState(seed)
    B = rnd.binomial(1, 0.5, (d, p))
    x = rnd.normal(0, 1, (n, p))
    eps = rnd.uniform(1 - noise, 1 + noise, (n, d))
    return B, x, eps


def _pyepo_edges(grid):
    """PyEPO's edge list, written from its documented order: per row, east then north."""
    rows, cols = grid
    out = []
    for r in range(rows):
        out += [(r * cols + c, r * cols + c + 1) for c in range(cols - 1)]
        if r < rows - 1:
            out += [(r * cols + c, (r + 1) * cols + c) for c in range(cols)]
    return out


@pytest.mark.parametrize("grid", [(5, 5), (2, 3), (4, 6), (3, 1)])
def test_columns_map_pyepo_edges_to_spotree_edges(grid):
    cols = pyepo_shortest_path_columns(grid)
    pyepo = _pyepo_edges(grid)
    spotree = [(i - 1, j - 1) for i, j in ShortestPath(grid).edges()]
    assert [pyepo[k] for k in cols] == spotree
    assert sorted(cols.tolist()) == list(range(len(spotree)))


@pytest.mark.parametrize("formula", ["package", "paper"])
@pytest.mark.parametrize("deg, noise", [(1, 0.0), (2, 0.5), (6, 0.25)])
def test_shortest_path_formula(formula, deg, noise):
    n, p, grid = 40, 5, (5, 5)
    X, C, B = make_pyepo_shortest_path(n, n_features=p, grid=grid, degree=deg, noise=noise,
                                       random_state=7, return_B=True, formula=formula)
    B0, x, eps = _replay_shortest_path(7, n, p, grid, deg, noise)
    cols = pyepo_shortest_path_columns(grid)
    assert_array_equal(X, x)
    assert_array_equal(B, B0[cols])
    core = (x @ B0.T / np.sqrt(p) + 3) ** deg
    if formula == "package":
        expected = (core + 1) / 3.5 ** deg * eps
    else:
        expected = (core / 3.5 ** deg + 1) * eps
    assert_allclose(C, expected[:, cols], rtol=1e-13)
    assert X.dtype == C.dtype == np.float64


def test_shortest_path_test_set_from_the_same_B():
    X, C, B = make_pyepo_shortest_path(30, degree=4, random_state=0, return_B=True)
    Xt, Ct = make_pyepo_shortest_path(30, degree=4, B=B, random_state=1)
    # Without noise the costs are a function of x through B (in spotree's order).
    expected = ((Xt @ B.T / np.sqrt(5) + 3) ** 4 + 1) / 3.5 ** 4
    assert_allclose(Ct, expected, rtol=1e-13)


@pytest.mark.parametrize("formula", ["package", "paper"])
def test_knapsack_formula(formula):
    n, p, m, dim, deg, noise = 50, 5, 32, 2, 4, 0.5
    X, C, weights, B = make_pyepo_knapsack(n, n_items=m, n_resources=dim, n_features=p,
                                           degree=deg, noise=noise, random_state=3,
                                           return_B=True, formula=formula)
    rnd = np.random.RandomState(3)
    w0 = rnd.choice(range(300, 800), size=(dim, m)) / 100
    B0 = rnd.binomial(1, 0.5, (m, p))
    x = rnd.normal(0, 1, (n, p))
    eps = rnd.uniform(1 - noise, 1 + noise, (n, m))
    core = (x @ B0.T / np.sqrt(p) + 3) ** deg
    if formula == "package":
        expected = np.ceil(5 * (core + 1) / 3.5 ** deg * eps)
    else:
        expected = np.ceil((5 * core / 3.5 ** deg + 1) * eps)
    assert_array_equal(weights, w0)
    assert_array_equal(B, B0)
    assert_array_equal(X, x)
    assert_array_equal(C, expected)
    assert ((weights >= 3) & (weights <= 7.99)).all()


def test_knapsack_reuses_weights_and_B():
    X, C, w, B = make_pyepo_knapsack(20, degree=2, random_state=0, return_B=True)
    Xt, Ct, wt = make_pyepo_knapsack(20, degree=2, weights=w, B=B, random_state=5)
    assert_array_equal(wt, w)
    assert_array_equal(Ct, np.ceil(5 * ((Xt @ B.T / np.sqrt(5) + 3) ** 2 + 1) / 3.5 ** 2))


# ----------------------------------------------------------- against PyEPO
@pytest.mark.parametrize("seed, deg, noise, grid, p", [(135, 1, 0.5, (5, 5), 5),
                                                       (0, 4, 0.5, (5, 5), 5),
                                                       (3, 6, 0.0, (4, 6), 3)])
def test_shortest_path_equals_pyepo(seed, deg, noise, grid, p):
    pyepo_sp = pytest.importorskip("pyepo.data.shortestpath")
    x, c = pyepo_sp.genData(60, p, grid, deg=deg, noise_width=noise, seed=seed)
    X, C = make_pyepo_shortest_path(60, n_features=p, grid=grid, degree=deg, noise=noise,
                                    random_state=seed)
    # spotree column k is PyEPO column cols[k].
    cols = pyepo_shortest_path_columns(grid)
    assert_array_equal(X, x)
    assert_allclose(C, c[:, cols], rtol=1e-6)  # PyEPO returns float32


def test_shortest_path_column_order_matches_pyepo_arcs():
    pytest.importorskip("pyepo")
    from pyepo.model.utils import _get_grid_arcs

    arcs = _get_grid_arcs((5, 5))
    cols = pyepo_shortest_path_columns((5, 5))
    assert [arcs[k] for k in cols] == [(i - 1, j - 1) for i, j in ShortestPath((5, 5)).edges()]


@pytest.mark.parametrize("seed, deg, noise", [(135, 1, 0.5), (1, 2, 0.0), (2, 6, 0.5)])
def test_knapsack_equals_pyepo(seed, deg, noise):
    pyepo_kp = pytest.importorskip("pyepo.data.knapsack")
    w, x, c = pyepo_kp.genData(60, 5, 32, dim=2, deg=deg, noise_width=noise, seed=seed)
    X, C, weights = make_pyepo_knapsack(60, n_items=32, n_resources=2, degree=deg,
                                        noise=noise, random_state=seed)
    assert_array_equal(weights, w)
    assert_array_equal(X, x)
    assert_array_equal(C, c)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, match", [
    ({"n_samples": 0}, "n_samples must be an int >= 1"),
    ({"n_samples": 10, "degree": 0}, "degree must be an int >= 1"),
    ({"n_samples": 10, "degree": 1.5}, "degree must be an int >= 1"),
    ({"n_samples": 10, "noise": 1.5}, r"noise must be a float in \[0, 1\]"),
    ({"n_samples": 10, "noise": -0.1}, r"noise must be a float in \[0, 1\]"),
    ({"n_samples": 10, "grid": (1, 1)}, "at least 2 nodes"),
    ({"n_samples": 10, "grid": 5}, "pair of ints"),
    ({"n_samples": 10, "formula": "code"}, "formula must be 'package' or 'paper'"),
    ({"n_samples": 10, "B": np.ones((3, 5))}, r"B must have shape .* \(40, 5\)"),
    ({"n_samples": 10, "B": np.full((40, 5), 0.5)}, "B must be binary"),
    ({"n_samples": 10, "return_B": "False"}, "return_B must be a bool"),
    ({"n_samples": 10, "return_mean": "no"}, r"return_mean must be a bool .*; got 'no'"),
])
def test_shortest_path_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_pyepo_shortest_path(**kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_items": 0}, "n_items must be an int >= 1"),
    ({"n_resources": 0}, "n_resources must be an int >= 1"),
    ({"weights": np.ones((3, 32))}, r"weights must have shape .* \(2, 32\)"),
    ({"weights": -np.ones((2, 32))}, "non-negative"),
    ({"B": np.ones((32, 4))}, r"B must have shape"),
    ({"return_B": "no"}, "return_B must be a bool"),
    ({"return_mean": None}, "return_mean must be a bool"),
])
def test_knapsack_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_pyepo_knapsack(10, **kwargs)


@pytest.mark.parametrize("make", [make_pyepo_shortest_path, make_pyepo_knapsack])
@pytest.mark.parametrize("degree", [500, 600])
def test_a_degree_that_overflows_is_refused(make, degree):
    # Recomputed by hand from the same draws: at degree 500 some (B x / sqrt(p) + 3)^deg
    # is inf in float64 (inf costs came back); at 600 even 3.5^deg overflows (a bare
    # OverflowError came back).
    rnd = np.random.RandomState(0)
    if make is make_pyepo_knapsack:
        rnd.choice(np.arange(300, 800), size=(2, 32))
    B = rnd.binomial(1, 0.5, (40 if make is make_pyepo_shortest_path else 32, 5))
    x = rnd.normal(0, 1, (50, 5))
    with np.errstate(over="ignore"):
        assert np.isinf((x @ B.T / np.sqrt(5) + 3) ** degree).any()
    with pytest.raises(ValueError, match=f"degree={degree} is too large"):
        make(50, degree=degree, noise=0.5, random_state=0)
    # Below the overflow the costs are finite, as before.
    assert np.isfinite(make(50, degree=200, noise=0.5, random_state=0)[1]).all()


# ------------------------------------------------ the conditional mean (Bayes floor)
class _FixedX(np.random.RandomState):
    """A RandomState whose normal draws are all one row ``x``: many noisy draws of the
    costs at the same features, through the generator's own noise path."""

    def __init__(self, seed, x):
        super().__init__(seed)
        self._x = np.asarray(x, dtype=float)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return np.broadcast_to(self._x, size).copy()


def _assert_mean_matches_draws(C, C_mean):
    # Every row has the same x, so every row of C_mean is the same vector.
    assert_allclose(C_mean, np.broadcast_to(C_mean[0], C_mean.shape), rtol=1e-12)
    se = C.std(axis=0, ddof=1) / np.sqrt(C.shape[0])
    assert np.all(np.abs(C.mean(axis=0) - C_mean[0]) <= 5 * se + 1e-12)


@pytest.mark.parametrize("deg, formula", [(1, "package"), (4, "package"), (6, "paper")])
def test_shortest_path_mean_matches_many_draws_at_fixed_x(deg, formula):
    x = np.array([0.3, -1.2, 0.8, 0.1, -0.4])
    X, C, C_mean = make_pyepo_shortest_path(20000, degree=deg, noise=0.5, formula=formula,
                                            random_state=_FixedX(3, x), return_mean=True)
    assert_array_equal(X, np.broadcast_to(x, X.shape))
    _assert_mean_matches_draws(C, C_mean)


@pytest.mark.parametrize("deg, noise, formula", [(1, 0.5, "package"), (2, 0.5, "package"),
                                                 (4, 0.25, "package"), (6, 0.5, "paper")])
def test_knapsack_mean_matches_many_draws_at_fixed_x(deg, noise, formula):
    x = np.array([1.1, -0.7, 0.2, 0.5, -1.5])
    X, C, _, B, C_mean = make_pyepo_knapsack(20000, degree=deg, noise=noise, formula=formula,
                                             random_state=_FixedX(4, x), return_B=True,
                                             return_mean=True)
    _assert_mean_matches_draws(C, C_mean)
    # Rounding up moves the mean above the noise-free value (by 0.5 on average): the
    # mean of the rounded values is not the formula's value.
    core = (x @ B.T / np.sqrt(5) + 3) ** deg
    a = 5 * (core + 1) / 3.5 ** deg if formula == "package" else 5 * core / 3.5 ** deg + 1
    assert np.mean(C_mean[0] - a) > 0.3


@pytest.mark.parametrize("a", [0.0, 0.3, 1.0, 2.0, 2.7, 7.25, 19.99, 40.0, -0.6, -3.3])
@pytest.mark.parametrize("noise", [0.0, 0.1, 0.5, 1.0])
def test_expected_ceil_uniform_by_quadrature(a, noise):
    from spotree.datasets import expected_ceil_uniform

    # Midpoint rule over U's interval: each jump of ceil costs at most one cell.
    m = 400_001
    u = 1 - noise + 2 * noise * (np.arange(m) + 0.5) / m
    expected = np.ceil(a * u).mean()
    got = expected_ceil_uniform(a, noise)
    assert got.shape == ()
    assert abs(float(got) - expected) <= 2 * (abs(a) * 2 * noise + 1) / m + 1e-12


def test_mean_without_noise_is_the_costs():
    X, C, C_mean = make_pyepo_shortest_path(30, degree=2, noise=0.0, random_state=1,
                                            return_mean=True)
    assert_array_equal(C_mean, C)
    _, C, _, C_mean = make_pyepo_knapsack(30, degree=2, noise=0.0, random_state=1,
                                          return_mean=True)
    assert_array_equal(C_mean, C)


def test_return_mean_keeps_the_draws():
    a = make_pyepo_knapsack(50, degree=4, noise=0.5, random_state=2, return_B=True)
    b = make_pyepo_knapsack(50, degree=4, noise=0.5, random_state=2, return_B=True,
                            return_mean=True)
    assert len(b) == 5
    for u, v in zip(a, b):
        assert_array_equal(u, v)


def test_bayes_floor_below_fitted_models():
    """Deciding with E[c|x] beats least squares and the training mean on test rows."""
    from spotree.metrics import normalized_spo_loss

    problem = ShortestPath((5, 5))
    X, C, B = make_pyepo_shortest_path(300, degree=4, noise=0.5, random_state=0,
                                       return_B=True)
    Xt, Ct, Mt = make_pyepo_shortest_path(2000, degree=4, noise=0.5, B=B, random_state=1,
                                          return_mean=True)
    A = np.column_stack([X, np.ones(len(X))])
    coef = np.linalg.lstsq(A, C, rcond=None)[0]
    floor = normalized_spo_loss(Ct, Mt, problem=problem)
    ls = normalized_spo_loss(Ct, np.column_stack([Xt, np.ones(len(Xt))]) @ coef,
                             problem=problem)
    const = normalized_spo_loss(Ct, np.broadcast_to(C.mean(axis=0), Ct.shape),
                                problem=problem)
    assert 0 < floor < ls < const


def test_arrays_of_text_are_named():
    """They raised numpy's 'could not convert string to float', naming no argument."""
    with pytest.raises(ValueError, match="B must be an array of numbers"):
        make_pyepo_shortest_path(5, B=[[1, 2], [3]])
    with pytest.raises(ValueError, match="weights must be an array of numbers"):
        make_pyepo_knapsack(5, weights=[["a"] * 32] * 2)


def _mean_ceil_exact(lo, hi):
    """E[ceil(V)] for V uniform on [lo, hi], in exact rational arithmetic: the length of
    each unit piece of the interval times the ceiling on it."""
    import math
    from fractions import Fraction

    lo, hi = Fraction(lo), Fraction(hi)
    if lo == hi:
        return float(math.ceil(lo))
    total, x = Fraction(0), lo
    while x < hi:
        nxt = min(Fraction(math.floor(x) + 1), hi)
        total += (nxt - x) * math.ceil(nxt)
        x = nxt
    return float(total / (hi - lo))


@pytest.mark.parametrize("a", [3.0, 7.0, 1000.0, 123456.0, 2.5, -3.0, 19.99, 0.3])
@pytest.mark.parametrize("noise", [1e-15, 1e-13, 1e-12, 1e-11, 1e-9, 1e-6, 0.5])
def test_expected_ceil_uniform_on_narrow_intervals(a, noise):
    """A narrow interval around an integer has two ceilings, each half the time: a = 3,
    noise = 1e-13 has mean 3.5, not 3.0 (the old shortcut for widths below 1e-12 a);
    just above the shortcut the difference of antiderivatives lost its digits
    (3.00009 for a = 2.5, noise = 1e-12, above the largest ceiling 3; 123455.94 for
    a = 123456)."""
    from spotree.datasets import expected_ceil_uniform

    lo, hi = sorted((a * (1.0 - noise), a * (1.0 + noise)))
    got = float(expected_ceil_uniform(a, noise))
    assert got == pytest.approx(_mean_ceil_exact(lo, hi), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("a", [np.inf, -np.inf, np.nan, [2.0, np.nan]])
def test_expected_ceil_uniform_refuses_non_finite_values(a):
    # nan came back for each (ceil(inf * U) has no finite mean), with RuntimeWarnings.
    from spotree.datasets import expected_ceil_uniform

    with pytest.raises(ValueError, match="a must hold finite numbers"):
        expected_ceil_uniform(a, 0.5)
    with pytest.raises(ValueError, match="a must be an array of numbers"):
        expected_ceil_uniform(["x"], 0.5)
