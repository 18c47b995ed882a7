"""Build a fitted :class:`Tree` from a bare split structure.

Every way of growing a tree (greedy, exact search, MILP) ends by knowing only
the splits. :func:`tree_from_structure` routes the training samples through
them and fills in everything else (node values, decisions, SPO losses, sample
counts), so that all estimators store exactly the same kind of ``tree_``.
"""

from __future__ import annotations

import numpy as np

from .._ridge import cost_unit
from .._validation import check_costs, check_same_rows, check_sample_weight
from ..metrics import REGRET_RTOL
from ._tree import TREE_LEAF, TREE_UNDEFINED, Tree, check_structure

__all__ = ["tree_from_structure", "node_samples"]


def _check_structure(children_left, children_right, feature, threshold, n_features):
    left = np.asarray(children_left, dtype=np.int64).ravel()
    right = np.asarray(children_right, dtype=np.int64).ravel()
    feat = np.asarray(feature, dtype=np.int64).ravel()
    thr = np.asarray(threshold, dtype=np.float64).ravel()
    n = left.shape[0]
    if n == 0:
        raise ValueError("children_left must describe at least one node (the root); got an "
                         "empty array.")
    for name, arr in (("children_right", right), ("feature", feat), ("threshold", thr)):
        if arr.shape[0] != n:
            raise ValueError(f"{name} must have one entry per node ({n}); got {arr.shape[0]}.")
    # The same check as a model file's (Tree.from_dict): a tree accepted here
    # can be saved and loaded.
    check_structure(left, right, feat, thr, n_features)
    return left, right, feat, thr


def node_samples(children_left, children_right, feature, threshold, X,
                 missing_go_to_left=None):
    """Boolean membership matrix of the training samples in every node.

    Parameters
    ----------
    children_left, children_right, feature, threshold : array-like of shape (node_count,)
        Split structure; a sample goes left when ``x[feature] <= threshold``.
    X : ndarray of shape (n_samples, n_features)
    missing_go_to_left : array-like of shape (node_count,), default=None
        1 where a missing value (NaN) goes left; None: right.

    Returns
    -------
    member : ndarray of bool, shape (node_count, n_samples)
    """
    X = np.asarray(X, dtype=np.float64)
    left, right, feat, thr = _check_structure(children_left, children_right, feature,
                                              threshold, X.shape[1])
    mgl = (np.zeros(left.shape[0], dtype=np.int64) if missing_go_to_left is None
           else np.asarray(missing_go_to_left, dtype=np.int64).ravel())
    member = np.zeros((left.shape[0], X.shape[0]), dtype=bool)
    member[0] = True
    for t in range(left.shape[0]):  # parents precede children
        if left[t] != TREE_LEAF:
            x = X[:, feat[t]]
            go_left = np.where(np.isnan(x), mgl[t] == 1, x <= thr[t])
            member[left[t]] = member[t] & go_left
            member[right[t]] = member[t] & ~go_left
    return member


