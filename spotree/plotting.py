"""Matplotlib drawings: fitted trees and the paper's result figures.

Needs the ``spotree[plot]`` extra. Every ``plot_*`` function draws on ``ax``
when given (otherwise on a new figure) and returns the Axes, so plots compose;
:func:`decision_boundaries` returns feature values and :func:`method_patches`
legend handles.
"""

from __future__ import annotations

import numbers
import re

import numpy as np

from ._compat import import_optional
from ._text import count_noun
from .metrics import DecisionComparison
from .tree._export import describe_step, is_boost_tree, number_text, split_labels
from .tree._export_graphviz import _decision_keys, _describe, _given_problem, _resolve
from .tree._tree import TREE_LEAF

__all__ = ["plot_tree", "plot_by_depth", "plot_predicted_costs", "plot_boosting",
           "plot_pruning_path", "plot_decision_comparison", "decision_boundaries",
           "method_patches", "METHOD_COLORS"]

#: Colours of the paper's figures: SPO methods blue, CART methods orange.
METHOD_COLORS = {
    "SPOT": "#1f77b4", "CART": "#ff7f0e", "SPOT Optimal": "#2ca02c",
    "SPO Forest": "#6baed6", "CART Forest": "#fdae6b",
}
_FALLBACK = ("#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
_LEAF_COLORS = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
                "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5")


def _wrap(text, width=16):
    """Break a decision description at "->", ", " or spaces into lines of ~width chars."""
    parts = [p for p in re.split(r"(?<=->)|(?<=, )|(?<= )", text) if p]
    lines, cur = [], ""
    for p in parts:
        if cur and len(cur) + len(p) > width:
            lines.append(cur.rstrip())
            cur = ""
        cur += p
    if cur:
        lines.append(cur.rstrip())
    return lines or [text]


def _plt(purpose):
    return import_optional("matplotlib.pyplot", purpose=purpose)


def _method_color(name, i):
    return METHOD_COLORS.get(name, _FALLBACK[i % len(_FALLBACK)])


