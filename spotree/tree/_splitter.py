"""Where to cut: the best split of a node over its candidate features.

Numeric features are swept in sorted order with running sums. On the vertex
path (and for MSE) the sweep is one compiled pass per feature that keeps the
left child's sums of G = C V^T, so scoring a threshold costs O(K) like CART's
O(d). Without a vertex list, the prefix sums of every candidate threshold of
every feature go to the oracle in one batched call. Categorical features are
scored from per-category sums (one-vs-rest, or every subset).

Ties between equally good splits go to the lowest feature index, then to the
lowest threshold (the first candidate in sweep order).
"""

from __future__ import annotations

import itertools

import numpy as np
from numba import njit

__all__ = ["find_best_split", "SplitResult"]

_REL_TOL = 1e-12


@njit(cache=True, nogil=True)
def _allowed_positions(xs, n_quantiles):
    """Mark the sorted positions ``p`` (cut between p and p+1) that quantile thresholds hit."""
    m = xs.shape[0]
    allowed = np.zeros(m, dtype=np.bool_)
    if n_quantiles <= 0:
        for p in range(m - 1):
            allowed[p] = True
        return allowed
    for q in range(1, n_quantiles + 1):
        level = q / (n_quantiles + 1.0) * (m - 1)
        lo = int(np.floor(level))
        hi = min(lo + 1, m - 1)
        t = xs[lo] + (xs[hi] - xs[lo]) * (level - lo)
        # Last sorted position with xs[p] <= t: samples up to p go left.
        p = np.searchsorted(xs, t, side="right") - 1
        if 0 <= p < m - 1:
            allowed[p] = True
    return allowed


@njit(cache=True, nogil=True)
def partition_sorted(order, go_left):
    """Split a node's per-feature sorted sample lists into its children's, stably.

    ``order`` has one row per feature, each the node's samples sorted by that
    feature; ``go_left`` flags samples (indexed by sample id). Keeping every
    feature sorted this way replaces a sort per node by a linear pass.
    """
    p, m = order.shape
    n_left = 0
    for i in range(m):
        if go_left[order[0, i]]:
            n_left += 1
    left = np.empty((p, n_left), dtype=np.int64)
    right = np.empty((p, m - n_left), dtype=np.int64)
    for f in range(p):
        a = 0
        b = 0
        for i in range(m):
            s = order[f, i]
            if go_left[s]:
                left[f, a] = s
                a += 1
            else:
                right[f, b] = s
                b += 1
    return left, right


@njit(cache=True, nogil=True)
def _sweep_numeric(X, order, features, w, G, C, sq, zs, a, spo_scale, mse_scale,
                   min_leaf, n_quantiles, tot_w, tot_G, tot_S, tot_z, tot_sq):
    """Best numeric split over ``features`` (vertex-SPO and/or MSE criterion)."""
    m = order.shape[1]
    K = G.shape[1]
    d = C.shape[1]
    use_spo = a > 0.0
    use_mse = a < 1.0
    best_crit = np.inf
    best_f = -1
    best_thr = 0.0
    GL = np.empty(K)
    SL = np.empty(d)
    xs = np.empty(m)
    for f in features:
        rows = order[f]
        for i in range(m):
            xs[i] = X[rows[i], f]
        if xs[0] == xs[m - 1]:
            continue
        allowed = _allowed_positions(xs, n_quantiles)
        GL[:] = 0.0
        SL[:] = 0.0
        wL = 0.0
        zL = 0.0
        sqL = 0.0
        for p in range(m - 1):
            i = rows[p]
            wi = w[i]
            wL += wi
            zL += wi * zs[i]
            if tot_w - wL < min_leaf:
                break
            # Children's losses are only needed where a cut is admissible; the
            # running sums are updated in the same loop that scores it.
            score = wL >= min_leaf and allowed[p] and xs[p] != xs[p + 1]
            crit = 0.0
            if use_spo:
                if score:
                    gl = np.inf
                    gr = np.inf
                    for k in range(K):
                        g = GL[k] + wi * G[i, k]
                        GL[k] = g
                        if g < gl:
                            gl = g
                        r = tot_G[k] - g
                        if r < gr:
                            gr = r
                    spo = (gl - zL) + (gr - (tot_z - zL))
                    if spo < 0.0:
                        spo = 0.0
                    crit += spo if a == 1.0 else a * spo / spo_scale
                else:
                    for k in range(K):
                        GL[k] += wi * G[i, k]
            if use_mse:
                sqL += wi * sq[i]
                if score:
                    nl = 0.0
                    nr = 0.0
                    for j in range(d):
                        v = SL[j] + wi * C[i, j]
                        SL[j] = v
                        nl += v * v
                        r = tot_S[j] - v
                        nr += r * r
                    mse = sqL - nl / wL + (tot_sq - sqL) - nr / (tot_w - wL)
                    crit += mse if a == 0.0 else (1.0 - a) * mse / mse_scale
                else:
                    for j in range(d):
                        SL[j] += wi * C[i, j]
            if not score:
                continue
            if best_f < 0 or crit < best_crit - _REL_TOL * abs(best_crit) - 1e-300:
                best_crit = crit
                best_f = f
                best_thr = 0.5 * (xs[p] + xs[p + 1])
                if best_thr >= xs[p + 1]:
                    best_thr = xs[p]
    return best_f, best_thr, best_crit


class SplitResult:
    """The chosen split of a node (``feature < 0`` when there is none)."""

    __slots__ = ("feature", "threshold", "categories", "crit")

    def __init__(self, feature=-1, threshold=np.nan, categories=None, crit=np.inf):
        self.feature = feature
        self.threshold = threshold
        self.categories = categories
        self.crit = crit

    def better(self, crit):
        return self.feature < 0 or crit < self.crit - _REL_TOL * abs(self.crit) - 1e-300


