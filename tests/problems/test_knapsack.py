"""Tests of the multi-dimensional 0/1 knapsack: every method against brute force
over all subsets, against scipy's MILP solver at 32 items, the documented tie
and zero-value rules, the HiGHS fallback, vertices, and bad input."""

import itertools
import json
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import Bounds, LinearConstraint, milp

from _helpers import traced_peak

from spotree.problems import Knapsack
from spotree.problems._compiled import KIND_KNAPSACK_BB, KIND_KNAPSACK_DP


# ------------------------------------------------------------- references
def all_subsets(n):
    return np.array(list(itertools.product([0.0, 1.0], repeat=n)))


def brute_force(Wt, cap, C, sense):
    """Optimal values over every feasible subset, and the feasible subsets.

    The tolerance 1e-7 accepts subsets that fit exactly with weights of two
    decimals (their sums are multiples of 0.01 up to rounding) and nothing
    else on the data used here.
    """
    S = all_subsets(Wt.shape[1])
    S = S[(S @ Wt.T <= cap + 1e-7).all(axis=1)]
    G = C @ S.T
    z = G.max(axis=1) if sense == "max" else G.min(axis=1)
    return z, S, G


def random_instance(rng, n, m, decimals):
    if decimals == 0:
        Wt = rng.integers(0, 10, size=(m, n)).astype(float)
    else:
        Wt = rng.integers(300, 800, size=(m, n)) / 100.0
    # Capacities from nothing fits to everything fits; often an exact sum.
    if rng.random() < 0.3:
        cap = Wt[:, rng.random(n) < 0.5].sum(axis=1)
    else:
        cap = np.round(Wt.sum(axis=1) * rng.uniform(0.0, 1.0, size=m), decimals)
    return Wt, cap


def assert_feasible(W, Wt, cap):
    assert set(np.unique(W)) <= {0.0, 1.0}
    assert (W @ Wt.T <= cap + 1e-7).all()


# ---------------------------------------------------------- brute force
@pytest.mark.parametrize("m", [1, 2])
@pytest.mark.parametrize("decimals", [0, 2])
@pytest.mark.parametrize("sense", ["max", "min"])
def test_compiled_solvers_equal_brute_force(m, decimals, sense):
    rng = np.random.default_rng(100 * m + 10 * decimals + (sense == "min"))
    n_checked = {"dp": 0, "bb": 0}
    for trial in range(40):
        n = int(rng.integers(1, 13))
        Wt, cap = random_instance(rng, n, m, decimals)
        # Mixed signs, and integers with zeros and ties on every other trial.
        if trial % 2:
            C = rng.integers(-3, 10, size=(25, n)).astype(float)
        else:
            C = rng.normal(size=(25, n)) * rng.uniform(0.1, 100.0)
        z_bf, S, G = brute_force(Wt, cap, C, sense)
        methods = ["bb"] + (["dp"] if m == 1 and decimals == 0 else [])
        for method in methods:
            ks = Knapsack(Wt if m > 1 else Wt[0], cap, sense=sense, method=method)
            W, z = ks.solve(C)
            assert_feasible(W, Wt, cap)
            assert_allclose(z, z_bf, rtol=1e-12, atol=1e-9)
            assert_allclose(np.einsum("ij,ij->i", C, W), z, rtol=1e-12, atol=1e-12)
            if trial % 2 == 0:
                # Continuous values: the optimum is unique.
                k = G.argmax(axis=1) if sense == "max" else G.argmin(axis=1)
                assert_array_equal(W, S[k])
            n_checked[method] += 1
    assert n_checked["bb"] == 40
    assert n_checked["dp"] == (40 if m == 1 and decimals == 0 else 0)