def _new_axes(purpose, figsize):
    plt = _plt(purpose)
    _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_tree(model, ax=None, feature_names=None, *, problem=None, max_depth=None,
              precision=2, show_loss=True, fontsize=None):
    """Draw a fitted SPO tree: splits, leaf decisions, samples and SPO losses.

    Leaves with the same decision share a colour. The left child of a split
    holds the samples for which the split's condition is true. A node's SPO
    loss is the total over its training rows (weighted), not their mean. The
    trees of a :class:`~spotree.SPOBoost` (``model.estimators_[k]``) hold no
    decisions: their leaves show the step of the predicted costs
    (``tree_.value``, before ``learning_rate`` shrinks it) and no SPO loss.

    Parameters
    ----------
    model : fitted SPOTree (or any estimator with ``tree_``) or Tree
    ax : matplotlib Axes, default=None
        Draw here; by default on a new figure sized to the tree.
    feature_names : list of str, default=None
        By default ``feature_names_in_`` when available, else ``x0, x1, ...``.
    problem : DecisionProblem, default=None
        Describes leaf decisions when ``model`` is a bare :class:`Tree`.
        Given for a fitted model, it replaces the model's own problem here; it
        must have the tree's number of costs (a ValueError otherwise).
    max_depth : int, default=None
        Draw down to this depth; deeper subtrees end in a "..." node.
    precision : int, default=2
        Decimals of thresholds and losses (a non-zero threshold or loss that
        would print as 0 gets four significant digits instead).
    show_loss : bool, default=True
    fontsize : float, default=None
        Font size in points (a positive number); chosen from the tree size when
        None.

    Returns
    -------
    ax : matplotlib Axes
    """
    tree, model_problem, names = _resolve(model, feature_names, "plot_tree")
    problem = model_problem if problem is None else _given_problem(problem, tree, "plot_tree")
    # bool is an int to Python: True drew one level without a word (export_text refuses it).
    if max_depth is not None and (not isinstance(max_depth, (int, np.integer))
                                  or isinstance(max_depth, bool) or max_depth < 0):
        raise ValueError(f"max_depth must be a non-negative int or None; got {max_depth!r}.")
    if (not isinstance(precision, (int, np.integer)) or isinstance(precision, bool)
            or precision < 0):
        raise ValueError(f"precision must be a non-negative int; got {precision!r}.")
    if fontsize is not None and not (isinstance(fontsize, numbers.Real)
                                     and not isinstance(fontsize, bool)
                                     and 0 < fontsize < np.inf):
        # A named size ("large") failed in arithmetic on it; 0 and -1 drew no text.
        raise ValueError(f"fontsize must be a positive number or None; got {fontsize!r}.")
    depth = tree.node_depth()
    shown_leaf = (tree.children_left == TREE_LEAF)
    if max_depth is not None:
        shown_leaf = shown_leaf | (depth == max_depth)
    visible = depth <= (max_depth if max_depth is not None else depth.max())

    # In-order leaf positions; a split sits above the middle of its children.
    xpos = np.zeros(tree.node_count)

    # Depth first with an explicit stack (a valid tree may be deeper than
    # Python's recursion limit): leaves numbered left to right, a split
    # placed once both its children are.
    n_leaves = 0
    stack = [(0, False)]
    while stack:
        t, children_placed = stack.pop()
        if shown_leaf[t]:
            xpos[t] = n_leaves
            n_leaves += 1
        elif children_placed:
            xpos[t] = 0.5 * (xpos[tree.children_left[t]] + xpos[tree.children_right[t]])
        else:
            stack += [(t, True), (tree.children_right[t], False),
                      (tree.children_left[t], False)]
    n_cols = max(n_leaves, 1)
    n_rows = int(depth[visible].max()) + 1
    if ax is None:
        ax = _new_axes("plot_tree", (min(max(2.0 * n_cols, 5.0), 40.0),
                                     min(max(1.7 * n_rows, 2.5), 24.0)))
    if fontsize is None:
        fontsize = float(np.clip(11 - 0.25 * n_cols, 5, 10))
    boost = is_boost_tree(model)
    # A boosting tree's decision and loss arrays are zeros, not its content.
    show_loss = show_loss and not boost
    keys = _decision_keys(tree, boost)
    fmt = f"{{:.{int(precision)}f}}"

    def samples(t):
        w, n = tree.weighted_n_node_samples[t], tree.n_node_samples[t]
        return f"n = {n}" if np.isclose(w, n) else f"weight = {w:.4g}"

    for t in np.flatnonzero(visible):
        lines = []
        if shown_leaf[t]:
            cut = tree.children_left[t] != TREE_LEAF
            # A boosting tree's steps are at its leaves only (a cut node's is 0).
            desc = ("" if boost and cut else describe_step(tree.value[t]) if boost
                    else _describe(problem, tree.decision[t]))
            lines += _wrap(desc) if desc else []
            if cut:
                lines.append("(subtree cut)")
            color = _LEAF_COLORS[keys[t] % len(_LEAF_COLORS)]
        else:
            lines.append(split_labels(tree, t, names[tree.feature[t]], fmt,
                                      getattr(model, "category_values_", None))[0])
            color = "white"
        lines.append(samples(t))
        if show_loss:
            # A small loss (costs of order 1e-6) printed 0.00, as if perfect.
            lines.append(f"SPO loss = {number_text(tree.loss[t], fmt)}")
        ax.text(xpos[t], -depth[t], "\n".join(lines), ha="center", va="center",
                fontsize=fontsize, zorder=3,
                bbox=dict(boxstyle="round,pad=0.4", facecolor=color, edgecolor="0.3"))
        if not shown_leaf[t]:
            for child, label in ((tree.children_left[t], "True"),
                                 (tree.children_right[t], "False")):
                ax.plot([xpos[t], xpos[child]], [-depth[t], -depth[child]], color="0.4",
                        lw=1, zorder=1)
                if t == 0:
                    ax.text(0.5 * (xpos[t] + xpos[child]), -0.5, label, ha="center",
                            va="center", fontsize=fontsize * 0.9, color="0.3",
                            bbox=dict(facecolor="white", edgecolor="none", pad=0.5), zorder=2)
    ax.set_xlim(-0.7, n_cols - 0.3)
    ax.set_ylim(-(n_rows - 1) - 0.6, 0.6)
    ax.set_axis_off()
    return ax


