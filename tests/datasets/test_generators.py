"""Tests of the paper's data generators (sections 3.1, 5.1) and the news stand-in."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from spotree.datasets import make_illustrative, make_news, make_shortest_path
from spotree.problems import ShortestPath

# c1 = 5x + 1.9 equals c2 = (5x + 0.4)^2 where u = 5x + 0.4 solves u^2 = u + 1.5.
X_CROSS = ((1 + np.sqrt(7)) / 2 - 0.4) / 5


# ------------------------------------------------------- make_illustrative
def test_illustrative_formula_and_shapes():
    X, C = make_illustrative(500, random_state=0)
    assert X.shape == (500, 1) and C.shape == (500, 2)
    assert X.dtype == np.float64 and C.dtype == np.float64
    x = X[:, 0]
    assert ((x >= 0) & (x < 1)).all()
    for xi, (c1, c2) in zip(x[:20], C[:20]):
        assert c1 == pytest.approx(5 * xi + 1.9, rel=1e-15)
        assert c2 == pytest.approx((5 * xi + 0.4) * (5 * xi + 0.4), rel=1e-14)
    assert_allclose(C[:, 0], 5 * x + 1.9, rtol=1e-15)
    assert_allclose(C[:, 1], (5 * x + 0.4) ** 2, rtol=1e-14)


def test_illustrative_crossing_point_within_data():
    # The paper rounds the crossing to x = 0.28.
    assert round(X_CROSS, 2) == 0.28
    X, C = make_illustrative(random_state=1)
    assert X.shape == (10000, 1)  # the paper's default size
    x = X[:, 0]
    below, above = x < X_CROSS, x > X_CROSS
    # Both regimes are present, with roughly the uniform shares.
    assert 0.25 < below.mean() < 0.32
    # Road 2 is cheaper below the crossing, road 1 above it.
    assert (C[below, 1] < C[below, 0]).all()
    assert (C[above, 0] < C[above, 1]).all()
    assert 5 * X_CROSS + 1.9 == pytest.approx((5 * X_CROSS + 0.4) ** 2, rel=1e-14)


def test_illustrative_determinism():
    a = make_illustrative(100, random_state=42)
    b = make_illustrative(100, random_state=42)
    c = make_illustrative(100, random_state=43)
    assert_array_equal(a[0], b[0])
    assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    rs = np.random.RandomState(5)
    d = make_illustrative(100, random_state=rs)
    e = make_illustrative(100, random_state=np.random.RandomState(5))
    assert_array_equal(d[0], e[0])


@pytest.mark.parametrize("n", [0, -3, 2.5, "10", True, None])
def test_illustrative_bad_n_samples(n):
    with pytest.raises(ValueError, match="n_samples must be an int >= 1"):
        make_illustrative(n)


# ------------------------------------------------------ make_shortest_path
def reference_costs(X, B, degree):
    """c_k = ((B x)_k / sqrt(p) + 1)^degree, written element by element."""
    n, p = X.shape
    d = B.shape[0]
    C = np.empty((n, d))
    for i in range(n):
        for k in range(d):
            bx = sum(B[k, j] * X[i, j] for j in range(p))
            C[i, k] = (bx / np.sqrt(p) + 1.0) ** degree
    return C


@pytest.mark.parametrize("degree", [1, 2, 4, 8])
@pytest.mark.parametrize("n_features", [1, 5])
def test_shortest_path_exact_formula(degree, n_features):
    X, C, B = make_shortest_path(40, n_features=n_features, degree=degree, random_state=degree,
                                 return_B=True)
    assert X.shape == (40, n_features) and C.shape == (40, 24) and B.shape == (24, n_features)
    assert X.dtype == C.dtype == B.dtype == np.float64
    assert ((X >= 0) & (X < 1)).all()
    assert set(np.unique(B)) <= {0.0, 1.0}
    assert_allclose(C, reference_costs(X, B, degree), rtol=1e-13)
    assert (C >= 1.0).all()


def test_shortest_path_B_is_bernoulli_half():
    _, _, B = make_shortest_path(1, n_features=50, random_state=0, return_B=True)
    # 24 * 50 = 1200 draws: mean within 5 standard errors of 0.5.
    assert abs(B.mean() - 0.5) < 5 * 0.5 / np.sqrt(B.size)
    assert set(np.unique(B)) == {0.0, 1.0}


def test_shortest_path_grid_sets_n_costs():
    X, C, B = make_shortest_path(10, grid=(2, 3), n_features=3, random_state=0, return_B=True)
    assert C.shape == (10, ShortestPath((2, 3)).n_costs) == (10, 7)
    assert B.shape == (7, 3)
    assert_allclose(C, reference_costs(X, B, 2), rtol=1e-13)


def test_shortest_path_passing_B_shares_it():
    X_tr, C_tr, B = make_shortest_path(50, degree=3, noise=0.0, random_state=0, return_B=True)
    X_te, C_te, B_te = make_shortest_path(30, degree=3, noise=0.0, B=B, random_state=1,
                                          return_B=True)
    assert_array_equal(B_te, B)
    assert_allclose(C_te, reference_costs(X_te, B, 3), rtol=1e-13)
    # Passing B as a list of ints works too, and the same seed gives the same set.
    X2, C2 = make_shortest_path(30, degree=3, B=B.astype(int).tolist(), random_state=1)
    assert_array_equal(X2, X_te)
    assert_array_equal(C2, C_te)


def test_shortest_path_determinism():
    a = make_shortest_path(20, noise=0.5, random_state=7, return_B=True)
    b = make_shortest_path(20, noise=0.5, random_state=7, return_B=True)
    c = make_shortest_path(20, noise=0.5, random_state=8, return_B=True)
    for u, v in zip(a, b):
        assert_array_equal(u, v)
    assert not np.array_equal(a[0], c[0])
    assert len(make_shortest_path(20, random_state=7)) == 2


@pytest.mark.parametrize("noise", [0.0, 0.25, 0.5, 1.0])
def test_shortest_path_noise_bounds(noise):
    X, C, B = make_shortest_path(2000, degree=2, noise=noise, random_state=3, return_B=True)
    eps = C / reference_costs(X, B, 2)
    if noise == 0.0:
        assert_allclose(eps, 1.0, rtol=1e-13)
        return
    assert (eps >= 1 - noise - 1e-12).all() and (eps <= 1 + noise + 1e-12).all()
    # 48,000 uniform draws: the extremes get close to the ends of the
    # interval, and the mean and spread match U[1 - noise, 1 + noise].
    assert eps.min() < 1 - 0.99 * noise and eps.max() > 1 + 0.99 * noise
    se = noise / np.sqrt(3) / np.sqrt(eps.size)
    assert abs(eps.mean() - 1.0) < 6 * se
    assert eps.std() == pytest.approx(noise / np.sqrt(3), rel=0.02)
    # Independent per entry, not one factor per row.
    assert not np.allclose(eps[:, 0], eps[:, 1])


@pytest.mark.parametrize("kwargs, match", [
    ({"B": np.full((24, 5), 0.5)}, "B must be binary"),
    ({"B": np.eye(24, 5) * 2}, "B must be binary"),
    ({"B": np.ones((24, 4))}, r"B must have shape \(n_costs, n_features\) = \(24, 5\); "
                              r"got \(24, 4\)"),
    ({"B": np.ones((5, 24))}, r"got \(5, 24\)"),
    ({"noise": -0.1}, "noise must be a float in \\[0, 1\\]; got -0.1"),
    ({"noise": 1.5}, "noise must be a float in \\[0, 1\\]"),
    ({"noise": np.nan}, "noise must be a float in \\[0, 1\\]"),
    ({"noise": "0.1"}, "noise must be a float"),
    ({"noise": True}, "noise must be a float in \\[0, 1\\]; got True"),  # was noise 1
    ({"degree": 2.0}, "degree must be an int >= 1; got 2.0"),
    ({"degree": 0}, "degree must be an int >= 1"),
    ({"n_features": 0}, "n_features must be an int >= 1"),
    ({"grid": (1, 1)}, "grid must"),
    # Taken by its truth, "no" returned B as well (three values, not two).
    ({"return_B": "no"}, r"return_B must be a bool \(True or False\); got 'no'"),
    ({"return_B": 1}, "return_B must be a bool"),
])
def test_shortest_path_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_shortest_path(10, **kwargs)


def test_shortest_path_degree_that_overflows_is_refused():
    # (B x / sqrt(p) + 1)^deg by hand: with p = 5 its base reaches about 3 (at most
    # 1 + sqrt(5)), and 3^800 is beyond float64, so inf costs came back unsaid.
    rnd = np.random.RandomState(0)
    B = rnd.binomial(1, 0.5, (24, 5))
    x = rnd.uniform(0, 1, (20, 5))
    with np.errstate(over="ignore"):
        assert np.isinf((x @ B.T / np.sqrt(5) + 1) ** 800).any()
    with pytest.raises(ValueError, match="degree=800 is too large"):
        make_shortest_path(20, degree=800, random_state=0)
    assert np.isfinite(make_shortest_path(20, degree=300, random_state=0)[1]).all()


@pytest.mark.parametrize("n", [0, -1, 1.5, None])
def test_shortest_path_bad_n_samples(n):
    with pytest.raises(ValueError, match="n_samples must be an int >= 1"):
        make_shortest_path(n)


# ---------------------------------------------------------------- make_news
@pytest.mark.parametrize("n_articles, n_features", [(6, 5), (3, 2), (1, 1)])
def test_news_shapes_and_ranges(n_articles, n_features):
    X, C, w = make_news(300, n_articles=n_articles, n_features=n_features, random_state=0)
    assert X.shape == (300, n_features)
    assert C.shape == (300, n_articles)
    assert w.shape == (300,)
    assert X.dtype == C.dtype == w.dtype == np.float64
    assert np.isfinite(X).all() and np.isfinite(C).all() and np.isfinite(w).all()
    # Click rates are probabilities; weights are positive interaction counts.
    assert ((C >= 0) & (C <= 1)).all()
    assert (w > 0).all()
    assert_array_equal(w, np.round(w))
    # Documented: at least 50 interactions per article type.
    assert (w >= 50 * n_articles).all()
    # Documented: Dirichlet user features, non-negative and summing to one.
    assert (X >= 0).all()
    assert_allclose(X.sum(axis=1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("n_articles", [6, 4])
def test_news_weight_is_the_number_of_interactions_behind_the_row(n_articles):
    # Documented: the weight is the number of interactions behind a row, shared
    # evenly by the article types, and C holds click rates. So w / n_articles
    # trials per article, and each rate times that is a whole number of clicks.
    # The weight was the drawn count, up to n_articles - 1 above the trials.
    _, C, w = make_news(400, n_articles=n_articles, n_features=3, random_state=2)
    trials = w / n_articles
    assert_array_equal(trials, np.round(trials))
    clicks = C * trials[:, None]
    assert_allclose(clicks, np.round(clicks), atol=1e-9)


def test_news_click_rates_are_plausible():
    _, C, _ = make_news(2000, random_state=1)
    # Documented click probabilities lie in (0.02, 0.2); observed rates
    # average to a value in that range and vary across article types.
    assert 0.02 < C.mean() < 0.2
    assert C.mean(axis=0).std() > 0
    assert C.std(axis=0).min() > 0


def test_news_determinism():
    a = make_news(50, random_state=3)
    b = make_news(50, random_state=3)
    c = make_news(50, random_state=4)
    for u, v in zip(a, b):
        assert_array_equal(u, v)
    assert not np.array_equal(a[1], c[1])


def test_news_click_probabilities_follow_the_documented_formula():
    """The documented model, written out entry by entry on the same random draws: the
    score x^T M a_k standardized over the data set, p = 0.02 + 0.18 sigmoid(1.5 s - 1),
    per-article counts floor(count / n_articles), clicks Binomial(per-article count, p),
    weight the interactions behind the row (n_articles times the per-article count)."""
    n, m, p = 40, 3, 4
    X, C, w = make_news(n, n_articles=m, n_features=p, random_state=5)
    rng = np.random.RandomState(5)
    X_ref = rng.dirichlet(np.ones(p), size=n)
    A = rng.dirichlet(np.ones(p), size=m)
    M = rng.normal(size=(p, p)) * 2.0 + np.eye(p) * 2.0
    S = np.array([[sum(X_ref[i, a] * M[a, b] * A[k, b] for a in range(p) for b in range(p))
                   for k in range(m)] for i in range(n)])
    mu = S.sum() / S.size
    sd = np.sqrt(((S - mu) ** 2).sum() / S.size)
    P = 0.02 + 0.18 / (1.0 + np.exp(1.0 - 1.5 * (S - mu) / sd))
    counts = np.maximum(np.round(rng.lognormal(6.0, 0.8, size=n)), 50 * m)
    per = np.floor(counts / m)
    clicks = rng.binomial(per.astype(np.int64)[:, None], P)
    assert_array_equal(X, X_ref)
    assert_array_equal(w, per * m)
    assert_allclose(C, clicks / per[:, None], rtol=1e-15)
    assert ((P > 0.02) & (P < 0.2)).all() and P.std() > 0.01


@pytest.mark.parametrize("kwargs, match", [
    ({"n_samples": 0}, "n_samples must be an int >= 1"),
    ({"n_samples": 10, "n_articles": 0}, "n_articles must be an int >= 1"),
    ({"n_samples": 10, "n_features": 1.0}, "n_features must be an int >= 1"),
])
def test_news_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_news(**kwargs)



def test_an_array_of_text_is_named():
    """It raised numpy's 'could not convert string to float', naming no argument."""
    with pytest.raises(ValueError, match="B must be an array of numbers"):
        make_shortest_path(5, B=[[1, "a"]])


