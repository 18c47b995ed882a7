"""plot_tree, the result plots and export_graphviz, on hand-built trees."""

import os
import re

import numpy as np
import pytest
from numpy.testing import assert_allclose

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from spotree import SPOBoost, SPOTree  # noqa: E402
from spotree.metrics import compare_decisions  # noqa: E402
from spotree.plotting import (  # noqa: E402
    decision_boundaries, plot_boosting, plot_by_depth, plot_decision_comparison,
    plot_predicted_costs, plot_pruning_path, plot_tree)
from spotree.problems import FiniteDecisions, ShortestPath  # noqa: E402
from spotree.tree._export_graphviz import export_graphviz  # noqa: E402
from spotree.tree._tree import Tree  # noqa: E402


def hand_tree(V):
    """Root splits x0 <= 0.28; its left child splits x1 <= 0.5; three leaves."""
    return Tree(n_features=2, n_outputs=V.shape[1], children_left=[1, 3, -1, -1, -1],
                children_right=[2, 4, -1, -1, -1], feature=[0, 1, -2, -2, -2],
                threshold=[0.28, 0.5, -2, -2, -2], value=np.tile(V[0], (5, 1)),
                decision=V[[0, 0, 1, 0, 2 % len(V)]], loss=[3.0, 2.0, 0.0, 0.5, 0.25],
                impurity=[3.0, 2.0, 0.0, 0.5, 0.25], n_node_samples=[100, 60, 40, 30, 30],
                weighted_n_node_samples=[100.0, 60.0, 40.0, 30.0, 30.0])


class Fitted:
    """Stands in for a fitted estimator: only tree_ and problem_ are read."""

    def __init__(self, tree, problem, names=None):
        self.tree_, self.problem_ = tree, problem
        if names is not None:
            self.feature_names_in_ = np.array(names, dtype=object)


def saved_pixels(fig, path):
    fig.savefig(path, dpi=60)
    plt.close(fig)
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[0] > 50 and img.shape[1] > 50
    return img


def texts(ax):
    return [t.get_text() for t in ax.texts]


def test_plot_tree_draws_every_node_with_splits_and_leaf_decisions(tmp_path):
    sp = ShortestPath((4, 4))
    V = sp.vertices()
    model = Fitted(hand_tree(V), sp, names=["hour", "snow"])
    ax = plot_tree(model)
    labels = texts(ax)
    boxes = [t for t in labels if "SPO loss" in t]
    assert len(boxes) == 5
    assert any(t.startswith("hour <= 0.28") for t in boxes)
    assert any(t.startswith("snow <= 0.50") for t in boxes)
    # Each leaf names its path, wrapped over lines.
    for leaf in (2, 3, 4):
        path = sp.describe_decision(V[[0, 0, 1, 0, 2]][leaf])
        assert any(t.replace("\n", "").startswith(path) for t in boxes)
    assert "True" in labels and "False" in labels
    img = saved_pixels(ax.figure, tmp_path / "tree.png")
    assert img[..., :3].std() > 0.05


def test_plot_tree_on_given_axes_with_a_bare_tree_and_max_depth(tmp_path):
    roads = FiniteDecisions(np.eye(2))
    fig, ax = plt.subplots()
    out = plot_tree(hand_tree(np.eye(2)), ax=ax, problem=roads, max_depth=1)
    assert out is ax
    boxes = [t for t in texts(ax) if "loss" in t]
    assert len(boxes) == 3  # root and its two children; the grandchildren are cut
    assert any("(subtree cut)" in t for t in boxes)
    assert any(t.startswith("x0 <= 0.28") for t in boxes)
    saved_pixels(fig, tmp_path / "t.png")


def test_plot_tree_puts_leaves_in_order_and_each_split_above_its_childrens_middle():
    # hand_tree's leaves, left to right: 3, 4 (under split 1), then 2, at x =
    # 0, 1, 2. Split 1 sits at (0 + 1) / 2 = 0.5, the root at (0.5 + 2) / 2
    # = 1.25 (by hand); a node's y is minus its depth.
    ax = plot_tree(hand_tree(np.eye(2)), problem=FiniteDecisions(np.eye(2)))
    where = {t.get_text().split("\n")[0]: t.get_position() for t in ax.texts}
    assert where["x0 <= 0.28"] == (1.25, 0)
    assert where["x1 <= 0.50"] == (0.5, -1)
    leaves = sorted(t.get_position() for t in ax.texts if "n = 30" in t.get_text()
                    or "n = 40" in t.get_text())
    assert leaves == [(0, -2), (1, -2), (2, -1)]
    plt.close(ax.figure)


def test_plot_tree_rejects_non_models_and_bad_names():
    with pytest.raises(ValueError, match="fitted spotree tree"):
        plot_tree(object())
    with pytest.raises(ValueError, match="feature_names must have 2"):
        plot_tree(hand_tree(np.eye(2)), feature_names=["a"])