def plot_by_depth(rows, *, value="normalized_spo_loss", methods=None, depths=None, ax=None,
                  ylabel=None, title=None, legend=True, depth_key="depth",
                  method_key="method"):
    """Boxplots of ``value`` for each method, grouped by tree depth (paper figures 3-5).

    Within each depth group the boxes of the methods present at that depth
    sit side by side, centred on the group; a method keeps its colour
    everywhere (:data:`METHOD_COLORS`).

    Parameters
    ----------
    rows : list of dict
        One dict per run with at least ``method_key``, ``depth_key`` and
        ``value`` (e.g. the rows of an experiment's ``results.csv``, read
        with :mod:`csv` or pandas). A depth of ``None``, ``""`` or NaN is
        drawn as "unrestricted" (where forests go), a float depth ``2.0`` as
        ``2``; a row whose value is ``None``, ``""`` or NaN is left out.
    value : str, default="normalized_spo_loss"
    methods, depths : list, default=None
        Order of the boxes; by default their order of appearance.
    ax : matplotlib Axes, default=None
    ylabel, title : str, default=None
    legend : bool, default=True
        Draw a legend of the methods on ``ax``.
    depth_key, method_key : str, default="depth", "method"
        The keys of a row that hold its depth and its method.

    Returns
    -------
    ax : matplotlib Axes
    """
    def dkey(d):
        # A table read by pandas has NaN for an empty depth and floats (2.0) for
        # the others, which read "nan" and "2.0" and matched no depth of ``depths``.
        if _is_nan(d) or (isinstance(d, str) and d in ("", "None", "none")) or d is None:
            return "unrestricted"
        if isinstance(d, (float, np.floating)) and float(d).is_integer():
            return str(int(d))
        return str(d)

    # A run without a value (an empty cell; NaN in a table read by pandas) is left out:
    # NaN drew an empty box.
    rows = [r for r in rows if r.get(value) not in (None, "") and not _is_nan(r.get(value))]
    for key in (method_key, depth_key):
        missing = [i for i, r in enumerate(rows) if key not in r]
        if missing:
            raise ValueError(f"rows[{missing[0]}] has no {key!r} key (each row needs "
                             f"{method_key!r}, {depth_key!r} and {value!r}).")
    if methods is None:
        methods = list(dict.fromkeys(r[method_key] for r in rows))
    depths = (list(dict.fromkeys(dkey(r[depth_key]) for r in rows)) if depths is None
              else [dkey(d) for d in depths])
    cells = {}
    for i, r in enumerate(rows):
        try:
            v = float(r[value])
        except (TypeError, ValueError):
            # float()'s "could not convert string to float: 'abc'" named no row or key.
            raise ValueError(f"rows[{i}][{value!r}] must be a number; got {r[value]!r}.") \
                from None
        cells.setdefault((r[method_key], dkey(r[depth_key])), []).append(v)
    present = {d: [m for m in methods if (m, d) in cells] for d in depths}
    n_max = max([len(v) for v in present.values()] + [1])
    if ax is None:
        ax = _new_axes("plot_by_depth", (1.6 + 1.4 * len(depths) * n_max ** 0.5, 3.8))
    width = 0.8 / n_max
    used = []
    for j, d in enumerate(depths):
        for i, m in enumerate(present[d]):
            pos = j + width * (i - (len(present[d]) - 1) / 2)
            color = _method_color(m, methods.index(m))
            values = cells[(m, d)]
            bp = ax.boxplot([values], positions=[pos], widths=width * 0.85,
                            patch_artist=True, manage_ticks=False,
                            medianprops=_median_style(color, flat=np.ptp(values) == 0),
                            flierprops=dict(marker=".", markersize=3))
            for box in bp["boxes"]:
                box.set_facecolor(color)
                box.set_alpha(0.85)
            if m not in used:
                used.append(m)
    ax.set_xticks(range(len(depths)))
    ax.set_xticklabels(depths)
    ax.set_xlim(-0.6, len(depths) - 0.4)
    ax.set_xlabel("training depth")
    ax.set_ylabel(ylabel or value.replace("_", " "))
    if legend and used:
        # Outside the axes, on the right: a legend never hides a box.
        ax.legend(handles=method_patches([m for m in methods if m in used], methods),
                  fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if title:
        ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    return ax


def _is_nan(v):
    """Whether ``v`` is a float NaN (pandas' missing value), not a str or other object."""
    return isinstance(v, (float, np.floating)) and bool(np.isnan(v))


def _median_style(color, flat=False):
    """The median: white with a black edge, visible on light and dark boxes alike.

    In a box of identical values (zero height) the median is all there is to
    see, so it takes the method's colour instead (still with the black edge):
    the box then still shows whose it is.
    """
    from matplotlib import patheffects

    return dict(color=color if flat else "white", linewidth=2, solid_capstyle="butt",
                path_effects=[patheffects.Stroke(linewidth=3.6, foreground="black"),
                              patheffects.Normal()])


def method_patches(names, order=None):
    """Legend handles (coloured patches) for methods, in the colours of the plots.

    Parameters
    ----------
    names : list of str
        The methods, in the order of the legend.
    order : list of str, default=None
        The methods in the order the plot coloured them: a method without a
        colour of :data:`METHOD_COLORS` takes the fallback colour of its
        position here. By default ``names``.

    Returns
    -------
    list of matplotlib.patches.Patch
    """
    # Through import_optional, as every plot_*: without matplotlib the error names
    # the spotree[plot] extra, not "No module named 'matplotlib.patches'".
    import_optional("matplotlib", purpose="method_patches")
    from matplotlib.patches import Patch

    order = list(order or names)
    return [Patch(facecolor=_method_color(m, order.index(m) if m in order else i),
                  edgecolor="black", alpha=0.85, label=m) for i, m in enumerate(names)]


def _boundaries(W, x):
    change = np.flatnonzero(np.any(np.abs(np.diff(W, axis=0)) > 1e-9, axis=1))
    return [float(0.5 * (x[k] + x[k + 1])) for k in change]


def decision_boundaries(model, x):
    """Feature values where a one-feature model's decision changes.

    Parameters
    ----------
    model : fitted estimator of one feature with ``predict_decision``
    x : array-like of shape (m,)
        Increasing grid of values of the feature (distinct and finite: a
        boundary is read between neighbours, so a grid out of order or
        holding NaN is a ValueError).

    Returns
    -------
    list of float
        Midpoints between consecutive grid values whose decisions differ.
    """
    x = _check_grid(x, "decision_boundaries")
    _check_one_feature(model, "decision_boundaries")
    return _boundaries(np.asarray(model.predict_decision(_grid(model, x))), x)


def _check_grid(x, caller):
    """``x`` as a 1-D float grid in order: a boundary is read between neighbours."""
    x = np.asarray(x, dtype=np.float64)
    # A column or row of values is a grid; a table of several columns is not (it
    # was flattened and reported as values out of order).
    if sum(n > 1 for n in x.shape) > 1:
        raise ValueError(f"{caller}: x must be a 1-D grid of values of the model's one "
                         f"feature; got an array of shape {x.shape}.")
    x = x.ravel()
    if x.size == 0:
        raise ValueError(f"{caller}: x is empty; give a grid of values of the feature, "
                         "such as np.linspace(lo, hi, 200).")
    if not np.isfinite(x).all():
        raise ValueError(f"{caller}: x must hold finite values of the feature; got "
                         f"{int((~np.isfinite(x)).sum())} NaN or infinite.")
    step = np.diff(x)
    # Out of order, neighbours in x are not neighbours in the feature: a
    # shuffled grid gave boundaries at 0.45, 0.15 and 0.45 for a model whose
    # decision changes at 0.28 (a sorted one: 0.25).
    if step.size and not ((step > 0).all() or (step < 0).all()):
        i = int(np.flatnonzero(step <= 0)[0] if (step > 0).sum() >= step.size / 2
                else np.flatnonzero(step >= 0)[0])
        raise ValueError(f"{caller}: x must be a grid of distinct values in increasing "
                         f"order (as np.linspace gives); x[{i}] = {x[i]:.6g} and x[{i + 1}] "
                         f"= {x[i + 1]:.6g} are out of order or equal. Sort it: np.unique(x).")
    return x


def _grid(model, x):
    """The grid ``x`` as the one-column input ``model`` was fitted on."""
    # A model fitted on a one-column DataFrame warned "X does not have valid
    # feature names" at every call when handed the bare array.
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        return x.reshape(-1, 1)
    import pandas as pd

    return pd.DataFrame({names[0]: x})


def _check_one_feature(model, caller):
    if not callable(getattr(model, "predict_decision", None)):
        # A regressor of the costs failed with Python's AttributeError.
        hint = (" Pass C_pred and W_pred computed with it instead (model=None; W_pred = "
                "problem.solve(C_pred)[0])." if caller == "plot_predicted_costs" else "")
        raise TypeError(f"{caller} needs a model with predict_decision; got "
                        f"{type(model).__name__}.{hint}")
    # The grid is one column: a model of several features failed with
    # scikit-learn's "X has 1 features, but ... is expecting 2".
    n = getattr(model, "n_features_in_", 1)
    if n != 1:
        verb, hint = "reads", ""
        if caller == "plot_predicted_costs":
            verb, hint = "draws", (" Pass C_pred and W_pred computed on your own rows instead "
                                   "(model=None).")
        raise ValueError(f"{caller} {verb} a model of one feature along a grid of its values; "
                         f"this {type(model).__name__} was fitted on {n} features.{hint}")


def plot_predicted_costs(model, x, C_true=None, *, C_pred=None, W_pred=None,
                         true_boundary=None, ax=None, label=None, color="#1f77b4",
                         cost_names=None, title=None):
    """A one-feature model's predicted costs, with true and learned decision boundaries.

    The paper's figure 2 (a)-(c): the true costs in grey, the model's
    predicted costs in ``color`` (one line style per cost), the true decision
    boundary as a grey dotted line and the model's as dashed lines of its
    colour. A model whose decision never changes on the grid has no boundary:
    no line is drawn and the legend says "no boundary". The legend sits under
    the axes, where it hides no line.

    Parameters
    ----------
    model : fitted estimator of one feature, or None
        Provides ``predict`` and ``predict_decision`` on the grid; None when
        ``C_pred`` and ``W_pred`` are given.
    x : array-like of shape (m,)
        Increasing grid of feature values (distinct and finite, as for
        :func:`decision_boundaries`).
    C_true : array-like of shape (m, d), default=None
        True costs on the grid.
    C_pred, W_pred : array-like of shape (m, d), default=None
        Precomputed predicted costs and decisions on the grid.
    true_boundary : float or list of float, default=None
    ax : matplotlib Axes, default=None
    label : str, default=None
        Model name in the legend.
    color : str, default="#1f77b4"
    cost_names : list of str, default=None
        Names of the costs (``c1, c2, ...`` by default).
    title : str, default=None

    Returns
    -------
    ax : matplotlib Axes
    """
    x = _check_grid(x, "plot_predicted_costs")
    if model is not None:
        _check_one_feature(model, "plot_predicted_costs")
        C_pred = model.predict(_grid(model, x))
        W_pred = model.predict_decision(_grid(model, x))
    elif C_pred is None or W_pred is None:
        raise ValueError("plot_predicted_costs needs a model, or both C_pred and W_pred.")
    C_pred, W_pred = np.asarray(C_pred, dtype=np.float64), np.asarray(W_pred, dtype=np.float64)
    if C_pred.ndim != 2 or C_pred.shape[0] != x.size or W_pred.shape != C_pred.shape:
        raise ValueError(f"C_pred and W_pred must have shape ({x.size}, d) to match x; got "
                         f"{C_pred.shape} and {W_pred.shape}.")
    d = C_pred.shape[1]
    if C_true is not None:
        C_true = np.asarray(C_true, dtype=np.float64)
        if C_true.shape != C_pred.shape:
            raise ValueError(f"C_true must have shape {C_pred.shape} (one row per value of x, "
                             f"one column per cost); got {C_true.shape}.")
    cost_names = cost_names or [f"c{k + 1}" for k in range(d)]
    if len(cost_names) != d:
        raise ValueError(f"cost_names must have {d} entries (one per cost); got "
                         f"{len(cost_names)}.")
    if ax is None:
        ax = _new_axes("plot_predicted_costs", (5.5, 4.0))
    styles = ("-", "--", "-.", ":")
    label = label or (type(model).__name__ if model is not None else "model")
    if C_true is not None:
        for k in range(d):
            ax.plot(x, C_true[:, k], color="0.65", lw=2.5, ls=styles[k % 4],
                    label=f"true {cost_names[k]}")
    for k in range(d):
        ax.plot(x, C_pred[:, k], color=color, lw=1.8, ls=styles[k % 4],
                label=f"{label} {cost_names[k]}")
    # number_text: a boundary of a feature in millionths read "x = 0.00".
    if true_boundary is not None:
        for i, b in enumerate(np.atleast_1d(true_boundary)):
            ax.axvline(b, color="0.3", ls=":", lw=2,
                       label=f"true boundary x = {number_text(b, '{:.2f}')}" if i == 0
                       else None)
    learned = _boundaries(W_pred, x)
    for i, b in enumerate(learned):
        ax.axvline(b, color=color, ls="--", lw=1.5,
                   label=f"{label} boundary x = {number_text(b, '{:.2f}')}" if i == 0
                   else None)
    handles, labels = ax.get_legend_handles_labels()
    if not learned:
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], color=color, ls="--", lw=1.5))
        labels.append(f"{label}: no boundary (one decision for every x)")
    ax.set_xlabel("x")
    ax.set_ylabel("cost")
    ax.legend(handles, labels, fontsize=7, frameon=False, loc="upper center",
              bbox_to_anchor=(0.5, -0.16), ncol=2)
    if title:
        ax.set_title(title)
    return ax


