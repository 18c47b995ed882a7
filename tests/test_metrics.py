"""Tests of the SPO loss, its normalized form, the SPO+ loss and the scikit-learn scorer."""

import itertools
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.neighbors import KNeighborsRegressor
from sklearn.tree import DecisionTreeRegressor

from _helpers import traced_peak

from spotree.datasets import make_shortest_path
from spotree.metrics import (decision_loss, make_spo_scorer, normalized_decision_loss,
                             normalized_spo_loss, spo_loss, spo_plus_loss, spo_plus_subgradient)
from spotree.problems import CallableProblem, FiniteDecisions, ShortestPath

ROADS = FiniteDecisions(np.eye(2))


def brute_regret(C_true, C_pred, V, sense, ties="first"):
    """Regret of the decision chosen for C_pred, by explicit enumeration.

    ties="first": the first listed optimal candidate; "worst": among the
    candidates optimal for C_pred, the one that is worst under C_true.
    """
    out = []
    for ct, cp in zip(C_true, C_pred):
        pred_vals = [float(np.dot(cp, v)) for v in V]
        true_vals = [float(np.dot(ct, v)) for v in V]
        best_pred = min(pred_vals) if sense == "min" else max(pred_vals)
        tied = [k for k, g in enumerate(pred_vals) if g == best_pred]
        if ties == "first":
            chosen = [tied[0]]
        else:
            chosen = tied
        if sense == "min":
            out.append(max(true_vals[k] for k in chosen) - min(true_vals))
        else:
            out.append(max(true_vals) - min(true_vals[k] for k in chosen))
    return np.array(out)


# ------------------------------------------------------ hand-computed cases
def test_two_road_hand_example():
    C_true = np.array([[3.0, 2.0], [1.0, 5.0], [4.0, 4.5], [2.5, 7.0]])
    C_pred = np.array([[1.0, 2.0], [1.0, 5.0], [0.0, 1.0], [3.0, 1.0]])
    # row 0: predicted road 1 (1 < 2) costs 3, best is road 2 at 2   -> 1
    # row 1: predicted road 1 costs 1, which is optimal               -> 0
    # row 2: predicted road 1 costs 4, which is optimal (4 < 4.5)     -> 0
    # row 3: predicted road 2 (1 < 3) costs 7, best is road 1 at 2.5  -> 4.5
    loss = spo_loss(C_true, C_pred, problem=ROADS)
    assert_array_equal(loss, [1.0, 0.0, 0.0, 4.5])
    # Normalized: (1 + 0 + 0 + 4.5) / (2 + 1 + 4 + 2.5) = 5.5 / 9.5.
    assert normalized_spo_loss(C_true, C_pred, problem=ROADS) == pytest.approx(5.5 / 9.5,
                                                                              rel=1e-15)
    # Weights (2, 1, 1, 0): (2*1 + 0) / (2*2 + 1 + 4 + 0) = 2 / 9.
    w = [2.0, 1.0, 1.0, 0.0]
    assert_array_equal(spo_loss(C_true, C_pred, problem=ROADS, sample_weight=w),
                       [2.0, 0.0, 0.0, 0.0])
    assert normalized_spo_loss(C_true, C_pred, problem=ROADS,
                               sample_weight=w) == pytest.approx(2 / 9, rel=1e-15)


def test_shortest_path_hand_example():
    # 2x2 grid: edges (1,2), (3,4), (1,3), (2,4). Path east-then-north uses
    # edges 0 and 3; north-then-east uses edges 2 and 1.
    sp = ShortestPath((2, 2))
    C_true = np.array([[1.0, 2.0, 3.0, 6.0]])   # EN = 7, NE = 5 -> z* = 5
    C_pred = np.array([[0.0, 9.0, 9.0, 0.0]])   # EN = 0, NE = 18 -> takes EN
    assert_array_equal(spo_loss(C_true, C_pred, problem=sp), [2.0])   # 7 - 5
    assert normalized_spo_loss(C_true, C_pred, problem=sp) == pytest.approx(2 / 5, rel=1e-15)


def test_max_sense_sign():
    # Rewards: the best road gives 3, the prediction picks the one giving 2.
    roads = FiniteDecisions(np.eye(2), sense="max")
    C_true = np.array([[3.0, 2.0], [0.25, 1.0]])
    C_pred = np.array([[1.0, 2.0], [0.5, 0.75]])
    # row 0: predicted road 2 (2 > 1) earns 2; best earns 3      -> 3 - 2 = 1
    # row 1: predicted road 2 (0.75 > 0.5) earns 1, the best      -> 0
    loss = spo_loss(C_true, C_pred, problem=roads)
    assert_array_equal(loss, [1.0, 0.0])
    assert normalized_spo_loss(C_true, C_pred, problem=roads) == pytest.approx(1 / 4, rel=1e-15)
    # Taking the same decisions in a "min" problem would be charged the
    # opposite way: row 1 picks road 1 (0.5 < 0.75) costing 0.25 = optimum.
    assert_array_equal(spo_loss(C_true, C_pred, problem=ROADS), [1.0, 0.0])


def test_sample_weight_multiplies():
    rng = np.random.default_rng(0)
    sp = ShortestPath((3, 3))
    C_true = rng.uniform(0, 1, size=(50, sp.n_costs))
    C_pred = rng.uniform(0, 1, size=(50, sp.n_costs))
    w = rng.uniform(0, 3, size=50)
    w[:5] = 0.0
    base = spo_loss(C_true, C_pred, problem=sp)
    assert_array_equal(spo_loss(C_true, C_pred, problem=sp, sample_weight=w), w * base)
    assert_array_equal(spo_loss(C_true, C_pred, problem=sp, sample_weight=2.0), 2.0 * base)
    # All-zero weights are allowed for the per-sample loss.
    assert_array_equal(spo_loss(C_true, C_pred, problem=sp, sample_weight=np.zeros(50)),
                       np.zeros(50))


# ------------------------------------------------------------------ ties
def test_ties_first_vs_worst_two_roads():
    # Both roads predicted equally fast. "first" takes road 1 (listed first),
    # which is truly the cheaper: loss 0. "worst" charges road 2: 5 - 2 = 3.
    C_pred = np.array([[1.0, 1.0]])
    C_true = np.array([[2.0, 5.0]])
    assert_array_equal(spo_loss(C_true, C_pred, problem=ROADS, ties="first"), [0.0])
    assert_array_equal(spo_loss(C_true, C_pred, problem=ROADS, ties="worst"), [3.0])
    # Reversed truth: road 1 is the costlier, both rules charge it.
    C_true = np.array([[5.0, 2.0]])
    assert_array_equal(spo_loss(C_true, C_pred, problem=ROADS, ties="first"), [3.0])
    assert_array_equal(spo_loss(C_true, C_pred, problem=ROADS, ties="worst"), [3.0])
    # Max sense: road 1 earns 5 (first, optimal); worst is road 2 earning 2.
    roads_max = FiniteDecisions(np.eye(2), sense="max")
    assert_array_equal(spo_loss(C_true, C_pred, problem=roads_max, ties="first"), [0.0])
    assert_array_equal(spo_loss(C_true, C_pred, problem=roads_max, ties="worst"), [3.0])
    # The normalized loss forwards the choice: 3 / z* = 3 / 2.
    assert normalized_spo_loss([[2.0, 5.0]], C_pred, problem=ROADS,
                               ties="worst") == pytest.approx(1.5, rel=1e-15)