def _numeric_candidates_numpy(crit_obj, X, rows, f, min_leaf, n_quantiles, total):
    """Left-child sums of every admissible threshold of numeric feature ``f``.

    ``rows`` are the node's samples sorted by feature ``f``.
    """
    xs = X[rows, f]
    if xs[0] == xs[-1]:
        return None
    w = crit_obj.w[rows]
    cw = np.cumsum(w)
    ok = np.zeros(xs.shape[0], dtype=bool)
    ok[:-1] = (_allowed_positions(xs, n_quantiles)[:-1] & (xs[:-1] != xs[1:])
               & (cw[:-1] >= min_leaf) & (total["w"] - cw[:-1] >= min_leaf))
    pos = np.flatnonzero(ok)
    if pos.size == 0:
        return None
    SL = np.cumsum(w[:, None] * crit_obj.C[rows], axis=0)[pos]
    GL = (np.cumsum(w[:, None] * crit_obj.G[rows], axis=0)[pos] if crit_obj.use_vertices
          else np.empty((pos.size, 0)))
    zL = np.cumsum(w * crit_obj.zs[rows])[pos]
    sqL = np.cumsum(w * crit_obj.sq[rows])[pos]
    thr = 0.5 * (xs[pos] + xs[pos + 1])
    thr = np.where(thr >= xs[pos + 1], xs[pos], thr)
    return cw[pos], SL, GL, zL, sqL, thr


def _categorical_candidates(crit_obj, X, idx, f, min_leaf, total, subsets,
                            max_subset_categories):
    """Left-child sums of every category split of feature ``f``."""
    cats, inv = np.unique(X[idx, f], return_inverse=True)
    k = cats.size
    if k < 2:
        return None
    w = crit_obj.w[idx]

    def per_cat(values):
        out = np.zeros((k,) + values.shape[1:])
        np.add.at(out, inv, values)
        return out

    cw = per_cat(w)
    cS = per_cat(w[:, None] * crit_obj.C[idx])
    cG = per_cat(w[:, None] * crit_obj.G[idx])
    cz = per_cat(w * crit_obj.zs[idx])
    csq = per_cat(w * crit_obj.sq[idx])
    if subsets and k <= max_subset_categories:
        # Every split up to swapping sides: the last category always goes right.
        masks = np.array(list(itertools.product((0.0, 1.0), repeat=k - 1)))[1:]
        M = np.hstack([masks, np.zeros((masks.shape[0], 1))])
    else:
        M = np.eye(k)
    wL = M @ cw
    ok = (wL >= min_leaf) & (total["w"] - wL >= min_leaf)
    if not ok.any():
        return None
    M = M[ok]
    left_sets = [cats[row > 0] for row in M]
    return M @ cw, M @ cS, M @ cG, M @ cz, M @ csq, left_sets


def find_best_split(crit_obj, X, order, features, is_categorical, total, min_leaf,
                    n_quantiles, categorical_subsets=False, max_subset_categories=10):
    """Best split of the samples ``idx`` among ``features``.

    Parameters
    ----------
    crit_obj : Criterion
    X : ndarray of shape (n, p)
    order : ndarray of int64 of shape (n_features, m)
        The node's samples, sorted by each feature.
    features : ndarray of int64
        Candidate features, in increasing order (ties go to the first).
    is_categorical : ndarray of bool of shape (p,)
    total : dict
        The node's sums (see ``Criterion.node_sums``).
    min_leaf : float
        Minimum weight of each child.
    n_quantiles : int
        0 for every threshold, else the number of quantile thresholds.

    Returns
    -------
    SplitResult
    """
    best = SplitResult()
    idx = order[0]
    numeric = features[~is_categorical[features]]
    fast = crit_obj.use_vertices or crit_obj.a == 0.0
    if numeric.size and fast:
        f, thr, crit = _sweep_numeric(
            X, order, numeric, crit_obj.w, crit_obj.G, crit_obj.C, crit_obj.sq, crit_obj.zs,
            crit_obj.a, crit_obj.spo_scale, crit_obj.mse_scale, float(min_leaf),
            int(n_quantiles), total["w"], total["G"], total["S"], total["z"], total["sq"])
        if f >= 0:
            best = SplitResult(int(f), float(thr), None, float(crit))
        if numeric.size == features.size:
            return best
    # Everything else is scored in one batched evaluation (one oracle call).
    cands = []
    for f in features:
        if is_categorical[f]:
            c = _categorical_candidates(crit_obj, X, idx, f, min_leaf, total,
                                        categorical_subsets, max_subset_categories)
        elif fast:
            continue
        else:
            c = _numeric_candidates_numpy(crit_obj, X, order[f], f, min_leaf, n_quantiles,
                                          total)
        if c is not None:
            cands.append((f, c))
    if cands:
        stacked = [np.concatenate([c[1][j] for c in cands]) for j in range(5)]
        crits = crit_obj.partition_losses(*stacked, total)
        crits = np.broadcast_to(crits, stacked[0].shape)
        offset = 0
        for f, c in cands:
            n_c = c[0].shape[0]
            j = int(np.argmin(crits[offset:offset + n_c]))
            crit = float(crits[offset + j])
            # Feature order decides ties, whichever path scored the feature.
            if best.better(crit) or (not best.crit < crit and f < best.feature):
                if isinstance(c[5], list):
                    best = SplitResult(int(f), np.nan, c[5][j], crit)
                else:
                    best = SplitResult(int(f), float(c[5][j]), None, crit)
            offset += n_c
    return best
