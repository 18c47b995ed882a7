"""Exact depth-limited search for SPO trees (beyond the paper).

With a vertex list ``V`` (K candidate decisions), the SPO loss of a leaf ``R``
is ``min_k sum_{i in R} w_i s G[i, k] - sum_{i in R} w_i s z*(c_i)`` with
``G = C V^T`` and ``s`` the problem's sign: fitting an SPO tree is fitting a
cost-sensitive classification tree over K labels. Without a vertex list the
leaf cost is ``s z*(sum_{i in R} w_i c_i)`` (``z*`` is positively
homogeneous), computed with batched oracle calls on prefix sums.

The search follows the MurTree / STreeD family: a specialised routine finds
the best tree of depth at most 2 on a sample subset in one sweep per pair of
features (running per-bin sums over the K labels), and a dynamic program over
subtrees with caching (keyed by the sample subset) and upper/lower bounds
handles deeper trees. Splits are binary tests ``x_j <= t`` over given
candidate thresholds.
"""

from __future__ import annotations

import hashlib
import time

import numpy as np
from numba import njit

__all__ = ["candidate_thresholds", "bin_features", "OptimalSearch", "nested_to_structure"]


# ---------------------------------------------------------------- binning
def candidate_thresholds(X, thresholds="all"):
    """Candidate split thresholds per feature.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    thresholds : "all" or int
        ``"all"``: midpoints between consecutive distinct values of each
        feature. An int ``q``: the ``q`` quantiles ``1/(q+1), ..., q/(q+1)``
        of each feature (the paper used ``q = 99``), duplicates removed.

    Returns
    -------
    list of ndarray
        Sorted thresholds of each feature; only thresholds that separate at
        least one training sample from the others are kept.
    """
    out = []
    for j in range(X.shape[1]):
        u = np.unique(X[:, j])
        if isinstance(thresholds, str):
            t = (u[:-1] + u[1:]) / 2.0
        else:
            q = np.arange(1, thresholds + 1) / (thresholds + 1.0)
            t = np.unique(np.quantile(X[:, j], q))
            t = t[(t >= u[0]) & (t < u[-1])]
        out.append(np.ascontiguousarray(t, dtype=np.float64))
    return out


def bin_features(X, thresholds):
    """Bin index of every sample: ``x_j <= thresholds[j][q]`` iff ``bin <= q``.

    Returns
    -------
    B : ndarray of int32, shape (n_samples, n_features)
    n_bins : ndarray of int64, shape (n_features,)
        ``len(thresholds[j]) + 1``.
    """
    B = np.empty(X.shape, dtype=np.int32)
    for j, t in enumerate(thresholds):
        B[:, j] = np.searchsorted(t, X[:, j], side="left")
    n_bins = np.array([len(t) + 1 for t in thresholds], dtype=np.int64)
    return B, n_bins


# ------------------------------------------------------- numba kernel
@njit(cache=True)
def _min_row(a, K):
    m = a[0]
    for k in range(1, K):
        if a[k] < m:
            m = a[k]
    return m


@njit(cache=True)
def _min_diff(a, b, K):
    m = a[0] - b[0]
    for k in range(1, K):
        v = a[k] - b[k]
        if v < m:
            m = v
    return m


