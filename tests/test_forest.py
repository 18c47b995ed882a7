"""Tests of SPOForest: agreement with SPOTree, bootstrap by weights, OOB, parallel
determinism (joblib and dask), persistence, bad input, scikit-learn checks."""

import copy
import pickle
import threading
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from joblib import parallel_config
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import (
    check_fit_score_takes_y,
    check_n_features_in_after_fitting,
    check_sample_weight_equivalence_on_dense_data,
    parametrize_with_checks,
)

import spotree
from spotree import SPOForest, SPOTree
from spotree.datasets import make_shortest_path
from spotree.forest import tune_max_features
from spotree.metrics import normalized_spo_loss
from spotree.problems import CallableProblem, FiniteDecisions, ShortestPath

from _helpers import tied_lp_data, traced_peak

SP = ShortestPath((3, 3))  # 12 edges, 6 paths: small and fast


def _data(n=300, seed=0, degree=4, noise=0.25):
    X, C, B = make_shortest_path(n, grid=(3, 3), degree=degree, noise=noise,
                                 random_state=seed, return_B=True)
    Xt, Ct = make_shortest_path(200, grid=(3, 3), degree=degree, noise=noise, B=B,
                                random_state=seed + 1000)
    return X, C, Xt, Ct


class CountingRoads(FiniteDecisions):
    """FiniteDecisions that counts its batched oracle calls."""

    calls = 0

    def _solve(self, C):
        type(self).calls += 1
        return super()._solve(C)


def _module_oracle(C):
    W = np.zeros_like(C)
    W[np.arange(C.shape[0]), np.argmin(C, axis=1)] = 1.0
    return W


# ------------------------------------------------------------ one tree
@pytest.mark.parametrize("criterion", ["spo", "mse"])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_tree_without_bagging_is_spotree(criterion, weighted):
    X, C, Xt, Ct = _data()
    sw = np.random.default_rng(3).uniform(0.2, 2.0, X.shape[0]) if weighted else None
    tree = SPOTree(SP, criterion=criterion, min_samples_leaf=10).fit(X, C, sample_weight=sw)
    forest = SPOForest(SP, n_estimators=1, bootstrap=False, max_features=None,
                       criterion=criterion, min_samples_leaf=10, ridge_features=False,
                       random_state=0)
    forest.fit(X, C, sample_weight=sw)
    assert_array_equal(forest.predict(Xt), tree.predict(Xt))
    assert_array_equal(forest.predict_decision(Xt), tree.predict_decision(Xt))
    assert forest.score(Xt, Ct) == tree.score(Xt, Ct)
    # Renormalized after averaging, hence equal up to rounding.
    assert_allclose(forest.feature_importances_, tree.feature_importances_, rtol=1e-13)
    t_f, t_s = forest.estimators_[0].tree_, tree.tree_
    for name in ("children_left", "feature", "threshold", "value", "loss", "impurity"):
        assert_array_equal(getattr(t_f, name), getattr(t_s, name))


def test_one_tree_without_bagging_is_spotree_off_the_vertex_path():
    X, C, Xt, Ct = _data(n=150)
    problem = CallableProblem(_module_oracle, SP.n_costs, batched=True)
    tree = SPOTree(problem, min_samples_leaf=15).fit(X, C)
    forest = SPOForest(problem, n_estimators=1, bootstrap=False, max_features=None,
                       min_samples_leaf=15, ridge_features=False).fit(X, C)
    assert not forest.estimators_[0].n_oracle_calls_ == 0  # really on the oracle path
    assert_array_equal(forest.predict(Xt), tree.predict(Xt))
    assert_array_equal(forest.predict_decision(Xt), tree.predict_decision(Xt))


def test_default_problem_is_the_cheapest_option():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 3))
    C = np.column_stack([X[:, 0], 1 - X[:, 0], 0.5 + 0 * X[:, 1]])
    forest = SPOForest(n_estimators=5, min_samples_leaf=10, random_state=0).fit(X, C)
    tree = SPOTree(min_samples_leaf=10).fit(X, C)
    assert forest.problem_.n_costs == 3
    assert_array_equal(forest.problem_.V, np.eye(3))
    assert forest.score(X, C) <= 0.0
    assert tree.problem_.n_costs == forest.problem_.n_costs


# ----------------------------------------------------- bootstrap weights
def _drawn_counts_from_root(forest, n_draws):
    """Bootstrap counts read off the trees themselves, not from the forest's sampler.

    With one-hot costs (row i's cost vector is e_i) and unit weights, a
    tree's root value is the share of draws of every row.
    """
    return np.array([np.rint(est.tree_.value[0] * n_draws) for est in forest.estimators_])


@pytest.mark.parametrize("max_samples", [None, 20])
def test_bootstrap_draws_rows_uniformly_with_replacement(max_samples):
    n, n_trees = 30, 400
    X = np.random.default_rng(0).uniform(size=(n, 2))
    C = np.eye(n)
    n_draws = n if max_samples is None else max_samples
    forest = SPOForest(n_estimators=n_trees, max_samples=max_samples, max_depth=1,
                       min_samples_leaf=n_draws, random_state=0).fit(X, C)
    counts = _drawn_counts_from_root(forest, n_draws)
    assert (counts.sum(axis=1) == n_draws).all()
    # Each row's count in a tree is Binomial(n_draws, 1/n): check every row's
    # mean count and the chance of being left out, against that law.
    mean, sd = n_draws / n, np.sqrt(n_draws / n * (1 - 1 / n))
    z = (counts.mean(axis=0) - mean) / (sd / np.sqrt(n_trees))
    assert np.abs(z).max() < 4.5, z
    p_out = (1 - 1 / n) ** n_draws
    out = (counts == 0).mean(axis=0)
    z_out = (out - p_out) / np.sqrt(p_out * (1 - p_out) / n_trees)
    assert np.abs(z_out).max() < 4.5, z_out
    # Trees draw independently: the draws of two trees are not the same.
    assert len({c.tobytes() for c in counts}) == n_trees
    # The forest reports the same draws it used.
    reported = np.array([np.bincount(s, minlength=n) for s in forest.estimators_samples_])
    assert_array_equal(reported, counts)


@pytest.mark.parametrize("leaf, split", [(8, 2), (0.05, 2), (1, 0.3)])
def test_each_tree_is_a_spotree_on_its_bootstrap_sample(leaf, split):
    # (Fractional leaf and split sizes were fractions of all the draws, those
    # of rows of zero weight included, which drop out of the tree: the trees
    # had 17-21 nodes where the copied rows grow 25-29.)
    X, C, Xt, _ = _data(n=250)
    sw = np.random.default_rng(1).integers(0, 3, X.shape[0]).astype(float)
    forest = SPOForest(SP, n_estimators=4, max_features=2, min_samples_leaf=8,
                       random_state=7).fit(X, C, sample_weight=sw)
    for est, rows in zip(forest.estimators_, forest.estimators_samples_):
        assert rows.size == X.shape[0]
        keep = rows[sw[rows] > 0]
        # The root holds exactly the in-bag rows with positive weight.
        assert est.tree_.n_node_samples[0] == np.unique(keep).size
        assert est.tree_.weighted_n_node_samples[0] == pytest.approx(sw[rows].sum())
    # The paper's bootstrap: without feature bagging, every tree equals an
    # SPOTree grown on its physically copied rows.
    full = SPOForest(SP, n_estimators=3, criterion="spo", max_features=None,
                     min_samples_leaf=leaf, min_samples_split=split, ridge_features=False,
                     random_state=2).fit(X, C, sample_weight=sw)
    for est, rows in zip(full.estimators_, full.estimators_samples_):
        keep = rows[sw[rows] > 0]
        alone = SPOTree(SP, min_samples_leaf=leaf, min_samples_split=split).fit(
            X[keep], C[keep], sample_weight=sw[keep])
        for name in ("feature", "threshold", "decision", "weighted_n_node_samples"):
            assert_allclose(getattr(est.tree_, name), getattr(alone.tree_, name),
                            rtol=1e-12, err_msg=name)
        assert_allclose(est.tree_.value, alone.tree_.value, rtol=1e-10)
        assert_allclose(est.tree_.loss, alone.tree_.loss, rtol=1e-9, atol=1e-12)
        assert_allclose(est.predict(Xt), alone.predict(Xt), rtol=1e-10)


def test_bootstrap_weights_act_like_copied_rows():
    # min_samples_leaf counts drawn rows, duplicates included: a tree grown on
    # the weights splits like a tree grown on the physically resampled rows.
    X, C, Xt, _ = _data(n=200, seed=4)
    forest = SPOForest(SP, n_estimators=2, max_features=None, min_samples_leaf=12,
                       ridge_features=False, random_state=3).fit(X, C)
    for est, rows in zip(forest.estimators_, forest.estimators_samples_):
        copied = SPOTree(SP, min_samples_leaf=12).fit(X[rows], C[rows])
        assert_array_equal(copied.tree_.feature, est.tree_.feature)
        assert_array_equal(copied.tree_.threshold, est.tree_.threshold)
        assert_allclose(copied.predict(Xt), est.predict(Xt), rtol=1e-12)


# (0.257: 25.7 draws round to 26, as in scikit-learn, and 0.1 to at least one;
# 100 = n is allowed.)
@pytest.mark.parametrize("max_samples, expected", [(None, 100), (40, 40), (100, 100),
                                                   (0.25, 25), (0.257, 26), (0.001, 1)])
def test_max_samples_sets_the_bootstrap_size(max_samples, expected):
    X, C, _, _ = _data(n=100)
    forest = SPOForest(SP, n_estimators=3, max_samples=max_samples, random_state=0).fit(X, C)
    for est in forest.estimators_:
        assert est.tree_.weighted_n_node_samples[0] == expected


def test_max_samples_larger_than_n_is_rejected():
    X, C, _, _ = _data(n=50)
    with pytest.raises(ValueError, match="'max_samples' parameter of SPOForest"):
        SPOForest(SP, n_estimators=2, max_samples=51).fit(X, C)


@pytest.mark.parametrize("criterion", ["spo", "auto"])
def test_max_samples_without_bootstrap_is_rejected(criterion):
    # It was ignored (every tree saw all the rows), as scikit-learn refuses it.
    X, C, Xt, Ct = _data(n=50)
    forest = SPOForest(SP, n_estimators=2, criterion=criterion, max_samples=10, bootstrap=False)
    with pytest.raises(ValueError, match=r"max_samples=10 sets the size of each bootstrap sample "
                                         r"and needs bootstrap=True"):
        forest.fit(X, C)
    with pytest.raises(ValueError, match=r"max_samples=10 sets the size"):
        tune_max_features(forest, X, C, Xt, Ct, candidates=(1,))


def test_trees_differ_and_predictions_average_the_trees():
    X, C, Xt, _ = _data()
    forest = SPOForest(SP, n_estimators=6, min_samples_leaf=10, random_state=0).fit(X, C)
    preds = np.array([est.predict(Xt) for est in forest.estimators_])
    assert len({p.tobytes() for p in preds}) > 1
    assert_allclose(forest.predict(Xt), preds.mean(axis=0), rtol=1e-13)
    W, _ = SP.solve(preds.mean(axis=0))
    assert_array_equal(forest.predict_decision(Xt), W)
    # apply: one leaf per tree per sample, the ones each tree routes to.
    leaves = forest.apply(Xt)
    assert leaves.shape == (Xt.shape[0], 6)
    for k, est in enumerate(forest.estimators_):
        assert_array_equal(leaves[:, k], est.apply(Xt))


def test_predict_decision_is_one_batched_oracle_call():
    X, C, Xt, _ = _data(n=120)
    V = SP.vertices()
    problem = CountingRoads(V)
    forest = SPOForest(problem, n_estimators=5, min_samples_leaf=10, random_state=0).fit(X, C)
    CountingRoads.calls = 0
    W = forest.predict_decision(Xt)
    assert CountingRoads.calls == 1
    assert_array_equal(W, V[np.argmin(forest.predict(Xt) @ V.T, axis=1)])


def test_maximization_problem_decides_the_argmax():
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(200, 2))
    C = np.column_stack([X[:, 0], X[:, 1], 0.4 + 0 * X[:, 0]]) + rng.normal(0, .05, (200, 3))
    V = np.eye(3)
    forest = SPOForest(FiniteDecisions(V, sense="max"), n_estimators=8, min_samples_leaf=10,
                       random_state=0).fit(X, C)
    P = forest.predict(X)
    assert_array_equal(forest.predict_decision(X), V[np.argmax(P, axis=1)])
    assert forest.score(X, C) > -0.2