def _fitted_array(model, name, caller, how):
    """``model.<name>`` as a 1-D float array, or a TypeError saying what ``caller`` needs."""
    value = getattr(model, name, None)
    if value is None:
        raise TypeError(f"{caller} needs {how}; got {type(model).__name__} without {name}.")
    value = np.asarray(value, dtype=np.float64)
    if value.ndim != 1:
        raise ValueError(f"{caller}: {type(model).__name__}.{name} must be 1-D; got shape "
                         f"{value.shape}.")
    return value


def plot_boosting(model, ax=None, *, title=None):
    """A fitted :class:`~spotree.SPOBoost`'s regret round by round, and the round it kept.

    Draws the normalized SPO loss of the model's decisions on the training
    rows and on the validation rows after every boosting round (round 0 is
    the starting model alone), and a vertical line at ``best_iteration_``,
    the number of trees kept. A kept round of 0 means the trees did not beat
    the start by two standard errors on the validation rows.

    With ``validation_fraction`` the curves are those of the fit that chose
    the number of rounds, on the training part only; the model returned was
    then refitted on all the rows, whose regret is not drawn.

    Parameters
    ----------
    model : fitted SPOBoost
        Anything with ``train_score_``, ``validation_score_`` (possibly
        empty) and ``best_iteration_``, scores being minus the normalized SPO
        loss as in ``score``.
    ax : matplotlib Axes, default=None
    title : str, default=None
        By default, the start (``init_choice_``) and the number of trees kept.

    Returns
    -------
    ax : matplotlib Axes

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If ``model`` is an SPOBoost not fitted yet.
    TypeError
        If ``model`` is of another kind and lacks these attributes.
    """
    from sklearn.utils.validation import check_is_fitted

    from .boost import SPOBoost

    if isinstance(model, SPOBoost):
        # The right model, not fitted yet: NotFittedError, as plot_tree, predict and
        # scikit-learn raise (the TypeError below is for objects of another kind).
        check_is_fitted(model, "estimators_")
    how = "a fitted SPOBoost (train_score_, validation_score_, best_iteration_)"
    train = _fitted_array(model, "train_score_", "plot_boosting", how)
    val = _fitted_array(model, "validation_score_", "plot_boosting", how)
    best = getattr(model, "best_iteration_", None)
    if best is None:
        raise TypeError(f"plot_boosting needs {how}; got {type(model).__name__} without "
                        "best_iteration_.")
    if val.size and val.size != train.size:
        raise ValueError(f"plot_boosting: validation_score_ has {val.size} rounds and "
                         f"train_score_ {train.size}; a fitted SPOBoost has as many of both.")
    if not 0 <= int(best) < max(train.size, 1):
        raise ValueError(f"plot_boosting: best_iteration_={best} is not a round of "
                         f"train_score_ (0 to {train.size - 1}).")
    best = int(best)
    if ax is None:
        ax = _new_axes("plot_boosting", (5.5, 3.8))
    rounds = np.arange(train.size)
    # Scores are minus the regret (greater is better); the plot shows the regret.
    if np.isfinite(train).any():
        ax.plot(rounds, -train, color="#7f7f7f", lw=1.5, label="training rows")
    if val.size:
        ax.plot(rounds, -val, color="#1f77b4", lw=1.8, label="validation rows")
        ax.axhline(-val[0], color="#1f77b4", ls=":", lw=1, label="start alone (validation)")
        ax.plot([best], [-val[best]], "o", color="#1f77b4", ms=6)
    kept = ("the start alone" if best == 0
            else f"{best} tree{'s' if best != 1 else ''}")
    ax.axvline(best, color="#d62728", ls="--", lw=1.2, label=f"kept: {kept}")
    ax.set_xlabel("boosting round (0: the start)")
    ax.set_ylabel("normalized SPO loss")
    ax.legend(fontsize=8, frameon=False)
    ax.grid(alpha=0.3)
    start = getattr(model, "init_choice_", None)
    ax.set_title(title if title is not None else
                 (f"start {start!r}, kept {kept}" if start is not None else f"kept {kept}"))
    return ax


