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
    (([0, -1], [1, -1], [0, -2], [0.5, -2]),
     r"children_left\[0\] must be -1 or a node id in \[1, 1\] \(children are numbered after"),
    (([1, -1, -1], [3, -1, -1], [0, -2, -2], [0.5, -2, -2]),
     r"children_right\[0\] must be -1 or a node id in \[1, 2\]"),
    (([1, -1, -1], [-1, -1, -1], [0, -2, -2], [0.5, -2, -2]),
     r"children_right\[0\] must be -1 exactly when children_left\[0\] is -1"),
    (([1, -1, -1], [2, -1, -1], [3, -2, -2], [0.5, -2, -2]),
     r"feature\[0\] must be a feature index in \[0, 0\] at a split node; got 3"),
    (([1, -1, -1], [2, -1, -1], [0, -2, -2], [np.nan, -2, -2]),
     r"threshold\[0\] must be a number \(or \+inf, the split of present from missing "
     r"values\) at a split node; got nan"),
    # Accepted before, although a model file refuses it (so the tree could be
    # saved but not loaded back).
    (([1, -1, -1], [2, -1, -1], [0, -2, -2], [-np.inf, -2, -2]),
     r"threshold\[0\] must be a number \(or \+inf.*got -inf"),
    (([1, -1, 2, -1], [2, -1, 3, -1], [0, -2, 0, -2], [0.5, -2, 0.2, -2]),
     r"children_left\[2\] must be -1 or a node id in \[3, 3\]"),
    (([1, -1, -1, -1], [2, -1, -1, -1], [0, -2, -2, -2], [0.5, -2, -2, -2]),
     r"children_left and children_right never point to node 3: it cannot be reached"),
    (([1, 3, -1, -1], [2, 3, -1, -1], [0, 0, -2, -2], [0.5, 0.2, -2, -2]),
     r"children_right\[1\] points to node 3, which is already the child of node 1"),
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


def _is_tree_by_hand(left, right, feat, thr, n_features):
    """Whether the arrays are one binary tree from node 0, children numbered after
    parents, splits on a feature in range at a non-NaN threshold: a walk from the
    root that must meet every node exactly once."""
    n = len(left)
    seen = [0] * n
    stack = [0]
    while stack:
        t = stack.pop()
        if seen[t]:
            return False
        seen[t] = 1
        if (left[t] == -1) != (right[t] == -1):
            return False
        if left[t] != -1:
            for c in (left[t], right[t]):
                if not t < c < n:
                    return False
                stack.append(c)
            if not 0 <= feat[t] < n_features or thr[t] != thr[t]:
                return False
    return all(seen)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), edits=st.integers(0, 2))
def test_a_structure_is_accepted_exactly_when_it_is_a_tree_and_then_saves_and_loads(seed,
                                                                                    edits):
    # Random trees, some with an entry edited to another node id, a leaf or a
    # feature out of range. tree_from_structure accepts exactly the trees (by
    # the walk above), and every tree it accepts survives to_dict/from_dict
    # (the two used to disagree on unreachable nodes).
    from spotree.tree._tree import Tree

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(12, 2))
    C = rng.uniform(size=(12, 2))
    left, right, feat, thr = _random_structure(rng, X, max_depth=3)
    n = len(left)
    for _ in range(edits):
        arr = [left, right, feat][int(rng.integers(3))]
        arr[int(rng.integers(n))] = int(rng.integers(-1, n + 1))
    problem = FiniteDecisions(np.eye(2))
    ok = _is_tree_by_hand(left, right, feat, thr, X.shape[1])
    if not ok:
        with pytest.raises(ValueError):
            tree_from_structure(left, right, feat, thr, X, C, None, problem)
        return
    tree = tree_from_structure(left, right, feat, thr, X, C, None, problem)
    back = Tree.from_dict(tree.to_dict())
    for name in ("children_left", "children_right", "feature", "threshold", "value",
                 "decision", "loss", "n_node_samples", "missing_go_to_left"):
        np.testing.assert_array_equal(getattr(back, name), getattr(tree, name))


def test_unreachable_node_is_refused_by_both_validators():
    # The case: node 3 is nobody's child.
    from spotree._schema import SchemaError
    from spotree.tree._tree import Tree

    args = ([1, -1, -1, -1], [2, -1, -1, -1], [0, -2, -2, -2], [0.5, -2, -2, -2])
    X, C = np.array([[0.0], [1.0]]), np.ones((2, 2))
    with pytest.raises(SchemaError, match="never point to node 3"):
        tree_from_structure(*args, X, C, None, FiniteDecisions(np.eye(2)))
    good = tree_from_structure([1, -1, -1], [2, -1, -1], [0, -2, -2], [0.5, -2, -2], X, C,
                               None, FiniteDecisions(np.eye(2))).to_dict()
    bad = dict(good, children_left=args[0], children_right=args[1], feature=args[2],
               threshold=args[3], **{k: good[k] + good[k][-1:] for k in (
                   "n_node_samples", "impurity", "loss", "weighted_n_node_samples", "value",
                   "decision", "categories", "missing_go_to_left")})
    with pytest.raises(SchemaError, match=r"tree.children_left and children_right never "
                                          r"point to node 3"):
        Tree.from_dict(bad)
