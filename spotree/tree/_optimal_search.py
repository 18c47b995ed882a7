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

from .._text import count_noun
from ._kernels import midpoint
from ._optimal_kernels import (depth2_depth1, depth2_pair, depth2_prepare,
                               depth2_root_finish, depth2_root_start, midpoints)

__all__ = ["candidate_thresholds", "bin_features", "OptimalSearch", "nested_to_structure"]


# ---------------------------------------------------------------- binning
def candidate_thresholds(X, thresholds="all"):
    """Candidate split thresholds per feature (missing values ignored).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    thresholds : "all" or int
        ``"all"``: midpoints between consecutive distinct values of each
        feature. An int ``q``: the ``q`` quantiles ``1/(q+1), ..., q/(q+1)``
        of each feature's present values (the paper used ``q = 99``),
        duplicates removed.

    Returns
    -------
    list of ndarray
        Sorted thresholds of each feature; only thresholds that separate at
        least one training sample from the others are kept.
    """
    out = []
    for j in range(X.shape[1]):
        x = X[:, j]
        x = x[~np.isnan(x)]
        u = np.unique(x)
        if u.size < 2:
            t = np.empty(0)
        elif isinstance(thresholds, str):
            t = midpoints(u[:-1], u[1:])
        else:
            q = np.arange(1, thresholds + 1) / (thresholds + 1.0)
            t = np.unique(np.quantile(x, q))
            t = t[(t >= u[0]) & (t < u[-1])]
        out.append(np.ascontiguousarray(t, dtype=np.float64))
    return out


def bin_features(X, thresholds):
    """Bin index of every sample, with missing values binned on both sides.

    Column j of ``B`` is feature j: ``x_j <= thresholds[j][q]`` iff
    ``bin <= q``, a missing value in the top bin (it goes right of every
    cut). Every feature with missing values gets a second column in which
    missing values are bin 0 and the present bins move up by one (they go
    left of every cut); a cut at bin 0 there sends exactly the missing values
    left. The search over all columns therefore tries the missing values on
    both sides of every threshold.

    Returns
    -------
    B : ndarray of int32, shape (n_samples, n_columns)
    n_bins : ndarray of int64, shape (n_columns,)
    columns : ndarray of int64 of shape (n_columns, 2)
        Feature of each column and 1 where its missing values go left.
    """
    n, p = X.shape
    cols, nb, meta = [], [], []
    for j, t in enumerate(thresholds):
        x = X[:, j]
        miss = np.isnan(x)
        b = np.searchsorted(t, x, side="left")  # NaN sorts after every threshold
        has = bool(miss.any())
        cols.append(b)
        nb.append(len(t) + 1 + has)
        meta.append((j, 0))
        if has:
            cols.append(np.where(miss, 0, b + 1))
            nb.append(len(t) + 2)
            meta.append((j, 1))
    B = np.ascontiguousarray(np.column_stack(cols).astype(np.int32)) if cols else \
        np.empty((n, 0), dtype=np.int32)
    return B, np.array(nb, dtype=np.int64), np.array(meta, dtype=np.int64).reshape(-1, 2)


