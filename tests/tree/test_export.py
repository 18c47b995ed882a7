"""export_text: parse the text back into a tree and check it routes and decides like the model."""

import re

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from spotree import SPOTree, export_text
from spotree.datasets import make_shortest_path
from spotree.problems import FiniteDecisions, ShortestPath

_LINE = re.compile(r"^((?:\|   )*)\|--- (.*)$")


def _parse(text):
    """Nested dicts from export_text output (splits, leaves, bracketed info)."""
    lines = text.rstrip("\n").split("\n")
    pos = [0]

    def info(s):
        m = re.search(r"\[(.*)\]\s*$", s)
        fields = {}
        if m:
            for part in m.group(1).split(", "):
                k, v = part.split("=")
                fields[k] = float(v)
            s = s[:m.start()].rstrip()
        return s, fields

    def node(depth):
        m = _LINE.match(lines[pos[0]])
        assert m, lines[pos[0]]
        assert len(m.group(1)) // 4 == depth
        body, fields = info(m.group(2))
        pos[0] += 1
        if body.startswith("decision: "):
            return {"leaf": body[len("decision: "):], **fields}
        cat = re.match(r"^(.+) in \{(.*)\}$", body)
        if cat:
            name, test = cat.group(1), ("in", {_number_or_label(c)
                                               for c in cat.group(2).split(", ")})
        else:
            num = re.match(r"^(.+) <= (\S+)$", body)
            assert num, body
            name, test = num.group(1), ("<=", float(num.group(2)))
        left = node(depth + 1)
        m2 = _LINE.match(lines[pos[0]])
        assert len(m2.group(1)) // 4 == depth
        other = m2.group(2)
        if test[0] == "in":
            assert other.startswith(f"{name} not in {{")
        else:
            assert re.match(rf"^{re.escape(name)} >\s+\S+$", other), other
        pos[0] += 1
        right = node(depth + 1)
        return {"name": name, "test": test, "left": left, "right": right, **fields}

    root = node(0)
    assert pos[0] == len(lines)  # nothing left over
    return root


def _number_or_label(text):
    try:
        return float(text)
    except ValueError:
        return text


def _route(root, x, names):
    u = root
    while "leaf" not in u:
        v = x[names.index(u["name"])]
        kind, arg = u["test"]
        u = u["left"] if (v in arg if kind == "in" else v <= arg) else u["right"]
    return u


def _path_string(grid, w):
    """The node sequence of a grid path, numbered row by row from the south-west."""
    rows, cols = grid
    edges = [(r * cols + c + 1, r * cols + c + 2) for r in range(rows) for c in range(cols - 1)]
    edges += [(r * cols + c + 1, r * cols + c + 1 + cols) for r in range(rows - 1)
              for c in range(cols)]
    nxt = {edges[k][0]: edges[k][1] for k in np.flatnonzero(w > 0.5)}
    seq = [1]
    while seq[-1] in nxt:
        seq.append(nxt[seq[-1]])
    assert seq[-1] == rows * cols
    return "->".join(map(str, seq))


def _check(model, X, text, names, describe):
    root = _parse(text)
    t = model.tree_
    leaves = model.apply(X)
    dec = model.predict_decision(X)
    for i, x in enumerate(np.asarray(X, dtype=float)):
        leaf = _route(root, x, names)
        assert leaf["leaf"] == describe(dec[i])
        u = leaves[i]
        if "samples" in leaf:
            assert leaf["samples"] == t.n_node_samples[u]
        else:
            assert leaf["weight"] == pytest.approx(t.weighted_n_node_samples[u], abs=1e-3)
        if "spo_loss" in leaf:
            assert leaf["spo_loss"] == pytest.approx(t.loss[u], abs=1e-3)
    n_internal = int((t.children_left != -1).sum())
    assert len(text.rstrip("\n").split("\n")) == 2 * n_internal + t.n_leaves


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("grid", [(3, 3), (2, 4)])
def test_shortest_path_leaves_show_their_paths(seed, grid):
    problem = ShortestPath(grid)
    X, C = make_shortest_path(120, n_features=4, grid=grid, noise=0.5, random_state=seed)
    model = SPOTree(problem, max_depth=3).fit(X, C)
    text = export_text(model, decimals=12)
    _check(model, X, text, [f"x{j}" for j in range(4)], lambda w: _path_string(grid, w))
    assert "->" in text


