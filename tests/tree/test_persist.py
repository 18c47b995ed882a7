"""model.save / spotree.load (plain JSON, safe on untrusted files), pickle and joblib."""

import io
import json
import os
import pickle
import re

import joblib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spotree
from spotree import SPOTree, export_text
from spotree.datasets import make_shortest_path
from spotree.problems import CallableProblem, FiniteDecisions, LinearProgram, ShortestPath


def _sp_model(**kw):
    X, C = make_shortest_path(80, n_features=3, grid=(3, 3), noise=0.5, random_state=0)
    return SPOTree(ShortestPath((3, 3)), **kw).fit(X, C), X, C


def _models():
    """Fitted models covering every problem type, categorical splits, pruning, names."""
    out = {}
    out["shortest_path"] = _sp_model(max_depth=3)
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(60, 3))
    X[:, 0] = rng.integers(0, 4, size=60)
    V = rng.uniform(-1, 1, size=(5, 4))
    C = rng.uniform(size=(60, 4)) + X[:, :1] * np.array([1.0, -1.0, 0.5, 0.0])
    w = rng.uniform(0.5, 2.0, size=60)
    out["finite_max_categorical"] = (
        SPOTree(FiniteDecisions(V, sense="max"), max_depth=3, categorical_features=[0],
                categorical_splits="subset").fit(X, C, w), X, C)
    lp = LinearProgram(A_ub=np.ones((1, 3)), b_ub=[1.0], bounds=(0, 1), sense="max")
    out["linear_program"] = (SPOTree(lp, max_depth=2, thresholds=9).fit(X, C[:, :3]),
                             X, C[:, :3])
    out["mse_mixed"] = (SPOTree(FiniteDecisions(V), spo_weight=0.5, max_depth=3)
                        .fit(X, C), X, C)
    m, Xs, Cs = _sp_model(min_samples_leaf=5)
    out["pruned"] = (m.prune(Xs[:40], Cs[:40]), Xs, Cs)
    # Missing values: a split on missingness alone (threshold +inf) and a
    # feature missing at random.
    Xm = rng.uniform(size=(200, 2))
    miss = rng.uniform(size=200) < 0.4
    Xm[miss, 0] = np.nan
    Xm[rng.uniform(size=200) < 0.2, 1] = np.nan
    Cm = np.column_stack([np.where(miss, 1.0, 3.0) + rng.normal(scale=0.1, size=200),
                          1.5 + np.nan_to_num(Xm[:, 1], nan=0.9)])
    out["missing"] = (SPOTree(FiniteDecisions(np.eye(2)), max_depth=3).fit(Xm, Cm), Xm, Cm)
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(Xs, columns=["speed", "hour", "rain"])
    out["dataframe"] = (SPOTree(ShortestPath((3, 3)), max_depth=2).fit(df, Cs), df, Cs)
    return out


MODELS = _models()


def _same_model(a, b, X, C):
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.predict_decision(X), b.predict_decision(X))
    np.testing.assert_array_equal(a.apply(X), b.apply(X))
    assert export_text(a) == export_text(b)
    assert a.score(X, C) == pytest.approx(b.score(X, C))
    assert a.get_params(deep=False).keys() == b.get_params(deep=False).keys()
    for k, v in a.get_params(deep=False).items():
        if k not in ("problem", "random_state"):
            assert b.get_params(deep=False)[k] == v
    np.testing.assert_array_equal(a.feature_importances_, b.feature_importances_)
    assert a.n_features_in_ == b.n_features_in_
    names = getattr(a, "feature_names_in_", None)
    if names is not None:
        np.testing.assert_array_equal(names, b.feature_names_in_)
    else:
        assert not hasattr(b, "feature_names_in_")
    ta, tb = a.tree_, b.tree_
    for name in ("children_left", "children_right", "feature", "threshold", "value",
                 "decision", "loss", "impurity", "n_node_samples",
                 "weighted_n_node_samples"):
        np.testing.assert_array_equal(getattr(ta, name), getattr(tb, name), err_msg=name)
    assert all(np.array_equal(x, y) for x, y in zip(ta.categories, tb.categories))
    np.testing.assert_array_equal(ta.missing_go_to_left, tb.missing_go_to_left)
    np.testing.assert_array_equal(ta.missing_features, tb.missing_features)
    assert type(a.problem_) is type(b.problem_)
    assert a.problem_.to_dict() == b.problem_.to_dict()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_save_load_round_trip(name, tmp_path):
    model, X, C = MODELS[name]
    path = tmp_path / "model.json"
    model.save(path)
    loaded = spotree.load(path)
    assert isinstance(loaded, SPOTree)
    _same_model(model, loaded, X, C)
    if name == "pruned":
        assert loaded.pruning_alpha_ == model.pruning_alpha_
    # Plain JSON with the documented header.
    doc = json.loads(path.read_text())
    assert doc["format"] == "spotree-model" and doc["version"] == 1
    assert doc["estimator"] == "SPOTree" and len(doc["trees"]) == 1


def test_a_model_saved_after_set_params_loads_as_fitted(tmp_path):
    # save() wrote the parameters as set since fit, and load() refused its own
    # files as malformed: a forest of 3 trees set to n_estimators=5 (as
    # before a warm start) or to criterion='auto' (no criterion_), and a
    # linear model set to fit_intercept=False (its intercept_ not zero).
    from spotree import SPOForest, SPOPlusLinear

    X, C = make_shortest_path(60, n_features=3, grid=(2, 2), noise=0.5, random_state=0)
    problem = ShortestPath((2, 2))
    forest = SPOForest(problem, n_estimators=3, criterion="spo", random_state=0).fit(X, C)
    linear = SPOPlusLinear(problem, max_iter=2, random_state=0).fit(X, C)
    for model, later in ((forest, {"n_estimators": 5, "criterion": "auto"}),
                         (linear, {"fit_intercept": False})):
        fitted = model.get_params()
        model.set_params(**later)
        model.save(tmp_path / "m.json")
        loaded = spotree.load(tmp_path / "m.json")
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
        assert all(loaded.get_params()[k] == fitted[k] for k in later)


def _refuse_literal(name):
    raise ValueError(f"the literal {name} is not JSON")


