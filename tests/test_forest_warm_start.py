"""SPOForest(warm_start=True): growing a fitted forest adds trees, and a forest grown
in steps is the forest one fit grows (scikit-learn's BaseForest semantics)."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone

import spotree
from spotree import SPOForest
from spotree.datasets import make_shortest_path
from spotree.forest import tune_max_features
from spotree.problems import FiniteDecisions, ShortestPath

SP = ShortestPath((3, 3))
SMALL = dict(min_samples_leaf=5, max_depth=3, random_state=3)


def _data(n=120):
    X, C = make_shortest_path(n, grid=(3, 3), degree=4, noise=0.25, random_state=0)
    Xt, _ = make_shortest_path(50, grid=(3, 3), degree=4, noise=0.25, random_state=5)
    sw = np.random.default_rng(1).uniform(0.2, 2.0, n)
    return X, C, Xt, sw


def _quiet_fit(est, X, C, sw=None):
    # A 3-tree forest leaves rows in every bootstrap sample: oob_score warns of them.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", ".*training samples were in every bootstrap")
        return est.fit(X, C, sample_weight=sw)


def _assert_same_forest(a, b, Xt):
    assert len(a.estimators_) == len(b.estimators_)
    for ta, tb in zip(a.estimators_, b.estimators_):
        for name in ("children_left", "children_right", "feature", "threshold", "value"):
            assert_array_equal(getattr(ta.tree_, name), getattr(tb.tree_, name))
    assert_array_equal(a.predict(Xt), b.predict(Xt))
    assert_array_equal(a.predict_decision(Xt), b.predict_decision(Xt))
    assert_array_equal(a.feature_importances_, b.feature_importances_)
    for sa, sb in zip(a.estimators_samples_, b.estimators_samples_):
        assert_array_equal(sa, sb)
    if hasattr(b, "oob_score_"):
        assert a.oob_score_ == b.oob_score_
        assert_array_equal(a.oob_prediction_, b.oob_prediction_)


@pytest.mark.parametrize("criterion, ridge, weighted", [
    ("spo", True, True), ("spo", False, False), ("mse", True, False), ("mse", False, True),
    ("auto", True, True), ("auto", False, False)])
def test_grown_in_steps_is_the_forest_one_fit_grows(criterion, ridge, weighted):
    X, C, Xt, sw = _data()
    sw = sw if weighted else None
    kw = dict(criterion=criterion, ridge_features=ridge, oob_score=True, **SMALL)
    cold = _quiet_fit(SPOForest(SP, n_estimators=7, **kw), X, C, sw)
    warm = _quiet_fit(SPOForest(SP, n_estimators=3, warm_start=True, **kw), X, C, sw)
    first = warm.estimators_[:]
    ridge_map = warm.ridge_features_
    _quiet_fit(warm.set_params(n_estimators=7), X, C, sw)
    # The first trees are kept (the same objects), four are added.
    assert all(t is u for t, u in zip(first, warm.estimators_)) and len(warm) == 7
    assert warm.ridge_features_ is ridge_map  # not refitted
    _assert_same_forest(warm, cold, Xt)
    if criterion == "auto":
        # On these data the 3 first trees and all 7 choose alike.
        assert warm.criterion_ == cold.criterion_ == ("spo" if ridge else "mse")


def test_auto_keeps_the_criterion_chosen_at_the_first_fit():
    # Here 3 pilot trees of each kind choose squared error, 7 choose SPO: the
    # grown forest keeps the first choice, the forest criterion="mse" grows.
    X, C, Xt, sw = _data()
    kw = dict(ridge_features=False, oob_score=True, **SMALL)
    warm = _quiet_fit(SPOForest(SP, n_estimators=3, warm_start=True, **kw), X, C, sw)
    scores = warm.criterion_oob_scores_
    _quiet_fit(warm.set_params(n_estimators=7), X, C, sw)
    assert warm.criterion_ == "mse" and warm.criterion_oob_scores_ is scores
    assert _quiet_fit(SPOForest(SP, n_estimators=7, **kw), X, C, sw).criterion_ == "spo"
    mse = _quiet_fit(SPOForest(SP, n_estimators=7, criterion="mse", **kw), X, C, sw)
    _assert_same_forest(warm, mse, Xt)


def test_grown_in_parallel_with_categories_and_after_pickle():
    X, C = make_shortest_path(120, grid=(3, 3), degree=4, noise=0.25, random_state=0)
    frame = pd.DataFrame(X, columns=list("abcde"))
    city = np.random.default_rng(2).choice(["x", "y", "z"], 120)
    frame["city"] = pd.Categorical(city)
    C[city == "x", 4] += 20.0  # the usual path is dear in city x
    kw = dict(max_features=None, ridge_features=False, **SMALL)
    cold = SPOForest(SP, n_estimators=6, criterion="spo", **kw).fit(frame, C)
    warm = SPOForest(SP, n_estimators=2, criterion="spo", warm_start=True, **kw).fit(frame, C)
    warm = pickle.loads(pickle.dumps(warm))  # a pickled forest can be grown
    warm.set_params(n_estimators=4, n_jobs=2).fit(frame, C)
    warm.set_params(n_estimators=6, n_jobs=None).fit(frame, C)
    assert warm.category_values_ == cold.category_values_
    assert any((t.tree_.feature == 5).any() for t in cold.estimators_)  # the category is used
    _assert_same_forest(warm, cold, frame.iloc[:40])


def test_same_or_fewer_trees_warns_or_refuses_as_scikit_learn():
    X, C, Xt, _ = _data(60)
    forest = SPOForest(SP, n_estimators=3, warm_start=True, **SMALL).fit(X, C)
    trees, pred = forest.estimators_[:], forest.predict(Xt)
    msg = "Warm-start fitting without increasing n_estimators does not fit new trees."
    with pytest.warns(UserWarning, match=msg) as rec:
        forest.fit(X, C)
    assert rec[0].filename == __file__
    assert forest.estimators_ == trees
    assert_array_equal(forest.predict(Xt), pred)
    with pytest.raises(ValueError, match=r"n_estimators=2 must be larger or equal to "
                                         r"len\(estimators_\)=3 when warm_start==True"):
        forest.set_params(n_estimators=2).fit(X, C)
    # oob_score switched on since the fit: computed, as scikit-learn does, and
    # the same as a fit with oob_score=True.
    with pytest.warns(UserWarning, match=msg):
        _quiet_fit(forest.set_params(n_estimators=3, oob_score=True), X, C)
    ref = _quiet_fit(SPOForest(SP, n_estimators=3, oob_score=True, **SMALL), X, C)
    assert forest.oob_score_ == ref.oob_score_
    # warm_start=False (the default) refits from scratch.
    forest.set_params(warm_start=False, n_estimators=2, oob_score=False).fit(X, C)
    assert len(forest) == 2 and forest.estimators_[0] is not trees[0]


def test_refuses_other_columns_costs_and_shared_parameters():
    X, C, Xt, sw = _data(60)
    forest = SPOForest(SP, n_estimators=2, warm_start=True, oob_score=True, **SMALL)
    _quiet_fit(forest, X, C)
    forest.set_params(n_estimators=4)
    with pytest.raises(ValueError, match="X has 4 features, but SPOForest is expecting 5"):
        forest.fit(X[:, :4], C)
    with pytest.raises(ValueError, match="C has 11 columns but the problem has n_costs=12"):
        forest.fit(X, C[:, :11])
    for param, value in (("ridge_features", False), ("criterion", "spo"), ("bootstrap", False),
                         ("max_samples", 0.5), ("problem", ShortestPath((3, 3))),
                         ("categorical_features", [0])):
        changed = pickle.loads(pickle.dumps(forest)).set_params(**{param: value})
        with pytest.raises(ValueError, match=f"now changed: {param}="):
            changed.fit(X, C)
    assert len(forest) == 2
    # Other rows: out-of-bag scores of the earlier trees are not defined on them.
    with pytest.raises(ValueError, match="oob_score=True with warm_start=True needs the "
                                         "training data of the earlier fits"):
        forest.fit(X, C, sample_weight=sw)
    assert len(forest) == 2
    # Without oob_score they are accepted, as in scikit-learn.
    forest.set_params(oob_score=False).fit(X[::-1], C[::-1])
    assert len(forest) == 4 and not hasattr(forest, "oob_score_")
    with pytest.raises(AttributeError, match="estimators_samples_ is unknown"):
        forest.estimators_samples_


def test_a_forest_read_by_load_cannot_be_grown(tmp_path):
    X, C, Xt, _ = _data(60)
    forest = SPOForest(SP, n_estimators=2, warm_start=True, **SMALL).fit(X, C)
    forest.set_params(n_estimators=3).fit(X, C)  # a grown forest saves as any other
    forest.save(tmp_path / "f.json")
    back = spotree.load(tmp_path / "f.json")
    assert back.warm_start is True and len(back) == 3
    assert_array_equal(back.predict(Xt), forest.predict(Xt))
    assert_array_equal(back.feature_importances_, forest.feature_importances_)
    with pytest.raises(ValueError, match="cannot grow this SPOForest further: it was read by "
                                         "spotree.load"):
        back.set_params(n_estimators=4).fit(X, C)
    # Refitting it is the way out.
    assert len(back.set_params(warm_start=False).fit(X, C)) == 4


def test_get_params_and_clone():
    X, C, _, _ = _data(60)
    forest = SPOForest(FiniteDecisions(np.eye(12)), n_estimators=2, warm_start=True,
                       max_depth=2, random_state=0).fit(X, C)
    assert forest.get_params()["warm_start"] is True
    assert SPOForest().get_params()["warm_start"] is False
    copy = clone(forest)
    assert copy.warm_start is True and not hasattr(copy, "estimators_")
    with pytest.raises(ValueError, match="warm_start"):
        SPOForest(warm_start="yes").fit(X, C)


def test_the_forest_tune_max_features_chose_can_be_grown():
    # tune_max_features grows every candidate afresh (clones of the template);
    # the forest it returns is grown further as one fit would grow it.
    X, C, Xt, _ = _data()
    template = SPOForest(SP, n_estimators=2, warm_start=True, **SMALL)
    best, res = tune_max_features(template, X[:80], C[:80], X[80:], C[80:], candidates=(2, 4))
    best.set_params(n_estimators=4).fit(X[:80], C[:80])
    cold = SPOForest(SP, n_estimators=4, max_features=res.best_max_features, **SMALL)
    _assert_same_forest(best, cold.fit(X[:80], C[:80]), Xt)


def test_refuses_a_changed_spo_weight_of_spo_trees(tmp_path):
    # A saved forest holds one spo_weight: trees grown at 0.5 then loaded pruned on
    # the pure SPO loss of a newer 1.0 (validation losses 1.85 in memory, 384 loaded,
    # on these data). The weight is part of the criterion the trees share.
    X, C, Xv, _ = _data(60)
    Cv = make_shortest_path(50, grid=(3, 3), degree=4, noise=0.25, random_state=5)[1]
    kw = dict(n_estimators=2, ridge_features=False, warm_start=True, **SMALL)
    forest = SPOForest(SP, criterion="spo", spo_weight=0.5, **kw).fit(X, C)
    with pytest.raises(ValueError, match=r"now changed: spo_weight=1.0 \(it was 0.5\)"):
        forest.set_params(n_estimators=3, spo_weight=1.0).fit(X, C)
    assert len(forest) == 2
    forest.set_params(spo_weight=0.5).fit(X, C)  # set back: grown
    forest.save(tmp_path / "f.json")
    back = spotree.load(tmp_path / "f.json")
    for tree, loaded in zip(forest.estimators_, back.estimators_):
        assert_array_equal(tree.prune(Xv, Cv).pruning_path_.val_losses,
                           loaded.prune(Xv, Cv).pruning_path_.val_losses)
    # Squared-error trees do not use it: a change is accepted (with fit's warning).
    mse = SPOForest(SP, criterion="mse", **kw).fit(X, C)
    with pytest.warns(UserWarning, match="spo_weight=0.5 has no effect"):
        mse.set_params(n_estimators=3, spo_weight=0.5).fit(X, C)
    assert len(mse) == 3
