"""Graphviz DOT rendering of fitted trees (reads only the flat arrays)."""

from __future__ import annotations

import numbers

import numpy as np

from ._export import (_refuse_pipeline, describe_decision, describe_step, is_boost_tree,
                      number_text, split_feature_names, split_labels)
from ._tree import TREE_LEAF, Tree

__all__ = ["export_graphviz"]

# Leaf fill colours, one per distinct decision (matplotlib's tab10, lightened).
_PALETTE = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
            "#c7c7c7", "#dbdb8d", "#9edae5")


def _describe(problem, w):
    # describe_decision's own rule when there is no problem (a bare Tree): a
    # decision of zeros reads "w = 0", as export_text writes it, not "w = {}".
    return describe_decision(problem, w)


def _given_problem(problem, tree, caller):
    """``problem=`` of export_graphviz and plot_tree, checked against the tree's decisions.

    It only describes the leaves' decisions: one of another number of costs
    labelled them with another problem's paths, or failed in numpy.
    """
    if problem is None or is_boost_tree(tree):  # a boosting tree's leaves show no decision
        return problem
    n = getattr(problem, "n_costs", None)
    if not isinstance(n, numbers.Integral):
        raise TypeError(f"{caller}: problem must be a DecisionProblem (with n_costs) or None; "
                        f"got {type(problem).__name__}.")
    if n != tree.n_outputs:
        raise ValueError(f"{caller}: problem has {n} costs, but the tree's decisions have "
                         f"{tree.n_outputs}: pass the problem the tree was fitted on.")
    return problem


def _resolve(model, feature_names, caller="export_graphviz"):
    """(tree, problem, feature names) from a fitted estimator or a bare Tree."""
    if isinstance(model, Tree):
        tree, problem = model, None
    else:
        tree = getattr(model, "tree_", None)
        if tree is None:
            _refuse_pipeline(model, caller)
        if tree is None and hasattr(model, "fit") and hasattr(model, "get_params"):
            # An estimator not fitted yet: NotFittedError, as export_text and
            # scikit-learn's plot_tree raise (a ValueError, as before).
            from sklearn.utils.validation import check_is_fitted

            check_is_fitted(model)
        if tree is None and getattr(model, "estimators_", None):
            # A fitted forest: "without a fitted tree_" would mislead.
            raise ValueError(f"{caller} draws one tree, and {type(model).__name__} holds "
                             f"{len(model.estimators_)}: pass one of them, for example "
                             "model.estimators_[0].")
        if not isinstance(tree, Tree):
            raise ValueError(f"model must be a fitted spotree tree (with a tree_ attribute) "
                             f"or a Tree; got {type(model).__name__} without a fitted tree_.")
        problem = getattr(model, "problem_", getattr(model, "problem", None))
    return tree, problem, split_feature_names(model, tree.n_features, feature_names)


def _decision_keys(tree, boost=False):
    """A small integer per distinct leaf decision (for colours), in order of appearance.

    For a boosting tree (``boost``), per distinct leaf step: its decisions are zeros.
    """
    keys, out = {}, np.full(tree.node_count, -1)
    leaf_content = tree.value if boost else tree.decision
    for t in range(tree.node_count):
        k = tuple(np.round(leaf_content[t], 9))
        out[t] = keys.setdefault(k, len(keys))
    return out


def _escape(text):
    return str(text).replace("\\", "\\\\").replace('"', '\\"')