def plot_pruning_path(model, ax=None, *, title=None):
    """A pruned tree's validation loss along the weakest-link sequence, and the subtree kept.

    Draws the total validation loss of every candidate subtree of
    :meth:`~spotree.SPOTree.prune` against its number of leaves, marks the
    subtree kept (``pruning_alpha_``) and, when pruned with
    ``one_se_rule=True``, the band of one standard error above the best
    loss within which the smallest subtree was kept.

    Parameters
    ----------
    model : tree returned by ``prune`` (or loaded from its file)
        Anything with ``pruning_path_`` (``ccp_alphas``, ``n_leaves``,
        ``val_losses``, ``standard_error``), ``pruning_alpha_`` and
        ``get_n_leaves``.
    ax : matplotlib Axes, default=None
    title : str, default=None
        By default, the alpha and the number of leaves kept.

    Returns
    -------
    ax : matplotlib Axes
    """
    path = getattr(model, "pruning_path_", None)
    if path is None or not hasattr(model, "pruning_alpha_"):
        raise TypeError("plot_pruning_path needs a tree returned by prune() (with "
                        f"pruning_path_ and pruning_alpha_); got {type(model).__name__} "
                        "without them.")
    alphas = np.asarray(path["ccp_alphas"], dtype=np.float64)
    leaves = np.asarray(path["n_leaves"], dtype=np.float64)
    val = np.asarray(path["val_losses"], dtype=np.float64)
    if not (alphas.ndim == leaves.ndim == val.ndim == 1
            and alphas.size == leaves.size == val.size):
        raise ValueError("plot_pruning_path: pruning_path_'s ccp_alphas, n_leaves and "
                         "val_losses must be 1-D of one length; got shapes "
                         f"{alphas.shape}, {leaves.shape} and {val.shape}.")
    # The subtree kept, by its leaves (they decrease strictly along the
    # sequence, while alphas can repeat: splits that gain nothing all go at 0).
    kept = np.flatnonzero(leaves == model.get_n_leaves())
    if kept.size != 1:
        raise ValueError(f"plot_pruning_path: the tree's {model.get_n_leaves()} leaves are "
                         "not those of one subtree of pruning_path_.")
    k = int(kept[0])
    if ax is None:
        ax = _new_axes("plot_pruning_path", (5.5, 3.8))
    ax.plot(leaves, val, "-o", color="#1f77b4", ms=3, lw=1.5, label="candidate subtrees")
    se = float(path.get("standard_error", np.nan))
    if np.isfinite(se):
        low = val.min()
        ax.axhspan(low, low + se, color="#1f77b4", alpha=0.12, lw=0,
                   label="best + one standard error")
    ax.plot([leaves[k]], [val[k]], "o", color="#d62728", ms=8, mfc="none", mew=2,
            label=f"kept: {count_noun(leaves[k], 'leaf')}")
    ax.set_xlabel("leaves")
    ax.set_ylabel("total validation loss")
    ax.legend(fontsize=8, frameon=False)
    ax.grid(alpha=0.3)
    ax.set_title(title if title is not None else
                 f"alpha = {alphas[k]:.3g}, {count_noun(leaves[k], 'leaf')} kept")
    return ax