def test_plot_tree_and_export_graphviz_of_an_unfitted_tree_raise_not_fitted_error():
    # They raised a plain ValueError, where export_text, predict and scikit-learn's
    # own plot_tree raise NotFittedError.
    from sklearn.exceptions import NotFittedError

    from spotree import SPOForest

    for model in (SPOTree(FiniteDecisions(np.eye(2))), SPOForest(FiniteDecisions(np.eye(2)))):
        for draw in (plot_tree, export_graphviz):
            with pytest.raises(NotFittedError, match=f"This {type(model).__name__} instance "
                                                     "is not fitted yet"):
                draw(model)
    assert plt.get_fignums() == []


def test_plot_tree_of_a_fitted_forest_says_to_pick_one_tree():
    # A fitted forest was called "without a fitted tree_".
    from spotree import SPOForest

    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(30, 2)), rng.normal(size=(30, 3))
    forest = SPOForest(FiniteDecisions(np.eye(3)), n_estimators=2, random_state=0).fit(X, C)
    for draw, name in ((plot_tree, "plot_tree"), (export_graphviz, "export_graphviz")):
        with pytest.raises(ValueError, match=rf"{name} draws one tree, and SPOForest holds 2: "
                                             r"pass one of them, for example "
                                             r"model\.estimators_\[0\]"):
            draw(forest)
    assert plot_tree(forest.estimators_[0]) is not None
    plt.close("all")


def test_export_graphviz_is_valid_dot_with_one_node_per_tree_node(tmp_path):
    roads = FiniteDecisions(np.eye(2))
    dot = export_graphviz(Fitted(hand_tree(np.eye(2)), roads), feature_names=["x", "y"],
                          out_file=tmp_path / "t.dot")
    assert dot.startswith("digraph") and dot.rstrip().endswith("}")
    assert (tmp_path / "t.dot").read_text() == dot
    nodes = re.findall(r"^(\d+) \[label=\"([^\"]*)\"", dot, flags=re.M)
    assert [int(n) for n, _ in nodes] == [0, 1, 3, 4, 2]  # depth first, left first
    edges = re.findall(r"^(\d+) -> (\d+)", dot, flags=re.M)
    assert sorted((int(a), int(b)) for a, b in edges) == [(0, 1), (0, 2), (1, 3), (1, 4)]
    label = dict(nodes)
    assert label["0"].startswith("x <= 0.280") and label["1"].startswith("y <= 0.500")
    assert "decision:" in label["2"] and "samples = 40" in label["2"]
    assert dot.count("{") == dot.count("}")
    cut = export_graphviz(hand_tree(np.eye(2)), max_depth=0)
    assert "..." in cut and "1 [" not in cut


class Threshold1D:
    """A one-feature two-road model: below t choose road 2, else road 1."""

    def __init__(self, t):
        self.t = t

    def predict(self, X):
        x = np.asarray(X)[:, 0]
        return np.column_stack([np.where(x <= self.t, 3.0, 5.0), np.where(x <= self.t, 2.0, 9.0)])

    def predict_decision(self, X):
        C = self.predict(X)
        return np.eye(2)[np.argmin(C, axis=1)]


def test_decision_boundaries_and_predicted_costs_plot(tmp_path):
    x = np.linspace(0, 1, 1001)
    assert decision_boundaries(Threshold1D(0.28), x) == [pytest.approx(0.2805)]
    assert decision_boundaries(Threshold1D(2.0), x) == []
    C = np.column_stack([5 * x + 1.9, (5 * x + 0.4) ** 2])
    ax = plot_predicted_costs(Threshold1D(0.28), x, C, true_boundary=0.28, label="SPOT")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "true boundary x = 0.28" in legend and "SPOT boundary x = 0.28" in legend
    # A model that never changes its decision has no boundary: none is drawn or named.
    ax2 = plot_predicted_costs(Threshold1D(2.0), x, C, true_boundary=0.28, label="CART")
    legend2 = [t.get_text() for t in ax2.get_legend().get_texts()]
    assert "CART: no boundary (one decision for every x)" in legend2
    assert not any("CART boundary" in t for t in legend2)
    vertical = [ln for ln in ax2.lines if np.ptp(ln.get_xdata()) == 0]
    assert [ln.get_xdata()[0] for ln in vertical] == [0.28]  # the true boundary only
    # The legend sits under the axes, where it cannot hide a line.
    for a in (ax, ax2):
        a.figure.canvas.draw()
        renderer = a.figure.canvas.get_renderer()
        assert a.get_legend().get_window_extent(renderer).y1 <= \
            a.get_window_extent(renderer).y0
    img = saved_pixels(ax.figure, tmp_path / "c.png")
    assert img[..., :3].std() > 0.05
    plt.close(ax2.figure)