@njit(cache=True)
def _depth2_kernel(idx, B, n_bins, G, wt, min_leaf, penalty, max_depth, tol):
    """Best tree of depth <= max_depth (0, 1 or 2) on the samples ``idx``.

    Costs are ``min_k`` of summed rows of ``G`` (already weighted and signed),
    plus ``penalty`` per split. Every leaf must weigh at least ``min_leaf``.

    Returns
    -------
    cost : float
    split : int64 array of 6 entries
        root feature, root bin, left child feature, left bin, right child
        feature, right bin; -1 marks a leaf. A sample goes left at a split
        ``(j, b)`` when its bin on feature j is <= b.
    """
    n_s = idx.shape[0]
    p = B.shape[1]
    K = G.shape[1]
    out = -np.ones(6, dtype=np.int64)
    tot = np.zeros(K)
    W = 0.0
    for a in range(n_s):
        i = idx[a]
        W += wt[i]
        for k in range(K):
            tot[k] += G[i, k]
    best = _min_row(tot, K)
    if max_depth == 0 or W < 2.0 * min_leaf:
        return best, out

    # Compress the bins of each feature to those occupied by this subset.
    max_bins = 0
    for j in range(p):
        if n_bins[j] > max_bins:
            max_bins = n_bins[j]
    maxc = min(max_bins, n_s)
    CB = np.empty((n_s, p), dtype=np.int64)
    occ = np.empty((p, maxc), dtype=np.int64)
    nc = np.zeros(p, dtype=np.int64)
    cmap = np.empty(max_bins, dtype=np.int64)
    seen = np.zeros(max_bins, dtype=np.bool_)
    H = np.zeros((p, maxc, K))
    HW = np.zeros((p, maxc))
    for j in range(p):
        for a in range(n_s):
            seen[B[idx[a], j]] = True
        c = 0
        for b in range(n_bins[j]):
            if seen[b]:
                cmap[b] = c
                occ[j, c] = b
                c += 1
                seen[b] = False
        nc[j] = c
        for a in range(n_s):
            i = idx[a]
            cb = cmap[B[i, j]]
            CB[a, j] = cb
            HW[j, cb] += wt[i]
            for k in range(K):
                H[j, cb, k] += G[i, k]

    # Depth 1: one split, two leaves.
    pl = np.empty(K)
    for j in range(p):
        pl[:] = 0.0
        wl = 0.0
        for c in range(nc[j] - 1):
            wl += HW[j, c]
            for k in range(K):
                pl[k] += H[j, c, k]
            if wl < min_leaf:
                continue
            if W - wl < min_leaf:
                break
            cost = _min_row(pl, K) + _min_diff(tot, pl, K) + penalty
            if cost < best - tol:
                best = cost
                out[:] = -1
                out[0] = j
                out[1] = occ[j, c]
    if max_depth == 1 or W < 3.0 * min_leaf:
        return best, out

    # Depth 2: for each root feature j1 sweep its bins; for each child feature j2
    # keep the per-bin sums of the left part (HL) so both children's best
    # splits on j2 come from one prefix scan.
    order = np.empty(n_s, dtype=np.int64)
    start = np.zeros(maxc + 1, dtype=np.int64)
    HL = np.zeros((maxc, K))
    HLW = np.zeros(maxc)
    PL = np.empty(K)
    PR = np.empty(K)
    pr = np.empty(K)
    bestL = np.empty(maxc)
    bestR = np.empty(maxc)
    splL = np.empty((maxc, 2), dtype=np.int64)
    splR = np.empty((maxc, 2), dtype=np.int64)
    wLc = np.empty(maxc)
    for j1 in range(p):
        m1 = nc[j1]
        if m1 < 2:
            continue
        # Counting sort of the subset by compressed bin of j1.
        start[: m1 + 1] = 0
        for a in range(n_s):
            start[CB[a, j1] + 1] += 1
        for c in range(m1):
            start[c + 1] += start[c]
        fill = start[:m1].copy()
        for a in range(n_s):
            c = CB[a, j1]
            order[fill[c]] = a
            fill[c] += 1
        # Leaf costs of both sides for every root cut.
        PL[:] = 0.0
        wl = 0.0
        for c in range(m1 - 1):
            wl += HW[j1, c]
            wLc[c] = wl
            for k in range(K):
                PL[k] += H[j1, c, k]
            bestL[c] = _min_row(PL, K)
            bestR[c] = _min_diff(tot, PL, K)
            splL[c, 0] = -1
            splR[c, 0] = -1
        for j2 in range(p):
            m2 = nc[j2]
            if m2 < 2:
                continue
            HL[:m2, :] = 0.0
            HLW[:m2] = 0.0
            PL[:] = 0.0
            for c1 in range(m1 - 1):
                for s in range(start[c1], start[c1 + 1]):
                    a = order[s]
                    i = idx[a]
                    c2 = CB[a, j2]
                    HLW[c2] += wt[i]
                    for k in range(K):
                        HL[c2, k] += G[i, k]
                        PL[k] += G[i, k]
                wL = wLc[c1]
                wR = W - wL
                if wR < min_leaf:
                    break
                if wL < min_leaf:
                    continue
                if wL >= 2.0 * min_leaf:
                    pl[:] = 0.0
                    wl = 0.0
                    for c2 in range(m2 - 1):
                        wl += HLW[c2]
                        for k in range(K):
                            pl[k] += HL[c2, k]
                        if wl < min_leaf:
                            continue
                        if wL - wl < min_leaf:
                            break
                        cost = _min_row(pl, K) + _min_diff(PL, pl, K) + penalty
                        if cost < bestL[c1] - tol:
                            bestL[c1] = cost
                            splL[c1, 0] = j2
                            splL[c1, 1] = occ[j2, c2]
                if wR >= 2.0 * min_leaf:
                    for k in range(K):
                        PR[k] = tot[k] - PL[k]
                    pr[:] = 0.0
                    wl = 0.0
                    for c2 in range(m2 - 1):
                        wl += HW[j2, c2] - HLW[c2]
                        for k in range(K):
                            pr[k] += H[j2, c2, k] - HL[c2, k]
                        if wl < min_leaf:
                            continue
                        if wR - wl < min_leaf:
                            break
                        cost = _min_row(pr, K) + _min_diff(PR, pr, K) + penalty
                        if cost < bestR[c1] - tol:
                            bestR[c1] = cost
                            splR[c1, 0] = j2
                            splR[c1, 1] = occ[j2, c2]
        for c1 in range(m1 - 1):
            wL = wLc[c1]
            if wL < min_leaf or W - wL < min_leaf:
                continue
            cost = bestL[c1] + bestR[c1] + penalty
            if cost < best - tol:
                best = cost
                out[0] = j1
                out[1] = occ[j1, c1]
                out[2] = splL[c1, 0]
                out[3] = splL[c1, 1] if splL[c1, 0] >= 0 else -1
                out[4] = splR[c1, 0]
                out[5] = splR[c1, 1] if splR[c1, 0] >= 0 else -1
    return best, out