@pytest.mark.parametrize("sense", ["min", "max"])
def test_finite_decisions_leaves_show_the_option_index(sense):
    rng = np.random.default_rng(0)
    V = rng.uniform(-1, 1, size=(5, 3))
    X = rng.uniform(size=(80, 3))
    X[:, 2] = rng.integers(0, 4, size=80)
    C = rng.uniform(size=(80, 3)) + X[:, :1] * np.array([1.0, -1.0, 0.0])
    C[X[:, 2] == 1] *= -1
    w = rng.uniform(0.5, 2.0, size=80)
    model = SPOTree(FiniteDecisions(V, sense=sense), max_depth=3,
                    categorical_features=[2]).fit(X, C, w)

    def option(d):
        return f"option {int(np.flatnonzero((V == d).all(axis=1))[0])}"

    names = ["a", "b", "code"]
    text = export_text(model, feature_names=names, decimals=12)
    _check(model, X, text, names, option)
    assert "weight=" in text  # non-unit weights are shown as weights
    assert model.tree_.is_categorical.any()  # the data make the code feature split
    assert " in {" in text and " not in {" in text


def test_feature_names_from_a_dataframe_and_options():
    pd = pytest.importorskip("pandas")
    X, C = make_shortest_path(80, n_features=3, grid=(3, 3), noise=0.5, random_state=1)
    df = pd.DataFrame(X, columns=["speed", "hour", "rain"])
    model = SPOTree(ShortestPath((3, 3)), max_depth=2).fit(df, C)
    text = export_text(model, decimals=12)
    _check(model, df, text, ["speed", "hour", "rain"], lambda w: _path_string((3, 3), w))
    assert "x0" not in text
    quiet = export_text(model, show_loss=False)
    assert "spo_loss" not in quiet
    assert len(quiet.split("\n")) == len(text.split("\n"))
    short = export_text(model, decimals=1)
    thr = re.findall(r"<= (\S+)", short)
    assert thr and all(re.fullmatch(r"-?\d+\.\d", s) for s in thr)
    with pytest.raises(ValueError, match="feature_names"):
        export_text(model, feature_names=["a", "b"])


def test_categorical_splits_on_a_dataframe_show_the_labels():
    # A DataFrame's category column is split by its labels, not their codes
    # (the codes 0, 1, ... are positions in category_values_, meaningless to
    # the reader; the text said "colour in {2}" for "colour in {red}").
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    labels = np.array(["blue", "green", "red", "white"])
    colour = rng.integers(0, 4, size=120)
    x = rng.uniform(size=120)
    C = rng.uniform(size=(120, 3)) + np.eye(3)[colour % 3] * 2.0 + x[:, None] * [1, -1, 0]
    df = pd.DataFrame({"x": x, "colour": pd.Categorical(labels[colour])})
    model = SPOTree(FiniteDecisions(np.eye(3)), max_depth=3,
                    categorical_splits="subset").fit(df, C)
    text = export_text(model, decimals=12)
    assert model.tree_.is_categorical.any()
    root = _parse(text)
    names = ["x", "colour"]
    dec = model.predict_decision(df)
    rows = df.to_numpy(dtype=object)
    for i in range(len(df)):
        leaf = _route(root, rows[i], names)
        assert leaf["leaf"] == f"option {int(np.argmax(dec[i]))}"
    shown = set(re.findall(r"colour (?:not )?in \{([^}]*)\}", text))
    assert shown and all(set(s.split(", ")) <= set(labels) for s in shown)
    from spotree.tree._export_graphviz import export_graphviz

    dot = set(re.findall(r"colour in \{([^}]*)\}", export_graphviz(model)))
    assert dot and dot <= shown


def test_large_category_codes_are_printed_in_full():
    # Codes such as postal codes or ids: 1234567 and 1234568 must not both
    # read "1.23457e+06".
    rng = np.random.default_rng(5)
    codes = np.array([1234567.0, 1234568.0, 20000001.0, 0.1])
    k = rng.integers(0, 4, size=100)
    X = np.column_stack([codes[k], rng.uniform(size=100)])
    C = rng.uniform(size=(100, 3)) + np.eye(3)[k % 3] * 2.0
    model = SPOTree(FiniteDecisions(np.eye(3)), max_depth=3, categorical_features=[0],
                    categorical_splits="subset").fit(X, C)
    assert model.tree_.is_categorical.any()
    text = export_text(model, decimals=12)
    _check(model, X, text, ["x0", "x1"], lambda w: f"option {int(np.argmax(w))}")