def test_plot_by_depth_groups_boxes_by_method_and_depth(tmp_path):
    rng = np.random.default_rng(0)
    rows = [{"method": m, "depth": d, "normalized_spo_loss": rng.uniform()}
            for m in ("SPOT", "CART") for d in (1, 2, "") for _ in range(5)]
    rows += [{"method": "SPO Forest", "depth": "", "normalized_spo_loss": 0.1}] * 3
    ax = plot_by_depth(rows, title="deg 2")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "unrestricted"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["SPOT", "CART",
                                                                   "SPO Forest"]
    assert len(ax.patches) == 3 + 3 + 1  # one box per method and depth present
    # The boxes of each depth group are centred on its tick.
    centres = sorted(p.get_path().get_extents().x0 / 2 + p.get_path().get_extents().x1 / 2
                     for p in ax.patches)
    for j, group in enumerate((centres[0:2], centres[2:4], centres[4:7])):
        assert np.mean(group) == pytest.approx(j)
    # The legend is right of the axes, clear of the boxes.
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    assert ax.get_legend().get_window_extent(renderer).x0 >= \
        ax.get_window_extent(renderer).x1
    img = saved_pixels(ax.figure, tmp_path / "b.png")
    assert img[..., :3].std() > 0.05


def test_plot_by_depth_reads_the_rows_of_a_results_table_read_by_pandas():
    """pd.read_csv(results.csv).to_dict("records") has float depths (2.0) and NaN for a
    forest's empty depth and for a run without a value: the axis read "2.0" and "nan",
    a NaN value drew an empty box that pushed its neighbours off centre, and
    depths=[2, None] matched no row (a blank plot, no error)."""
    pd = pytest.importorskip("pandas")
    table = pd.DataFrame({"method": ["SPOT"] * 3 + ["CART"] * 3 + ["SPOT", "CART"],
                          "depth": [2, 2, 2, 2, 2, 2, None, None],
                          "normalized_spo_loss": [0.1, 0.3, 0.2, 0.4, 0.6, 0.5, 0.05, None]})
    rows = table.to_dict("records")
    assert isinstance(rows[0]["depth"], float) and np.isnan(rows[-1]["normalized_spo_loss"])
    for depths in (None, [2, None]):
        ax = plot_by_depth(rows, depths=depths)
        assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "unrestricted"]
        medians = sorted((float(np.mean(ln.get_xdata())), float(ln.get_ydata()[0]))
                         for ln in ax.lines if ln.get_path_effects())
        # By hand: SPOT and CART at depth 2 (medians 0.2, 0.5) side by side around 0;
        # SPOT alone, centred, at "unrestricted" (the CART run there has no value).
        assert medians == [(pytest.approx(-0.2), pytest.approx(0.2)),
                           (pytest.approx(0.2), pytest.approx(0.5)),
                           (pytest.approx(1.0), pytest.approx(0.05))]
        assert not any(np.isnan(ln.get_ydata()).any() for ln in ax.lines)
        plt.close(ax.figure)


def test_medians_contrast_with_any_box_colour():
    from matplotlib.colors import to_rgb

    rows = [{"method": "SPOT", "depth": 1, "normalized_spo_loss": v} for v in (1, 2, 3, 4)]
    rows += [{"method": "CART", "depth": 1, "normalized_spo_loss": 2.0}] * 4  # zero height
    ax = plot_by_depth(rows)
    medians = [ln for ln in ax.lines if ln.get_path_effects()]
    assert len(medians) == 2
    spot, cart = sorted(medians, key=lambda ln: np.mean(ln.get_xdata()))
    # White with a black edge on a box with height, whatever the box's colour...
    assert to_rgb(spot.get_color()) == (1.0, 1.0, 1.0)
    for ln in medians:
        strokes = [pe for pe in ln.get_path_effects() if hasattr(pe, "_gc")]
        assert any(to_rgb(pe._gc.get("foreground")) == (0.0, 0.0, 0.0) for pe in strokes)
        assert any(pe._gc.get("linewidth", 0) > ln.get_linewidth() for pe in strokes)
    # ... and the method's colour on a box of identical values, which is only a line.
    assert to_rgb(cart.get_color()) == to_rgb("#ff7f0e")
    plt.close(ax.figure)


def test_plot_of_a_tree_deeper_than_the_recursion_limit(deep_chain_model):
    # A lowered recursion limit keeps the tree (and the drawing) small: the
    # placement of the nodes must not recurse once per level.
    import sys

    depth = 400
    model = deep_chain_model(depth)
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        ax = plot_tree(model)
    finally:
        sys.setrecursionlimit(saved)
    # Leaves at x = 0, 1, ..., depth; split k above the middle of its children.
    boxes = [t for t in ax.texts if t.get_text() not in ("True", "False")]
    assert len(boxes) == 2 * depth + 1
    xs = sorted(t.get_position()[0] for t in boxes)
    assert xs[0] == 0 and xs[-1] == depth


# ------------------------------------------------ plot_boosting, plot_pruning_path
def cheapest_of(C_hat, C):
    """Regret of picking the option of least predicted cost, row by row (a hand loop)."""
    return np.array([c[np.argmin(ch)] - c.min() for ch, c in zip(C_hat, C)])


def three_options(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    C = np.c_[1 + X[:, 0], 1 - X[:, 0] + 0.5 * X[:, 1], 1.1 + 0 * X[:, 0]]
    return X, C + rng.normal(0, 0.3, C.shape) + 1.0


def line_data(ax, label):
    line, = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)