def test_ties_worst_on_shortest_path_all_equal_prediction():
    # An all-equal prediction ties every path, so "worst" charges the
    # longest path under the true costs: max over paths minus min.
    sp = ShortestPath((3, 3))
    rng = np.random.default_rng(1)
    C_true = rng.uniform(0, 1, size=(20, sp.n_costs))
    C_pred = np.ones_like(C_true)
    G = C_true @ sp.vertices().T
    assert_allclose(spo_loss(C_true, C_pred, problem=sp, ties="worst"),
                    G.max(axis=1) - G.min(axis=1), rtol=1e-12)
    first = spo_loss(C_true, C_pred, problem=sp, ties="first")
    W_first, _ = sp.solve(C_pred)
    assert_allclose(first, sp.value(C_true, W_first) - G.min(axis=1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scale", [1e-12, 1e-9, 1.0, 1e9])
def test_ties_worst_does_not_depend_on_the_scale_of_the_predictions(scale):
    # Ties are exact ties up to rounding at any scale: predictions of 1e-9
    # are not all "tied" (they were, by an absolute tolerance of 1e-9).
    rng = np.random.default_rng(3)
    sp = ShortestPath((3, 3))
    C_true = rng.uniform(0, 1, size=(30, sp.n_costs))
    C_pred = rng.uniform(0, 1, size=(30, sp.n_costs))
    C_pred[:5] = 1.0  # every path tied
    expected = brute_regret(C_true, C_pred, sp.vertices(), "min", ties="worst")
    got = spo_loss(C_true, scale * C_pred, problem=sp, ties="worst")
    assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert_array_equal(spo_loss([[1.0, 2.0]], [[scale, 2 * scale]], problem=ROADS,
                                ties="worst"), [0.0])
    assert_array_equal(spo_loss([[1.0, 2.0]], [[scale, scale]], problem=ROADS,
                                ties="worst"), [1.0])


def test_ties_worst_counts_rounding_level_ties_row_by_row():
    # 0.1 + 0.2 is 0.30000000000000004 in floats, 0.3 in exact arithmetic:
    # the two roads tie up to rounding, and "worst" charges road 1 (true
    # cost 5 against the optimum 1): regret 4, by hand.
    assert_array_equal(spo_loss([[5.0, 1.0]], [[0.1 + 0.2, 0.3]], problem=ROADS,
                                ties="worst"), [4.0])
    # The tolerance is relative to each row's own magnitude: a row of
    # predictions of 1e6 beside it does not tie road 1 (1.0) with road 2
    # (1.00001), so the predicted best road 1 is charged, truly optimal: 0.
    C_pred = np.array([[1e6, 1e6], [1.0, 1.00001]])
    C_true = np.array([[2.0, 7.0], [1.0, 5.0]])
    assert_array_equal(spo_loss(C_true, C_pred, problem=ROADS, ties="worst"), [5.0, 0.0])


def test_ties_worst_needs_vertices():
    p = CallableProblem(lambda c: np.eye(2)[np.argmin(c)], n_costs=2)
    with pytest.raises(ValueError, match="ties='worst' needs a problem with a vertex list "
                                         r"\(vertices\(\)\); CallableProblem has none"):
        spo_loss(np.ones((1, 2)), np.ones((1, 2)), problem=p, ties="worst")
    # The default still works through the oracle.
    assert_array_equal(spo_loss([[2.0, 5.0]], [[1.0, 1.0]], problem=p), [0.0])


def test_unknown_ties_rejected():
    with pytest.raises(ValueError, match="ties must be 'first' or 'worst'; got 'best'"):
        spo_loss(np.ones((1, 2)), np.ones((1, 2)), problem=ROADS, ties="best")


# -------------------------------------------------------- property tests
finite = st.floats(-50.0, 50.0, allow_nan=False, allow_infinity=False, allow_subnormal=False)


@st.composite
def problem_and_pair(draw):
    sense = draw(st.sampled_from(["min", "max"]))
    if draw(st.booleans()):
        p = ShortestPath(draw(st.sampled_from([(1, 3), (2, 2), (2, 3), (3, 3)])), sense=sense)
    else:
        k, d = draw(st.integers(1, 5)), draw(st.integers(1, 4))
        p = FiniteDecisions(draw(arrays(np.float64, (k, d), elements=finite)), sense=sense)
    m = draw(st.integers(1, 6))
    C_true = draw(arrays(np.float64, (m, p.n_costs), elements=finite))
    C_pred = draw(arrays(np.float64, (m, p.n_costs), elements=finite))
    return p, C_true, C_pred


def _scale(p, C):
    return 1.0 + float((np.abs(C) @ np.abs(p.vertices()).T).max())


@settings(max_examples=100, deadline=None)
@given(problem_and_pair())
def test_spo_loss_non_negative_and_matches_brute_force(pcc):
    p, C_true, C_pred = pcc
    tol = 1e-12 * _scale(p, C_true)
    first = spo_loss(C_true, C_pred, problem=p)
    worst = spo_loss(C_true, C_pred, problem=p, ties="worst")
    assert first.shape == worst.shape == (len(C_true),)
    assert (worst >= first - tol).all()
    V = p.vertices()
    G_true = C_true @ V.T
    G_pred = p.sign * (C_pred @ V.T)
    regret = p.sign * (G_true - (G_true.min(axis=1, keepdims=True) if p.sense == "min"
                                 else G_true.max(axis=1, keepdims=True)))
    # "first" charges the oracle's decision for C_pred.
    W_pred, _ = p.solve(C_pred)
    expected_first = p.sign * (p.value(C_true, W_pred) - (G_true.min(axis=1) if p.sense == "min"
                                                         else G_true.max(axis=1)))
    # The regret computed here is not clipped: a feasible decision's is >= 0
    # up to rounding, so the library's may differ from it by rounding only.
    assert_allclose(first, expected_first, rtol=0, atol=tol)
    # "worst" is at least the worst regret over exactly tied C_pred optima
    # (enumerated here), and at most the worst regret over near-optimal ones
    # (the library may treat rounding-level differences as ties).
    exact_worst = brute_regret(C_true, C_pred, V, p.sense, ties="worst")
    assert (worst >= exact_worst - tol).all()
    near = G_pred <= G_pred.min(axis=1, keepdims=True) + 1e-6 * _scale(p, C_pred)
    assert (worst <= np.where(near, regret, -np.inf).max(axis=1) + tol).all()


@settings(max_examples=100, deadline=None)
@given(problem_and_pair())
def test_spo_loss_zero_when_prediction_is_truth(pcc):
    p, C_true, _ = pcc
    loss = spo_loss(C_true, C_true.copy(), problem=p)
    # The decision charged is the oracle's for C_true itself, and z* is its
    # value: the regret is exactly zero, in both senses.
    assert_array_equal(loss, np.zeros(len(C_true)))


@pytest.mark.parametrize("problem", [ShortestPath((4, 4)),
                                     FiniteDecisions(np.random.default_rng(0).normal(size=(30, 24)))],
                         ids=repr)
def test_spo_loss_exactly_zero_when_prediction_is_truth(problem):
    C = np.random.default_rng(0).uniform(0.0, 1.0, size=(1000, 24))
    assert_array_equal(spo_loss(C, C, problem=problem), np.zeros(1000))
    assert normalized_spo_loss(C, C, problem=problem) == 0.0


# ---------------------------------------------------- normalized loss
@pytest.mark.parametrize("sense", ["min", "max"])
def test_normalized_equals_independent_formula(sense):
    rng = np.random.default_rng(2)
    V = rng.normal(size=(6, 4))
    p = FiniteDecisions(V, sense=sense)
    C_true = rng.normal(size=(80, 4))      # mixed signs: |z| matters
    C_pred = C_true + rng.normal(scale=0.7, size=C_true.shape)
    w = rng.uniform(0.0, 2.0, size=80)
    l = brute_regret(C_true, C_pred, V, sense)
    vals = C_true @ V.T
    z = vals.min(axis=1) if sense == "min" else vals.max(axis=1)
    assert (z < 0).any() and (z > 0).any()
    expected = np.sum(w * l) / np.sum(w * np.abs(z))
    got = normalized_spo_loss(C_true, C_pred, problem=p, sample_weight=w)
    assert isinstance(got, float)
    assert got == pytest.approx(expected, rel=1e-12)
    unweighted = np.sum(l) / np.sum(np.abs(z))
    assert normalized_spo_loss(C_true, C_pred, problem=p) == pytest.approx(unweighted, rel=1e-12)


@pytest.mark.parametrize("scaled", ["weights", "costs"])
def test_normalized_loss_of_weighted_sums_beyond_the_float_range(scaled):
    # Weights or costs times 2^1018 on 80 rows: every row's terms are finite,
    # their weighted sums are not. The sums overflowed to inf and the ratio
    # came out as 0.0 (a perfect score, for every estimator's score() and the
    # forest's oob_score_); a power of two changes neither the regrets'
    # ratio nor, here, any rounding.
    rng = np.random.default_rng(2)
    V = rng.normal(size=(6, 4))
    p = FiniteDecisions(V)
    C_true = rng.normal(size=(80, 4))
    C_pred = C_true + rng.normal(scale=0.7, size=C_true.shape)
    w = rng.uniform(0.5, 2.0, size=80)
    z = (C_true @ V.T).min(axis=1)
    expected = np.sum(w * brute_regret(C_true, C_pred, V, "min")) / np.sum(w * np.abs(z))
    big = 2.0 ** 1018
    if scaled == "weights":
        w = w * big
    else:
        C_true, C_pred = C_true * big, C_pred * big
    wz = w * np.abs((C_true @ V.T).min(axis=1))
    with np.errstate(over="ignore"):
        assert np.isfinite(wz).all() and np.isinf(np.sum(wz))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way either
        got = normalized_spo_loss(C_true, C_pred, problem=p, sample_weight=w)
    assert got == pytest.approx(expected, rel=1e-12)


def test_normalized_loss_of_costs_and_weights_from_two_to_the_1023():
    # From 2^1023 (8.99e307) on, the power of two that scales the sums was
    # 2^1024, which is inf: every optimal value divided by it was 0, and the
    # loss raised "the optimal values z*(C_true) are all zero"; a weight from
    # 2^1023 on made every weight 0 alike. By hand: row 0 pays 0.5e308 over
    # its optimum 1e308, the other rows pay nothing.
    from fractions import Fraction as F

    C_true = np.array([[1.0, 1.5], [1.5, 1.0], [1.0, 1.2]]) * 1e308
    C_pred = np.array([[1.5, 1.0], [1.5, 1.0], [1.0, 1.2]]) * 1e308
    w = [1e308, 1.7e308, 1.0]
    z = [F(1e308), F(1e308), F(1e308)]
    expected = F(1.5e308) - F(1e308)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way either
        assert normalized_spo_loss(C_true, C_pred, problem=ROADS) == pytest.approx(
            float(expected / sum(z)), rel=1e-12)
        got = normalized_spo_loss(C_true, C_pred, problem=ROADS, sample_weight=w)
    assert got == pytest.approx(float(F(w[0]) * expected / sum(F(a) * b for a, b in zip(w, z))),
                                rel=1e-12)


def test_normalized_all_zero_optimum_raises():
    with pytest.raises(ValueError, match="optimal values z\\*\\(C_true\\) are all zero"):
        normalized_spo_loss(np.zeros((3, 2)), np.ones((3, 2)), problem=ROADS)
    # Zero weight on every non-zero optimum also leaves nothing to divide by.
    with pytest.raises(ValueError, match="all zero"):
        normalized_spo_loss([[0.0, 0.0], [1.0, 2.0]], [[1.0, 0.0], [1.0, 2.0]],
                            problem=ROADS, sample_weight=[1.0, 0.0])


def test_all_zero_optima_message_says_to_check_the_sense():
    """A knapsack's positive values minimized: taking nothing is optimal (value 0)
    on every row. The error said only to use spo_loss, not why the optima were 0."""
    from spotree import SPOTree
    from spotree.problems import Knapsack

    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(12, 2)), rng.uniform(1, 2, (12, 3))
    knap = Knapsack([[1.0, 1.0, 1.0]], [2.0], sense="min")
    # Independently: the empty knapsack is the cheapest of the 7 feasible picks.
    picks = np.array([w for w in np.ndindex(2, 2, 2) if sum(w) <= 2], dtype=float)
    assert_array_equal((C @ picks.T).min(axis=1), 0.0)
    tree = SPOTree(knap, max_depth=1).fit(X, C)
    for call in (lambda: normalized_spo_loss(C, C, problem=knap),
                 lambda: normalized_decision_loss(C, np.zeros_like(C), problem=knap),
                 lambda: tree.score(X, C)):
        with pytest.raises(ValueError, match=r"all zero.*use spo_loss instead\. Check the "
                                             r"problem's sense \(this Knapsack has "
                                             r"sense='min'\)"):
            call()


def test_normalized_rejects_empty_and_zero_weights():
    with pytest.raises(ValueError, match="C_true is empty"):
        normalized_spo_loss(np.empty((0, 2)), np.empty((0, 2)), problem=ROADS)
    # (Not "the optimal values are all zero": there are none.)
    with pytest.raises(ValueError, match="C_true is empty"):
        normalized_decision_loss(np.empty((0, 2)), np.empty((0, 2)), problem=ROADS)
    with pytest.raises(ValueError, match="sample_weight sums to zero"):
        normalized_spo_loss(np.ones((2, 2)), np.ones((2, 2)), problem=ROADS,
                            sample_weight=[0.0, 0.0])


def test_empty_spo_loss():
    assert spo_loss(np.empty((0, 2)), np.empty((0, 2)), problem=ROADS).shape == (0,)


# --------------------------------------------------------------- errors
@pytest.mark.parametrize("fn", [spo_loss, normalized_spo_loss])
def test_shape_errors(fn):
    with pytest.raises(ValueError, match="C_true and C_pred must have the same number of rows; "
                                         "got 3 and 2"):
        fn(np.ones((3, 2)), np.ones((2, 2)), problem=ROADS)
    with pytest.raises(ValueError, match="C_pred has 3 columns but the problem has n_costs=2"):
        fn(np.ones((3, 2)), np.ones((3, 3)), problem=ROADS)
    with pytest.raises(ValueError, match="C_true must be a 2-D array"):
        fn(np.ones(2), np.ones((1, 2)), problem=ROADS)
    with pytest.raises(ValueError, match="C_pred contains NaN or infinity"):
        fn(np.ones((1, 2)), [[np.nan, 1.0]], problem=ROADS)
    with pytest.raises(ValueError, match=r"sample_weight must have shape \(3,\)"):
        fn(np.ones((3, 2)), np.ones((3, 2)), problem=ROADS, sample_weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="sample_weight contains negative values"):
        fn(np.ones((2, 2)), np.ones((2, 2)), problem=ROADS, sample_weight=[1.0, -1.0])


def test_decision_loss_uses_given_optimum():
    C_true = np.array([[3.0, 2.0]])
    assert_array_equal(decision_loss(C_true, np.array([[1.0, 0.0]]), problem=ROADS), [1.0])
    assert_array_equal(decision_loss(C_true, np.array([[1.0, 0.0]]), problem=ROADS,
                                     z_true=np.array([2.5])), [0.5])


# ------------------------------------------------ negative regrets
@pytest.mark.parametrize("scale", [1e-300, 1e-13, 1.0, 1e13, 1e290])
@pytest.mark.parametrize("sense", ["min", "max"])
def test_decision_loss_treats_rounding_level_negatives_as_zero(scale, sense):
    # Hand-worked: c = (3, 2), w = road 2, c^T w = 2; |c|.|w| + |z| = 2 + 2 = 4,
    # so the tolerance is 4e-6 (times the scale). An optimum claimed 1e-7
    # better than c^T w is rounding: regret exactly 0 (not 1e-7, not -1e-7).
    roads = FiniteDecisions(np.eye(2), sense=sense)
    sign = 1.0 if sense == "min" else -1.0
    C = np.array([[3.0, 2.0]]) * scale
    W = np.array([[0.0, 1.0]])
    z = np.array([2.0 + sign * 1e-7]) * scale
    out = decision_loss(C, W, problem=roads, z_true=z)
    assert out[0] == 0.0
    # 3.9e-6 still is; 4.1e-6 (and anything larger) is not.
    decision_loss(C, W, problem=roads, z_true=np.array([2.0 + sign * 3.9e-6]) * scale)
    for excess in (4.1e-6, 1e-3, 2.0):
        with pytest.raises(ValueError, match=rf"The decision in row 0 of W_pred is better than "
                                             rf"the optimum of C_true\[0\] for this '{sense}' "
                                             r"problem"):
            decision_loss(C, W, problem=roads, z_true=np.array([2.0 + sign * excess]) * scale)
    # A genuine regret is returned as it is, at every scale.
    got = decision_loss(C, W, problem=roads, z_true=np.array([2.0 - sign * 0.5]) * scale)
    assert got[0] == pytest.approx(0.5 * scale, rel=1e-15)


def test_decision_loss_refuses_infeasible_decisions():
    sp = ShortestPath((3, 3))
    C = np.random.default_rng(3).uniform(0.5, 1.5, size=(4, sp.n_costs))
    W, _ = sp.solve(C)
    W[2] = 0.0   # no path at all: costs nothing
    with pytest.raises(ValueError, match=r"row 2 of W_pred is better than the optimum of "
                                         r"C_true\[2\] for this 'min' problem.*not feasible "
                                         r"for ShortestPath"):
        decision_loss(C, W, problem=sp)
    # Max sense: twice a vertex earns more than any vertex.
    V = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    fd = FiniteDecisions(V, sense="max")
    with pytest.raises(ValueError, match=r"row 1 of W_pred is better than the optimum .* "
                                         r"'max' problem"):
        decision_loss([[1.0, 2.0], [1.0, 2.0]], [[0.0, 1.0], [0.0, 2.0]], problem=fd)
    # The scorers go through the same check.
    with pytest.raises(ValueError, match="better than the optimum"):
        normalized_decision_loss(C, W, problem=sp)


def test_decision_loss_checks_its_inputs():
    with pytest.raises(ValueError, match="W_pred has 3 columns but the problem has n_costs=2"):
        decision_loss([[1.0, 2.0]], [[1.0, 0.0, 0.0]], problem=ROADS)
    with pytest.raises(ValueError, match="C_true and W_pred must have the same number of rows"):
        decision_loss([[1.0, 2.0]], [[1.0, 0.0], [0.0, 1.0]], problem=ROADS)
    with pytest.raises(ValueError, match=r"z_true must be a finite array of shape \(1,\)"):
        decision_loss([[1.0, 2.0]], [[1.0, 0.0]], problem=ROADS, z_true=[np.nan])
    # Not numbers: numpy's "could not convert string to float: 'a'" named no argument.
    for bad in (["a"], [{"z": 1.0}]):
        with pytest.raises(ValueError, match=r"z_true must be a finite array of shape \(1,\) "
                                             r"of numbers; got values that are not numbers"):
            decision_loss([[1.0, 2.0]], [[1.0, 0.0]], problem=ROADS, z_true=bad)
    # Complex values and durations: numpy cast them to float (the real part with only a
    # ComplexWarning; a count of seconds silently), and the regret came out as 0.
    for bad in (np.array([1 + 5j]), np.array([1], dtype="m8[s]")):
        with pytest.raises(ValueError, match=r"z_true must be a finite array of shape \(1,\) "
                                             r"of numbers; got values that are not numbers"):
            decision_loss([[1.0, 2.0]], [[1.0, 0.0]], problem=ROADS, z_true=bad)


int_costs = st.integers(-20, 20).map(float)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["min", "max"]), st.integers(1, 5), st.integers(1, 4), st.data())
def test_decision_loss_equals_brute_force_exactly(sense, k, d, data):
    """Small integers make every product and sum exact: the loss must equal the
    regret enumerated here, for any vertex taken as the decision."""
    V = np.array(data.draw(st.lists(st.lists(int_costs, min_size=d, max_size=d),
                                    min_size=k, max_size=k)))
    C = np.array(data.draw(st.lists(st.lists(int_costs, min_size=d, max_size=d),
                                    min_size=1, max_size=6)))
    picks = data.draw(st.lists(st.integers(0, k - 1), min_size=len(C), max_size=len(C)))
    p = FiniteDecisions(V, sense=sense)
    expected = []
    for c, j in zip(C, picks):
        vals = [sum(ci * vi for ci, vi in zip(c, v)) for v in V]
        best = min(vals) if sense == "min" else max(vals)
        expected.append(vals[j] - best if sense == "min" else best - vals[j])
    assert_array_equal(decision_loss(C, V[picks], problem=p), expected)