def test_statistics_are_computed_once_per_fit(monkeypatch):
    import spotree.forest as forest_module

    made = []
    real = forest_module.FitData

    class Recording(real):
        def __init__(self, *args, **kwargs):
            made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(forest_module, "FitData", Recording)
    X, C, _, _ = _data(n=120)
    problem = CallableProblem(_module_oracle, SP.n_costs, batched=True)
    SPOForest(problem, n_estimators=4, min_samples_leaf=20, random_state=0).fit(X, C)
    assert len(made) == 1


def test_feature_importances_average_the_trees():
    X, C, _, _ = _data()
    forest = SPOForest(SP, n_estimators=5, min_samples_leaf=10, random_state=0).fit(X, C)
    mean = np.mean([est.feature_importances_ for est in forest.estimators_], axis=0)
    assert_allclose(forest.feature_importances_, mean / mean.sum(), rtol=1e-12)
    assert forest.feature_importances_.sum() == pytest.approx(1.0)


def test_feature_importances_of_single_leaf_trees_are_zero():
    X, C, _, _ = _data(n=30)
    forest = SPOForest(SP, n_estimators=3, min_samples_leaf=30, random_state=0).fit(X, C)
    assert all(est.get_n_leaves() == 1 for est in forest.estimators_)
    assert_array_equal(forest.feature_importances_, np.zeros(X.shape[1]))


# ------------------------------------------------------------------ OOB
@pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction")
def test_oob_prediction_and_score_by_brute_force():
    X, C, _, _ = _data(n=150)
    forest = SPOForest(SP, n_estimators=12, min_samples_leaf=10, oob_score=True,
                       random_state=5).fit(X, C)
    n = X.shape[0]
    expected = np.full(C.shape, np.nan)
    in_bag = [set(rows) for rows in forest.estimators_samples_]
    for i in range(n):
        preds = [est.predict(X[i:i + 1])[0] for est, bag in zip(forest.estimators_, in_bag)
                 if i not in bag]
        if preds:
            expected[i] = np.mean(preds, axis=0)
    has = ~np.isnan(expected[:, 0])
    assert has.sum() > 0.9 * n
    assert_allclose(forest.oob_prediction_, expected, rtol=1e-12, equal_nan=True)
    assert forest.oob_score_ == pytest.approx(
        -normalized_spo_loss(C[has], expected[has], problem=SP), rel=1e-12)
    assert forest.oob_score_ <= 0.0


def test_oob_warns_when_some_rows_are_never_out_of_bag():
    X, C, _, _ = _data(n=80)
    with pytest.warns(UserWarning, match="no out-of-bag prediction") as record:
        forest = SPOForest(SP, n_estimators=1, oob_score=True, random_state=0).fit(X, C)
    assert np.isfinite(forest.oob_score_)
    assert np.isnan(forest.oob_prediction_).any()
    # The warning counts the rows the one tree drew: they have no prediction.
    k = np.unique(forest.estimators_samples_[0]).size
    assert np.isnan(forest.oob_prediction_[:, 0]).sum() == k
    assert any(str(w.message).startswith(f"{k} of 80 training samples") for w in record)


@pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction:UserWarning")
def test_an_oob_score_without_weighted_out_of_bag_samples_is_nan_with_a_warning():
    # One row of positive weight: every bootstrap sample draws it (a sample of
    # rows of zero weight only is drawn again), so it is never out of bag.
    # oob_score_ was NaN without a word.
    X, C, _, _ = _data(n=60)
    sw = np.zeros(len(X))
    sw[7] = 1.0
    with pytest.warns(UserWarning, match="oob_score_ is NaN: no sample of positive weight "
                                         "was out of bag"):
        forest = SPOForest(SP, n_estimators=4, oob_score=True, random_state=0).fit(
            X, C, sample_weight=sw)
    assert all(7 in rows for rows in forest.estimators_samples_)
    assert np.isnan(forest.oob_score_)


def test_oob_needs_bootstrap():
    X, C, _, _ = _data(n=50)
    with pytest.raises(ValueError, match="needs bootstrap=True"):
        SPOForest(SP, n_estimators=2, bootstrap=False, oob_score=True).fit(X, C)


@pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction")
def test_refit_without_oob_drops_the_old_oob_score():
    X, C, _, _ = _data(n=80)
    forest = SPOForest(SP, n_estimators=10, oob_score=True, random_state=0).fit(X, C)
    forest.set_params(oob_score=False).fit(X, C)
    assert not hasattr(forest, "oob_score_")


# --------------------------------------------------------- determinism
def test_same_random_state_same_forest_for_any_n_jobs_and_backend():
    X, C, Xt, _ = _data()
    kw = dict(n_estimators=8, min_samples_leaf=10, max_features=2, random_state=11)
    ref = SPOForest(SP, n_jobs=1, **kw).fit(X, C).predict(Xt)
    assert_array_equal(SPOForest(SP, n_jobs=2, **kw).fit(X, C).predict(Xt), ref)
    with parallel_config(backend="loky"):
        assert_array_equal(SPOForest(SP, n_jobs=2, **kw).fit(X, C).predict(Xt), ref)
    other = SPOForest(SP, n_jobs=1, **dict(kw, random_state=12)).fit(X, C).predict(Xt)
    assert not np.array_equal(other, ref)


def test_same_random_state_same_forest_off_the_vertex_path():
    # Oracle path: each tree gets a private copy of the problem.
    X, C, Xt, _ = _data(n=120)
    problem = CallableProblem(_module_oracle, SP.n_costs, batched=True)
    kw = dict(n_estimators=4, min_samples_leaf=15, max_features=3, random_state=2)
    ref = SPOForest(problem, n_jobs=1, **kw).fit(X, C)
    par = SPOForest(problem, n_jobs=2, **kw).fit(X, C)
    assert_array_equal(par.predict(Xt), ref.predict(Xt))
    assert all(est.problem_ is par.problem_ for est in par.estimators_)


def test_linear_program_forest_on_threads_equals_the_sequential_one():
    # The user guide suggests threads for a short fit on a LinearProgram
    # (no worker processes to start): each tree solves on its own copy of
    # the problem, so the forest is the sequential one bit for bit.
    from spotree.problems import LinearProgram

    rng = np.random.default_rng(0)
    A = rng.uniform(0, 1, size=(6, 10))
    problem = LinearProgram(A_ub=A, b_ub=np.full(6, 2.0), bounds=(0, 1))
    X = rng.normal(size=(60, 3))
    C = X @ rng.normal(size=(3, 10)) + rng.normal(size=(60, 10))
    kw = dict(n_estimators=3, max_depth=2, criterion="spo", random_state=0)
    ref = SPOForest(problem, n_jobs=1, **kw).fit(X, C)
    with parallel_config(backend="threading"):
        par = SPOForest(problem, n_jobs=2, **kw).fit(X, C)
    for a, b in zip(ref.estimators_, par.estimators_):
        assert_array_equal(a.tree_.decision, b.tree_.decision)
        assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    assert_array_equal(par.predict_decision(X), ref.predict_decision(X))
    # The leaf decisions are optimal for the leaves' mean costs (scipy's linprog).
    from scipy.optimize import linprog

    tree = par.estimators_[0].tree_
    leaves = np.flatnonzero(tree.children_left < 0)
    assert len(leaves) > 1
    for node in leaves:
        opt = linprog(tree.value[node], A_ub=A, b_ub=np.full(6, 2.0), bounds=(0, 1)).fun
        assert tree.value[node] @ tree.decision[node] == pytest.approx(opt, abs=1e-9)


def test_threaded_trees_never_call_a_user_oracle_at_once():
    # On the vertex path the forest grows trees on threads sharing the
    # problem; a squared-error tree still calls it once for its leaves'
    # decisions, and a user's oracle (a solver model) need not be
    # thread-safe. Each call waits a while for a second one to come in
    # (before the fix, the two threads' calls overlapped).
    import threading

    cond = threading.Condition()
    inside = [0]
    overlaps = []

    def oracle(C):
        with cond:
            inside[0] += 1
            cond.notify_all()
            overlaps.append(cond.wait_for(lambda: inside[0] > 1, timeout=0.3))
            inside[0] -= 1
        return _module_oracle(C)

    X, C, Xt, _ = _data(n=100)
    problem = CallableProblem(oracle, SP.n_costs, batched=True, vertices=SP.vertices())
    kw = dict(n_estimators=6, criterion="mse", max_features=None, random_state=3)
    forest = SPOForest(problem, n_jobs=2, **kw).fit(X, C)
    assert forest.estimators_[0].n_oracle_calls_ > 0  # the leaves did call the oracle
    assert not any(overlaps)
    # The decisions are those of a tree grown alone, with the same oracle.
    ref = SPOForest(CallableProblem(_module_oracle, SP.n_costs, batched=True,
                                    vertices=SP.vertices()), n_jobs=1, **kw).fit(X, C)
    assert_array_equal(forest.predict_decision(Xt), ref.predict_decision(Xt))


class _CountingLock:
    """A lock that counts its acquisitions."""

    def __init__(self):
        import threading

        self._lock, self.n = threading.Lock(), 0

    def __enter__(self):
        self._lock.acquire()
        self.n += 1

    def __exit__(self, *exc):
        self._lock.release()


def test_threaded_trees_call_only_stateless_built_in_problems_at_once(monkeypatch):
    # The squared-error trees' one batched leaf solve took a process-wide lock
    # for every problem (at 16 threads a tree's time outside its growth rose
    # from 2.5 to 19 ms). Built-in problems whose solve keeps no state skip
    # it; a user's subclass of one (which may override the solve) does not,
    # and its calls never overlap.
    import threading

    from spotree.problems import Assignment, Knapsack, LinearProgram
    from spotree.problems._base import solve_is_thread_safe

    safe = [SP, FiniteDecisions(np.eye(3)), Assignment(2, 2),
            ShortestPath.from_edges(3, [(0, 1), (1, 2), (0, 2)], 0, 2)]
    assert all(solve_is_thread_safe(p) for p in safe)
    cond = threading.Condition()
    inside, overlaps = [0], []

    class MyPath(ShortestPath):
        def _solve(self, C):
            with cond:
                inside[0] += 1
                cond.notify_all()
                overlaps.append(cond.wait_for(lambda: inside[0] > 1, timeout=0.1))
                inside[0] -= 1
            return super()._solve(C)

    mine, patched = MyPath((3, 3)), ShortestPath((3, 3))
    patched.solve = lambda C: ShortestPath.solve(patched, C)
    unsafe = [mine, patched, Knapsack([[1.0, 2.0]], 2),
              LinearProgram(A_ub=[[1.0, 1.0]], b_ub=[1.0], bounds=(0, 1)),
              CallableProblem(_module_oracle, SP.n_costs, batched=True)]
    assert not any(solve_is_thread_safe(p) for p in unsafe)
    X, C, Xt, _ = _data(n=100)
    kw = dict(n_estimators=4, criterion="mse", n_jobs=2, random_state=0)
    for problem, turns in ((SP, 0), (mine, 4)):
        lock = _CountingLock()
        monkeypatch.setattr(spotree.forest, "_SHARED_PROBLEM_LOCK", lock)
        forest = SPOForest(problem, **kw).fit(X, C)
        assert lock.n == turns
    assert len(overlaps) >= 4 and not any(overlaps)
    assert_array_equal(forest.predict_decision(Xt),
                       SPOForest(SP, **dict(kw, n_jobs=1)).fit(X, C).predict_decision(Xt))


def test_an_error_in_one_threaded_tree_stops_the_others():
    # Trees on threads (here the oracle path under the threading backend):
    # when one tree's oracle call failed, fit raised, but the other threads
    # grew their trees to the end in the background (3,606 more oracle calls
    # and 2 s of CPU after the error on 3,000 rows). Tree A's thread fails
    # at its second call; tree B's second call waits until fit has raised,
    # and B must then make no further call.
    import threading

    release, b_went_on = threading.Event(), threading.Event()
    roles, calls = {}, {}

    def oracle(C):
        me = threading.current_thread()
        if me is threading.main_thread():
            return _module_oracle(C)
        with lock:
            role = roles.setdefault(me.ident, "AB"[len(roles)] if len(roles) < 2 else "?")
            calls[role] = calls.get(role, 0) + 1
            k = calls[role]
        if role == "A" and k == 2:
            raise RuntimeError("the solver's licence expired")
        if role == "B" and k == 2:
            release.wait(10)
        if role == "B" and k > 2 and release.is_set():
            b_went_on.set()
        return _module_oracle(C)

    lock = threading.Lock()
    X, C, _, _ = _data(n=200)
    problem = CallableProblem(oracle, SP.n_costs, batched=True)
    forest = SPOForest(problem, n_estimators=2, n_jobs=2, criterion="spo", max_features=None,
                       min_samples_leaf=2, random_state=0)
    with parallel_config(backend="threading"):
        with pytest.raises(RuntimeError, match="licence expired"):
            forest.fit(X, C)
    release.set()
    assert not b_went_on.wait(2.0)