# ------------------------------------------------ vertex list: compiled
def _depth2_vertex(idx, B, n_bins, G, cnt, min_leaf, penalty, max_depth, tol,
                   deadline=np.inf):
    """Best tree of depth <= max_depth (0, 1 or 2) on the samples ``idx``.

    Costs are ``min_k`` of summed rows of ``G`` (already weighted and signed),
    plus ``penalty`` per split. Every leaf must hold at least ``min_leaf`` of
    ``cnt``. The compiled work is cut into calls of bounded length, so that
    the clock (and Ctrl-C) is checked between them; past ``deadline`` the
    best tree found so far is returned with a third value ``True``.

    Returns
    -------
    cost : float
    split : int64 array of 6 entries
        root feature, root bin, left child feature, left bin, right child
        feature, right bin; -1 marks a leaf. A sample goes left at a split
        ``(j, b)`` when its bin on feature j is <= b.
    timed_out : bool
    """
    CB, occ, nc, H, HW, tot, W = depth2_prepare(idx, B, n_bins, G, cnt)
    out = -np.ones(6, dtype=np.int64)
    if max_depth == 0:
        return float(tot.min()), out, False
    best = depth2_depth1(occ, nc, H, HW, tot, W, float(min_leaf), float(penalty), float(tol),
                         out)
    if max_depth == 1 or W < 3.0 * min_leaf:
        return best, out, False
    n_s, p = CB.shape
    K = G.shape[1]
    maxc = occ.shape[1]
    order = np.empty(n_s, dtype=np.int64)
    start = np.zeros(maxc + 1, dtype=np.int64)
    wLc = np.zeros(maxc)
    PL = np.zeros(K)
    bestL = np.zeros(maxc)
    bestR = np.zeros(maxc)
    splL = np.zeros((maxc, 2), dtype=np.int64)
    splR = np.zeros((maxc, 2), dtype=np.int64)
    HL = np.zeros((maxc, K))
    HLW = np.zeros(maxc)
    for j1 in range(p):
        m1 = int(nc[j1])
        if m1 < 2:
            continue
        depth2_root_start(j1, CB, nc, H, HW, tot, order, start, wLc, PL, bestL, bestR,
                          splL, splR)
        for j2 in range(p):
            m2 = int(nc[j2])
            if m2 < 2:
                continue
            HL[:m2] = 0.0
            HLW[:m2] = 0.0
            PL[:] = 0.0
            # About 4e6 operations per call: root cuts cost rows/m1 + 2 m2 bins each.
            chunk = max(1, int(4e6 / ((n_s / m1 + 2 * m2) * K)))
            c1, done = 0, False
            while not done:
                c1, done = depth2_pair(j1, j2, c1, c1 + chunk, idx, CB, occ, nc, H, HW, G,
                                       cnt, tot, W, float(min_leaf), float(penalty), order,
                                       start, wLc, HL, HLW, PL, bestL, bestR, splL, splR,
                                       float(tol))
                if time.perf_counter() > deadline:
                    return best, out, True
        best = depth2_root_finish(j1, occ, nc, W, float(min_leaf), float(penalty), wLc,
                                  bestL, bestR, splL, splR, best, float(tol), out)
    return best, out, False


# ------------------------------------------------ oracle (no vertices)
def _depth2_oracle(idx, B, n_bins, Cw, sign, solve, min_leaf, penalty, max_depth, tol,
                   deadline=np.inf):
    """Same contract as :func:`_depth2_vertex`, scoring leaves with the oracle.

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
    count : ndarray of shape (n_samples,)
        What ``min_leaf`` counts per sample (1 for rows of positive weight).
    min_leaf : float
        Minimum count of a leaf.
    penalty : float
        Cost added per split (``alpha`` times the total weight).
    G : ndarray of shape (n_samples, K), optional
        ``sign * w_i * c_i^T V_k``: the vertex path.
    C, sign, solve : optional
        Costs, sense and batch oracle for the path without vertices.
    sample_weight : ndarray of shape (n_samples,), optional
        Weights of the costs on that path (G already holds them).
    row_bound : ndarray of shape (n_samples,)
        ``sign * w_i * z*(c_i)``: a sample's cost in a leaf of its own, so
        the sum over a subset lower-bounds any tree on it.
    time_limit : float
    verbose : bool
        Print the incumbent after each root feature (depth >= 3).
    report_unit : float, optional
        What turns a cost above ``row_bound`` into the objective as reported
        (the costs' unit over the total weight); None: one over the total
        count.
    """

    def __init__(self, B, n_bins, count, min_leaf, penalty, row_bound, *, G=None,
                 C=None, sign=1.0, solve=None, sample_weight=None, time_limit=np.inf,
                 verbose=False, report_unit=None):
        self.B = B
        self.n_bins = n_bins
        self.w = np.ascontiguousarray(count, dtype=np.float64)
        self.min_leaf = float(min_leaf)
        self.penalty = float(penalty)
        self.row_bound = row_bound
        self.G = G
        # Largest cost of each sample over the vertices (similarity bounds).
        self.row_max = None if G is None else G.max(axis=1)
        self.Cw = None if G is not None else (C * sample_weight[:, None], self.w)
        self.sign = sign
        self.solve_fn = solve
        # Rounding level of sums of this magnitude: relative, with no absolute
        # floor, so that the search behaves the same for costs of any scale.
        mag = (np.abs(G).max(axis=1) if G is not None
               else np.abs(C).max(axis=1) * sample_weight)
        self.tol = 1e-11 * float(np.abs(row_bound).sum() + mag.sum())
        self.time_limit = time_limit
        self.verbose = verbose
        self.report_unit = report_unit
        self.cache = {}
        self.n_nodes_explored = 0

    def _small(self, idx, depth):
        """Best tree of depth <= 2: ``(cost, split, timed_out)``.

        Both routines stop at the deadline with their best tree so far.
        """
        self.n_nodes_explored += 1
        if self.G is not None:
            return _depth2_vertex(idx, self.B, self.n_bins, self.G, self.w, self.min_leaf,
                                  self.penalty, depth, self.tol,
                                  deadline=self.start + self.time_limit)
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
                    # In the units of the summary line and result_ (it was in
                    # the scaled costs' units, over the count of rows).
                    scale = 1.0 / W if self.report_unit is None else self.report_unit
                    print(f"  root feature {j}: incumbent objective "
                          f"{(best_cost - lb_all) * scale:.6g}, "
                          f"{time.perf_counter() - self.start:.2f} s, "
                          f"{count_noun(self.n_nodes_explored, 'subproblem')}")
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