def test_plot_boosting_draws_the_regret_of_every_round_and_marks_the_kept_one(tmp_path):
    X, C = three_options(400, 0)
    Xv, Cv = three_options(200, 1)
    model = SPOBoost(n_estimators=15, init="mean", n_iter_no_change=15,
                     random_state=0).fit(X, C, X_val=Xv, C_val=Cv)
    assert model.best_iteration_ > 0 and model.n_iter_ == 15
    ax = plot_boosting(model)
    rounds, val = line_data(ax, "validation rows")
    np.testing.assert_array_equal(rounds, np.arange(16))
    # The kept rounds' validation regret, from the staged predictions (no
    # refit with X_val: the kept trees are those of the curve).
    # Round 0: init="mean" predicts the training rows' mean cost.
    staged = [np.tile(C.mean(axis=0), (len(Xv), 1)), *model.staged_predict(Xv)]
    assert len(staged) == model.best_iteration_ + 1
    for k, C_hat in enumerate(staged):
        regret = cheapest_of(C_hat, Cv).sum() / np.abs(Cv.min(axis=1)).sum()
        assert val[k] == pytest.approx(regret, rel=1e-9)
    _, train = line_data(ax, "training rows")
    last = list(model.staged_predict(X))[-1]
    assert train[model.best_iteration_] == pytest.approx(
        cheapest_of(last, C).sum() / np.abs(C.min(axis=1)).sum(), rel=1e-9)
    vline, = [ln for ln in ax.get_lines() if ln.get_label().startswith("kept: ")]
    assert list(vline.get_xdata()) == [model.best_iteration_] * 2
    assert vline.get_label() == f"kept: {model.best_iteration_} trees"
    start, = [ln for ln in ax.get_lines() if ln.get_label() == "start alone (validation)"]
    assert start.get_ydata()[0] == pytest.approx(val[0])
    assert ax.get_title() == f"start 'mean', kept {model.best_iteration_} trees"
    saved_pixels(ax.figure, tmp_path / "boost.png")


def test_plot_boosting_when_the_start_is_kept_and_without_validation():
    X, C = three_options(200, 2)
    model = SPOBoost(n_estimators=3, init="ridge", n_iter_no_change=None,
                     random_state=0).fit(X, C)
    ax = plot_boosting(model, title="mine")
    assert [ln.get_label() for ln in ax.get_lines()] == ["training rows", "kept: 3 trees"]
    assert ax.get_title() == "mine"
    plt.close(ax.figure)
    model.best_iteration_ = 0
    ax = plot_boosting(model)
    assert "kept: the start alone" in [ln.get_label() for ln in ax.get_lines()]
    plt.close(ax.figure)


def test_plot_boosting_and_plot_pruning_path_reject_what_they_cannot_draw():
    from sklearn.exceptions import NotFittedError

    # An unfitted SPOBoost raised TypeError, where plot_tree, predict and
    # scikit-learn raise NotFittedError; an object of another kind keeps TypeError.
    with pytest.raises(NotFittedError, match="This SPOBoost instance is not fitted yet"):
        plot_boosting(SPOBoost())
    with pytest.raises(TypeError, match="needs a fitted SPOBoost.*without train_score_"):
        plot_boosting(SPOTree())
    with pytest.raises(TypeError, match="needs a tree returned by prune"):
        plot_pruning_path(SPOTree().fit(*three_options(50, 0)))
    X, C = three_options(60, 0)
    model = SPOBoost(n_estimators=2, init="mean", n_iter_no_change=None).fit(X, C)
    # Rounds 0 to 2: the first one past the end is refused too.
    for bad in (3, 7):
        model.best_iteration_ = bad
        with pytest.raises(ValueError, match=f"best_iteration_={bad} is not a round"):
            plot_boosting(model)
    model.best_iteration_, model.validation_score_ = 1, np.zeros(2)
    with pytest.raises(ValueError, match="validation_score_ has 2 rounds and train_score_ 3"):
        plot_boosting(model)


def test_plot_pruning_path_says_1_leaf_not_1_leaves():
    X, C = three_options(60, 3)
    # Equal validation costs: every subtree ties, and the root alone is kept.
    pruned = SPOTree(max_depth=2, min_samples_leaf=10).fit(X, C).prune(X[:30],
                                                                     np.ones((30, 3)))
    assert pruned.get_n_leaves() == 1
    ax = plot_pruning_path(pruned)
    assert "kept: 1 leaf" in [ln.get_label() for ln in ax.get_lines()]
    assert ax.get_title().endswith(", 1 leaf kept")
    plt.close(ax.figure)