# ------------------------------------------------ oracle (no vertices)
def _depth2_oracle(idx, B, n_bins, Cw, sign, solve, min_leaf, penalty, max_depth, tol,
                   deadline=np.inf):
    """Same contract as :func:`_depth2_kernel`, scoring leaves with the oracle.

    ``Cw`` holds the weighted costs ``w_i c_i``; the cost of a leaf with summed
    cost ``S`` is ``sign * z*(S)``. All leaves of one sweep are solved in a
    single batch. Oracle calls can be slow, so the clock is checked between
    sweeps: past ``deadline`` (a ``time.perf_counter`` value) the best tree
    found so far is returned with a third value ``True``.
    """
    def f(S):
        if S.shape[0] == 0:
            return np.empty(0)
        return sign * solve(S)[1]

    out = -np.ones(6, dtype=np.int64)
    Cs = Cw[0][idx]
    ws = Cw[1][idx]
    tot = Cs.sum(axis=0)
    W = ws.sum()
    best = float(f(tot[None, :])[0])
    if max_depth == 0 or W < 2.0 * min_leaf:
        return best, out, False
    occ, CB = [], []
    for j in range(B.shape[1]):
        u, inv = np.unique(B[idx, j], return_inverse=True)
        occ.append(u)
        CB.append(inv.ravel())

    def split_scan(j, Csub, wsub, cb):
        m = occ[j].size
        H = np.zeros((m, Cs.shape[1]))
        np.add.at(H, cb, Csub)
        hw = np.bincount(cb, weights=wsub, minlength=m)
        P = np.cumsum(H, axis=0)[:-1]
        wl = np.cumsum(hw)[:-1]
        return P, wl

    for j in range(B.shape[1]):
        if time.perf_counter() > deadline:
            return best, out, True
        if occ[j].size < 2:
            continue
        P, wl = split_scan(j, Cs, ws, CB[j])
        ok = np.flatnonzero((wl >= min_leaf) & (W - wl >= min_leaf))
        if ok.size:
            cost = f(P[ok]) + f(tot - P[ok]) + penalty
            c = int(np.argmin(cost))
            if cost[c] < best - tol:
                best = float(cost[c])
                out[:] = -1
                out[0], out[1] = j, occ[j][ok[c]]
    if max_depth == 1 or W < 3.0 * min_leaf:
        return best, out, False
    p = B.shape[1]
    for j1 in range(p):
        m1 = occ[j1].size
        if m1 < 2:
            continue
        P1, w1 = split_scan(j1, Cs, ws, CB[j1])
        side = [(P1, w1), (tot - P1, W - w1)]
        leaf_cost = [f(P1), f(tot - P1)]
        child_best = [leaf_cost[0].copy(), leaf_cost[1].copy()]
        child_spl = [-np.ones((m1 - 1, 2), dtype=np.int64), -np.ones((m1 - 1, 2), dtype=np.int64)]
        for j2 in range(p):
            if time.perf_counter() > deadline:
                return best, out, True
            m2 = occ[j2].size
            if m2 < 2:
                continue
            H = np.zeros((m1, m2, Cs.shape[1]))
            np.add.at(H, (CB[j1], CB[j2]), Cs)
            HW = np.zeros((m1, m2))
            np.add.at(HW, (CB[j1], CB[j2]), ws)
            # A[c1, c2]: samples with bin1 <= c1 and bin2 <= c2.
            A = np.cumsum(np.cumsum(H, axis=0), axis=1)[:-1, :-1]
            AW = np.cumsum(np.cumsum(HW, axis=0), axis=1)[:-1, :-1]
            colA = np.cumsum(H.sum(axis=0), axis=0)[:-1]      # bin2 <= c2, any bin1
            colW = np.cumsum(HW.sum(axis=0))[:-1]
            parts = [(A, AW), (colA[None] - A, colW[None] - AW)]
            for s_ in range(2):
                S_tot, S_w = side[s_]
                L, Lw = parts[s_]
                R = S_tot[:, None, :] - L
                Rw = S_w[:, None] - Lw
                ok = (Lw >= min_leaf) & (Rw >= min_leaf)
                if not ok.any():
                    continue
                cost = np.full(ok.shape, np.inf)
                cost[ok] = f(L[ok]) + f(R[ok]) + penalty
                c2 = np.argmin(cost, axis=1)
                v = cost[np.arange(m1 - 1), c2]
                better = v < child_best[s_] - tol
                child_best[s_][better] = v[better]
                child_spl[s_][better, 0] = j2
                child_spl[s_][better, 1] = occ[j2][c2[better]]
        for c1 in range(m1 - 1):
            if w1[c1] < min_leaf or W - w1[c1] < min_leaf:
                continue
            cost = child_best[0][c1] + child_best[1][c1] + penalty
            if cost < best - tol:
                best = float(cost)
                out[:] = (j1, occ[j1][c1], *child_spl[0][c1], *child_spl[1][c1])
    return best, out, False


