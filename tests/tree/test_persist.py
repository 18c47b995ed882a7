"""model.save / spotree.load (plain JSON, safe on untrusted files), pickle and joblib."""

import io
import json
import os
import pickle

import joblib
import numpy as np
import pytest

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


def test_saving_an_unfitted_or_unwritable_model_fails_cleanly(tmp_path):
    with pytest.raises(Exception, match="not fitted|fit"):
        SPOTree(ShortestPath((2, 2))).save(tmp_path / "x.json")
    sp = ShortestPath((3, 3))

    def oracle(C):
        return sp.solve(C)[0]

    _, X, C = _sp_model(max_depth=1)
    m = SPOTree(CallableProblem(oracle, n_costs=12, batched=True), max_depth=1).fit(X, C)
    with pytest.raises((NotImplementedError, ValueError, TypeError), match="JSON"):
        m.save(tmp_path / "callable.json")
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
    with pytest.raises(ValueError, match="version"):
        spotree.load(_write(tmp_path, {**doc, "version": 99}))
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