class _LockedOracle:
    """A batched oracle holding a lock (as a solver handle would): no pickling."""

    def __init__(self):
        import threading

        self.lock = threading.Lock()

    def __call__(self, C):
        return _module_oracle(C)


def test_an_oracle_that_cannot_be_pickled_gets_the_problems_own_error():
    # On the oracle path trees grow in worker processes. joblib raised a bare
    # PicklingError ("Could not pickle the task"); CallableProblem documents a
    # TypeError that names the oracle and says how to make it picklable.
    X, C, _, _ = _data(n=60)
    problem = CallableProblem(_LockedOracle(), SP.n_costs, batched=True)
    with pytest.raises(TypeError, match="_LockedOracle .* cannot be pickled .*Make it "
                                        "picklable"):
        SPOForest(problem, n_estimators=2, n_jobs=2, criterion="spo").fit(X, C)
    # Threads need no pickling: the same problem fits there.
    with parallel_config(backend="threading"):
        SPOForest(problem, n_estimators=2, n_jobs=2, criterion="spo").fit(X, C)


class _LockedProblem(spotree.problems.DecisionProblem):
    """A user's subclass keeping a lock (a solver handle) under a plain name."""

    def __init__(self, attr="lock"):
        self.n_costs, self.sense = SP.n_costs, "min"
        setattr(self, attr, threading.Lock())

    def _solve(self, C):
        return SP.solve(C)


def test_a_subclass_that_cannot_be_pickled_is_named_with_its_attribute():
    # joblib's PicklingError was replaced by pickle's bare "cannot pickle
    # '_thread.lock' object", naming neither the problem nor the attribute,
    # nor the '_model' names that problems.rst says to use for solver handles.
    X, C, _, _ = _data(n=60)
    with pytest.raises(TypeError, match=r"The problem _LockedProblem cannot be pickled .*"
                                        r"Its attribute 'lock' \(lock\) cannot be pickled\. "
                                        r".*start with '_model'"):
        SPOForest(_LockedProblem(), n_estimators=2, n_jobs=2, criterion="spo").fit(X, C)
    # The documented fix: under a '_model' name the lock is dropped on pickling.
    back = pickle.loads(pickle.dumps(_LockedProblem("_model_lock")))
    assert not hasattr(back, "_model_lock") and back.n_costs == SP.n_costs


def test_same_random_state_same_forest_on_a_dask_cluster():
    distributed = pytest.importorskip("distributed")
    X, C, Xt, _ = _data()
    kw = dict(n_estimators=8, min_samples_leaf=10, max_features=2, random_state=11)
    ref = SPOForest(SP, n_jobs=1, **kw).fit(X, C).predict(Xt)
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        with parallel_config(backend="dask"):
            forest = SPOForest(SP, n_jobs=2, **kw).fit(X, C)
        assert_array_equal(forest.predict(Xt), ref)
        # Grown with warm_start on the cluster: the same forest again.
        warm = SPOForest(SP, warm_start=True, **dict(kw, n_estimators=5)).fit(X, C)
        with parallel_config(backend="dask"):
            warm.set_params(n_estimators=8, n_jobs=2).fit(X, C)
        assert_array_equal(warm.predict(Xt), ref)
    finally:
        client.close()
        cluster.close()


def test_random_state_instance_is_accepted():
    X, C, Xt, _ = _data(n=100)
    a = SPOForest(SP, n_estimators=3, random_state=np.random.RandomState(4)).fit(X, C)
    b = SPOForest(SP, n_estimators=3, random_state=4).fit(X, C)
    assert_array_equal(a.predict(Xt), b.predict(Xt))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n_estimators=st.integers(1, 4),
       leaf=st.integers(1, 30), bootstrap=st.booleans())
def test_predictions_are_convex_combinations_of_training_costs(seed, n_estimators, leaf,
                                                               bootstrap):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(60, 2))
    C = rng.uniform(0.5, 2.0, size=(60, 3))
    forest = SPOForest(n_estimators=n_estimators, min_samples_leaf=leaf, bootstrap=bootstrap,
                       random_state=seed).fit(X, C)
    P = forest.predict(rng.uniform(-0.5, 1.5, size=(40, 2)))
    tol = 1e-12
    assert (P >= C.min(axis=0) - tol).all() and (P <= C.max(axis=0) + tol).all()
    # Leaves hold at least min_samples_leaf drawn rows.
    for est in forest.estimators_:
        t = est.tree_
        assert (t.weighted_n_node_samples[t.is_leaf] >= min(leaf, 60) - 1e-9).all()


# ---------------------------------------------------------- verbose
def test_verbose_reports_progress_and_is_silent_by_default(capfd):
    X, C, _, _ = _data(n=60)
    SPOForest(SP, n_estimators=3, random_state=0).fit(X, C)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    SPOForest(SP, n_estimators=3, random_state=0, verbose=10).fit(X, C)
    out, err = capfd.readouterr()
    assert "Done" in out + err


# ------------------------------------------------------------- tuning
def test_tune_max_features_scores_every_candidate_on_validation_data():
    X, C, Xt, Ct = _data(n=200)
    X_val, C_val = Xt[:80], Ct[:80]
    template = SPOForest(SP, n_estimators=6, min_samples_leaf=10, random_state=3)
    best, table = tune_max_features(template, X, C, X_val, C_val, candidates=(1, 2, 5))
    assert table.max_features == [1, 2, 5]
    for f, loss in zip(table.max_features, table.val_loss):
        alone = SPOForest(SP, n_estimators=6, min_samples_leaf=10, random_state=3,
                          max_features=f).fit(X, C)
        assert loss == -alone.score(X_val, C_val)
    k = int(np.argmin(table.val_loss))
    assert table.best_index == k and table.best_max_features == table.max_features[k]
    assert best.max_features == table.best_max_features
    assert template.max_features == "sqrt"  # the template is untouched
    assert not hasattr(template, "estimators_")
    assert -best.score(X_val, C_val) == table.val_loss.min()


def test_tune_max_features_refit_uses_training_and_validation_rows():
    X, C, Xt, Ct = _data(n=120)
    template = SPOForest(SP, n_estimators=4, min_samples_leaf=10, random_state=1)
    best, table = tune_max_features(template, X, C, Xt[:50], Ct[:50], candidates=(2, 3),
                                    refit=True)
    direct = SPOForest(SP, n_estimators=4, min_samples_leaf=10, random_state=1,
                       max_features=table.best_max_features).fit(
        np.vstack([X, Xt[:50]]), np.vstack([C, Ct[:50]]))
    assert_array_equal(best.predict(Xt), direct.predict(Xt))


def test_tune_max_features_refit_with_a_random_state_instance_is_a_fit_of_the_template():
    # As GridSearchCV's refit: a clone of the template with the chosen
    # max_features, its RandomState as given (every candidate grew from a
    # copy of it), not the state that the chosen candidate's fit consumed.
    X, C, Xt, Ct = _data(n=80)
    template = SPOForest(SP, n_estimators=3, max_depth=2,
                         random_state=np.random.RandomState(3))
    best, table = tune_max_features(template, X, C, Xt[:40], Ct[:40], candidates=(1, 2),
                                    refit=True)
    direct = SPOForest(SP, n_estimators=3, max_depth=2, random_state=np.random.RandomState(3),
                       max_features=table.best_max_features).fit(
        np.vstack([X, Xt[:40]]), np.vstack([C, Ct[:40]]))
    assert_array_equal(best.predict(Xt), direct.predict(Xt))
    # The candidates' forests too start from the template's state.
    alone = SPOForest(SP, n_estimators=3, max_depth=2, random_state=np.random.RandomState(3),
                      max_features=1).fit(X, C)
    assert table.val_loss[0] == -alone.score(Xt[:40], Ct[:40])


def test_tune_max_features_rejects_bad_arguments():
    X, C, Xt, Ct = _data(n=60)
    with pytest.raises(TypeError, match="forest must be an SPOForest"):
        tune_max_features(SPOTree(SP), X, C, Xt, Ct)
    with pytest.raises(ValueError, match="candidates must hold"):
        tune_max_features(SPOForest(SP), X, C, Xt, Ct, candidates=())
    with pytest.raises(ValueError, match="'max_features' parameter of SPOForest"):
        tune_max_features(SPOForest(SP, n_estimators=2), X, C, Xt, Ct, candidates=(0,))
    # Taken by its truth, refit="no" refitted on the validation rows too.
    with pytest.raises(ValueError, match="The 'refit' parameter of tune_max_features must be "
                                         "a bool. Got 'no' instead."):
        tune_max_features(SPOForest(SP, n_estimators=2), X, C, Xt, Ct, refit="no")


@pytest.mark.parametrize("val, match", [
    (dict(X_val=np.ones((5, 3))), r"^X_val: X has 3 features, but SPOForest is expecting 5"),
    (dict(X_val=np.full((5, 5), np.inf)), r"^X_val: Input X contains infinity"),
    (dict(C_val=np.ones((5, 4))), r"^C_val has 4 columns but the problem has n_costs=12"),
    (dict(C_val=np.ones((6, 12))), r"^X_val and C_val must have the same number of rows"),
    (dict(sample_weight_val=np.ones(3)), r"^sample_weight_val must have shape \(5,\)"),
    (dict(sample_weight_val=-np.ones(5)), r"^sample_weight_val contains negative"),
    # No validation loss exists when the optimal values are all zero (this
    # came from score() after the first forest grew, as 'z*(C_true)').
    (dict(C_val=np.zeros((5, 12))), r"^The optimal values of C_val are all zero"),
    (dict(C_val=np.vstack([np.zeros((2, 12)), np.ones((3, 12))]),
          sample_weight_val=np.array([1.0, 2.0, 0.0, 0.0, 0.0])),
     r"^The optimal values of C_val are all zero on the rows of positive sample_weight_val")])
@pytest.mark.parametrize("refit", [False, True])
def test_tune_max_features_names_a_bad_validation_set_before_growing_forests(
        val, match, refit, monkeypatch):
    # The validation set was first checked by score(), after the first forest
    # was grown, under the names X, C and sample_weight.
    X, C, Xt, Ct = _data(n=60)
    args = dict(X_val=Xt[:5], C_val=Ct[:5], sample_weight_val=None)
    args.update(val)

    def no_growth(*a, **k):
        raise AssertionError("a forest was grown")

    monkeypatch.setattr(SPOForest, "_grow", no_growth)
    with pytest.raises(ValueError, match=match):
        tune_max_features(SPOForest(SP, n_estimators=2), X, C, candidates=(1, 2),
                          refit=refit, **args)


# -------------------------------------------------------- persistence
@pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction")
def test_pickle_round_trip_keeps_predictions_and_shared_problem():
    X, C, Xt, _ = _data()
    forest = SPOForest(SP, n_estimators=5, min_samples_leaf=10, oob_score=True,
                       random_state=0).fit(X, C)
    back = pickle.loads(pickle.dumps(forest))
    assert_array_equal(back.predict(Xt), forest.predict(Xt))
    assert_array_equal(back.predict_decision(Xt), forest.predict_decision(Xt))
    assert back.oob_score_ == forest.oob_score_
    assert all(est.problem_ is back.problem_ for est in back.estimators_)


@pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction")
@pytest.mark.parametrize("criterion", ["spo", "mse"])
def test_save_load_round_trip(tmp_path, criterion):
    X, C, Xt, Ct = _data()
    forest = SPOForest(SP, n_estimators=5, criterion=criterion, min_samples_leaf=10,
                       max_features=3, oob_score=True, random_state=0).fit(X, C)
    path = tmp_path / "forest.json"
    forest.save(path)
    back = spotree.load(path)
    assert isinstance(back, SPOForest)
    assert back.get_params(deep=False)["criterion"] == criterion
    assert back.max_features == 3 and back.n_estimators == 5
    assert_array_equal(back.predict(Xt), forest.predict(Xt))
    assert_array_equal(back.predict_decision(Xt), forest.predict_decision(Xt))
    assert back.score(Xt, Ct) == forest.score(Xt, Ct)
    assert back.oob_score_ == forest.oob_score_
    assert_array_equal(back.feature_importances_, forest.feature_importances_)
    for est_back, est in zip(back.estimators_, forest.estimators_):
        assert isinstance(est_back, SPOTree)
        assert est_back.problem_ is back.problem_
        # Per-tree importances are rebuilt from the stored node losses (the
        # builder's noise threshold is not in the file: equal up to noise).
        assert_allclose(est_back.feature_importances_, est.feature_importances_,
                        rtol=1e-12, atol=1e-12)
        assert_array_equal(est_back.predict_decision(Xt), est.predict_decision(Xt))