def test_auto_picks_dp_for_one_integer_resource_and_bb_otherwise():
    assert Knapsack([3, 4, 5], 7).solver == "dp"
    assert Knapsack([3, 4, 5], 7).compiled_oracle().kind == KIND_KNAPSACK_DP
    assert Knapsack([3.5, 4, 5], 7).solver == "bb"
    assert Knapsack([[3, 4, 5], [1, 1, 1]], [7, 2]).solver == "bb"
    assert Knapsack([[3, 4, 5], [1, 1, 1]], [7, 2]).compiled_oracle().kind == KIND_KNAPSACK_BB
    # A capacity whose table exceeds the automatic limit goes to branch and bound.
    big = Knapsack(np.ones(10), 10_000)
    assert big.solver == "bb"
    assert Knapsack(np.ones(10), 10_000, method="dp").solver == "dp"
    assert Knapsack([3, 4, 5], 7, method="highs").compiled_oracle() is None
    # The documented limits are inclusive: 16 items x (4095 + 1) = 65,536
    # cells is "at most 65,536" (dp), one more capacity unit is not; 1,024 x
    # 4,096 = 4,194,304 cells is what method="dp" accepts at most (4,097: 4,195,328).
    assert Knapsack(np.ones(16), 4095).solver == "dp"
    assert Knapsack(np.ones(16), 4096).solver == "bb"
    assert Knapsack(np.ones(1024), 4095, method="dp").solver == "dp"
    with pytest.raises(ValueError, match="4195328 cells"):
        Knapsack(np.ones(1024), 4096, method="dp")


def test_highs_method_equals_brute_force():
    rng = np.random.default_rng(7)
    for trial in range(6):
        Wt, cap = random_instance(rng, 8, 2, 2)
        C = rng.normal(size=(10, 8))
        z_bf, _, _ = brute_force(Wt, cap, C, "max")
        W, z = Knapsack(Wt, cap, method="highs").solve(C)
        assert_feasible(W, Wt, cap)
        assert_allclose(z, z_bf, rtol=1e-9, atol=1e-9)
        assert not (np.signbit(W) & (W == 0)).any()  # no -0. from rounding HiGHS's -1e-17


def test_node_limit_falls_back_to_highs_with_exact_values():
    # max_nodes=1 stops the branch and bound on every vector with at least
    # one candidate item: each row then goes to HiGHS.
    rng = np.random.default_rng(8)
    Wt, cap = random_instance(rng, 10, 2, 2)
    C = rng.uniform(0.5, 2.0, size=(12, 10))
    ks = Knapsack(Wt, cap, max_nodes=1)
    o = ks.compiled_oracle()
    from spotree.problems._compiled import solve_batch

    z_raw = solve_batch(o.kind, o.ints, o.floats, -C, np.empty((12, 10)),
                        np.empty(o.work_size), np.empty(o.iwork_size, dtype=np.int64))
    assert np.isnan(z_raw).all()
    W, z = ks.solve(C)
    z_bf, _, _ = brute_force(Wt, cap, C, "max")
    assert_feasible(W, Wt, cap)
    assert_allclose(z, z_bf, rtol=1e-9)


# ------------------------------------------------------------ MILP at n=32
def test_equals_scipy_milp_at_32_items_two_resources():
    rng = np.random.default_rng(11)
    n = 32
    Wt = rng.integers(300, 800, size=(2, n)) / 100.0
    cap = 0.5 * Wt.sum(axis=1)
    ks = Knapsack(Wt, cap)
    assert ks.solver == "bb"
    # PyEPO-like integer values (many ties) and continuous values.
    C = np.vstack([np.ceil(rng.uniform(1, 20, size=(25, n))),
                   rng.uniform(0.0, 10.0, size=(25, n))])
    W, z = ks.solve(C)
    assert_feasible(W, Wt, cap)
    cons = LinearConstraint(Wt, -np.inf, cap)
    for c, zi in zip(C, z):
        res = milp(-c, constraints=cons, integrality=np.ones(n), bounds=Bounds(0, 1),
                   options={"mip_rel_gap": 0.0})
        assert res.status == 0
        assert_allclose(zi, -res.fun, rtol=1e-9)