def test_model_files_are_strict_json_and_older_files_with_literals_load(tmp_path):
    # A pruned tree's NaN standard error and a missingness split's +inf
    # threshold were written as the literals NaN and Infinity, which JSON
    # lacks (JavaScript's JSON.parse, jq and json.loads(parse_constant=...)
    # refused the file). Now tagged objects; files with the literals (an older
    # version's) still load.
    FLOAT_TAG = "__float__"  # as documented in docs/user_guide/persistence.rst
    seen = set()
    for name in ("pruned", "missing"):
        model, X, C = MODELS[name]
        path = tmp_path / f"{name}.json"
        model.save(path)
        text = path.read_text()
        doc = json.loads(text, parse_constant=_refuse_literal)  # strict: no literal
        tags = re.findall(r'\{"%s": "([^"]*)"\}' % FLOAT_TAG, text)
        seen.update(tags)
        _same_model(model, spotree.load(path), X, C)
        # The older form: the same document with the literals.
        old = json.loads(text, object_hook=lambda d: float(d[FLOAT_TAG]) if FLOAT_TAG in d
                         else d)
        path.write_text(json.dumps(old))
        assert ("NaN" if name == "pruned" else "Infinity") in path.read_text()
        back = spotree.load(path)
        _same_model(model, back, X, C)
        assert doc["format"] == "spotree-model"
    assert seen == {"NaN", "Infinity"}
    np.testing.assert_equal(spotree.load(tmp_path / "pruned.json").pruning_path_
                            .standard_error, np.nan)
    # numpy floats (a float subclass) and tuples, as a problem's spec may hold them.
    from spotree._schema import strict_json

    assert json.dumps(strict_json({"a": (1, np.float64(np.inf)), "b": np.float64(np.nan)}),
                      allow_nan=False) == ('{"a": [1, {"__float__": "Infinity"}], '
                                           '"b": {"__float__": "NaN"}}')
    doc = json.loads((tmp_path / "missing.json").read_text())
    doc["trees"][0]["threshold"][0] = {FLOAT_TAG: "inf"}
    with pytest.raises(ValueError, match=r"stands for a non-finite number: 'NaN', 'Infinity' "
                                         r"or '-Infinity'; got 'inf'"):
        spotree.load(_write(tmp_path, doc))


def test_labels_given_by_hand_to_a_numeric_feature_are_refused_at_load(tmp_path):
    # category_values_ edited to give a numeric feature labels: the file loaded
    # and every predict failed ("Column 0 of X holds numbers but held
    # categories", or "X must be a pandas DataFrame"), naming no file.
    model, X, C = MODELS["shortest_path"]
    model.save(tmp_path / "good.json")
    doc = json.loads((tmp_path / "good.json").read_text())
    j = int(model.tree_.feature[0])
    labels = [None] * X.shape[1]
    labels[j] = ["low", "high"]
    doc["fitted"]["category_values_"] = labels
    assert doc["fitted"]["categories_seen_"] is None
    with pytest.raises(ValueError, match=rf"bad\.json is a malformed spotree model: "
                                         rf"fitted\.category_values_\[{j}\] lists labels, so "
                                         rf"feature {j} is a categorical column, but "
                                         r"fitted\.categories_seen_ is null"):
        spotree.load(_write(tmp_path, doc))
    del doc["fitted"]["categories_seen_"]  # (as in a file older than it)
    with pytest.raises(ValueError, match=rf"fitted\.category_values_\[{j}\] .* but trees\[0\] "
                                         rf"splits it at the threshold "
                                         rf"{re.escape(repr(float(model.tree_.threshold[0])))} "
                                         r"\(node 0\), as a numeric feature"):
        spotree.load(_write(tmp_path, doc))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_pickle_and_joblib_round_trip(name):
    model, X, C = MODELS[name]
    _same_model(model, pickle.loads(pickle.dumps(model)), X, C)
    buf = io.BytesIO()
    joblib.dump(model, buf)
    buf.seek(0)
    _same_model(model, joblib.load(buf), X, C)


def test_a_loaded_model_can_be_refitted_and_pruned(tmp_path):
    model, X, C = MODELS["shortest_path"]
    model.save(tmp_path / "m.json")
    loaded = spotree.load(tmp_path / "m.json")
    pruned = loaded.prune(X[:30], C[:30])
    assert pruned.get_n_leaves() <= loaded.get_n_leaves()
    refit = loaded.fit(X, C)
    np.testing.assert_array_equal(refit.predict(X), model.predict(X))


def test_a_loaded_mixed_criterion_tree_prunes_as_the_original(tmp_path):
    # Pruning a mixed-criterion tree needs its loss scales: they must survive the file.
    model, X, C = MODELS["mse_mixed"]
    model.save(tmp_path / "m.json")
    loaded = spotree.load(tmp_path / "m.json")
    assert loaded.loss_scales_ == pytest.approx(model.loss_scales_, rel=1e-15)
    for loss in ("criterion", "mse"):
        a = model.prune(X[::2], C[::2], loss=loss)
        b = loaded.prune(X[::2], C[::2], loss=loss)
        np.testing.assert_array_equal(a.pruning_path_.val_losses, b.pruning_path_.val_losses)
        assert a.get_n_leaves() == b.get_n_leaves()


@pytest.mark.parametrize("one_se_rule", [False, True])
def test_a_pruned_tree_keeps_its_pruning_path_and_a_bad_one_is_named(tmp_path, one_se_rule):
    model, X, C = MODELS["shortest_path"]
    pruned = model.prune(X[::2], C[::2], one_se_rule=one_se_rule)
    pruned.save(tmp_path / "m.json")
    back = spotree.load(tmp_path / "m.json").pruning_path_
    path = pruned.pruning_path_
    for key in ("ccp_alphas", "n_leaves", "val_losses"):
        np.testing.assert_array_equal(back[key], path[key])
        assert back[key].dtype == path[key].dtype
    np.testing.assert_equal(back.standard_error, path.standard_error)  # NaN without the rule
    doc = json.loads((tmp_path / "m.json").read_text())
    n = len(path.ccp_alphas)
    for change, where in (
            (lambda p: p.pop("val_losses"), r"fitted\.pruning_path_"),
            (lambda p: p.update(ccp_alphas=[-1.0] * n), r"fitted\.pruning_path_\.ccp_alphas"),
            (lambda p: p.update(n_leaves=[1] * n), r"fitted\.pruning_path_\.n_leaves"),
            (lambda p: p.update(val_losses=p["val_losses"][:-1]),
             r"fitted\.pruning_path_\.val_losses"),
            (lambda p: p.update(standard_error=-1.0), r"fitted\.pruning_path_\.standard_error")):
        bad = json.loads(json.dumps(doc))
        change(bad["fitted"]["pruning_path_"])
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=where):
            spotree.load(tmp_path / "bad.json")
    # A path that does not hold the tree kept loaded, and plot_pruning_path then
    # failed ("the tree's 3 leaves are not those of one subtree"), naming no file.
    k = int(np.flatnonzero(path.n_leaves == pruned.get_n_leaves())[0])
    more = [int(v) + 1 if i <= k else int(v) for i, v in enumerate(path.n_leaves)]
    for key, value, where in (
            ("n_leaves", more, rf"fitted\.pruning_path_\.n_leaves must list the "
                               rf"{pruned.get_n_leaves()} leaves of the tree kept"),
            ("ccp_alphas", [a + 1.0 if i == k else a for i, a in enumerate(path.ccp_alphas)],
             rf"fitted\.pruning_alpha_ is {pruned.pruning_alpha_!r} but "
             rf"fitted\.pruning_path_\.ccp_alphas\[{k}\], the alpha of the tree kept, is")):
        bad = json.loads(json.dumps(doc))
        bad["fitted"]["pruning_path_"][key] = value
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=where):
            spotree.load(tmp_path / "bad.json")
    # A model without one (not pruned, or saved before) loads without it.
    model.save(tmp_path / "plain.json")
    assert not hasattr(spotree.load(tmp_path / "plain.json"), "pruning_path_")


def test_saving_an_unfitted_model_fails_cleanly(tmp_path):
    with pytest.raises(Exception, match="not fitted|fit"):
        SPOTree(ShortestPath((2, 2))).save(tmp_path / "x.json")
    # Nothing half-written is left behind.
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------ untrusted files
def _doc(tmp_path):
    model, _, _ = MODELS["shortest_path"]
    model.save(tmp_path / "good.json")
    return json.loads((tmp_path / "good.json").read_text())


