"""A slow, independent greedy SPO tree builder: the oracle for the compiled one.

Written from the paper and the documented rules only, with no running sums,
no vertex matrix and nothing from ``spotree.tree``: every candidate child is
scored from scratch (its weighted mean cost, one oracle call on that mean, and
the weighted SPO loss of its rows against that decision, or its weighted
squared error). Use it on small data.

Rules (as documented for SPOTree):

- candidate thresholds of a numeric feature: every midpoint between
  consecutive distinct present values, or the linear-interpolation quantiles
  ``k/(q+1)`` of the node's present values; each threshold is tried with the
  rows missing the feature on the right, then on the left; then the split
  "present left, missing right";
- categorical features: one category left (categories in increasing order)
  or every subset (in Gray-code order, the last present category right),
  missing rows on either side as above;
- admissible: both children hold at least ``min_leaf`` samples and
  ``min_weight`` weight;
- the best candidate is the first one whose criterion is lower than every
  earlier one by more than a relative 1e-12 (features in increasing order);
- a node is a leaf at max_depth, with fewer than ``min_split`` or
  ``2 * min_leaf`` samples, with zero criterion loss, or without admissible
  split; when the best pure-SPO split does not lower the loss, the best
  squared-error split is taken instead.
"""

from __future__ import annotations

import numpy as np


def _gray_subsets(r):
    """Subsets of range(r - 1) in Gray-code order (as bit masks over ranks)."""
    return [(i ^ (i >> 1)) for i in range(1, 1 << (r - 1))]