def nested_to_structure(nested, X, B, thresholds, use_midpoints, columns=None):
    """Flat split arrays (parents before children) from the search's nested tuples.

    Parameters
    ----------
    nested : tuple or None
        ``(column, bin, left, right)`` with ``None`` for leaves; a sample goes
        left when its bin is ``<= bin``.
    X : ndarray of shape (n_samples, n_features)
    B : ndarray of shape (n_samples, n_columns)
        Bins of the training samples (see :func:`bin_features`).
    thresholds : list of ndarray
        Candidate thresholds per feature.
    use_midpoints : bool
        Place each threshold halfway between the node's closest training
        values on either side (as scikit-learn does); otherwise pick the
        middle one of the equivalent candidate thresholds.
    columns : ndarray of shape (n_columns, 2), default=None
        Feature of each column of B and whether its missing values go left;
        None when the columns are the features and nothing is missing.

    Returns
    -------
    children_left, children_right, feature, threshold, missing_go_to_left : ndarrays
        A threshold of +inf sends every present value left (missing right);
        a split that sends only missing values left is stored that way, with
        its subtrees swapped.
    """
    if columns is None:
        columns = np.column_stack([np.arange(B.shape[1]), np.zeros(B.shape[1], dtype=int)])
    left, right, feat, thr, mgl = [], [], [], [], []

    def add(sub, idx):
        t = len(left)
        left.append(-1)
        right.append(-1)
        feat.append(-2)
        thr.append(-2.0)
        mgl.append(0)
        if sub is None:
            return t
        col, b, sub_l, sub_r = sub
        j, nan_left = int(columns[col, 0]), int(columns[col, 1])
        go = B[idx, col] <= b
        x = X[idx, j]
        if not (go & ~np.isnan(x)).any():
            # Only missing values go left: the split of present from missing
            # values, stored as SPOTree stores it (present left at +inf,
            # missing right), the one form model files and the exporters know
            # (a threshold of -inf could be saved but not loaded).
            go, sub_l, sub_r, nan_left = ~go, sub_r, sub_l, 0
        present_l = go & ~np.isnan(x)
        present_r = ~go & ~np.isnan(x)
        if not present_r.any():
            th = np.inf
        elif use_midpoints:
            th = midpoint(x[present_l].max(), x[present_r].min())
        else:
            # Present bins of this column sit one higher when missing is bin 0.
            lo = b - nan_left
            b_next = int(B[idx[present_r], col].min()) - nan_left
            th = thresholds[j][(lo + b_next - 1) // 2]
        feat[t], thr[t], mgl[t] = j, float(th), nan_left
        lt = add(sub_l, idx[go])
        rt = add(sub_r, idx[~go])
        left[t], right[t] = lt, rt
        return t

    add(nested, np.arange(X.shape[0]))
    return (np.array(left, dtype=np.int64), np.array(right, dtype=np.int64),
            np.array(feat, dtype=np.int64), np.array(thr, dtype=np.float64),
            np.array(mgl, dtype=np.int64))