def test_thresholds_of_features_far_below_1_are_not_printed_as_0():
    # Features of order 1e-8 (concentrations, rates per second): every split
    # printed "x0 <= 0.000" and "x0 > 0.000", so the text sent every row right.
    from spotree.tree import export_graphviz

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 2)) * [1e-8, 1.0]
    k = (X[:, 0] > 5e-9).astype(int) + (X[:, 1] > 0.5)
    C = rng.uniform(size=(200, 3)) + np.eye(3)[k] * 2.0
    model = SPOTree(FiniteDecisions(np.eye(3)), max_depth=3, min_samples_leaf=10).fit(X, C)
    text = export_text(model)
    assert "<= 0.000" not in text and "x1 <= 0." in text  # x1's thresholds keep 3 decimals
    # Routing each row by the printed thresholds (parsed back) reaches its leaf.
    _check(model, X, text, ["x0", "x1"], lambda w: f"option {int(np.argmax(w))}")
    t = model.tree_
    on_x0 = t.threshold[(t.feature == 0) & (t.children_left >= 0)]
    assert on_x0.size and all(f"x0 <= {v:.4g}" in export_graphviz(model) for v in on_x0)


def test_small_weights_are_not_printed_as_0():
    # Small weights (normalized to sum to 1 over 10,000 rows, say): every node read
    # "weight=0.000" in export_text and "weight = 0.000" in export_graphviz
    # (plot_tree already printed 4 significant digits).
    from spotree.tree import export_graphviz

    rng = np.random.default_rng(1)
    X = rng.uniform(size=(400, 1))
    C = rng.uniform(size=(400, 2)) + np.eye(2)[(X[:, 0] > 0.5).astype(int)]
    w = rng.uniform(0.5, 1.5, 400)
    w /= w.sum() * 1e4  # a total of 1e-4: every node printed 0.000
    model = SPOTree(FiniteDecisions(np.eye(2)), max_depth=2, min_samples_leaf=50).fit(
        X, C, sample_weight=w)
    t = model.tree_
    shown = [float(v) for v in re.findall(r"weight=(\S+?)[,\]]", export_text(model))]
    order = _preorder(t)
    assert len(shown) == len(order)
    assert shown == pytest.approx(t.weighted_n_node_samples[order], rel=1e-3)
    dot = [float(v) for v in re.findall(r"weight = (\S+?)\\n", export_graphviz(model))]
    assert sorted(dot) == pytest.approx(sorted(t.weighted_n_node_samples), rel=1e-3)


def _preorder(t):
    """Node ids in the order export_text prints them (a node, then its left subtree)."""
    out, stack = [], [0]
    while stack:
        u = stack.pop()
        out.append(u)
        if t.children_left[u] >= 0:
            stack += [t.children_right[u], t.children_left[u]]
    return out


def test_single_leaf_and_unfitted():
    X = np.zeros((6, 2))
    C = np.arange(12.0).reshape(6, 2)
    model = SPOTree(FiniteDecisions(np.eye(2))).fit(X, C)
    text = export_text(model)
    assert text.strip().split("\n") == [text.strip()]
    assert "decision: option 0" in text
    with pytest.raises(NotFittedError):
        export_text(SPOTree())


def test_max_depth_cuts_subtrees_into_their_node_s_decision():
    # export_text had no max_depth, which export_graphviz and plot_tree have.
    # By hand: the right child (rows x0 = 2..7) sums its costs to (22, 14), so
    # it decides option 1, at a loss of 14 - 6 = 8 over its rows' optima.
    X = np.arange(8.0).reshape(-1, 1)
    C = np.array([[1, 5], [1, 5], [5, 1], [5, 1], [1, 5], [1, 5], [5, 1], [5, 1]], float)
    model = SPOTree(FiniteDecisions(np.eye(2)), max_depth=2).fit(X, C)
    assert export_text(model, decimals=1, max_depth=1).split("\n") == [
        "|--- x0 <= 1.5  [samples=8, spo_loss=16.0]",
        "|   |--- decision: option 0  [samples=2, spo_loss=0.0]",
        "|--- x0 > 1.5",
        "|   |--- decision: option 1 (subtree cut)  [samples=6, spo_loss=8.0]",
        ""]
    assert export_text(model, decimals=1, max_depth=0) == (
        "|--- decision: option 0 (subtree cut)  [samples=8, spo_loss=16.0]\n")
    assert export_text(model, max_depth=2) == export_text(model)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="max_depth must be a non-negative int or None"):
            export_text(model, max_depth=bad)