class ReferenceTree:
    def __init__(self, problem, X, C, w=None, *, a=1.0, max_depth=None, min_leaf=1,
                 min_split=2, min_weight=0.0, thresholds="all", is_cat=None,
                 subsets=False, max_subset=10):
        self.problem = problem
        self.X = np.asarray(X, dtype=float)
        self.C = np.asarray(C, dtype=float)
        n, p = self.X.shape
        self.w = np.ones(n) if w is None else np.asarray(w, dtype=float)
        self.a = a
        self.max_depth = max_depth
        self.min_leaf = min_leaf
        self.min_split = min_split
        self.min_weight = min_weight
        self.thresholds = thresholds
        self.is_cat = np.zeros(p, dtype=bool) if is_cat is None else np.asarray(is_cat)
        self.subsets = subsets
        self.max_subset = max_subset
        self.sign = problem.sign
        self.z = problem.solve(self.C)[1]
        active = np.flatnonzero(self.w > 0)
        # Rounding levels of the two losses (relative to the data's magnitude):
        # losses below them count as zero and differences below them as ties.
        self.spo_tol = 1e-10 * (self.w @ (np.abs(self.z) + np.abs(self.C).max(axis=1)))
        self.mse_tol = 1e-10 * (self.w @ (self.C ** 2).sum(axis=1))
        self.spo_scale = self.mse_scale = 1.0
        if 0 < a < 1:
            # A root loss at the rounding level is zero (no normalizer): 1.
            spo_root, mse_root = self.spo(active), self.mse(active)
            self.spo_scale = spo_root if spo_root > self.spo_tol else 1.0
            self.mse_scale = mse_root if mse_root > self.mse_tol else 1.0
        self.tol = self.combine(a, self.spo_tol, self.mse_tol)
        self.nodes = []
        self._grow(active, 0)

    def _memo(self, kind, idx, fn):
        key = (kind, np.sort(idx).tobytes())
        cache = self.__dict__.setdefault("_cache", {})
        if key not in cache:
            cache[key] = fn()
        return cache[key]

    # ----------------------------------------------------------- losses
    def decision(self, idx):
        return self._memo("dec", idx, lambda: self._decision(idx))

    def _decision(self, idx):
        W = self.w[idx]
        mean = (W[:, None] * self.C[idx]).sum(axis=0) / W.sum()
        return self.problem.solve(mean[None, :])[0][0]

    def spo(self, idx):
        return self._memo("spo", idx, lambda: self._spo(idx))

    def _spo(self, idx):
        if self.w[idx].sum() == 0:
            return 0.0
        dec = self.decision(idx)
        return float(np.sum(self.w[idx] * self.sign * (self.C[idx] @ dec - self.z[idx])))

    def mse(self, idx):
        W = self.w[idx]
        mean = (W[:, None] * self.C[idx]).sum(axis=0) / W.sum()
        return float(np.sum(W * ((self.C[idx] - mean) ** 2).sum(axis=1)))

    def combine(self, a, spo, mse):
        if a == 1.0:
            return spo
        if a == 0.0:
            return mse
        return a * spo / self.spo_scale + (1 - a) * mse / self.mse_scale

    def crit(self, idx, a, snap=False):
        spo = self.spo(idx) if a > 0 else 0.0
        mse = self.mse(idx) if a < 1 else 0.0
        if snap:
            spo = spo if spo > self.spo_tol else 0.0
            mse = mse if mse > self.mse_tol else 0.0
        return self.combine(a, spo, mse)

    # ------------------------------------------------------- candidates
    def _cuts(self, x):
        u = np.unique(x)
        if self.thresholds == "all":
            return [(u[k], u[k + 1]) for k in range(u.size - 1)]
        q = self.thresholds
        xs = np.sort(x)
        out = []
        for t in np.quantile(xs, np.arange(1, q + 1) / (q + 1.0)):
            k = np.searchsorted(u, t, side="right") - 1
            if 0 <= k < u.size - 1 and (u[k], u[k + 1]) not in out:
                out.append((u[k], u[k + 1]))
        return sorted(out)

    def candidates(self, idx):
        """(feature, left mask over idx, description) in the documented order."""
        X = self.X[idx]
        for f in range(X.shape[1]):
            x = X[:, f]
            miss = np.isnan(x)
            present = ~miss
            lefts = []
            if self.is_cat[f]:
                cats = np.unique(x[present])
                r = cats.size
                if r >= 2:
                    if self.subsets and r <= self.max_subset:
                        for mask in _gray_subsets(r):
                            chosen = [cats[b] for b in range(r - 1) if (mask >> b) & 1]
                            lefts.append((present & np.isin(x, chosen), ("cat", tuple(chosen))))
                    else:
                        for c in cats:
                            lefts.append((present & (x == c), ("cat", (c,))))
            else:
                xp = x[present]
                for lo, hi in self._cuts(xp) if xp.size else []:
                    lefts.append((present & (x <= lo), ("num", lo, hi)))
            for left, desc in lefts:
                yield f, left, desc + ("missing right",)
                if miss.any():
                    yield f, left | miss, desc + ("missing left",)
            if miss.any() and present.any():
                yield f, present, ("missing", "present left")

    def best_split(self, idx, a):
        best = None
        for f, left, desc in self.candidates(idx):
            L, R = idx[left], idx[~left]
            if L.size < self.min_leaf or R.size < self.min_leaf:
                continue
            if (self.w[L].sum() < self.min_weight or self.w[R].sum() < self.min_weight):
                continue
            c = self.crit(L, a, snap=True) + self.crit(R, a, snap=True)
            tol = self.combine(a, self.spo_tol, self.mse_tol)
            if best is None or c < best[0] - 1e-12 * abs(best[0]) - tol:
                best = (c, f, left, desc)
        return best

    # ------------------------------------------------------------ growth
    def _grow(self, idx, depth):
        t = len(self.nodes)
        imp = self.crit(idx, self.a, snap=True)
        node = dict(idx=idx, depth=depth, impurity=imp, loss=self.spo(idx),
                    decision=self.decision(idx), feature=-2, left=-1, right=-1, desc=None)
        self.nodes.append(node)
        if ((self.max_depth is not None and depth >= self.max_depth)
                or idx.size < self.min_split or idx.size < 2 * self.min_leaf
                or imp <= self.tol):
            return t
        best = self.best_split(idx, self.a)
        if best is None:
            return t
        if self.a == 1.0 and imp - best[0] <= max(1e-9 * imp, self.tol):
            best = self.best_split(idx, 0.0)
        _, f, left, desc = best
        node["feature"], node["desc"] = f, desc
        node["left"] = self._grow(idx[left], depth + 1)
        node["right"] = self._grow(idx[~left], depth + 1)
        return t

    def leaf_of_rows(self):
        """Leaf id (preorder) of every training row with positive weight."""
        out = np.full(self.X.shape[0], -1)
        for t, node in enumerate(self.nodes):
            if node["left"] < 0:
                out[node["idx"]] = t
        return out