def tree_from_structure(children_left, children_right, feature, threshold, X, C,
                        sample_weight, problem, z=None, impurity=None,
                        missing_go_to_left=None):
    """Route the training samples through a split structure and fill a :class:`Tree`.

    Parameters
    ----------
    children_left, children_right : array-like of int, shape (node_count,)
        Child ids, ``-1`` at leaves. Node 0 is the root, every child id is
        larger than its parent's, and every other node is the child of
        exactly one node (checked as for a model file, so the tree saves and
        loads).
    feature : array-like of int, shape (node_count,)
        Split feature at internal nodes (ignored at leaves).
    threshold : array-like of float, shape (node_count,)
        Split threshold at internal nodes: a sample goes left when
        ``x[feature] <= threshold``.
    X : array-like of shape (n_samples, n_features)
    C : array-like of shape (n_samples, n_costs)
        Training cost vectors.
    sample_weight : array-like of shape (n_samples,) or None
    problem : DecisionProblem
    z : array-like of shape (n_samples,), default=None
        Optimal values ``z*(c_i)``; computed with ``problem.solve`` when None.
    impurity : array-like of shape (node_count,), default=None
        The training criterion's loss of each node as a leaf; the SPO loss
        (``loss``) when None.
    missing_go_to_left : array-like of shape (node_count,), default=None
        Where missing values go at each split (1: left). At a split that no
        training sample reaches with a missing value, they are sent to the
        child with more training weight, whatever is given.

    Returns
    -------
    tree : Tree
        ``value`` is each node's weighted mean cost, ``decision`` the optimal
        decision for it, ``loss`` the node's weighted SPO loss as a leaf.
        A node that receives no training weight copies its parent's value
        and decision and has loss 0.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array; got shape {X.shape}.")
    C = check_costs(C, n_costs=problem.n_costs)
    check_same_rows(X, C)
    sw = check_sample_weight(sample_weight, X.shape[0])
    member = node_samples(children_left, children_right, feature, threshold, X,
                          missing_go_to_left)
    left = np.asarray(children_left, dtype=np.int64).ravel()
    right = np.asarray(children_right, dtype=np.int64).ravel()
    n_nodes = left.shape[0]
    if z is None:
        _, z = problem.solve(C)
    z = np.asarray(z, dtype=np.float64)

    # The sums below in units of a power of two at the largest weight (exact,
    # and scaled back at the end): weighted sums of costs overflowed for
    # weights whose total is near the float range (the means became inf/NaN).
    w_unit = float(cost_unit(sw))
    Wm = member * (sw / w_unit)[None, :]          # (node_count, n_samples)
    weight = Wm.sum(axis=1)
    sums = Wm @ C                                 # weighted cost sums
    value = np.zeros_like(sums)
    nonempty = weight > 0
    value[nonempty] = sums[nonempty] / weight[nonempty, None]
    decision = np.zeros_like(value)
    if nonempty.any():
        decision[nonempty], _ = problem.solve(value[nonempty])
    parent = np.full(n_nodes, -1, dtype=np.int64)
    internal = np.flatnonzero(left != TREE_LEAF)
    parent[left[internal]] = internal
    parent[right[internal]] = internal
    for t in range(1, n_nodes):  # an empty node inherits its parent's prediction
        if not nonempty[t]:
            value[t] = value[parent[t]]
            decision[t] = decision[parent[t]]
    # loss_t = sign * (sum_i w_i c_i^T w_t - sum_i w_i z_i) = sign * (sums_t^T w_t - ...)
    loss = problem.sign * (np.einsum("ij,ij->i", sums, decision) - Wm @ z)
    # Each node decides the optimum of its own mean cost, so its regret is
    # non-negative up to rounding; beyond that the oracle is not optimal.
    tol = REGRET_RTOL * (np.einsum("ij,ij->i", Wm @ np.abs(C), np.abs(decision))
                         + Wm @ np.abs(z))
    if (nonempty & (loss < -tol)).any():
        raise ValueError("a node's decision beats the optimum of its training costs: the "
                         "problem's oracle did not return optimal decisions.")
    loss = np.where(nonempty, np.maximum(loss, 0.0), 0.0) * w_unit
    weight = weight * w_unit
    is_leaf = left == TREE_LEAF
    feat = np.where(is_leaf, TREE_UNDEFINED, np.asarray(feature, dtype=np.int64).ravel())
    thr = np.where(is_leaf, float(TREE_UNDEFINED),
                   np.asarray(threshold, dtype=np.float64).ravel())
    if impurity is None:
        impurity = loss.copy()
    mgl = (np.zeros(n_nodes, dtype=np.int64) if missing_go_to_left is None
           else np.asarray(missing_go_to_left, dtype=np.int64).ravel().copy())
    nan_x = np.isnan(X)
    for t in internal:
        if not (member[t] & nan_x[:, feat[t]]).any():
            mgl[t] = weight[left[t]] >= weight[right[t]]
    mgl[is_leaf] = 0
    return Tree(n_features=X.shape[1], n_outputs=problem.n_costs, children_left=left,
                children_right=right, feature=feat, threshold=thr, value=value,
                decision=decision, loss=loss, impurity=impurity,
                n_node_samples=member.sum(axis=1), weighted_n_node_samples=weight,
                missing_go_to_left=mgl.astype(np.uint8),
                missing_features=nan_x.any(axis=0))
