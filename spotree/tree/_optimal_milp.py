"""The paper's mixed-integer program for optimal SPO trees (Theorem 2, appendices A-B).

Variables, for a complete tree of depth H with branch nodes t = 1..B (heap
order: the children of t are 2t and 2t+1) and leaves l = 1..L:

- ``a[j, t]`` binary: node t splits on feature j; ``d[t]`` binary: node t is
  an active split; ``b[t]`` in [0, 1]: its threshold on the features'
  ranks, each feature's distinct training values mapped to
  ``0, 1/(m-1), ..., 1`` (``b[t] = 1`` when inactive: the paper's correction,
  which sends every sample left). Thresholds are read back as midpoints of
  the original values.
- ``r[i, l]`` binary: sample i is in leaf l; ``k[l]`` binary: leaf l is used.
- ``w_l`` in S: the leaf's decision, either as variables under the
  LinearProgram's constraints (integrality kept) or as convex weights
  ``lam[l, :]`` over the vertex list (``w_l = sum_k lam[l, k] V_k``; a linear
  objective attains its optimum at a vertex, so the hull is exact).
- ``y[i, l]`` continuous: ``y >= s c_i^T w_l - M1 (1 - r)``,
  ``y >= -M2 r`` (``s`` the problem's sign, so the model always minimizes).

Objective: ``(1 / W) sum_i w_i (sum_l y[i, l] - s z*(c_i)) + alpha sum_t d[t]``
with ``W`` the total sample weight (the paper's 1/n for unit weights), and
the cut ``sum_l y[i, l] >= s z*(c_i)`` of appendix B.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import sparse

from ._kernels import midpoint
from ._tree import TREE_LEAF

__all__ = ["MILP_MAX_BINARIES", "milp_n_binaries", "milp_can_encode", "MilpModel"]

#: Largest number of binary variables the MILP may have. ``n * 2^H`` leaf
#: assignments dominate; beyond this HiGHS cannot make progress in any
#: reasonable time (and the model alone takes gigabytes).
MILP_MAX_BINARIES = 100_000

#: The largest value of a Gurobi int parameter (its MAXINT), the Seed included.
_GUROBI_MAXINT = 2_000_000_000


def milp_n_binaries(n_samples, n_features, max_depth):
    """Number of binaries of the MILP: r (n L), k (L), a (p B) and d (B)."""
    L = 2 ** max_depth
    B = L - 1
    return n_samples * L + L + n_features * B + B


def _scale_features(X, feature_precision):
    """Each feature as the ranks of its distinct values, scaled to [0, 1], and its epsilon.

    The k-th smallest of a feature's ``m`` distinct training values becomes
    ``k / (m - 1)``, so that neighbouring values lie ``eps_j = 1 / (m - 1)``
    apart. The MILP's split test ``x + eps <= b`` (left) versus ``x >= b``
    separates them by that margin, far above the solver's tolerances (about
    1e-6) whatever the values: with the min-max scaling used before, values
    closer than 1e-7 of their feature's range (a few hundred ordinary rows
    reach such gaps) were routed as no threshold can, and the "optimal" tree
    was not. A threshold between ranks k and k + 1 is the one between the
    k-th and (k+1)-th values, so the feasible trees are the same.

    With ``feature_precision``, the min-max-scaled values are rounded to that
    precision first and values that round alike share one rank (they cannot
    be separated), as documented for the parameter.
    """
    if feature_precision is not None:
        lo, hi = X.min(axis=0), X.max(axis=0)
        with np.errstate(over="ignore"):
            span = hi - lo
        if np.isfinite(span).all():
            Xs = (X - lo) / np.where(hi > lo, span, 1.0)
        else:
            # A feature spans more than the float range: halve first (inf / inf
            # is NaN).
            wide = ~np.isfinite(span)
            Xs = np.empty_like(X)
            Xs[:, ~wide] = (X[:, ~wide] - lo[~wide]) / np.where(hi > lo, span, 1.0)[~wide]
            Xs[:, wide] = (0.5 * X[:, wide] - 0.5 * lo[wide]) / (0.5 * hi[wide]
                                                                  - 0.5 * lo[wide])
        # (Rounding is monotone, so the ranks of the rounded values keep the
        # order of the raw ones.)
        X = np.round(Xs / feature_precision) * feature_precision
    Xs = np.zeros(X.shape, dtype=np.float64)
    eps = np.zeros(X.shape[1])
    for j in range(X.shape[1]):
        u, rank = np.unique(X[:, j], return_inverse=True)
        if u.size > 1:
            eps[j] = 1.0 / (u.size - 1)
            Xs[:, j] = rank.ravel() * eps[j]
    return Xs, eps


def _lp_parts(problem):
    """The constraint data of a LinearProgram-like problem, or None."""
    if not all(hasattr(problem, a) for a in ("A_ub", "b_ub", "A_eq", "b_eq", "bounds")):
        # A problem without a vertex list that can state itself as a
        # LinearProgram (an Assignment from 7x7 on): its constraints.
        to_lp = getattr(problem, "to_linear_program", None)
        if to_lp is None or problem.vertices() is not None:
            return None
        problem = to_lp()
    d = problem.n_costs
    lo, hi = np.full(d, -np.inf), np.full(d, np.inf)
    bounds = problem.bounds
    pairs = [bounds] * d if (isinstance(bounds, tuple) and len(bounds) == 2 and not
                             isinstance(bounds[0], (tuple, list))) else list(bounds)
    for q, (a, b) in enumerate(pairs):
        lo[q] = -np.inf if a is None else float(a)
        hi[q] = np.inf if b is None else float(b)
    integ = getattr(problem, "integrality", None)
    integ = np.zeros(d, dtype=np.int8) if integ is None else np.asarray(integ, dtype=np.int8)
    return problem.A_ub, problem.b_ub, problem.A_eq, problem.b_eq, lo, hi, integ


def milp_can_encode(problem):
    """Whether the feasible set is known as constraints or as a vertex list."""
    return _lp_parts(problem) is not None or problem.vertices() is not None


#: Gurobi's optimization statuses (the names of its GRB constants).
_GUROBI_STATUSES = ("LOADED", "OPTIMAL", "INFEASIBLE", "INF_OR_UNBD", "UNBOUNDED", "CUTOFF",
                    "ITERATION_LIMIT", "NODE_LIMIT", "TIME_LIMIT", "SOLUTION_LIMIT",
                    "INTERRUPTED", "NUMERIC", "SUBOPTIMAL", "INPROGRESS", "USER_OBJ_LIMIT",
                    "WORK_LIMIT", "MEM_LIMIT")


def _gurobi_status_name(gp, code):
    """Gurobi's status ``code`` in words: HiGHS's wording for optimal and time
    limit (which the fit maps to its own statuses), else the GRB constant's
    name ("NUMERIC" is "Numeric"); the code itself for one unknown."""
    if code == gp.GRB.OPTIMAL:
        return "Optimal"
    if code == gp.GRB.TIME_LIMIT:
        return "Time limit reached"
    for name in _GUROBI_STATUSES:
        if getattr(gp.GRB, name, None) == code:
            return name.replace("_", " ").capitalize()
    return str(code)


class MilpModel:
    """Build, warm-start and solve the SPO tree MILP for one training set.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    C : ndarray of shape (n, d)
    sample_weight : ndarray of shape (n,)
    z : ndarray of shape (n,)
        ``z*(c_i)`` in the problem's own sense.
    problem : DecisionProblem
    max_depth : int
    min_leaf : float
        N_min, the minimum number of samples of a used leaf (the paper's
        count; rows of zero weight do not count).
    alpha : float
    feature_precision : float or None
    """

    def __init__(self, X, C, sample_weight, z, problem, max_depth, min_leaf, alpha=0.0,
                 feature_precision=None):
        self.X, self.C, self.sw, self.problem = X, C, sample_weight, problem
        self.H = int(max_depth)
        self.L = 2 ** self.H
        self.Bn = self.L - 1
        self.n, self.p = X.shape
        self.min_leaf = float(min_leaf)
        self.count = (np.asarray(sample_weight) > 0).astype(np.float64)
        self.alpha = float(alpha)
        self.s = problem.sign
        self.Cs = self.s * C                 # minimized costs
        self.zs = self.s * z
        self.Xs, self.eps = _scale_features(X, feature_precision)
        self.lp = _lp_parts(problem)
        self.V = None if self.lp is not None else problem.vertices()
        if self.lp is None and self.V is None:
            raise ValueError(f"{type(problem).__name__} has neither linear constraints nor a "
                             "vertex list, so the MILP cannot encode its feasible set; use "
                             "method='search' instead.")
        self._layout()

    # ------------------------------------------------------------ layout
    def _layout(self):
        n, p, L, Bn = self.n, self.p, self.L, self.Bn
        sizes = [("a", p * Bn), ("d", Bn), ("b", Bn), ("r", n * L), ("k", L)]
        if self.lp is not None:
            self.nw = self.problem.n_costs
            sizes.append(("w", L * self.nw))
        else:
            self.nw = self.V.shape[0]
            sizes.append(("lam", L * self.nw))
        sizes.append(("y", n * L))
        self.off = {}
        pos = 0
        for name, size in sizes:
            self.off[name] = pos
            pos += size
        self.n_cols = pos

    def a(self, j, t):          # t = 1..Bn
        return self.off["a"] + (t - 1) * self.p + j

    def dv(self, t):
        return self.off["d"] + t - 1

    def bv(self, t):
        return self.off["b"] + t - 1

    def r(self, i, l):          # l = 0..L-1 (arrays accept vectors of i)
        return self.off["r"] + i * self.L + l

    def k(self, l):
        return self.off["k"] + l

    def y(self, i, l):
        return self.off["y"] + i * self.L + l

    def wcol(self, l, q):
        key = "w" if self.lp is not None else "lam"
        return self.off[key] + l * self.nw + q

    def _ancestors(self, l):
        """Branch nodes above leaf l, each with True when the path goes left."""
        node = self.Bn + 1 + l
        out = []
        while node > 1:
            parent = node // 2
            out.append((parent, node % 2 == 0))
            node = parent
        return out

    def big_m(self):
        """M1 >= s c_i^T w and M2 >= -s c_i^T w over S, as in Theorem 2."""
        if self.V is not None:
            G = self.Cs @ self.V.T
            hi, lo = G.max(axis=1), G.min(axis=1)
        else:
            # max_w s c^T w = -s z*(-c) and min_w s c^T w = s z*(c).
            _, z_neg = self.problem.solve(-self.C)
            hi, lo = -self.s * z_neg, self.zs
        return max(float(hi.max()), 0.0), max(float(-lo.min()), 0.0)

    # ------------------------------------------------------------- build
    def build(self):
        """The model as column bounds, costs, integrality and a sparse row matrix."""
        n, p, L, Bn = self.n, self.p, self.L, self.Bn
        W = self.sw.sum()
        M1, M2 = self.big_m()
        self.M1, self.M2 = M1, M2
        cost = np.zeros(self.n_cols)
        lo = np.zeros(self.n_cols)
        hi = np.ones(self.n_cols)
        integ = np.zeros(self.n_cols, dtype=np.int8)
        rows, cols, vals, rlo, rhi = [], [], [], [], []
        nrow = [0]

        def add_rows(ri, ci, vi, lo_, hi_):
            """Rows given as local row ids ri (0..m-1); m from the bound arrays or ri."""
            m = next((np.size(v) for v in (lo_, hi_) if np.ndim(v)), None)
            if m is None:
                m = int(np.max(ri)) + 1 if len(ri) else 0
            rows.append(np.asarray(ri, dtype=np.int64) + nrow[0])
            cols.append(np.asarray(ci, dtype=np.int64))
            vals.append(np.asarray(vi, dtype=np.float64))
            rlo.append(np.broadcast_to(np.asarray(lo_, dtype=np.float64), (m,)))
            rhi.append(np.broadcast_to(np.asarray(hi_, dtype=np.float64), (m,)))
            nrow[0] += m

        ia = np.arange(n)
        # Binaries.
        for name in ("a", "d", "r", "k"):
            o = self.off[name]
            size = {"a": p * Bn, "d": Bn, "r": n * L, "k": L}[name]
            integ[o:o + size] = 1
        constant = np.flatnonzero(self.eps == 0)
        for t in range(1, Bn + 1):
            for j in constant:          # constant features cannot split
                hi[self.a(j, t)] = 0.0
        cost[self.off["d"]:self.off["d"] + Bn] = self.alpha
        # w / lambda
        if self.lp is not None:
            A_ub, b_ub, A_eq, b_eq, wlo, whi, winteg = self.lp
            for l in range(L):
                c0 = self.wcol(l, 0)
                lo[c0:c0 + self.nw] = wlo
                hi[c0:c0 + self.nw] = whi
                integ[c0:c0 + self.nw] = winteg
                for A, b, eq in ((A_ub, b_ub, False), (A_eq, b_eq, True)):
                    if A is None:
                        continue
                    A = A.toarray() if hasattr(A, "toarray") else np.asarray(A, dtype=np.float64)
                    ri, ci = np.nonzero(A)
                    add_rows(ri, c0 + ci, A[ri, ci],
                             b if eq else np.full(A.shape[0], -np.inf), b)
        else:
            for l in range(L):
                c0 = self.wcol(l, 0)
                add_rows(np.zeros(self.nw), c0 + np.arange(self.nw), np.ones(self.nw), 1.0, 1.0)
        # y: free below (bounded by the rows), objective weight w_i / W.
        yo = self.off["y"]
        lo[yo:yo + n * L] = -np.inf
        hi[yo:yo + n * L] = np.inf
        cost[yo:yo + n * L] = np.repeat(self.sw / W, L)
        self.offset = -float(self.sw @ self.zs) / W

        # (a) sum_l r_il = 1
        add_rows(np.repeat(ia, L), self.r(np.repeat(ia, L), np.tile(np.arange(L), n)),
                 np.ones(n * L), 1.0, 1.0)
        # (b) r_il - k_l <= 0
        m = n * L
        ii, ll = np.repeat(ia, L), np.tile(np.arange(L), n)
        add_rows(np.concatenate([np.arange(m), np.arange(m)]),
                 np.concatenate([self.r(ii, ll), self.k(ll)]),
                 np.concatenate([np.ones(m), -np.ones(m)]), -np.inf, 0.0)
        # (c) sum_i r_il - N_min k_l >= 0 (over rows of positive weight)
        for l in range(L):
            add_rows(np.zeros(n + 1, dtype=np.int64),
                     np.concatenate([self.r(ia, l), [self.k(l)]]),
                     np.concatenate([self.count, [-self.min_leaf]]), 0.0, np.inf)
        # (d, e) split logic per leaf and ancestor.
        eps_max = float(self.eps.max()) if self.eps.size else 0.0
        for l in range(L):
            for t, goes_left in self._ancestors(l):
                acols = self.a(np.arange(p), t)
                ri = np.concatenate([np.repeat(ia, p), ia, ia])
                ci = np.concatenate([np.tile(acols, n), np.full(n, self.bv(t)), self.r(ia, l)])
                if goes_left:
                    # a^T (x_i + eps) - b + (1 + eps_max) r_il <= 1 + eps_max
                    av = (self.Xs + self.eps[None, :]).ravel()
                    vi = np.concatenate([av, -np.ones(n), np.full(n, 1.0 + eps_max)])
                    add_rows(ri, ci, vi, -np.inf, 1.0 + eps_max)
                else:
                    # a^T x_i - b - r_il >= -1
                    vi = np.concatenate([self.Xs.ravel(), -np.ones(n), -np.ones(n)])
                    add_rows(ri, ci, vi, -1.0, np.inf)
        # (f) sum_j a_jt = d_t, (g) b_t + d_t >= 1, (h) d_t <= d_parent
        for t in range(1, Bn + 1):
            add_rows(np.zeros(p + 1), np.concatenate([self.a(np.arange(p), t), [self.dv(t)]]),
                     np.concatenate([np.ones(p), [-1.0]]), 0.0, 0.0)
            add_rows([0, 0], [self.bv(t), self.dv(t)], [1.0, 1.0], 1.0, np.inf)
            if t > 1:
                add_rows([0, 0], [self.dv(t), self.dv(t // 2)], [1.0, -1.0], -np.inf, 0.0)
        # Linearization: y_il - s c_i^T w_l - M1 r_il >= -M1 and y_il + M2 r_il >= 0.
        if self.V is not None:
            coef = self.Cs @ self.V.T       # (n, K): s c_i^T V_k
        else:
            coef = self.Cs
        nw = self.nw
        for l in range(L):
            ri = np.concatenate([ia, np.repeat(ia, nw), ia])
            ci = np.concatenate([self.y(ia, l), np.tile(self.wcol(l, np.arange(nw)), n),
                                 self.r(ia, l)])
            vi = np.concatenate([np.ones(n), -coef.ravel(), np.full(n, -M1)])
            keep = vi != 0
            add_rows(ri[keep], ci[keep], vi[keep], np.full(n, -M1), np.inf)
            add_rows(np.concatenate([ia, ia]), np.concatenate([self.y(ia, l), self.r(ia, l)]),
                     np.concatenate([np.ones(n), np.full(n, M2)]), 0.0, np.inf)
        # Appendix B cut: sum_l y_il >= s z*(c_i).
        add_rows(np.repeat(ia, L), self.y(np.repeat(ia, L), np.tile(np.arange(L), n)),
                 np.ones(n * L), self.zs, np.inf)

        A = sparse.csc_matrix((np.concatenate(vals), (np.concatenate(rows),
                                                      np.concatenate(cols))),
                              shape=(nrow[0], self.n_cols))
        A.sum_duplicates()
        self.cost, self.col_lo, self.col_hi, self.integ = cost, lo, hi, integ
        self.A = A
        self.row_lo, self.row_hi = np.concatenate(rlo), np.concatenate(rhi)
        return self

    # ----------------------------------------------------- warm start
    def _tie_ranks(self, tree, node):
        """The rank ``b`` of the split at ``node`` that sends a group of tied
        values it cuts right, and the one that sends the group left (None when
        the group is the feature's largest value: nothing would go right); both
        the same when it cuts none."""
        j = int(tree.feature[node])
        xs, xo = self.Xs[:, j], self.X[:, j]
        right = xo > tree.threshold[node]
        if not right.any():
            return 1.0, 1.0
        b = xs[right].min()
        if not (xs[~right] == b).any():
            return b, b
        above = xs > b
        return b, (xs[above].min() if above.any() else None)

    def tied_splits(self, tree):
        """The split nodes of ``tree`` whose threshold cuts a group of values
        that ``feature_precision`` ties."""
        return [int(v) for v in np.flatnonzero(tree.children_left != TREE_LEAF)
                if len(set(self._tie_ranks(tree, v))) > 1]

    def assignment_from_tree(self, tree, ties_left=()):
        """An assignment (a, b, d, r, k, w, y) from a fitted Tree of depth <= H.

        Rows are routed by the MILP's own test (rank at least ``b`` goes
        right), with ``b`` the rank of the smallest value right of the tree's
        threshold: the tree's routing, except that values which
        ``feature_precision`` ties all go right with the largest of them, or,
        at the split nodes in ``ties_left``, left with the smallest of them.
        It is feasible unless that leaves a used leaf below N_min
        (:meth:`is_feasible`); it is None when a node of ``ties_left`` cuts
        the group of its feature's largest value (sent left, it leaves the
        split nothing to send right).
        """
        n, L = self.n, self.L
        x = np.zeros(self.n_cols)
        # Map tree nodes to heap positions of the complete tree.
        heap = {0: 1}
        leaf_slot = {}
        b_of = np.zeros(tree.node_count)
        for node in range(tree.node_count):
            t = heap[node]
            if tree.children_left[node] != TREE_LEAF:
                j = int(tree.feature[node])
                x[self.a(j, t)] = 1.0
                x[self.dv(t)] = 1.0
                b_right, b_left = self._tie_ranks(tree, node)
                b_of[node] = b_left if node in ties_left else b_right
                if b_of[node] is None:
                    return None
                x[self.bv(t)] = b_of[node]
                heap[int(tree.children_left[node])] = 2 * t
                heap[int(tree.children_right[node])] = 2 * t + 1
            elif t > self.Bn:
                leaf_slot[node] = t - (self.Bn + 1)
            else:
                # An early leaf: its branch descendants are inactive (b = 1, all
                # samples go left), so its samples reach the leftmost leaf below.
                self._inactive_below(x, t)
                u = t
                while u <= self.Bn:
                    u = 2 * u
                leaf_slot[node] = u - (self.Bn + 1)
        # (tree.apply routed by the raw values: with rounded ties split by the
        # threshold, the start broke the split rows and HiGHS dropped it.)
        leaf_of = np.zeros(n, dtype=np.intp)
        inner = tree.children_left[leaf_of] != TREE_LEAF
        while inner.any():
            rows, nodes = np.flatnonzero(inner), leaf_of[inner]
            go_right = self.Xs[rows, tree.feature[nodes]] >= b_of[nodes]
            leaf_of[rows] = np.where(go_right, tree.children_right[nodes],
                                     tree.children_left[nodes])
            inner = tree.children_left[leaf_of] != TREE_LEAF
        ia = np.arange(n)
        slot = np.array([leaf_slot[int(v)] for v in leaf_of])
        x[self.r(ia, slot)] = 1.0
        used = np.unique(slot)
        x[self.k(used)] = 1.0
        dec = {}
        for node, l in leaf_slot.items():
            dec[l] = tree.decision[node]
        fallback = tree.decision[0]
        for l in range(L):
            w = dec.get(l, fallback)
            if self.V is not None:
                kk = int(np.argmin(((self.V - w[None, :]) ** 2).sum(axis=1)))
                x[self.wcol(l, kk)] = 1.0
                dec[l] = self.V[kk]
            else:
                x[self.wcol(l, np.arange(self.nw))] = w
                dec[l] = w
        # y_il = r_il * s c_i^T w_l (0 where r_il = 0, which satisfies both rows).
        vals = np.einsum("ij,ij->i", self.Cs, np.array([dec[l] for l in slot]))
        x[self.y(ia, slot)] = vals
        return x

    def _inactive_below(self, x, t):
        if t > self.Bn:
            return
        x[self.bv(t)] = 1.0
        self._inactive_below(x, 2 * t)
        self._inactive_below(x, 2 * t + 1)

    def is_feasible(self, x, tol=1e-9):
        """Whether ``x`` satisfies every row and column bound (to ``tol``)."""
        Ax = self.A @ x
        return bool((Ax >= self.row_lo - tol).all() and (Ax <= self.row_hi + tol).all()
                    and (x >= self.col_lo - tol).all() and (x <= self.col_hi + tol).all())

    def objective_of(self, x):
        return float(self.cost @ x + self.offset)

    # ---------------------------------------------------------- extract
    def structure_from_solution(self, x):
        """The split structure of a solution, inactive and one-sided splits collapsed.

        Thresholds are midpoints between training values of the original
        features, placed so that every training sample is routed as by the
        MILP's test ``x_scaled + eps <= b`` (left) versus ``x_scaled >= b``.
        """
        left, right, feat, thr = [], [], [], []
        member0 = np.ones(self.n, dtype=bool)

        def new_node():
            left.append(TREE_LEAF)
            right.append(TREE_LEAF)
            feat.append(-2)
            thr.append(-2.0)
            return len(left) - 1

        def grow(t, member, node):
            if t > self.Bn or x[self.dv(t)] < 0.5:
                return
            aj = np.array([x[self.a(j, t)] for j in range(self.p)])
            j = int(np.argmax(aj))
            b = x[self.bv(t)]
            xs = self.Xs[:, j]
            # Training values that the MILP sends left lie at least eps_j below b.
            go_left_all = xs <= b - self.eps[j] / 2.0
            xo = self.X[:, j]
            if go_left_all.all() or not go_left_all.any():
                # The split separates no training sample: follow the non-empty side.
                grow(2 * t if go_left_all.all() else 2 * t + 1, member, node)
                return
            threshold = midpoint(xo[go_left_all].max(), xo[~go_left_all].min())
            go_left = xo <= threshold
            ml, mr = member & go_left, member & ~go_left
            if not ml.any() or not mr.any():
                grow(2 * t if ml.any() else 2 * t + 1, member, node)
                return
            feat[node], thr[node] = j, threshold
            lc = new_node()
            rc = new_node()
            left[node], right[node] = lc, rc
            grow(2 * t, ml, lc)
            grow(2 * t + 1, mr, rc)

        root = new_node()
        grow(1, member0, root)
        return (np.array(left), np.array(right), np.array(feat), np.array(thr))

    # ------------------------------------------------------------ solve
    def solve_highs(self, warm=None, time_limit=60.0, verbose=False, random_state=0):
        """Solve with HiGHS; see :meth:`_solve_checked` for the result."""
        from ..problems._highs import solve_once

        def run(start, limit):
            res = solve_once(self.A, self.col_lo, self.col_hi, self.row_lo, self.row_hi,
                             self.integ, self.cost, offset=self.offset, start=start,
                             time_limit=limit, random_seed=random_state, verbose=verbose)
            return dict(res, n_nodes_explored=res["n_nodes"])

        return self._solve_checked(run, "highs", warm, time_limit)

    def _solve_checked(self, run, solver, warm, time_limit):
        """Run a solver, checking that its reported objective is its point's.

        ``run(start, time_limit)`` returns a dict with ``status`` (the
        solver's own wording), ``x``, ``objective``, ``bound``, ``gap`` and
        ``n_nodes_explored``. A run from the warm start whose objective is not
        that of its point is retried without the start in the time left; if
        the result is still inconsistent, ``consistent`` is False and its
        bound (which then proves nothing) is -inf.
        """
        t0 = time.perf_counter()
        res = run(warm, time_limit)
        if warm is not None and not self._reports_its_point(res):
            # HiGHS (1.16, presolve with a given start) can return the start
            # while reporting, and proving "optimal", an objective below that
            # of any tree (a 5-row knapsack tree: 0.662 reported, 0.862
            # returned, 0.697 the optimum). Solve again without the start.
            left = time_limit - (time.perf_counter() - t0)
            if left > 0:
                res = run(None, left)
        consistent = self._reports_its_point(res)
        if not consistent:
            # A run whose objective is not that of its own point proves no
            # bound either (one above every tree was clipped to the returned
            # tree's objective: a gap of 0 for the greedy tree). None is
            # given: the fit then reports the trivial bound 0.
            res = dict(res, bound=-np.inf, gap=np.inf)
        return dict(solver=solver, status=res["status"], consistent=consistent, x=res["x"],
                    objective=res["objective"], bound=res["bound"], gap=res["gap"],
                    runtime=time.perf_counter() - t0,
                    n_nodes_explored=res["n_nodes_explored"])

    def _reports_its_point(self, res):
        """Whether the solver's reported objective is that of the point it returned."""
        if res["x"] is None:
            return True
        own = self.objective_of(res["x"])
        return abs(own - res["objective"]) <= 1e-6 * max(1.0, abs(own))

    def solve_gurobi(self, warm=None, time_limit=60.0, verbose=False, random_state=0):
        """Solve with Gurobi; see :meth:`_solve_checked` for the result."""
        from .._compat import import_optional

        gp = import_optional("gurobipy", "OptimalSPOTree(method='milp', solver='gurobi')")
        env = gp.Env(empty=True)
        try:
            env.setParam("OutputFlag", int(bool(verbose)))
            env.start()
            return self._solve_checked(
                lambda start, limit: self._gurobi_once(gp, env, start, limit, random_state),
                "gurobi", warm, time_limit)
        finally:
            # The model and its environment hold a license token until
            # disposed, and garbage collection may come much later (or never,
            # in a reference cycle): a loop of fits could run out of tokens.
            env.dispose()

    def _gurobi_once(self, gp, env, start, time_limit, random_state):
        m = None
        try:
            m = gp.Model(env=env)
            m.Params.TimeLimit = float(time_limit)
            # Gurobi refuses int parameters above its MAXINT (2e9), and seeds
            # are drawn below 2^31 - 1.
            m.Params.Seed = int(random_state) % (_GUROBI_MAXINT + 1)
            # (As HiGHS's: at the default relative gap, 1e-4, "optimal" was not.)
            m.Params.MIPGap = 0.0
            vtype = np.where(self.integ > 0, gp.GRB.INTEGER, gp.GRB.CONTINUOUS)
            xv = m.addMVar(self.n_cols, lb=self.col_lo, ub=self.col_hi, obj=self.cost,
                           vtype=vtype)
            A = self.A.tocsr()
            finite_hi = np.isfinite(self.row_hi)
            finite_lo = np.isfinite(self.row_lo)
            if finite_hi.any():
                m.addMConstr(A[finite_hi], xv, "<", self.row_hi[finite_hi])
            if finite_lo.any():
                m.addMConstr(A[finite_lo], xv, ">", self.row_lo[finite_lo])
            m.ObjCon = self.offset
            if start is not None:
                xv.Start = start
            m.optimize()
            if m.Status == gp.GRB.INTERRUPTED:
                # gurobipy turns Ctrl-C during optimize() into this status; raise
                # it as Python would (HiGHS's path does the same).
                raise KeyboardInterrupt
            has_sol = m.SolCount > 0
            return dict(status=_gurobi_status_name(gp, m.Status),
                        x=np.array(xv.X) if has_sol else None,
                        objective=float(m.ObjVal) if has_sol else np.inf,
                        bound=float(m.ObjBound), gap=float(m.MIPGap) if has_sol else np.inf,
                        n_nodes_explored=int(m.NodeCount))
        finally:
            if m is not None:
                m.dispose()