# ------------------------------------------------------------- search
class _Timeout(Exception):
    pass


class OptimalSearch:
    """Exact search of the best depth-limited tree over binned features.

    Parameters
    ----------
    B : ndarray of int32, shape (n_samples, n_features)
        Bin of every sample (see :func:`bin_features`).
    n_bins : ndarray of int64
    sample_weight : ndarray of shape (n_samples,)
    min_leaf : float
        Minimum weight of a leaf.
    penalty : float
        Cost added per split (``alpha`` times the total weight).
    G : ndarray of shape (n_samples, K), optional
        ``sign * w_i * c_i^T V_k``: the vertex path.
    C, sign, solve : optional
        Costs, sense and batch oracle for the path without vertices.
    row_bound : ndarray of shape (n_samples,)
        ``sign * w_i * z*(c_i)``: a sample's cost in a leaf of its own, so
        the sum over a subset lower-bounds any tree on it.
    time_limit : float
    verbose : bool
        Print the incumbent after each root feature (depth >= 3).
    """

    def __init__(self, B, n_bins, sample_weight, min_leaf, penalty, row_bound, *, G=None,
                 C=None, sign=1.0, solve=None, time_limit=np.inf, verbose=False):
        self.B = B
        self.n_bins = n_bins
        self.w = sample_weight
        self.min_leaf = float(min_leaf)
        self.penalty = float(penalty)
        self.row_bound = row_bound
        self.G = G
        # Largest cost of each sample over the vertices (similarity bounds).
        self.row_max = None if G is None else G.max(axis=1)
        self.Cw = None if G is not None else (C * sample_weight[:, None], sample_weight)
        self.sign = sign
        self.solve_fn = solve
        scale = np.abs(row_bound).sum() + 1.0
        self.tol = 1e-11 * scale
        self.time_limit = time_limit
        self.verbose = verbose
        self.cache = {}
        self.n_nodes_explored = 0

    def _small(self, idx, depth):
        """Best tree of depth <= 2: ``(cost, split, timed_out)``.

        The compiled routine runs to the end (it is checked between calls);
        the oracle routine stops at the deadline with its best tree so far.
        """
        self.n_nodes_explored += 1
        if self.G is not None:
            cost, spl = _depth2_kernel(idx, self.B, self.n_bins, self.G, self.w,
                                       self.min_leaf, self.penalty, depth, self.tol)
            return cost, spl, False
        return _depth2_oracle(idx, self.B, self.n_bins, self.Cw, self.sign, self.solve_fn,
                              self.min_leaf, self.penalty, depth, self.tol,
                              deadline=self.start + self.time_limit)

    def run(self, max_depth):
        """Search; returns ``(cost, nested, status, bound)``.

        ``nested`` is the tree as nested tuples ``(j, bin, left, right)`` with
        ``None`` for leaves; ``status`` is ``"optimal"`` or ``"time_limit"``.
        """
        self.start = time.perf_counter()
        idx = np.arange(self.B.shape[0], dtype=np.int64)
        # Any tree with a split costs at least every sample's own optimum plus
        # the penalty; the single leaf is always evaluated first. Hence the
        # bound at the time limit.
        weak_bound = self.row_bound.sum() + self.penalty
        if max_depth <= 2:
            cost, spl, timed_out = self._small(idx, max_depth)
            if timed_out:
                return cost, self._nested(spl), "time_limit", min(cost, weak_bound)
            return cost, self._nested(spl), "optimal", cost
        self.root_best = None
        try:
            cost, tree = self._solve(idx, max_depth, np.inf, root=True)
            return cost, tree, "optimal", cost
        except _Timeout:
            cost, tree = self.root_best
            return cost, tree, "time_limit", min(cost, weak_bound)

    @staticmethod
    def _nested(spl):
        if spl[0] < 0:
            return None
        left = None if spl[2] < 0 else (int(spl[2]), int(spl[3]), None, None)
        right = None if spl[4] < 0 else (int(spl[4]), int(spl[5]), None, None)
        return (int(spl[0]), int(spl[1]), left, right)

    def _solve(self, idx, depth, ub, root=False):
        """Best tree on ``idx`` of depth <= depth if its cost is below ``ub``.

        Returns ``(cost, nested)``, or ``(lower_bound, False)`` when no tree
        costs less than ``ub``.
        """
        if depth <= 2:
            cost, spl, timed_out = self._small(idx, depth)
            if timed_out:
                raise _Timeout
            return cost, self._nested(spl)
        # A 128-bit digest of the subset keeps the cache small on large data.
        key = (hashlib.blake2b(idx.tobytes(), digest_size=16).digest(), depth)
        hit = self.cache.get(key)
        if hit is not None:
            if hit[1] is not False or hit[0] >= ub:
                return hit
        if not root and time.perf_counter() - self.start > self.time_limit:
            raise _Timeout
        # The best tree of depth 2 is a valid incumbent for any deeper budget.
        best_cost, spl, timed_out = self._small(idx, 2)
        best = self._nested(spl)
        lb_all = self.row_bound[idx].sum()
        if root:
            self.root_best = (best_cost, best)
        if timed_out:
            raise _Timeout
        w_idx = self.w[idx]
        W = w_idx.sum()
        if best_cost > lb_all + self.tol and W >= 4.0 * self.min_leaf:
            cuts = []
            for j in range(self.B.shape[1]):
                b = self.B[idx, j]
                occ = np.unique(b)
                wl = np.bincount(np.searchsorted(occ, b), weights=w_idx,
                                 minlength=occ.size).cumsum()
                for c in range(occ.size - 1):
                    if wl[c] >= self.min_leaf and W - wl[c] >= self.min_leaf:
                        cuts.append((j, int(occ[c])))
            chain_j, chain_b, chain_lb = -1, -1, 0.0
            for n_cut, (j, b) in enumerate(cuts):
                if time.perf_counter() - self.start > self.time_limit:
                    raise _Timeout
                if root and self.verbose and (n_cut == 0 or cuts[n_cut - 1][0] != j):
                    print(f"  root feature {j}: incumbent objective "
                          f"{(best_cost - lb_all) / W:.6g}, "
                          f"{time.perf_counter() - self.start:.2f} s, "
                          f"{self.n_nodes_explored} subproblems")
                go_left = self.B[idx, j] <= b
                L, R = idx[go_left], idx[~go_left]
                lbR = self.row_bound[R].sum()
                if self.row_max is not None and chain_j == j:
                    # Similarity bound: R is the previous cut's right part R' minus
                    # the samples M that moved left. The best tree for R, applied
                    # to R', stays feasible (its leaves only grow) and costs at
                    # most sum_{i in M} max_k G[i, k] more, so
                    # opt(R) >= opt(R') - sum_M max_k G[i, k].
                    bj = self.B[idx, j]
                    moved = idx[(bj > chain_b) & (bj <= b)]
                    lbR = max(lbR, chain_lb - self.row_max[moved].sum())
                chain_j, chain_b, chain_lb = j, b, lbR
                bound = min(best_cost, ub)
                if self.row_bound[L].sum() + lbR + self.penalty >= bound - self.tol:
                    continue
                cL, tL = self._solve(L, depth - 1, bound - self.penalty - lbR)
                if tL is False or cL + lbR + self.penalty >= bound - self.tol:
                    continue
                cR, tR = self._solve(R, depth - 1, bound - self.penalty - cL)
                # Exact, or a lower bound when no tree is below the budget.
                chain_lb = max(chain_lb, cR)
                if tR is False:
                    continue
                total = cL + cR + self.penalty
                if total < best_cost - self.tol:
                    best_cost = total
                    best = (j, b, tL, tR)
                    if root:
                        self.root_best = (best_cost, best)
        if best_cost < ub:
            res = (best_cost, best)
        else:
            res = (ub, False)
        self.cache[key] = res
        return res