def test_bad_arguments_get_clear_errors():
    # A fitted forest was called "not fitted"; a negative or fractional
    # decimals gave Python's format-specifier errors; a string of feature
    # names was split into its characters.
    from spotree import SPOForest
    from spotree.tree._export_graphviz import export_graphviz

    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(30, 2)), rng.normal(size=(30, 3))
    forest = SPOForest(FiniteDecisions(np.eye(3)), n_estimators=2, random_state=0).fit(X, C)
    with pytest.raises(ValueError, match=r"export_text renders one tree, and SPOForest holds "
                                         r"2: pass one of them, for example "
                                         r"model\.estimators_\[0\]"):
        export_text(forest)
    assert export_text(forest.estimators_[0]).startswith("|--- ")
    tree = SPOTree(FiniteDecisions(np.eye(3)), max_depth=2).fit(X, C)
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ValueError, match=f"decimals must be a non-negative int; got "
                                             f"{re.escape(repr(bad))}"):
            export_text(tree, decimals=bad)
        with pytest.raises(ValueError, match=f"precision must be a non-negative int; got "
                                             f"{re.escape(repr(bad))}"):
            export_graphviz(tree, precision=bad)
    assert " <= " in export_text(tree, decimals=np.int64(0))
    with pytest.raises(ValueError, match="feature_names must be a list of names, one per "
                                         "feature; got the string 'ab'"):
        export_text(tree, feature_names="ab")
    with pytest.raises(ValueError, match="got the string 'ab'"):
        export_graphviz(tree, feature_names="ab")


