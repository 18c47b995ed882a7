"""Missing values (NaN in X): routing at predict time, and trees that use them.

The split search with missing values is checked against the brute-force
reference builder in test_builder.py; here the estimator level.
"""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from spotree import SPOForest, SPOTree
from spotree.problems import FiniteDecisions, ShortestPath


def _roads_data(n=400, seed=0, missing_rate=0.3):
    """Two roads; road 0 is cheap exactly when x0 > 0.5, and x0 is missing at random."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    C = np.column_stack([np.where(X[:, 0] > 0.5, 1.0, 3.0), np.full(n, 2.0)])
    C = C + rng.normal(scale=0.1, size=C.shape)
    X[rng.uniform(size=n) < missing_rate, 0] = np.nan
    return X, C


def test_missing_rows_are_routed_by_the_stored_side():
    X, C = _roads_data()
    tree = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(X, C)
    t = tree.tree_
    assert t.feature[0] == 0
    miss = np.isnan(X[:, 0])
    leaves = tree.apply(X)
    side = t.children_left[0] if t.missing_go_to_left[0] else t.children_right[0]
    assert (leaves[miss] == side).all()
    # The training rows missing x0 are all in that leaf.
    assert t.n_node_samples[side] >= miss.sum()


def test_missing_side_is_the_better_one_for_the_criterion():
    # Rows missing x0 all have road 0 cheap: they belong with x0 > 0.5.
    rng = np.random.default_rng(3)
    X, C = _roads_data(missing_rate=0.0, seed=3)
    extra = 80
    Xm = np.column_stack([np.full(extra, np.nan), rng.uniform(size=extra)])
    Cm = np.column_stack([np.ones(extra), np.full(extra, 2.0)])
    X, C = np.vstack([X, Xm]), np.vstack([C, Cm])
    tree = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(X, C)
    t = tree.tree_
    assert t.feature[0] == 0
    # Left is x0 <= threshold (road 1 cheap): missing rows must go right.
    assert t.missing_go_to_left[0] == 0
    assert_array_equal(tree.predict_decision(Xm), np.tile([1.0, 0.0], (extra, 1)))


def test_missing_at_predict_on_a_feature_complete_at_fit_goes_to_the_heavier_child():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(300, 2))
    X[:, 0] = np.where(rng.uniform(size=300) < 0.8, X[:, 0] * 0.4, 0.6 + X[:, 0] * 0.4)
    C = np.column_stack([np.where(X[:, 0] > 0.5, 1.0, 3.0), np.full(300, 2.0)])
    tree = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(X, C)
    t = tree.tree_
    assert t.feature[0] == 0
    l, r = t.children_left[0], t.children_right[0]
    heavier = l if t.weighted_n_node_samples[l] >= t.weighted_n_node_samples[r] else r
    Xq = np.array([[np.nan, 0.3]])
    assert tree.apply(Xq)[0] == heavier


def test_a_split_on_missingness_alone():
    # Whether x0 is missing decides which road is cheap; its value does not.
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(200, 1))
    miss = rng.uniform(size=200) < 0.4
    X[miss, 0] = np.nan
    C = np.column_stack([np.where(miss, 1.0, 3.0), np.full(200, 2.0)])
    tree = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(X, C)
    t = tree.tree_
    assert t.node_count == 3 and t.threshold[0] == np.inf
    assert t.missing_go_to_left[0] == 0
    assert tree.score(X, C) == pytest.approx(0.0, abs=1e-12)


def test_forest_with_missing_values_fits_and_predicts():
    X, C = _roads_data(seed=5)
    forest = SPOForest(FiniteDecisions(np.eye(2)), n_estimators=10, max_features=None,
                       min_samples_leaf=5, random_state=0).fit(X, C)
    Xq = np.array([[np.nan, 0.5], [0.9, np.nan], [0.1, 0.2]])
    P = forest.predict(Xq)
    expected = np.mean([est.predict(Xq) for est in forest.estimators_], axis=0)
    np.testing.assert_allclose(P, expected, rtol=1e-12)
    # With x0 = 0.9 road 0 is cheap, with x0 = 0.1 road 1.
    assert_array_equal(forest.predict_decision(Xq[1:]), [[1.0, 0.0], [0.0, 1.0]])


def test_missing_values_survive_pruning_and_pickling():
    import pickle

    X, C = _roads_data(seed=7)
    sp = ShortestPath((2, 2))
    Cs = np.column_stack([C[:, 0], C[:, 0], C[:, 1], C[:, 1]])
    tree = SPOTree(sp, min_samples_leaf=10).fit(X, Cs)
    pruned = tree.prune(X[:100], Cs[:100])
    again = pickle.loads(pickle.dumps(pruned))
    assert_array_equal(again.apply(X), pruned.apply(X))
    assert_array_equal(again.tree_.missing_go_to_left, pruned.tree_.missing_go_to_left)


def test_missing_at_predict_goes_left_when_the_children_weigh_the_same():
    # Both children of the root hold 50 rows of weight 1: a tie, broken to the
    # left (the "<=" side of the threshold).
    x = np.r_[np.linspace(0.0, 0.4, 50), np.linspace(0.6, 1.0, 50)]
    X = np.column_stack([x, np.zeros(100)])
    C = np.column_stack([np.where(x > 0.5, 1.0, 3.0), np.full(100, 2.0)])
    tree = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(X, C)
    t = tree.tree_
    assert t.feature[0] == 0
    l, r = t.children_left[0], t.children_right[0]
    assert t.weighted_n_node_samples[l] == t.weighted_n_node_samples[r] == 50
    assert t.missing_go_to_left[0] == 1
    assert tree.apply(np.array([[np.nan, 0.0]]))[0] == l
    # The same with unequal weights that still tie in sum.
    w = np.r_[np.full(50, 2.0), np.full(25, 4.0), np.full(25, 0.0)]
    tree = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(X, C, sample_weight=w)
    t = tree.tree_
    l, r = t.children_left[0], t.children_right[0]
    assert t.weighted_n_node_samples[l] == t.weighted_n_node_samples[r] == 100
    assert tree.apply(np.array([[np.nan, 0.0]]))[0] == l
