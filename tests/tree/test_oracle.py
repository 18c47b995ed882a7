"""The oracle path with bounds (slow exact oracle, cheap relaxation) grows the same tree."""

import itertools

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from spotree.problems import CallableProblem, FiniteDecisions
from spotree.tree._builder import grow_tree
from spotree.tree._criterion import FitData
from spotree.tree._oracle import BatchedOracle, BoundedOracle

WEIGHTS = np.array([3.0, 4.0, 2.0, 5.0, 1.0, 3.5, 2.5, 4.5])
CAPACITY = 10.0


def _fractional_knapsack(C):
    """The LP relaxation of max c.x, weights.x <= cap, 0 <= x <= 1, by the greedy rule."""
    W = np.zeros_like(C)
    for i, c in enumerate(C):
        left = CAPACITY
        for j in np.argsort(-c / WEIGHTS, kind="stable"):
            if c[j] <= 0 or left <= 0:
                break
            take = min(1.0, left / WEIGHTS[j])
            W[i, j] = take
            left -= take * WEIGHTS[j]
    return W


class Knapsack01(FiniteDecisions):
    """A 0/1 knapsack by enumeration (exact), with its LP relaxation."""

    def __init__(self):
        pts = np.array([x for x in itertools.product((0.0, 1.0), repeat=WEIGHTS.size)
                        if np.dot(x, WEIGHTS) <= CAPACITY])
        super().__init__(pts, sense="max")
        self.exact_rows = 0

    def _solve(self, C):
        self.exact_rows += C.shape[0]
        return super()._solve(C)

    def relaxation(self):
        return CallableProblem(_fractional_knapsack, n_costs=WEIGHTS.size, sense="max",
                               batched=True)


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    C = np.exp(0.4 * rng.normal(size=(n, WEIGHTS.size)) + 0.5 * X[:, :1] * np.linspace(
        -1, 1, WEIGHTS.size))
    return X, C


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("a", [1.0, 0.6])
def test_bounds_grow_the_same_tree_with_fewer_exact_solves(seed, a):
    X, C = _data(seed=seed)
    trees, rows = [], []
    for handler_cls in (BatchedOracle, BoundedOracle):
        problem = Knapsack01()
        data = FitData(problem, X, C, np.zeros(3, dtype=bool), path="oracle")
        problem.exact_rows = 0
        handler = (handler_cls(data) if handler_cls is BatchedOracle
                   else handler_cls(data, problem.relaxation()))
        tree, _, _ = grow_tree(data, np.ones(len(X)), np.ones(len(X)), a=a, max_depth=3,
                               min_leaf_cnt=10, min_leaf_w=0.0, min_split_cnt=2,
                               max_features=None, n_quantiles=0, min_loss_decrease=0.0,
                               seed=0, oracle_handler=handler)
        trees.append(tree)
        rows.append(problem.exact_rows)
    t0, t1 = trees
    assert t0.node_count > 3
    assert_array_equal(t0.feature, t1.feature)
    assert_array_equal(t0.threshold, t1.threshold)
    assert_array_equal(t0.decision, t1.decision)
    np.testing.assert_allclose(t0.loss, t1.loss, rtol=1e-9, atol=1e-12)
    # The bounds settle most candidates without the exact oracle.
    assert rows[1] < 0.5 * rows[0], rows


def test_relaxation_must_not_exceed_the_exact_value():
    # The relaxation really is one: checked here, relied upon by BoundedOracle.
    problem = Knapsack01()
    C = np.random.default_rng(0).normal(size=(200, WEIGHTS.size))
    z = problem.solve(C)[1]
    zr = problem.relaxation().solve(C)[1]
    assert (zr >= z - 1e-12).all()


def test_a_compiled_solver_that_gives_up_falls_back_to_an_exact_solve():
    from spotree import SPOTree
    from spotree.problems import Knapsack

    # Small (80 rows, 12 items, 8 thresholds per feature): every oracle call
    # of the exact fit is a HiGHS MILP.
    rng = np.random.default_rng(4)
    weights = rng.uniform(3, 8, size=(2, 12)).round(2)
    caps = 0.5 * weights.sum(axis=1)
    X = rng.normal(size=(80, 3))
    C = np.exp(0.3 * rng.normal(size=(80, 12)) + 0.4 * X[:, :1])
    params = dict(max_depth=2, min_samples_leaf=10, thresholds=8)
    exact = SPOTree(Knapsack(weights, caps, method="highs"), **params).fit(X, C)
    # A search limit so small that the branch and bound gives up on most rows.
    limited = Knapsack(weights, caps, method="bb", max_nodes=3)
    assert limited.compiled_oracle() is not None
    W = np.empty((len(C), 12))
    from spotree.problems._compiled import solve_rows
    assert np.isnan(solve_rows(limited.compiled_oracle(), -C, W)).any()  # it does give up
    tree = SPOTree(limited, **params).fit(X, C)
    assert exact.get_n_leaves() >= 3  # splits to compare, not a single leaf
    assert_array_equal(tree.tree_.feature, exact.tree_.feature)
    assert_array_equal(tree.tree_.threshold, exact.tree_.threshold)
    assert_array_equal(tree.predict_decision(X), exact.predict_decision(X))
