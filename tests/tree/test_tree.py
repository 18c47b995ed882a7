"""The fitted tree's flat arrays: routing, the weakest-link pruning sequence, dict I/O."""

import json

import numpy as np
import pytest

from spotree import SPOTree
from spotree.datasets import make_shortest_path
from spotree.problems import FiniteDecisions, ShortestPath
from spotree.tree import Tree


def _fitted(seed, max_depth=3, criterion="spo", problem=None, n=80, categorical=False):
    problem = ShortestPath((3, 3)) if problem is None else problem
    X, C = make_shortest_path(n, n_features=3, grid=(3, 3), noise=0.5, random_state=seed)
    if categorical:
        X[:, 0] = np.floor(X[:, 0] * 4)
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 4, size=n).astype(float)
    est = SPOTree(problem, max_depth=max_depth, criterion=criterion,
                  categorical_features=[0] if categorical else None).fit(X, C, w)
    return est, X, C, w


def _walk(t, x):
    """Nodes visited by one sample, walking the arrays by hand."""
    u, path = 0, [0]
    while t.children_left[u] != -1:
        f = t.feature[u]
        if np.isnan(x[f]):
            go_left = bool(t.missing_go_to_left[u])
        elif t.categories[u].size:
            go_left = x[f] in set(t.categories[u].tolist())
        else:
            go_left = x[f] <= t.threshold[u]
        u = t.children_left[u] if go_left else t.children_right[u]
        path.append(u)
    return path


# ------------------------------------------------------------------ routing
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("categorical", [False, True])
def test_apply_and_decision_path_match_a_manual_walk(seed, categorical):
    est, X, _, _ = _fitted(seed, max_depth=4, categorical=categorical)
    t = est.tree_
    rng = np.random.default_rng(seed)
    Xq = np.vstack([X, rng.uniform(-0.5, 1.5, size=(30, 3))])
    if categorical:
        Xq[:, 0] = rng.integers(-1, 6, size=Xq.shape[0])  # includes unseen codes
    # Missing values in every column (the tree was fitted without any: they
    # follow each node's stored side), and a column-major copy.
    Xq[rng.random(Xq.shape) < 0.15] = np.nan
    Xq = np.asfortranarray(Xq)
    leaves = t.apply(Xq)
    P = t.decision_path(Xq).toarray()
    assert P.shape == (Xq.shape[0], t.node_count)
    for i, x in enumerate(Xq):
        path = _walk(t, x)
        assert leaves[i] == path[-1]
        assert set(np.flatnonzero(P[i])) == set(path)
    assert t.is_leaf[leaves].all()


def test_apply_matches_a_manual_walk_on_edge_values_and_rebuilt_trees():
    # Subset splits of two categorical features; rows with +-inf, -0.0, NaN and
    # unseen codes, routed by the compiled walk of apply, of the tree, of its
    # JSON and pickle copies and of every pruned subtree (new Trees, own caches).
    import pickle

    rng = np.random.default_rng(3)
    X, C = make_shortest_path(120, n_features=3, grid=(3, 3), noise=0.5, random_state=3)
    X[:, :2] = np.floor(X[:, :2] * 5) - 2  # codes -2..2, 0.0 among them
    t = SPOTree(ShortestPath((3, 3)), max_depth=5, categorical_features=[0, 1],
                categorical_splits="subset").fit(X, C).tree_
    assert any(c.size > 1 for c in t.categories)  # a split sends several codes left
    Xq = np.vstack([X, rng.uniform(-3, 4, size=(60, 3))])
    Xq[120:, :2] = rng.integers(-4, 5, size=(60, 2))  # unseen codes -4, -3, 3, 4
    for value, share in ((np.nan, 0.1), (np.inf, 0.05), (-np.inf, 0.05), (-0.0, 0.1)):
        Xq[rng.random(Xq.shape) < share] = value
    # Rows exactly at each numeric threshold (x <= threshold goes left).
    numeric = np.flatnonzero((t.children_left != -1) & np.isfinite(t.threshold)
                             & (t.threshold != -2))
    at = np.repeat(Xq[:1], numeric.size, axis=0)
    at[np.arange(numeric.size), t.feature[numeric]] = t.threshold[numeric]
    Xq = np.vstack([Xq, at])
    trees = [t, Tree.from_dict(json.loads(json.dumps(t.to_dict()))),
             pickle.loads(pickle.dumps(t))]
    trees += [t.pruned(mask) for mask in t.pruning_sequence()[1][1:]]
    for u in trees:
        expected = [_walk(u, x)[-1] for x in Xq]
        np.testing.assert_array_equal(u.apply(Xq), expected)
        np.testing.assert_array_equal(u.apply(Xq[::-1].tolist()), expected[::-1])


