"""news_recommendation (spotree/problems/_news.py) against scipy's linprog and its own draw."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linprog

from spotree.problems import news_recommendation

RTOL = 1e-9
#: HiGHS's default dual feasibility tolerance.
HIGHS_DUAL_TOL = 1e-7


def linprog_values(problem, C):
    sign = problem.sign
    out = []
    for c in C:
        res = linprog(sign * c, A_ub=problem.A_ub, b_ub=problem.b_ub, A_eq=problem.A_eq,
                      b_eq=problem.b_eq, bounds=problem.bounds, method="highs")
        assert res.status == 0
        out.append(sign * res.fun)
    return np.array(out)


def close(a, b, scale):
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=RTOL * scale)


@pytest.mark.parametrize("sense", ["min", "max"])
def test_news_matches_linprog_and_simplex_constraints(sense):
    problem = news_recommendation(random_state=3)
    assert problem.sense == "max"
    problem.sense = sense  # the same feasible set, both senses
    C = np.random.default_rng(2).uniform(0, 1, size=(60, 6))
    W, z = problem.solve(C)
    close(z, linprog_values(problem, C), 1.0)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-9)
    assert (W >= -1e-9).all()
    assert (W @ problem.A_ub.T <= 1 + 1e-9).all()


def test_news_vertices_cover_solver_optima():
    problem = news_recommendation(random_state=0)
    V = problem.vertices()
    assert V is not None and 6 <= len(V) <= problem.max_vertices
    C = np.random.default_rng(7).uniform(0, 1, size=(500, 6))
    _, z = problem.solve(C)
    close((C @ V.T).max(axis=1), z, 1.0)
    # every listed vertex is attained by the solver for some direction: the
    # solver's optimal decisions only ever land on listed vertices
    W, _ = problem.solve(C)
    dist = np.abs(W[:, None, :] - V[None, :, :]).max(axis=2).min(axis=1)
    assert dist.max() < 1e-7


def test_news_recommendation_draw():
    a = news_recommendation(n_articles=4, n_constraints=3, random_state=42)
    b = news_recommendation(n_articles=4, n_constraints=3, random_state=42)
    c = news_recommendation(n_articles=4, n_constraints=3, random_state=43)
    assert a.n_costs == 4 and a.A_ub.shape == (3, 4) and (a.A_ub > 0).all()
    np.testing.assert_array_equal(a.A_ub, b.A_ub)
    assert not np.array_equal(a.A_ub, c.A_ub)
    np.testing.assert_array_equal(a.b_ub, np.ones(3))
    np.testing.assert_array_equal(a.A_eq, np.ones((1, 4)))
    assert a.bounds == (0.0, None)
    # The first draw is Exponential(1) from the sklearn generator.
    expected = np.random.RandomState(42).exponential(1.0, size=(3, 4))
    np.testing.assert_array_equal(a.A_ub, expected)


def test_news_recommendation_redraws_infeasible_sets():
    # With one article, w = 1 is feasible iff every a_m <= 1: P = (1 - e^-1)^4 ~ 0.16,
    # so most seeds need redraws.
    for seed in range(10):
        problem = news_recommendation(n_articles=1, n_constraints=4, random_state=seed)
        assert (problem.A_ub <= 1).all()
        again = news_recommendation(n_articles=1, n_constraints=4, random_state=seed)
        np.testing.assert_array_equal(problem.A_ub, again.A_ub)
    assert news_recommendation(n_articles=3, n_constraints=0, random_state=0).A_ub is None


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_articles=0), "'n_articles' parameter of news_recommendation must be an int"),
    (dict(n_articles=2.5), "'n_articles'"),
    (dict(n_constraints=-1), "'n_constraints' parameter of news_recommendation"),
])
def test_news_recommendation_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        news_recommendation(**kwargs)


# ------------------------------------------------------------- properties
NEWS = news_recommendation(random_state=5)


@settings(max_examples=60, deadline=None)
@given(C=arrays(np.float64, st.tuples(st.integers(1, 8), st.just(6)),
                elements=st.floats(-10, 10, allow_nan=False, width=64)),
       a=st.floats(0.01, 100))
def test_scaling_invariance_and_value_news(C, a):
    W, z = NEWS.solve(C)
    close(z, NEWS.value(C, W), np.abs(C).max(initial=1.0))
    _, za = NEWS.solve(a * C)
    # Each solve is optimal to HiGHS's dual feasibility tolerance (absolute, on
    # the reduced costs; w sums to 1): costs that differ by less than it may
    # leave a vertex 1e-8 short, as HiGHS's own linprog does on a draw
    # hypothesis found (entries 6e-8 beside -9: 4.82e-8 against 5.85e-8), and
    # scaling by a scales the first solve's shortfall.
    np.testing.assert_allclose(za, a * z, rtol=RTOL,
                               atol=RTOL * a * np.abs(C).max(initial=1.0)
                               + HIGHS_DUAL_TOL * (1.0 + a))