# ------------------------------------------------------------- tie rules
def test_dp_tie_rule_prefers_leaving_later_items_out():
    # Documented rule: among optimal subsets of positive-value items, the one
    # whose vector read from the last item to the first is lexicographically
    # smallest.
    rng = np.random.default_rng(12)
    n_tied = 0
    for trial in range(30):
        n = int(rng.integers(2, 10))
        w = rng.integers(1, 5, size=n).astype(float)
        cap = float(rng.integers(1, int(w.sum()) + 1))
        C = rng.integers(-1, 4, size=(20, n)).astype(float)
        W, z = Knapsack(w, cap, method="dp").solve(C)
        _, S, G = brute_force(w[None, :], np.array([cap]), C, "max")
        for c, wi, g in zip(C, W, G):
            best = g.max()
            ok = (g == best) & ~(S[:, c <= 0] > 0).any(axis=1)
            cands = S[ok]
            n_tied += len(cands) > 1
            expected = min(cands.tolist(), key=lambda x: x[::-1])
            assert_array_equal(wi, expected)
    assert n_tied > 50  # the test exercised ties


@pytest.mark.parametrize("method", ["dp", "bb", "highs"])
def test_items_of_non_positive_value_are_never_taken(method):
    rng = np.random.default_rng(13)
    w = rng.integers(1, 4, size=8).astype(float)
    C = rng.integers(-2, 3, size=(40, 8)).astype(float)  # many zeros
    W, z = Knapsack(w, w.sum(), method=method).solve(C)
    assert not W[C <= 0].any()
    # With room for everything, every positive item is taken.
    assert_array_equal(W, (C > 0).astype(float))
    # min sense: items of non-negative cost are never taken.
    W, _ = Knapsack(w, w.sum(), sense="min", method=method).solve(C)
    assert_array_equal(W, (C < 0).astype(float))


def test_zero_value_items_are_left_out_whatever_highs_returns():
    # HiGHS may take an item of value 0: taking every item is an optimal
    # MILP solution here (room for all, no negative value), and a stand-in
    # for the MILP model returns it. The decisions still leave the zero
    # items out, as the compiled solvers do (the documented rule).
    class TakeAll:
        def solve(self, Cm):
            return np.ones_like(Cm), None

    w = np.array([1.0, 2.0, 3.0, 1.0])
    C = np.array([[0.0, 2.0, 0.0, 1.0], [3.0, 0.0, 0.0, 0.0]])
    for sense, sign in (("max", 1.0), ("min", -1.0)):
        ks = Knapsack(w, w.sum(), sense=sense, method="highs")
        ks._model_milp = TakeAll()
        W, z = ks.solve(sign * C)
        assert_array_equal(W, (C > 0).astype(float))
        assert_allclose(z, sign * C.sum(axis=1))


def test_bb_is_deterministic_and_batch_equals_rows():
    rng = np.random.default_rng(14)
    Wt = rng.integers(300, 800, size=(2, 20)) / 100.0
    ks = Knapsack(Wt, 0.5 * Wt.sum(axis=1))
    C = np.ceil(rng.uniform(1, 5, size=(30, 20)))  # many ties
    W, z = ks.solve(C)
    for i in range(30):
        Wi, zi = ks.solve(C[i:i + 1])
        assert_array_equal(Wi[0], W[i])
    W2, _ = Knapsack(Wt, 0.5 * Wt.sum(axis=1)).solve(C)
    assert_array_equal(W, W2)


# ---------------------------------------------------------- edge cases
def test_zero_capacity_and_oversized_items():
    ks = Knapsack([[0.0, 2.0, 5.0], [1.0, 0.0, 1.0]], [0.0, 4.0])
    # Only item 0 weighs nothing on the zero-capacity resource 0.
    W, z = ks.solve([[3.0, 2.0, 9.0], [-3.0, 1.0, 9.0]])
    assert_array_equal(W, [[1, 0, 0], [0, 0, 0]])
    assert_array_equal(z, [3.0, 0.0])
    # An item heavier than the capacity is never taken.
    W, _ = Knapsack([10.0, 1.0], 5.0).solve([[100.0, 1.0]])
    assert_array_equal(W, [[0, 1]])