def test_shape_properties():
    est, X, _, _ = _fitted(0, max_depth=3)
    t = est.tree_
    depth = t.node_depth()
    assert depth[0] == 0
    assert t.max_depth == depth.max() <= 3
    assert t.n_leaves == t.is_leaf.sum() == (t.node_count + 1) // 2
    parent = t.parent()
    assert parent[0] == -1
    for u in range(1, t.node_count):
        p = parent[u]
        assert u in (t.children_left[p], t.children_right[p])
        assert depth[u] == depth[p] + 1


def test_a_value_equal_to_the_threshold_goes_left():
    # Left when x <= threshold (documented). Between neighbouring floats the
    # midpoint rounds to the lower value, which is then the threshold itself:
    # the training rows must still reach the leaves they were scored in.
    lo = 1.0
    hi = np.nextafter(lo, 2.0)
    X = np.array([[lo], [lo], [hi], [hi]])
    C = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0], [2.0, 1.0]])
    t = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(X, C).tree_
    assert t.threshold[0] == lo
    np.testing.assert_array_equal(t.apply(X), [1, 1, 2, 2])
    np.testing.assert_array_equal(t.apply(np.array([[0.5], [2.0]])), [1, 2])


# ------------------------------------------------------------------ pruning
def _all_prunings(t, node=0):
    """Every pruned subtree rooted at ``node``, as frozensets of its leaves."""
    if t.children_left[node] == -1:
        return [frozenset([node])]
    out = [frozenset([node])]
    for a in _all_prunings(t, t.children_left[node]):
        for b in _all_prunings(t, t.children_right[node]):
            out.append(a | b)
    return out


def _kept_nodes(t, leaf_mask):
    keep, stack = set(), [0]
    while stack:
        u = stack.pop()
        keep.add(u)
        if not leaf_mask[u] and t.children_left[u] != -1:
            stack += [t.children_left[u], t.children_right[u]]
    return keep


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("criterion", ["spo", "mse"])
def test_pruning_sequence_is_breimans_smallest_optimal_subtrees(seed, criterion):
    est, _, _, _ = _fitted(seed, max_depth=4, criterion=criterion, n=60)
    t = est.tree_
    R = t.impurity
    alphas, masks, losses = t.pruning_sequence()
    assert alphas[0] == 0.0
    assert np.all(np.diff(alphas) >= 0)
    assert masks[0].sum() == t.n_leaves and masks[-1][0]  # whole tree ... root alone
    subtrees = [(sum(R[u] for u in s), len(s)) for s in _all_prunings(t)]
    costs = np.array([c for c, _ in subtrees])
    sizes = np.array([k for _, k in subtrees])
    scale = max(R[0], 1e-12)
    for i, mask in enumerate(masks):
        kept = _kept_nodes(t, mask)
        leaves = [u for u in kept if mask[u] or t.children_left[u] == -1]
        assert losses[i] == pytest.approx(sum(R[u] for u in leaves), rel=1e-9, abs=1e-12)
        nxt = alphas[i + 1] if i + 1 < len(alphas) else 2 * alphas[i] + 1.0
        for alpha in (alphas[i], 0.5 * (alphas[i] + nxt)):
            total = costs + alpha * sizes
            best = total.min()
            assert losses[i] + alpha * len(leaves) == pytest.approx(best, rel=1e-9,
                                                                    abs=1e-9 * scale)
            # Breiman's T(alpha) is the smallest subtree attaining the minimum; a
            # repeated alpha (zero-gain splits at alpha 0) means a later entry is it.
            if nxt > alphas[i]:
                assert len(leaves) == sizes[total <= best + 1e-9 * scale].min()
        if i + 1 < len(masks):
            assert _kept_nodes(t, masks[i + 1]) <= kept  # nested
    # Training loss only grows as the tree shrinks.
    assert np.all(np.diff(losses) >= -1e-9 * scale)


