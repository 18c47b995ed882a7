"""The oracle path with bounds (slow exact oracle, cheap relaxation) grows the same tree."""

import itertools

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from spotree.problems import CallableProblem, FiniteDecisions
from spotree.tree._builder import grow_tree
from spotree.tree._fit_data import FitData
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


class _TwoRoadsRelaxation:
    """min(c0, c1) (the two roads' exact value) as a 'relaxation', plus ``excess``.

    A relaxation as tight as the problem itself, or (``excess`` > 0) one whose
    bound overshoots the exact value by a solver's rounding error.
    """

    def __init__(self, excess=0.0):
        self.excess = excess

    def solve(self, C):
        C = np.asarray(C, dtype=float)
        W = np.eye(2)[np.argmin(C, axis=1)]
        return W, C.min(axis=1) * (1.0 + self.excess)


def _tie_case(excess):
    """BoundedOracle on a node whose two candidate splits tie exactly.

    Rows of R: the parent, then each candidate's left and right child mean
    costs. The parent's decision (road 0) is the only one in the pool, so the
    upper bound of a row is its road-0 cost.
    - candidate 0: children (2, 1) and (1, 2): exact 1 + 1 = 2, upper 2 + 1 = 3;
    - candidate 1: children (1, 3) and (1, 3): exact 2, upper 2.
    The best upper bound is candidate 1's 2, which candidate 0 ties exactly.
    """
    problem = FiniteDecisions(np.eye(2))
    X = np.zeros((4, 1))
    C = np.array([[1.0, 2.0], [2.0, 1.0], [1.0, 3.0], [1.0, 3.0]])
    data = FitData(problem, X, C, np.zeros(1, dtype=bool), path="oracle")
    # R is in the fit's scaled units; min(c0, c1) is linear, so the exact
    # values are min(r0, r1) in those units too.
    R = np.array([[1.0, 2.0], [2.0, 1.0], [1.0, 2.0], [1.0, 3.0], [1.0, 3.0]])
    handler = BoundedOracle(data, _TwoRoadsRelaxation(excess))
    _, z = handler(R, np.ones(5), 0.0, 1.0, 1.0, 0.0, 0.0)
    return z


@pytest.mark.parametrize("excess", [0.0, 1e-12])
def test_bounded_oracle_solves_candidates_that_tie_with_the_best(excess):
    # Candidate 0 could be the best (its lower bound equals the best upper
    # bound, or exceeds it by rounding only): it must get exact values, or
    # the split search would break the tie differently than with every value
    # exact. Exact values by hand: min(c0, c1) per row.
    z = _tie_case(excess)
    np.testing.assert_array_equal(z, [1.0, 1.0, 1.0, 1.0, 1.0])


def test_sweep_order_puts_the_node_first_and_neighbouring_children_together():
    from spotree.tree._oracle import sweep_order

    for m in (1, 3, 11):
        order = sweep_order(m)
        assert order[0] == 0 and sorted(order) == list(range(m))
    # Children of thresholds along two sorted features, as the sweep queues
    # them: in this order consecutive rows differ by the rows between two
    # thresholds, far less than in the queue's own order (left and right
    # children alternate).
    rng = np.random.default_rng(0)
    C = rng.uniform(size=(200, 4))
    R = [C.mean(axis=0)]
    for f in range(2):
        S = np.cumsum(C[rng.permutation(200)], axis=0)
        for k in range(10, 190, 10):
            R += [S[k - 1] / k, (S[-1] - S[k - 1]) / (200 - k)]
    R = np.array(R)
    order = sweep_order(len(R))
    step = np.abs(np.diff(R[order], axis=0)).sum()
    assert step < 0.5 * np.abs(np.diff(R, axis=0)).sum()  # 0.37 here


def test_batched_oracle_returns_values_in_request_order():
    # Vertices of a small finite problem; the exact values by hand:
    # min over the vertices of r . v for each requested row r.
    V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 1))
    data = FitData(FiniteDecisions(V), X, rng.uniform(size=(20, 3)), np.zeros(1, dtype=bool),
                   path="oracle")
    R = rng.normal(size=(11, 3))
    w0, z = BatchedOracle(data)(R, np.ones(11), np.zeros(5), 1.0, 1.0, np.zeros(5), 0.0)
    np.testing.assert_allclose(z, (R @ V.T).min(axis=1), rtol=1e-12, atol=1e-12)
    assert_array_equal(w0, V[np.argmin(V @ R[0])])


def _random_lp(seed, d=8):
    from spotree.problems import LinearProgram

    rng = np.random.default_rng(seed)
    A = rng.uniform(0.2, 1.0, size=(3, d))
    x0 = rng.uniform(0.2, 0.8, d)
    return LinearProgram(A_ub=A, b_ub=A @ x0, A_eq=np.ones((1, d)), b_eq=[x0.sum()],
                         bounds=(0, 1))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("a", [1.0, 0.6])
def test_dual_bounds_grow_the_same_tree_as_every_candidate_solved(seed, a):
    from spotree.tree._oracle import DualBoundOracle, make_oracle_handler

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(160, 3))
    C = np.exp(0.3 * rng.normal(size=(160, 8)) + 0.6 * X[:, :1] * np.linspace(-1, 1, 8))
    problem = _random_lp(seed)
    trees, handlers = [], []
    for kind in ("plain", "dual"):
        data = FitData(problem, X, C, np.zeros(3, dtype=bool), path="oracle")
        handler = BatchedOracle(data) if kind == "plain" else make_oracle_handler(data)
        tree, _, _ = grow_tree(data, np.ones(len(X)), np.ones(len(X)), a=a, max_depth=2,
                               min_leaf_cnt=10, min_leaf_w=0.0, min_split_cnt=2,
                               max_features=None, n_quantiles=0, min_loss_decrease=0.0,
                               seed=0, oracle_handler=handler)
        trees.append(tree)
        handlers.append(handler)
    t0, t1 = trees
    dual = handlers[1]
    assert isinstance(dual, DualBoundOracle)
    assert t0.node_count > 3
    assert_array_equal(t0.feature, t1.feature)
    assert_array_equal(t0.threshold, t1.threshold)
    np.testing.assert_allclose(t0.decision, t1.decision, atol=1e-9)
    np.testing.assert_allclose(t0.loss, t1.loss, rtol=1e-9, atol=1e-12)
    # The bounds settled candidates without solving them.
    assert dual.n_bounded > dual.n_exact, (dual.n_bounded, dual.n_exact)