def test_save_load_keeps_feature_names(tmp_path):
    pd = pytest.importorskip("pandas")
    X, C, Xt, _ = _data(n=100)
    cols = [f"x{j}" for j in range(X.shape[1])]
    forest = SPOForest(SP, n_estimators=3, random_state=0).fit(pd.DataFrame(X, columns=cols), C)
    # The trees know the names too: they predict on the DataFrame silently.
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        forest.estimators_[0].predict(pd.DataFrame(Xt, columns=cols))
    forest.save(tmp_path / "f.json")
    back = spotree.load(tmp_path / "f.json")
    assert list(back.feature_names_in_) == cols
    assert_array_equal(back.predict(pd.DataFrame(Xt, columns=cols)),
                       forest.predict(pd.DataFrame(Xt, columns=cols)))


def test_load_rejects_a_forest_file_with_the_wrong_number_of_trees(tmp_path):
    import json

    X, C, _, _ = _data(n=60)
    SPOForest(SP, n_estimators=3, random_state=0).fit(X, C).save(tmp_path / "f.json")
    doc = json.loads((tmp_path / "f.json").read_text())
    doc["trees"] = doc["trees"][:2]
    (tmp_path / "g.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="n_estimators=3 holds 2 trees"):
        spotree.load(tmp_path / "g.json")


# ---------------------------------------------------------- bad input
def test_predict_before_fit_raises_not_fitted():
    X, _, _, _ = _data(n=20)
    forest = SPOForest(SP)
    for method in (forest.predict, forest.predict_decision, forest.apply):
        with pytest.raises(NotFittedError):
            method(X)


@pytest.mark.parametrize("case", ["inf_X", "nan_C", "inf_C", "width", "rows", "neg_w",
                                  "zero_w", "C_none", "X_1d"])
def test_bad_input_fails_like_spotree(case):
    X, C, _, _ = _data(n=40)
    sw = None
    if case == "inf_X":  # NaN is a missing value; infinity is an error
        X = X.copy()
        X[3, 1] = np.inf
    elif case == "nan_C":
        C = C.copy()
        C[5, 2] = np.nan
    elif case == "inf_C":
        C = C.copy()
        C[5, 2] = np.inf
    elif case == "width":
        C = C[:, :-1]
    elif case == "rows":
        C = C[:-1]
    elif case == "neg_w":
        sw = np.ones(X.shape[0])
        sw[2] = -1.0
    elif case == "zero_w":
        sw = np.zeros(X.shape[0])
    elif case == "X_1d":
        X = X[:, 0]
    if case == "C_none":
        with pytest.raises(ValueError, match="realized costs C"):
            SPOForest(SP, n_estimators=2).fit(X, None)
        return
    with pytest.raises(ValueError) as tree_err:
        SPOTree(SP).fit(X, C, sample_weight=sw)
    with pytest.raises(ValueError) as forest_err:
        SPOForest(SP, n_estimators=2).fit(X, C, sample_weight=sw)
    assert str(forest_err.value).replace("SPOForest", "SPOTree") == str(tree_err.value)


def test_predict_checks_the_features():
    X, C, _, _ = _data(n=60)
    forest = SPOForest(SP, n_estimators=2, random_state=0).fit(X, C)
    with pytest.raises(ValueError, match="features"):
        forest.predict(X[:, :3])
    with pytest.raises(ValueError, match="features"):
        forest.score(X[:, :3], C)
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        forest.predict(bad)


@pytest.mark.parametrize("param, value, expected", [
    ("n_estimators", 0, "an int in the range [1, inf)"),
    ("criterion", "gini", "a str among {'spo', 'mse', 'auto'}"),
    ("max_features", 0, "an int in the range [1, inf)"),
    ("max_features", "all", "a str among {'sqrt', 'log2'}"),
    ("bootstrap", "yes", "a bool"),
    ("max_samples", 1.5, "a float in the range (0.0, 1.0]"),
    ("min_samples_leaf", 0, "an int in the range [1, inf)"),
    ("n_jobs", 0, "an int in the range (-inf, -1]"),
    ("thresholds", "some", "a str among {'all'}"),
])
def test_bad_parameters_are_named(param, value, expected):
    X, C, _, _ = _data(n=30)
    with pytest.raises(ValueError) as err:
        SPOForest(SP, **{param: value}).fit(X, C)
    msg = str(err.value)
    assert msg.startswith(f"The {param!r} parameter of SPOForest must be")
    assert expected in msg and msg.endswith(f"Got {value!r} instead.")


def test_problem_must_be_a_decision_problem():
    X, C, _, _ = _data(n=30)
    with pytest.raises(TypeError, match="DecisionProblem"):
        SPOForest("shortest path").fit(X, C)


# ------------------------------------------------- scikit-learn checks
_NAMED_C = ("fit and score take the realized costs as C, not y (the spotree API, shared "
            "with SPOTree); this check passes y by keyword or requires the name y")
PRINCIPLED = {
    "check_fit_score_takes_y": _NAMED_C,
    "check_n_features_in_after_fitting": _NAMED_C,
    "check_sample_weight_equivalence_on_dense_data": _NAMED_C + "; with bootstrap=True, "
    "besides, samples drawn from repeated rows differ from samples drawn from weighted rows, "
    "as for scikit-learn's random forests",
}


# The "auto" forest's 3 trees leave rows out of no bootstrap sample (a warning).
@pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction:UserWarning")
@parametrize_with_checks([SPOForest(n_estimators=3, random_state=0),
                          SPOForest(n_estimators=3, criterion="mse", bootstrap=False,
                                    max_features=None, random_state=0),
                          SPOForest(n_estimators=3, criterion="auto", random_state=0)],
                         expected_failed_checks=lambda est: PRINCIPLED)
def test_sklearn_compatible(estimator, check):
    check(estimator)


class _TargetNamedY(SPOForest):
    """SPOForest with its target argument renamed from C to y, nothing else."""

    def fit(self, X, y=None, sample_weight=None):
        return super().fit(X, y, sample_weight=sample_weight)

    def score(self, X, y=None, sample_weight=None):
        return super().score(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("check", [check_fit_score_takes_y, check_n_features_in_after_fitting,
                                   check_sample_weight_equivalence_on_dense_data])
@pytest.mark.parametrize("criterion", ["spo", "mse"])
def test_failed_checks_only_fail_on_the_name(check, criterion):
    # Without bootstrap, weights and repeated rows give the same forest.
    est = _TargetNamedY(n_estimators=3, criterion=criterion, bootstrap=False, random_state=0)
    check(type(est).__name__, est)


def test_bootstrap_is_why_weights_differ_from_repeated_rows():
    est = _TargetNamedY(n_estimators=3, random_state=0)
    with pytest.raises(AssertionError):
        check_sample_weight_equivalence_on_dense_data(type(est).__name__, est)


def test_clone_and_get_params():
    from sklearn.base import clone

    forest = SPOForest(SP, n_estimators=7, max_features=0.5, oob_score=True)
    c = clone(forest)
    assert c.get_params()["n_estimators"] == 7 and c.get_params()["max_features"] == 0.5
    assert copy.deepcopy(forest).get_params(deep=False).keys() == forest.get_params(
        deep=False).keys()


# ------------------------------------------------ the tree's parameters
def _mixed_frame(n=240, seed=0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    city = rng.choice(["A", "B", "C", "D"], n)
    x = rng.uniform(size=(n, 2))
    # Road 0 is cheap in A and C (a subset split), and where x0 is large.
    cheap = np.isin(city, ["A", "C"]) ^ (x[:, 0] > 0.8)
    C = np.column_stack([np.where(cheap, 1.0, 3.0), np.full(n, 2.0)])
    C = C + rng.normal(scale=0.6, size=C.shape)
    return pd.DataFrame({"x0": x[:, 0], "city": city, "x1": x[:, 1]}), C


@pytest.mark.parametrize("param, value", [
    ("min_samples_split", 60), ("min_weight_fraction_leaf", 0.1),
    ("categorical_splits", "subset"), ("spo_weight", 0.5),
    ("min_loss_decrease", "5% of the root loss"), ("ccp_alpha", "1% of the root loss")])
def test_every_parameter_of_the_tree_reaches_the_forests_trees(param, value):
    X, C = _mixed_frame()
    roads = FiniteDecisions(np.eye(2))
    default = SPOTree(roads).fit(X, C)
    if isinstance(value, str) and value.endswith("root loss"):
        value = float(value.split("%")[0]) / 100 * default.tree_.impurity[0]
    tree = SPOTree(roads, **{param: value}).fit(X, C)
    # The parameter changes the tree ...
    assert (tree.tree_.node_count != default.tree_.node_count
            or not np.array_equal(tree.tree_.threshold, default.tree_.threshold,
                                  equal_nan=True)
            or any(a.size != b.size or (a != b).any()
                   for a, b in zip(tree.tree_.categories, default.tree_.categories)))
    # ... and the forest grows that tree.
    forest = SPOForest(roads, n_estimators=1, bootstrap=False, max_features=None,
                       ridge_features=False, random_state=0, **{param: value}).fit(X, C)
    assert forest.get_params()[param] == value
    t_f, t_s = forest.estimators_[0].tree_, tree.tree_
    for name in ("children_left", "feature", "threshold", "value", "loss", "impurity"):
        assert_array_equal(getattr(t_f, name), getattr(t_s, name))
    for a, b in zip(t_f.categories, t_s.categories):
        assert_array_equal(a, b)


def test_a_mixed_criterion_forest_keeps_its_trees_loss_scales_through_a_file(tmp_path):
    X, C = _mixed_frame()
    roads = FiniteDecisions(np.eye(2))
    forest = SPOForest(roads, n_estimators=3, spo_weight=0.5, random_state=0).fit(X, C)
    scales = [est.loss_scales_ for est in forest.estimators_]
    assert all(s != (1.0, 1.0) for s in scales)
    forest.save(tmp_path / "f.json")
    back = spotree.load(tmp_path / "f.json")
    assert [est.loss_scales_ for est in back.estimators_] == scales
    # A hand edit of them is refused, naming the key.
    import json

    doc = json.loads((tmp_path / "f.json").read_text())
    for bad in (None, [[1.0, -1.0]] * 3, [[1.0, 1.0]] * 2, "x"):
        doc["fitted"]["_trees_loss_scales"] = bad
        (tmp_path / "g.json").write_text(json.dumps(doc))
        with pytest.raises(ValueError, match="fitted._trees_loss_scales must list 3 pairs"):
            spotree.load(tmp_path / "g.json")
    # So a loaded tree prunes as the fitted one (the mixed criterion needs them).
    Xv, Cv = _mixed_frame(seed=1)
    for a, b in zip(forest.estimators_, back.estimators_):
        assert a.prune(Xv, Cv).get_n_leaves() == b.prune(Xv, Cv).get_n_leaves()


def test_tune_max_features_refit_on_dataframes_with_a_text_column():
    # The refit stacks the raw frames (before: their arrays, which fail on text).
    X, C = _mixed_frame()
    roads = FiniteDecisions(np.eye(2))
    template = SPOForest(roads, n_estimators=3, min_samples_leaf=5, random_state=0)
    best, res = tune_max_features(template, X.iloc[:160], C[:160], X.iloc[160:], C[160:],
                                  candidates=(1, 3), refit=True)
    import pandas as pd

    ref = SPOForest(roads, n_estimators=3, min_samples_leaf=5, random_state=0,
                    max_features=res.best_max_features).fit(
        pd.concat([X.iloc[:160], X.iloc[160:]], ignore_index=True), C)
    assert best.category_values_ == ref.category_values_ == [None, ["A", "B", "C", "D"], None]
    assert_array_equal(best.predict(X), ref.predict(X))


def test_tune_max_features_refit_keeps_the_training_frames_feature_names():
    # A training DataFrame with validation rows as an array: the refit stacked
    # both as arrays and lost feature_names_in_ (refit=False keeps them), so
    # predicting from a DataFrame warned "fitted without feature names".
    X, C, _, _ = _data(n=120)
    frame = pd.DataFrame(X, columns=list("abcde"))
    template = SPOForest(SP, n_estimators=3, min_samples_leaf=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scoring the array of validation rows
        best, res = tune_max_features(template, frame.iloc[:90], C[:90], X[90:], C[90:],
                                      candidates=(1, 3), refit=True)
    assert list(best.feature_names_in_) == list("abcde")
    ref = clone(template).set_params(max_features=res.best_max_features).fit(frame, C)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_array_equal(best.predict(frame), ref.predict(frame))


# ------------------------------------------------------- ridge features
def _ridge_reference(X, C, w, alpha):
    """Each cost's ridge prediction, by scikit-learn, on X standardized with weights.

    ``alpha[j]``: cost j's penalty relative to the total weight. Missing values
    are replaced by their column's weighted mean over the rows with a value.
    """
    from sklearn.linear_model import Ridge

    X = X.copy()
    for j in range(X.shape[1]):
        have = ~np.isnan(X[:, j])
        X[~have, j] = np.sum(w[have] * X[have, j]) / np.sum(w[have])
    mean = np.sum(w[:, None] * X, axis=0) / w.sum()
    sd = np.sqrt(np.sum(w[:, None] * (X - mean) ** 2, axis=0) / w.sum())
    Z = (X - mean) / sd
    return np.column_stack([Ridge(alpha=alpha[j] * w.sum()).fit(Z, C[:, j], sample_weight=w)
                            .predict(Z) for j in range(C.shape[1])])


def _folded_importances(t, coef, sd, columns, p):
    """A tree's normalized impurity decrease per feature, ridge columns shared out."""
    imp = np.zeros(p + coef.shape[0])
    for node in np.flatnonzero(t.children_left >= 0):
        kids = t.children_left[node], t.children_right[node]
        imp[t.feature[node]] += t.impurity[node] - sum(t.impurity[k] for k in kids)
    share = np.abs(coef) * sd
    share /= share.sum(axis=1, keepdims=True)
    folded = imp[:p].copy()
    folded[columns] += imp[p:] @ share
    return folded / folded.sum()


def test_ridge_features_are_each_costs_ridge_prediction_from_the_numeric_features():
    from spotree._ridge import _ridge_gcv

    rng = np.random.default_rng(5)
    n = 120
    X = np.column_stack([rng.normal(size=n) * 50 + 3, rng.integers(0, 3, n),
                         rng.uniform(size=n), rng.normal(size=n)])
    X[rng.uniform(size=n) < 0.2, 2] = np.nan  # missing values in a numeric column
    C = np.column_stack([X[:, 0] / 50 + rng.normal(size=n),
                         2 * np.nan_to_num(X[:, 2]) + X[:, 1], rng.normal(size=n)])
    w = rng.uniform(0.5, 2.0, n)
    forest = SPOForest(FiniteDecisions(np.eye(3)), n_estimators=2, categorical_features=[1],
                       random_state=0).fit(X, C, sample_weight=w)
    fmap = forest.ridge_features_
    numeric = [0, 2, 3]  # the categorical column 1 is not read
    assert_array_equal(fmap.columns, numeric)
    have = ~np.isnan(X[:, 2])
    fill = np.sum(w[have] * X[have, 2]) / np.sum(w[have])
    _, _, alpha = _ridge_gcv(np.where(np.isnan(X[:, numeric]), [0.0, fill, 0.0],
                                      X[:, numeric]), C, w)
    expected = _ridge_reference(X[:, numeric], C, w, alpha)
    assert_allclose(fmap.transform(X), expected, rtol=1e-8, atol=1e-8)
    # Importances: a ridge column's share goes to the columns it reads (not
    # to the categorical one), by weighted standardized coefficients.
    Xf = np.where(np.isnan(X[:, numeric]), [0.0, fill, 0.0], X[:, numeric])
    mean = np.sum(w[:, None] * Xf, axis=0) / w.sum()
    sd = np.sqrt(np.sum(w[:, None] * (Xf - mean) ** 2, axis=0) / w.sum())
    for est in forest.estimators_:
        assert_allclose(est.feature_importances_,
                        _folded_importances(est.tree_, fmap.coef, sd, numeric, X.shape[1]),
                        rtol=1e-8, atol=1e-12)
    # A new row with a missing value gets the training mean's prediction.
    row = np.array([[3.0, 1.0, np.nan, 0.5]])
    filled = row.copy()
    filled[0, 2] = fill
    assert_allclose(fmap.transform(row), fmap.transform(filled))


def test_a_forest_with_ridge_features_is_a_forest_on_the_appended_predictions():
    X, C, Xt, Ct = _data(n=200)
    forest = SPOForest(SP, n_estimators=5, min_samples_leaf=5, random_state=4).fit(X, C)
    from spotree._ridge import _ridge_gcv

    alpha = _ridge_gcv(X, C, np.ones(len(X)))[2]
    R = _ridge_reference(X, C, np.ones(len(X)), alpha)
    # The test rows' columns: the same fits applied to them.
    from sklearn.linear_model import Ridge

    mean, sd = X.mean(axis=0), X.std(axis=0)
    Rt = np.column_stack([Ridge(alpha=alpha[j] * len(X)).fit((X - mean) / sd, C[:, j])
                          .predict((Xt - mean) / sd) for j in range(C.shape[1])])
    plain = SPOForest(SP, n_estimators=5, min_samples_leaf=5, ridge_features=False,
                      random_state=4).fit(np.hstack([X, R]), C)
    assert forest.ridge_features_.n_out == SP.n_costs
    assert_allclose(forest.predict(Xt), plain.predict(np.hstack([Xt, Rt])), rtol=1e-10)
    for a, b in zip(forest.estimators_, plain.estimators_):
        assert_array_equal(a.tree_.feature, b.tree_.feature)
        # The forest's own trees read the features and add the columns themselves.
        assert_allclose(a.predict(Xt), b.predict(np.hstack([Xt, Rt])), rtol=1e-10)
    assert (forest.estimators_[0].tree_.feature >= X.shape[1]).any()  # ridge columns used
    assert forest.score(Xt, Ct) == pytest.approx(-normalized_spo_loss(
        Ct, plain.predict(np.hstack([Xt, Rt])), problem=SP))


def test_ridge_features_of_features_from_two_to_the_1023():
    # Features scaled by a power of two into [2^1023, 2^1024): their unit, the
    # power of two above the largest, was 2^1024 = inf, every feature divided
    # by it 0, and the ridge's SVD raised LinAlgError; the missing values'
    # fill (a weighted sum of features) overflowed to inf. Rescaling by a
    # power of two changes neither the ridge columns' splits nor the fill.
    X, C, Xt, _ = _data(n=60)
    X[::7, 1] = np.nan
    k = 1024 - np.frexp(np.nanmax(np.abs(X)))[1]  # (2^k itself may not be a float)
    assert 2.0 ** 1023 <= np.nanmax(np.abs(np.ldexp(X, k))) < np.inf
    forest = SPOForest(SP, n_estimators=3, min_samples_leaf=5, random_state=0)
    a = clone(forest).fit(X, C)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way
        b = clone(forest).fit(np.ldexp(X, k), C)
    assert b.ridge_features_.fill[1] == pytest.approx(np.ldexp(np.nanmean(X[:, 1]), k),
                                                      rel=1e-12)
    assert_array_equal(b.predict(np.ldexp(Xt, k)), a.predict(Xt))


def test_ridge_feature_importances_are_shared_by_standardized_coefficients():
    X, C, _, _ = _data(n=200)
    X = X * np.array([1.0, 10.0, 0.1, 3.0, 1.0])  # scales must not matter
    forest = SPOForest(SP, n_estimators=4, min_samples_leaf=5, random_state=1).fit(X, C)
    fmap = forest.ridge_features_
    p = X.shape[1]
    per_tree = []
    for est in forest.estimators_:
        per_tree.append(_folded_importances(est.tree_, fmap.coef, X.std(axis=0), np.arange(p), p))
        assert_allclose(est.feature_importances_, per_tree[-1], rtol=1e-8, atol=1e-12)
    mean = np.mean(per_tree, axis=0)
    assert_allclose(forest.feature_importances_, mean / mean.sum(), rtol=1e-8, atol=1e-12)


def test_many_costs_get_the_leading_principal_components_of_the_predictions(monkeypatch):
    import spotree.forest as forest_module

    monkeypatch.setattr(forest_module, "_RIDGE_MAX_COLUMNS", 3)
    X, C, Xt, _ = _data(n=150)
    forest = SPOForest(SP, n_estimators=2, random_state=0).fit(X, C)
    fmap = forest.ridge_features_
    assert fmap.kind == "component" and fmap.n_out == 3
    from spotree._ridge import _ridge_gcv

    coef, intercept, _ = _ridge_gcv(X, C, np.ones(len(X)))
    F = X @ coef.T + intercept
    Fc = F - F.mean(axis=0)
    T = fmap.transform(X)
    Tc = T - T.mean(axis=0)
    # Orthonormal directions of the predictions, largest variance first ...
    assert_allclose(fmap.coef @ np.linalg.pinv(coef) @ coef, fmap.coef, atol=1e-8)
    cov = Tc.T @ Tc
    assert_allclose(cov - np.diag(np.diag(cov)), 0.0, atol=1e-8 * cov.max())
    top = np.linalg.svd(Fc, compute_uv=False)[:3] ** 2
    assert_allclose(np.diag(cov), top, rtol=1e-8)
    assert fmap.names() == ["ridge_component[0]", "ridge_component[1]", "ridge_component[2]"]
    # Below the cap, as many components as carry 99% of the fitted costs'
    # variance (here 4 of the 5 that 5 features span).
    monkeypatch.setattr(forest_module, "_RIDGE_MAX_COLUMNS", 8)
    fmap = SPOForest(SP, n_estimators=2, random_state=0).fit(X, C).ridge_features_
    var = np.linalg.svd(Fc, compute_uv=False) ** 2
    k = next(j + 1 for j in range(var.size) if var[:j + 1].sum() >= 0.99 * var.sum())
    assert k == 4 and np.linalg.matrix_rank(Fc) == X.shape[1]
    assert fmap.kind == "component" and fmap.n_out == k
    T = fmap.transform(X)
    assert_allclose(np.linalg.svd(T - T.mean(axis=0), compute_uv=False) ** 2, var[:k], rtol=1e-8)


@pytest.mark.parametrize("k", [530, -600])
@pytest.mark.parametrize("max_columns", [64, 3])
def test_ridge_features_scale_exactly_with_the_costs_far_from_one(k, max_columns, monkeypatch):
    # Costs times 2^k: the same penalties by leave-one-out and the coefficients
    # times 2^k, exactly (the computation is exact in powers of two), without a
    # warning. Squares of costs near 1e160 overflowed: every leave-one-out
    # error was inf, every cost got the largest penalty (and 17 warnings); near
    # 1e-180 they vanished to 0 and every cost got the smallest. The
    # components' variances (max_columns=3) overflowed too.
    import spotree.forest as forest_module
    from spotree._ridge import _ridge_gcv

    monkeypatch.setattr(forest_module, "_RIDGE_MAX_COLUMNS", max_columns)
    X, C, Xt, _ = _data(n=150)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(X))
    f = 2.0 ** k
    coef, intercept, alpha = _ridge_gcv(X, C, w)
    assert len(set(alpha)) > 1  # the data make the penalties differ by cost
    kw = dict(n_estimators=4, criterion="spo", min_samples_leaf=5, random_state=0)
    base = SPOForest(SP, **kw).fit(X, C, sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        coef_f, intercept_f, alpha_f = _ridge_gcv(X, C * f, w)
        scaled = SPOForest(SP, **kw).fit(X, C * f, sample_weight=w)
        decisions = scaled.predict_decision(Xt)
    assert_array_equal(alpha_f, alpha)
    assert_array_equal(coef_f, coef * f)
    assert_array_equal(intercept_f, intercept * f)
    assert base.ridge_features_.n_out == min(max_columns, SP.n_costs)
    assert_array_equal(scaled.ridge_features_.coef, base.ridge_features_.coef * f)
    assert_array_equal(scaled.ridge_features_.fold, base.ridge_features_.fold)
    assert_array_equal(decisions, base.predict_decision(Xt))


@pytest.mark.parametrize("k", [600, -600])
def test_ridge_features_of_features_far_from_one_are_the_same(k):
    # Features times 2^k: the same ridge columns and forest. The features'
    # weighted variances overflowed at 2^600 (NaN columns) and vanished at
    # 2^-600 (the features counted as constant).
    X, C, Xt, _ = _data(n=150)
    s = np.array([2.0 ** k, 1.0, 2.0 ** k, 1.0, 2.0 ** k])
    base = SPOForest(SP, n_estimators=3, random_state=0).fit(X, C)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaled = SPOForest(SP, n_estimators=3, random_state=0).fit(X * s, C)
        P = scaled.predict(Xt * s)
    assert_allclose(scaled.ridge_features_.transform(Xt * s), base.ridge_features_.transform(Xt),
                    rtol=1e-12)
    assert_array_equal(P, base.predict(Xt))


def test_a_forest_on_costs_of_1e160_decides_as_on_the_costs_themselves():
    X, C, Xt, _ = _data(n=150)
    base = SPOForest(SP, n_estimators=5, random_state=0).fit(X, C)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = SPOForest(SP, n_estimators=5, random_state=0).fit(X, C * 1e160)
        decisions = big.predict_decision(Xt)
    assert_allclose(big.ridge_features_.fold, base.ridge_features_.fold, rtol=1e-10)
    assert_allclose(big.ridge_features_.coef, base.ridge_features_.coef * 1e160, rtol=1e-10)
    assert big.criterion_ == base.criterion_
    assert_array_equal(decisions, base.predict_decision(Xt))


def test_ridge_features_survive_a_file_and_a_malformed_map_is_named(tmp_path):
    import json

    X, C, Xt, _ = _data(n=150)
    forest = SPOForest(SP, n_estimators=3, random_state=0).fit(X, C)
    forest.save(tmp_path / "f.json")
    back = spotree.load(tmp_path / "f.json")
    assert_array_equal(back.predict(Xt), forest.predict(Xt))
    assert_allclose(back.feature_importances_, forest.feature_importances_, rtol=1e-10)
    assert_array_equal(back.estimators_[1].predict(Xt), forest.estimators_[1].predict(Xt))
    doc = json.loads((tmp_path / "f.json").read_text())
    bad = copy.deepcopy(doc)
    bad["fitted"]["ridge_features_"]["fold"][0][0] = -1.0
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"fitted\.ridge_features_\.fold"):
        spotree.load(tmp_path / "bad.json")
    bad = copy.deepcopy(doc)
    bad["fitted"]["ridge_features_"]["coef"].pop()
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"fitted\.ridge_features_\.coef"):
        spotree.load(tmp_path / "bad.json")
    bad = copy.deepcopy(doc)
    bad["fitted"]["ridge_features_"] = None  # the trees split on columns it no longer adds
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"trees\[0\]\.n_features"):
        spotree.load(tmp_path / "bad.json")


def test_trees_of_a_forest_with_ridge_features_name_the_columns():
    X, C, _, _ = _data(n=150)
    forest = SPOForest(SP, n_estimators=2, max_features=None, random_state=0).fit(X, C)
    text = spotree.export_text(forest.estimators_[0])
    assert "ridge_cost[" in text
    names = [f"f{j}" for j in range(X.shape[1])]
    text = spotree.export_text(forest.estimators_[0], feature_names=names)
    assert "ridge_cost[" in text and "x0" not in text
    with pytest.raises(ValueError, match="feature_names must have 5 entries"):
        spotree.export_text(forest.estimators_[0], feature_names=names[:4])


def test_only_categorical_features_leave_no_ridge_features():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, (80, 2)).astype(float)
    C = np.column_stack([X[:, 0] == 1, X[:, 1] == 2]).astype(float) + rng.uniform(size=(80, 2))
    forest = SPOForest(FiniteDecisions(np.eye(2)), n_estimators=2, categorical_features=[0, 1],
                       random_state=0).fit(X, C)
    assert forest.ridge_features_ is None
    assert forest.estimators_[0].tree_.n_features == 2