def test_a_tree_deeper_than_the_recursion_limit_exports(tmp_path, deep_chain_model):
    import sys

    import spotree

    # Beyond the recursion limit (1,000 by default); not 10,000 levels, as the
    # text of a chain grows with the square of its depth (indentation).
    depth = sys.getrecursionlimit() + 500
    model = deep_chain_model(depth)
    path = tmp_path / "deep.json"
    model.save(path)
    loaded = spotree.load(path)
    assert loaded.get_depth() == depth
    text = export_text(loaded, show_loss=False)
    lines = text.rstrip("\n").split("\n")
    assert len(lines) == 3 * depth + 1  # per split: its two branch lines and a leaf
    # Split k at depth k: "x0 <= k.5", its leaf one level deeper, then "x0 > k.5".
    for k in (0, 1, depth // 2, depth - 1):
        i = 3 * k
        assert lines[i] == "|   " * k + f"|--- x0 <= {k + 0.5:.3f}  [samples="\
                                      f"{max(0, 3 - k)}]"
        assert lines[i + 1].startswith("|   " * (k + 1) + "|--- decision: ")
        assert lines[i + 2] == "|   " * k + f"|--- x0 > {k + 0.5:.3f}"
    assert lines[-1].startswith("|   " * depth + "|--- decision: ")
    # Graphviz and the plot walk it too.
    from spotree.tree._export_graphviz import export_graphviz

    dot = export_graphviz(loaded)
    assert dot.count(" -> ") == 2 * depth



def test_a_fitted_pipeline_is_told_to_pass_its_last_step():
    # export_text raised scikit-learn's "This Pipeline instance is not fitted
    # yet" on a pipeline fitted a line before (and export_graphviz and
    # plot_tree, "got Pipeline without a fitted tree_"); the tree is its last
    # step, which renders as the tree fitted alone on the transformed rows.
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from spotree.tree import export_graphviz

    X, C = make_shortest_path(100, grid=(3, 3), degree=2, noise=0.5, random_state=0)
    problem = ShortestPath(grid=(3, 3))
    pipe = make_pipeline(StandardScaler(), SPOTree(problem, max_depth=2)).fit(X, C)
    for export in (export_text, export_graphviz):
        with pytest.raises(ValueError, match=r"a Pipeline is not one: pass its last step, "
                                             r"model\[-1\]"):
            export(pipe)
    alone = SPOTree(problem, max_depth=2).fit(StandardScaler().fit_transform(X), C)
    assert export_text(pipe[-1]) == export_text(alone)


def test_a_scikit_learn_tree_is_refused_naming_the_model():
    # export_text(DecisionTreeRegressor().fit(X, C)) raised AttributeError:
    # "'DecisionTreeRegressor' object has no attribute 'problem_'".
    from sklearn.tree import DecisionTreeRegressor

    from spotree.tree import export_graphviz

    X, C = make_shortest_path(40, grid=(2, 2), degree=2, noise=0.5, random_state=0)
    cart = DecisionTreeRegressor(max_depth=2).fit(X, C)
    for export in (export_text, export_graphviz):
        with pytest.raises(ValueError, match="model must be a fitted spotree tree .*"
                                             "DecisionTreeRegressor"):
            export(cart)


def _boost_and_leaf_steps():
    """A small fitted SPOBoost, and per leaf of its first tree the change of predicted costs
    that tree makes (first staged prediction minus the start), over learning_rate."""
    import spotree
    from spotree import SPOBoost
    X, C = make_shortest_path(80, grid=(3, 3), random_state=0, noise=0.5)
    lr = 0.1
    model = SPOBoost(ShortestPath((3, 3)), init="mean", n_estimators=2, max_depth=2,
                     learning_rate=lr, n_iter_no_change=None, random_state=0).fit(X, C)
    tree = model.estimators_[0]
    # The start plus the first tree's shrunk step, by predict with the other tree dropped.
    change = (next(model.staged_predict(X)) - model.init_intercept_) / lr
    leaf_of = tree.apply(X)
    steps = {int(k): change[leaf_of == k][0] for k in np.unique(leaf_of)}
    return spotree, model, tree, steps


def _step_numbers(label):
    m = re.search(r"cost step before learning_rate = \[([^\]]*)\]", label)
    assert m, label
    return np.array([float(v) for v in m.group(1).split(", ")])


def test_a_boosting_tree_exports_its_leaf_steps_not_fake_decisions_or_losses(tmp_path):
    # Its decision and loss arrays are zeros: exports read "decision: option 0" and
    # "spo_loss=0.000" in every leaf. They show the step of the predicted costs.
    from spotree.tree import export_graphviz
    spotree, model, tree, steps = _boost_and_leaf_steps()
    text = export_text(tree)
    assert "decision" not in text and "spo_loss" not in text
    leaf_lines = [ln for ln in text.splitlines() if "cost step" in ln]
    assert len(leaf_lines) == len(steps) == tree.get_n_leaves()
    # The text lists the leaves left to right.
    t, order, stack = tree.tree_, [], [0]
    while stack:
        k = stack.pop()
        if t.children_left[k] < 0:
            order.append(k)
        else:
            stack += [t.children_right[k], t.children_left[k]]
    for ln, k in zip(leaf_lines, order):
        assert np.allclose(_step_numbers(ln), steps[k], rtol=1e-3, atol=1e-12), ln
    dot = export_graphviz(tree)
    assert "decision" not in dot and "SPO loss" not in dot
    for k, w in steps.items():
        label = re.search(rf'^{k} \[label="([^"]*)"', dot, re.M).group(1)
        assert np.allclose(_step_numbers(label), w, rtol=1e-3, atol=1e-12)
    # So does the bare Tree, which export_graphviz also takes.
    assert export_graphviz(tree.tree_) == dot
    # A saved and loaded model's trees say the same.
    path = tmp_path / "boost.json"
    model.save(path)
    loaded = spotree.load(path).estimators_[0]
    assert export_text(loaded) == text and export_graphviz(loaded.tree_) == dot


def test_a_boosting_tree_on_categories_names_its_indicator_columns(tmp_path):
    # With a categorical column SPOBoost's trees split on one indicator column per
    # category; exports named the columns by position ("x7" for f4 of 6 columns).
    import pandas as pd

    import spotree
    from spotree import SPOBoost
    X, C = make_shortest_path(150, grid=(3, 3), random_state=0, noise=0.5)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    color = np.random.default_rng(0).choice(["red", "green", "blue"], len(df))
    df.insert(1, "color", pd.Categorical(color))
    C = C + 3.0 * (color == "red")[:, None] * np.linspace(-1, 1, C.shape[1])
    model = SPOBoost(ShortestPath((3, 3)), init="mean", n_estimators=8, max_depth=2,
                     n_iter_no_change=None, random_state=0).fit(df, C)
    path = tmp_path / "boost.json"
    model.save(path)
    loaded = spotree.load(path)
    leaves = model.apply(df)
    seen_color = False
    for k, tree in enumerate(model.estimators_):
        text = export_text(tree, decimals=8)
        assert export_text(loaded.estimators_[k], decimals=8) == text
        t = tree.tree_
        if t.node_count == 1:
            continue
        # The root's line names a column of df (or one of its categories) and a threshold:
        # rows at or below it on that column are the rows routed left.
        m = re.match(r"^\|--- (\S+) <= (\S+)  \[", text)
        assert m, text
        name, thr = m.group(1), float(m.group(2))
        if "=" in name:
            col, label = name.split("=")
            values = (df[col].astype(str) == label).astype(float).to_numpy()
            seen_color = True
        else:
            values = df[name].to_numpy()
        left = set()
        stack = [t.children_left[0]]
        while stack:
            u = stack.pop()
            if t.children_left[u] < 0:
                left.add(u)
            else:
                stack += [t.children_left[u], t.children_right[u]]
        went_left = np.isin(leaves[:, k], list(left))
        assert np.array_equal(went_left, values <= thr + 5e-9), name
    assert seen_color


def test_a_boosting_leaf_s_round_off_zeros_print_as_0():
    # A leaf's step is gamma times the mean of subgradient entries that may cancel:
    # such entries printed as round-off ("8.876e-18").
    from spotree.tree import export_graphviz
    spotree, model, tree, steps = _boost_and_leaf_steps()
    t = tree.tree_
    leaf = next(k for k in range(t.node_count) if t.children_left[k] < 0)
    t.value[leaf, 0] = 1e-14 * np.abs(t.value[leaf]).max()  # round-off of a 0
    want = t.value[leaf].copy()
    want[0] = 0.0
    label = re.search(rf'^{leaf} \[label="([^"]*)"', export_graphviz(tree), re.M).group(1)
    got = _step_numbers(label)
    assert got[0] == 0.0
    assert np.allclose(got, want, rtol=1e-3)


@pytest.mark.parametrize("missing_cheap", [0, 1])
def test_the_branch_missing_values_follow_says_or_missing(missing_cheap):
    # Rows 0 and 1 prefer road 0, rows 2 and 3 road 1, and the two rows
    # missing x0 prefer road ``missing_cheap``: the only zero-loss split cuts
    # at 1.5 and sends them to the branch of their road.
    X = np.array([[0.0], [1.0], [2.0], [3.0], [np.nan], [np.nan]])
    road = np.array([0, 0, 1, 1, missing_cheap, missing_cheap])
    C = np.where(road[:, None] == 0, [1.0, 2.0], [2.0, 1.0])
    est = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(X, C)
    lines = export_text(est, show_loss=False).splitlines()
    left, right = "x0 <= 1.500", "x0 > 1.500"
    if missing_cheap == 1:
        left, right = left + "  [samples=6]", right + " or missing"
    else:
        left, right = left + " or missing  [samples=6]", right
    assert lines[0] == "|--- " + left
    assert lines[2] == "|--- " + right


def test_small_losses_are_not_printed_as_zero():
    """Costs of order 1e-6 (rates): every node's SPO loss printed as 0.000 in export_text,
    export_graphviz and plot_tree, as if each leaf decided perfectly; a non-zero loss
    that the decimals round to 0 now gets four significant digits, as thresholds do."""
    from spotree.tree._export_graphviz import export_graphviz

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 1))
    C = np.column_stack([1.0 + X[:, 0], 1.5 + rng.uniform(-0.6, 0.6, size=40)]) * 1e-6
    model = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(X, C)
    # By hand: the root decides the option of the lower mean cost for every row.
    k = int(np.argmin(C.mean(axis=0)))
    root = float(np.sum(C[:, k] - C.min(axis=1)))
    assert 0 < root < 5e-4
    assert model.tree_.loss[0] == pytest.approx(root, rel=1e-12)
    text = export_text(model)
    assert text.splitlines()[0].endswith(f"spo_loss={root:.4g}]"), text
    dot = export_graphviz(model)
    assert f"SPO loss = {root:.4g}" in dot, dot
    for loss in model.tree_.loss:
        shown = f"{loss:.4g}" if loss else "0.000"
        assert f"spo_loss={shown}" in text and f"SPO loss = {shown}" in dot
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from spotree.plotting import plot_tree

    ax = plot_tree(model)
    assert any(t.get_text().endswith(f"SPO loss = {root:.4g}") for t in ax.texts)
    plt.close(ax.figure)