def _weighted_ecdf(values, weights):
    """Steps of the weighted ECDF: x the sorted values, y the share of weight at or below."""
    order = np.argsort(values, kind="stable")
    x, w = values[order], weights[order]
    y = np.cumsum(w) / w.sum()
    # Starts at 0 at the smallest value, so the first step is drawn.
    return np.concatenate([x[:1], x]), np.concatenate([[0.0], y])


def plot_decision_comparison(comparison, ax=None, *, kind="difference", title=None):
    """Per-row regrets of several models' decisions (:func:`~spotree.metrics.compare_decisions`).

    Each curve is a weighted empirical distribution function over the rows
    (of positive weight): the share of the rows at or below each value. The
    values are in units of the mean optimal value ``sum w_i |z*_i| / sum
    w_i``, so a curve's mean is the normalized SPO loss (``kind="ecdf"``) or
    the difference from the reference's (``kind="difference"``).

    Parameters
    ----------
    comparison : DecisionComparison
        The result of :func:`~spotree.metrics.compare_decisions`.
    ax : matplotlib Axes, default=None
    kind : {"difference", "ecdf"}, default="difference"
        ``"difference"``: for every model but the reference, the paired
        differences of regret ``r_i - r0_i`` on the same rows; the curve's
        height just left of 0 is the share of rows where the model decides
        better, and the legend gives the difference of the normalized losses
        with its standard error. ``"ecdf"``: every model's regrets ``r_i``;
        the height at 0 is the share of rows it decides optimally.
    title : str, default=None
        By default, the reference and the number of rows.

    Returns
    -------
    ax : matplotlib Axes
    """
    if not isinstance(comparison, DecisionComparison):
        raise TypeError("plot_decision_comparison needs the result of "
                        "spotree.metrics.compare_decisions; got "
                        f"{type(comparison).__name__}.")
    if kind not in ("difference", "ecdf"):
        raise ValueError(f"kind must be 'difference' or 'ecdf'; got {kind!r}.")
    names, ref = comparison.names, comparison.names.index(comparison.reference)
    if kind == "difference" and len(names) < 2:
        raise ValueError("plot_decision_comparison(kind='difference') needs a model besides "
                         f"the reference {comparison.reference!r}; use kind='ecdf'.")
    sw = comparison.sample_weight
    keep = sw > 0
    w = sw[keep]
    mean_z = np.dot(w, np.abs(comparison.optimal_values[keep])) / w.sum()
    R = comparison.regrets[:, keep] / mean_z
    if ax is None:
        ax = _new_axes("plot_decision_comparison", (5.5, 3.8))
    for i, name in enumerate(names):
        if kind == "ecdf":
            x, y = _weighted_ecdf(R[i], w)
            label = f"{name}: {comparison.normalized_spo_loss[i]:.4g}"
        elif i == ref:
            continue
        else:
            x, y = _weighted_ecdf(R[i] - R[ref], w)
            label = (f"{name}: {comparison.difference[i]:+.3g} ± "
                     f"{comparison.standard_error[i]:.2g}")
        ax.plot(x, y, drawstyle="steps-post", color=_method_color(name, i), lw=1.6,
                label=label)
    if kind == "ecdf":
        ax.set_xlabel("regret / mean optimal value")
        ax.legend(title="normalized SPO loss", fontsize=8, title_fontsize=8, frameon=False)
    else:
        ax.axvline(0.0, color="0.3", ls=":", lw=1)
        ax.set_xlabel(f"(regret - {comparison.reference}'s regret) / mean optimal value")
        ax.legend(title=f"difference from {comparison.reference} (± std. error)",
                  fontsize=8, title_fontsize=8, frameon=False)
    ax.set_ylabel("share of rows at or below")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    n = int(np.count_nonzero(keep))
    ax.set_title(title if title is not None else
                 f"{count_noun(n, 'row')}, reference {comparison.reference}")
    return ax