# ------------------------------------------------------------ criterion="auto"
# Few trees on few rows leave some rows in every bootstrap sample; the
# warning that says so is tested on its own below.
_NO_OOB_WARNING = pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction:UserWarning")


def _oob_regret(forest, X, C, k=None):
    """Normalized SPO loss of the out-of-bag decisions of the first ``k`` trees,
    from the bootstrap samples and the trees' own predictions (not the
    forest's OOB code)."""
    n, d = C.shape
    total, count = np.zeros((n, d)), np.zeros(n)
    for rows, tree in list(zip(forest.estimators_samples_, forest.estimators_))[:k]:
        out = np.setdiff1d(np.arange(n), rows)
        total[out] += tree.predict(X[out])
        count[out] += 1
    has = count > 0
    return normalized_spo_loss(C[has], total[has] / count[has, None], problem=forest.problem_)


@pytest.mark.parametrize("degree, noise, seed, expected", [
    (1, 0.0, 0, "spo"), (4, 0.0, 0, "mse"), (2, 0.5, 1, "spo"), (8, 0.25, 0, "mse")])
@_NO_OOB_WARNING
def test_auto_criterion_keeps_the_forest_whose_out_of_bag_decisions_are_better(
        degree, noise, seed, expected):
    # 10 trees, fewer than the pilot's least: the choice is made on whole forests.
    assert spotree.forest._auto_pilot_trees(10) == 10
    X, C = make_shortest_path(150, degree=degree, noise=noise, random_state=seed)
    problem = ShortestPath((4, 4))
    auto = SPOForest(problem, n_estimators=10, criterion="auto", random_state=seed).fit(X, C)
    alone = {c: SPOForest(problem, n_estimators=10, criterion=c, random_state=seed).fit(X, C)
             for c in ("spo", "mse")}
    regrets = [_oob_regret(alone[c], X, C) for c in ("spo", "mse")]
    assert_allclose(-auto.criterion_oob_scores_, regrets, rtol=1e-10)
    # The cases are picked so that each criterion wins somewhere.
    assert auto.criterion_ == expected == ("mse" if regrets[1] < regrets[0] else "spo")
    kept = alone[expected]
    assert [t.criterion for t in auto.estimators_] == [expected] * 10
    assert_array_equal(auto.predict(X), kept.predict(X))
    assert_allclose(auto.feature_importances_, kept.feature_importances_)
    assert not hasattr(auto, "oob_score_")  # only with oob_score=True
    with_oob = SPOForest(problem, n_estimators=10, criterion="auto", oob_score=True,
                         random_state=seed).fit(X, C)
    assert with_oob.oob_score_ == pytest.approx(-min(regrets), rel=1e-10)