@pytest.mark.parametrize("one_se_rule", [False, True])
def test_plot_pruning_path_draws_every_subtree_and_marks_the_kept_one(tmp_path, one_se_rule):
    X, C = three_options(300, 3)
    Xv, Cv = three_options(150, 4)
    full = SPOTree(max_depth=4, min_samples_leaf=5).fit(X, C)
    pruned = full.prune(Xv, Cv, one_se_rule=one_se_rule)
    ax = plot_pruning_path(pruned)
    leaves, val = line_data(ax, "candidate subtrees")
    alphas = pruned.pruning_path_.ccp_alphas
    assert len(alphas) == len(leaves) > 2
    # Each candidate refitted with its alpha: its leaves and its validation
    # SPO loss by a hand loop.
    assert np.all(np.diff(leaves) < 0)
    for i, (a, n_leaves, loss) in enumerate(zip(alphas, leaves, val)):
        if (i > 0 and a == 0) or (a > 0 and i + 1 < len(alphas) and alphas[i + 1] == a):
            # ccp_alpha=0 keeps the whole tree, alpha > 0 the last subtree of that alpha
            continue
        sub = SPOTree(max_depth=4, min_samples_leaf=5, ccp_alpha=a).fit(X, C)
        assert sub.get_n_leaves() == n_leaves
        assert loss == pytest.approx(cheapest_of(sub.predict(Xv), Cv).sum(), rel=1e-9, abs=1e-12)
    kept = [ln for ln in ax.get_lines() if ln.get_label().startswith("kept: ")]
    assert len(kept) == 1
    assert kept[0].get_xdata()[0] == pruned.get_n_leaves()
    assert kept[0].get_label() == f"kept: {pruned.get_n_leaves()} leaves"
    bands = [p for p in ax.patches if p.get_label() == "best + one standard error"]
    if one_se_rule:
        se = pruned.pruning_path_.standard_error
        assert se > 0 and len(bands) == 1
        ax.figure.canvas.draw()
        y = ax.transData.inverted().transform(bands[0].get_window_extent())[:, 1]
        assert min(y) == pytest.approx(val.min()) and max(y) == pytest.approx(val.min() + se)
        # The smallest subtree within the band was kept.
        assert pruned.get_n_leaves() == leaves[val <= val.min() + se].min()
    else:
        assert bands == []
        assert val[leaves == pruned.get_n_leaves()][0] == pytest.approx(val.min())
    saved_pixels(ax.figure, tmp_path / "path.png")


def test_bad_arguments_name_the_argument():
    """They failed inside matplotlib or Python's formatting ('Format specifier missing
    precision', 'x and y must have same first dimension', KeyError 'depth')."""
    tree = hand_tree(np.eye(2))
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="precision must be a non-negative int"):
            plot_tree(tree, precision=bad)
    with pytest.raises(ValueError, match=r"rows\[1\] has no 'depth' key"):
        plot_by_depth([{"method": "SPOT", "depth": 1, "normalized_spo_loss": 0.1},
                       {"method": "SPOT", "normalized_spo_loss": 0.2}])
    x = np.linspace(0, 1, 5)
    W = np.tile([1.0, 0.0], (5, 1))
    with pytest.raises(ValueError, match=r"C_true must have shape \(5, 2\)"):
        plot_predicted_costs(None, x, np.ones((3, 2)), C_pred=np.ones((5, 2)), W_pred=W)
    with pytest.raises(ValueError, match="cost_names must have 2 entries"):
        plot_predicted_costs(None, x, C_pred=np.ones((5, 2)), W_pred=W, cost_names=["a"])
    with pytest.raises(ValueError, match=r"C_pred and W_pred must have shape \(5, d\)"):
        plot_predicted_costs(None, x, C_pred=np.ones(5), W_pred=np.ones(5))
    plt.close("all")


def test_one_feature_plots_name_a_model_of_several_features():
    # They failed with scikit-learn's "X has 1 features, but SPOTree is expecting 2".
    rng = np.random.default_rng(0)
    model = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(rng.random((30, 2)),
                                                                 rng.random((30, 2)))
    grid = np.linspace(0, 1, 11)
    with pytest.raises(ValueError, match=r"plot_predicted_costs draws a model of one feature "
                                         r".* this SPOTree was fitted on 2 features"):
        plot_predicted_costs(model, grid)
    with pytest.raises(ValueError, match=r"decision_boundaries reads a model of one feature "
                                         r".* this SPOTree was fitted on 2 features"):
        decision_boundaries(model, grid)
    plt.close("all")


def test_one_feature_plots_of_a_model_fitted_on_a_dataframe_do_not_warn():
    # The grid went in as a bare array: a model fitted on a one-column
    # DataFrame warned "X does not have valid feature names, but SPOTree was
    # fitted with feature names" three times per plot, for the helper's own call.
    import warnings

    import pandas as pd

    rng = np.random.default_rng(0)
    x = rng.random(60)
    C = np.column_stack([x, np.full(60, 0.5)]) + rng.normal(scale=0.05, size=(60, 2))
    model = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(pd.DataFrame({"x": x}), C)
    grid = np.linspace(0, 1, 101)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        boundaries = decision_boundaries(model, grid)
        ax = plot_predicted_costs(model, grid)
    # The boundary is where the stored split sends the grid to the other leaf.
    threshold = model.tree_.threshold[0]
    assert boundaries == [pytest.approx(0.5 * (grid[grid <= threshold].max()
                                               + grid[grid > threshold].min()))]
    assert any(t.get_text().startswith("SPOTree boundary")
               for t in ax.get_legend().get_texts())
    plt.close("all")