def test_pruning_sequence_on_custom_node_losses():
    est, _, _, _ = _fitted(1, max_depth=3)
    t = est.tree_
    rng = np.random.default_rng(0)
    # Any node losses with children summing below their parent give a valid sequence.
    R = np.zeros(t.node_count)
    for u in range(t.node_count - 1, -1, -1):
        if t.children_left[u] == -1:
            R[u] = rng.uniform(0, 1)
        else:
            R[u] = R[t.children_left[u]] + R[t.children_right[u]] + rng.uniform(0, 1)
    alphas, masks, losses = t.pruning_sequence(R)
    subtrees = [(sum(R[u] for u in s), len(s)) for s in _all_prunings(t)]
    for i, mask in enumerate(masks):
        nxt = alphas[i + 1] if i + 1 < len(alphas) else 2 * alphas[i] + 1.0
        alpha = 0.5 * (alphas[i] + nxt)
        best = min(c + alpha * k for c, k in subtrees)
        assert losses[i] + alpha * (t.pruned(mask).n_leaves) == pytest.approx(best)
    assert np.all(np.diff(alphas) > 0)


@pytest.mark.parametrize("seed", range(3))
def test_pruned_tree_routes_like_the_cut_original(seed):
    est, X, _, _ = _fitted(seed, max_depth=4)
    t = est.tree_
    _, masks, _ = t.pruning_sequence()
    for mask in masks:
        p = t.pruned(mask)
        assert p.n_leaves == len([u for u in _kept_nodes(t, mask)
                                  if mask[u] or t.children_left[u] == -1])
        # Each sample lands where its original path first meets a cut node.
        expected = []
        for x in X:
            path = _walk(t, x)
            stop = next(u for u in path if mask[u] or t.children_left[u] == -1)
            expected.append(stop)
        expected = np.asarray(expected)
        got = p.apply(X)
        np.testing.assert_array_equal(p.value[got], t.value[expected])
        np.testing.assert_array_equal(p.decision[got], t.decision[expected])
        np.testing.assert_array_equal(p.n_node_samples[got], t.n_node_samples[expected])


