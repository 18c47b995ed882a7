"""Greedy recursive partitioning (paper section 4.1), depth first."""

from __future__ import annotations

import numpy as np

from ._compiled_builder import grow_compiled
from ._splitter import find_best_split, partition_sorted
from ._tree import TREE_LEAF, TREE_UNDEFINED, Tree

__all__ = ["grow_tree"]


class _AllFeatures(dict):
    """``_ALL_FEATURES[p]`` is ``arange(p)``, built once per p."""

    def __missing__(self, p):
        self[p] = np.arange(p, dtype=np.int64)
        return self[p]


_ALL_FEATURES = _AllFeatures()


def _search(crit_obj, X, order, sums, p, max_features, rng, is_categorical, min_leaf,
            n_quantiles, categorical_subsets, max_subset_categories):
    """Best split over all features, or over a random subset of ``max_features``."""
    args = (is_categorical, sums, min_leaf, n_quantiles, categorical_subsets,
            max_subset_categories)
    if max_features is None or max_features >= p:
        return find_best_split(crit_obj, X, order, _ALL_FEATURES[p], *args)
    perm = rng.permutation(p)
    split = find_best_split(crit_obj, X, order, np.sort(perm[:max_features]), *args)
    if split.feature < 0:
        # Like CART: keep drawing features until one admits a split.
        split = find_best_split(crit_obj, X, order, np.sort(perm[max_features:]), *args)
    return split


def _grow_compiled_tree(crit_obj, X, order_all, *, max_features, rng, **kwargs):
    seed = -1 if max_features is None else int(rng.randint(np.iinfo(np.int32).max))
    (left, right, feature, threshold, value, k_dec, loss, impurity, n_samples, wn,
     importances) = grow_compiled(crit_obj, X, order_all, max_features=max_features,
                                  seed=seed, **kwargs)
    tree = Tree(n_features=X.shape[1], n_outputs=crit_obj.C.shape[1], children_left=left,
                children_right=right, feature=feature, threshold=threshold, value=value,
                decision=crit_obj.V[k_dec], loss=loss, impurity=impurity,
                n_node_samples=n_samples, weighted_n_node_samples=wn)
    return tree, importances


def grow_tree(crit_obj, X, is_categorical, *, max_depth, min_leaf, min_split,
              max_features, n_quantiles, min_loss_decrease, rng,
              categorical_subsets=False, max_subset_categories=10, compiled=True):
    """Grow a tree greedily until a stopping rule fires.

    On the vertex path without categorical features the growth runs in one
    compiled function (``compiled=False`` forces this Python reference).

    A node becomes a leaf when it is at ``max_depth``, when it weighs less
    than ``min_split`` or ``2 * min_leaf``, when its criterion loss is zero
    (no split can lower it, e.g. all costs equal), when no admissible split
    exists, or when the best split lowers the loss by less than
    ``min_loss_decrease``. Splits with zero decrease are taken otherwise, as
    in the paper, leaving their removal to pruning.

    Returns
    -------
    tree : Tree
    importances : ndarray of shape (n_features,)
        Unnormalized criterion-loss decrease per feature.
    """
    n, p = X.shape
    idx_all = np.flatnonzero(crit_obj.w > 0)
    root = crit_obj.node_sums(idx_all)
    crit_obj.set_scales(root)
    importances = np.zeros(p)

    nodes = {k: [] for k in ("left", "right", "feature", "threshold", "value", "decision",
                             "loss", "impurity", "n", "wn", "cats")}

    def add_node(idx, sums):
        value, decision, spo, mse = crit_obj.node_losses(sums)
        nodes["left"].append(TREE_LEAF)
        nodes["right"].append(TREE_LEAF)
        nodes["feature"].append(TREE_UNDEFINED)
        nodes["threshold"].append(float(TREE_UNDEFINED))
        nodes["value"].append(value)
        nodes["decision"].append(decision)
        nodes["loss"].append(spo)
        nodes["impurity"].append(crit_obj.combine(spo, mse))
        nodes["n"].append(idx.size)
        nodes["wn"].append(sums["w"])
        nodes["cats"].append(np.empty(0))
        return len(nodes["left"]) - 1

    mse_crit = crit_obj.with_spo_weight(0.0)
    tol = crit_obj.tol
    # Every feature's samples kept sorted; children inherit the order.
    order_all = np.ascontiguousarray(
        idx_all[np.argsort(X[idx_all].T, axis=1, kind="stable")].reshape(p, -1))
    if compiled and crit_obj.use_vertices and not is_categorical.any():
        return _grow_compiled_tree(crit_obj, X, order_all, max_depth=max_depth,
                                   min_leaf=min_leaf, min_split=min_split,
                                   max_features=max_features, n_quantiles=n_quantiles,
                                   min_loss_decrease=min_loss_decrease, rng=rng)
    go_left = np.zeros(n, dtype=np.bool_)
    pure_spo = crit_obj.a == 1.0
    stack = [(add_node(idx_all, root), order_all, root, 0)]
    while stack:
        node_id, order, sums, depth = stack.pop()
        impurity = nodes["impurity"][node_id]
        if ((max_depth is not None and depth >= max_depth) or sums["w"] < min_split
                or sums["w"] < 2 * min_leaf or impurity <= tol):
            continue
        split = _search(crit_obj, X, order, sums, p, max_features, rng, is_categorical,
                        min_leaf, n_quantiles, categorical_subsets, max_subset_categories)
        if split.feature >= 0 and pure_spo and impurity - split.crit <= max(1e-9 * impurity,
                                                                             tol):
            # No split lowers the SPO loss here, so all splits tie on it; break
            # the tie by squared error (the CART split) instead of by position.
            split = _search(mse_crit, X, order, sums, p, max_features, rng, is_categorical,
                            min_leaf, n_quantiles, categorical_subsets,
                            max_subset_categories)
            split.crit = impurity
        if split.feature < 0:
            continue
        decrease = impurity - split.crit
        if decrease < min_loss_decrease - tol:
            continue
        idx = order[0]
        x = X[idx, split.feature]
        mask = (np.isin(x, split.categories) if split.categories is not None
                else x <= split.threshold)
        go_left[idx] = mask
        order_l, order_r = partition_sorted(order, go_left)
        idx_l, idx_r = order_l[0], order_r[0]
        sums_l = crit_obj.node_sums(idx_l)
        sums_r = crit_obj.node_sums(idx_r)
        left_id = add_node(idx_l, sums_l)
        right_id = add_node(idx_r, sums_r)
        nodes["left"][node_id] = left_id
        nodes["right"][node_id] = right_id
        nodes["feature"][node_id] = split.feature
        if split.categories is not None:
            nodes["cats"][node_id] = np.asarray(split.categories, dtype=np.float64)
        else:
            nodes["threshold"][node_id] = split.threshold
        gain = impurity - nodes["impurity"][left_id] - nodes["impurity"][right_id]
        if gain > tol:
            importances[split.feature] += gain
        # Right pushed first so the left subtree is grown (and numbered) first.
        stack.append((right_id, order_r, sums_r, depth + 1))
        stack.append((left_id, order_l, sums_l, depth + 1))

    tree = Tree(
        n_features=p, n_outputs=crit_obj.C.shape[1],
        children_left=nodes["left"], children_right=nodes["right"],
        feature=nodes["feature"], threshold=nodes["threshold"],
        value=np.array(nodes["value"]), decision=np.array(nodes["decision"]),
        loss=nodes["loss"], impurity=nodes["impurity"], n_node_samples=nodes["n"],
        weighted_n_node_samples=nodes["wn"], categories=nodes["cats"],
    )
    return tree, importances