def test_items_weighing_nothing_are_taken_when_valuable():
    for method in ["dp", "bb"]:
        W, z = Knapsack([0.0, 3.0, 0.0], 2.0, method=method).solve([[1.0, 5.0, -1.0]])
        assert_array_equal(W, [[1, 0, 0]])
    W, _ = Knapsack([[0.0, 1.0], [0.0, 1.0]], [0.0, 0.0]).solve([[2.0, 2.0]])
    assert_array_equal(W, [[1, 0]])


def test_exact_fit_with_two_decimals_is_feasible():
    # 0.1 + 0.2 > 0.3 in floating point: the relative tolerance keeps the fit.
    ks = Knapsack([0.1, 0.2, 0.35], 0.3, method="bb")
    W, z = ks.solve([[1.0, 1.0, 1.5]])
    assert_array_equal(W, [[1, 1, 0]])


def test_relaxation_bounds_the_knapsack():
    rng = np.random.default_rng(15)
    Wt = rng.integers(300, 800, size=(2, 12)) / 100.0
    ks = Knapsack(Wt, 0.5 * Wt.sum(axis=1))
    C = rng.uniform(0.0, 5.0, size=(20, 12))
    _, z = ks.solve(C)
    _, z_lp = ks.relaxation().solve(C)
    assert (z_lp >= z - 1e-9).all()
    assert (z_lp > z + 1e-6).any()


# ---------------------------------------------------------------- vertices
def test_vertices_are_the_feasible_subsets():
    rng = np.random.default_rng(16)
    Wt, cap = random_instance(rng, 9, 2, 2)
    ks = Knapsack(Wt, cap)
    V = ks.vertices()
    _, S, _ = brute_force(Wt, cap, np.zeros((1, 9)), "max")
    assert {tuple(v) for v in V} == {tuple(s) for s in S}
    assert len(V) == len(S)
    C = rng.normal(size=(50, 9))
    _, z = ks.solve(C)
    _, zv, _ = ks.solve_vertices(C)
    assert_allclose(zv, z, rtol=1e-12, atol=1e-12)


def test_vertices_none_when_too_many():
    Wt = np.random.default_rng(17).integers(300, 800, size=(2, 32)) / 100.0
    ks = Knapsack(Wt, 0.5 * Wt.sum(axis=1))
    assert ks.vertices() is None
    # Exactly at the limit is still listed: 2^12 = 4096 <= 5000 subsets.
    assert Knapsack(np.ones(12), 12).vertices().shape == (4096, 12)
    assert Knapsack(np.ones(13), 13).vertices() is None


def test_vertices_of_many_items_do_not_overflow_the_stack():
    # The listing recursed once per item: RecursionError from ~1,000 items
    # (which SPOTree.fit hit through vertices()).
    V = Knapsack(np.ones(1200), 1).vertices()  # capacity for one item at most
    expected = np.vstack([np.zeros((1, 1200)), np.eye(1200)])
    assert V.shape == (1201, 1200)
    assert {tuple(np.flatnonzero(v)) for v in V} == {tuple(np.flatnonzero(e)) for e in expected}
    # Too many subsets: None, also when the items alone are already too many.
    rng = np.random.default_rng(18)
    assert Knapsack(rng.uniform(size=(2, 1000)), [100.0, 100.0]).vertices() is None
    assert Knapsack(np.ones(6000), 1).vertices() is None


