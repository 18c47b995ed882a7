"""The fitted tree as flat arrays, and everything that only reads them.

Prediction, routing, decision paths, cost-complexity pruning and export are
functions of these arrays; none of them calls the decision oracle again.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .. import _schema

__all__ = ["Tree", "TREE_LEAF", "TREE_UNDEFINED", "check_structure"]

TREE_LEAF = -1
# The categories of a node without a categorical split (read-only: shared).
_NO_CATEGORIES = np.empty(0)
_NO_CATEGORIES.flags.writeable = False
TREE_UNDEFINED = -2

_INT_FIELDS = ("children_left", "children_right", "feature", "n_node_samples")
_FLOAT_FIELDS = ("threshold", "impurity", "loss", "weighted_n_node_samples")
_MATRIX_FIELDS = ("value", "decision")
_DICT_KEYS = (("n_features", "n_outputs") + _INT_FIELDS + _FLOAT_FIELDS + _MATRIX_FIELDS
              + ("categories",))


def check_structure(left, right, feature, threshold, n_features, where=""):
    """Refuse split arrays that are not one binary tree rooted at node 0.

    The one structure check of every tree: :meth:`Tree.from_dict` (a model
    file) and :func:`~spotree.tree._structure.tree_from_structure` (a
    structure found by a search) both call it, so that any tree one accepts
    the other accepts too. Checked: a node is a leaf in both child arrays or
    in neither; children are numbered after their parent and below the node
    count; every node but the root is the child of exactly one node (with
    the numbering, this makes every node reachable from the root and rules
    out cycles); split nodes split on a feature in ``[0, n_features)`` at a
    threshold that is neither NaN nor -inf. Leaves' feature and threshold are
    not looked at.

    Parameters
    ----------
    left, right, feature : ndarray of int64, shape (node_count,)
    threshold : ndarray of float64, shape (node_count,)
    n_features : int
    where : str, default=""
        Prefix of the names in messages (``"tree"`` gives
        ``"tree.children_left[3]"``); empty: the bare array names.

    Raises
    ------
    ValueError
        A :class:`spotree._schema.SchemaError` naming the array and the node.
    """
    n = left.shape[0]
    ids = np.arange(n)
    leaf = left == TREE_LEAF
    key = f"{where}.".__add__ if where else str

    def fail(name, t, message):
        raise _schema.SchemaError(f"{key(name)}[{t}]", message)

    one_sided = np.flatnonzero(leaf != (right == TREE_LEAF))
    if one_sided.size:
        t = int(one_sided[0])
        fail("children_right", t, f"must be -1 exactly when children_left[{t}] is -1 (a leaf "
                                  f"has no children, a split has two); got {right[t]}.")
    for name, child in (("children_left", left), ("children_right", right)):
        back = np.flatnonzero(~leaf & ((child <= ids) | (child >= n)))
        if back.size:
            t = int(back[0])
            fail(name, t, f"must be -1 or a node id in [{t + 1}, {n - 1}] (children are "
                          f"numbered after their parent); got {child[t]}.")
    internal = np.flatnonzero(~leaf)
    children = np.concatenate([left[internal], right[internal]])
    n_parents = np.bincount(children, minlength=n)
    if (n_parents > 1).any():
        c = int(np.flatnonzero(n_parents > 1)[0])
        refs = sorted((int(t), name) for name, arr in (("children_left", left),
                                                       ("children_right", right))
                      for t in np.flatnonzero(~leaf & (arr == c)))
        (t0, _), (t1, name) = refs[0], refs[1]
        fail(name, t1, f"points to node {c}, which is already the child of node {t0}; "
                       "every node must have exactly one parent.")
    orphans = np.flatnonzero(n_parents[1:] == 0) + 1
    if orphans.size:
        c = int(orphans[0])
        raise _schema.SchemaError(
            key("children_left"), f"and children_right never point to node {c}: it cannot "
                                  "be reached from the root (node 0).")
    bad = np.flatnonzero(~leaf & ((feature < 0) | (feature >= n_features)))
    if bad.size:
        t = int(bad[0])
        fail("feature", t, f"must be a feature index in [0, {n_features - 1}] at a split "
                           f"node; got {feature[t]}.")
    # -inf would route (every present value right), but a model file refuses
    # it: the split of present from missing values is stored at +inf.
    bad = np.flatnonzero(~leaf & (np.isnan(threshold) | (threshold == -np.inf)))
    if bad.size:
        t = int(bad[0])
        fail("threshold", t, f"must be a number (or +inf, the split of present from missing "
                             f"values) at a split node; got {float(threshold[t])!r}.")


def _check_file_structure(left, right, feature, threshold, categories, n_features, where):
    """:func:`check_structure`, then what a stored tree also fixes at its nodes.

    Indices are already known to lie in range.
    """
    check_structure(left, right, feature, threshold, n_features, where)
    n = left.shape[0]
    leaf = left == TREE_LEAF
    key = f"{where}.".__add__

    def fail(name, t, message):
        raise _schema.SchemaError(f"{key(name)}[{t}]", message)

    bad = np.flatnonzero(leaf & ((feature != TREE_UNDEFINED)
                                 | (threshold != TREE_UNDEFINED)))
    if bad.size:
        t = int(bad[0])
        name = "feature" if feature[t] != TREE_UNDEFINED else "threshold"
        got = int(feature[t]) if name == "feature" else float(threshold[t])
        fail(name, t, f"must be {TREE_UNDEFINED} at a leaf; got {got!r}.")
    n_cats = np.fromiter((c.size for c in categories), dtype=np.int64, count=n)
    bad = np.flatnonzero(leaf & (n_cats > 0))
    if bad.size:
        fail("categories", int(bad[0]), "must be empty at a leaf.")
    bad = np.flatnonzero(~leaf & (n_cats > 0) & (threshold != TREE_UNDEFINED))
    if bad.size:
        t = int(bad[0])
        fail("threshold", t, f"must be {TREE_UNDEFINED} at a categorical split (categories[{t}] "
                             f"is not empty); got {float(threshold[t])!r}.")


_NOT_FINITE = ("cost-complexity pruning needs finite node losses; node {k}'s is {v!r} (a "
               "squared error beyond the float range: costs above about 1e154 in magnitude). "
               "Rescale the costs, or prune by the SPO loss (prune(..., loss='spo')).")
_SUBNORMAL = ("cost-complexity pruning needs node losses that floats hold to full precision; "
              "node {k}'s is {v!r}, below 2.2e-308 (a subnormal float, with few digits left): "
              "the training sample_weight or costs are that small. Multiply sample_weight by "
              "a constant, which grows the same tree (ccp_alpha and the alphas are in units of "
              "the weights), or rescale the costs.")
_NOT_FINITE_WEIGHTS = ("cost-complexity pruning needs finite node losses; node {k}'s is {v!r}: "
                       "the training sample_weight sums beyond the float range (the root's "
                       "weight is inf). Divide sample_weight by a constant, which grows the "
                       "same tree (ccp_alpha and the alphas are in units of the weights).")


class Tree:
    """A fitted binary tree stored as parallel arrays, one entry per node.

    Node 0 is the root. Sample ``x`` goes left at node ``t`` when
    ``x[feature[t]] <= threshold[t]`` for a numeric split, or when
    ``x[feature[t]]`` is one of ``categories[t]`` for a categorical split.

    Attributes
    ----------
    node_count : int
    n_features : int
    n_outputs : int
        Dimension d of the cost vectors.
    children_left, children_right : ndarray of int64
        Child ids, ``TREE_LEAF`` (-1) at leaves.
    feature : ndarray of int64
        Split feature, ``TREE_UNDEFINED`` (-2) at leaves.
    threshold : ndarray of float64
        Numeric threshold (left if ``x <= threshold``); ``TREE_UNDEFINED`` at
        leaves and at categorical splits.
    categories : list of ndarray
        For categorical splits the category values sent left; empty
        arrays elsewhere.
    value : ndarray of shape (node_count, n_outputs)
        The weighted mean cost of the training samples in each node: the
        node's prediction (Theorem 1).
    decision : ndarray of shape (node_count, n_outputs)
        The optimal decision for ``value``.
    loss : ndarray of shape (node_count,)
        Weighted training SPO loss of the node if it were a leaf,
        ``sum_i w_i * sign * (c_i^T decision - z*(c_i))``.
    impurity : ndarray of shape (node_count,)
        The training criterion's loss of the node as a leaf (the SPO loss,
        the weighted sum of squared errors, or their mix); cost-complexity
        pruning works on it.
    n_node_samples : ndarray of int64
    weighted_n_node_samples : ndarray of float64
    missing_go_to_left : ndarray of uint8
        1 where a sample whose split feature is missing (NaN) goes left. Where
        no training sample of the node missed that feature, missing values go
        to the child with more training weight. 0 at leaves.
    missing_features : ndarray of bool of shape (n_features,)
        Features that had missing values at fit (exporters show where their
        missing values go).
    """

    def __init__(self, *, n_features, n_outputs, children_left, children_right, feature,
                 threshold, value, decision, loss, impurity, n_node_samples,
                 weighted_n_node_samples, categories=None, missing_go_to_left=None,
                 missing_features=None):
        self.n_features = int(n_features)
        self.n_outputs = int(n_outputs)
        self.children_left = np.asarray(children_left, dtype=np.int64)
        self.children_right = np.asarray(children_right, dtype=np.int64)
        self.feature = np.asarray(feature, dtype=np.int64)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        n = self.children_left.shape[0]
        self.value = np.asarray(value, dtype=np.float64).reshape(n, self.n_outputs)
        self.decision = np.asarray(decision, dtype=np.float64).reshape(n, self.n_outputs)
        self.loss = np.asarray(loss, dtype=np.float64)
        self.impurity = np.asarray(impurity, dtype=np.float64)
        self.n_node_samples = np.asarray(n_node_samples, dtype=np.int64)
        self.weighted_n_node_samples = np.asarray(weighted_n_node_samples, dtype=np.float64)
        if categories is None:
            # One shared empty array, not one per node: a forest's threads
            # build their trees holding the GIL, so per-node Python work here
            # is paid once per node of every tree, in turn.
            self.categories = [_NO_CATEGORIES] * n
        else:
            self.categories = [np.asarray(c, dtype=np.float64) for c in categories]
        if missing_go_to_left is None:
            # Trees without the field: missing values follow the heavier child.
            left_ok = self.children_left != TREE_LEAF
            heavier = np.zeros(n, dtype=np.uint8)
            idx = np.flatnonzero(left_ok)
            heavier[idx] = (self.weighted_n_node_samples[self.children_left[idx]]
                            >= self.weighted_n_node_samples[self.children_right[idx]])
            missing_go_to_left = heavier
        self.missing_go_to_left = np.asarray(missing_go_to_left, dtype=np.uint8)
        self.missing_features = (np.zeros(self.n_features, dtype=bool) if missing_features is None
                                 else np.asarray(missing_features, dtype=bool))

    # --------------------------------------------------------------- shape
    @property
    def node_count(self):
        return self.children_left.shape[0]

    @property
    def is_leaf(self):
        return self.children_left == TREE_LEAF

    @property
    def n_leaves(self):
        return int(self.is_leaf.sum())

    @property
    def is_categorical(self):
        # Cached: routing reads it at every level. Trees are not mutated in
        # place (pruning builds a new one), so the cache stays valid.
        cached = self.__dict__.get("_is_categorical")
        if cached is None or cached.shape[0] != len(self.categories):
            cached = np.array([c.size > 0 for c in self.categories], dtype=bool)
            self._is_categorical = cached
        return cached

    def node_depth(self):
        """Depth of every node (root = 0)."""
        depth = np.zeros(self.node_count, dtype=np.int64)
        for t in range(self.node_count):  # parents precede children
            if self.children_left[t] != TREE_LEAF:
                depth[self.children_left[t]] = depth[t] + 1
                depth[self.children_right[t]] = depth[t] + 1
        return depth

    @property
    def max_depth(self):
        return int(self.node_depth().max())

    def parent(self):
        """Parent id of every node (-1 for the root)."""
        parent = np.full(self.node_count, -1, dtype=np.int64)
        internal = np.flatnonzero(~self.is_leaf)
        parent[self.children_left[internal]] = internal
        parent[self.children_right[internal]] = internal
        return parent

    # ------------------------------------------------------------- routing
    def _goes_left(self, X, nodes, rows):
        f = self.feature[nodes]
        x = X[rows, f]
        left = x <= self.threshold[nodes]
        cat = self.is_categorical[nodes]
        if cat.any():
            for t in np.unique(nodes[cat]):
                sel = nodes == t
                left[sel] = np.isin(x[sel], self.categories[t])
        missing = np.isnan(x)
        if missing.any():
            left[missing] = self.missing_go_to_left[nodes[missing]] == 1
        return left

    def _descend(self, X):
        """Route all rows level by level; yields (rows that moved, node they reached)."""
        node = np.zeros(X.shape[0], dtype=np.int64)
        active = np.arange(X.shape[0])
        while active.size:
            nodes = node[active]
            internal = self.children_left[nodes] != TREE_LEAF
            active, nodes = active[internal], nodes[internal]
            if not active.size:
                break
            left = self._goes_left(X, nodes, active)
            node[active] = np.where(left, self.children_left[nodes],
                                    self.children_right[nodes])
            yield active, node[active]

    def _check_rows(self, X):
        """``X`` as a float array of shape (n, n_features), or a clear error."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X must be a 2-D array with n_features={self.n_features} "
                             f"columns for this tree; got shape {X.shape}.")
        return X

    def _category_table(self):
        """The categorical nodes' left values as CSR arrays ``(ptr, values)``:
        node t's are ``values[ptr[t]:ptr[t + 1]]`` (none at numeric nodes)."""
        cached = self.__dict__.get("_cat_table")
        if cached is None or cached[0].shape[0] != self.node_count + 1:
            sizes = np.array([c.size for c in self.categories], dtype=np.int64)
            ptr = np.zeros(self.node_count + 1, dtype=np.int64)
            np.cumsum(sizes, out=ptr[1:])
            used = np.flatnonzero(sizes)
            values = (np.concatenate([self.categories[t] for t in used]) if used.size
                      else np.empty(0))
            cached = (ptr, np.ascontiguousarray(values, dtype=np.float64))
            self._cat_table = cached
        return cached

    def apply(self, X):
        """Leaf id reached by every row of ``X`` (float64, shape (n, n_features))."""
        # Imported here: the tree layout module stays free of compiled code
        # until a tree routes rows.
        from ._kernels import route_rows

        X = np.ascontiguousarray(self._check_rows(X))
        node = np.zeros(X.shape[0], dtype=np.int64)
        ptr, values = self._category_table()
        route_rows(self.children_left, self.children_right, self.feature, self.threshold,
                   self.missing_go_to_left, ptr, values, X, node)
        return node

    def decision_path(self, X):
        """CSR indicator matrix (n_samples, node_count) of the nodes each row visits."""
        X = self._check_rows(X)
        n = X.shape[0]
        rows_out, nodes_out = [np.arange(n)], [np.zeros(n, dtype=np.int64)]
        for rows, reached in self._descend(X):
            rows_out.append(rows)
            nodes_out.append(reached)
        rows = np.concatenate(rows_out)
        cols = np.concatenate(nodes_out)
        data = np.ones(rows.shape[0], dtype=np.int64)
        return sparse.csr_matrix((data, (rows, cols)), shape=(n, self.node_count))

    # ------------------------------------------------------------- pruning
    def subtree_sums(self, node_values):
        """For each node, the sum of ``node_values`` over the leaves below it, and their count."""
        total = np.where(self.is_leaf, node_values, 0.0).astype(np.float64)
        count = self.is_leaf.astype(np.int64)
        for t in range(self.node_count - 1, -1, -1):  # children follow parents
            if self.children_left[t] != TREE_LEAF:
                total[t] = total[self.children_left[t]] + total[self.children_right[t]]
                count[t] = count[self.children_left[t]] + count[self.children_right[t]]
        return total, count

    def pruning_sequence(self, node_loss=None):
        """Breiman's weakest-link sequence of nested subtrees.

        Parameters
        ----------
        node_loss : ndarray of shape (node_count,), default=None
            Loss of each node as a leaf; ``impurity`` by default.

        Returns
        -------
        alphas : ndarray of shape (k,)
            Increasing effective alphas; ``alphas[0] = 0`` is the whole tree.
        leaf_masks : list of ndarray of bool
            ``leaf_masks[i]`` marks the nodes that are leaves of the subtree
            kept for alphas in ``[alphas[i], alphas[i+1])``.
        losses : ndarray of shape (k,)
            Total leaf loss of each subtree.
        """
        R = self.impurity if node_loss is None else np.asarray(node_loss, dtype=np.float64)
        parent = self.parent()
        leaf = self.is_leaf.copy()
        removed = np.zeros(self.node_count, dtype=bool)  # strictly below a pruned node
        R_sub, n_sub = self.subtree_sums(R)
        R_sub = R_sub.astype(np.float64)
        # inf - inf is NaN, no link is ever the weakest, and the loop below never
        # ended (a squared-error tree on costs above ~1e154: ccp_alpha hung its fit).
        bad = np.flatnonzero(~(np.isfinite(R) & np.isfinite(R_sub)))
        if bad.size:
            k = int(bad[0])
            # (Both would overflow with the weights: name the cause that the user controls.)
            msg = (_NOT_FINITE_WEIGHTS if not np.isfinite(self.weighted_n_node_samples[0])
                   else _NOT_FINITE)
            raise ValueError(msg.format(k=k, v=float(R[k] if not np.isfinite(R[k])
                                                             else R_sub[k])))
        # Losses of weights of 1e-320 kept a digit or two: the sequence was
        # rounding (another subtree kept than at any other scale of the weights).
        sub = np.flatnonzero((R != 0) & (np.abs(R) < np.finfo(np.float64).tiny))
        if sub.size:
            raise ValueError(_SUBNORMAL.format(k=int(sub[0]), v=float(R[sub[0]])))
        alphas, masks, losses = [0.0], [leaf.copy()], [R_sub[0]]
        scale = max(abs(R_sub[0]), abs(R[0]), 1e-300)
        while not leaf[0]:
            cand = ~leaf & ~removed
            g = np.full(self.node_count, np.inf)
            g[cand] = (R[cand] - R_sub[cand]) / (n_sub[cand] - 1)
            g_min = g.min()
            # Prune every node tied with the weakest link (floating tolerance).
            weakest = np.flatnonzero(g <= g_min + 1e-12 * scale)
            if not weakest.size:  # sums that overflowed on the way: NaN everywhere
                raise ValueError(_NOT_FINITE.format(k=int(np.argmax(np.isnan(g))),
                                                    v=float("nan")))
            for t in weakest:
                if leaf[t] or removed[t]:
                    continue
                stack = [self.children_left[t], self.children_right[t]]
                while stack:
                    u = stack.pop()
                    removed[u] = True
                    leaf[u] = False
                    if self.children_left[u] != TREE_LEAF:
                        stack += [self.children_left[u], self.children_right[u]]
                leaf[t] = True
                d_R = R[t] - R_sub[t]
                d_n = 1 - n_sub[t]
                u = t
                while u >= 0:
                    R_sub[u] += d_R
                    n_sub[u] += d_n
                    u = parent[u]
            # A link whose gain is rounding (a zero-gain split) is pruned at 0.
            alphas.append(max(g_min if g_min > 1e-12 * scale else 0.0, alphas[-1]))
            masks.append(leaf.copy())
            losses.append(R_sub[0])
        return np.asarray(alphas), masks, np.asarray(losses)

    def pruned(self, leaf_mask):
        """A new tree where the nodes in ``leaf_mask`` become leaves (others below dropped)."""
        keep = np.zeros(self.node_count, dtype=bool)
        order = []
        stack = [0]
        while stack:
            t = stack.pop()
            keep[t] = True
            order.append(t)
            if not leaf_mask[t] and self.children_left[t] != TREE_LEAF:
                stack += [self.children_right[t], self.children_left[t]]
        order = np.asarray(order, dtype=np.int64)  # depth-first, left before right
        new_id = np.full(self.node_count, TREE_LEAF, dtype=np.int64)
        new_id[order] = np.arange(order.size)
        becomes_leaf = leaf_mask[order] | (self.children_left[order] == TREE_LEAF)
        left = np.where(becomes_leaf, TREE_LEAF, new_id[self.children_left[order]])
        right = np.where(becomes_leaf, TREE_LEAF, new_id[self.children_right[order]])
        return Tree(
            n_features=self.n_features, n_outputs=self.n_outputs,
            children_left=left, children_right=right,
            feature=np.where(becomes_leaf, TREE_UNDEFINED, self.feature[order]),
            threshold=np.where(becomes_leaf, TREE_UNDEFINED, self.threshold[order]),
            value=self.value[order], decision=self.decision[order], loss=self.loss[order],
            impurity=self.impurity[order], n_node_samples=self.n_node_samples[order],
            weighted_n_node_samples=self.weighted_n_node_samples[order],
            categories=[np.empty(0) if becomes_leaf[i] else self.categories[t]
                        for i, t in enumerate(order)],
            missing_go_to_left=np.where(becomes_leaf, 0, self.missing_go_to_left[order]),
            missing_features=self.missing_features,
        )

    # --------------------------------------------------------------- I/O
    def to_dict(self):
        """JSON-ready dict of all arrays (floats written exactly via repr)."""
        out = {"n_features": self.n_features, "n_outputs": self.n_outputs}
        for name in _INT_FIELDS + _FLOAT_FIELDS + _MATRIX_FIELDS:
            out[name] = getattr(self, name).tolist()
        out["categories"] = [c.tolist() for c in self.categories]
        out["missing_go_to_left"] = self.missing_go_to_left.tolist()
        out["missing_features"] = self.missing_features.tolist()
        return out

    @classmethod
    def from_dict(cls, d, where="tree"):
        """Rebuild a tree from :meth:`to_dict` output, trusting nothing in it.

        Checked: every key present with the right JSON type and shape; all
        numbers finite; counts, weights and losses non-negative; the arrays
        form one binary tree rooted at node 0 (every other node is the child
        of exactly one node, numbered after its parent, hence reached from the
        root and free of cycles); leaves carry ``TREE_UNDEFINED`` feature and
        threshold and no categories; internal nodes split on a feature in
        ``[0, n_features)``, numerically (a finite threshold, or ``+inf`` for
        the split of present from missing values) or on a non-empty list of
        categories (threshold ``TREE_UNDEFINED``). The optional
        ``missing_go_to_left`` holds 0 or 1 per node (0 at leaves) and
        ``missing_features`` one bool per feature.

        Parameters
        ----------
        d : dict
            Parsed JSON, as written by :meth:`to_dict`.
        where : str, default="tree"
            Path of ``d`` inside the enclosing document, for error messages.

        Returns
        -------
        Tree

        Raises
        ------
        ValueError
            A :class:`spotree._schema.SchemaError` whose message starts with the
            offending key, e.g. ``"tree.children_left[3] must be ..."``.
        """
        d = _schema.mapping(d, where)
        _schema.check_keys(d, where, required=_DICT_KEYS,
                           optional=("missing_go_to_left", "missing_features"))
        n_features = _schema.integer(d["n_features"], f"{where}.n_features", low=1)
        n_outputs = _schema.integer(d["n_outputs"], f"{where}.n_outputs", low=1)
        raw_left = d["children_left"]
        if not isinstance(raw_left, list) or not raw_left:
            raise _schema.SchemaError(f"{where}.children_left",
                                      "must be a non-empty list of ints (one per node).")
        n = len(raw_left)
        key = f"{where}.".__add__

        def ints(name, low, high):
            return _schema.int_array(d[name], key(name), length=n, low=low, high=high,
                                     per="node")

        left = ints("children_left", TREE_LEAF, n - 1)
        right = ints("children_right", TREE_LEAF, n - 1)
        feature = ints("feature", TREE_UNDEFINED, n_features - 1)
        n_node_samples = ints("n_node_samples", 0, None)
        # A threshold of +inf splits the present values of a feature from its
        # missing ones; every other float is finite.
        reals = {name: _schema.real_array(d[name], key(name), length=n, per="node",
                                          low=None if name == "threshold" else 0.0,
                                          allow_inf=name == "threshold")
                 for name in _FLOAT_FIELDS}
        mats = {name: _schema.real_matrix(d[name], key(name), rows=n, cols=n_outputs)
                for name in _MATRIX_FIELDS}
        categories = _schema.real_lists(d["categories"], key("categories"), length=n)
        _check_file_structure(left, right, feature, reals["threshold"], categories,
                              n_features, where)
        # Optional (files written before missing-value support lack them).
        mgl = d.get("missing_go_to_left")
        if mgl is not None:
            mgl = ints("missing_go_to_left", 0, 1)
            bad = np.flatnonzero((left == TREE_LEAF) & (mgl != 0))
            if bad.size:
                raise _schema.SchemaError(f"{key('missing_go_to_left')}[{int(bad[0])}]",
                                          "must be 0 at a leaf; got 1.")
        mf = d.get("missing_features")
        if mf is not None:
            if (not isinstance(mf, list) or len(mf) != n_features
                    or not all(type(x) is bool for x in mf)):
                raise _schema.SchemaError(key("missing_features"),
                                          f"must be a list of {n_features} bools (one per "
                                          f"feature); got {_schema._show(mf)}.")
            mf = np.array(mf, dtype=bool)
        return cls(n_features=n_features, n_outputs=n_outputs, children_left=left,
                   children_right=right, feature=feature, n_node_samples=n_node_samples,
                   categories=categories, missing_go_to_left=mgl, missing_features=mf,
                   **reals, **mats)

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_is_categorical", None)
        state.pop("_cat_table", None)
        return state

    def __repr__(self):
        return f"Tree(node_count={self.node_count}, n_leaves={self.n_leaves})"
