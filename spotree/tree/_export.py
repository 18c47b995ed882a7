"""Readable text rendering of fitted trees (reads only the flat arrays)."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._tree import TREE_LEAF, Tree


def split_feature_names(model, n_columns, feature_names=None):
    """Names of the ``n_columns`` columns a fitted tree splits on.

    The features (``feature_names``, else ``feature_names_in_``, else
    ``x0, x1, ...``), then the extra columns of a forest's ridge features.
    ``feature_names`` may name the features only or all the columns.
    """
    fmap = getattr(model, "ridge_features_", None)
    extra = [] if fmap is None else fmap.names()
    p = n_columns - len(extra)
    if isinstance(feature_names, str):
        # A string is a sequence of its characters: "ab" would name x0 "a".
        raise ValueError(f"feature_names must be a list of names, one per feature; got the "
                         f"string {feature_names!r}.")
    if feature_names is None and getattr(model, "_column_names", None) is not None:
        # A SPOBoost tree on one-hot columns: "color=red", not "x1".
        feature_names = list(model._column_names)
    if feature_names is None:
        names = getattr(model, "feature_names_in_", None)
        feature_names = list(names) if names is not None else [f"x{j}" for j in range(p)]
    elif len(feature_names) not in (p, n_columns):
        if extra:
            raise ValueError(f"feature_names must have {p} entries (one per feature) or "
                             f"{n_columns} (with the {len(extra)} ridge feature columns); "
                             f"got {len(feature_names)}.")
        raise ValueError(f"feature_names must have {n_columns} entries (one per feature); "
                         f"got {len(feature_names)}.")
    feature_names = [str(f) for f in feature_names]
    return feature_names + extra if len(feature_names) == p else feature_names


__all__ = ["export_text", "describe_decision", "number_text", "split_labels"]


def is_boost_tree(model):
    """Whether ``model`` (an estimator or a bare Tree) is a :class:`~spotree.SPOBoost` tree.

    Such a tree fits SPO+ gradient steps: its leaves' ``tree_.value`` hold a
    step of the predicted costs (before ``learning_rate`` shrinks it) and its
    ``decision`` and ``loss`` arrays are unused zeros, so exports show the
    step and no decision or SPO loss.
    """
    tree = model if isinstance(model, Tree) else getattr(model, "tree_", None)
    return bool(getattr(tree, "_spo_boost_step", False))


def describe_step(value):
    """The leaf text of a boosting tree: its step of the predicted costs.

    Four significant digits, as decisions' entries: steps are often far
    below 1, and a fixed number of decimals would print them as 0. Entries
    below 1e-12 of the largest are round-off of a 0 (subgradient entries that
    cancel in the leaf's mean) and print as 0, not as ``8.876e-18``.
    """
    v = np.asarray(value, dtype=np.float64).copy()
    v[np.abs(v) <= 1e-12 * np.abs(v).max(initial=0.0)] = 0.0
    return "cost step before learning_rate = [" + ", ".join(f"{x:.4g}" for x in v) + "]"


def number_text(value, fmt):
    """``fmt.format(value)``, or four significant digits (as steps) for a non-zero
    value that ``fmt``'s fixed decimals would print as 0 (a threshold of 2.5e-09, the
    weight 2e-05 of a leaf under weights normalized to sum to 1)."""
    text = fmt.format(value)
    return f"{value:.4g}" if value != 0 and float(text) == 0 else text


def split_labels(tree, node, name, fmt, category_values=None):
    """The conditions of the left and right branch of split ``node``, as text.

    ``name`` is the feature's name and ``fmt`` a format string for numbers
    (a non-zero threshold that it prints as 0 gets four significant digits).
    Where the feature had missing values at fit, the branch they follow says
    "or missing"; a threshold of +inf is the split "present vs missing".
    ``category_values`` is a fitted model's ``category_values_``: a
    categorical split on a DataFrame column shows its labels, not their codes.
    """
    cats = tree.categories[node]
    if cats.size:
        j = tree.feature[node]
        labels = (category_values[j] if category_values is not None
                  and j < len(category_values) else None)
        # Codes in full: "{:g}" printed 1234567 as 1.23457e+06.
        cset = "{" + ", ".join(f"{c:.15g}" if labels is None else str(labels[int(c)])
                               for c in cats) + "}"
        left, right = f"{name} in {cset}", f"{name} not in {cset}"
    elif np.isposinf(tree.threshold[node]):
        return f"{name} is present", f"{name} is missing"
    else:
        # Features far below 1 (rates, concentrations): a fixed number of
        # decimals printed both branches of a split at 2.5e-09 as "<= 0.000"
        # and "> 0.000".
        thr = number_text(tree.threshold[node], fmt)
        left, right = f"{name} <= {thr}", f"{name} > {thr}"
    if tree.missing_features[tree.feature[node]]:
        if tree.missing_go_to_left[node]:
            left += " or missing"
        else:
            right += " or missing"
    return left, right


def describe_decision(problem, w):
    """A short readable description of decision ``w`` for ``problem``.

    Problems may define ``describe_decision(w)`` (a shortest path lists its
    nodes, a finite decision set names the chosen row); otherwise the
    non-zero entries of ``w`` are listed.
    """
    fn = getattr(problem, "describe_decision", None)
    if fn is not None:
        return fn(w)
    w = np.asarray(w, dtype=np.float64)
    nz = np.flatnonzero(np.abs(w) > 1e-9)
    if nz.size == 0:
        return "w = 0"
    return "w = {" + ", ".join(f"{k}: {w[k]:.4g}" for k in nz) + "}"


def _refuse_pipeline(model, caller):
    """A scikit-learn Pipeline: say to pass its last step, not that it is unfitted."""
    # A fitted pipeline has no tree_ of its own: export_text raised
    # scikit-learn's "This Pipeline instance is not fitted yet", which a user
    # who had just fitted it could not act on.
    from sklearn.pipeline import Pipeline

    if isinstance(model, Pipeline):
        raise ValueError(f"{caller} reads one fitted tree, and a Pipeline is not one: pass its "
                         "last step, model[-1] (its features are the columns that step saw, "
                         "after the pipeline's transformers).")


def export_text(model, feature_names=None, *, max_depth=None, decimals=3, show_loss=True):
    """Render a fitted SPO tree (or CART tree of spotree) as indented text.

    Each split line reads ``feature <= threshold`` (or ``feature in {...}``
    for categorical splits); each leaf shows its decision, its training
    weight and its SPO loss (``tree_.loss``: the total over the node's
    training rows, weighted, not their mean). The trees of a
    :class:`~spotree.SPOBoost` (``model.estimators_[k]``) hold no decisions:
    their leaves show the step of the predicted costs (``tree_.value``,
    before ``learning_rate`` shrinks it) and no SPO loss.

    Parameters
    ----------
    model : fitted SPOTree or OptimalSPOTree
    feature_names : list of str, default=None
        Names of the features; by default ``feature_names_in_`` if the model
        was fitted on a DataFrame, else ``x0, x1, ...``.
    max_depth : int, default=None
        Write nodes down to this depth; a split at that depth is written as
        its node's decision followed by ``(subtree cut)``, as
        :func:`~spotree.plotting.plot_tree` draws it. None writes the whole tree.
    decimals : int, default=3
        Decimals of thresholds, weights and losses (a non-zero threshold,
        weight or loss that would print as 0 gets four significant digits
        instead).
    show_loss : bool, default=True
        Show each node's total SPO loss (``spo_loss=``).

    Returns
    -------
    str
    """
    if not hasattr(model, "tree_"):
        _refuse_pipeline(model, "export_text")
    if not hasattr(model, "tree_") and hasattr(model, "estimators_"):
        # A fitted forest or boosting model: "not fitted" would mislead.
        raise ValueError(f"export_text renders one tree, and {type(model).__name__} holds "
                         f"{len(model.estimators_)}: pass one of them, for example "
                         "model.estimators_[0].")
    check_is_fitted(model, "tree_")
    if not isinstance(model.tree_, Tree):
        # A scikit-learn tree (its own tree_) failed with AttributeError on
        # 'problem_'; export_graphviz refused it in these words.
        raise ValueError(f"model must be a fitted spotree tree (with a tree_ attribute); got "
                         f"{type(model).__name__}, whose tree_ is not one (a scikit-learn "
                         "tree renders with sklearn.tree.export_text).")
    if not isinstance(decimals, numbers.Integral) or isinstance(decimals, bool) or decimals < 0:
        raise ValueError(f"decimals must be a non-negative int; got {decimals!r}.")
    if max_depth is not None and (not isinstance(max_depth, numbers.Integral)
                                  or isinstance(max_depth, bool) or max_depth < 0):
        raise ValueError(f"max_depth must be a non-negative int or None; got {max_depth!r}.")
    t = model.tree_
    boost = is_boost_tree(model)
    # A boosting tree's decision and loss arrays are zeros, not its content.
    show_loss = show_loss and not boost
    feature_names = split_feature_names(model, t.n_features, feature_names)
    problem = model.problem_
    labels = getattr(model, "category_values_", None)
    fmt = f"{{:.{decimals}f}}"
    lines = []

    unit_weights = np.isclose(t.weighted_n_node_samples, t.n_node_samples)

    def info(node):
        parts = [f"weight={number_text(t.weighted_n_node_samples[node], fmt)}"
                 if not unit_weights[node] else f"samples={t.n_node_samples[node]}"]
        if show_loss:
            parts.append(f"spo_loss={number_text(t.loss[node], fmt)}")
        return ", ".join(parts)

    # An explicit stack, not recursion: a valid tree may be thousands of
    # levels deep (a chain of splits), beyond Python's recursion limit.
    stack = [(0, 0)]  # (node, depth), or (text line, None)
    while stack:
        node, depth = stack.pop()
        if depth is None:
            lines.append(node)
            continue
        indent = "|   " * depth + "|--- "
        if t.children_left[node] == TREE_LEAF:
            leaf = (describe_step(t.value[node]) if boost else
                    f"decision: {describe_decision(problem, t.decision[node])}")
            lines.append(f"{indent}{leaf}  [{info(node)}]")
            continue
        if max_depth is not None and depth >= max_depth:
            # A boosting tree's steps are at its leaves only (a cut node's is 0).
            cut = ("(subtree cut)" if boost else
                   f"decision: {describe_decision(problem, t.decision[node])} (subtree cut)")
            lines.append(f"{indent}{cut}  [{info(node)}]")
            continue
        name = feature_names[t.feature[node]]
        left, right = split_labels(t, node, name, fmt, labels)
        lines.append(f"{indent}{left}  [{info(node)}]")
        # Left subtree, then the right branch's line, then the right subtree.
        stack += [(t.children_right[node], depth + 1), (f"{indent}{right}", None),
                  (t.children_left[node], depth + 1)]

    return "\n".join(lines) + "\n"
