"""The greedy builder as one compiled function, for the vertex path.

When the problem lists its vertices and no feature is categorical, every
number the builder needs comes from running sums over G = C V^T and C, so the
whole depth-first growth runs without the interpreter (and without the GIL,
which lets a forest's threads grow trees in parallel). It follows
``_builder.grow_tree`` rule for rule; the Python builder remains the
reference and serves the oracle path and categorical features.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._criterion import _weighted_sums
from ._splitter import _sweep_numeric, partition_sorted

__all__ = ["grow_compiled"]


@njit(cache=True, nogil=True)
def _node_stats(idx, w, G, C, zs, sq, a, spo_scale, mse_scale, spo_tol, mse_tol):
    wsum, S, Gs, z, q = _weighted_sums(idx, w, C, G, zs, sq)
    k_best = 0
    for k in range(1, G.shape[1]):
        if Gs[k] < Gs[k_best]:
            k_best = k
    spo = Gs[k_best] - z
    if not spo > spo_tol:
        spo = 0.0
    mse = q - (S @ S) / wsum
    if not mse > mse_tol:
        mse = 0.0
    if a == 1.0:
        imp = spo
    elif a == 0.0:
        imp = mse
    else:
        imp = a * spo / spo_scale + (1.0 - a) * mse / mse_scale
    return wsum, S, Gs, z, q, k_best, spo, imp


@njit(cache=True, nogil=True)
def _search(X, order, feats_all, w, G, C, sq, zs, a, spo_scale, mse_scale, min_leaf,
            n_quantiles, wsum, Gs, S, z, q, max_features):
    p = feats_all.shape[0]
    if max_features <= 0 or max_features >= p:
        return _sweep_numeric(X, order, feats_all, w, G, C, sq, zs, a, spo_scale, mse_scale,
                              min_leaf, n_quantiles, wsum, Gs, S, z, q)
    perm = np.random.permutation(p)
    first = np.sort(perm[:max_features])
    f, thr, crit = _sweep_numeric(X, order, first, w, G, C, sq, zs, a, spo_scale,
                                  mse_scale, min_leaf, n_quantiles, wsum, Gs, S, z, q)
    if f < 0:
        rest = np.sort(perm[max_features:])
        f, thr, crit = _sweep_numeric(X, order, rest, w, G, C, sq, zs, a, spo_scale,
                                      mse_scale, min_leaf, n_quantiles, wsum, Gs, S, z, q)
    return f, thr, crit


@njit(cache=True, nogil=True)
def _grow(X, order_all, w, G, C, sq, zs, a, spo_scale, mse_scale, spo_tol, mse_tol, tol,
          min_leaf, min_split, max_depth, max_features, n_quantiles, min_loss_decrease, seed):
    n, p = X.shape
    d = C.shape[1]
    if seed >= 0:
        np.random.seed(seed)
    cap = 2 * order_all.shape[1] + 1
    left = np.full(cap, -1, dtype=np.int64)
    right = np.full(cap, -1, dtype=np.int64)
    feature = np.full(cap, -2, dtype=np.int64)
    threshold = np.full(cap, -2.0)
    value = np.empty((cap, d))
    k_dec = np.empty(cap, dtype=np.int64)
    loss = np.empty(cap)
    impurity = np.empty(cap)
    n_samples = np.empty(cap, dtype=np.int64)
    wn = np.empty(cap)
    importances = np.zeros(p)
    feats_all = np.arange(p)
    go_left = np.zeros(n, dtype=np.bool_)
    pure_spo = a == 1.0

    wsum, S, Gs, z, q, kb, spo, imp = _node_stats(order_all[0], w, G, C, zs, sq, a, spo_scale,
                                                  mse_scale, spo_tol, mse_tol)
    value[0] = S / wsum
    k_dec[0] = kb
    loss[0] = spo
    impurity[0] = imp
    n_samples[0] = order_all.shape[1]
    wn[0] = wsum
    count = 1
    # Pending nodes with their per-feature sorted samples and their sums.
    stack_node = [0]
    stack_order = [order_all]
    stack_depth = [0]
    stack_S = [S]
    stack_G = [Gs]
    stack_zq = [np.array([z, q])]
    while len(stack_node) > 0:
        node = stack_node.pop()
        order = stack_order.pop()
        depth = stack_depth.pop()
        S = stack_S.pop()
        Gs = stack_G.pop()
        zq = stack_zq.pop()
        z = zq[0]
        q = zq[1]
        imp = impurity[node]
        wsum = wn[node]
        if ((max_depth >= 0 and depth >= max_depth) or wsum < min_split
                or wsum < 2 * min_leaf or imp <= tol):
            continue
        f, thr, crit = _search(X, order, feats_all, w, G, C, sq, zs, a, spo_scale, mse_scale,
                               min_leaf, n_quantiles, wsum, Gs, S, z, q, max_features)
        if f >= 0 and pure_spo and imp - crit <= max(1e-9 * imp, tol):
            # No split lowers the SPO loss: break the tie by squared error.
            f2, thr2, crit2 = _search(X, order, feats_all, w, G, C, sq, zs, 0.0, 1.0, 1.0,
                                      min_leaf, n_quantiles, wsum, Gs, S, z, q,
                                      max_features)
            if f2 >= 0:
                f = f2
                thr = thr2
            crit = imp
        if f < 0:
            continue
        if imp - crit < min_loss_decrease - tol:
            continue
        rows = order[0]
        for i in range(rows.shape[0]):
            go_left[rows[i]] = X[rows[i], f] <= thr
        order_l, order_r = partition_sorted(order, go_left)
        lid = count
        rid = count + 1
        count += 2
        for side in range(2):
            child = lid if side == 0 else rid
            o = order_l if side == 0 else order_r
            cw, cS, cG, cz, cq, ck, cspo, cimp = _node_stats(o[0], w, G, C, zs, sq, a,
                                                             spo_scale, mse_scale, spo_tol,
                                                             mse_tol)
            value[child] = cS / cw
            k_dec[child] = ck
            loss[child] = cspo
            impurity[child] = cimp
            n_samples[child] = o.shape[1]
            wn[child] = cw
            if side == 0:
                SL, GL, zqL = cS, cG, np.array([cz, cq])
            else:
                SR, GR, zqR = cS, cG, np.array([cz, cq])
        left[node] = lid
        right[node] = rid
        feature[node] = f
        threshold[node] = thr
        gain = imp - impurity[lid] - impurity[rid]
        if gain > tol:
            importances[f] += gain
        # Right pushed first so the left subtree is grown first.
        stack_node.append(rid)
        stack_order.append(order_r)
        stack_depth.append(depth + 1)
        stack_S.append(SR)
        stack_G.append(GR)
        stack_zq.append(zqR)
        stack_node.append(lid)
        stack_order.append(order_l)
        stack_depth.append(depth + 1)
        stack_S.append(SL)
        stack_G.append(GL)
        stack_zq.append(zqL)
    return (left[:count], right[:count], feature[:count], threshold[:count], value[:count],
            k_dec[:count], loss[:count], impurity[:count], n_samples[:count], wn[:count],
            importances)


def grow_compiled(crit_obj, X, order_all, *, max_depth, min_leaf, min_split, max_features,
                  n_quantiles, min_loss_decrease, seed):
    """Run the compiled builder; returns the Tree's arrays and the importances."""
    c = crit_obj
    out = _grow(X, order_all, c.w, c.G, c.C, c.sq, c.zs, c.a, c.spo_scale, c.mse_scale,
                c.spo_tol, c.mse_tol, c.tol, float(min_leaf), float(min_split),
                -1 if max_depth is None else int(max_depth),
                -1 if max_features is None else int(max_features), int(n_quantiles),
                float(min_loss_decrease), int(seed))
    return out