def _every_data_function():
    from spotree.datasets import (load_icon_energy, load_yahoo_r6, make_pyepo_knapsack,
                                  make_pyepo_shortest_path)

    return [(make_illustrative, (10,)), (make_shortest_path, (10,)), (make_news, (10,)),
            (make_pyepo_shortest_path, (10,)), (make_pyepo_knapsack, (10,)),
            # The loaders check it before they read anything: no such file is needed.
            (load_icon_energy, ("/no/such/Data.npz",)), (load_yahoo_r6, ("/no/such/log",))]


@pytest.mark.parametrize("random_state", [np.random.default_rng(0), -1, 2**32, 1.5, "7",
                                          True])
@pytest.mark.parametrize("func, args", _every_data_function())
def test_a_bad_random_state_is_named(func, args, random_state):
    """scikit-learn's check_random_state answered "Generator(PCG64) at 0x... cannot be used
    to seed a numpy.random.RandomState instance" or numpy's "Seed must be between 0 and
    2**32 - 1", naming no argument; load_yahoo_r6 said so only after reading the whole
    log, and load_icon_energy named 'the random_state parameter of resample'."""
    with pytest.raises(ValueError, match=r"^random_state must be an int in \[0, 2\*\*32 - 1\], "
                                         r"a numpy RandomState instance or None; got "):
        func(*args, random_state=random_state)


@pytest.mark.parametrize("func, args", _every_data_function()[:5])
def test_good_random_states_draw_as_before(func, args):
    a = func(*args, random_state=np.int64(3))
    b = func(*args, random_state=np.random.RandomState(3))
    for u, v in zip(a, b):
        assert_array_equal(u, v)
