"""tree_from_structure: every stored node quantity against a brute-force recomputation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spotree.datasets import make_shortest_path
from spotree.problems import FiniteDecisions, ShortestPath
from spotree.tree._structure import node_samples, tree_from_structure


def _random_structure(rng, X, max_depth):
    """A random tree with thresholds at observed values, built parents-first."""
    left, right, feat, thr = [-1], [-1], [-2], [-2.0]
    depth = [0]
    t = 0
    while t < len(left):
        if depth[t] < max_depth and rng.random() < 0.7:
            j = int(rng.integers(X.shape[1]))
            feat[t], thr[t] = j, float(rng.choice(X[:, j]))
            for side in (left, right):
                side[t] = len(feat)
                left.append(-1)
                right.append(-1)
                feat.append(-2)
                thr.append(-2.0)
                depth.append(depth[t] + 1)
        t += 1
    return np.array(left), np.array(right), np.array(feat), np.array(thr)


def _check_node(tree, t, X, C, w, problem, z):
    """Recompute node t's members, mean, decision and SPO loss from scratch."""
    member = np.ones(X.shape[0], dtype=bool)
    # Walk every sample down to see whether it passes through node t.
    for i in range(X.shape[0]):
        u, visited = 0, {0}
        while tree.children_left[u] != -1:
            f, th = tree.feature[u], tree.threshold[u]
            u = tree.children_left[u] if X[i, f] <= th else tree.children_right[u]
            visited.add(u)
        member[i] = t in visited
    assert tree.n_node_samples[t] == member.sum()
    assert tree.weighted_n_node_samples[t] == pytest.approx(w[member].sum())
    if w[member].sum() == 0:
        assert tree.loss[t] == 0.0
        return
    mean = (w[member, None] * C[member]).sum(axis=0) / w[member].sum()
    np.testing.assert_allclose(tree.value[t], mean, rtol=1e-12, atol=1e-12)
    dec, _ = problem.solve(mean[None, :])
    np.testing.assert_allclose(tree.decision[t], dec[0])
    regret = problem.sign * (C[member] @ dec[0] - z[member])
    assert tree.loss[t] == pytest.approx((w[member] * regret).sum(), rel=1e-10, abs=1e-10)
    assert tree.impurity[t] == tree.loss[t]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), sense=st.sampled_from(["min", "max"]))
def test_every_node_matches_brute_force(seed, sense):
    rng = np.random.default_rng(seed)
    X, C = make_shortest_path(30, n_features=3, grid=(3, 3), noise=0.5, random_state=seed)
    problem = ShortestPath((3, 3), sense=sense)
    w = rng.integers(0, 4, size=30).astype(float)
    w[0] = 1.0
    structure = _random_structure(rng, X, 3)
    _, z = problem.solve(C)
    tree = tree_from_structure(*structure, X, C, w, problem)
    for t in range(tree.node_count):
        _check_node(tree, t, X, C, w, problem, z)
    # Leaves partition the samples.
    assert tree.n_node_samples[tree.is_leaf].sum() == X.shape[0]


def test_empty_node_inherits_parent_prediction():
    X = np.array([[0.0], [1.0], [2.0]])
    C = np.array([[1.0, 2.0], [3.0, 1.0], [2.0, 2.0]])
    problem = FiniteDecisions(np.eye(2))
    # The root's right child splits at 5.0: its own right child receives nothing.
    tree = tree_from_structure([1, -1, 3, -1, -1], [2, -1, 4, -1, -1], [0, -2, 0, -2, -2],
                               [0.5, -2, 5.0, -2, -2], X, C, None, problem)
    assert tree.n_node_samples.tolist() == [3, 1, 2, 2, 0]
    np.testing.assert_allclose(tree.value[4], tree.value[2])
    np.testing.assert_allclose(tree.decision[4], tree.decision[2])
    assert tree.loss[4] == 0.0
    # Predicting for a point landing in the empty leaf returns its parent's mean.
    assert tree.apply(np.array([[7.0]]))[0] == 4


def test_node_samples_is_a_partition_per_level():
    X, _ = make_shortest_path(20, n_features=2, random_state=0)
    member = node_samples([1, -1, -1], [2, -1, -1], [1, -2, -2], [0.5, -2, -2], X)
    assert member[0].all()
    np.testing.assert_array_equal(member[1], X[:, 1] <= 0.5)
    np.testing.assert_array_equal(member[1] ^ member[2], member[0])


@pytest.mark.parametrize("args, match", [
    (([1, -1, -1], [2, -1], [0, -2, -2], [0.5, -2, -2]), "children_right must have"),
    (([0, -1], [1, -1], [0, -2], [0.5, -2]), "larger than its parent"),
    (([1, -1, -1], [-1, -1, -1], [0, -2, -2], [0.5, -2, -2]), "both TREE_LEAF"),
    (([1, -1, -1], [2, -1, -1], [3, -2, -2], [0.5, -2, -2]), "feature must be in"),
    (([1, -1, -1], [2, -1, -1], [0, -2, -2], [np.nan, -2, -2]), "threshold must be a number"),
    (([], [], [], []), "at least one node"),
])
def test_malformed_structures_are_rejected(args, match):
    X = np.zeros((3, 1))
    C = np.ones((3, 2))
    with pytest.raises(ValueError, match=match):
        tree_from_structure(*args, X, C, None, FiniteDecisions(np.eye(2)))


def test_rejects_mismatched_rows():
    with pytest.raises(ValueError, match="same number of rows"):
        tree_from_structure([-1], [-1], [-2], [-2.0], np.zeros((3, 1)), np.ones((2, 2)), None,
                            FiniteDecisions(np.eye(2)))