# ------------------------------------------------------ pickling and JSON
def test_to_dict_round_trip_and_pickle():
    ks = Knapsack([[1.5, 2.0, 3.25], [1.0, 1.0, 1.0]], [4.0, 2.0], sense="max", method="bb",
                  max_nodes=500)
    spec = json.loads(json.dumps(ks.to_dict()))
    assert spec["type"] == "knapsack"
    q = Knapsack.from_dict(spec)
    C = np.random.default_rng(18).normal(size=(20, 3))
    for other in (q, pickle.loads(pickle.dumps(ks))):
        assert other.to_dict() == ks.to_dict()
        assert_array_equal(other.solve(C)[0], ks.solve(C)[0])
    assert repr(ks) == "Knapsack(n_items=3, n_resources=2, sense='max')"
    assert ks.describe_decision([1, 0, 1]) == "items 0, 2"
    assert ks.describe_decision([0, 0, 0]) == "no item"


def test_highs_model_is_not_pickled():
    ks = Knapsack([1.0, 2.0], 2.5, method="highs")
    ks.solve([[1.0, 1.0]])
    assert "_model_milp" in ks.__dict__
    assert "_model_milp" not in ks.__getstate__()


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize("weights, capacities, match", [
    ([[1.0, -2.0]], [3.0], r"'weights' parameter of Knapsack must be non-negative. "
                           r"Got -2 at index \(0, 1\)"),
    ([[1.0, np.nan]], [3.0], r"'weights' parameter of Knapsack contains NaN or infinity"),
    ([1.0, np.inf], 3.0, r"'weights' parameter of Knapsack contains NaN"),
    (np.ones((2, 2, 2)), [1.0, 1.0], r"'weights' parameter of Knapsack must have 1 or 2 "
                                     r"dimension"),
    (np.ones((0, 3)), [], r"needs at least one resource and one item"),
    ([], 1.0, r"needs at least one resource and one item"),
    ([["a", "b"]], [1.0], r"'weights' parameter of Knapsack must be an array of numbers"),
    ([[1.0, 2.0], [1.0, 1.0]], [3.0], r"'capacities' parameter of Knapsack must have one "
                                      r"entry per resource, i.e. shape \(2,\)"),
    ([1.0, 2.0], [3.0, 4.0], r"shape \(1,\) to match the 1 row\(s\) of 'weights'"),
    ([1.0, 2.0], -1.0, r"'capacities' parameter of Knapsack must be non-negative"),
    ([1.0, 2.0], np.nan, r"'capacities' parameter of Knapsack contains NaN"),
    ([1.0, 2.0], [[3.0]], r"'capacities' parameter of Knapsack must have 0 or 1 dimension"),
])
def test_bad_weights_and_capacities(weights, capacities, match):
    with pytest.raises(ValueError, match=match):
        Knapsack(weights, capacities)


def test_bad_method_sense_and_max_nodes():
    with pytest.raises(ValueError, match=r"'method' parameter of Knapsack must be a str "
                                         r"among .*Got 'greedy'"):
        Knapsack([1.0], 1.0, method="greedy")
    with pytest.raises(ValueError, match=r"method' parameter of Knapsack is 'dp', but "
                                         r"dynamic programming needs one resource"):
        Knapsack([[1.0], [1.0]], [1.0, 1.0], method="dp")
    with pytest.raises(ValueError, match="dynamic programming needs integer weights"):
        Knapsack([1.5], 1.0, method="dp")
    with pytest.raises(ValueError, match="its table would have"):
        Knapsack([1.0], 1e9, method="dp")
    with pytest.raises(ValueError, match="sense must be 'min' or 'max'"):
        Knapsack([1.0], 1.0, sense="maximize")
    for bad in [0, -5, 2.5, True, None]:
        with pytest.raises(ValueError, match=r"'max_nodes' parameter of Knapsack must be an "
                                             r"int in the range \[1, inf\)"):
            Knapsack([1.0], 1.0, max_nodes=bad)