def _write(tmp_path, doc, name="bad.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_load_rejects_files_that_are_not_json(tmp_path):
    path = tmp_path / "model.pkl"
    model, _, _ = MODELS["shortest_path"]
    path.write_bytes(pickle.dumps(model))
    with pytest.raises(ValueError, match="not a spotree model file"):
        spotree.load(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not a spotree model file"):
        spotree.load(path)
    path.write_text("[1, 2, 3]")
    with pytest.raises(ValueError, match="not a spotree model file"):
        spotree.load(path)


def test_load_rejects_wrong_format_version_and_estimator(tmp_path):
    doc = _doc(tmp_path)
    with pytest.raises(ValueError, match="not a spotree model file"):
        spotree.load(_write(tmp_path, {**doc, "format": "sklearn-model"}))
    with pytest.raises(ValueError, match="not a spotree model file"):
        spotree.load(_write(tmp_path, {k: v for k, v in doc.items() if k != "format"}))
    for version in (99, True, "1", 1.0):
        with pytest.raises(ValueError, match="version"):
            spotree.load(_write(tmp_path, {**doc, "version": version}))
    for name in ("DecisionTreeRegressor", "os.system", "builtins.eval", None):
        with pytest.raises(ValueError, match="unknown estimator"):
            spotree.load(_write(tmp_path, {**doc, "estimator": name}))


def test_load_rejects_tampered_trees(tmp_path):
    doc = _doc(tmp_path)
    tree = doc["trees"][0]
    n = len(tree["children_left"])
    bad_trees = [
        {**tree, "children_left": [n + 3] + tree["children_left"][1:]},
        {**tree, "children_left": [0] + tree["children_left"][1:]},
        {**tree, "children_right": [-7] + tree["children_right"][1:]},
        {**tree, "feature": [99] + tree["feature"][1:]},
        {**tree, "value": tree["value"][:-1]},
        {**tree, "decision": [row + [0.0] for row in tree["decision"]]},
        {k: v for k, v in tree.items() if k != "threshold"},
    ]
    for bad in bad_trees:
        with pytest.raises(ValueError, match="malformed"):
            spotree.load(_write(tmp_path, {**doc, "trees": [bad]}))
    with pytest.raises(ValueError, match="one tree"):
        spotree.load(_write(tmp_path, {**doc, "trees": [tree, tree]}))
    # A tree for another number of features or costs than the file declares.
    with pytest.raises(ValueError, match="malformed"):
        spotree.load(_write(tmp_path, {**doc, "fitted": {**doc["fitted"],
                                                         "n_features_in_": 7}}))
    with pytest.raises(ValueError, match="malformed"):
        spotree.load(_write(tmp_path, {**doc, "problem": {"type": "shortest_path",
                                                          "grid": [2, 2]}}))


def test_load_rejects_bad_problem_and_params(tmp_path):
    doc = _doc(tmp_path)
    bad_problems = [{"type": "pickle", "data": "..."}, {"type": "finite"},
                    {"type": "shortest_path", "grid": [3, 3], "solver": "x"}, "shortest"]
    for spec in bad_problems:
        with pytest.raises(ValueError):
            spotree.load(_write(tmp_path, {**doc, "problem": spec}))
    with pytest.raises(ValueError, match="malformed"):
        spotree.load(_write(tmp_path, {**doc, "params": {**doc["params"], "evil": 1}}))
    with pytest.raises(ValueError, match="malformed"):
        spotree.load(_write(tmp_path, {k: v for k, v in doc.items() if k != "trees"}))


@pytest.mark.parametrize("field, value", [("feature_importances_", [1.0]),
                                          ("feature_names_in_", ["a"])])
def test_load_rejects_fitted_arrays_of_the_wrong_length(tmp_path, field, value):
    doc = _doc(tmp_path)
    doc["fitted"][field] = value
    with pytest.raises(ValueError, match="malformed"):
        spotree.load(_write(tmp_path, doc))


def _edit(doc, path, value=None, delete=False):
    """A deep copy of ``doc`` with the entry at ``path`` (a key/index list) replaced."""
    doc = json.loads(json.dumps(doc))
    node = doc
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


def _load_error(tmp_path, doc, **kw):
    with pytest.raises(ValueError) as info:
        spotree.load(_write(tmp_path, doc), **kw)
    return " ".join(str(info.value).split())


T0 = ["trees", 0]


@pytest.mark.parametrize("path, value, match", [
    # Indices that overflowed numpy's int64 and floats where ints belong.
    (T0 + ["children_left", 0], 10 ** 30,
     r"trees\[0\]\.children_left\[0\] must be an int in \[-1, 14\]; got an int with 31 digits"),
    (T0 + ["feature", 0], 1e20, r"trees\[0\]\.feature\[0\] must be an int in \[-2, 2\]; "
                                r"got 1e\+20"),
    (T0 + ["feature", 0], 1.0, r"trees\[0\]\.feature\[0\] must be an int"),
    # Non-finite and negative values.
    (T0 + ["threshold", 0], float("nan"), r"trees\[0\]\.threshold\[0\] must be a finite "
                                          r"number or inf; got nan"),
    (T0 + ["threshold", 0], -float("inf"), r"trees\[0\]\.threshold\[0\] must be a finite "
                                           r"number or inf; got -inf"),
    (T0 + ["threshold", 5], float("inf"), r"trees\[0\]\.threshold\[5\] must be -2 at a leaf"),
    (T0 + ["missing_go_to_left", 0], 2, r"trees\[0\]\.missing_go_to_left\[0\] must be an int "
                                        r"in \[0, 1\]; got 2"),
    (T0 + ["missing_go_to_left", 5], 1, r"trees\[0\]\.missing_go_to_left\[5\] must be 0 at a "
                                        r"leaf"),
    (T0 + ["missing_features"], [True], r"trees\[0\]\.missing_features must be a list of 3 "
                                        r"bools"),
    (T0 + ["categories", 0], [float("nan"), 1], r"trees\[0\]\.categories\[0\]\[0\] must be a "
                                                r"finite number; got nan"),
    (T0 + ["value", 2, 1], float("inf"), r"trees\[0\]\.value\[2\]\[1\] must be a finite "
                                         r"number; got inf"),
    (T0 + ["decision", 2, 1], -float("inf"), r"trees\[0\]\.decision\[2\]\[1\] must be a "
                                             r"finite number; got -inf"),
    (T0 + ["loss", 1], float("inf"), r"trees\[0\]\.loss\[1\] must be a finite number >= 0"),
    (T0 + ["impurity", 1], -1.0, r"trees\[0\]\.impurity\[1\] must be a finite number >= 0"),
    (T0 + ["weighted_n_node_samples", 1], -3.0,
     r"trees\[0\]\.weighted_n_node_samples\[1\] must be a finite number >= 0"),
    (T0 + ["n_node_samples", 1], -3, r"trees\[0\]\.n_node_samples\[1\] must be an int >= 0"),
    (T0 + ["value", 3], [0.5] * 11, r"trees\[0\]\.value\[3\] must have 12 entries; got 11"),
    (T0 + ["value", 3], "row", r"trees\[0\]\.value\[3\] must be a list of 12 finite numbers"),
    # Leaf and split conventions.
    (T0 + ["categories", 0], [0.5, 1.0], r"trees\[0\]\.threshold\[0\] must be -2 at a "
                                         r"categorical split"),
    (T0 + ["categories", 5], [1.0], r"trees\[0\]\.categories\[5\] must be empty at a leaf"),
    (T0 + ["threshold", 5], 0.5, r"trees\[0\]\.threshold\[5\] must be -2 at a leaf"),
    (T0 + ["feature", 5], 1, r"trees\[0\]\.feature\[5\] must be -2 at a leaf"),
    (T0 + ["feature", 0], -2, r"trees\[0\]\.feature\[0\] must be a feature index in "
                              r"\[0, 2\] at a split node; got -2"),
    # Fitted attributes.
    (["fitted", "n_features_in_"], float("inf"), r"fitted\.n_features_in_ must be an int >= 1; "
                                                 r"got inf"),
    (["fitted", "n_features_in_"], float("nan"), r"fitted\.n_features_in_ must be an int >= 1; "
                                                 r"got nan"),
    (["fitted", "n_features_in_"], "abc", r"fitted\.n_features_in_ must be an int >= 1; "
                                          r"got 'abc'"),
    (["fitted", "n_features_in_"], 7, r"fitted\.feature_importances_ must have 7 entries"),
    (["fitted", "loss_scales_"], 5, r"fitted\.loss_scales_ must be a list of 2 positive "
                                    r"numbers"),
    (["fitted", "loss_scales_"], [1.0, 0.0], r"fitted\.loss_scales_\[1\] must be a positive "
                                             r"number"),
    (["fitted", "feature_importances_"], [1.0], r"fitted\.feature_importances_ must have 3 "
                                                r"entries"),
    (["fitted", "feature_importances_"], [1.0, -0.5, 0.5],
     r"fitted\.feature_importances_\[1\] must be a finite number >= 0"),
    (["fitted", "feature_names_in_"], ["a", "b", 3], r"fitted\.feature_names_in_\[2\] must be "
                                                     r"a str"),
    # Loaded, then every predict failed in scikit-learn ("Feature names unseen at fit
    # time"), naming no file: fit refuses such a DataFrame.
    (["fitted", "feature_names_in_"], ["a", "b", "a"], r"fitted\.feature_names_in_\[2\] "
                                                       r"repeats the name 'a'"),
    (["fitted", "pruning_alpha_"], -1.0, r"fitted\.pruning_alpha_ must be a finite number"),
    (["fitted", "oob_score_"], 0.1, r"fitted\.oob_score_ is not a known key"),
    # Parameters go through the estimator's own validation, at load.
    (["params", "spo_weight"], "abc", r"params\.spo_weight is invalid: The 'spo_weight' "
                                      r"parameter of SPOTree must be a float in the range "
                                      r"\[0\.0, 1\.0\]\. Got 'abc' instead"),
    (["params", "max_depth"], 0, r"params\.max_depth is invalid: The 'max_depth' parameter"),
    (["params", "criterion"], "gini", r"params\.criterion is invalid"),
    (["params", "evil"], 1, r"params\.evil is not a known key"),
    (["params", "categorical_features"], [5], r"params\.categorical_features\[0\] must be an "
                                              r"int in \[0, 2\]; got 5"),
    (["params", "categorical_features"], [0, float("nan")],
     r"params\.categorical_features\[1\] must be an int in \[0, 2\]; got nan"),
    (["params", "categorical_features"], ["speed"], r"params\.categorical_features\[0\] names "
                                                    r"'speed', which is not in "
                                                    r"fitted\.feature_names_in_"),
    (["params", "categorical_features"], [True, False],
     r"params\.categorical_features as a boolean mask must have n_features_in_=3 entries"),
    (["fitted", "feature_importances_"], [0.5, 0.5, 0.5],
     r"fitted\.feature_importances_ must sum to 1 \(or all be 0\); they sum to 1\.5"),
    (["trees"], [], r"trees do not fit the estimator: a SPOTree file holds one tree; got 0"),
    (["trees"], {}, r"trees must be a list of trees; got an object"),
    (["problem_info", "n_costs"], 9, r"problem_info\.n_costs is 9 but the problem spec has "
                                     r"n_costs=12"),
    (T0 + ["n_outputs"], 9, r"trees\[0\]\.value\[0\] must have 9 entries"),
    (["problem_info", "sense"], "max", r"problem_info\.sense is 'max' but the problem spec "
                                       r"has sense='min'"),
])
def test_hand_edits_give_a_value_error_naming_the_key(tmp_path, path, value, match):
    doc = _doc(tmp_path)
    msg = _load_error(tmp_path, _edit(doc, path, value))
    assert re.search(match, msg), msg
    assert msg.startswith(str(tmp_path / "bad.json") + " is a malformed spotree model: ")


@pytest.mark.parametrize("path, match", [
    (["fitted", "n_features_in_"], r"fitted\.n_features_in_ is missing"),
    (T0 + ["threshold"], r"trees\[0\]\.threshold is missing"),
    (["params"], r"params is missing"),
    (["problem"], r"problem is missing"),
])
def test_deleted_keys_are_named(tmp_path, path, match):
    msg = _load_error(tmp_path, _edit(_doc(tmp_path), path, delete=True))
    assert re.search(match, msg), msg


def _labelled_categorical_doc(tmp_path):
    """A tree split on a labelled column: codes 0, 1, 2 of 'u', 'v', 'w'."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    k = rng.choice(["u", "v", "w"], size=60)
    df = pd.DataFrame({"a": rng.uniform(size=60), "k": pd.Categorical(k)})
    # Option 0 is best for 'u' and 'v', option 1 for 'w'.
    C = 0.1 * rng.uniform(size=(60, 2)) + np.column_stack([3.0 * (k == "w"), np.ones(60)])
    model = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(df, C)
    model.save(tmp_path / "cat.json")
    doc = json.loads((tmp_path / "cat.json").read_text())
    assert doc["trees"][0]["categories"][0] == [2.0]
    assert doc["fitted"]["categories_seen_"] == [None, [0.0, 1.0, 2.0]]
    return doc


@pytest.mark.parametrize("path, value, match", [
    # Labels that do not cover the codes: the file loaded, routed 'v' and 'w'
    # as unseen (or split on a code no label has) and export_text raised
    # IndexError.
    (["fitted", "category_values_"], [None, ["u"]],
     r"fitted\.categories_seen_\[1\]\[1\] must be the code of a label of "
     r"fitted\.category_values_\[1\] \(an int in \[0, 0\]\); got 1\.0"),
    (["fitted", "categories_seen_"], [None, [0.0, 7.5]],
     r"fitted\.categories_seen_\[1\]\[1\] must be the code of a label .* got 7\.5"),
    (T0 + ["categories", 0], [9.0],
     r"trees\[0\]\.categories\[0\]\[0\] must be the code of a label of "
     r"fitted\.category_values_\[1\] \(an int in \[0, 2\]\); got 9\.0"),
    (T0 + ["categories", 0], [1.5], r"trees\[0\]\.categories\[0\]\[0\] .* got 1\.5"),
])
def test_category_codes_beyond_the_labels_are_refused(tmp_path, path, value, match):
    doc = _labelled_categorical_doc(tmp_path)
    spotree.load(_write(tmp_path, doc))          # the file as written loads
    msg = _load_error(tmp_path, _edit(doc, path, value))
    assert re.search(match, msg), msg
    assert "is a malformed spotree model: " in msg


@pytest.mark.parametrize("kind", ["inf", "date", "tuple"])
def test_category_labels_a_file_cannot_hold_are_refused_at_save(tmp_path, kind):
    """inf and tuple labels were written, then refused by load ('must be finite', 'must
    list distinct labels'); a date column made a category (as the error for date columns
    suggests) failed with 'parameter value Timestamp(...) cannot be written to JSON'."""
    pd = pytest.importorskip("pandas")
    two = {"inf": [1.0, np.inf], "date": list(pd.to_datetime(["2020-01-01", "2021-01-01"])),
           "tuple": [("a", 1), ("b", 2)]}[kind]
    rng = np.random.default_rng(0)
    pick = rng.integers(0, 2, size=60)
    col = pd.Series([two[i] for i in pick], dtype=object)
    df = pd.DataFrame({"c": col.astype("category") if kind != "tuple" else col,
                       "x": rng.uniform(size=60)})
    C = 0.1 * rng.uniform(size=(60, 2)) + np.column_stack([3.0 * pick, np.ones(60)])
    model = SPOTree(FiniteDecisions(np.eye(2)), max_depth=2).fit(df, C)
    with pytest.raises(ValueError, match=r"SPOTree cannot be saved: column 'c' of X was "
                                         r"categorical with the label .* strings, ints, bools "
                                         r"or finite floats only"):
        model.save(tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()
    # Text labels save and load.
    df["c"] = df["c"].astype(str)
    model.fit(df, C).save(tmp_path / "m.json")
    np.testing.assert_array_equal(spotree.load(tmp_path / "m.json").predict(df),
                                  model.predict(df))


def test_a_mixed_criterion_tree_without_its_loss_scales_is_refused(tmp_path):
    # It loaded, then prune() raised AttributeError: 'SPOTree' object has no
    # attribute 'loss_scales_'. A pure criterion does not use them.
    for name, needed in (("mse_mixed", True), ("shortest_path", False)):
        model, X, C = MODELS[name]
        model.save(tmp_path / "m.json")
        doc = json.loads((tmp_path / "m.json").read_text())
        edited = _edit(doc, ["fitted", "loss_scales_"], delete=True)
        if needed:
            msg = _load_error(tmp_path, edited)
            assert re.search(r"is a malformed spotree model: fitted\.loss_scales_ is missing; a "
                             r"tree grown on the mixed criterion \(0 < spo_weight < 1\) needs "
                             r"its SPO and squared-error scales", msg), msg
        else:
            back = spotree.load(_write(tmp_path, edited))
            assert back.prune(X, C).get_n_leaves() == model.prune(X, C).get_n_leaves()


def test_numpy_bool_parameters_are_saved_as_bools(tmp_path):
    # They are valid (InstanceOf((bool, np.bool_))) but were not written:
    # "parameter value np.True_ cannot be written to JSON".
    X, C = make_shortest_path(30, n_features=2, grid=(2, 2), random_state=0)
    problem = ShortestPath((2, 2))
    for model in (spotree.OptimalSPOTree(problem, max_depth=1, warm_start=np.True_,
                                         method="milp"),
                  spotree.SPOForest(problem, n_estimators=2, bootstrap=np.False_,
                                    ridge_features=np.False_, random_state=0),
                  spotree.SPOPlusLinear(problem, fit_intercept=np.False_, max_iter=5)):
        model.fit(X, C)
        model.save(tmp_path / "m.json")
        saved = json.loads((tmp_path / "m.json").read_text())["params"]
        back = spotree.load(tmp_path / "m.json")
        for key in ("warm_start", "bootstrap", "ridge_features", "fit_intercept"):
            if key in saved:
                assert saved[key] is bool(getattr(model, key))
        np.testing.assert_array_equal(back.predict(X), model.predict(X))


def test_a_node_with_two_parents_is_refused(tmp_path):
    doc = _doc(tmp_path)
    tree = doc["trees"][0]
    # Root 0 -> (1, 2) and 1 -> (3, 4): point the root's right child at node 3.
    assert tree["children_left"][:2] == [1, 3] and tree["children_right"][0] == 2
    msg = _load_error(tmp_path, _edit(doc, T0 + ["children_right", 0], 3))
    assert re.search(r"trees\[0\]\.children_left\[1\] points to node 3, which is already the "
                     r"child of node 0; every node must have exactly one parent", msg), msg


def test_a_node_out_of_reach_of_the_root_is_refused(tmp_path):
    doc = _doc(tmp_path)
    tree = doc["trees"][0]
    # An extra leaf at the end that no node points to.
    for name in ("children_left", "children_right"):
        tree[name].append(-1)
    tree["feature"].append(-2)
    tree["threshold"].append(-2.0)
    for name in ("impurity", "loss", "weighted_n_node_samples"):
        tree[name].append(0.0)
    tree["n_node_samples"].append(0)
    tree["categories"].append([])
    tree["value"].append(tree["value"][0])
    tree["decision"].append(tree["decision"][0])
    msg = _load_error(tmp_path, doc)
    assert re.search(r"trees\[0\]\.children_left and children_right never point to node 15: "
                     r"it cannot be reached from the root", msg), msg


def test_arrays_nested_200000_deep(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match="not a spotree model file .*nested more than"):
        spotree.load(path)
    doc = _doc(tmp_path)
    doc["trees"][0]["value"][0][0] = json.loads("[" * 90 + "]" * 90)  # 95 in all
    msg = _load_error(tmp_path, doc)
    assert "trees[0].value[0][0] must be a finite number; got a list" in msg


def test_a_value_nested_700_deep_is_refused_on_every_python(tmp_path):
    # SPOForest's per-tree loss scales are read by a reader that recurses
    # once per level: 700 levels parsed on Python 3.11 (as ~9,000 do on
    # 3.13), then the reader raised RecursionError. Files nesting more than
    # 100 levels are refused as they are read, whatever json can parse.
    X, C = make_shortest_path(40, n_features=2, grid=(2, 2), random_state=0)
    spotree.SPOForest(ShortestPath((2, 2)), n_estimators=2, random_state=0).fit(X, C).save(
        tmp_path / "forest.json")
    doc = json.loads((tmp_path / "forest.json").read_text())
    doc["fitted"]["_trees_loss_scales"] = "DEEP"
    path = tmp_path / "deep.json"
    # Under the document and its 'fitted' object: 98 levels make 100 in all.
    for depth, refused in ((700, True), (99, True), (98, False)):
        path.write_text(json.dumps(doc).replace('"DEEP"', "[" * depth + "1" + "]" * depth))
        with pytest.raises(ValueError) as info:
            spotree.load(path)
        msg = " ".join(str(info.value).split())
        deep = "is not a spotree model file (arrays or objects nested more than 100 levels deep)"
        assert (deep in msg) == refused, (depth, msg)
        if not refused:  # read as far as the value itself: malformed, and named
            assert "fitted._trees_loss_scales" in msg, msg


def test_files_over_the_size_limit_are_refused_before_reading(tmp_path):
    model, X, _ = MODELS["shortest_path"]
    path = tmp_path / "m.json"
    model.save(path)
    size = path.stat().st_size
    with pytest.raises(ValueError, match=rf"is {size} bytes, larger than the 1000-byte limit "
                                         r"of spotree\.load; if you trust the file, pass a "
                                         r"larger max_bytes"):
        spotree.load(path, max_bytes=1000)
    np.testing.assert_array_equal(spotree.load(path, max_bytes=size).predict(X),
                                  model.predict(X))
    assert spotree.tree._persist.MAX_BYTES == 2 ** 30
    # Any limit in [1, inf) is accepted: these were a MemoryError (read(n)
    # allocated the limit) and an OverflowError.
    for limit in (2 ** 40, 2 ** 64):
        np.testing.assert_array_equal(spotree.load(path, max_bytes=limit).predict(X),
                                      model.predict(X))


def test_load_accepts_only_paths(tmp_path):
    # An int is a file descriptor to open(): spotree.load(3) must not read it.
    r, w = os.pipe()
    try:
        os.write(w, b"{}")
        for bad in (r, float(r), None, b"model.json", [str(tmp_path)]):
            with pytest.raises(TypeError, match="The 'path' argument of spotree.load must be "
                                                "a str or os.PathLike"):
                spotree.load(bad)
        assert os.read(r, 2) == b"{}"  # still unread
    finally:
        os.close(r)
        os.close(w)
    with pytest.raises(TypeError, match="The 'problem' argument of spotree.load must be a "
                                        "DecisionProblem or None. Got str"):
        spotree.load(tmp_path / "x.json", problem="shortest_path")
    # save takes what load takes, and names the argument (an int or None gave
    # os.fspath's "expected str, bytes or os.PathLike object, not int").
    model = MODELS["shortest_path"][0]
    for bad in (5, None, os.fsencode(tmp_path / "model.json")):
        with pytest.raises(TypeError, match="The 'path' argument of SPOTree.save must be a str "
                                            "or os.PathLike file path"):
            model.save(bad)
    assert not (tmp_path / "model.json").exists()


def test_a_forest_edited_to_no_trees_is_refused(tmp_path):
    X, C = make_shortest_path(60, n_features=3, grid=(3, 3), random_state=0)
    spotree.SPOForest(ShortestPath((3, 3)), n_estimators=3, random_state=0).fit(X, C).save(
        tmp_path / "f.json")
    doc = json.loads((tmp_path / "f.json").read_text())
    msg = _load_error(tmp_path, {**doc, "params": {**doc["params"], "n_estimators": 0},
                                 "trees": []})
    assert re.search(r"params\.n_estimators is invalid: The 'n_estimators' parameter of "
                     r"SPOForest must be an int in the range \[1, inf\)\. Got 0", msg), msg
    msg = _load_error(tmp_path, {**doc, "trees": []})
    assert "trees do not fit the estimator: a SPOForest file with n_estimators=3 holds 0" in msg
    msg = _load_error(tmp_path, {**doc, "params": {**doc["params"], "n_estimators": 2}})
    assert "trees do not fit the estimator: a SPOForest file with n_estimators=2 holds 3" in msg


# ------------------------------------------------ decisions vs the problem
def test_leaf_decisions_edited_to_zeros_are_refused(tmp_path):
    model, X, C = MODELS["shortest_path"]
    doc = _doc(tmp_path)
    tree = doc["trees"][0]
    zeros = [[0.0] * 12 if left == -1 else row
             for left, row in zip(tree["children_left"], tree["decision"])]
    msg = _load_error(tmp_path, _edit(doc, T0 + ["decision"], zeros))
    first_leaf = tree["children_left"].index(-1)
    assert re.search(rf"trees\[0\]\.decision\[{first_leaf}\] is not a feasible decision of the "
                     r"model's problem \(ShortestPath, a 'min' problem\)", msg), msg


def test_a_flipped_problem_sense_is_refused(tmp_path):
    doc = _doc(tmp_path)
    doc["problem"]["sense"] = doc["problem_info"]["sense"] = "max"
    msg = _load_error(tmp_path, doc)
    assert re.search(r"trees\[0\]\.decision\[0\] is not optimal for the node's value under the "
                     r"model's problem \(ShortestPath, a 'max' problem\)", msg), msg
    # A file written before problem_info: the sense edit alone.
    doc = _doc(tmp_path)
    del doc["problem_info"]
    doc["problem"]["sense"] = "max"
    assert "is not optimal for the node's value" in _load_error(tmp_path, doc)


@pytest.mark.parametrize("name", ["linear_program", "finite_max_categorical"])
def test_decisions_swapped_for_another_feasible_one_are_refused(tmp_path, name):
    model, _, _ = MODELS[name]
    model.save(tmp_path / "good.json")
    doc = json.loads((tmp_path / "good.json").read_text())
    tree = doc["trees"][0]
    D = np.array(tree["decision"])
    V = model.problem_.vertices()
    # Node 0's decision replaced by the feasible vertex that is worst for its value.
    worst = V[np.argmax(model.problem_.sign * (V @ np.array(tree["value"][0])))]
    assert not np.allclose(worst, D[0])
    msg = _load_error(tmp_path, _edit(doc, T0 + ["decision", 0], worst.tolist()))
    assert "trees[0].decision[0] is not optimal for the node's value" in msg


# ------------------------------------------------ problems not written to JSON
def _callable_model(kind="tree"):
    sp = ShortestPath((3, 3))

    def oracle(C):
        return sp.solve(C)[0]

    X, C = make_shortest_path(80, n_features=3, grid=(3, 3), noise=0.5, random_state=0)
    problem = CallableProblem(oracle, n_costs=12, batched=True)
    if kind == "tree":
        model = SPOTree(problem, max_depth=3)
    else:
        model = spotree.SPOForest(problem, n_estimators=3, max_features=2, random_state=0)
    return model.fit(X, C), problem, X, C


@pytest.mark.parametrize("kind", ["tree", "forest"])
def test_a_model_with_a_callable_problem_saves_and_loads_with_problem(tmp_path, kind):
    model, problem, X, C = _callable_model(kind)
    path = tmp_path / "m.json"
    model.save(path)
    doc = json.loads(path.read_text())
    assert doc["problem"] is None
    assert doc["problem_info"] == {"class": "CallableProblem", "n_costs": 12, "sense": "min"}
    with pytest.raises(ValueError, match=r"m\.json holds a model saved without its decision "
                                         r"problem \(a CallableProblem with n_costs=12, "
                                         r"sense='min'\), which cannot be written to JSON\. "
                                         r"Pass the problem back: "
                                         r"spotree\.load\(path, problem=\.\.\.\)"):
        spotree.load(path)
    back = spotree.load(path, problem=problem)
    assert back.problem_ is problem and back.problem is problem
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    np.testing.assert_array_equal(back.predict_decision(X), model.predict_decision(X))
    assert back.score(X, C) == model.score(X, C)
    # An equivalent problem of another class is accepted too.
    back = spotree.load(path, problem=ShortestPath((3, 3)))
    np.testing.assert_array_equal(back.predict_decision(X), model.predict_decision(X))


def test_load_with_a_problem_of_another_size_or_sense(tmp_path):
    model, problem, X, C = _callable_model()
    model.save(tmp_path / "m.json")
    with pytest.raises(ValueError, match=r"The 'problem' argument of spotree\.load has "
                                         r"n_costs=24, but the model in .*m\.json was fitted "
                                         r"on a problem with n_costs=12"):
        spotree.load(tmp_path / "m.json", problem=ShortestPath((4, 4)))
    with pytest.raises(ValueError, match=r"The 'problem' argument of spotree\.load is a 'max' "
                                         r"problem, but the model in .*m\.json was fitted on a "
                                         r"'min' problem"):
        spotree.load(tmp_path / "m.json", problem=ShortestPath((3, 3), sense="max"))
    # Same size and sense, another feasible set: the stored decisions give it away.
    other = FiniteDecisions(np.eye(12))
    with pytest.raises(ValueError, match=r"The 'problem' argument of spotree\.load does not "
                                         r"match the model in .*m\.json: trees\[0\]\.decision"
                                         r"\[0\] is not a feasible decision of the model's "
                                         r"problem \(FiniteDecisions"):
        spotree.load(tmp_path / "m.json", problem=other)


def test_load_with_problem_replaces_a_stored_problem(tmp_path):
    model, X, C = MODELS["shortest_path"]
    model.save(tmp_path / "m.json")
    p = ShortestPath((3, 3))
    back = spotree.load(tmp_path / "m.json", problem=p)
    assert back.problem_ is p
    np.testing.assert_array_equal(back.predict_decision(X), model.predict_decision(X))
    with pytest.raises(ValueError, match="'max' problem, but the model .* 'min' problem"):
        spotree.load(tmp_path / "m.json", problem=ShortestPath((3, 3), sense="max"))
    # The stored spec is not built when a problem is given (it may come from a
    # newer spotree or describe a class this one cannot build).
    doc = json.loads((tmp_path / "m.json").read_text())
    doc["problem"] = {"type": "from_the_future", "sense": "min"}
    back = spotree.load(_write(tmp_path, doc), problem=p)
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    with pytest.raises(ValueError, match=r"problem does not describe a decision problem"):
        spotree.load(_write(tmp_path, doc))


# ----------------------------------------------------------------- fuzzing
_REPLACEMENTS = [None, True, "abc", [], {}, [1, 2], {"a": 1}, 1.5, -1, 0, 10 ** 30, 1e300,
                 float("nan"), float("inf"), [[1.0]], "DELETE"]


def _paths(node, prefix=()):
    yield list(prefix)
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):
            yield from _paths(v, prefix + (i,))


_FUZZ_DOCS = {}


def _fuzz_doc(name):
    if name not in _FUZZ_DOCS:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.json")
            MODELS[name][0].save(path)
            with open(path) as fh:
                doc = json.load(fh)
        _FUZZ_DOCS[name] = (doc, [p for p in _paths(doc) if p])
    return _FUZZ_DOCS[name]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["shortest_path", "finite_max_categorical", "linear_program", "missing"]),
       st.data())
def test_any_hand_edit_loads_or_raises_value_error(name, data):
    """Replacing any entry of a model file by any JSON value never gives another error."""
    import tempfile

    doc, paths = _fuzz_doc(name)
    path = data.draw(st.sampled_from(paths))
    value = data.draw(st.sampled_from(_REPLACEMENTS))
    edited = _edit(doc, path, value, delete=value == "DELETE")
    with tempfile.TemporaryDirectory() as d:
        file = os.path.join(d, "m.json")
        with open(file, "w") as fh:
            json.dump(edited, fh)
        try:
            spotree.load(file)
        except ValueError as exc:
            assert str(exc).startswith(file)


# ------------------------------------------------------------- boosting
def _boost_doc(tmp_path):
    X, C = make_shortest_path(150, n_features=3, grid=(3, 3), noise=0.5, random_state=0)
    m = spotree.SPOBoost(ShortestPath((3, 3)), n_estimators=6, n_iter_no_change=None,
                         init="linear", random_state=0).fit(X, C)
    m.save(tmp_path / "boost.json")
    return m, X, json.loads((tmp_path / "boost.json").read_text())


def test_boosting_trees_decisions_are_not_checked(tmp_path):
    # The boosting trees fit gradients and leave their decision arrays unused
    # (zeros): they load, and the model predicts as before.
    m, X, doc = _boost_doc(tmp_path)
    assert all(not any(row) for tree in doc["trees"] for row in tree["decision"])
    back = spotree.load(tmp_path / "boost.json")
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
    np.testing.assert_array_equal(back.predict_decision(X), m.predict_decision(X))
    # Their other arrays are checked like any tree's.
    msg = _load_error(tmp_path, _edit(doc, ["trees", 2, "value", 0, 0], float("nan")))
    assert "trees[2].value[0][0] must be a finite number; got nan" in msg


def test_boosting_without_trees_and_its_fitted_attributes(tmp_path):
    m, X, doc = _boost_doc(tmp_path)
    # Only the initial model (no boosting round kept) is a valid model.
    edited = {**doc, "trees": [],
              "fitted": {**doc["fitted"], "best_iteration_": 0,
                         "feature_importances_": [0.0] * 3}}
    back = spotree.load(_write(tmp_path, edited))
    assert back.estimators_ == []
    for key, value, match in [
            ("init_coef_", [[0.0] * 3] * 11, r"fitted\.init_coef_ must have 12 rows \(one per "
                                              r"cost\); got 11"),
            ("init_intercept_", [0.0] * 12 + [float("nan")],
             r"fitted\.init_intercept_ must have 12 entries"),
            ("n_iter_", -1, r"fitted\.n_iter_ must be an int >= 0; got -1"),
            ("best_iteration_", 1.5, r"fitted\.best_iteration_ must be an int >= 0; got 1\.5"),
            ("train_score_", [0.1, float("inf")], r"fitted\.train_score_\[1\] must be a finite "
                                                  r"number or NaN; got inf"),
            ("init_choice_", 3, r"fitted\.init_choice_ must be a str; got 3")]:
        msg = _load_error(tmp_path, _edit(doc, ["fitted", key], value))
        assert re.search(match, msg), (key, msg)
    msg = _load_error(tmp_path, _edit(doc, ["fitted", "best_iteration_"], 2))
    assert "trees do not fit the estimator: a SPOBoost file with best_iteration_=2 holds 6" in msg


@pytest.mark.parametrize("key, value, match", [
    ("train_score_", [-0.1] * 6, r"fitted\.train_score_ must have n_iter_ \+ 1 = 7 entries "
                                 r"\(round 0 is the start\); got 6"),
    ("validation_score_", [-0.1] * 8, r"fitted\.validation_score_ must have n_iter_ \+ 1 = 7 "
                                      r"entries \(round 0 is the start\) or none; got 8"),
    ("n_iter_", 9, r"fitted\.train_score_ must have n_iter_ \+ 1 = 10 entries"),
])
def test_boosting_scores_of_another_number_of_rounds_are_refused(tmp_path, key, value, match):
    """A file whose scores do not have one entry per round (and the start) loaded, and
    'spotree show' then printed half its summary and failed with "IndexError: index 6
    is out of bounds for axis 0 with size 6", naming no file."""
    m, X, doc = _boost_doc(tmp_path)
    assert len(doc["fitted"]["train_score_"]) == m.n_iter_ + 1 == 7
    msg = _load_error(tmp_path, _edit(doc, ["fitted", key], value))
    assert re.search(match, msg), msg
    assert msg.startswith(str(tmp_path / "bad.json") + " is a malformed spotree model: ")


def test_boosting_files_missing_a_key_or_with_links_that_do_not_fit_name_the_key(tmp_path):
    """A SPOBoost file without one of its fitted keys was refused as "trees do not fit
    the estimator: a malformed SPOBoost model: AttributeError("'SPOBoost' object has
    no attribute 'n_iter_'")", and links whose knots and coefficients disagree the
    same way (naming no key, or only inside a ValueError's repr)."""
    X, C = make_shortest_path(60, n_features=3, grid=(3, 3), noise=0.5, random_state=0)
    m = spotree.SPOBoost(ShortestPath((3, 3)), n_estimators=2, max_depth=1, init="index",
                         n_iter_no_change=None, random_state=0).fit(X, C)
    m.save(tmp_path / "boost.json")
    doc = json.loads((tmp_path / "boost.json").read_text())
    knots = doc["fitted"]["init_link_knots_"]
    assert len(knots) == 12 and len(knots[0]) >= 3
    cases = [(["fitted", key], None, True, rf"fitted\.{key} is missing\.")
             for key in ("init_coef_", "init_intercept_", "n_iter_", "best_iteration_",
                         "train_score_", "validation_score_")]
    cases += [
        (["fitted", "init_link_coef_"], None, True,
         r"fitted\.init_link_coef_ is missing: an index start needs all of init_link_knots_"),
        (["fitted", "init_link_knots_", 0, 1], knots[0][0], False,
         r"fitted\.init_link_knots_ must increase along every row\."),
        (["fitted", "init_link_knots_"], [row[:2] for row in knots], False,
         r"fitted\.init_link_knots_ must have 12 rows \(one per cost\) of at least 3 knots"),
        (["fitted", "init_link_coef_"], [row[:-1] for row in doc["fitted"]["init_link_coef_"]],
         False, rf"fitted\.init_link_coef_ must have {len(knots[0]) - 1} columns, one per "
                r"interval between the")]
    for path, value, delete, match in cases:
        msg = _load_error(tmp_path, _edit(doc, path, value, delete=delete))
        assert msg.startswith(str(tmp_path / "bad.json") + " is a malformed spotree model: ")
        assert re.search(match, msg), (path, msg)
        assert "Error(" not in msg and "trees do not fit" not in msg, msg


def test_boosting_whose_optimal_values_are_all_zero_saves_and_loads(tmp_path):
    """Doing nothing (w = 0) is optimal for every row: the normalized SPO loss has
    nothing to divide by and fit records NaN training scores (as plot_boosting and
    'spotree show' expect), but load refused the file it had just written:
    "fitted.train_score_[0] must be a finite number; got nan"."""
    problem = FiniteDecisions(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(40, 2)), rng.uniform(1.0, 2.0, size=(40, 2))
    m = spotree.SPOBoost(problem, n_estimators=2, max_depth=1, n_iter_no_change=None,
                         random_state=0).fit(X, C)
    assert np.isnan(m.train_score_).all() and m.train_score_.size == 3
    m.save(tmp_path / "zero.json")
    back = spotree.load(tmp_path / "zero.json")
    np.testing.assert_array_equal(back.train_score_, m.train_score_)  # NaN where NaN
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
    # Infinite scores are still refused.
    doc = json.loads((tmp_path / "zero.json").read_text())
    msg = _load_error(tmp_path, _edit(doc, ["fitted", "train_score_", 1], float("inf")))
    assert "fitted.train_score_[1] must be a finite number or NaN; got inf" in msg


def test_a_fresh_interpreter_loads_every_estimator_from_file_and_pickle(tmp_path):
    """`import spotree` loads the forest, boosting and linear modules on first use
    only, and those register their classes: load() must still read their files."""
    import subprocess
    import sys

    from spotree import SPOBoost, SPOForest, SPOPlusLinear

    X, C = make_shortest_path(60, n_features=3, grid=(3, 3), noise=0.5, random_state=0)
    sp = ShortestPath((3, 3))
    models = [SPOForest(sp, n_estimators=2, max_depth=2, random_state=0),
              SPOBoost(sp, n_estimators=2, max_depth=1, random_state=0),
              SPOPlusLinear(sp), SPOTree(sp, max_depth=2)]
    expected = {}
    for i, model in enumerate(models):
        model.fit(X, C)
        model.save(tmp_path / f"m{i}.json")
        (tmp_path / f"m{i}.pkl").write_bytes(pickle.dumps(model))
        expected[i] = [type(model).__name__, model.predict(X[:5]).round(12).tolist()]
    np.save(tmp_path / "X.npy", X[:5])
    code = (
        "import json, pickle, sys, pathlib\n"
        "import numpy as np\n"
        "from spotree.tree import load\n"  # the function itself, not spotree.load
        "d = pathlib.Path(sys.argv[1]); X = np.load(d / 'X.npy'); out = {}\n"
        f"for i in range({len(models)}):\n"
        "    for m in (load(d / f'm{i}.json'), pickle.loads((d / f'm{i}.pkl').read_bytes())):\n"
        "        out.setdefault(i, []).append([type(m).__name__,"
        " m.predict(X).round(12).tolist()])\n"
        "print(json.dumps(out))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(spotree.__file__))]
        + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    for i in range(len(models)):
        assert got[str(i)] == [expected[i], expected[i]], i


def test_a_model_whose_problem_checks_run_out_of_time_says_how_to_load_it(tmp_path,
                                                                         monkeypatch):
    # The error called the file 'malformed' and told to pass a larger
    # check_time_limit, which spotree.load does not take.
    import functools

    import spotree.tree._persist as persist
    from spotree.problems import problem_from_dict

    rng = np.random.default_rng(0)
    A = rng.integers(0, 100, size=(4, 30))  # a market-split 0/1 program: hard to decide
    easy = LinearProgram(A_eq=np.ones((1, 30)), b_eq=[1], bounds=(0, 1),
                         integrality=np.ones(30))
    path = tmp_path / "m.json"
    SPOTree(easy, max_depth=1).fit(rng.random((20, 1)), rng.random((20, 30))).save(path)
    doc = json.loads(path.read_text())
    # The same 30 binary variables under the market-split rows instead.
    doc["problem"].update(A_eq=A.tolist(), b_eq=(A.sum(axis=1) // 2).tolist())
    path.write_text(json.dumps(doc))
    # The loader's limit, shortened so that the test is quick.
    monkeypatch.setattr(persist, "problem_from_dict",
                        functools.partial(problem_from_dict, check_time_limit=0.3))
    with pytest.raises(ValueError) as info:
        spotree.load(path)
    msg = str(info.value)
    assert "within the check time limit of 0.3 s" in msg
    assert "malformed" not in msg and "pass a larger" not in msg
    assert "spotree.load(path, problem=problem_from_dict(spec, check_time_limit=None))" in msg