def nested_to_structure(nested, X, B, thresholds, midpoints):
    """Flat split arrays (parents before children) from the search's nested tuples.

    Parameters
    ----------
    nested : tuple or None
        ``(feature, bin, left, right)`` with ``None`` for leaves; a sample goes
        left when its bin is ``<= bin``.
    X : ndarray of shape (n_samples, n_features)
    B : ndarray of shape (n_samples, n_features)
        Bins of the training samples.
    thresholds : list of ndarray
        Candidate thresholds per feature.
    midpoints : bool
        Place each threshold halfway between the node's closest training
        values on either side (as scikit-learn does); otherwise pick the
        middle one of the equivalent candidate thresholds.

    Returns
    -------
    children_left, children_right, feature, threshold : ndarrays
    """
    left, right, feat, thr = [], [], [], []

    def add(sub, idx):
        t = len(left)
        left.append(-1)
        right.append(-1)
        feat.append(-2)
        thr.append(-2.0)
        if sub is None:
            return t
        j, b, sub_l, sub_r = sub
        go = B[idx, j] <= b
        if midpoints:
            lo, hi = X[idx[go], j].max(), X[idx[~go], j].min()
            th = 0.5 * (lo + hi)
            if th >= hi:  # adjacent floats: the midpoint rounds up
                th = lo
        else:
            b_next = int(B[idx[~go], j].min())
            th = thresholds[j][(b + b_next - 1) // 2]
        feat[t], thr[t] = j, float(th)
        lt = add(sub_l, idx[go])
        rt = add(sub_r, idx[~go])
        left[t], right[t] = lt, rt
        return t

    add(nested, np.arange(X.shape[0]))
    return (np.array(left, dtype=np.int64), np.array(right, dtype=np.int64),
            np.array(feat, dtype=np.int64), np.array(thr, dtype=np.float64))