def test_plot_tree_of_a_boosting_tree_shows_leaf_steps_not_fake_decisions():
    # A SPOBoost tree's decisions and losses are unused zeros; its leaves hold steps.
    from spotree.datasets import make_shortest_path
    X, C = make_shortest_path(80, grid=(3, 3), random_state=0, noise=0.5)
    lr = 0.1
    model = SPOBoost(ShortestPath((3, 3)), init="mean", n_estimators=1, max_depth=2,
                     learning_rate=lr, n_iter_no_change=None, random_state=0).fit(X, C)
    tree = model.estimators_[0]
    change = (model.predict(X) - model.init_intercept_) / lr
    leaves = tree.apply(X)
    ax = plot_tree(tree)
    labels = texts(ax)
    assert not any("decision" in s or "option" in s or "SPO loss" in s for s in labels)
    steps = [lab for lab in labels if "cost step" in lab]
    assert len(steps) == tree.get_n_leaves()
    for lab in steps:
        nums = np.array([float(v) for v in re.search(r"\[(.*)\]", lab.replace("\n", " "))
                         .group(1).split(", ")])
        assert any(np.allclose(nums, change[leaves == k][0], rtol=1e-3)
                   for k in np.unique(leaves)), lab
    plt.close(ax.figure)


def test_a_bare_tree_s_zero_decision_reads_w_0_as_in_export_text():
    # Without a problem, export_graphviz and plot_tree wrote a decision of zeros (a
    # knapsack's "take nothing") as "w = {}"; export_text's rule says "w = 0".
    from spotree.tree import describe_decision
    V = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.5]])
    tree = hand_tree(V)
    dot = export_graphviz(tree)
    labels = dict(re.findall(r"^(\d+) \[label=\"([^\"]*)\"", dot, flags=re.M))
    # Leaves 2, 3, 4 hold V[1], V[0], V[2].
    assert labels["3"].startswith("decision: w = 0\\n")
    assert labels["2"].startswith("decision: w = {0: 1}")
    assert labels["4"].startswith("decision: w = {1: 2.5}")
    assert describe_decision(None, V[0]) == "w = 0"
    ax = plot_tree(tree)
    assert any(t.startswith("w = 0\n") for t in texts(ax))
    assert not any("{}" in t for t in texts(ax))
    plt.close(ax.figure)


def test_export_graphviz_writes_to_an_open_file_as_scikit_learns_does(tmp_path):
    # out_file=<open file> raised "expected str, bytes or os.PathLike object,
    # not TextIOWrapper"; scikit-learn's export_graphviz takes one.
    import io

    roads = FiniteDecisions(np.eye(2))
    model = Fitted(hand_tree(np.eye(2)), roads)
    with open(tmp_path / "t.dot", "w") as fh:
        dot = export_graphviz(model, out_file=fh)
        assert not fh.closed  # the caller's to close
    assert (tmp_path / "t.dot").read_text() == dot == export_graphviz(model)
    buffer = io.StringIO()
    export_graphviz(model, out_file=buffer)
    assert buffer.getvalue() == dot


def test_export_graphviz_to_a_path_that_fails_keeps_the_old_file(tmp_path):
    """out_file=path was opened with open(path, "w"), which empties the file first: a
    write that then failed (here a feature name that is not valid Unicode, as
    os.fsdecode makes of a non-UTF-8 file name) left an empty tree.dot; it is now
    written as model.save writes (a temp file renamed into place)."""
    roads = FiniteDecisions(np.eye(2))
    model = Fitted(hand_tree(np.eye(2)), roads)
    path = tmp_path / "tree.dot"
    old = export_graphviz(model, out_file=path)
    with pytest.raises(UnicodeEncodeError):
        export_graphviz(model, feature_names=["caf\udce9", "y"], out_file=path)
    assert path.read_text(encoding="utf-8") == old
    assert os.listdir(tmp_path) == ["tree.dot"]


def test_one_feature_plots_refuse_a_grid_out_of_order():
    # A boundary is read between neighbours of x: a shuffled grid gave
    # [0.45, 0.15, 0.45] for a model whose decision changes at 0.28 (the
    # sorted grid: [0.25], the midpoint of 0.2 and 0.3), without a word.
    x = np.linspace(0, 1, 11)
    assert decision_boundaries(Threshold1D(0.28), x) == [pytest.approx(0.25)]
    assert decision_boundaries(Threshold1D(0.28), x[::-1]) == [pytest.approx(0.25)]
    shuffled = np.random.default_rng(0).permutation(x)
    for f in (decision_boundaries, plot_predicted_costs):
        with pytest.raises(ValueError, match=rf"{f.__name__}: x must be a grid of distinct "
                                             r"values in increasing order .* out of order or "
                                             r"equal\. Sort it: np\.unique\(x\)"):
            f(Threshold1D(0.28), shuffled)
        with pytest.raises(ValueError, match=rf"{f.__name__}: x must hold finite values of "
                                             r"the feature; got 1 NaN or infinite"):
            f(Threshold1D(0.28), np.r_[x, np.nan])
    plt.close("all")