# ---------------------------------------------------------------- scorer
def _reference_normalized(problem, C_true, C_pred):
    V = problem.vertices()
    G_true = C_true @ V.T
    chosen = np.argmin(C_pred @ V.T, axis=1)
    z = G_true.min(axis=1)
    regret = G_true[np.arange(len(C_true)), chosen] - z
    return regret.sum() / np.abs(z).sum()


@pytest.mark.parametrize("estimator, grid", [
    (KNeighborsRegressor(), {"n_neighbors": [1, 5, 20]}),
    (DecisionTreeRegressor(random_state=0), {"max_depth": [1, 3]}),
])
def test_spo_scorer_in_grid_search(estimator, grid):
    sp = ShortestPath((4, 4))
    X, C = make_shortest_path(150, degree=4, noise=0.25, random_state=0)
    scorer = make_spo_scorer(sp)
    cv = KFold(3)
    search = GridSearchCV(estimator, grid, scoring=scorer, cv=cv).fit(X, C)
    # Recompute every cross-validated score without the library's metrics.
    means = []
    for i, params in enumerate(search.cv_results_["params"]):
        scores = []
        for train, test in cv.split(X):
            est = clone(estimator).set_params(**params).fit(X[train], C[train])
            scores.append(-_reference_normalized(sp, C[test], est.predict(X[test])))
        means.append(np.mean(scores))
        assert search.cv_results_["mean_test_score"][i] == pytest.approx(means[-1],
                                                                          rel=1e-10)
    assert search.best_score_ == pytest.approx(max(means), rel=1e-10)
    assert search.best_params_ == search.cv_results_["params"][int(np.argmax(means))]
    # Called directly, the scorer is minus the normalized loss.
    best = search.best_estimator_
    assert scorer(best, X, C) == pytest.approx(
        -normalized_spo_loss(C, best.predict(X), problem=sp), rel=1e-15)
    # Parallel searches ship the scorer (and its problem) to workers.
    assert pickle.loads(pickle.dumps(scorer))(best, X, C) == scorer(best, X, C)