def test_bad_costs_name_the_argument():
    ks = Knapsack([1.0, 2.0], 2.0)
    with pytest.raises(ValueError, match="C has 3 columns but the problem has n_costs=2"):
        ks.solve(np.ones((1, 3)))
    with pytest.raises(ValueError, match="C contains NaN"):
        ks.solve([[np.nan, 1.0]])


def test_exact_fills_with_integer_values():
    # The hardest case for the rounded-down bound: two-decimal weights, a
    # capacity some subset fills exactly, integer values (so the bound is an
    # integer up to rounding). Brute force on many small instances.
    rng = np.random.default_rng(19)
    n_fill = 0
    for trial in range(400):
        n = int(rng.integers(3, 8))
        w = rng.integers(1, 60, size=n) / 100.0
        mask = rng.random(n) < 0.5
        mask[rng.integers(n)] = True
        cap = float(np.round(w[mask].sum(), 2))
        C = rng.integers(1, 6, size=(3, n)).astype(float)
        W, z = Knapsack(w, cap, method="bb").solve(C)
        z_bf, S, G = brute_force(w[None, :], np.array([cap]), C, "max")
        assert_allclose(z, z_bf, rtol=0, atol=1e-9)
        assert_feasible(W, w[None, :], np.array([cap]))
        n_fill += int((np.abs(W @ w - cap) < 1e-9).sum())
    assert n_fill > 200  # optimal subsets that fill the capacity exactly were common


def test_tree_end_to_end_compiled_equals_highs():
    # The same tree whether children are solved by branch and bound or by
    # HiGHS (vertex lists disabled so that both go through solve()).
    from spotree import SPOTree

    rng = np.random.default_rng(20)
    Wt = rng.integers(300, 800, size=(2, 10)) / 100.0
    X = rng.normal(size=(80, 3))
    C = np.abs(X[:, :1] * rng.normal(size=(1, 10)) + rng.normal(size=(80, 10))) + 1.0
    preds = []
    for method in ["bb", "highs"]:
        ks = Knapsack(Wt, 0.5 * Wt.sum(axis=1), method=method)
        ks.max_vertices = 0
        tree = SPOTree(ks, max_depth=2, min_samples_leaf=10).fit(X, C)
        W = tree.predict_decision(X)
        assert_feasible(W, Wt, 0.5 * Wt.sum(axis=1))
        preds.append(tree.predict(X))
    assert_allclose(preds[0], preds[1], rtol=1e-12)


def test_solve_rows_chunks_give_the_same_values():
    from spotree.problems._compiled import solve_batch, solve_rows

    rng = np.random.default_rng(21)
    Wt = rng.integers(300, 800, size=(2, 16)) / 100.0
    o = Knapsack(Wt, 0.5 * Wt.sum(axis=1)).compiled_oracle()
    C = -rng.uniform(0, 10, size=(300, 16))
    W1, W2 = np.empty_like(C), np.empty_like(C)
    z1 = solve_batch(o.kind, o.ints, o.floats, C, W1, np.empty(o.work_size),
                     np.empty(o.iwork_size, dtype=np.int64))
    z2 = solve_rows(o, C, W2, seconds=1e-9)  # chunks of one or two rows
    assert_array_equal(z2, z1)
    assert_array_equal(W2, W1)


def test_knapsack_is_exported_beside_the_other_problems():
    import spotree

    assert spotree.Knapsack is Knapsack
    assert {"Knapsack", "ShortestPath", "LinearProgram"} <= set(spotree.__all__)


@pytest.mark.parametrize("seed", range(6))
def test_difference_basis_spans_exactly_the_differences_of_feasible_subsets(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 8)), int(rng.integers(1, 3))
    Wt = rng.integers(0, 10, size=(m, n)).astype(float)
    cap = np.full(m, float(rng.integers(3, 9)))
    _, S, _ = brute_force(Wt, cap, np.zeros((1, n)), "min")
    B = Knapsack(Wt, cap).difference_basis()
    assert_allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-12)
    D = S - S[0]
    assert_allclose(D - D @ B @ B.T, 0.0, atol=1e-12)
    assert B.shape == (n, np.linalg.matrix_rank(D))