@_NO_OOB_WARNING
def test_out_of_bag_rows_are_drawn_and_routed_once_per_tree_in_its_worker(monkeypatch):
    # The pilot trees' out-of-bag scores (and oob_score_) were computed after
    # the trees had grown, serially: every tree's bootstrap sample drawn again
    # and its out-of-bag rows routed again, twice for the pilot trees. The
    # workers return their rows and leaves now; the results are unchanged.
    monkeypatch.setattr(spotree.forest, "_AUTO_PILOT_MIN", 4)
    X, C, _, _ = _data(n=120)
    draws = []
    draw = spotree.forest._bootstrap_counts

    def counted(*args):
        draws.append(1)
        return draw(*args)

    fits = {}
    for n_jobs in (1, 2):
        draws.clear()
        with monkeypatch.context() as mp:
            mp.setattr(spotree.forest, "_bootstrap_counts", counted)
            fits[n_jobs] = SPOForest(SP, n_estimators=10, oob_score=True, n_jobs=n_jobs,
                                     random_state=0).fit(X, C)
        # 4 + 4 pilot trees and 6 more: one draw each (there were 32).
        assert len(draws) == 14
    for attr in ("criterion_oob_scores_", "oob_prediction_", "oob_score_"):
        assert_array_equal(getattr(fits[1], attr), getattr(fits[2], attr))
    # The out-of-bag predictions, by hand from the trees' samples.
    total, count = np.zeros(C.shape), np.zeros(len(X))
    for tree, rows in zip(fits[1].estimators_, fits[1].estimators_samples_):
        out = np.setdiff1d(np.arange(len(X)), rows)
        total[out] += tree.predict(X[out])
        count[out] += 1
    has = count > 0
    assert_allclose(fits[1].oob_prediction_[has], total[has] / count[has, None], rtol=1e-12)


def test_auto_criterion_chooses_on_a_fifth_of_the_trees_and_at_least_twenty():
    assert [spotree.forest._auto_pilot_trees(n) for n in (1, 20, 21, 100, 101, 500)] == \
        [1, 20, 20, 20, 21, 100]


@pytest.mark.parametrize("degree, noise, seed", [(1, 0.0, 0), (4, 0.0, 0), (2, 0.5, 1),
                                                 (8, 0.25, 0), (8, 0.25, 1)])
@_NO_OOB_WARNING
def test_auto_criterion_chooses_on_the_first_trees_and_grows_the_rest_alike(
        degree, noise, seed, monkeypatch):
    monkeypatch.setattr(spotree.forest, "_AUTO_PILOT_MIN", 4)
    X, C = make_shortest_path(150, degree=degree, noise=noise, random_state=seed)
    problem = ShortestPath((4, 4))
    auto = SPOForest(problem, n_estimators=12, criterion="auto", oob_score=True,
                     random_state=seed).fit(X, C)
    alone = {c: SPOForest(problem, n_estimators=12, criterion=c, random_state=seed).fit(X, C)
             for c in ("spo", "mse")}
    # The scores are those of the first 4 trees of each forest, not of all 12.
    pilot = [_oob_regret(alone[c], X, C, k=4) for c in ("spo", "mse")]
    assert_allclose(-auto.criterion_oob_scores_, pilot, rtol=1e-10)
    chosen = "mse" if pilot[1] < pilot[0] else "spo"
    assert auto.criterion_ == chosen
    # All 12 trees are those of the chosen criterion's forest, as if grown alone.
    kept = alone[chosen]
    assert len(auto.estimators_) == 12
    assert [t.criterion for t in auto.estimators_] == [chosen] * 12
    assert_array_equal(auto.predict(X), kept.predict(X))
    assert_allclose(auto.feature_importances_, kept.feature_importances_)
    assert_array_equal(np.concatenate(auto.estimators_samples_),
                       np.concatenate(kept.estimators_samples_))
    # The out-of-bag score of the whole forest.
    assert auto.oob_score_ == pytest.approx(-_oob_regret(kept, X, C), rel=1e-10)


@pytest.mark.parametrize("pilot", [30, 1])  # the whole forest is the pilot, or grows on
def test_auto_criterion_warns_of_rows_never_out_of_bag_only_when_asked_for_a_score(
        pilot, monkeypatch):
    monkeypatch.setattr(spotree.forest, "_AUTO_PILOT_MIN", pilot)
    X, C, _, _ = _data(n=60)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the choice's own out-of-bag rows: no warning
        SPOForest(SP, n_estimators=3, criterion="auto", random_state=0).fit(X, C)
    with pytest.warns(UserWarning, match="no out-of-bag prediction") as record:
        SPOForest(SP, n_estimators=3, criterion="auto", oob_score=True,
                  random_state=0).fit(X, C)
    assert len([w for w in record if "out-of-bag" in str(w.message)]) == 1
    assert record[0].filename == __file__  # points at the caller's line


def test_auto_criterion_keeps_spo_when_regret_cannot_be_normalized():
    # One-hot costs of "the cheapest of d options": every optimal value is 0,
    # so no normalized SPO loss exists to choose by.
    X = np.random.default_rng(0).uniform(size=(40, 2))
    C = np.eye(40)
    auto = SPOForest(n_estimators=40, max_depth=2, random_state=0).fit(X, C)
    spo = SPOForest(n_estimators=40, max_depth=2, criterion="spo", random_state=0).fit(X, C)
    assert auto.criterion == "auto" and auto.criterion_ == "spo"
    assert np.isnan(auto.criterion_oob_scores_).all()
    assert_array_equal(auto.predict(X), spo.predict(X))
    # An out-of-bag score asked for is still an error naming the cause, and
    # the argument, before any tree grows (it came from the normalized SPO
    # loss once all 40 trees had grown, naming no argument).
    import spotree.forest as forest_module

    grown = []
    grow_one = forest_module._fit_tree

    def counted(*args):
        grown.append(1)
        return grow_one(*args)

    for criterion in ("auto", "spo", "mse"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(forest_module, "_fit_tree", counted)
            with pytest.raises(ValueError, match="oob_score=True: the optimal values "
                                                 "z\\*\\(C_true\\) are all zero"):
                SPOForest(n_estimators=40, criterion=criterion, oob_score=True,
                          random_state=0).fit(X, C)
        assert grown == [], criterion


def test_zero_oob_optima_say_to_check_the_sense():
    from spotree.problems import Knapsack

    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(20, 2)), rng.uniform(1, 2, (20, 3))
    # Positive values minimized: taking nothing (value 0) is optimal on every row.
    knap = Knapsack([[1.0, 1.0, 1.0]], [2.0], sense="min")
    with pytest.raises(ValueError, match=r"oob_score=True.*spo_loss instead\. Check the "
                                         r"problem's sense \(this Knapsack has sense='min'\)"):
        SPOForest(knap, n_estimators=2, oob_score=True, random_state=0).fit(X, C)