def test_pruned_does_not_modify_the_original():
    est, X, _, _ = _fitted(0, max_depth=4)
    t = est.tree_
    before = t.to_dict()
    _, masks, _ = t.pruning_sequence()
    t.pruned(masks[len(masks) // 2])
    assert t.to_dict() == before


def _hand_tree(R, weights=None):
    """Root 0 -> (1, 2), 1 -> (3, 4), 2 -> (5, 6), with node losses R."""
    left = [1, 3, 5, -1, -1, -1, -1]
    right = [2, 4, 6, -1, -1, -1, -1]
    n = len(left)
    w = np.full(n, 4.0) if weights is None else np.asarray(weights, dtype=float)
    return Tree(n_features=1, n_outputs=1, children_left=left, children_right=right,
                feature=[0, 0, 0, -2, -2, -2, -2],
                threshold=[0.5, 0.25, 0.75, -2.0, -2.0, -2.0, -2.0],
                value=np.zeros(n), decision=np.zeros(n), loss=R, impurity=R,
                n_node_samples=w.astype(int), weighted_n_node_samples=w)


def test_links_tied_as_the_weakest_are_pruned_together():
    # Nodes 1 and 2 gain 3 - (1 + 1) = 1 each (exact in floats); the root
    # (10 - 6) / (2 - 1) = 4 once they are pruned. By hand, the smallest
    # subtree minimizing R + alpha |leaves| is the whole tree below alpha 1,
    # the root's two children from 1 to 4, the root alone after: a subtree
    # with one of the tied links pruned (3 leaves) is never the smallest
    # optimal one.
    t = _hand_tree(np.array([10.0, 3.0, 3.0, 1.0, 1.0, 1.0, 1.0]))
    alphas, masks, losses = t.pruning_sequence()
    np.testing.assert_array_equal(alphas, [0.0, 1.0, 4.0])
    assert [t.pruned(m).n_leaves for m in masks] == [4, 2, 1]
    np.testing.assert_array_equal(losses, [4.0, 6.0, 10.0])


def test_a_tree_stored_without_missing_sides_sends_missing_values_to_the_heavier_child():
    # Files written before missing-value support: as the growth decides where
    # no training row missed the feature, the heavier child, left on a tie.
    R = np.zeros(7)
    t = _hand_tree(R, weights=[6.0, 3.0, 3.0, 1.0, 2.0, 2.0, 1.0])
    np.testing.assert_array_equal(t.missing_go_to_left, [1, 0, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(t.apply(np.array([[np.nan]])), [4])


# --------------------------------------------------------------- dict I/O
@pytest.mark.parametrize("categorical", [False, True])
def test_to_dict_from_dict_round_trip_through_json(categorical):
    est, X, _, _ = _fitted(2, max_depth=4, categorical=categorical)
    t = est.tree_
    t2 = Tree.from_dict(json.loads(json.dumps(t.to_dict())))
    for name in ("children_left", "children_right", "feature", "threshold", "value",
                 "decision", "loss", "impurity", "n_node_samples",
                 "weighted_n_node_samples"):
        np.testing.assert_array_equal(getattr(t2, name), getattr(t, name), err_msg=name)
    assert all(np.array_equal(a, b) for a, b in zip(t.categories, t2.categories))
    np.testing.assert_array_equal(t2.apply(X), t.apply(X))


def _tampered(t, **changes):
    d = json.loads(json.dumps(t.to_dict()))
    d.update(changes)
    return d


def test_from_dict_rejects_malformed_trees():
    est, _, _, _ = _fitted(0, max_depth=2)
    t = est.tree_
    d = t.to_dict()
    left = list(d["children_left"])
    n = len(left)
    bad = [
        (_tampered(t, children_left=[n + 5] + left[1:]),
         rf"tree\.children_left\[0\] must be an int in \[-1, {n - 1}\]; got {n + 5}"),
        (_tampered(t, children_left=[0] + left[1:]),  # a loop back to itself
         r"tree\.children_left\[0\] must be -1 or a node id in \[1, "),
        (_tampered(t, children_right=[-1] + d["children_right"][1:]),  # one child only
         r"tree\.children_right\[0\] must be -1 exactly when children_left\[0\] is -1"),
        (_tampered(t, feature=[t.n_features] + d["feature"][1:]),  # unknown feature
         r"tree\.feature\[0\] must be an int in \[-2, "),
        (_tampered(t, value=d["value"][:-1]),  # wrong shape
         rf"tree\.value must have {n} rows \(one per node\); got {n - 1}"),
        (_tampered(t, decision=[row[:-1] for row in d["decision"]]),  # wrong width
         rf"tree\.decision\[0\] must have {t.n_outputs} entries"),
        (_tampered(t, loss=d["loss"] + [0.0]),
         rf"tree\.loss must have {n} entries \(one per node\); got {n + 1}"),
        (_tampered(t, categories=d["categories"][:-1]),
         rf"tree\.categories must have {n} entries"),
        (_tampered(t, threshold="abc"), r"tree\.threshold must be a list of numbers"),
    ]
    missing = dict(d)
    del missing["feature"]
    bad.append((missing, r"tree\.feature is missing"))
    for doc, match in bad:
        with pytest.raises(ValueError, match=match):
            Tree.from_dict(doc)


def test_single_leaf_tree():
    X = np.zeros((5, 2))
    C = np.arange(10, dtype=float).reshape(5, 2)
    est = SPOTree(FiniteDecisions(np.eye(2))).fit(X, C)
    t = est.tree_
    assert t.node_count == 1 and t.n_leaves == 1 and t.max_depth == 0
    alphas, masks, losses = t.pruning_sequence()
    assert alphas.tolist() == [0.0] and len(masks) == 1
    assert losses[0] == t.impurity[0]
    np.testing.assert_array_equal(t.apply(X), 0)
    assert t.decision_path(X).toarray().tolist() == [[1]] * 5


def test_apply_and_decision_path_check_the_rows():
    # A bare Tree is public: too few columns raised IndexError, a list
    # AttributeError ('list' object has no attribute 'shape').
    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(30, 3)), rng.normal(size=(30, 3))
    tree = SPOTree(max_depth=3).fit(X, C).tree_
    np.testing.assert_array_equal(tree.apply(X.tolist()), tree.apply(X))
    assert (tree.decision_path(X.tolist()) != tree.decision_path(X)).nnz == 0
    for bad in (X[:, :2], X[0], np.c_[X, X]):
        with pytest.raises(ValueError, match="X must be a 2-D array with n_features=3 columns "
                                             "for this tree; got shape"):
            tree.apply(bad)
        with pytest.raises(ValueError, match="n_features=3"):
            tree.decision_path(bad)