def export_graphviz(model, feature_names=None, *, problem=None, max_depth=None, precision=3,
                    show_loss=True, filled=True, rounded=True, out_file=None):
    """Export a fitted SPO tree in Graphviz DOT format.

    Each internal node shows its split (``feature <= threshold``; left is the
    "True" branch), its training samples and SPO loss (the total over its
    training rows, weighted, not their mean); each leaf shows its decision.
    With ``filled=True`` leaves with the same decision share a colour. The
    trees of a :class:`~spotree.SPOBoost` (``model.estimators_[k]``) hold no
    decisions: their leaves show the step of the predicted costs
    (``tree_.value``, before ``learning_rate`` shrinks it) and no SPO loss.
    Render the text with ``dot -Tpng tree.dot -o tree.png``.

    Parameters
    ----------
    model : fitted SPOTree (or any estimator with ``tree_``) or Tree
    feature_names : list of str, default=None
        By default ``feature_names_in_`` if the model was fitted on a
        DataFrame, else ``x0, x1, ...``.
    problem : DecisionProblem, default=None
        Used to describe decisions when ``model`` is a bare :class:`Tree`.
        Given for a fitted model, it replaces the model's own problem here; it
        must have the tree's number of costs (a ValueError otherwise).
    max_depth : int, default=None
        Draw nodes down to this depth; deeper subtrees are shown as "...".
    precision : int, default=3
        Decimals of thresholds, weights and losses (a non-zero threshold,
        weight or loss that would print as 0 gets four significant digits
        instead).
    show_loss : bool, default=True
    filled : bool, default=True
    rounded : bool, default=True
    out_file : str, path-like or file object, default=None
        Also write the text to this file (an open text file, such as
        scikit-learn's ``export_graphviz`` takes, is written to and left
        open).

    Returns
    -------
    dot : str
    """
    tree, model_problem, names = _resolve(model, feature_names)
    if problem is None:
        problem = model_problem
    else:
        problem = _given_problem(problem, tree, "export_graphviz")
    # bool is an int to Python: True drew one level without a word (export_text refuses it).
    if max_depth is not None and (not isinstance(max_depth, (int, np.integer))
                                  or isinstance(max_depth, bool) or max_depth < 0):
        raise ValueError(f"max_depth must be a non-negative int or None; got {max_depth!r}.")
    if not isinstance(precision, numbers.Integral) or isinstance(precision, bool) \
            or precision < 0:
        raise ValueError(f"precision must be a non-negative int; got {precision!r}.")
    fmt = f"{{:.{int(precision)}f}}"
    boost = is_boost_tree(model)
    # A boosting tree's decision and loss arrays are zeros, not its content.
    show_loss = show_loss and not boost
    keys = _decision_keys(tree, boost)
    depth = tree.node_depth()
    style = ", ".join(s for s, on in (("filled", filled), ("rounded", rounded)) if on)
    node_style = f', style="{style}"' if style else ""
    lines = ["digraph SPOTree {",
             f'node [shape=box{node_style}, fontname="helvetica"] ;',
             'edge [fontname="helvetica"] ;']

    def samples(t):
        w, n = tree.weighted_n_node_samples[t], tree.n_node_samples[t]
        return f"samples = {n}" if np.isclose(w, n) else f"weight = {number_text(w, fmt)}"

    stack = [0]
    while stack:
        t = stack.pop()
        leaf = tree.children_left[t] == TREE_LEAF
        truncated = not leaf and max_depth is not None and depth[t] >= max_depth
        parts = []
        if leaf and boost:
            parts.append(describe_step(tree.value[t]))
        elif (leaf or truncated) and not boost:
            parts.append(f"decision: {_describe(problem, tree.decision[t])}")
        else:
            parts.append(split_labels(tree, t, names[tree.feature[t]], fmt,
                                      getattr(model, "category_values_", None))[0])
        parts.append(samples(t))
        if show_loss:
            parts.append(f"SPO loss = {number_text(tree.loss[t], fmt)}")
        attrs = f'label="{_escape(chr(10).join(parts))}"'.replace("\n", "\\n")
        if filled:
            coloured = leaf or (truncated and not boost)
            color = _PALETTE[keys[t] % len(_PALETTE)] if coloured else "#ffffff"
            attrs += f', fillcolor="{color}"'
        lines.append(f"{t} [{attrs}] ;")
        if truncated:
            lines.append(f'more{t} [label="...", shape=plaintext] ;')
            lines.append(f"{t} -> more{t} ;")
            continue
        if not leaf:
            left, right = tree.children_left[t], tree.children_right[t]
            if t == 0:
                lines.append(f'{t} -> {left} [labeldistance=2.5, labelangle=45, '
                             'headlabel="True"] ;')
                lines.append(f'{t} -> {right} [labeldistance=2.5, labelangle=-45, '
                             'headlabel="False"] ;')
            else:
                lines.append(f"{t} -> {left} ;")
                lines.append(f"{t} -> {right} ;")
            stack += [right, left]
    lines.append("}")
    dot = "\n".join(lines) + "\n"
    if hasattr(out_file, "write"):
        # (open() on a file object raised "expected str, bytes or os.PathLike
        # object, not TextIOWrapper".)
        out_file.write(dot)
    elif out_file is not None:
        # A temp file renamed into place, as model.save: open(path, "w") emptied
        # the old file first, and a write that failed then left it empty.
        from .._atomic import atomic_write

        atomic_write(out_file, lambda fh: fh.write(dot))
    return dot