@_NO_OOB_WARNING
def test_auto_criterion_keeps_the_spo_forest_on_a_tie():
    # Leaves that may not split: both forests are bootstrap means, equal.
    X, C, _, _ = _data(n=60)
    auto = SPOForest(SP, n_estimators=5, criterion="auto", min_samples_leaf=1000,
                     random_state=0).fit(X, C)
    assert auto.criterion_oob_scores_[0] == auto.criterion_oob_scores_[1]
    assert auto.criterion_ == "spo"


@_NO_OOB_WARNING
def test_auto_criterion_without_bootstrap_is_the_spo_forest_and_is_forgotten_by_a_refit(
        tmp_path):
    X, C, Xt, _ = _data(n=80)
    # No row is out of bag to choose by: the SPO forest, scores NaN.
    plain = SPOForest(SP, n_estimators=3, criterion="auto", bootstrap=False,
                      random_state=0).fit(X, C)
    spo = SPOForest(SP, n_estimators=3, criterion="spo", bootstrap=False,
                    random_state=0).fit(X, C)
    assert plain.criterion_ == "spo" and np.isnan(plain.criterion_oob_scores_).all()
    assert_array_equal(plain.predict(Xt), spo.predict(Xt))
    plain.save(tmp_path / "f.json")
    back = spotree.load(tmp_path / "f.json")
    assert back.criterion_ == "spo" and np.isnan(back.criterion_oob_scores_).all()
    assert_array_equal(back.predict(Xt), spo.predict(Xt))
    with pytest.raises(ValueError, match=r"oob_score=True\) needs bootstrap=True"):
        SPOForest(SP, n_estimators=3, criterion="auto", bootstrap=False,
                  oob_score=True).fit(X, C)
    forest = SPOForest(SP, n_estimators=3, criterion="auto", random_state=0).fit(X, C)
    assert hasattr(forest, "criterion_")
    forest.set_params(criterion="spo").fit(X, C)
    assert not hasattr(forest, "criterion_") and not hasattr(forest, "criterion_oob_scores_")


@_NO_OOB_WARNING
def test_auto_criterion_survives_a_file_and_a_bad_choice_is_named(tmp_path):
    import json

    X, C, Xt, _ = _data(n=120)
    forest = SPOForest(SP, n_estimators=4, criterion="auto", random_state=3).fit(X, C)
    forest.save(tmp_path / "f.json")
    back = spotree.load(tmp_path / "f.json")
    assert back.criterion == "auto" and back.criterion_ == forest.criterion_
    assert_array_equal(back.criterion_oob_scores_, forest.criterion_oob_scores_)
    assert_array_equal(back.predict(Xt), forest.predict(Xt))
    doc = json.loads((tmp_path / "f.json").read_text())
    for key, value, where in (("criterion_", "auto", r"fitted\.criterion_"),
                              ("criterion_oob_scores_", [-0.1], r"fitted\.criterion_oob_scores_"),
                              ("criterion_oob_scores_", [-0.1, 0.5],
                               r"fitted\.criterion_oob_scores_\[1\]")):
        bad = copy.deepcopy(doc)
        bad["fitted"][key] = value
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=where):
            spotree.load(tmp_path / "bad.json")
    bad = copy.deepcopy(doc)
    del bad["fitted"]["criterion_"]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"fitted\.criterion_ .*missing"):
        spotree.load(tmp_path / "bad.json")


@_NO_OOB_WARNING
def test_tune_max_features_accepts_the_auto_criterion():
    X, C, Xt, Ct = _data(n=150)
    template = SPOForest(SP, n_estimators=4, criterion="auto", random_state=0)
    best, results = tune_max_features(template, X, C, Xt, Ct, candidates=(1, 3), refit=False)
    for f, loss in zip((1, 3), results.val_loss):
        alone = SPOForest(SP, n_estimators=4, criterion="auto", max_features=f,
                          random_state=0).fit(X, C)
        assert loss == pytest.approx(-alone.score(Xt, Ct), rel=1e-10)
    assert best.criterion_ in ("spo", "mse")