def test_spo_scorer_forwards_sample_weight_and_ties():
    roads = FiniteDecisions(np.eye(2))
    X = np.array([[0.0], [1.0], [2.0]])
    C = np.array([[2.0, 5.0], [3.0, 1.0], [1.0, 4.0]])

    class Constant(BaseEstimator):
        """Predicts the same tied costs for every row."""

        def predict(self, X):
            return np.ones((len(X), 2))

    # Tied prediction: "first" takes road 1 everywhere, loss (0 + 2 + 0) / (2 + 1 + 1).
    assert make_spo_scorer(roads)(Constant(), X, C) == pytest.approx(-2 / 4)
    # "worst" charges road 2 on rows 0 and 2: (3 + 2 + 3) / 4.
    assert make_spo_scorer(roads, ties="worst")(Constant(), X, C) == pytest.approx(-8 / 4)
    # Weights (1, 0, 1): (0 + 0) / (2 + 1) for "first".
    assert make_spo_scorer(roads)(Constant(), X, C, sample_weight=[1.0, 0.0, 1.0]) == 0.0


# ------------------------------------------------------------ SPO+ loss
SP33 = ShortestPath((3, 3))


def _brute_spo_plus(V, sense, C, C_hat):
    """SPO+ from its definition, by enumerating the decisions V (min sense inside)."""
    sgn = 1.0 if sense == "min" else -1.0
    Cm, Hm = sgn * C, sgn * C_hat
    out = []
    for c, h in zip(Cm, Hm):
        w_true = V[np.argmin(V @ c)]
        z = c @ w_true
        out.append(np.max(V @ (c - 2 * h)) + 2 * h @ w_true - z)
    return np.array(out)


PROBLEMS = {
    "finite_min": (FiniteDecisions(np.random.default_rng(0).uniform(-1, 1, (6, 4))), None),
    "finite_max": (FiniteDecisions(np.random.default_rng(1).uniform(-1, 1, (5, 4)),
                                   sense="max"), None),
    "shortest_path": (SP33, None),
}


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_spo_plus_loss_matches_definition(name):
    problem, _ = PROBLEMS[name]
    rng = np.random.default_rng(2)
    C = rng.uniform(0, 2, (50, problem.n_costs))
    C_hat = rng.uniform(-1, 2, (50, problem.n_costs))
    V = problem.vertices()
    expected = _brute_spo_plus(V, problem.sense, C, C_hat)
    assert_allclose(spo_plus_loss(C, C_hat, problem=problem), expected, atol=1e-12)
    sw = rng.uniform(0, 3, 50)
    assert_allclose(spo_plus_loss(C, C_hat, problem=problem, sample_weight=sw),
                    sw * expected, atol=1e-12)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_spo_plus_subgradient_is_the_finite_difference_gradient(name):
    problem, _ = PROBLEMS[name]
    rng = np.random.default_rng(3)
    C = rng.uniform(0, 2, (20, problem.n_costs))
    C_hat = rng.uniform(-1, 2, (20, problem.n_costs))
    V = problem.vertices()
    G = spo_plus_subgradient(C, C_hat, problem=problem)
    h = 1e-6
    checked = 0
    for i in range(C.shape[0]):
        # Differentiable where the maximizer of (c - 2 c_hat)^T v is unique
        # with a margin wider than the finite-difference step.
        sgn = 1.0 if problem.sense == "min" else -1.0
        vals = np.sort(V @ (sgn * (C[i] - 2 * C_hat[i])))
        if vals[-1] - vals[-2] < 1e-3:
            continue
        fd = np.empty(problem.n_costs)
        for j in range(problem.n_costs):
            e = np.zeros(problem.n_costs)
            e[j] = h
            up = _brute_spo_plus(V, problem.sense, C[i:i + 1], C_hat[i:i + 1] + e)[0]
            dn = _brute_spo_plus(V, problem.sense, C[i:i + 1], C_hat[i:i + 1] - e)[0]
            fd[j] = (up - dn) / (2 * h)
        assert_allclose(G[i], fd, atol=1e-6)
        checked += 1
    assert checked >= 10


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.01, 10.0))
def test_spo_plus_bounds_spo_loss(seed, scale):
    rng = np.random.default_rng(seed)
    C = rng.uniform(0, 1, (10, SP33.n_costs))
    C_hat = scale * rng.normal(size=(10, SP33.n_costs))
    plus = spo_plus_loss(C, C_hat, problem=SP33)
    assert (plus >= spo_loss(C, C_hat, problem=SP33) - 1e-12).all()
    # Exact predictions lose nothing.
    assert_allclose(spo_plus_loss(C, C, problem=SP33), 0.0, atol=1e-12)


def test_spo_plus_bad_input():
    with pytest.raises(ValueError, match="C_pred has 3 columns"):
        spo_plus_loss(np.ones((2, 12)), np.ones((2, 3)), problem=SP33)
    with pytest.raises(ValueError, match="same number of rows"):
        spo_plus_loss(np.ones((2, 12)), np.ones((3, 12)), problem=SP33)
    with pytest.raises(TypeError, match="DecisionProblem"):
        spo_plus_subgradient(np.ones((2, 12)), np.ones((2, 12)), problem="sp")


def test_spo_plus_loss_and_subgradient_by_hand_on_two_roads():
    # c = (1, 3), c_hat = (2, 1): w*(c) = road 0; 2 c_hat - c = (3, -1) is
    # cheapest at road 1, so l = (3, -1).((1, 0) - (0, 1)) = 4, g = 2 ((1, 0) - (0, 1)).
    assert_array_equal(spo_plus_loss([[1.0, 3.0]], [[2.0, 1.0]], problem=ROADS), [4.0])
    assert_array_equal(spo_plus_subgradient([[1.0, 3.0]], [[2.0, 1.0]], problem=ROADS),
                       [[2.0, -2.0]])
    # Given W_true is used as w*(c) (one oracle call saved), not recomputed.
    assert_array_equal(spo_plus_loss([[1.0, 3.0]], [[2.0, 1.0]], problem=ROADS,
                                     W_true=[[0.0, 1.0]]), [0.0])


def test_spo_plus_loss_of_an_exact_tie_is_zero_not_a_rounding_negative():
    # Under 2 c_hat - c = (0.3, 0.3, 0.2) the decisions (0, 0.1, 0.3) and
    # (0, 0.3, 0) of w*(c) both cost 0.09 exactly, so the loss is 0 by hand;
    # in floats (2 c_hat - c)^T (w*(c) - w2) came out as -6.9e-18, and the
    # documented "always >= 0" must hold.
    p = FiniteDecisions([[0.0, 0.1, 0.3], [0.0, 0.3, 0.0], [0.0, 0.7, 0.1],
                         [0.7, 0.0, 0.1]])
    loss = spo_plus_loss([[0.3, 0.3, 0.3]], [[0.3, 0.3, 0.25]], problem=p)
    assert_array_equal(loss, [0.0])


def test_spo_plus_keeps_its_old_home():
    import spotree.linear_model as lm
    import spotree.metrics as metrics

    assert lm.spo_plus_loss is metrics.spo_plus_loss
    assert lm.spo_plus_subgradient is metrics.spo_plus_subgradient