def test_plot_decision_comparison_draws_the_weighted_distributions_of_the_rows():
    # Two roads: a model takes the road it predicts cheaper; its regret is
    # that road's cost minus the cheaper one's, computed here by hand.
    rng = np.random.default_rng(0)
    C = rng.uniform(1.0, 3.0, size=(30, 2))
    preds = {"a": C + rng.normal(scale=0.5, size=C.shape),
             "b": C + rng.normal(scale=1.0, size=C.shape), "c": rng.normal(size=C.shape)}
    w = rng.integers(0, 3, size=30).astype(float)
    rows = np.arange(30)
    regret = {k: C[rows, P.argmin(axis=1)] - C.min(axis=1) for k, P in preds.items()}
    keep = w > 0
    mean_z = np.sum(w * C.min(axis=1)) / w.sum()
    res = compare_decisions(preds, None, C, problem=FiniteDecisions(np.eye(2)), sample_weight=w)

    def check_steps(line, values):
        # The curve at each of its x values is the weighted share of the rows
        # (of positive weight) at or below it.
        x, y = line.get_xdata(), line.get_ydata()
        assert line.get_drawstyle() == "steps-post" and y[0] == 0 and y[-1] == pytest.approx(1)
        assert np.all(np.diff(x) >= 0) and np.all(np.diff(y) >= 0)
        assert_allclose(np.sort(values[keep] / mean_z), x[1:], rtol=1e-12, atol=1e-15)
        for v in np.unique(x):
            share = w[keep][values[keep] / mean_z <= v + 1e-12].sum() / w.sum()
            assert y[x == v].max() == pytest.approx(share, rel=1e-12)

    ax = plot_decision_comparison(res, kind="ecdf")
    assert [ln.get_label().split(":")[0] for ln in ax.lines] == ["a", "b", "c"]
    for line, k in zip(ax.lines, "abc"):
        check_steps(line, regret[k])
    assert ax.get_title() == f"{int(keep.sum())} rows, reference a"
    plt.close(ax.figure)

    ax = plot_decision_comparison(res)
    drawn = [ln for ln in ax.lines if len(ln.get_xdata()) > 2]  # not the line at 0
    assert [ln.get_label() for ln in drawn] == [
        f"{k}: {res.difference[i]:+.3g} ± {res.standard_error[i]:.2g}"
        for i, k in ((1, "b"), (2, "c"))]
    for line, k in zip(drawn, "bc"):
        check_steps(line, regret[k] - regret["a"])
    plt.close(ax.figure)

    _, ax = plt.subplots()
    assert plot_decision_comparison(res, ax, kind="ecdf", title="mine") is ax
    assert ax.get_title() == "mine"
    plt.close(ax.figure)


def test_plot_decision_comparison_refuses_what_it_cannot_draw():
    C = np.array([[1.0, 2.0], [3.0, 1.0]])
    one = compare_decisions({"a": C}, None, C, problem=FiniteDecisions(np.eye(2)))
    with pytest.raises(TypeError, match="needs the result of spotree.metrics.compare_decisions; "
                                        "got dict"):
        plot_decision_comparison(one.to_dict())
    with pytest.raises(ValueError, match="kind must be 'difference' or 'ecdf'; got 'box'"):
        plot_decision_comparison(one, kind="box")
    with pytest.raises(ValueError, match="needs a model besides the reference 'a'"):
        plot_decision_comparison(one)
    ax = plot_decision_comparison(one, kind="ecdf")
    assert len(ax.lines) == 1
    plt.close("all")


def test_without_matplotlib_every_drawing_function_names_the_extra(monkeypatch):
    """method_patches imported matplotlib.patches directly: without matplotlib it raised
    "No module named 'matplotlib.patches'; 'matplotlib' is not a package", where every
    plot_* function names the spotree[plot] extra."""
    import sys

    from spotree.plotting import method_patches

    for name in ("matplotlib", "matplotlib.patches", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)
    rows = [{"method": "SPOT", "depth": 1, "normalized_spo_loss": 0.1}]
    for call, who in ((lambda: method_patches(["SPOT"]), "method_patches"),
                      (lambda: plot_by_depth(rows), "plot_by_depth")):
        with pytest.raises(ImportError, match=rf"^{who} requires matplotlib, which is not "
                                              r"installed: pip install spotree\[plot\]$"):
            call()


def test_plot_predicted_costs_labels_a_boundary_near_zero_by_its_value():
    # A feature in millionths: both boundaries read "x = 0.00" in the legend.
    x = np.linspace(0.0, 1e-6, 11)
    W = np.where((x < 2.5e-7)[:, None], [1.0, 0.0], [0.0, 1.0])
    ax = plot_predicted_costs(None, x, C_pred=np.ones((11, 2)), W_pred=W,
                              true_boundary=3e-7, label="SPOT")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    # By hand: the decision changes between x[2] = 2e-7 and x[3] = 3e-7.
    assert "SPOT boundary x = 2.5e-07" in legend and "true boundary x = 3e-07" in legend
    plt.close(ax.figure)