def test_a_category_seen_only_in_rows_of_zero_weight_is_unseen():
    # As for SPOTree: a row of weight 0 is a row removed, so a category only
    # such rows hold follows the missing side of every tree, as NaN does.
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 3, size=40).astype(float), rng.uniform(size=40)])
    X[:12, 0] = np.nan
    C = np.where(np.isnan(X[:, :1]), [1.0, 3.0], [3.0, 1.0]) + rng.uniform(size=(40, 2))
    X[-3:, 0] = 5.0
    w = np.ones(40)
    w[-3:] = 0.0
    forest = SPOForest(FiniteDecisions(np.eye(2)), n_estimators=3, categorical_features=[0],
                       random_state=0).fit(X, C, sample_weight=w)
    np.testing.assert_array_equal(forest.categories_seen_[0], [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(forest.apply(np.array([[5.0, 0.5]])),
                                  forest.apply(np.array([[np.nan, 0.5]])))


def test_forest_categorical_features_from_pandas_columns(tmp_path):
    # df.columns[...], a Series and a range are array-likes, as SPOTree takes them.
    rng = np.random.default_rng(6)
    code = rng.integers(0, 4, size=80)
    df = pd.DataFrame({"x": rng.uniform(size=80), "code": code})
    C = rng.uniform(size=(80, 3)) + np.eye(3)[code % 3] * 2.0
    problem = FiniteDecisions(np.eye(3))
    kw = dict(n_estimators=5, criterion="spo", random_state=0)
    as_list = SPOForest(problem, categorical_features=["code"], **kw).fit(df, C)
    assert all(t.tree_.is_categorical.any() for t in as_list.estimators_)
    for given in (df.columns[[1]], pd.Series(["code"]), range(1, 2)):
        est = clone(SPOForest(problem, categorical_features=given, **kw)).fit(df, C)
        assert_array_equal(est.predict(df), as_list.predict(df))
        est.save(tmp_path / "f.json")
        assert_array_equal(spotree.load(tmp_path / "f.json").predict(df), as_list.predict(df))


def test_len_index_and_iteration_agree_and_need_a_fit():
    X, C, _, _ = _data(n=80)
    forest = SPOForest(SP, n_estimators=7, random_state=0)
    for use in (len, list, lambda f: f[0]):
        with pytest.raises(NotFittedError):
            use(forest)
    forest.fit(X, C)
    assert len(forest) == 7 == len(list(forest))
    assert [t is u for t, u in zip(forest, forest.estimators_)] == [True] * 7
    assert forest[-1] is forest.estimators_[6]


def test_zero_weight_rows_do_not_count_in_a_forest_without_bootstrap():
    # A fractional min_samples_leaf is a fraction of the rows of positive
    # weight only, as with the bootstrap: the tree is the SPOTree grown on
    # those rows alone (6 of 60 rows a leaf, not 12 of 120).
    X, C, Xt, _ = _data(n=120, seed=2)
    sw = np.where(np.arange(120) % 2 == 0, 0.0, np.random.default_rng(4).uniform(0.5, 2, 120))
    keep = sw > 0
    alone = SPOTree(SP, min_samples_leaf=0.1).fit(X[keep], C[keep], sample_weight=sw[keep])
    forest = SPOForest(SP, n_estimators=1, bootstrap=False, max_features=None, criterion="spo",
                       min_samples_leaf=0.1, ridge_features=False, random_state=0)
    forest.fit(X, C, sample_weight=sw)
    tree = forest.estimators_[0].tree_
    assert_array_equal(tree.feature, alone.tree_.feature)
    assert_array_equal(tree.threshold, alone.tree_.threshold)
    assert_array_equal(tree.n_node_samples, alone.tree_.n_node_samples)
    assert_allclose(forest.predict(Xt), alone.predict(Xt), rtol=1e-12)
    # Without bootstrap each tree is grown on every row once (zero weights included).
    [rows] = forest.estimators_samples_
    assert_array_equal(rows, np.arange(120))


@pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction")
def test_weighted_oob_score_by_brute_force():
    # The out-of-bag decisions' regret weighted by sample_weight, over the
    # weighted optimal values, enumerated over SP's paths.
    X, C, _, _ = _data(n=80, seed=6)
    sw = np.random.default_rng(6).integers(1, 6, 80).astype(float)
    forest = SPOForest(SP, n_estimators=8, criterion="spo", min_samples_leaf=8,
                       oob_score=True, random_state=1).fit(X, C, sample_weight=sw)
    V = SP.vertices()
    num = den = 0.0
    for i in range(80):
        preds = [est.predict(X[i:i + 1])[0] for est, rows in
                 zip(forest.estimators_, forest.estimators_samples_) if i not in rows]
        if preds:
            w = V[np.argmin(V @ np.mean(preds, axis=0))]
            z = min(V @ C[i])
            num += sw[i] * (C[i] @ w - z)
            den += sw[i] * abs(z)
    assert forest.oob_score_ == pytest.approx(-num / den, rel=1e-10)


def test_tune_max_features_breaks_a_tie_for_the_candidate_listed_first():
    # None and 1.0 both search every column: the same forest, the same loss.
    X, C, Xt, Ct = _data(n=100)
    template = SPOForest(SP, n_estimators=2, min_samples_leaf=10, random_state=0)
    best, table = tune_max_features(template, X, C, Xt[:40], Ct[:40], candidates=(None, 1.0))
    assert table.val_loss[0] == table.val_loss[1]
    assert table.best_index == 0 and table.best_max_features is None
    assert best.max_features is None


def test_tune_max_features_refit_keeps_both_sets_of_weights():
    X, C, Xt, Ct = _data(n=100)
    rng = np.random.default_rng(8)
    sw, sw_val = rng.uniform(0.2, 3.0, 100), rng.uniform(0.2, 3.0, 40)
    template = SPOForest(SP, n_estimators=2, min_samples_leaf=10, random_state=1)
    best, table = tune_max_features(template, X, C, Xt[:40], Ct[:40], candidates=(2,),
                                    sample_weight=sw, sample_weight_val=sw_val, refit=True)
    direct = SPOForest(SP, n_estimators=2, min_samples_leaf=10, random_state=1,
                       max_features=2).fit(np.vstack([X, Xt[:40]]), np.vstack([C, Ct[:40]]),
                                           sample_weight=np.concatenate([sw, sw_val]))
    assert_array_equal(best.predict(Xt), direct.predict(Xt))


@pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction")
def test_oob_score_of_negative_costs_is_defined():
    # Optimal values all negative: sum |z*| > 0, so the out-of-bag normalized
    # SPO loss exists (a signed sum of z* < 0 must not refuse it).
    X, C, _, _ = _data(n=60)
    forest = SPOForest(SP, n_estimators=5, criterion="spo", min_samples_leaf=10,
                       oob_score=True, random_state=0).fit(X, -C)
    has = ~np.isnan(forest.oob_prediction_[:, 0])
    assert np.isfinite(forest.oob_score_) and forest.oob_score_ <= 0.0
    assert forest.oob_score_ == pytest.approx(-normalized_spo_loss(
        -C[has], forest.oob_prediction_[has], problem=SP), rel=1e-12)


def test_spo_weight_unused_by_criterion_mse_warns_once_per_fit():
    # spo_weight only weighs the SPO loss in criterion="spo": with "mse" it was
    # ignored without a word (scikit-learn warns of l1_ratio without elasticnet).
    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(30, 2)), rng.uniform(1, 2, (30, 3))
    roads = FiniteDecisions(np.eye(3))
    msg = "spo_weight=0.5 has no effect with criterion='mse'"
    with pytest.warns(UserWarning, match=msg) as rec:
        SPOTree(roads, criterion="mse", spo_weight=0.5, max_depth=1).fit(X, C)
    assert len(rec) == 1 and rec[0].filename == __file__
    # One warning for the forest's fit, not one per tree.
    with pytest.warns(UserWarning, match=msg) as rec:
        SPOForest(roads, criterion="mse", spo_weight=0.5, n_estimators=3, max_depth=1,
                  random_state=0).fit(X, C)
    assert [str(w.message).startswith("spo_weight") for w in rec] == [True]
    assert rec[0].filename == __file__
    # The SPO trees use it; criterion="auto" grows SPO and squared-error trees
    # with it internally and must not warn, nor the default spo_weight.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for crit, w in (("spo", 0.5), ("auto", 0.5), ("mse", 1.0)):
            SPOForest(roads, criterion=crit, spo_weight=w, n_estimators=3, max_depth=1,
                      oob_score=False, random_state=0).fit(X, C)
        SPOTree(roads, criterion="spo", spo_weight=0.5, max_depth=1).fit(X, C)


def test_refit_on_a_linear_program_does_not_depend_on_what_it_solved_before():
    # The problem's warm starts and basis cache carried over from one call to
    # the next, so the same forest fitted again on the same LinearProgram
    # (many tied optima) got other leaf decisions. Every call and every
    # tree's fit now starts afresh.
    from scipy.optimize import linprog

    A, b_ub, problem, X, C = tied_lp_data()
    fits = []
    for _ in range(2):
        forest = SPOForest(problem, n_estimators=3, max_depth=2, random_state=0).fit(X, C)
        fits.append([t.tree_.decision for t in forest.estimators_]
                    + [forest.predict_decision(X)])
        problem.solve(-C)
    for a, b in zip(*fits):
        assert_array_equal(a, b)
    # The leaf decisions are optimal for the leaves' mean costs (scipy's linprog).
    tree = forest.estimators_[0].tree_
    for node in range(0, tree.node_count, 2):
        ref = linprog(tree.value[node], A_ub=A, b_ub=b_ub, bounds=(0, 1))
        assert tree.value[node] @ tree.decision[node] == pytest.approx(ref.fun, abs=1e-9)


def test_weights_near_the_float_range_grow_the_same_forest():
    # Weights times 2^1016 (their total finite): the ridge features' largest
    # penalty, 100 times the total weight, overflowed to inf (a RuntimeWarning,
    # and an infinite penalty where 100 times the total was meant).
    X, C, Xt, _ = _data(n=60)
    sw = np.random.default_rng(3).uniform(0.5, 2.0, 60)
    kw = dict(n_estimators=3, random_state=0, criterion="spo")
    a = SPOForest(SP, **kw).fit(X, C, sample_weight=sw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = SPOForest(SP, **kw).fit(X, C, sample_weight=sw * 2.0 ** 1016)
    assert_allclose(b.ridge_features_.coef, a.ridge_features_.coef, rtol=1e-12)
    assert_allclose(b.predict(Xt), a.predict(Xt), rtol=1e-12)


@pytest.mark.parametrize("ridge", [True, False])
def test_weights_whose_total_overflows_grow_the_same_forest(ridge):
    # Every weight 1e308 (finite, their total not): the ridge map divided
    # them by 2^1024 = inf (every weight 0: ZeroDivisionError), and a
    # bootstrap count of 2 times 1e308 was inf (a NaN leaf cost: "C contains
    # NaN or infinity"). The same bootstrap draws, so the same forest.
    X, C, Xt, _ = _data(n=40)
    kw = dict(n_estimators=3, max_depth=2, random_state=0, ridge_features=ridge)
    a = SPOForest(SP, **kw).fit(X, C)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # the trees' sums are inf, silently
        b = SPOForest(SP, **kw).fit(X, C, sample_weight=np.full(40, 1e308))
    assert_allclose(b.predict(Xt), a.predict(Xt), rtol=1e-12, atol=1e-12)
    assert_array_equal(b.predict_decision(Xt), a.predict_decision(Xt))
    # The trees' weighted sums are inf where they pass the float range, never NaN
    # (the bootstrap's unit times the weights' was inf, and 0 * inf NaN).
    for est in b.estimators_:
        t = est.tree_
        assert not np.isnan(np.concatenate([t.loss, t.impurity,
                                            t.weighted_n_node_samples])).any()


def test_subnormal_weights_fit_the_same_ridge_features():
    # Every weight 5e-324 (the least float): the ridge map's weighted sums
    # vanished, its columns came out other ones, and the forest's predicted
    # costs were off by 2 (decisions on other paths). The map now takes such
    # weights in units of a power of two, as it does weights near the float range.
    X, C, Xt, _ = _data(n=40)
    kw = dict(n_estimators=3, max_depth=2, random_state=0)
    a = SPOForest(SP, **kw).fit(X, C)
    b = SPOForest(SP, **kw).fit(X, C, sample_weight=np.full(40, 5e-324))
    assert_allclose(b.ridge_features_.coef, a.ridge_features_.coef, rtol=1e-12)
    assert_allclose(b.predict(Xt), a.predict(Xt), rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore:.*oob_score_ is computed without them")  # 3 trees
def test_costs_near_the_float_range_average_without_overflow():
    # Leaf values near the largest float: the trees' sum passed the float
    # range, the forest predicted inf (predict_decision: "C contains NaN or
    # infinity") and criterion="auto" failed scoring its out-of-bag rows.
    # The same forest as on the costs scaled down, its predictions times 2^1023.
    X, C, Xt, _ = _data(n=40)
    C = C / 2.0 ** np.ceil(np.log2(C.max())) * 1.99  # below 2, so C * big stays finite
    big = 2.0 ** 1023
    kw = dict(n_estimators=3, max_depth=2, random_state=0, oob_score=True)
    a = SPOForest(SP, **kw).fit(X, C)
    b = SPOForest(SP, **kw).fit(X, C * big)
    assert b.criterion_ == a.criterion_
    assert_allclose(b.predict(Xt) / big, a.predict(Xt), rtol=1e-12)
    assert_array_equal(b.predict_decision(Xt), a.predict_decision(Xt))
    assert b.oob_score_ == pytest.approx(a.oob_score_, rel=1e-12)


class _GuardedSolver:
    """A user's solver object: holds a lock (so it cannot be deep-copied) and
    records whether a second call came in while one was running."""

    def __init__(self):
        self.cond = threading.Condition()
        self.inside, self.overlaps = 0, []

    def __call__(self, C):
        with self.cond:
            self.inside += 1
            self.cond.notify_all()
            self.overlaps.append(self.cond.wait_for(lambda: self.inside > 1, timeout=0.05))
            self.inside -= 1
        return _module_oracle(C)


class _GuardedProblem(spotree.DecisionProblem):
    def __init__(self):
        self.n_costs, self.sense, self.solver = SP.n_costs, "min", _GuardedSolver()

    def _solve(self, C):
        return self.solver(C), None


@pytest.mark.parametrize("kind", ["callable", "subclass"])
def test_oracle_path_threads_share_an_uncopyable_solver_in_turns(kind):
    # On the oracle path each tree solves on a deep copy of the problem; a
    # value that cannot be deep-copied (a solver guarded by a lock) is shared
    # by the copies, so with threads forced the trees' calls must take turns
    # (they overlapped before).
    if kind == "callable":
        solver = _GuardedSolver()
        problem = CallableProblem(solver, SP.n_costs, batched=True)
    else:
        problem = _GuardedProblem()
        solver = problem.solver
    with pytest.raises(Exception):
        copy.deepcopy(solver)
    X, C, Xt, _ = _data(n=40)
    kw = dict(n_estimators=4, criterion="spo", max_depth=2, max_features=None, random_state=3)
    with parallel_config(backend="threading"):
        forest = SPOForest(problem, n_jobs=2, **kw).fit(X, C)
    assert forest.estimators_[0].n_oracle_calls_ > 1  # the oracle path
    assert len(solver.overlaps) > 8 and not any(solver.overlaps)
    # The decisions are those of the same forest on the problem's own solver.
    ref = SPOForest(CallableProblem(_module_oracle, SP.n_costs, batched=True), n_jobs=1,
                    **kw).fit(X, C)
    assert_array_equal(forest.predict_decision(Xt), ref.predict_decision(Xt))


def test_a_max_problem_on_negated_costs_mirrors_the_min_forest_without_ridge_features():
    # "max" on -C is "min" on C. On the features alone the forests mirror each
    # other; the ridge columns are predicted costs, negated with them, and the
    # trees' tie rule (lowest threshold) then picks other splits among equally
    # good ones (see ridge_features).
    X, C, Xt, _ = _data(n=80)
    V = SP.vertices()
    lo, hi = FiniteDecisions(V), FiniteDecisions(V, sense="max")
    kw = dict(n_estimators=3, min_samples_leaf=5, random_state=0, ridge_features=False)
    a = SPOForest(lo, **kw).fit(X, C)
    b = SPOForest(hi, **kw).fit(X, -C)
    assert_allclose(b.predict(Xt), -a.predict(Xt), rtol=1e-12, atol=1e-12)
    assert_array_equal(b.predict_decision(Xt), a.predict_decision(Xt))
    kw["ridge_features"] = True
    a = SPOForest(lo, **kw).fit(X, C)
    b = SPOForest(hi, **kw).fit(X, -C)
    assert_allclose(b.ridge_features_.coef, -a.ridge_features_.coef, rtol=1e-12, atol=1e-12)


def test_a_forest_trees_random_state_is_its_seed_and_the_forest_reproduces():
    # As SPOForest's estimators_ says: tree k's random_state is the k-th seed
    # drawn from random_state, and the forest (not a tree refitted alone) is
    # what the same random_state grows again.
    X, C = make_shortest_path(60, n_features=4, grid=(3, 3), noise=0.5, random_state=0)
    kw = dict(n_estimators=3, max_depth=2, max_features=2, criterion="spo", random_state=7)
    a = SPOForest(ShortestPath((3, 3)), **kw).fit(X, C)
    b = SPOForest(ShortestPath((3, 3)), **kw).fit(X, C)
    seeds = np.random.RandomState(7).randint(np.iinfo(np.int32).max, size=3)
    assert [est.random_state for est in a.estimators_] == seeds.tolist()
    for ta, tb in zip(a.estimators_, b.estimators_):
        np.testing.assert_array_equal(ta.tree_.threshold, tb.tree_.threshold)
        np.testing.assert_array_equal(ta.tree_.value, tb.tree_.value)


def test_auto_forest_fit_holds_few_arrays_of_the_costs_size():
    # tracemalloc counts every numpy allocation. Scoring the pilot forests
    # held the out-of-bag sums, the predictions and both again for the rows
    # that have one, next to the loss's own arrays; the fit statistics |C|
    # of every row at once: 8.7 arrays of C's size at the peak, now 5.9
    # (the statistics' Cm, G and sq, the pilots' scoring, small trees).
    X, C = make_shortest_path(8_000, grid=(3, 3), degree=4, noise=0.5, random_state=0)
    make = lambda: SPOForest(SP, n_estimators=2, max_depth=2, ridge_features=False,  # noqa: E731
                             random_state=0)
    make().fit(X[:100], C[:100])
    forest, _, peak = traced_peak(lambda: make().fit(X, C))
    assert forest.criterion_ in ("spo", "mse")
    assert peak < 7.0 * C.nbytes


def test_auto_forest_frees_the_other_pilot_before_growing_the_rest(monkeypatch):
    # The pilot forest not chosen (and the pilots' out-of-bag rows) stayed
    # alive while the other trees grew: a fifth more trees held all along.
    import gc
    import weakref

    X, C, _, _ = _data(n=120)
    grown, alive_then = [], []
    grow = SPOForest._grow

    def spy(self, *args, **kwargs):
        if grown:
            gc.collect()
            alive_then.append(sum(r() is not None for r in grown))
        trees, parts = grow(self, *args, **kwargs)
        grown.extend(weakref.ref(t) for t in trees)
        return trees, parts

    monkeypatch.setattr(SPOForest, "_grow", spy)
    forest = SPOForest(SP, n_estimators=21, max_depth=1, ridge_features=False,
                       random_state=0).fit(X, C)
    assert len(forest.estimators_) == 21
    assert alive_then == [20]  # the chosen pilot's 20 trees only, not both pilots' 40


@pytest.mark.parametrize("categorical", [False, True])
def test_auto_forest_of_pilots_only_frees_the_fit_statistics_before_scoring(monkeypatch,
                                                                          categorical):
    # With no tree to grow after the pilots (n_estimators <= 20), the fit
    # statistics (Cm, G, the presorted rows: 44 MB at 100,000 rows of 24
    # costs) stayed alive next to both pilot forests while they were scored.
    # The forest is the same (categories seen, scores) as with them held.
    import gc
    import weakref

    from spotree.tree import _fit_data

    X, C, _, _ = _data(n=120)
    if categorical:
        X = X.copy()
        X[:, 0] = np.floor(X[:, 0] * 4)
    made, alive = [], []
    init, oob = _fit_data.FitData.__init__, SPOForest._oob

    def spy_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(weakref.ref(self))

    def spy_oob(self, *args, **kwargs):
        gc.collect()
        alive.append(sum(r() is not None for r in made))
        return oob(self, *args, **kwargs)

    kw = dict(n_estimators=3, max_depth=2, ridge_features=False, random_state=0,
              categorical_features=[0] if categorical else None)
    held = SPOForest(SP, **kw).fit(X, C)
    monkeypatch.setattr(_fit_data.FitData, "__init__", spy_init)
    monkeypatch.setattr(SPOForest, "_oob", spy_oob)
    forest = SPOForest(SP, **kw).fit(X, C)
    assert len(made) == 1 and alive == [0, 0]
    np.testing.assert_array_equal(forest.criterion_oob_scores_, held.criterion_oob_scores_)
    if categorical:
        np.testing.assert_array_equal(forest.categories_seen_[0], np.unique(X[:, 0]))
    else:
        assert forest.categories_seen_ is None