def test_decision_loss_takes_problem_by_keyword_and_the_old_positional_call_warns():
    C = np.array([[3.0, 2.0], [1.0, 5.0]])
    W = np.array([[1.0, 0.0], [1.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_array_equal(decision_loss(C, W, problem=ROADS), [1.0, 0.0])
    with pytest.warns(FutureWarning, match=r"decision_loss\(C_true, W_pred, problem=problem\)"):
        assert_array_equal(decision_loss(C, W, ROADS), [1.0, 0.0])
    # z_true by position too: it is used, as before (optimum 2.5 and 0.5 given).
    with pytest.warns(FutureWarning):
        assert_array_equal(decision_loss(C, W, ROADS, np.array([2.5, 0.5])), [0.5, 0.5])
    with pytest.raises(TypeError, match="needs the keyword argument problem"):
        decision_loss(C, W)
    with pytest.raises(TypeError, match="problem, z_true by keyword"):
        decision_loss(C, W, ROADS, problem=ROADS)


def test_spo_scorer_checks_its_arguments_when_made():
    # They were checked only when scoring, where a grid search turns the
    # error into NaN scores and warnings.
    with pytest.raises(TypeError, match="problem must be a spotree DecisionProblem"):
        make_spo_scorer("shortest path")
    with pytest.raises(TypeError):
        make_spo_scorer(None)
    with pytest.raises(ValueError, match="ties must be 'first' or 'worst'; got 'best'"):
        make_spo_scorer(ROADS, ties="best")
    assert make_spo_scorer(ROADS, ties="worst") is not None


def test_losses_of_a_dataframe_or_fortran_array_equal_the_arrays_bitwise():
    # einsum and the oracle summed a column-major C_true (a DataFrame's
    # to_numpy) in another order: spo_loss, spo_plus_loss and
    # normalized_decision_loss differed in the last bits from the same
    # numbers as a C-ordered array (a scorer on a DataFrame of costs then
    # disagreed with one on the array).
    import pandas as pd

    from spotree import ShortestPath
    from spotree.metrics import (normalized_decision_loss, normalized_spo_loss, spo_loss,
                                 spo_plus_loss)

    problem = ShortestPath(grid=(3, 3))
    rng = np.random.default_rng(0)
    C = rng.uniform(0.5, 3.0, size=(300, problem.n_costs)) * rng.uniform(0.5, 3.0, (300, 1))
    P = C + rng.normal(scale=0.8, size=C.shape)
    W = problem.solve(P)[0]
    sw = np.linspace(0.1, 2, 300)
    for f in (spo_loss, normalized_spo_loss, spo_plus_loss):
        reference = f(C, P, problem=problem, sample_weight=sw)
        for c, p in ((np.asfortranarray(C), P), (pd.DataFrame(C), pd.DataFrame(P))):
            assert_array_equal(f(c, p, problem=problem, sample_weight=sw), reference)
    assert (normalized_decision_loss(np.asfortranarray(C), np.asfortranarray(W), problem=problem)
            == normalized_decision_loss(C, W, problem=problem))


# ------------------------------------------------------- compare_decisions
def knapsack_instance(m=40, seed=0):
    """A 4-item knapsack (capacity 5), its feasible subsets, true costs and three predictions."""
    from itertools import product

    from spotree.problems import Knapsack

    weights = np.array([2.0, 3.0, 1.0, 4.0])
    problem = Knapsack([weights], [5.0])
    subsets = np.array([v for v in product([0.0, 1.0], repeat=4) if weights @ v <= 5.0])
    rng = np.random.default_rng(seed)
    C = rng.uniform(1.0, 3.0, size=(m, 4))
    preds = {name: C + rng.normal(scale=s, size=C.shape)
             for name, s in (("good", 0.3), ("noisy", 1.0), ("bad", 3.0))}
    return problem, subsets, C, preds


def enumerated_regrets(C, C_pred, subsets):
    """Each row's regret in a maximization over the listed subsets (brute force)."""
    chosen = subsets[np.argmax(C_pred @ subsets.T, axis=1)]
    z = (C @ subsets.T).max(axis=1)
    return z - np.einsum("ij,ij->i", C, chosen), z


def test_compare_decisions_matches_enumeration_and_the_delta_method():
    from spotree.metrics import compare_decisions

    problem, subsets, C, preds = knapsack_instance()
    res = compare_decisions(preds, None, C, problem=problem)
    r = {k: enumerated_regrets(C, P, subsets)[0] for k, P in preds.items()}
    z = enumerated_regrets(C, C, subsets)[1]
    n = len(z)
    assert res.names == ["good", "noisy", "bad"] and res.reference == "good"
    assert_allclose(res.optimal_values, z, rtol=1e-12)
    assert_allclose(res.regrets, np.stack(list(r.values())), atol=1e-12)
    assert_allclose(res.normalized_spo_loss, [r[k].sum() / z.sum() for k in r], rtol=1e-12)
    for i, k in enumerate(r):
        d = r[k] - r["good"]
        ratio = d.mean() / z.mean()
        # The delta method's variance of a ratio of means, from the sample
        # covariance matrix (ddof=1) of (d, z).
        S = np.cov(d, z)
        se = np.sqrt((S[0, 0] - 2 * ratio * S[0, 1] + ratio ** 2 * S[1, 1]) / n) / z.mean()
        assert res.difference[i] == pytest.approx(ratio, rel=1e-12, abs=1e-15)
        assert res.standard_error[i] == pytest.approx(se, rel=1e-10, abs=1e-15)
        assert res.n_better[i] == np.sum(d < 0) and res.n_worse[i] == np.sum(d > 0)
    assert res.n_better[1] + res.n_better[2] > 0 and res.n_worse[2] > 0
    assert res.standard_error[0] == 0 and res.difference[0] == 0


def test_compare_decisions_with_the_mean_of_equal_optima_is_the_standard_error_of_a_mean():
    from scipy import stats

    from spotree.metrics import compare_decisions

    # One road costs 1 on every row: z* = 1 everywhere, and the normalized
    # difference is the mean paired difference, its error scipy's sem.
    rng = np.random.default_rng(1)
    C = np.column_stack([np.ones(25), rng.uniform(1.1, 3.0, 25)])
    a, b = rng.normal(size=(2, 25, 2))
    d = brute_regret(C, b, np.eye(2), "min") - brute_regret(C, a, np.eye(2), "min")
    # Equal weights of any size (normalized ones included): the same value.
    for w in (None, np.full(25, 1 / 25), np.full(25, 7.0)):
        res = compare_decisions({"a": a, "b": b}, None, C, problem=ROADS, sample_weight=w)
        assert res.difference[1] == pytest.approx(d.mean(), rel=1e-12)
        assert res.standard_error[1] == pytest.approx(stats.sem(d), rel=1e-12)


def test_compare_decisions_of_estimators_pipelines_and_spotree_models():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from spotree import SPOTree
    from spotree.metrics import compare_decisions

    problem, subsets, C, _ = knapsack_instance(60, seed=2)
    X = C[:, :2] + np.random.default_rng(3).normal(scale=0.2, size=(60, 2))
    knn = KNeighborsRegressor(5).fit(X[:30], C[:30])
    piped = make_pipeline(StandardScaler(), KNeighborsRegressor(3)).fit(X[:30], C[:30])
    tree = make_pipeline(StandardScaler(), SPOTree(problem, max_depth=1)).fit(X[:30], C[:30])
    res = compare_decisions({"knn": knn, "piped": piped, "tree": tree}, X[30:], C[30:])
    r_knn, z = enumerated_regrets(C[30:], knn.predict(X[30:]), subsets)
    r_piped, _ = enumerated_regrets(C[30:], piped.predict(X[30:]), subsets)
    assert_allclose(res.normalized_spo_loss[:2],
                    [r_knn.sum() / z.sum(), r_piped.sum() / z.sum()], rtol=1e-12)
    # A spotree model is charged its own decisions, as its score: the problem
    # came from it, as no problem was passed.
    assert res.normalized_spo_loss[2] == pytest.approx(-tree.score(X[30:], C[30:]), rel=1e-12)
    # Its predictions given as an array instead: the same numbers.
    again = compare_decisions({"knn": knn.predict(X[30:]), "piped": piped}, X[30:], C[30:],
                              problem=problem)
    assert_allclose(again.normalized_spo_loss, res.normalized_spo_loss[:2], rtol=1e-14)


def test_compare_decisions_refuses_a_model_of_the_other_sense():
    # Two trees of the same knapsack, one fitted with sense="min" by mistake:
    # both were scored on the first model's problem, so the outcome changed
    # with the order of the dict (a table, or 'optimal values all zero').
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from spotree import SPOTree
    from spotree.metrics import compare_decisions
    from spotree.problems import Knapsack

    problem, subsets, C, _ = knapsack_instance(40, seed=4)
    X = C[:, :2]
    wrong = Knapsack([[2.0, 3.0, 1.0, 4.0]], [5.0], sense="min")
    best = SPOTree(problem, max_depth=1).fit(X, C)
    worst = make_pipeline(StandardScaler(), SPOTree(wrong, max_depth=1)).fit(X, C)
    # By enumeration: the min-sense tree takes the empty knapsack on every row.
    r_worst, z = enumerated_regrets(C, -C, subsets)
    assert r_worst.sum() / z.sum() == pytest.approx(1.0)
    for models, kw in (({"max": best, "min": worst}, {}),
                       ({"min": worst, "max": best}, {"problem": problem})):
        with pytest.raises(ValueError, match=r"models\['min'\] was fitted on a 'min' problem "
                                             r"\(Knapsack\), but the decisions are scored on "
                                             r"a 'max' one"):
            compare_decisions(models, X, C, **kw)
    with pytest.raises(ValueError, match=r"models\['max'\] was fitted on a 'max' problem"):
        compare_decisions({"min": worst, "max": best}, X, C)
    # Models of the same sense, and arrays of predicted costs, are compared.
    res = compare_decisions({"max": best, "costs": -C}, X, C)
    assert res.normalized_spo_loss[1] == pytest.approx(1.0)


def test_compare_decisions_does_not_depend_on_the_order_of_models_or_rows():
    from spotree.metrics import compare_decisions

    problem, _, C, preds = knapsack_instance()
    res = compare_decisions(preds, None, C, problem=problem, reference="noisy")
    swapped = compare_decisions(dict(reversed(list(preds.items()))), None, C, problem=problem,
                                reference="noisy")
    assert swapped.names == ["bad", "noisy", "good"]
    assert_allclose(swapped.to_frame().loc[res.names].to_numpy(), res.to_frame().to_numpy(),
                    rtol=1e-12)
    perm = np.random.default_rng(4).permutation(len(C))
    shuffled = compare_decisions({k: P[perm] for k, P in preds.items()}, None, C[perm],
                                 problem=problem, reference="noisy")
    assert_allclose(shuffled.to_frame().to_numpy(), res.to_frame().to_numpy(), rtol=1e-12)
    # Against "noisy", "good" is better by as much as "noisy" is worse against "good".
    first = compare_decisions(preds, None, C, problem=problem)
    assert first.difference[1] == pytest.approx(-res.difference[0], rel=1e-12)
    assert first.standard_error[1] == pytest.approx(res.standard_error[0], rel=1e-12)
    assert (first.n_better[1], first.n_worse[1]) == (res.n_worse[0], res.n_better[0])


def test_compare_decisions_weight_two_equals_a_duplicated_row():
    from spotree.metrics import compare_decisions

    problem, _, C, preds = knapsack_instance(30)
    w = np.random.default_rng(5).integers(0, 4, size=30)
    rows = np.repeat(np.arange(30), w)
    weighted = compare_decisions(preds, None, C, problem=problem, sample_weight=w)
    repeated = compare_decisions({k: P[rows] for k, P in preds.items()}, None, C[rows],
                                 problem=problem)
    assert weighted.n_better.dtype.kind == "i"
    # The losses, differences and counts: a duplicated row. Not the standard
    # errors, which take a weighted row as one draw (see the test below).
    cols = ["normalized_spo_loss", "difference", "n_better", "n_worse"]
    assert_allclose(weighted.to_frame()[cols].to_numpy(), repeated.to_frame()[cols].to_numpy(),
                    rtol=1e-10)
    assert weighted.to_dict()["n_worse"] == repeated.to_dict()["n_worse"]
    # Fractional weights: totals of weight, not counts.
    half = compare_decisions(preds, None, C, problem=problem, sample_weight=w + 0.5)
    assert half.n_worse.dtype.kind == "f"
    worse = half.regrets[2] > half.regrets[0]
    assert half.n_worse[2] == pytest.approx(np.sum((w + 0.5)[worse]))


def test_compare_decisions_counts_rows_of_huge_integral_weights_as_floats():
    from spotree.metrics import compare_decisions

    # Weights of 2^70 are whole numbers: the totals were cast to int64, which
    # overflowed (a RuntimeWarning and -9223372036854775808 rows better).
    problem, _, C, preds = knapsack_instance(30)
    w = np.random.default_rng(5).integers(1, 4, size=30).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = compare_decisions(preds, None, C, problem=problem, sample_weight=w * 2.0 ** 70)
    for k in (1, 2):
        worse = big.regrets[k] > big.regrets[0] + 1e-9
        better = big.regrets[k] < big.regrets[0] - 1e-9
        assert big.n_worse[k] == np.sum(w[worse]) * 2.0 ** 70
        assert big.n_better[k] == np.sum(w[better]) * 2.0 ** 70
    assert big.n_worse.dtype.kind == "f" and big.n_worse[1:].sum() > 0


def test_compare_decisions_prints_a_table():
    from spotree.metrics import compare_decisions

    problem, _, C, preds = knapsack_instance()
    res = compare_decisions(preds, None, C, problem=problem)
    lines = str(res).splitlines()
    assert len(lines) == 5 and all(len(x) == len(lines[0]) for x in lines)
    assert "(reference)" in lines[2] and lines[4].startswith("| bad ")
    assert float(lines[4].split("|")[2]) == pytest.approx(res.normalized_spo_loss[2],
                                                         rel=6e-4)
    assert repr(res) == "<DecisionComparison of 3 models on 40 rows, reference 'good'>"
    d = res.to_dict()
    assert list(d) == ["model", "normalized_spo_loss", "difference", "standard_error",
                       "n_better", "n_worse"]
    assert d["model"] == ["good", "noisy", "bad"]


def test_compare_decisions_table_prints_each_column_alike():
    """The table printed 4 significant digits with trailing zeros dropped: '0.0295' above
    '0.02236', '0' above '0.5714', and a count of a million rows as '1e+06'. Each column
    now has one number of decimals, enough for 4 significant digits (2 for the standard
    error) of its smallest nonzero number; counts are integers (expected cells by hand)."""
    from spotree.metrics import DecisionComparison

    loss = np.array([0.0295, 0.02236, 0.0])
    res = DecisionComparison(
        ["a", "b", "c"], "a", loss, loss - loss[0], np.array([0.0, 0.0031, 0.012]),
        np.array([0.0, 1e6, 3.0]), np.array([0.0, 12.0, 1e6]), np.zeros((3, 2)),
        np.ones(2), np.ones(2))
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in
            str(res).splitlines()[2:]]
    assert [r[1] for r in rows] == ["0.02950", "0.02236", "0.00000"]
    assert [r[2] for r in rows[1:]] == ["-0.007140", "-0.029500"]
    assert [r[3] for r in rows[1:]] == ["0.0031", "0.0120"]
    assert [r[4] for r in rows[1:]] == ["1000000", "3"]
    assert [r[5] for r in rows[1:]] == ["12", "1000000"]
    # Magnitudes 7 powers of ten apart: scientific notation, 4 significant digits each.
    res.difference = np.array([0.0, 0.5, 3e-8])
    cells = [line.split("|")[3].strip() for line in str(res).splitlines()[3:]]
    assert cells == ["+5.000e-01", "+3.000e-08"]


def test_compare_decisions_refuses_bad_input_naming_it():
    from spotree.metrics import compare_decisions
    from spotree.problems import Knapsack

    problem, _, C, preds = knapsack_instance(10)
    good = preds["good"]
    cases = [
        ({"a": good, "b": object()}, None, C, {}, TypeError,
         r"models\['b'\] \(object\) has no predict method and is no array"),
        ({"a": good, "b": "good"}, None, C, {}, TypeError, r"models\['b'\] \(str\) has no"),
        ({"a": good, "b": good[:, :3]}, None, C, {}, ValueError,
         r"models\['b'\] \(predicted costs\) has 3 columns"),
        ({"a": good, "b": good[:9]}, None, C, {}, ValueError,
         r"models\['b'\] \(predicted costs\) has 9 rows, but C has 10"),
        ({"a": good, "b": good[:, 0]}, None, C, {}, ValueError,
         r"models\['b'\] \(predicted costs\) must be a 2-D array"),
        ({"a": good, "b": np.where(np.eye(10, 4) > 0, np.nan, good)}, None, C, {}, ValueError,
         r"models\['b'\] \(predicted costs\) contains NaN"),
        ({"a": KNeighborsRegressor(1).fit(C, C)}, C[:9], C, {}, ValueError,
         "X and C must have the same number of rows; got 9 and 10"),
        ({"a": KNeighborsRegressor(1).fit(C, C[:, :3])}, C, C, {}, ValueError,
         r"the predicted costs of models\['a'\] has 3 columns"),
        ({"a": KNeighborsRegressor(1).fit(C, C)}, None, C, {}, ValueError,
         r"X is None, but models\['a'\] \(KNeighborsRegressor\)"),
        ({"a": good}, None, np.where(np.eye(10, 4) > 0, np.nan, C), {}, ValueError,
         "C contains NaN"),
        ({"a": good}, None, C, {"sample_weight": -np.ones(10)}, ValueError,
         "sample_weight contains negative values"),
        ({"a": good}, None, C, {"reference": "b"}, ValueError,
         "reference='b' is not one of the models: 'a'"),
        ([good], None, C, {}, TypeError, "models must be a non-empty dict"),
        ({}, None, C, {}, TypeError, "models must be a non-empty dict"),
        ({1: good}, None, C, {}, TypeError, "models' keys must be str names; got 1"),
        ({"a": good}, None, C[:0], {}, ValueError, "C is empty"),
    ]
    for models, X, C_, kw, exc, match in cases:
        kw.setdefault("problem", problem)
        with pytest.raises(exc, match=match):
            compare_decisions(models, X, C_, **kw)
    with pytest.raises(TypeError, match="compare_decisions needs problem="):
        compare_decisions({"a": good}, None, C)
    # Positive values minimized: doing nothing is optimal, of value 0.
    with pytest.raises(ValueError, match=r"all zero.*this Knapsack has sense='min'"):
        compare_decisions({"a": good}, None, C, problem=Knapsack([[2.0, 3.0, 1.0, 4.0]], [5.0],
                                                                   sense="min"))


class _Failing:
    """A model whose predict (or predict_decision) raises ``exc``."""

    def __init__(self, exc, method="predict"):
        self.exc = exc
        setattr(self, method, self._raise)
        if method == "predict_decision":
            self.predict = self._raise

    def _raise(self, X):
        raise self.exc


class _TwoArgError(Exception):
    def __init__(self, code, detail):
        super().__init__(f"code {code}: {detail}")


def test_compare_decisions_names_the_model_whose_own_predict_raised():
    """An error inside one model's predict did not say which model raised it."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from spotree import SPOTree
    from spotree.metrics import compare_decisions

    problem, _, C, preds = knapsack_instance(10)
    X = C[:, :2]
    narrow = KNeighborsRegressor(1).fit(X[:, :1], C)  # fitted on one feature of two
    unfitted_tree = make_pipeline(StandardScaler().fit(X), SPOTree(problem))
    bad_scaler = make_pipeline(StandardScaler().fit(C), SPOTree(problem, max_depth=1).fit(C, C))
    cases = [(narrow, ValueError, r"models\['b'\]\.predict raised ValueError: X has 2 "
                                  "features, but KNeighborsRegressor is expecting 1"),
             (unfitted_tree, ValueError, r"models\['b'\]\.predict_decision raised "
                                         "NotFittedError"),
             (bad_scaler, ValueError, r"models\['b'\]\.transform raised ValueError"),
             (_Failing(KeyError("x3")), KeyError, r"models\['b'\]\.predict raised KeyError: "
                                                  "'x3'"),
             (_Failing(_TwoArgError(7, "no"), "predict_decision"), RuntimeError,
              r"^models\['b'\]\.predict_decision raised _TwoArgError: code 7: no$")]
    for model, exc, match in cases:
        with pytest.raises(exc, match=match) as info:
            compare_decisions({"a": preds["good"], "b": model}, X, C, problem=problem)
        # The original error is kept as the cause, of its own type.
        assert info.value.__cause__ is not None
        assert type(info.value.__cause__).__name__ in str(info.value)


def test_compare_decisions_standard_error_of_weighted_rows_is_the_linearized_ratio():
    import warnings

    from spotree.metrics import compare_decisions

    problem, subsets, C, preds = knapsack_instance(30)
    w = np.random.default_rng(6).uniform(0.0, 2.0, size=30)
    w[[3, 11, 17]] = 0.0
    r = {k: enumerated_regrets(C, P, subsets)[0] for k, P in preds.items()}
    z = enumerated_regrets(C, C, subsets)[1]
    # The rows of positive weight as independent draws, the weights fixed:
    # sqrt(n/(n-1) sum w^2 e^2) / sum w z, e = d - D z, n = 27 rows.
    pos = w > 0
    expected = []
    for k in r:
        d, wp, zp = (r[k] - r["good"])[pos], w[pos], z[pos]
        D = np.sum(wp * d) / np.sum(wp * zp)
        n = pos.sum()
        expected.append(np.sqrt(n / (n - 1) * np.sum((wp * (d - D * zp)) ** 2))
                        / np.sum(wp * zp))
    res = compare_decisions(preds, None, C, problem=problem, sample_weight=w)
    assert_allclose(res.standard_error, expected, rtol=1e-10, atol=1e-15)
    assert res.standard_error[1] > 0
    # Invariant to rescaling every weight, without warnings (weights summing
    # to less than 1 gave NaN before).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for scale in (1e-3, 1e3, 1 / w.sum()):
            scaled = compare_decisions(preds, None, C, problem=problem,
                                       sample_weight=w * scale)
            assert_allclose(scaled.to_frame().to_numpy()[:, :3], res.to_frame().to_numpy()[:, :3],
                            rtol=1e-12, atol=1e-15)
        # NaN only below two rows of positive weight.
        one = compare_decisions(preds, None, C, problem=problem,
                                sample_weight=np.eye(1, 30, 4).ravel())
        assert np.isnan(one.standard_error[1:]).all() and one.standard_error[0] == 0
        two = compare_decisions(preds, None, C, problem=problem,
                                sample_weight=np.eye(1, 30, 4).ravel() + np.eye(1, 30, 9).ravel())
        assert np.isfinite(two.standard_error).all()


def test_compare_decisions_counts_a_difference_of_rounding_as_a_tie():
    from spotree.metrics import compare_decisions

    # Row 0: both paths cost 0.3, but 0.1 + 0.2 = 0.30000000000000004 in
    # floats; row 1: the first path is cheaper (2 against 3).
    paths = FiniteDecisions(np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]))
    C = np.array([[0.1, 0.2, 0.3, 0.0], [1.0, 1.0, 3.0, 0.0]])
    first, second = np.tile([0.0, 0.0, 1.0, 1.0], (2, 1)), np.tile([1.0, 1.0, 0.0, 0.0], (2, 1))
    res = compare_decisions({"first": first, "second": second}, None, C, problem=paths)
    assert res.regrets[0, 0] > 0  # the rounding, kept in the regret
    assert (res.n_better[1], res.n_worse[1]) == (0, 1)


# ---------------------------------------- permutation importance by decision regret
#
# sklearn.inspection.permutation_importance(model, X, C, scoring=make_spo_scorer(p)) is
# the documented answer to "which features matter for my decisions" (user guide,
# trees.rst). Its numbers are checked here against a permutation done by hand with the
# random draws scikit-learn documents (one seed drawn from random_state, the same seed
# for every column, the row order shuffled in place n_repeats times) and the normalized
# SPO loss by enumeration of the decisions (brute_regret).

KNAP_WEIGHTS = np.array([1.0, 2.0, 1.5, 1.0])
KNAP_CAPACITY = 2.5
# Every 0/1 item set within the capacity, listed independently of Knapsack.
KNAP_SETS = np.array([s for s in itertools.product((0.0, 1.0), repeat=4)
                      if np.dot(s, KNAP_WEIGHTS) <= KNAP_CAPACITY])
THREE_ROUTES = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [0.5, 0.5, 0.0, 0.5]])


def brute_permutation_importance(model, X, C, V, sense, *, n_repeats, random_state,
                                 sample_weight=None):
    """Drop of minus the normalized SPO loss when each column is shuffled, by hand."""
    sw = np.ones(len(C)) if sample_weight is None else np.asarray(sample_weight, float)
    C = np.asarray(C, dtype=float)
    true_vals = C @ V.T
    z = true_vals.min(axis=1) if sense == "min" else true_vals.max(axis=1)

    def score(Xp):
        regret = brute_regret(C, np.asarray(model.predict(Xp)), V, sense)
        return -np.dot(sw, regret) / np.dot(sw, np.abs(z))

    base = score(X)
    seed = np.random.RandomState(random_state).randint(np.iinfo(np.int32).max + 1)
    out = np.empty((X.shape[1], n_repeats))
    for j in range(X.shape[1]):
        rng, Xp, order = np.random.RandomState(seed), X.copy(), np.arange(len(X))
        for k in range(n_repeats):
            rng.shuffle(order)
            if hasattr(Xp, "iloc"):
                Xp[Xp.columns[j]] = Xp.iloc[order, j].to_numpy()
            else:
                Xp[:, j] = Xp[order, j]
            out[j, k] = base - score(Xp)
    return out


def _importance_data(V, n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    C = np.exp(0.6 * X @ rng.normal(size=(3, V.shape[1]))) + 0.3 * rng.uniform(size=(n, V.shape[1]))
    return X, C, rng.uniform(0.5, 2.0, n)


def _importance_models(problem):
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from spotree import OptimalSPOTree, SPOBoost, SPOForest, SPOPlusLinear, SPOTree

    return {
        "SPOTree": SPOTree(problem, max_depth=2, min_samples_leaf=5),
        "SPOForest": SPOForest(problem, n_estimators=3, max_depth=2, random_state=0),
        "SPOBoost": SPOBoost(problem, n_estimators=3, random_state=0),
        "SPOPlusLinear": SPOPlusLinear(problem, max_iter=5, random_state=0),
        "OptimalSPOTree": OptimalSPOTree(problem, max_depth=1),
        "Pipeline": make_pipeline(StandardScaler(), SPOTree(problem, max_depth=2)),
        "Ridge (two-stage)": Ridge(),
    }


@pytest.mark.parametrize("sense", ["min", "max"])
def test_permutation_importance_by_regret_matches_a_permutation_by_hand(sense):
    from sklearn.inspection import permutation_importance

    from spotree.problems import Knapsack

    if sense == "min":
        V, problem = THREE_ROUTES, FiniteDecisions(THREE_ROUTES)
    else:
        V, problem = KNAP_SETS, Knapsack(KNAP_WEIGHTS, KNAP_CAPACITY)
    X, C, sw = _importance_data(V)
    scorer = make_spo_scorer(problem)
    for name, model in _importance_models(problem).items():
        model.fit(X, C)
        for w in (None, sw):
            got = permutation_importance(model, X, C, scoring=scorer, n_repeats=3,
                                         random_state=7, sample_weight=w)
            want = brute_permutation_importance(model, X, C, V, sense, n_repeats=3,
                                                random_state=7, sample_weight=w)
            assert_allclose(got.importances, want, rtol=0, atol=1e-12, err_msg=name)
    # Not all zero: the shuffles did change decisions.
    assert want.max() > 0.01


def test_permutation_importance_by_regret_on_a_dataframe_with_a_categorical_column():
    import pandas as pd
    from sklearn.inspection import permutation_importance

    X, C, sw = _importance_data(THREE_ROUTES, seed=1)
    rng = np.random.default_rng(2)
    X = pd.DataFrame(X, columns=["a", "b", "c"], index=np.arange(len(X)) * 3 + 5)
    X["day"] = pd.Categorical(rng.choice(["mon", "tue", "sun"], len(X)))
    # Sunday makes the first route dearer: the category matters for the decision.
    C = C + 2.0 * (X["day"] == "sun").to_numpy()[:, None] * np.array([1.0, 0.0, 0.0, 1.0])
    problem = FiniteDecisions(THREE_ROUTES)
    scorer = make_spo_scorer(problem)
    models = _importance_models(problem)
    for name in ("SPOTree", "SPOForest", "SPOBoost", "SPOPlusLinear"):
        model = models[name].fit(X, C)
        got = permutation_importance(model, X, C, scoring=scorer, n_repeats=2,
                                     random_state=3, sample_weight=sw)
        want = brute_permutation_importance(model, X, C, THREE_ROUTES, "min", n_repeats=2,
                                            random_state=3, sample_weight=sw)
        assert_allclose(got.importances, want, rtol=0, atol=1e-12, err_msg=name)
        # A spotree estimator's own score charges its decisions: scoring=None agrees.
        assert_allclose(permutation_importance(model, X, C, n_repeats=2, random_state=3,
                                               sample_weight=sw).importances,
                        want, rtol=0, atol=1e-12, err_msg=name)
    assert want[3].mean() > 0.01


def test_permutation_importance_by_regret_in_parallel_workers():
    # n_jobs=2 copies the model, the scorer and their problems to joblib's worker
    # processes (cloudpickle); the importances are those of one process.
    import joblib
    from sklearn.inspection import permutation_importance

    from spotree import SPOForest
    from spotree.problems import Knapsack

    V = KNAP_SETS
    X, C, sw = _importance_data(V, seed=3)
    oracle_problem = CallableProblem(lambda c: V[np.argmax(V @ c)], n_costs=4, sense="max")
    for problem in (Knapsack(KNAP_WEIGHTS, KNAP_CAPACITY), oracle_problem):
        model = SPOForest(problem, n_estimators=3, max_depth=2, random_state=0).fit(X, C)
        # Forked workers (no import of spotree in each, unlike loky's: 6 s); the task is
        # still pickled, by plain pickle, stricter than loky's cloudpickle.
        with joblib.parallel_config(backend="multiprocessing"):
            got = permutation_importance(model, X, C, scoring=make_spo_scorer(problem),
                                         n_repeats=2, random_state=0, sample_weight=sw, n_jobs=2)
        want = brute_permutation_importance(model, X, C, V, "max", n_repeats=2, random_state=0,
                                            sample_weight=sw)
        assert_allclose(got.importances, want, rtol=0, atol=1e-12)


def test_spo_scorer_refuses_a_model_fitted_on_the_other_sense():
    """make_spo_scorer(min problem) scored a tree fitted on a max problem (same number of
    costs) without a word, though compare_decisions refuses it; now it raises, for the
    estimator and for a Pipeline ending in it. Models of the right sense, and regressors
    without a problem, are scored as before; metadata routing still reaches the scorer."""
    from sklearn import config_context
    from sklearn.linear_model import LinearRegression
    from sklearn.model_selection import cross_validate
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from spotree import SPOTree
    from spotree.problems import Knapsack

    knap, routes = Knapsack(KNAP_WEIGHTS, KNAP_CAPACITY), FiniteDecisions(THREE_ROUTES)
    X, C, sw = _importance_data(KNAP_SETS, n=40)
    tree = SPOTree(knap, max_depth=1).fit(X, C)
    piped = make_pipeline(StandardScaler(), SPOTree(knap, max_depth=1)).fit(X, C)
    for model in (tree, piped):
        with pytest.raises(ValueError, match=r"on a 'min' problem \(FiniteDecisions\).*"
                                             r"fitted on a 'max' one \(Knapsack\)"):
            make_spo_scorer(routes)(model, X, C)
    # The right sense: minus the normalized loss, the best item set found by enumeration.
    pred = KNAP_SETS[np.argmax(tree.predict(X) @ KNAP_SETS.T, axis=1)]
    best = (C @ KNAP_SETS.T).max(axis=1)
    want = -np.sum(best - np.sum(C * pred, axis=1)) / np.sum(best)
    assert make_spo_scorer(knap)(tree, X, C) == pytest.approx(want, rel=1e-12)
    lin = LinearRegression().fit(X, C)
    assert np.isfinite(make_spo_scorer(routes)(lin, X, C))
    # Routing: the weights reach the scorer through set_score_request.
    with config_context(enable_metadata_routing=True):
        scorer = make_spo_scorer(knap)
        assert scorer.set_score_request(sample_weight=True) is scorer
        est = LinearRegression().set_fit_request(sample_weight=False)
        res = cross_validate(est, X, C, scoring=scorer, cv=KFold(2),
                             params={"sample_weight": sw}, return_estimator=True)
        for k, (_, test) in enumerate(KFold(2).split(X)):
            assert res["test_score"][k] == make_spo_scorer(knap)(
                res["estimator"][k], X[test], C[test], sample_weight=sw[test])
            assert res["test_score"][k] != make_spo_scorer(knap)(
                res["estimator"][k], X[test], C[test])


def test_the_sense_check_sees_through_searches_and_nested_pipelines():
    # Only a Pipeline's last step was looked at: a nested cross-validation
    # (make_spo_scorer scoring a fitted GridSearchCV) or a Pipeline inside a
    # Pipeline fitted on a 'max' problem was scored by a 'min' scorer without
    # a word, and compare_decisions asked for problem= though the search
    # carries one.
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from spotree import SPOTree
    from spotree.metrics import compare_decisions
    from spotree.problems import Knapsack

    knap, routes = Knapsack(KNAP_WEIGHTS, KNAP_CAPACITY), FiniteDecisions(THREE_ROUTES)
    X, C, _ = _importance_data(KNAP_SETS, n=40)
    search = GridSearchCV(SPOTree(knap), {"max_depth": [1, 2]}, cv=KFold(2)).fit(X, C)
    nested = make_pipeline(StandardScaler(),
                           make_pipeline(StandardScaler(), SPOTree(knap, max_depth=1))).fit(X, C)
    for model in (search, nested):
        with pytest.raises(ValueError, match=r"on a 'min' problem \(FiniteDecisions\).*"
                                             r"fitted on a 'max' one \(Knapsack\)"):
            make_spo_scorer(routes)(model, X, C)
        with pytest.raises(ValueError, match="fitted on a 'max' problem"):
            compare_decisions({"m": model}, X, C, problem=routes)
    # Its own problem found: the loss of its predicted costs' best item sets.
    pred = KNAP_SETS[np.argmax(search.predict(X) @ KNAP_SETS.T, axis=1)]
    best = (C @ KNAP_SETS.T).max(axis=1)
    want = np.sum(best - np.sum(C * pred, axis=1)) / np.sum(best)
    found = compare_decisions({"search": search}, X, C)
    assert found.normalized_spo_loss[0] == pytest.approx(want, rel=1e-12)


def test_costs_whose_optimal_values_pass_the_float_range_are_scored():
    # Costs near the largest float: each is finite, but the optimal value of
    # a path of two edges is not. normalized_spo_loss (and every score) raised
    # "z_true must be a finite array of shape (6,); got shape (6,)", and
    # spo_loss gave inf for a finite regret. Both against the same costs
    # scaled down by hand (the normalized loss has no unit; the regrets scale).
    sp = ShortestPath((2, 2))
    rng = np.random.default_rng(0)
    C = rng.uniform(1.0, 1.9, (6, sp.n_costs))
    P = rng.uniform(1.0, 1.9, (6, sp.n_costs))
    big = 2.0 ** 1023
    W = sp.solve(P)[0]
    z = sp.solve(C)[1]
    regret = np.einsum("ij,ij->i", C, W) - z  # by hand, on the small costs
    assert not np.isfinite(sp.solve(C * big)[1]).all()
    assert_allclose(spo_loss(C * big, P * big, problem=sp) / big, regret, rtol=1e-12)
    want = regret.sum() / np.abs(z).sum()
    assert normalized_spo_loss(C * big, P * big, problem=sp) == pytest.approx(want, rel=1e-12)
    assert normalized_decision_loss(C * big, W, problem=sp) == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match=r"z_true\[0\] is inf"):
        decision_loss(C, W, problem=sp, z_true=np.full(6, np.inf))
    # compare_decisions alike: model "a" decides by P, "b" optimally.
    from spotree.metrics import compare_decisions

    res = compare_decisions({"a": P * big, "b": C * big}, None, C * big, problem=sp)
    assert res.normalized_spo_loss == pytest.approx([want, 0.0], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("sense", ["min", "max"])
def test_every_loss_path_is_exact_on_costs_whose_optimal_values_overflow(sense):
    # decision_loss, normalized_decision_loss, compare_decisions and the CLI's
    # loss line each solve again on the costs in units of a power of two where
    # the optimal values overflow (one helper): each against exact fractions.
    from fractions import Fraction

    from spotree.cli._commands import _loss_text
    from spotree.metrics import compare_decisions

    V = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0]])
    problem = FiniteDecisions(V, sense=sense)
    rng = np.random.default_rng(3)
    C = rng.uniform(1.0, 1.5, (6, 4)) * 1e308  # every c^T v is 2e308 to 3e308: inf
    W = V[rng.integers(0, 3, 6)]
    sw = rng.uniform(0.5, 2.0, 6)
    exact_z = [(min if sense == "min" else max)(sum(Fraction(c) * Fraction(v)
                                                   for c, v in zip(row, vert))
                                                for vert in V) for row in C]
    exact = [abs(sum(Fraction(c) * Fraction(w) for c, w in zip(row, w_row)) - z)
             for row, w_row, z in zip(C, W, exact_z)]
    assert not np.isfinite(problem.solve(C)[1]).any()
    assert_allclose(decision_loss(C, W, problem=problem), [float(r) for r in exact],
                    rtol=1e-12)
    ratio = (sum(Fraction(w) * r for w, r in zip(sw, exact))
             / sum(Fraction(w) * abs(z) for w, z in zip(sw, exact_z)))
    assert normalized_decision_loss(C, W, problem=problem, sample_weight=sw) == \
        pytest.approx(float(ratio), rel=1e-12)
    # Predicted costs -sign * w pick w (w.w = 2, any other vertex's v.w <= 1).
    result = compare_decisions({"a": -problem.sign * W, "b": np.ones((6, 4))}, None, C,
                               problem=problem, sample_weight=sw)
    assert result.normalized_spo_loss[0] == pytest.approx(float(ratio), rel=1e-12)
    assert_allclose(result.regrets[0], [float(r) for r in exact], rtol=1e-12)

    class Model:
        problem_ = problem

        def predict_decision(self, X):
            return W

    assert _loss_text(Model(), None, C, sw) == f"normalized SPO loss {float(ratio):.4f}"


def test_normalized_spo_loss_holds_few_arrays_of_the_costs_size():
    # tracemalloc counts every numpy allocation. Besides the predicted
    # decisions and one solve's (its decisions and their -0 -> 0 copy), the
    # loss held the optimal decisions of C_true (only their values are used)
    # and |C_true| and |W| of every row (for a tolerance needed only where a
    # regret is negative): 4.4 arrays of C's size, now 3.3.
    SP = ShortestPath((3, 3))
    X, C = make_shortest_path(20_000, grid=(3, 3), degree=4, noise=0.5, random_state=0)
    P = C * 1.1 + 0.3
    V = SP.vertices()  # by enumeration of the 6 paths
    z = (C @ V.T).min(axis=1)
    want = float((np.einsum("ij,ij->i", C, V[(P @ V.T).argmin(axis=1)]) - z).sum() / z.sum())
    got, _, peak = traced_peak(lambda: normalized_spo_loss(C, P, problem=SP))
    assert got == pytest.approx(want, rel=1e-12)
    assert peak < 3.8 * C.nbytes