@pytest.mark.parametrize("method", ["auto", "bb", "highs"])
def test_integer_data_get_no_capacity_allowance(method):
    # 1e-9 of a capacity of 1e9 is a whole unit: with it, both items (total
    # weight 1e9 + 1) would "fit". Integer sums are exact and need no slack.
    ks = Knapsack([[500_000_001, 500_000_000]], 1e9, method=method)
    W, z = ks.solve(np.array([[1.5, 1.0], [1.0, 3.0], [2.0, 1.0]]))
    assert_array_equal(W, [[1, 0], [0, 1], [1, 0]])
    assert_allclose(z, [1.5, 3, 2])
    V = ks.vertices()
    assert len(V) == 3 and {tuple(v) for v in V} == {(0, 0), (1, 0), (0, 1)}
    # Weights of two decimals keep the allowance: 0.29 * 100 falls short of 29
    # in floating point, and the item that fits exactly is still taken.
    ks = Knapsack([[0.29 * 100, 1.0]], 29.0, method=method)
    assert 0.29 * 100 != 29.0
    assert_array_equal(ks.solve(np.array([[5.0, 1.0]]))[0], [[1, 0]])


@pytest.mark.parametrize("method", ["highs", "bb", "max_nodes=1"])
def test_a_subset_over_capacity_by_a_millionth_is_refused_by_every_method(method):
    # HiGHS accepts integer solutions that break a row by up to 1e-6
    # (absolute): method="highs", and the branch and bound's fallback past
    # max_nodes, took both items of weights 0.5 and 0.5000005 into a capacity
    # of 1 (value 2), which the 1e-9 allowance of the docstring refuses.
    rng = np.random.default_rng(11)
    Wt = np.array([[0.5, 0.5000005, 0.25, 0.2500003, 0.7500002]])
    cap = np.array([1.0])
    C = rng.uniform(0.5, 2.0, size=(20, 5))
    kwargs = {"max_nodes": 1} if method == "max_nodes=1" else {"method": method}
    W, z = Knapsack(Wt, cap, **kwargs).solve(C)
    S = all_subsets(5)
    S = S[(S @ Wt.T <= cap * (1 + 1e-9)).all(axis=1)]  # the docstring's allowance
    assert (W @ Wt.T <= cap * (1 + 1e-9)).all()
    assert_allclose(z, (C @ S.T).max(axis=1), rtol=1e-12)


def test_a_maximizing_knapsack_solves_without_a_negated_copy_of_the_batch():
    # _solve negated every row at once (Cm = -C) for the compiled solver: a
    # second array of the batch's size next to the decisions (tracemalloc
    # peak 52.8 MB for 25.6 MB of decisions, 100,000 rows of 32 items). The
    # rows are now negated in blocks; the decisions are the same as one
    # maximizing solve per row by enumeration.
    rng = np.random.default_rng(0)
    weights = rng.integers(1, 5, (2, 8)).astype(float)
    problem = Knapsack(weights, [6.0, 6.0])
    problem._negated_block = 8 * 7  # blocks of 7 rows
    C = rng.integers(-2, 6, (40, 8)).astype(float)
    W, z = problem.solve(C)
    subsets = np.array([s for s in itertools.product((0.0, 1.0), repeat=8)
                        if (weights @ np.array(s) <= 6.0).all()])
    assert_array_equal(z, (C @ subsets.T).max(axis=1))
    assert ((weights @ W.T) <= 6.0).all()

    big = Knapsack(rng.random((1, 16)), 2.0)
    big._negated_block = 1 << 15  # blocks of 2,048 rows (a tenth of the batch)
    C = rng.random((20000, 16))
    big.solve(C[:5])
    (W, _), _, peak = traced_peak(lambda: big.solve(C))
    assert peak < 1.6 * W.nbytes, (peak, W.nbytes)