@pytest.mark.parametrize("draw", [plot_tree, export_graphviz])
def test_a_problem_of_another_number_of_costs_than_the_tree_is_refused(draw):
    # problem= describes the leaves' decisions. One of another size was taken as
    # it came: a tree of the two roads (2 costs) drawn with the 4x4 grid (24 edge
    # costs) labelled its leaves with the paths "1->2" and "1", and one of the
    # 4x4 grid drawn with three options failed with numpy's "operands could not
    # be broadcast together", naming no argument.
    roads = hand_tree(np.eye(2))
    grid_tree = hand_tree(ShortestPath((4, 4)).vertices())
    for tree, problem, n_tree, n_problem in (
            (roads, ShortestPath((4, 4)), 2, 24),
            (grid_tree, FiniteDecisions(np.eye(3)), 24, 3),
            (Fitted(grid_tree, ShortestPath((4, 4))), ShortestPath((3, 3)), 24, 12)):
        with pytest.raises(ValueError, match=rf"problem has {n_problem} costs, but the "
                                             rf"tree's decisions have {n_tree}"):
            draw(tree, problem=problem)
    with pytest.raises(TypeError, match="problem must be a DecisionProblem"):
        draw(roads, problem="4x4 grid")
    plt.close("all")
    # The problem the tree was grown for, or one of its size, is taken.
    ax = plot_tree(roads, problem=FiniteDecisions(np.eye(2)))
    assert sum(t.startswith("option ") for t in texts(ax)) == 3  # the three leaves
    plt.close(ax.figure)
    assert "decision: 1->2->3->4->8->12->16" in export_graphviz(grid_tree,
                                                                problem=ShortestPath((4, 4)))


def test_max_depth_true_is_refused_as_export_text_refuses_it():
    # export_text refused max_depth=True; plot_tree and export_graphviz drew one level
    # (True == 1) without a word.
    from spotree import export_text

    rng = np.random.default_rng(0)
    model = SPOTree(FiniteDecisions(np.eye(2)), max_depth=2).fit(rng.random((30, 2)),
                                                                 rng.random((30, 2)))
    with pytest.raises(ValueError, match="max_depth must be a non-negative int"):
        export_text(model, max_depth=True)
    tree = hand_tree(np.eye(2))
    for draw in (plot_tree, export_graphviz):
        for bad in (True, -1, 1.0):
            with pytest.raises(ValueError, match="max_depth must be a non-negative int"):
                draw(tree, max_depth=bad)
        draw(tree, max_depth=np.int64(1))  # a numpy int is an int
    plt.close("all")


def test_one_feature_plots_name_a_grid_of_another_shape_and_a_model_without_decisions():
    # A 2-D grid was flattened and reported as "x[0] = 0 and x[1] = 0 are out of order";
    # an empty one failed in scikit-learn ("Found array with 0 sample(s)"), and a regressor
    # without predict_decision with Python's AttributeError.
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(0)
    x = rng.random(60)
    C = np.column_stack([5 * x + 1.9, (5 * x + 0.4) ** 2])
    model = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(x[:, None], C)
    g = np.linspace(0, 1, 11)
    for f in (decision_boundaries, plot_predicted_costs):
        name = f.__name__
        with pytest.raises(ValueError, match=rf"{name}: x must be a 1-D grid .* shape \(11, 2\)"):
            f(model, np.column_stack([g, g]))
        with pytest.raises(ValueError, match=rf"{name}: x is empty"):
            f(model, g[:0])
        with pytest.raises(TypeError, match=rf"{name} needs a model with predict_decision; "
                                            "got LinearRegression"):
            f(LinearRegression().fit(x[:, None], C), g)
    # A column of the grid is still a grid, as before; the boundary found on it is the
    # tree's split (a depth-1 tree changes its decision only there).
    (b,) = decision_boundaries(model, g[:, None])
    t = model.tree_.threshold[0]
    assert g[g <= t].max() < b < g[g > t].min()
    plt.close("all")


def test_plot_tree_refuses_a_fontsize_that_is_not_a_positive_number():
    # "large" failed with "can't multiply sequence by non-int of type 'float'", NaN with
    # "cannot convert float NaN to integer"; 0 and -1 drew without a word.
    tree = hand_tree(np.eye(2))
    for bad in ("large", float("nan"), 0, -1, True, float("inf")):
        with pytest.raises(ValueError, match="fontsize must be a positive number or None"):
            plot_tree(tree, fontsize=bad)
    ax = plot_tree(tree, fontsize=7.5)
    assert {t.get_fontsize() for t in ax.texts if "loss" in t.get_text()} == {7.5}
    plt.close("all")


def test_plot_by_depth_names_the_row_whose_value_is_not_a_number():
    # float() said "could not convert string to float: 'n/a'", naming no row or key.
    rows = [{"method": "SPOT", "depth": 1, "normalized_spo_loss": 0.1},
            {"method": "CART", "depth": 1, "normalized_spo_loss": "n/a"}]
    with pytest.raises(ValueError, match=r"rows\[1\]\['normalized_spo_loss'\] must be a "
                                         r"number; got 'n/a'"):
        plot_by_depth(rows)
    # Numbers written as text, as csv.DictReader reads them, are numbers.
    ax = plot_by_depth([{"method": "SPOT", "depth": "1", "normalized_spo_loss": "0.25"}])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1"]
    plt.close("all")
