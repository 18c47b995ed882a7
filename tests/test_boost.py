"""SPOBoost: one round against a hand computation (subgradient, sklearn tree, exact line
search), least-squares boosting against a hand loop, early stopping, weights,
every problem type, persistence, grid search, bad input, scikit-learn checks."""

import io
import math
import pickle
import traceback
from contextlib import redirect_stdout

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks

import spotree
from spotree import ShortestPath, SPOBoost
from spotree.datasets import make_pyepo_shortest_path
from spotree.metrics import make_spo_scorer, normalized_spo_loss
from spotree.problems import CallableProblem, FiniteDecisions, LinearProgram

from _helpers import tied_lp_data, weekday_data

SP = ShortestPath((3, 3))


def _sp_data(n=300, seed=0, degree=4, n_test=300):
    X, C, B = make_pyepo_shortest_path(n, grid=(3, 3), degree=degree, noise=0.5,
                                       random_state=seed, return_B=True)
    Xt, Ct = make_pyepo_shortest_path(n_test, grid=(3, 3), degree=degree, noise=0.5, B=B,
                                      random_state=seed + 100)
    return X, C, Xt, Ct


def _finite_data(sense, n=120, seed=0):
    rng = np.random.default_rng(seed)
    V = rng.uniform(0, 1, (6, 4))
    X = rng.normal(size=(n, 2))
    C = 1 + np.column_stack([X[:, 0], -X[:, 0], X[:, 1] ** 2, X[:, 0] * X[:, 1]])
    C = C + rng.normal(scale=0.5, size=C.shape)
    return FiniteDecisions(V, sense=sense), X, C


def _partition(labels):
    """Rows grouped by label, independent of how the labels are numbered."""
    groups = {}
    for i, lab in enumerate(labels):
        groups.setdefault(lab, []).append(i)
    return sorted(tuple(g) for g in groups.values())


def _exact_leaf_min(V, sign, F, C, v):
    """min over gamma >= 0 of sum_i SPO+(F_i + gamma v, C_i), by checking every kink."""
    def f(g):
        H = sign * (F + g * v)
        Cm = sign * C
        w_true = V[np.argmin(Cm @ V.T, axis=1)]
        z = np.einsum("ij,ij->i", Cm, w_true)
        return float(np.sum(np.max((Cm - 2 * H) @ V.T, axis=1)
                            + 2 * np.einsum("ij,ij->i", H, w_true) - z))

    cands = [0.0]
    for Fi, Ci in zip(F, C):
        a = V @ (2 * Fi - Ci)  # value of each vertex at gamma = 0 ...
        b = 2 * V @ v          # ... and its rate of change
        for k in range(len(V)):
            for m in range(k + 1, len(V)):
                if b[k] != b[m]:
                    g = (a[m] - a[k]) / (b[k] - b[m])
                    if g > 0:
                        cands.append(g)
    vals = np.array([f(g) for g in cands])
    return f, vals.min()


@pytest.mark.parametrize("sense", ["min", "max"])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_round_equals_hand_computation(sense, weighted):
    problem, X, C = _finite_data(sense)
    sw = (np.random.default_rng(1).integers(1, 4, X.shape[0]).astype(float) if weighted
          else np.ones(X.shape[0]))
    lr = 0.3
    model = SPOBoost(problem, init="mean", n_estimators=1, learning_rate=lr, max_depth=2,
                     min_samples_leaf=10, n_iter_no_change=None,
                     random_state=0).fit(X, C, sample_weight=sw if weighted else None)
    V, sign = problem.V, problem.sign
    # Start: the weighted mean cost.
    F0 = np.average(C, axis=0, weights=sw)
    assert_allclose(model.init_intercept_, F0)
    F0 = np.tile(F0, (X.shape[0], 1))
    # SPO+ subgradient by enumeration (minimization sense inside).
    W_true = V[np.argmin((sign * C) @ V.T, axis=1)]
    W2 = V[np.argmin((sign * (2 * F0 - C)) @ V.T, axis=1)]
    neg = -2 * sign * (W_true - W2)
    # The tree: scikit-learn's, fitted to the negative subgradients.
    ref = DecisionTreeRegressor(max_depth=2, min_samples_leaf=10).fit(X, neg,
                                                                      sample_weight=sw)
    leaf = ref.apply(X)
    assert _partition(leaf) == _partition(model.estimators_[0].apply(X))
    F1 = next(model.staged_predict(X))
    assert_allclose(model.predict(X), F1)
    for lab in np.unique(leaf):
        rows = leaf == lab
        v = np.average(neg[rows], axis=0, weights=sw[rows])
        step = (F1[rows] - F0[rows]) / lr
        # The leaf moved along its mean negative subgradient ...
        gamma = float(step[0] @ v / (v @ v))
        assert_allclose(step, np.tile(gamma * v, (rows.sum(), 1)), atol=1e-10)
        # ... by a step whose weighted SPO+ loss is the exact minimum (to the
        # line search's tolerance of 5% of the decrease).
        rep = np.repeat(np.flatnonzero(rows), sw[rows].astype(int))
        f, fmin = _exact_leaf_min(V, sign, F0[rep], C[rep], v)
        assert gamma >= 0
        assert f(gamma) <= fmin + 5e-2 * (f(0.0) - fmin) + 1e-9


def test_least_squares_boosting_equals_hand_loop():
    X, C, Xt, _ = _sp_data(n=200)
    lr, rounds = 0.2, 4
    model = SPOBoost(SP, loss="mse", init="mean", n_estimators=rounds, learning_rate=lr, max_depth=3,
                     min_samples_leaf=8, n_iter_no_change=None, random_state=0).fit(X, C)
    F = np.tile(C.mean(axis=0), (X.shape[0], 1))
    Ft = np.tile(C.mean(axis=0), (Xt.shape[0], 1))
    for _ in range(rounds):
        tree = DecisionTreeRegressor(max_depth=3, min_samples_leaf=8).fit(X, C - F)
        F = F + lr * tree.predict(X)
        Ft = Ft + lr * tree.predict(Xt)
    assert_allclose(model.predict(X), F, atol=1e-10)
    # Thresholds may differ between midpoints, so compare on training rows only;
    # test rows agree unless they fall between two training values.
    assert np.mean(np.isclose(model.predict(Xt), Ft, atol=1e-10).all(axis=1)) > 0.9


@pytest.mark.parametrize("n_val", [60, 12])
def test_early_stopping_keeps_the_round_with_the_lowest_validation_loss(n_val):
    # With 12 validation rows the loss has plateaus: the earliest best round must win.
    X, C, Xv, Cv = _sp_data(n=300, n_test=n_val)
    params = dict(init="mean", learning_rate=0.5, max_depth=3, min_samples_leaf=5,
                  random_state=0)
    stopped = SPOBoost(SP, n_estimators=200, n_iter_no_change=5, **params).fit(
        X, C, X_val=Xv, C_val=Cv)
    n = stopped.n_iter_
    assert n < 200  # the validation loss did stop improving
    full = SPOBoost(SP, n_estimators=n, n_iter_no_change=None, **params).fit(
        X, C, X_val=Xv, C_val=Cv)
    # The same rounds: validation losses recomputed independently from the stages.
    val = [normalized_spo_loss(Cv, np.tile(full.init_intercept_, (len(Cv), 1)), problem=SP)]
    val += [normalized_spo_loss(Cv, P, problem=SP) for P in full.staged_predict(Xv)]
    assert_allclose(-stopped.validation_score_, val, rtol=1e-12)
    best = int(np.argmin(val))  # the earliest of the lowest
    if n_val == 12:
        assert np.sum(np.isclose(val, min(val), rtol=0, atol=1e-15)) > 1  # a tie to break
    assert stopped.best_iteration_ == best
    assert n - best == 5
    assert stopped.n_estimators_ == best and full.n_estimators_ == n
    expected = (list(full.staged_predict(Xv))[best - 1] if best
                else np.tile(full.init_intercept_, (len(Cv), 1)))
    assert_allclose(stopped.predict(Xv), expected)
    assert stopped.score(Xv, Cv) == pytest.approx(-min(val))
    # Training scores are the regret of the training decisions.
    tr = [normalized_spo_loss(C, P, problem=SP) for P in full.staged_predict(X)]
    assert_allclose(-full.train_score_[1:], tr, rtol=1e-12)


@pytest.mark.parametrize("init, seed", [("linear", 1), ("linear", 4), ("mean", 0)])
def test_early_stopping_keeps_trees_only_for_a_significant_gain(init, seed):
    # Hand computation: every round's decisions on the validation rows, the
    # best round (earliest of the lowest weighted regret), and the paired
    # test of its gain over the start: the weighted mean of the row-wise
    # regret differences against 2 standard errors
    # sqrt(sum w^2 (d - mean)^2) / sum w.
    X, C, Xv, Cv = _sp_data(n=200, n_test=60, degree=1, seed=seed)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, len(Xv))
    params = dict(init=init, learning_rate=0.3, random_state=0)
    m = SPOBoost(SP, n_estimators=30, n_iter_no_change=30, **params).fit(
        X, C, X_val=Xv, C_val=Cv, sample_weight_val=w)
    full = SPOBoost(SP, n_estimators=30, n_iter_no_change=None, **params).fit(
        X, C, X_val=Xv, C_val=Cv, sample_weight_val=w)
    opt = np.array([SP.solve(c[None])[1][0] for c in Cv])
    regrets = []
    for P in [full._start().predict(Xv)] + list(full.staged_predict(Xv)):
        dec = np.array([SP.solve(p[None])[0][0] for p in P])
        regrets.append(np.einsum("ij,ij->i", Cv, dec) - opt)
    loss = [w @ r for r in regrets]
    best = int(np.argmin(loss))
    d = regrets[0] - regrets[best]
    gain = w @ d / w.sum()
    se = np.sqrt(np.sum(w ** 2 * (d - gain) ** 2)) / w.sum()
    assert m.n_iter_ == 30
    assert_allclose(-m.validation_score_, np.array(loss) / (w @ np.abs(opt)), rtol=1e-12)
    assert m.best_iteration_ == (best if gain > 2 * se else 0)
    # Both outcomes occur: trees that beat the start by chance on these rows
    # are dropped (linear start on linear data), trees that fit the costs
    # from the mean are kept.
    assert best > 0
    assert (m.best_iteration_ == 0) == (init == "linear")
    if seed == 4:
        assert se < gain < 2 * se  # dropped at two standard errors, not at one
    assert m.n_estimators_ == m.best_iteration_


def test_validation_fraction_holds_rows_out():
    X, C, _, _ = _sp_data(n=200)
    m = SPOBoost(SP, n_estimators=30, validation_fraction=0.25, n_iter_no_change=3,
                 random_state=0).fit(X, C)
    assert m.validation_score_.shape == m.train_score_.shape == (m.n_iter_ + 1,)
    # The best round, or the start alone when its gain is not significant
    # (see test_early_stopping_keeps_trees_only_for_a_significant_gain).
    assert m.best_iteration_ in (0, int(np.argmax(m.validation_score_)))
    off = SPOBoost(SP, n_estimators=7, n_iter_no_change=None, random_state=0).fit(X, C)
    assert off.validation_score_.shape == (0,)
    assert off.n_iter_ == off.best_iteration_ == off.n_estimators_ == 7


@pytest.mark.parametrize("init", ["mean", "linear", "spo+", "ridge", "index"])
def test_init_models(init):
    X, C, _, _ = _sp_data(n=200)
    m = SPOBoost(SP, init=init, n_estimators=1, n_iter_no_change=None, random_state=0)
    m.fit(X, C)
    if init == "mean":
        assert_allclose(m.init_coef_, 0.0)
        assert_allclose(m.init_intercept_, C.mean(axis=0))
    elif init == "linear":
        A = np.column_stack([X, np.ones(len(X))])
        sol = np.linalg.lstsq(A, C, rcond=None)[0]
        assert_allclose(m.init_coef_, sol[:-1].T, atol=1e-10)
        assert_allclose(m.init_intercept_, sol[-1], atol=1e-10)
    elif init in ("ridge", "index"):
        pass  # against hand computations below
    else:
        # A trained SPO+ linear model: lower training SPO+ loss than the mean.
        from spotree.linear_model import spo_plus_loss

        start = X @ m.init_coef_.T + m.init_intercept_
        mean = np.tile(C.mean(axis=0), (len(C), 1))
        assert (spo_plus_loss(C, start, problem=SP).mean()
                < 0.8 * spo_plus_loss(C, mean, problem=SP).mean())
    # The start alone is the model at round 0.
    assert m.train_score_[0] == pytest.approx(
        -normalized_spo_loss(C, m._start().predict(X), problem=SP))


def test_boosting_improves_on_its_start_and_on_the_tree():
    X, C, Xt, Ct = _sp_data(n=600, n_test=600, degree=6)
    m = SPOBoost(SP, init="mean", random_state=0).fit(X, C)
    start = normalized_spo_loss(Ct, np.tile(m.init_intercept_, (len(Ct), 1)), problem=SP)
    boosted = normalized_spo_loss(Ct, m.predict(Xt), problem=SP)
    assert boosted < 0.6 * start
    tree = spotree.SPOTree(SP, max_depth=3, min_samples_leaf=20).fit(X, C)
    assert boosted < normalized_spo_loss(Ct, tree.predict(Xt), problem=SP)


def test_integer_weights_equal_repeated_rows():
    X, C, Xt, _ = _sp_data(n=120)
    reps = np.random.default_rng(0).integers(0, 3, X.shape[0])
    # The "spo+" start is trained by minibatches, which repeated rows change.
    # min_samples_leaf counts rows (as in scikit-learn), so it must not bind here.
    params = dict(init="linear", n_estimators=5, learning_rate=0.3, max_depth=2,
                  min_samples_leaf=1, n_iter_no_change=None, random_state=0)
    a = SPOBoost(SP, **params).fit(X, C, sample_weight=reps)
    b = SPOBoost(SP, **params).fit(np.repeat(X, reps, axis=0), np.repeat(C, reps, axis=0))
    assert_allclose(a.predict(Xt), b.predict(Xt), atol=1e-9)


@pytest.mark.parametrize("init", ["mean", "linear", "ridge", "index", "spo+"])
def test_rows_of_zero_weight_change_nothing(init):
    # Extra rows of weight 0 (wild features and costs) give the model of the
    # other rows. The "spo+" start drew its minibatches from all the rows, so
    # a row of weight 0 moved the others' batches (predictions 3% apart).
    X, C, Xt, _ = _sp_data(n=120)
    rng = np.random.default_rng(5)
    sw = rng.uniform(0.5, 2.0, len(X))
    Xz = np.vstack([X[:40], rng.normal(size=(25, X.shape[1])), X[40:]])
    Cz = np.vstack([C[:40], rng.uniform(0, 50, (25, C.shape[1])), C[40:]])
    swz = np.concatenate([sw[:40], np.zeros(25), sw[40:]])
    kw = dict(init=init, n_estimators=6, n_iter_no_change=None, min_samples_leaf=0.05,
              random_state=0)
    a = SPOBoost(SP, **kw).fit(X, C, sample_weight=sw)
    b = SPOBoost(SP, **kw).fit(Xz, Cz, sample_weight=swz)
    assert a.n_estimators_ == 6
    assert_allclose(b.predict(Xt), a.predict(Xt), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kw", [dict(n_iter_no_change=3), dict(subsample=0.6),
                                dict(n_iter_no_change=2, subsample=0.7, init="mean")])
def test_rows_of_zero_weight_are_rows_removed_in_every_random_draw(kw):
    # The validation split, the start's cross-validation folds and the
    # subsamples are drawn from the rows of positive weight: the model is the
    # one fitted without the rows of weight 0, here four in five of the rows
    # (drawn from all the rows, the part held out for early stopping could
    # weigh nothing and the fit failed: "validation part ... cannot be scored").
    X, C, Xt, _ = _sp_data(n=60)
    rng = np.random.default_rng(3)
    sw = rng.uniform(0.5, 2.0, len(X))
    keep = np.zeros(300, dtype=bool)
    keep[np.sort(rng.choice(300, 60, replace=False))] = True
    Xz, Cz = rng.normal(size=(300, X.shape[1])), rng.uniform(0, 50, (300, C.shape[1]))
    Xz[keep], Cz[keep] = X, C
    swz = np.zeros(300)
    swz[keep] = sw
    kw = dict(n_estimators=8, min_samples_leaf=5, random_state=0, **kw)
    a = SPOBoost(SP, **kw).fit(X, C, sample_weight=sw)
    b = SPOBoost(SP, **kw).fit(Xz, Cz, sample_weight=swz)
    assert (b.init_choice_, b.n_iter_, b.n_estimators_) == (
        a.init_choice_, a.n_iter_, a.n_estimators_)
    assert (b.init_cv_regret_ is None) == (a.init_cv_regret_ is None)
    if a.init_cv_regret_ is not None:
        assert b.init_cv_regret_ == pytest.approx(a.init_cv_regret_, rel=1e-12)
    assert_allclose(b.validation_score_, a.validation_score_, rtol=1e-12)
    assert_allclose(b.predict(Xt), a.predict(Xt), rtol=1e-10, atol=1e-12)


def test_early_stopping_counts_the_rows_of_positive_weight():
    # Two rows of positive weight leave one to train and one to validate;
    # one leaves none, which the error says in rows of positive weight.
    X, C, _, _ = _sp_data(n=40)
    sw = np.zeros(40)
    sw[[7, 30]] = 1.0
    m = SPOBoost(SP, n_estimators=2, random_state=0).fit(X, C, sample_weight=sw)
    assert m.n_iter_ >= 1
    sw[7] = 0.0
    with pytest.raises(ValueError, match=r"leaves no training rows: .* = 1 of the 1 of "
                                         r"n_samples=40 that have a positive sample_weight"):
        SPOBoost(SP, n_estimators=2, random_state=0).fit(X, C, sample_weight=sw)


@pytest.mark.parametrize("subsample", [1.0, 0.5])
def test_a_fractional_min_samples_leaf_is_a_fraction_of_each_trees_rows(subsample):
    # The rows each tree is grown on: the subsample, of positive weight
    # (scikit-learn's gradient boosting takes the fraction of all the rows).
    X, C, _, _ = _sp_data(n=200)
    sw = np.ones(len(X))
    sw[:40] = 0.0
    m = SPOBoost(SP, min_samples_leaf=0.1, subsample=subsample, max_depth=8, n_estimators=3,
                 n_iter_no_change=None, random_state=0).fit(X, C, sample_weight=sw)
    for est in m.estimators_:
        t = est.tree_
        rows = int(t.n_node_samples[0])  # the tree's rows of positive weight
        assert rows == 160 if subsample == 1.0 else rows <= 100
        leaves = t.n_node_samples[t.children_left == -1]
        assert leaves.min() >= math.ceil(0.1 * rows)
        assert leaves.min() < math.ceil(0.1 * 200)  # not a fraction of all the rows


@pytest.mark.parametrize("k", [900, -900])
def test_scaling_the_weights_changes_nothing(k):
    # Weights times 2^k: the same start, rounds and model. The significance
    # tests (the start's cross-validation, keeping the trees) squared the
    # weights: at 2^900 they overflowed (nothing was significant), at 2^-900
    # they vanished (every gain was).
    import warnings

    X, C, Xt, Ct = _sp_data(n=200, degree=6)
    sw = np.random.default_rng(2).uniform(0.5, 2.0, len(X))
    kw = dict(n_estimators=15, n_iter_no_change=5, random_state=1)
    a = SPOBoost(SP, **kw).fit(X, C, sample_weight=sw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = SPOBoost(SP, **kw).fit(X, C, sample_weight=sw * 2.0 ** k)
    assert (b.init_choice_, b.n_iter_, b.best_iteration_) == (
        a.init_choice_, a.n_iter_, a.best_iteration_)
    assert b.init_cv_regret_ == pytest.approx(a.init_cv_regret_, rel=1e-12)
    assert_allclose(b.predict(Xt), a.predict(Xt), rtol=1e-12)
    # The same for the weights of X_val: the test of the trees' gain over the
    # start squares them too.
    wv = np.random.default_rng(3).uniform(0.5, 2.0, 60)
    kw = dict(init="mean", n_estimators=5, n_iter_no_change=5, random_state=0)
    a = SPOBoost(SP, **kw).fit(X, C, X_val=Xt[:60], C_val=Ct[:60], sample_weight_val=wv)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = SPOBoost(SP, **kw).fit(X, C, X_val=Xt[:60], C_val=Ct[:60],
                                   sample_weight_val=wv * 2.0 ** k)
    assert b.best_iteration_ == a.best_iteration_ > 0
    assert_allclose(b.validation_score_, a.validation_score_, rtol=1e-12)
    assert_allclose(b.predict(Xt), a.predict(Xt), rtol=1e-12)
    # A regressor start is fitted with the weights as given (its penalty is
    # not relative to them).
    from sklearn.linear_model import Ridge

    w = sw * 2.0 ** (k // 20)
    m = SPOBoost(SP, init=Ridge(alpha=1.0), n_estimators=2, random_state=0).fit(
        X, C, sample_weight=w)
    assert_allclose(m.init_estimator_.coef_, Ridge(alpha=1.0).fit(X, C, sample_weight=w).coef_,
                    rtol=1e-10)


def test_the_line_search_does_not_follow_rounding_noise_along_a_flat_direction():
    # hunt2's case: a leaf whose direction leaves its SPO+ loss flat (tied
    # paths: V . D = 0 in exact arithmetic). Its loss and slope were rounding
    # noise (slope -2e-16, "improvements" of 1e-11), so every expansion was
    # taken: a step of 0.2 * 4^11, predictions of 1.4e5 for costs of at most
    # 5.5, and another 3.6e4 after shuffling the rows.
    rng = np.random.default_rng(14)
    n, p = int(rng.integers(25, 70)), int(rng.integers(1, 4))
    X = rng.normal(size=(n, p))
    C = np.abs(rng.normal(1, 1, size=(n, 7)) + X[:, :1])
    rng.random(X.shape), rng.normal(size=(30, p)), rng.random((30, p))
    perm = rng.permutation(n)
    kw = dict(n_estimators=4, n_iter_no_change=None, init="mean", min_samples_leaf=3,
              random_state=0)
    m = SPOBoost(ShortestPath((2, 3)), **kw).fit(X, C)
    shuffled = SPOBoost(ShortestPath((2, 3)), **kw).fit(X[perm], C[perm])
    assert np.abs(m.predict(X)).max() < 2 * np.abs(C).max()
    assert_allclose(shuffled.predict(X), m.predict(X), rtol=1e-9)


def test_the_line_search_stops_where_a_rounding_error_of_the_direction_descends():
    # A leaf direction [2, 2, 7e-16, -2] (0 in exact arithmetic in the third
    # cost): along it the SPO+ loss of the leaf's rows descends by 3e-15 per
    # unit step, forever (genuinely, in floating point), so the step expanded
    # to 4^11 times the first: predictions of 8e5 for integer costs of at most
    # 6. A slope below 1e-12 of the leaf's slope at 0 now counts as flat.
    rng = np.random.default_rng(1096)
    n, p = int(rng.integers(20, 80)), int(rng.integers(1, 4))
    problem = FiniteDecisions(rng.integers(0, 2, (5, 4)).astype(float))
    X = rng.normal(size=(n, p))
    C = np.round(np.abs(rng.normal(1, 1, size=(n, 4)) + X[:, :1]) * rng.choice([1, 2]))
    for lr in (0.1, 1.0):
        m = SPOBoost(problem, n_estimators=5, n_iter_no_change=None, init="mean",
                     min_samples_leaf=3, learning_rate=lr, random_state=0).fit(X, C)
        steps = np.concatenate([np.abs(est.tree_.value).max(axis=1) for est in m.estimators_])
        assert steps.max() < 10 * np.abs(C).max()


def test_the_line_search_first_tries_a_step_of_one_cost_unit():
    # The Notes: "the line search's first trial step is 1 in the units of the
    # costs". By hand, round 1 from the mean start: the leaf directions are
    # the mean negative subgradients, and the first batch after the
    # subgradients' is 2 (F_0 + 1 * v_leaf) - c for the rows of the leaves
    # whose loss descends along v (here all).
    problem, X, C = _finite_data("min")
    batches = []

    class Recording(FiniteDecisions):
        def _solve(self, C):
            batches.append(np.array(C))
            return super()._solve(C)

    rec = Recording(problem.V)
    m = SPOBoost(rec, init="mean", n_estimators=1, max_depth=1, min_samples_leaf=10,
                 n_iter_no_change=None, random_state=0).fit(X, C)
    V = problem.V
    F0 = np.tile(C.mean(axis=0), (len(X), 1))
    W_true = V[np.argmin(C @ V.T, axis=1)]
    neg = -2 * (W_true - V[np.argmin((2 * F0 - C) @ V.T, axis=1)])
    leaf = m.estimators_[0].apply(X)
    v = np.zeros_like(C)
    for lab in np.unique(leaf):
        v[leaf == lab] = neg[leaf == lab].mean(axis=0)
    # Every leaf descends: its slope at 0 is -sum_i neg_i . v = -n |v|^2 < 0.
    assert np.all(np.abs(v).sum(axis=1) > 0)
    # Batches: C (W_true), the start's training score, the subgradients, ...
    assert_allclose(batches[2], 2 * F0 - C)
    # ... then the first trial step, 1, on every row.
    assert_allclose(batches[3], 2 * (F0 + v) - C, rtol=1e-12)


def _argmin_oracle(C):
    W = np.zeros_like(C)
    W[np.arange(C.shape[0]), np.argmin(C, axis=1)] = 1.0
    return W


class CountingSP(ShortestPath):
    """ShortestPath that records every batch it is asked to solve."""

    def __init__(self, grid):
        super().__init__(grid)
        self.batches = []

    def _solve(self, C):
        self.batches.append(C.copy())
        return super()._solve(C)


def test_every_problem_type_and_one_solve_of_the_training_costs():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 3))
    C = 1 + np.abs(X @ rng.normal(size=(3, 4))) + rng.uniform(0, 0.5, (150, 4))
    params = dict(n_estimators=8, max_depth=2, min_samples_leaf=5, n_iter_no_change=None,
                  random_state=0)
    finite = SPOBoost(FiniteDecisions(np.eye(4)), **params).fit(X, C)
    oracle = SPOBoost(CallableProblem(_argmin_oracle, n_costs=4, batched=True),
                      **params).fit(X, C)
    default = SPOBoost(None, **params).fit(X, C)
    assert_allclose(oracle.predict(X), finite.predict(X))
    assert_allclose(default.predict(X), finite.predict(X))
    Xs, Cs, _, _ = _sp_data(n=100)
    counting = CountingSP((3, 3))
    SPOBoost(counting, **params).fit(Xs, Cs)
    assert sum(b.shape == Cs.shape and np.array_equal(b, Cs) for b in counting.batches) == 1


def test_subsample_and_max_features_are_seeded():
    X, C, Xt, _ = _sp_data(n=200)
    p = dict(n_estimators=6, subsample=0.5, max_features=2, n_iter_no_change=None)
    a = SPOBoost(SP, random_state=3, **p).fit(X, C).predict(Xt)
    b = SPOBoost(SP, random_state=3, **p).fit(X, C).predict(Xt)
    c = SPOBoost(SP, random_state=4, **p).fit(X, C).predict(Xt)
    assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_feature_importances_find_the_informative_feature():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    C = np.column_stack([1 + X[:, 1], 1 - X[:, 1]]) + rng.normal(scale=0.1, size=(300, 2))
    m = SPOBoost(FiniteDecisions(np.eye(2)), n_estimators=10, n_iter_no_change=None,
                 random_state=0).fit(X, C)
    assert m.feature_importances_.sum() == pytest.approx(1.0)
    assert np.argmax(m.feature_importances_) == 1


def test_decisions_and_score_before_fit_raise_not_fitted():
    # predict_decision read problem_ (set by fit) before predict checked the fit,
    # so an unfitted model raised AttributeError: 'SPOBoost' ... 'problem_'.
    X, C, _, _ = _sp_data(n=20, n_test=1)
    for method, args in (("predict_decision", (X,)), ("score", (X, C))):
        with pytest.raises(NotFittedError):
            getattr(SPOBoost(SP), method)(*args)


def test_save_load_and_pickle(tmp_path):
    X, C, Xt, Ct = _sp_data(n=200)
    m = SPOBoost(SP, n_estimators=15, init="linear", random_state=0).fit(X, C)
    path = tmp_path / "boost.json"
    m.save(path)
    loaded = spotree.load(path)
    assert isinstance(loaded, SPOBoost)
    assert_array_equal(loaded.predict(Xt), m.predict(Xt))
    assert_array_equal(loaded.predict_decision(Xt), m.predict_decision(Xt))
    assert_array_equal(loaded.feature_importances_, m.feature_importances_)
    assert_array_equal(loaded.validation_score_, m.validation_score_)
    assert loaded.best_iteration_ == m.best_iteration_ and loaded.n_iter_ == m.n_iter_
    assert loaded.get_params()["init"] == "linear"
    again = pickle.loads(pickle.dumps(m))
    assert_array_equal(again.predict(Xt), m.predict(Xt))


def test_fitted_and_loaded_trees_carry_the_same_attributes(tmp_path):
    # The kept trees of a fitted model had no n_features_in_ and no
    # feature_names_in_ (export_text named a DataFrame's columns x0, x1, ...),
    # and those of a loaded model no feature_importances_ (AttributeError).
    import pandas as pd

    from spotree import export_text

    X, C, Xt, _ = _sp_data(n=200)
    names = ["a", "b", "c", "d", "e"]
    df = pd.DataFrame(X, columns=names)
    cat = df.assign(k=pd.Categorical(np.where(X[:, 0] > 0, "u", "v")))
    for data, width, named in ((df, 5, True), (cat, 7, False)):  # k: two indicator columns
        m = SPOBoost(SP, n_estimators=4, n_iter_no_change=None, init="ridge",
                     random_state=0).fit(data, C)
        m.save(tmp_path / "b.json")
        loaded = spotree.load(tmp_path / "b.json")
        assert len(m.estimators_) == len(loaded.estimators_) == 4
        for fitted, back in zip(m.estimators_, loaded.estimators_):
            for tree in (fitted, back):
                assert tree.n_features_in_ == width
                assert hasattr(tree, "feature_names_in_") == named
                assert tree.feature_importances_.shape == (width,)
            if named:
                assert list(fitted.feature_names_in_) == names
                assert export_text(fitted) == export_text(back)
                assert export_text(fitted).startswith("|--- " + names[fitted.tree_.feature[0]])
            assert_allclose(back.feature_importances_, fitted.feature_importances_,
                            rtol=1e-10, atol=1e-12)
            assert fitted.feature_importances_.sum() == pytest.approx(1.0)


def test_grid_search_with_the_spo_scorer():
    X, C, _, _ = _sp_data(n=150)
    search = GridSearchCV(SPOBoost(SP, n_estimators=5, n_iter_no_change=None,
                                   random_state=0),
                          {"max_depth": [1, 3]}, scoring=make_spo_scorer(SP), cv=3)
    search.fit(X, C)
    assert search.best_params_["max_depth"] in (1, 3)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


def test_verbose_prints_progress():
    X, C, _, _ = _sp_data(n=100)
    buf = io.StringIO()
    with redirect_stdout(buf):
        m = SPOBoost(SP, n_estimators=20, n_iter_no_change=None, verbose=1).fit(X, C)
    out = buf.getvalue()
    assert "train regret" in out and "    20 " in out and "kept 20" in out
    # No validation part: no validation column (it printed "nan" every round).
    assert "val regret" not in out and "nan" not in out
    lines = out.splitlines()
    row = lines[lines.index(next(x for x in lines if "train regret" in x)) + 2].split()
    assert len(row) == 3 and row[0] == "20"
    # The regret shown is the model's normalized training regret, by hand.
    W, z = SP.solve(C)
    hand = np.einsum("ij,ij->i", C, SP.solve(m.predict(X))[0]).sum() - z.sum()
    assert float(row[1]) == pytest.approx(hand / np.abs(z).sum(), abs=2e-6)
    buf = io.StringIO()
    with redirect_stdout(buf):
        SPOBoost(SP, n_estimators=2, max_depth=1, verbose=1, random_state=0).fit(X, C)
    header, = [x for x in buf.getvalue().splitlines() if "train regret" in x]
    assert header.split() == ["round", "train", "regret", "val", "regret", "time", "(s)"]


def test_verbose_says_1_round_not_1_rounds():
    X, C, _, _ = _sp_data(n=30)
    buf = io.StringIO()
    with redirect_stdout(buf):
        SPOBoost(SP, n_estimators=1, max_depth=1, n_iter_no_change=None, verbose=1).fit(X, C)
    assert "SPOBoost: 1 round in " in buf.getvalue()


@pytest.mark.parametrize("params, match", [
    ({"learning_rate": 0.0}, r"'learning_rate' parameter of SPOBoost must be a float in the "
                             r"range \(0.0, inf\)\. Got 0.0 instead"),
    ({"learning_rate": -0.1}, "'learning_rate' parameter of SPOBoost"),
    ({"n_estimators": 0}, r"'n_estimators' parameter of SPOBoost must be an int in the range "
                          r"\[1, inf\)"),
    ({"validation_fraction": 0.0}, r"'validation_fraction' parameter of SPOBoost must be a "
                                   r"float in the range \(0.0, 1.0\)"),
    ({"validation_fraction": 1.0}, "'validation_fraction' parameter"),
    ({"subsample": 0.0}, r"'subsample' parameter of SPOBoost must be a float in the range "
                         r"\(0.0, 1.0\]"),
    ({"subsample": 1.5}, "'subsample' parameter"),
    ({"loss": "hinge"}, "'loss' parameter of SPOBoost must be a str among"),
    ({"init": "zero"}, "'init' parameter"),
    ({"init": 3}, r"'init' parameter of SPOBoost must be a str among .* or a scikit-learn "
                  r"regressor \(with fit and predict"),
    # A class, not an instance: clone failed later with scikit-learn's message.
    ({"init": Ridge}, r"'init' parameter of SPOBoost must be .* an instance, not a class\)\. "
                      r"Got <class '.*Ridge'> instead"),
    ({"n_iter_no_change": 0}, "'n_iter_no_change' parameter"),
])
def test_bad_parameters(params, match):
    X, C, _, _ = _sp_data(n=50)
    with pytest.raises(ValueError, match=match):
        SPOBoost(SP, **params).fit(X, C)


def test_validation_part_too_small_or_unscorable():
    X, C, _, _ = _sp_data(n=50)
    with pytest.raises(ValueError, match="validation_fraction=0.99 leaves no training rows"):
        SPOBoost(SP, validation_fraction=0.99).fit(X, C)
    with pytest.raises(ValueError, match="1 sample"):
        SPOBoost(SP).fit(X[:1], C[:1])
    with pytest.raises(ValueError, match="cannot be scored"):
        SPOBoost(SP).fit(X, C, X_val=X[:5], C_val=np.zeros((5, 12)))
    with pytest.raises(ValueError, match=r"cannot be scored.*\(validation_fraction\)"):
        SPOBoost(SP, random_state=0).fit(X, np.zeros_like(C))
    # Without early stopping, X_val only gives validation_score_ (the message
    # told to set n_iter_no_change=None, which was set).
    with pytest.raises(ValueError, match=r"cannot be scored.*values that are not all zero\. "
                                         r"Use other validation rows, or leave out X_val"):
        SPOBoost(SP, n_iter_no_change=None).fit(X, C, X_val=X[:5], C_val=np.zeros((5, 12)))



def test_zero_validation_optima_say_to_check_the_sense():
    from spotree.problems import Knapsack

    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(20, 2)), rng.uniform(1, 2, (20, 3))
    # Positive values minimized: taking nothing (value 0) is optimal on every row.
    knap = Knapsack([[1.0, 1.0, 1.0]], [2.0], sense="min")
    with pytest.raises(ValueError, match=r"cannot be scored.*sense='min'"):
        SPOBoost(knap, random_state=0).fit(X, C)

@pytest.mark.parametrize("val, match", [
    (dict(X_val=np.ones((5, 3))), r"^X_val: X has 3 features, but SPOBoost is expecting 5"),
    (dict(X_val=np.full((5, 5), np.nan)), r"^X_val: Input X contains NaN"),
    (dict(X_val=np.ones((0, 5)), C_val=np.ones((0, 12))), r"^X_val: Found array with 0 sample"),
    (dict(C_val=np.ones((5, 4))), r"^C_val has 4 columns but the problem has n_costs=12"),
    (dict(C_val=np.ones((6, 12))), r"^X_val and C_val must have the same number of rows"),
    (dict(sample_weight_val=np.ones(3)), r"^sample_weight_val must have shape \(5,\)")])
def test_a_bad_validation_set_is_named(val, match):
    # X_val's errors spoke of X (the training features) before.
    X, C, _, _ = _sp_data(n=50)
    args = dict(X_val=X[:5], C_val=C[:5])
    args.update(val)
    with pytest.raises(ValueError, match=match):
        SPOBoost(SP).fit(X, C, **args)


def test_missing_values_are_rejected():
    X, C, _, _ = _sp_data(n=50)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN.*does not support missing"):
        SPOBoost(SP).fit(X, C)
    with pytest.raises(ValueError, match="SPOPlusLinear does not support missing"):
        spotree.SPOPlusLinear(SP).fit(X, C)


def test_costs_not_matching_the_problem():
    X, C, _, _ = _sp_data(n=50)
    with pytest.raises(ValueError, match="C has 11 columns but the problem has n_costs=12"):
        SPOBoost(SP).fit(X, C[:, :11])
    with pytest.raises(ValueError, match="C_val has 11 columns"):
        SPOBoost(SP).fit(X, C, X_val=X, C_val=C[:, :11])
    with pytest.raises(ValueError, match="X_val and C_val must be given together"):
        SPOBoost(SP).fit(X, C, X_val=X)
    # Validation weights without validation rows were dropped without a word.
    for n_iter_no_change in (10, None):
        with pytest.raises(ValueError, match="sample_weight_val weighs the rows of X_val"):
            SPOBoost(SP, n_iter_no_change=n_iter_no_change).fit(
                X, C, sample_weight_val=np.ones(10))


# ------------------------------------------------------------ sklearn checks
_NAMED_C = ("the target is the cost matrix C (fit(X, C), score(X, C)); this check passes y "
            "by keyword or requires the name y")
_SPLIT = ("early stopping holds out a random validation part and the default start is "
          "chosen on random cross-validation folds, so repeating a row changes both; with "
          "n_iter_no_change=None and init='linear' integer weights equal repeated rows (see "
          "test_integer_weights_equal_repeated_rows)")


def _expected_failed_checks(estimator):
    out = {"check_fit_score_takes_y": _NAMED_C,
           "check_n_features_in_after_fitting": _NAMED_C}
    if estimator.n_iter_no_change is not None:
        out["check_sample_weight_equivalence_on_dense_data"] = _SPLIT
    else:
        out["check_sample_weight_equivalence_on_dense_data"] = _NAMED_C
    return out


# Seeded: with random_state=None some checks would hold out a different part each run.
@parametrize_with_checks([SPOBoost(n_estimators=5, random_state=0),
                          SPOBoost(n_estimators=5, loss="mse", random_state=0),
                          SPOBoost(n_estimators=5, n_iter_no_change=None, init="linear",
                                   random_state=0)],
                         expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


class _TargetNamedY(SPOBoost):
    def fit(self, X, y=None, sample_weight=None):
        return super().fit(X, y, sample_weight=sample_weight)

    def score(self, X, y=None, sample_weight=None):
        return super().score(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("check_name", ["check_fit_score_takes_y",
                                        "check_n_features_in_after_fitting",
                                        "check_sample_weight_equivalence_on_dense_data"])
def test_failed_checks_only_fail_on_the_name(check_name):
    import sklearn.utils.estimator_checks as ec

    getattr(ec, check_name)("SPOBoost", _TargetNamedY(n_estimators=5, n_iter_no_change=None,
                                                      init="linear"))


@pytest.mark.parametrize("degree, how, z", [(1, "validation_fraction", 2.0),
                                            (1, "validation_fraction", 0.0),
                                            (6, "validation_fraction", 2.0),
                                            (6, "X_val", 2.0), (6, "none", 2.0)])
@pytest.mark.parametrize("threads", [1, 3])
def test_auto_init_keeps_index_unless_ridge_is_significantly_better(degree, how, z, threads,
                                                                    monkeypatch):
    # At every size and however the validation part is given (or with none),
    # "auto" deals all the rows of X to 5 folds, fits index and ridge on the
    # other folds and scores their decisions on every fold's rows; it keeps
    # "index" unless ridge's weighted mean regret is lower by more than z
    # standard errors of the paired row-wise differences: by a hand loop.
    # The same with the folds fitted on 3 threads (as if BLAS had 3).
    from concurrent.futures import ThreadPoolExecutor

    import spotree.boost as boost

    monkeypatch.setattr(boost, "_KEEP_Z", z)
    monkeypatch.setattr(boost, "threadpool_info",
                        lambda: [{"user_api": "blas", "num_threads": threads}])
    pools = []

    def executor(k):
        pools.append(k)
        return ThreadPoolExecutor(k)

    monkeypatch.setattr(boost, "ThreadPoolExecutor", executor)
    n, seed = 150, 0
    # (At degree 1 a draw where ridge is better, not significantly.)
    X, C, Xv, Cv = _sp_data(n=n, seed=1 if degree == 1 else 0, n_test=40, degree=degree)
    w = np.random.default_rng(1).uniform(0.5, 2.0, n)
    kw = dict(n_estimators=1, random_state=seed)
    if how == "none":
        kw["n_iter_no_change"] = None
    fit_kw = dict(X_val=Xv, C_val=Cv) if how == "X_val" else {}
    auto = SPOBoost(SP, **kw).fit(X, C, sample_weight=w, **fit_kw)
    rng = np.random.RandomState(seed)
    if how == "validation_fraction":
        rng.permutation(n)  # the first permutation of the seed's stream held out rows
    fold = np.empty(n, dtype=int)
    fold[rng.permutation(n)] = np.arange(n) % 5
    opt = np.array([SP.solve(c[None])[1][0] for c in C])
    rows = {}
    for init in ("index", "ridge"):
        rows[init] = np.empty(n)
        for f in range(5):
            tr, te = fold != f, fold == f
            m = SPOBoost(SP, init=init, n_estimators=1, n_iter_no_change=None)
            m.fit(X[tr], C[tr], sample_weight=w[tr])
            for i in np.flatnonzero(te):
                x = SP.solve(m._start().predict(X[i:i + 1]))[0][0]
                rows[init][i] = C[i] @ x - opt[i]
    regrets = {k: w @ r / (w @ np.abs(opt)) for k, r in rows.items()}
    assert auto.init_cv_regret_ == pytest.approx(regrets, rel=1e-9)
    d = rows["index"] - rows["ridge"]
    gain = w @ d / w.sum()
    se = np.sqrt(np.sum(w ** 2 * (d - gain) ** 2)) / w.sum()
    assert auto.init_choice_ == ("ridge" if gain > z * se else "index")
    # Both outcomes occur: ridge where it is better and z is 0, the index
    # otherwise (at degree 1 ridge is better on these rows, not significantly).
    assert auto.init_choice_ == ("ridge" if z == 0 else "index")
    assert pools == ([] if threads == 1 else [3])
    if degree == 1:
        assert 0 < gain < 2 * se


def test_auto_init_keeps_the_index_start_when_both_starts_tie():
    # Both starts decide every row optimally (the first option is always far
    # cheaper): their cross-validated regrets are equal, row by row (all 0),
    # and a tie keeps the first of index and ridge (a gain of 0 is not more
    # than 0 standard errors).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    C = np.column_stack([1.0 + 0.1 * X[:, 0], 5.0 + 0.1 * X[:, 1]])
    m = SPOBoost(FiniteDecisions(np.eye(2)), n_estimators=1, n_iter_no_change=None,
                 random_state=0).fit(X, C)
    assert m.init_cv_regret_ == {"index": 0.0, "ridge": 0.0}
    assert m.init_choice_ == "index"


def test_auto_init_reports_no_cv_regret_when_one_row_weighs():
    # With one row of positive weight there is one fold and nothing to fit it
    # on: no row was scored, yet init_cv_regret_ said {"index": 0.0, "ridge":
    # 0.0}, a cross-validated regret of 0. It is now None (nothing scored); the
    # start stays "index", the fit as before.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 2))
    C = rng.uniform(1.0, 2.0, size=(6, 3))
    fd = FiniteDecisions(np.eye(3))
    w = np.zeros(6)
    w[2] = 1.0
    kw = dict(n_estimators=1, n_iter_no_change=None, random_state=0)
    for m in (SPOBoost(fd, **kw).fit(X[:1], C[:1]),
              SPOBoost(fd, **kw).fit(X, C, sample_weight=w),
              SPOBoost(fd, **kw).fit(X[:1], C[:1], X_val=X[3:], C_val=C[3:])):
        assert m.init_cv_regret_ is None
        assert m.init_choice_ == "index"
    # (Two rows: two folds, each scored; a one-row fit is the index start's.)
    assert SPOBoost(fd, **kw).fit(X[:2], C[:2]).init_cv_regret_ is not None
    ref = SPOBoost(fd, init="index", **kw).fit(X[:1], C[:1])
    assert_allclose(m.predict(X), ref.predict(X), rtol=1e-12, atol=1e-12)


def _standardize(X, w):
    mean = (w[:, None] * X).sum(0) / w.sum()
    scale = np.sqrt((w[:, None] * (X - mean) ** 2).sum(0) / w.sum())
    return mean, scale


def _loo_ridge_by_hand(X, C, w):
    """Brute force: for every penalty of the grid, leave each row out in turn,
    fit ridge on the others (features standardized once, on all the rows), and
    keep per cost the penalty of least (weighted) error; then scikit-learn's
    Ridge with that penalty on all the rows. Returns the coefficients and
    intercepts in X's units, and the index of each cost's penalty."""
    from sklearn.linear_model import Ridge

    from spotree._ridge import _RIDGE_ALPHAS

    n, p = X.shape
    mean, scale = _standardize(X, w)
    Z = (X - mean) / scale
    errors = np.zeros((len(_RIDGE_ALPHAS), C.shape[1]))
    for k, a in enumerate(_RIDGE_ALPHAS * w.sum()):
        for i in range(n):
            # Weighted ridge on the other rows (normal equations, intercept
            # unpenalized), all costs at once.
            keep = np.arange(n) != i
            wk = w[keep][:, None]
            zm = (wk * Z[keep]).sum(0) / wk.sum()
            cm = (wk * C[keep]).sum(0) / wk.sum()
            Zk = Z[keep] - zm
            coef = np.linalg.solve(Zk.T @ (wk * Zk) + a * np.eye(p), Zk.T @ (wk * (C[keep] - cm)))
            errors[k] += w[i] * (C[i] - cm - (Z[i] - zm) @ coef) ** 2
    chosen = np.argmin(errors, axis=0)
    expected_coef, expected_icpt = [], []
    for j in range(C.shape[1]):
        r = Ridge(alpha=_RIDGE_ALPHAS[chosen[j]] * w.sum()).fit(Z, C[:, j], sample_weight=w)
        expected_coef.append(r.coef_ / scale)
        expected_icpt.append(r.intercept_ - (r.coef_ / scale) @ mean)
    return np.array(expected_coef), np.array(expected_icpt), chosen


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [2, 3, 5])
def test_ridge_start_is_standardized_ridge_with_the_leave_one_out_penalty(weighted, seed):
    # Against the brute force of _loo_ridge_by_hand.
    from spotree._ridge import _RIDGE_ALPHAS

    # Weak signals in noise, so that the penalties chosen are inside the grid
    # (not its ends) and differ between the costs.
    n, p = 30, 4
    X = (np.random.default_rng(3).normal(size=(n, p)) * [1.0, 10.0, 0.1, 3.0]
         + [0.0, 5.0, -2.0, 1.0])
    B = np.array([[0.5, 0.3, 0.0, 0.2], [0.3, 0.2, 0.2, 0.1], [1.0, -0.5, 0.2, 0.0]])
    rng = np.random.default_rng(seed)
    C = 4 + ((X - X.mean(0)) / X.std(0)) @ B.T + rng.normal(size=(n, 3))
    w = rng.integers(1, 4, n).astype(float) if weighted else np.ones(n)
    problem = FiniteDecisions(np.eye(3))
    m = SPOBoost(problem, init="ridge", n_estimators=1, n_iter_no_change=None).fit(
        X, C, sample_weight=w if weighted else None)
    expected_coef, expected_icpt, chosen = _loo_ridge_by_hand(X, C, w)
    # The data make ridge matter: the first cost's penalty is inside the grid.
    assert 0 < chosen[0] < len(_RIDGE_ALPHAS) - 1
    assert_allclose(m.init_coef_, expected_coef, rtol=1e-7, atol=1e-9)
    assert_allclose(m.init_intercept_, expected_icpt, rtol=1e-7, atol=1e-9)
    # Rescaled features, same model.
    s, t = np.array([3.0, 0.01, 100.0, -1.0]), np.array([1.0, -50.0, 0.5, 2.0])
    m2 = SPOBoost(problem, init="ridge", n_estimators=1, n_iter_no_change=None).fit(
        X * s + t, C, sample_weight=w if weighted else None)
    assert_allclose(m2.init_coef_ * s, m.init_coef_, rtol=1e-7, atol=1e-9)


def test_ridge_start_gives_a_constant_feature_no_coefficient():
    # A column of 0.1 has a weighted mean that differs from 0.1 in the last
    # bit (2.2e-16 of deviation here): standardized by that deviation, its
    # rounding noise was a column of -1s, another intercept fitted with a
    # penalty. It gets a zero coefficient, and the other columns the brute
    # force's ridge without it.
    rng = np.random.default_rng(2)
    n = 30
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 0.1]
    C = 4 + X @ np.array([[0.5, 0.03, 0.0], [0.3, 0.02, 2.0]]).T + rng.normal(size=(n, 2))
    w = np.ones(n)
    Xc = np.column_stack([X, np.full(n, 0.1)])
    assert np.std(Xc[:, 3] / 0.125) > 0  # the rounding noise is there
    m = SPOBoost(FiniteDecisions(np.eye(2)), init="ridge", n_estimators=1,
                 n_iter_no_change=None).fit(Xc, C)
    coef, icpt, _ = _loo_ridge_by_hand(X, C, w)
    assert_allclose(m.init_coef_[:, 3], 0.0, atol=1e-12)
    assert_allclose(m.init_coef_[:, :3], coef, rtol=1e-7, atol=1e-9)
    assert_allclose(m.init_intercept_, icpt, rtol=1e-7, atol=1e-9)


def _natural_spline(u, y, w, u_new, n_knots=9):
    """Weighted least-squares natural cubic spline of y on u (knots evenly over u's
    range), at u_new: in the basis a + b u + sum_k theta_k |u - t_k|^3 with
    sum theta_k = sum theta_k t_k = 0 (linear beyond the end knots)."""
    t = np.linspace(u.min(), u.max(), n_knots)

    def basis(v):
        return np.column_stack([np.ones_like(v), v, np.abs(v[:, None] - t) ** 3])

    # Null space of the two constraints on theta.
    cons = np.zeros((2, n_knots + 2))
    cons[0, 2:], cons[1, 2:] = 1.0, t
    N = np.linalg.svd(cons)[2][2:].T
    sol = np.linalg.lstsq(np.sqrt(w)[:, None] * (basis(u) @ N), np.sqrt(w) * y, rcond=None)[0]
    return basis(u_new) @ (N @ sol)


def test_index_start_is_a_natural_cubic_spline_of_the_ridge_index(monkeypatch):
    # Without its small penalty and smoothing, and with the variance power
    # held at 0 (no second pass), each cost's link is the weighted least-squares natural
    # cubic spline of the ridge index with 9 knots spread evenly over the
    # index's range (by hand, in another basis of the same space).
    import spotree.boost as boost

    monkeypatch.setattr(boost, "_LINK_PENALTY", 0.0)
    monkeypatch.setattr(boost, "_LINK_LAMBDAS", None)
    monkeypatch.setattr(boost, "_VAR_POWER_MAX", 0.0)
    X, C, Xt, _ = _sp_data(n=200, degree=6)
    w = np.random.default_rng(0).integers(1, 3, len(X)).astype(float)
    kw = dict(n_estimators=1, n_iter_no_change=None, random_state=0)
    m = SPOBoost(SP, init="index", **kw).fit(X, C, sample_weight=w)
    ridge = SPOBoost(SP, init="ridge", **kw).fit(X, C, sample_weight=w)
    assert_allclose(m.init_coef_, ridge.init_coef_)
    assert_allclose(m.init_intercept_, ridge.init_intercept_)
    U = X @ ridge.init_coef_.T + ridge.init_intercept_
    Ut = Xt @ ridge.init_coef_.T + ridge.init_intercept_
    expected = np.column_stack([_natural_spline(U[:, j], C[:, j], w, Ut[:, j])
                                for j in range(C.shape[1])])
    assert_allclose(m._start().predict(Xt), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("block", [None, 2 * 120 * 9])
@pytest.mark.parametrize("zero_weights", [False, True])
@pytest.mark.parametrize("both_ends, sign", [(True, 1.0), (True, -1.0), (False, 1.0)])
def test_index_start_smooths_the_links_by_one_penalty_of_least_total_gcv(monkeypatch, block,
                                                                         zero_weights, both_ends,
                                                                         sign):
    # By hand, with the variance power held at 0: the basis of Hastie,
    # Tibshirani and Friedman (eq. 5.4-5.5) on the index mapped to [0, 1]
    # (columns v, d_k - d_{K-1}); weighted centring; a light ridge of 1e-4
    # times the mean diagonal of the Gram matrix on every column; the bend
    # columns (all but v) penalized by lambda times the mean of their
    # diagonal (light ridge included); the same in the basis of the negated
    # index (anchored at the high end: another basis of the same splines,
    # so other penalties); one end and one lambda for all the costs, of
    # least total GCV (the sum over the costs of rss / (1 - (tr H + 1) / n)^2,
    # H the explicit hat matrix of the centred weighted rows); the low end
    # only, as before, without _LINK_BOTH_ENDS. Rows of weight
    # 0 take no part (not in the index's range, nor in n). The costs are
    # fitted in blocks (here also two at a time): the same links, one lambda
    # across blocks. Costs that steepen as they grow keep the low end; their
    # negation the high end.
    import spotree.boost as boost

    monkeypatch.setattr(boost, "_VAR_POWER_MAX", 0.0)
    monkeypatch.setattr(boost, "_LINK_BOTH_ENDS", both_ends)
    if block is not None:
        monkeypatch.setattr(boost, "_LINK_BLOCK", block)
    rng = np.random.default_rng(2)
    n, d = 120, 3
    X = rng.normal(size=(n, 2))
    Xt = rng.normal(size=(40, 2))
    u0 = X @ [1.0, -0.5]
    # One cost straight, one gently bent, one sharply bent, in noise.
    C = np.column_stack([u0, u0 + 0.3 * u0 ** 2, np.exp(1.5 * u0)])
    C = sign * (C + rng.normal(scale=0.5, size=C.shape))
    w = rng.uniform(0.5, 2.0, n)
    if zero_weights:
        # Among them the rows of the largest and smallest index.
        w[[np.argmax(u0), np.argmin(u0)] + list(range(0, n, 7))] = 0.0
    kw = dict(n_estimators=1, n_iter_no_change=None, random_state=0)
    problem = FiniteDecisions(np.eye(d))
    m = SPOBoost(problem, init="index", **kw).fit(X, C, sample_weight=w)
    ridge = SPOBoost(problem, init="ridge", **kw).fit(X, C, sample_weight=w)
    U = X @ ridge.init_coef_.T + ridge.init_intercept_
    Ut = Xt @ ridge.init_coef_.T + ridge.init_intercept_
    K = 9
    t = np.linspace(0.0, 1.0, K)

    def basis(u, lo, hi):
        v = (u - lo) / (hi - lo)

        def dk(k):
            return (np.maximum(v - t[k], 0) ** 3 - np.maximum(v - t[K - 1], 0) ** 3) / (
                t[K - 1] - t[k])
        return np.column_stack([v] + [dk(k) - dk(K - 2) for k in range(K - 2)])

    lams = np.logspace(-8, 2, 11)
    keep = w > 0
    U, C, w, n = U[keep], C[keep], w[keep], keep.sum()
    ends = (1.0, -1.0) if both_ends else (1.0,)
    gcv = np.empty((d, len(ends), len(lams)))
    pred = np.empty((d, len(ends), len(lams), len(Xt)))
    for j in range(d):
        for e, r in enumerate(ends):
            # The high end's basis: that of the negated index.
            u, ut = r * U[:, j], r * Ut[:, j]
            lo, hi = u.min(), u.max()
            B = basis(u, lo, hi)
            mu = w @ B / w.sum()
            cm = w @ C[:, j] / w.sum()
            Bw = np.sqrt(w)[:, None] * (B - mu)
            y = np.sqrt(w) * (C[:, j] - cm)
            G = Bw.T @ Bw
            G_ridge = G + 1e-4 * np.mean(np.diag(G)) * np.eye(K - 1)
            P = np.diag([0.0] + [1.0] * (K - 2)) * np.mean(np.diag(G_ridge)[1:])
            for i, lam in enumerate(lams):
                A_inv = np.linalg.inv(G_ridge + lam * P)
                beta = A_inv @ Bw.T @ y
                H = Bw @ A_inv @ Bw.T
                gcv[j, e, i] = np.sum((y - Bw @ beta) ** 2) / (1 - (np.trace(H) + 1) / n) ** 2
                pred[j, e, i] = cm + (basis(ut, lo, hi) - mu) @ beta
    end, best = np.unravel_index(np.argmin(gcv.sum(axis=0)), gcv.shape[1:])
    assert end == (sign < 0)
    assert_allclose(m._start().predict(Xt), pred[:, end, best].T, rtol=1e-6, atol=1e-6)
    # Each cost on its own would choose differently (the straight one
    # smoother than the sharply bent one), and its links would differ: the
    # test tells the shared penalty from per-cost ones.
    gcv, pred = gcv[:, end], pred[:, end]
    own = np.argmin(gcv, axis=1)
    assert own[0] > own[2]
    per_cost = pred[np.arange(d), own].T
    assert not np.allclose(m._start().predict(Xt), per_cost, rtol=1e-3, atol=1e-3)


def test_link_gcv_is_rss_over_one_minus_hat_trace_plus_one_over_rows():
    # By hand, per cost and penalty: the explicit hat matrix of the
    # penalized system G + lambda P (any P), df = trace(H) + 1 (the
    # intercept), GCV = rss / (1 - df / m)^2 with m the rows of positive
    # weight (zero rows of Bc), and inf where df >= m. Few rows, so that
    # the smallest penalties leave no degree of freedom.
    import spotree.boost as boost

    rng = np.random.default_rng(0)
    d, n, k = 2, 14, 8
    Bc = rng.normal(size=(d, n, k))
    Bc[0, :6] = 0.0   # rows of weight 0 of the first cost
    y = rng.normal(size=(d, n))
    y[0, :6] = 0.0
    m = np.array([n - 6, n])
    G0 = Bc.transpose(0, 2, 1) @ Bc
    G = G0 + 1e-4 * np.trace(G0, axis1=1, axis2=2)[:, None, None] / k * np.eye(k)
    b = np.einsum("jmk,jm->jk", Bc, y)
    P_all = rng.normal(size=(d, k, k))
    P_all = P_all @ P_all.transpose(0, 2, 1)
    betas, gcv = boost._link_gcv(G, G0, P_all, b, y, Bc, m)
    lams = boost._LINK_LAMBDAS
    seen_inf = 0
    for j in range(d):
        P = P_all[j]
        for i, lam in enumerate(lams):
            A_inv = np.linalg.inv(G[j] + lam * P)
            beta = A_inv @ Bc[j].T @ y[j]
            H = Bc[j] @ A_inv @ Bc[j].T
            df = np.trace(H) + 1.0
            assert_allclose(betas[j, i], beta, rtol=1e-8, atol=1e-10)
            if df >= m[j]:
                assert gcv[j, i] == np.inf
                seen_inf += 1
            else:
                rss = np.sum((y[j] - Bc[j] @ beta) ** 2)
                assert_allclose(gcv[j, i], rss / (1.0 - df / m[j]) ** 2, rtol=1e-8)
    assert 0 < seen_inf < d * len(lams)


@pytest.mark.parametrize("block", [None, 120 * 9])
def test_index_start_of_a_constant_cost_is_its_value(monkeypatch, block):
    # A cost that never changes has a constant index: its link is the cost
    # itself, whatever block of costs it is fitted with.
    import spotree.boost as boost

    if block is not None:
        monkeypatch.setattr(boost, "_LINK_BLOCK", block)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 3))
    C = np.column_stack([np.exp(X[:, 0]) + rng.normal(scale=0.3, size=120),
                         np.full(120, 2.5), 1.0 + X[:, 1] ** 2])
    m = SPOBoost(FiniteDecisions(np.eye(3)), init="index", n_estimators=1,
                 n_iter_no_change=None, random_state=0).fit(X, C)
    P = m._start().predict(rng.normal(size=(30, 3)) * 3)
    assert_allclose(P[:, 1], 2.5, rtol=1e-12)
    assert np.isfinite(P).all() and np.ptp(P[:, 0]) > 1.0


def test_variance_power_floors_exact_residuals_and_skips_exactly_fitted_costs():
    # By hand: magnitudes floored at a quarter of each cost's weighted mean
    # magnitude; a squared residual of exactly 0 (row 2) counts as 1e-12 of
    # its cost's weighted mean square, not as log(0) (or a tiny absolute
    # floor, whose log of -690 would swamp the slope); the second cost, fitted
    # exactly, tells nothing and takes no part.
    import spotree.boost as boost

    G = np.array([[1.0, 3.0], [2.0, -1.0], [4.0, 0.5], [8.0, 2.0], [16.0, 1.0], [0.1, 4.0]])
    C = G.copy()
    C[:, 0] += [0.1, 0.2, 0.0, 0.7, 2.0, 0.05]
    sw = np.array([1.0, 2.0, 1.0, 0.5, 1.0, 1.5])
    k, A = boost._variance_power(G, C, sw)
    mag = np.abs(G)
    floored = np.maximum(mag, 0.25 * (sw @ mag) / sw.sum())
    assert_allclose(A, floored, rtol=1e-15)
    r2 = (C[:, 0] - G[:, 0]) ** 2
    assert r2[2] == 0.0
    la = np.log(floored[:, 0])
    lr = np.log(np.maximum(r2, 1e-12 * (sw @ r2) / sw.sum()))
    la -= sw @ la / sw.sum()
    lr -= sw @ lr / sw.sum()
    expected = (sw @ (la * lr)) / (sw @ (la * la))
    assert 0.5 < expected < 0.8  # inside the clip to [0, 2]
    assert k == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("threads", [1, 3])
def test_index_start_reweights_by_the_fitted_variance_power(monkeypatch, threads):
    # The second pass by hand: from the first pass (the ridge index and its
    # unweighted spline, tested above), the pooled least-squares slope k of
    # each row's log squared residual on its log fitted magnitude (floored at
    # 0.25 times the cost's weighted mean magnitude; both centred per cost),
    # clipped to [0, 2]; then per cost the weights w |g|^-k: scikit-learn's
    # weighted Ridge on the standardized features with the ridge start's
    # penalty for that cost, and the weighted natural spline of its index.
    # Also with the per-cost ridges on 3 threads (as if BLAS had 3).
    from concurrent.futures import ThreadPoolExecutor

    from sklearn.linear_model import Ridge

    import spotree.boost as boost

    monkeypatch.setattr(boost, "threadpool_info",
                        lambda: [{"user_api": "blas", "num_threads": threads}])
    monkeypatch.setattr(boost, "_THREADED_GRAM_WORK", 0)
    pool = []

    def executor(n):
        pool.append(n)
        return ThreadPoolExecutor(n)

    monkeypatch.setattr(boost, "ThreadPoolExecutor", executor)
    monkeypatch.setattr(boost, "_LINK_PENALTY", 0.0)
    monkeypatch.setattr(boost, "_LINK_LAMBDAS", None)
    rng = np.random.default_rng(0)
    n, p, d = 300, 3, 4
    X = rng.normal(size=(n, p)) * [1.0, 5.0, 0.2] + [0.0, 2.0, -1.0]
    Xt = rng.normal(size=(50, p)) * [1.0, 5.0, 0.2] + [0.0, 2.0, -1.0]
    B = rng.normal(size=(d, p)) * [0.5, 0.1, 2.5]
    mean_c = np.exp(X @ B.T)
    # Noise whose spread grows like the square root of the mean: k near 1.
    C = mean_c + np.sqrt(mean_c) * rng.normal(scale=0.5, size=(n, d))
    w = rng.uniform(0.5, 2.0, n)
    problem = FiniteDecisions(np.eye(d))
    kw = dict(n_estimators=1, n_iter_no_change=None, random_state=0)
    m = SPOBoost(problem, init="index", **kw).fit(X, C, sample_weight=w)
    ridge = SPOBoost(problem, init="ridge", **kw).fit(X, C, sample_weight=w)
    U = X @ ridge.init_coef_.T + ridge.init_intercept_
    G = np.column_stack([_natural_spline(U[:, j], C[:, j], w, U[:, j]) for j in range(d)])
    A = np.abs(G)
    A = np.maximum(A, 0.25 * (w @ A) / w.sum())
    la, lr = np.log(A), np.log((C - G) ** 2)
    la -= (w @ la) / w.sum()
    lr -= (w @ lr) / w.sum()
    k = np.sum(w[:, None] * la * lr) / np.sum(w[:, None] * la * la)
    assert 0.3 < k < 1.7  # inside the clip: the slope itself is tested
    _, _, alpha = boost._ridge_gcv(X, C, w)  # the ridge start's penalties (tested above)
    mean, scale = _standardize(X, w)
    expected = np.empty((len(Xt), d))
    for j in range(d):
        wj = w * A[:, j] ** -k
        wj = wj / ((w @ A[:, j] ** -k) / w.sum())
        r = Ridge(alpha=alpha[j] * w.sum()).fit(X / scale, C[:, j], sample_weight=wj)
        u, ut = r.predict(X / scale), r.predict(Xt / scale)
        assert_allclose(X @ m.init_coef_[j] + m.init_intercept_[j], u, rtol=1e-8, atol=1e-8)
        expected[:, j] = _natural_spline(u, C[:, j], wj, ut)
    assert_allclose(m._start().predict(Xt), expected, rtol=1e-6, atol=1e-6)
    # The second pass changed the index (the weights are not all equal).
    assert not np.allclose(m.init_coef_, ridge.init_coef_, rtol=1e-3)
    assert pool == ([] if threads == 1 else [3])


@pytest.mark.parametrize("init", ["ridge", "index", "spo+", "auto"])
def test_starts_are_invariant_to_rescaling_features(init):
    X, C, Xt, _ = _sp_data(n=200, degree=4)
    s, t = np.array([100.0, 0.01, 1.0, -3.0, 7.0]), np.array([5.0, -1.0, 0.0, 2.0, 1e3])
    kw = dict(init=init, n_estimators=5, random_state=0)
    a = SPOBoost(SP, **kw).fit(X, C)
    b = SPOBoost(SP, **kw).fit(X * s + t, C)
    assert a.init_choice_ == b.init_choice_
    assert_allclose(b.predict(Xt * s + t), a.predict(Xt), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("k, init, loss, how", [
    (531, "auto", "spo+", "validation_fraction"), (50, "auto", "spo+", None),
    (-40, "auto", "spo+", None), (-600, "auto", "spo+", "validation_fraction"),
    (600, "index", "spo+", "X_val"), (-600, "spo+", "spo+", None),
    (600, "linear", "mse", None), (-40, "regressor", "spo+", "X_val")])
def test_costs_far_from_one_fit_the_model_of_the_costs_in_units_of_a_power_of_two(
        k, init, loss, how, tmp_path):
    # Costs whose largest magnitude is in [0.5, 1), and the same times 2^k: the
    # second are fitted in units of 2^k (their largest magnitude is outside
    # [2^-16, 2^16]), exactly the first fit (powers of two scale exactly), the
    # predictions times 2^k. Before: at 2^531 (1e160) the ridge start's squares
    # overflowed and the fit failed with "C contains NaN or infinity"; at 2^50
    # and 2^-40 the line search (first step 1, slope test relative to the
    # loss) never moved, and no tree changed a prediction.
    import warnings

    from sklearn.dummy import DummyRegressor

    X, C, Xt, _ = _sp_data(n=150, degree=6)
    C = C / 2.0 ** (np.floor(np.log2(C.max())) + 1)
    assert 0.5 <= C.max() < 1.0
    f = 2.0 ** k
    Xv, Cv = Xt[:60], C[:60] * 0.9
    kw = dict(loss=loss, n_estimators=6, random_state=0,
              init=DummyRegressor() if init == "regressor" else init,
              n_iter_no_change=None if how is None else 3)
    if how == "validation_fraction":
        kw["validation_fraction"] = 0.3
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(X))

    def fit(scale):
        val = dict(X_val=Xv, C_val=Cv * scale) if how == "X_val" else {}
        return SPOBoost(SP, **kw).fit(X, C * scale, sample_weight=w, **val)

    a = fit(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = fit(f)
        P, D = b.predict(Xt), b.predict_decision(Xt)
    if how is None:
        assert a.n_estimators_ == 6  # the trees are part of the comparison ...
        moved = np.abs(a.predict(Xt) - a._start().predict(Xt)).max()
        assert moved > 1e-3 * np.abs(C).max()  # ... and move the predictions
    assert b.init_choice_ == a.init_choice_ and b.n_estimators_ == a.n_estimators_
    assert_array_equal(b.train_score_, a.train_score_)
    assert_array_equal(b.validation_score_, a.validation_score_)
    assert_array_equal(P, a.predict(Xt) * f)
    assert_array_equal(D, a.predict_decision(Xt))
    if init == "regressor":  # fitted to the costs as given
        assert_array_equal(b.init_estimator_.predict(Xt), a.init_estimator_.predict(Xt) * f)
    else:  # and the model survives a file
        b.save(tmp_path / "b.json")
        assert_array_equal(spotree.load(tmp_path / "b.json").predict(Xt), P)


@pytest.mark.parametrize("k", [600, -600])
@pytest.mark.parametrize("init", ["auto", "spo+", "ridge", "linear"])
def test_features_far_from_one_give_the_same_model(k, init):
    # Features times 2^k (two of five, the others as they are): the same
    # model, exactly. The starts' weighted feature variances squared the
    # features: at 2^600 they overflowed (the fit failed with "C contains NaN
    # or infinity"), at 2^-600 they vanished and the features counted as
    # constant (other decisions).
    import warnings

    X, C, Xt, _ = _sp_data(n=150, degree=6)
    s = np.array([2.0 ** k, 1.0, 2.0 ** k, 1.0, 1.0])
    kw = dict(init=init, n_estimators=5, random_state=0)
    a = SPOBoost(SP, **kw).fit(X, C)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = SPOBoost(SP, **kw).fit(X * s, C)
        P = b.predict(Xt * s)
    assert b.init_choice_ == a.init_choice_
    assert_array_equal(b.train_score_, a.train_score_)
    # (The linear start's least squares on scaled columns: rounding apart, to
    # 1.4e-15. At 2^600 its sums of squares overflowed: "SVD did not converge".)
    assert_allclose(P, a.predict(Xt), rtol=1e-12, atol=1e-14 if init == "linear" else 0)


@pytest.mark.parametrize("init", ["auto", "ridge", "index", "spo+"])
def test_features_at_the_float_limit_fit_the_starts(init):
    # A feature taking +-1.8e308: the ridge's centred features x - mean
    # overflowed to inf (max - (a negative mean)), its coefficients were NaN
    # and the fit failed ("C contains NaN or infinity", costs of 1 and 2). Each
    # group of rows now gets its own cheapest option, as built.
    import warnings

    big = np.finfo(np.float64).max
    X = np.array([[-big], [-big], [big], [big], [0.0], [0.0]])
    best = np.array([0, 0, 1, 1, 2, 2])
    C = 2.0 - np.eye(3)[best]
    problem = FiniteDecisions(np.eye(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = SPOBoost(problem, init=init, n_estimators=10, learning_rate=0.5, max_depth=2,
                     min_samples_leaf=1, n_iter_no_change=None, random_state=0).fit(X, C)
        P = m.predict(X)
    assert np.isfinite(P).all()
    assert_array_equal(m.predict_decision(X).argmax(axis=1), best)


def test_predicted_costs_beyond_the_float_range_are_refused_naming_the_row():
    # Finite features far beyond the training rows' (1.8e308 with both signs):
    # the index start's linear index was inf - inf, predict returned NaN
    # without a word and predict_decision blamed C ("C contains NaN or
    # infinity"). The linear part alone passes the float range here.
    X, C, _, _ = _sp_data(n=60, n_test=1)
    m = SPOBoost(SP, init="ridge", n_estimators=2, max_depth=2, random_state=0).fit(X, C)
    Xb = X[:3].copy()
    big = np.finfo(np.float64).max
    Xb[2] = big * np.sign(m.init_coef_[0])
    assert np.abs(m.init_coef_[0]).sum() > 1.01  # so c_hat > big, by hand
    for method in (m.predict, m.predict_decision, lambda Z: list(m.staged_predict(Z))):
        with pytest.raises(ValueError, match=r"start predicts costs beyond the float range for "
                                             r"row 2 of X \(features up to 1\.8e\+308 .*'ridge'"):
            method(Xb)
    assert np.isfinite(m.predict(X)).all()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the ridge's overflow, then the error
@pytest.mark.parametrize("init, x_exp, c_exp", [
    ("ridge", -10, 1020), ("linear", -10, 1020), ("auto", -1070, 0), ("spo+", -1070, 0)])
def test_a_linear_start_whose_coefficients_pass_the_float_range_is_refused(init, x_exp, c_exp):
    # A cost per unit of feature beyond the float range: costs of 2^1020 over
    # features of about 2^-10 (the coefficients times the cost unit were
    # inf: predictions inf or NaN, no error), or subnormal features (the
    # ridge's coefficients were inf: "C contains NaN or infinity", costs of
    # about 1). Refused, naming the features; init="mean" fits them.
    X, C, Xt, _ = _sp_data(n=60, n_test=20)
    X, Xt, C = X * 2.0 ** x_exp, Xt * 2.0 ** x_exp, C * 2.0 ** c_exp
    kw = dict(n_estimators=2, max_depth=2, random_state=0)
    with pytest.raises(ValueError, match=r"start has coefficients beyond the float range in "
                                         r"the costs' units .*features as small as") as info:
        SPOBoost(SP, init=init, **kw).fit(X, C)
    # A public exception, not the private class that init="auto" catches.
    assert type(info.value) is ValueError
    m = SPOBoost(SP, init="mean", **kw).fit(X, C)
    assert np.isfinite(m.predict(Xt)).all()


def test_auto_start_keeps_ridge_where_the_index_link_passes_the_float_range(monkeypatch):
    # init="auto" on costs near the float range raised "init='index' start has
    # coefficients beyond the float range" (the index link's knots pass it on
    # a fold), though the user chose no index start and the ridge start fits.
    from spotree import boost
    from spotree.datasets import make_shortest_path

    X, C = make_shortest_path(60, n_features=3, grid=(3, 3), degree=8, noise=0.5,
                              random_state=0)
    f = np.finfo(np.float64).max / C.max()
    kw = dict(n_estimators=2, max_depth=2, random_state=0)
    with pytest.raises(ValueError, match=r"init='index' start has coefficients beyond.*"
                                         r"Rescale .* or use init='mean'") as info:
        SPOBoost(SP, init="index", **kw).fit(X, C * f)
    # Shown as a ValueError, not by the private class that init="auto" catches.
    assert type(info.value) is ValueError
    assert "_StartOutOfRange" not in "".join(traceback.format_exception(info.value))
    m = SPOBoost(SP, **kw).fit(X, C * f)
    assert m.init_choice_ == "ridge" and math.isnan(m.init_cv_regret_["index"])
    # The ridge start's regret as on the unscaled costs (the same folds: the
    # decisions do not change with the scale), and its start the ridge's own.
    unscaled = SPOBoost(SP, **kw).fit(X, C)
    assert unscaled.init_choice_ == "index"
    assert m.init_cv_regret_["ridge"] == pytest.approx(unscaled.init_cv_regret_["ridge"],
                                                       rel=1e-9)
    ridge = SPOBoost(SP, init="ridge", **kw).fit(X, C * f)
    assert_allclose(m.init_coef_, ridge.init_coef_, rtol=1e-9)
    assert_allclose(m.init_intercept_, ridge.init_intercept_, rtol=1e-9)
    # In range on every fold but not on the rows refitted (all 60): ridge too.
    check = boost._check_start_in_range

    def out_on_all_rows(start, unit, X, C, sw):
        if start.choice == "index" and X.shape[0] == 60:
            raise boost._StartOutOfRange("out of range")
        check(start, unit, X, C, sw)

    monkeypatch.setattr(boost, "_check_start_in_range", out_on_all_rows)
    m = SPOBoost(SP, **kw).fit(X, C)
    assert m.init_choice_ == "ridge" and math.isnan(m.init_cv_regret_["index"])


def test_a_scikit_learn_regressor_as_the_start():
    from sklearn.linear_model import LinearRegression
    from sklearn.neighbors import KNeighborsRegressor

    X, C, Xt, _ = _sp_data(n=200)
    kw = dict(n_estimators=3, random_state=0)
    est = LinearRegression()
    m = SPOBoost(SP, init=est, **kw).fit(X, C)
    ref = SPOBoost(SP, init="linear", **kw).fit(X, C)
    assert m.init_choice_ == "estimator" and not hasattr(est, "coef_")  # a clone was fitted
    assert_allclose(m.init_estimator_.coef_, ref.init_coef_, atol=1e-10)
    assert_allclose(m.predict(Xt), ref.predict(Xt), atol=1e-8)
    # A regressor without sample_weight: equal weights only.
    knn = SPOBoost(SP, init=KNeighborsRegressor(10), n_estimators=1,
                   n_iter_no_change=None).fit(X, C, sample_weight=np.full(len(X), 2.0))
    assert_allclose(knn._start().predict(Xt),
                    KNeighborsRegressor(10).fit(X, C).predict(Xt))
    with pytest.raises(ValueError, match="does not accept sample_weight"):
        SPOBoost(SP, init=KNeighborsRegressor(10)).fit(X, C, sample_weight=np.arange(len(X)))
    with pytest.raises(ValueError, match=r"predicts \(1,\) values per row; the problem has "
                                         "n_costs=12"):
        SPOBoost(SP, init=_OneColumn()).fit(X, C)
    with pytest.raises(TypeError, match="cannot be saved as JSON"):
        m.save("unused.json")
    again = pickle.loads(pickle.dumps(m))
    assert_array_equal(again.predict(Xt), m.predict(Xt))


def test_a_regressor_without_sample_weight_takes_zero_weights_as_rows_left_out():
    # Weight 0 means a row removed; KNeighborsRegressor's fit takes no
    # sample_weight, and weights of 1 and 0 raised "does not accept
    # sample_weight". The model must be the one fitted without those rows.
    from sklearn.neighbors import KNeighborsRegressor

    X, C, Xt, _ = _sp_data(n=120)
    sw = np.ones(len(X))
    sw[10:20] = 0.0
    kw = dict(init=KNeighborsRegressor(5), n_estimators=5, n_iter_no_change=None,
              random_state=0)
    dropped = SPOBoost(SP, **kw).fit(X[sw > 0], C[sw > 0])
    weighted = SPOBoost(SP, **kw).fit(X, C, sample_weight=3.0 * sw)
    assert_allclose(weighted._start().predict(Xt),
                    KNeighborsRegressor(5).fit(X[sw > 0], C[sw > 0]).predict(Xt))
    assert_allclose(weighted.predict(Xt), dropped.predict(Xt), rtol=1e-12, atol=1e-12)
    # Unequal positive weights still cannot reach it.
    sw[0] = 2.0
    with pytest.raises(ValueError, match="does not accept sample_weight"):
        SPOBoost(SP, **kw).fit(X, C, sample_weight=sw)


def test_a_single_output_regressor_as_the_start_is_refused_naming_init():
    # init=SVR() (or HistGradientBoostingRegressor()) failed with scikit-learn's
    # "y should be a 1d array, got an array of shape (96, 12)": no word of init,
    # and 96 rows where the user passed 120 (the early-stopping split).
    from sklearn.multioutput import MultiOutputRegressor
    from sklearn.svm import SVR

    X, C, Xt, _ = _sp_data(n=120)
    with pytest.raises(ValueError, match=r"init=SVR\(\.\.\.\) could not be fitted to the costs "
                                         r"\(an array of shape \(96, 12\), one column per "
                                         r"cost\): y should be a 1d array.* wrap it as "
                                         r"init=MultiOutputRegressor\(SVR\(\.\.\.\)\)"):
        SPOBoost(SP, init=SVR()).fit(X, C)
    # Wrapped as the message says, it is the start: one SVR per cost.
    m = SPOBoost(SP, init=MultiOutputRegressor(SVR()), n_estimators=1,
                 n_iter_no_change=None).fit(X, C)
    by_hand = np.column_stack([SVR().fit(X, C[:, j]).predict(Xt) for j in range(C.shape[1])])
    assert_allclose(m._start().predict(Xt), by_hand, rtol=1e-12, atol=1e-12)


def test_a_single_output_regressor_starts_a_one_cost_problem_without_a_warning():
    # With n_costs=1 a single-output regressor needs no wrapper, but it was fitted
    # to the (n, 1) column of costs: scikit-learn's DataConversionWarning ("A
    # column-vector y was passed when a 1d array was expected"), once per fit of
    # the start (twice with early stopping), on legal input. The start is the
    # regressor fitted to the costs as a 1-d target.
    import warnings

    from sklearn.svm import SVR

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    C = (X @ [1.0, -2.0] + rng.normal(size=40))[:, None]
    Xt = rng.normal(size=(10, 2))
    one = FiniteDecisions(np.eye(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = SPOBoost(one, init=SVR(), n_estimators=1, n_iter_no_change=None).fit(X, C)
        SPOBoost(one, init=SVR(), n_estimators=1, min_samples_leaf=5,
                 random_state=0).fit(X, C)
    assert_allclose(m._start().predict(Xt), SVR().fit(X, C[:, 0]).predict(Xt)[:, None],
                    rtol=1e-12, atol=1e-12)


def test_learning_rate_set_after_fit_changes_nothing_until_refit(tmp_path):
    # predict shrank the trees by the learning_rate set at predict time:
    # set_params(learning_rate=0.5) after fit moved the predictions (and the
    # saved file held 0.5, so the loaded model predicted them too).
    X, C, Xt, _ = _sp_data(n=80, n_test=20)
    m = SPOBoost(SP, n_estimators=4, learning_rate=0.1, n_iter_no_change=None,
                 init="mean", random_state=0).fit(X, C)
    by_hand = m._start().predict(Xt) + 0.1 * sum(
        est.tree_.value[est.tree_.apply(Xt)] for est in m.estimators_)
    m.set_params(learning_rate=0.5)
    assert_allclose(m.predict(Xt), by_hand, rtol=1e-12, atol=1e-12)
    assert_allclose(list(m.staged_predict(Xt))[-1], by_hand, rtol=1e-12, atol=1e-12)
    m.save(tmp_path / "m.json")
    loaded = spotree.load(tmp_path / "m.json")
    assert loaded.learning_rate == 0.1
    assert_allclose(loaded.predict(Xt), by_hand, rtol=1e-12, atol=1e-12)
    # A refit takes the new rate.
    assert m.fit(X, C)._shrinkage() == 0.5


def test_a_wrapped_regressor_as_the_start_under_metadata_routing():
    # With metadata routing on, a fit without weights handed sample_weight=1
    # to MultiOutputRegressor, which refused it (UnsetMetadataPassedError:
    # Ridge had not requested it), so the suggested wrapper could not start.
    from sklearn import config_context
    from sklearn.linear_model import Ridge
    from sklearn.multioutput import MultiOutputRegressor

    X, C, Xt, _ = _sp_data(n=60)
    kw = dict(n_estimators=1, n_iter_no_change=None)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(X))
    with config_context(enable_metadata_routing=True):
        m = SPOBoost(SP, init=MultiOutputRegressor(Ridge()), **kw).fit(X, C)
        # Weights reach it as routing says: requested by the inner regressor.
        inner = Ridge().set_fit_request(sample_weight=True)
        mw = SPOBoost(SP, init=MultiOutputRegressor(inner), **kw).fit(X, C, sample_weight=w)
    by_hand = np.column_stack([Ridge().fit(X, C[:, j]).predict(Xt) for j in range(C.shape[1])])
    assert_allclose(m._start().predict(Xt), by_hand, rtol=1e-10, atol=1e-10)
    by_hand = np.column_stack([Ridge().fit(X, C[:, j], sample_weight=w).predict(Xt)
                               for j in range(C.shape[1])])
    assert_allclose(mw._start().predict(Xt), by_hand, rtol=1e-10, atol=1e-10)


class _OneColumn:
    """A regressor predicting one value per row (the wrong shape for 12 costs)."""

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def fit(self, X, C):
        return self

    def predict(self, X):
        return np.zeros((len(X), 1))


class _Constant:
    """A regressor predicting ``value`` for every cost of every row."""

    def __init__(self, value):
        self.value = value

    def get_params(self, deep=True):
        return {"value": self.value}

    def set_params(self, **params):
        self.value = params.get("value", self.value)
        return self

    def fit(self, X, C):
        self.n_costs_ = np.shape(C)[1]
        return self

    def predict(self, X):
        return np.full((len(X), self.n_costs_), self.value)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("n_iter_no_change", [None, 10])
def test_an_init_regressor_predicting_nan_is_named_not_the_costs(value, n_iter_no_change):
    # A start predicting NaN or infinity on the training rows failed in the
    # first oracle call with "C contains NaN or infinity (first at row 0,
    # column 0); costs must be finite": it blamed the user's costs, which are
    # finite, and named no init.
    X, C, _, _ = _sp_data(n=40)
    assert np.isfinite(C).all()
    with pytest.raises(ValueError, match=r"init=_Constant\(\.\.\.\) predicts NaN or infinity "
                                         r"for 40 of the 40 rows it was fitted on"
                                         if n_iter_no_change is None else
                                         r"init=_Constant\(\.\.\.\) predicts NaN or infinity "
                                         r"for 32 of the 32 rows it was fitted on"):
        SPOBoost(SP, init=_Constant(value), n_estimators=2, random_state=0,
                 n_iter_no_change=n_iter_no_change).fit(X, C)


def test_save_load_of_the_index_start(tmp_path):
    X, C, Xt, _ = _sp_data(n=200, degree=6)
    m = SPOBoost(SP, init="index", n_estimators=5, random_state=0).fit(X, C)
    m.save(tmp_path / "b.json")
    loaded = spotree.load(tmp_path / "b.json")
    assert loaded.init_choice_ == "index"
    assert_array_equal(loaded.init_link_knots_, m.init_link_knots_)
    assert_array_equal(loaded.predict(Xt), m.predict(Xt))
    # A linear start after an index start leaves no link behind.
    m.set_params(init="ridge").fit(X, C)
    assert not hasattr(m, "init_link_knots_")


def test_spo_plus_start_is_adam_from_ridge_on_standardized_features_averaged():
    # Hand loop: the ridge start (tested above) written in standardized
    # features, then minibatches of 32 in a new random order every epoch,
    # Adam (lr 0.01) on the SPO+ subgradient 2 (w*(c) - w*(2 c_hat - c)) for
    # 20 epochs; the start is the mean of the parameters after every step of
    # epochs 10 to 19, not the last iterate, mapped back to the raw features.
    X, C, _, _ = _sp_data(n=150)
    m = SPOBoost(SP, init="spo+", n_estimators=1, n_iter_no_change=None,
                 random_state=0).fit(X, C)
    ridge = SPOBoost(SP, init="ridge", n_estimators=1, n_iter_no_change=None).fit(X, C)
    rng = np.random.RandomState(np.random.RandomState(0).randint(np.iinfo(np.int32).max))
    n = X.shape[0]
    mean, scale = _standardize(X, np.ones(n))
    Z = (X - mean) / scale
    A = ridge.init_coef_ * scale
    b = ridge.init_intercept_ + ridge.init_coef_ @ mean
    moments = [[np.zeros_like(A), np.zeros_like(A)], [np.zeros_like(b), np.zeros_like(b)]]
    W_true = SP.solve(C)[0]
    sum_A, sum_b, k, t = np.zeros_like(A), np.zeros_like(b), 0, 0
    for epoch in range(20):
        order = rng.permutation(n)
        for s in range(0, n, 32):
            rows = order[s:s + 32]
            C_hat = Z[rows] @ A.T + b
            G = 2 * (W_true[rows] - SP.solve(2 * C_hat - C[rows])[0]) / len(rows)
            t += 1
            for param, g, mv in zip((A, b), (G.T @ Z[rows], G.sum(axis=0)), moments):
                mv[0] = 0.9 * mv[0] + 0.1 * g
                mv[1] = 0.999 * mv[1] + 0.001 * g * g
                param -= 0.01 * (mv[0] / (1 - 0.9 ** t)) / (
                    np.sqrt(mv[1] / (1 - 0.999 ** t)) + 1e-8)
            if epoch >= 10:
                sum_A += A
                sum_b += b
                k += 1
    assert k == 10 * int(np.ceil(n / 32))
    coef = sum_A / k / scale
    assert_allclose(m.init_coef_, coef, rtol=1e-8, atol=1e-10)
    assert_allclose(m.init_intercept_, sum_b / k - coef @ mean, rtol=1e-8, atol=1e-10)
    assert not np.allclose(m.init_coef_, A / scale, atol=1e-6)  # not the last iterate
    assert not np.allclose(m.init_coef_, ridge.init_coef_, atol=1e-3)  # Adam did move


def test_held_out_rows_choose_the_rounds_then_all_rows_are_refitted():
    # Least-squares boosting from the mean, so that the refit is a
    # deterministic hand loop: the start and best_iteration_ trees on all the
    # rows, the held-out ones included.
    X, C, _, _ = _sp_data(n=200, degree=6)
    lr = 0.3
    m = SPOBoost(SP, loss="mse", init="mean", learning_rate=lr, max_depth=2,
                 min_samples_leaf=8, validation_fraction=0.3, n_iter_no_change=3,
                 random_state=0).fit(X, C)
    B = m.best_iteration_
    assert 0 < B < m.n_iter_ and m.n_estimators_ == B
    assert m.best_iteration_ == int(np.argmax(m.validation_score_))
    assert_allclose(m.init_coef_, 0.0)
    assert_allclose(m.init_intercept_, C.mean(axis=0), atol=1e-12)
    F = np.tile(C.mean(axis=0), (len(X), 1))
    for _ in range(B):
        tree = DecisionTreeRegressor(max_depth=2, min_samples_leaf=8).fit(X, C - F)
        F = F + lr * tree.predict(X)
    assert_allclose(m.predict(X), F, atol=1e-10)
    # An explicit validation set is not refitted on: the start is the
    # least-squares fit of X alone.
    v = SPOBoost(SP, loss="mse", init="linear", n_iter_no_change=3, random_state=0).fit(
        X[:150], C[:150], X_val=X[150:], C_val=C[150:])
    A1 = np.column_stack([X, np.ones(len(X))])
    sol = np.linalg.lstsq(A1[:150], C[:150], rcond=None)[0]
    assert_allclose(v.init_coef_, sol[:-1].T, atol=1e-10)


@pytest.mark.parametrize("subsample, n_bag", [(0.5, 60), (0.9, 108), (0.333, 39)])
def test_subsample_trains_each_tree_on_that_many_distinct_rows(subsample, n_bag):
    # A subsample is drawn without replacement: exactly subsample * n rows,
    # rounded down as scikit-learn's gradient boosting does (39 of 120 at
    # 0.333, not 40), carry weight in each round (a draw with replacement
    # repeats rows and so leaves fewer of them in the tree's root).
    X, C, _, _ = _sp_data(n=120)
    m = SPOBoost(SP, n_estimators=4, subsample=subsample, n_iter_no_change=None,
                 random_state=0).fit(X, C)
    for est in m.estimators_:
        assert est.tree_.n_node_samples[0] == n_bag
        assert est.tree_.weighted_n_node_samples[0] == pytest.approx(n_bag)


def test_a_category_column_is_one_indicator_column_per_category(tmp_path):
    # Before: fit used the codes as numbers and predict failed on the labels.
    import pandas as pd

    rng = np.random.default_rng(0)
    n = 120
    soil = rng.choice(["wet", "dry", "clay"], n)
    a = rng.normal(size=n)
    X = pd.DataFrame({"a": a, "soil": pd.Series(soil, dtype=object)})
    C = np.column_stack([np.where(soil == "dry", 1.0, 3.0) + a, np.full(n, 2.0),
                         np.where(soil == "wet", 1.5, 2.5)]) + rng.normal(scale=0.1, size=(n, 3))
    hand = np.column_stack([a, soil == "clay", soil == "dry", soil == "wet"]).astype(float)
    params = dict(n_estimators=8, min_samples_leaf=5, n_iter_no_change=None, random_state=0)
    est = SPOBoost(**params).fit(X, C)
    ref = SPOBoost(**params).fit(hand, C)
    assert est.n_estimators_ == ref.n_estimators_ > 0
    assert_allclose(est.predict(X), ref.predict(hand), rtol=1e-12, atol=1e-12)
    # One importance per column of X: a category's is that of its indicators.
    imp = ref.feature_importances_
    assert_allclose(est.feature_importances_, [imp[0], imp[1:].sum()], rtol=1e-12)
    # Saved and loaded like any model: the same predictions, labels and all.
    est.save(tmp_path / "boost.json")
    back = spotree.load(tmp_path / "boost.json")
    assert back.category_values_ == [None, ["clay", "dry", "wet"]]
    new = X.iloc[:5].copy()
    new.loc[new.index[0], "soil"] = "sand"  # unseen: all-zero indicators
    assert_array_equal(back.predict(new), est.predict(new))
    # The file's widths are checked against the categories.
    import json

    doc = json.loads((tmp_path / "boost.json").read_text())
    doc["fitted"]["init_coef_"] = [row[:-1] for row in doc["fitted"]["init_coef_"]]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"fitted\.init_coef_ has 3 columns but the model has "
                                         r"4 \(one per numeric feature and one per category"):
        spotree.load(tmp_path / "bad.json")
    doc = json.loads((tmp_path / "boost.json").read_text())
    doc["fitted"]["category_values_"][1] = ["clay", "dry"]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"trees\[0\]\.n_features is 4 but the model has 3 "
                                         r"columns"):
        spotree.load(tmp_path / "bad.json")


def _weekday_data(n=120, seed=0):
    # Days interact with a: a linear start leaves the trees work on days.
    return weekday_data(n, seed, noise=0.3, costs=lambda day, a, b: np.column_stack(
        [1.0 + 2.0 * (day == 1) * (a > 0) + a, np.full(n, 2.0), 2.5 - (day >= 3) * (b > 0)]))


@pytest.mark.parametrize("init", ["ridge", "index"])
def test_categorical_features_make_codes_a_category_column(init, tmp_path):
    # Before: SPOBoost had no categorical_features; the codes were one number
    # for the start and the trees. Now column 1 is the indicator columns of a
    # DataFrame's category column, and of X one-hot encoded by hand.
    import pandas as pd
    from sklearn.base import clone

    X, frame, hand, C = _weekday_data()
    params = dict(n_estimators=6, min_samples_leaf=5, init=init, n_iter_no_change=None,
                  random_state=0)
    est = SPOBoost(categorical_features=[1], **params).fit(X, C)
    by_dtype = SPOBoost(**params).fit(frame, C)
    by_hand = SPOBoost(**params).fit(hand, C)
    assert est.category_values_ == by_dtype.category_values_ == [None, [0, 1, 2, 3, 4], None]
    # The same indicator matrix gives the same start and trees: exactly equal.
    assert_array_equal(est.init_coef_, by_dtype.init_coef_)
    assert_array_equal(est.predict(X), by_dtype.predict(frame))
    assert_allclose(est.init_coef_, by_hand.init_coef_, rtol=1e-12, atol=1e-12)
    assert_allclose(est.predict(X), by_hand.predict(hand), rtol=1e-12, atol=1e-12)
    assert [t.tree_.feature.tolist() for t in est.estimators_] == [
        t.tree_.feature.tolist() for t in by_hand.estimators_]
    # One importance per column of X: the day's is that of its indicators.
    imp = by_hand.feature_importances_
    assert_allclose(est.feature_importances_, [imp[0], imp[1:6].sum(), imp[6]], rtol=1e-12)
    assert est.feature_importances_[1] > 0.05  # the trees split days
    # A day never seen at fit (7), or missing, predicts as all-zero indicators.
    new = X[:3].copy()
    new[0, 1], new[1, 1] = 7.0, np.nan
    h = hand[:3].copy()
    h[:2, 1:6] = 0.0
    P = est.predict(new)
    assert_allclose(P, by_hand.predict(h), rtol=1e-12, atol=1e-12)
    unseen = frame.iloc[:2].assign(day=pd.Categorical([None, None], categories=range(5)))
    assert_array_equal(P[:2], by_dtype.predict(unseen))
    # Kept by save/load (an array at predict, as at fit), pickle and clone.
    est.save(tmp_path / "boost.json")
    back = spotree.load(tmp_path / "boost.json")
    assert back.categorical_features == [1] and back.category_values_ == est.category_values_
    assert_array_equal(back.predict(new), P)
    assert_array_equal(pickle.loads(pickle.dumps(est)).predict(new), P)
    assert clone(est).get_params()["categorical_features"] == [1]


def test_categorical_features_by_name_with_a_validation_part():
    # Named on a DataFrame's numeric column; X_val is checked the same way.
    X, frame, _, C = _weekday_data()
    numeric = frame.assign(day=X[:, 1])
    params = dict(n_estimators=5, min_samples_leaf=5, init="ridge", n_iter_no_change=2,
                  random_state=0)
    est = SPOBoost(categorical_features=["day"], **params).fit(
        numeric[:80], C[:80], X_val=numeric[80:], C_val=C[80:])
    ref = SPOBoost(**params).fit(frame[:80], C[:80], X_val=frame[80:], C_val=C[80:])
    assert_array_equal(est.validation_score_, ref.validation_score_)
    assert_array_equal(est.predict(numeric), ref.predict(frame))
    with pytest.raises(ValueError, match=r"categorical_features names 'weekday', which is not "
                                         r"a column of X"):
        SPOBoost(categorical_features=["weekday"], **params).fit(numeric, C)
    with pytest.raises(ValueError, match=r"categorical_features index 3 is out of range for 3 "
                                         r"features"):
        SPOBoost(categorical_features=[3], **params).fit(X, C)


@pytest.mark.parametrize("loss", ["mse", "spo+"])
@pytest.mark.parametrize("subsample, max_features", [(1.0, None), (0.7, 2)])
def test_rounds_grow_the_trees_of_a_public_spotree_fit_loop(loss, subsample, max_features):
    # The data are prepared once per fit and reused every round; the trees
    # must be those of SPOTree.fit on each round's targets, by an independent
    # loop: the seeds and subsamples drawn as documented, the targets (the
    # residuals, or the negative SPO+ subgradients at the current
    # predictions) computed by hand.
    from spotree import SPOTree

    X, C, _, _ = _sp_data(n=150, degree=4)
    # The generator's C is column-major and the fit makes costs row-major
    # (d7334ff); the start C.mean(axis=0) sums in another order on each, so
    # the loop below starts from the same array as the fit does.
    C = np.ascontiguousarray(C)
    lr, rounds, depth, leaf = 0.3, 4, 3, 5
    m = SPOBoost(SP, loss=loss, init="mean", n_estimators=rounds, learning_rate=lr,
                 max_depth=depth, min_samples_leaf=leaf, subsample=subsample,
                 max_features=max_features, n_iter_no_change=None, random_state=7).fit(X, C)
    rng = np.random.RandomState(7)
    n = len(X)
    F = np.tile(C.mean(axis=0), (n, 1))
    W_true = SP.solve(C)[0]
    for t in range(rounds):
        seed = rng.randint(np.iinfo(np.int32).max)
        w = np.ones(n)
        if subsample < 1.0:
            w = np.zeros(n)
            w[rng.choice(n, int(subsample * n), replace=False)] = 1.0
        target = C - F if loss == "mse" else -2 * (W_true - SP.solve(2 * F - C)[0])
        ref = SPOTree(criterion="mse", max_depth=depth, min_samples_leaf=leaf,
                      max_features=max_features, random_state=seed).fit(X, target,
                                                                        sample_weight=w)
        got = m.estimators_[t].tree_
        for name in ("children_left", "children_right", "feature", "threshold",
                     "n_node_samples", "weighted_n_node_samples"):
            assert_array_equal(getattr(got, name), getattr(ref.tree_, name), err_msg=name)
        if loss == "mse":
            assert_array_equal(got.impurity, ref.tree_.impurity)
        else:
            # SPO+ rounds grow on the targets' coordinates in the grid's
            # difference basis: the same squared errors up to rounding.
            assert_allclose(got.impurity, ref.tree_.impurity, rtol=1e-12)
        leaves = got.children_left == -1
        if loss == "mse":
            assert_array_equal(got.value[leaves], ref.tree_.value[leaves])
        else:
            # Each leaf's step is along the leaf's mean target (the line search's scale).
            V = ref.tree_.value[leaves]
            S = got.value[leaves]
            gamma = np.einsum("ij,ij->i", S, V) / np.maximum(np.einsum("ij,ij->i", V, V),
                                                             1e-300)
            assert_allclose(S, gamma[:, None] * V, atol=1e-12)
        F = F + lr * got.value[got.apply(X)]
    assert_allclose(m.predict(X), F, atol=1e-10)


@pytest.mark.parametrize("small", [True, False])
def test_fit_runs_blas_on_one_thread_for_small_data(monkeypatch, small):
    # The start's mid-sized products run on one BLAS thread (threads only
    # contend there); large fits keep the threads they had. Seen from inside
    # the fit, through a regressor start's fit.
    from sklearn.linear_model import Ridge
    from threadpoolctl import threadpool_info

    import spotree.boost as boost

    def blas_threads():
        return sorted(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

    if not any(n > 1 for n in blas_threads()):
        pytest.skip("BLAS runs on one thread here anyway")
    if not small:
        monkeypatch.setattr(boost, "_BLAS_ONE_THREAD_WORK", 0)
    seen = []

    class Probe(Ridge):
        def fit(self, X, y, sample_weight=None):
            seen.append(blas_threads())
            return super().fit(X, y, sample_weight=sample_weight)

    before = blas_threads()
    X, C, _, _ = _sp_data(n=60, degree=2)
    SPOBoost(SP, init=Probe(), n_estimators=2, random_state=0).fit(X, C)
    assert seen and all(s == ([1] * len(before) if small else before) for s in seen)
    assert blas_threads() == before


def test_auto_init_fits_folds_in_order_when_a_start_draws_random_numbers(monkeypatch):
    # The SPO+ start draws from the fit's random stream: on threads the
    # draws would come in any order, so its folds are fitted one by one.
    from concurrent.futures import ThreadPoolExecutor

    import spotree.boost as boost

    monkeypatch.setattr(boost, "_CV_STARTS", ("index", "spo+"))
    monkeypatch.setattr(boost, "threadpool_info",
                        lambda: [{"user_api": "blas", "num_threads": 3}])
    pools = []

    def executor(k):
        pools.append(k)
        return ThreadPoolExecutor(k)

    monkeypatch.setattr(boost, "ThreadPoolExecutor", executor)
    X, C, _, _ = _sp_data(n=80, degree=2)
    m = SPOBoost(SP, n_estimators=2, random_state=0).fit(X, C)
    assert set(m.init_cv_regret_) == {"index", "spo+"} and pools == []


def _network_problems():
    # A small DAG with an edge off every path, as from_edges and as the LP
    # a user holding A and b writes.
    edges = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (2, 4), (3, 4), (4, 5), (3, 5), (6, 3)]
    sp = ShortestPath.from_edges(7, edges, 0, 5)
    A = np.zeros((7, len(edges)))
    for e, (t, h) in enumerate(edges):
        A[t, e], A[h, e] = -1.0, 1.0
    b = np.zeros(7)
    b[0], b[5] = -1.0, 1.0
    return {"dag": sp, "lp": LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1))}


@pytest.mark.parametrize("kind", ["dag", "lp", "grid"])
def test_spo_plus_rounds_in_the_difference_basis_grow_the_same_model(monkeypatch, kind):
    # Against the same fit with the trees grown on the full targets (no
    # basis): the same splits, and predictions equal up to rounding.
    problem = SP if kind == "grid" else _network_problems()[kind]
    d = problem.n_costs
    B = problem.difference_basis()
    assert B is not None and B.shape[1] < d
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    C = np.exp(X[:, :2] @ rng.normal(size=(2, d)) / 2) * rng.uniform(0.5, 1.5, size=(300, d))
    params = dict(init="mean", n_estimators=8, max_depth=3, min_samples_leaf=10,
                  n_iter_no_change=None, random_state=0)
    got = SPOBoost(problem, **params).fit(X, C)
    monkeypatch.setattr(type(problem), "difference_basis", lambda self: None)
    ref = SPOBoost(problem, **params).fit(X, C)
    assert len(got.estimators_) == len(ref.estimators_) == 8
    for a, r in zip(got.estimators_, ref.estimators_):
        for name in ("children_left", "feature", "threshold"):
            assert_array_equal(getattr(a.tree_, name), getattr(r.tree_, name))
        assert a.tree_.value.shape == r.tree_.value.shape == (a.tree_.node_count, d)
        assert_allclose(a.tree_.value, r.tree_.value, rtol=1e-9, atol=1e-9)
    assert_allclose(got.predict(X), ref.predict(X), rtol=1e-9, atol=1e-9)
    assert np.ptp(got.predict(X)) > 0  # the trees moved the predictions


def test_oracle_batches_on_threads_fit_the_same_model(monkeypatch):
    # SPOBoost lets a compiled solver split its batches over threads during
    # fit (solve_threads); every row is solved alone, so the model is the
    # one fitted on a single thread, exactly.
    import spotree.problems._compiled as comp

    monkeypatch.setattr(comp, "MIN_PART_SECONDS", 1e-12)  # split every batch
    monkeypatch.setattr(comp, "_cores", lambda: 4)  # whatever this machine has
    seen, split = [], []
    real = comp._solve_part

    def spy(solve, oracle, Cm, out, z, s, m, seconds, stop):
        if s == 0:  # the calling thread's part: the block's setting
            seen.append(comp._SOLVE_THREADS.get())
        else:
            split.append(s)
        return real(solve, oracle, Cm, out, z, s, m, seconds, stop)

    monkeypatch.setattr(comp, "_solve_part", spy)
    rng = np.random.default_rng(4)
    weights = rng.integers(1, 10, size=(1, 12)).astype(float)
    problem = spotree.Knapsack(weights, 20.0)
    X = rng.normal(size=(400, 3))
    C = -np.exp(X @ rng.normal(size=(3, 12)) / 2) * rng.uniform(0.5, 1.5, size=(400, 12))
    params = dict(init="mean", n_estimators=6, n_iter_no_change=None, random_state=0)
    fits = {}
    for threads in (1, 3):
        monkeypatch.setattr(SPOBoost, "_solve_threads", threads)
        seen.clear()
        split.clear()
        fits[threads] = SPOBoost(problem, **params).fit(X, C).predict(X)
        assert set(seen) == {threads}
        assert bool(split) == (threads > 1)  # batches were split on threads
    assert_array_equal(fits[3], fits[1])
    assert np.ptp(fits[1]) > 0


def test_lp_decisions_and_refits_do_not_depend_on_what_the_problem_solved_before():
    # A LinearProgram carried its warm starts and basis cache from one call
    # to the next: predict_decision after another batch returned other tied
    # vertices, and a second fit on the same problem another model (with 150
    # rows and 3 rounds, 99 decisions and every prediction differed). Calls
    # start afresh now, and a fit's warm starts start afresh with it.
    from scipy.optimize import linprog

    A, b_ub, problem, X, C = tied_lp_data()
    params = dict(init="mean", n_estimators=2, max_depth=2, n_iter_no_change=None,
                  random_state=0)
    m = SPOBoost(problem, **params).fit(X, C)
    W = m.predict_decision(X)
    assert_array_equal(m.predict_decision(X), W)
    problem.solve(C)
    assert_array_equal(m.predict_decision(X), W)
    again = SPOBoost(problem, **params).fit(X, C)
    assert_array_equal(again.predict(X), m.predict(X))
    assert_array_equal(again.predict_decision(X), W)
    # The decisions are optimal for the predicted costs (scipy's linprog).
    P = m.predict(X)
    for i in range(0, 80, 13):
        ref = linprog(P[i], A_ub=A, b_ub=b_ub, bounds=(0, 1))
        assert P[i] @ W[i] == pytest.approx(ref.fun, abs=1e-9)


def test_a_max_problem_on_negated_costs_mirrors_the_min_fit(monkeypatch):
    # Class Notes, "Sign of the costs": "max" on -C is "min" on C. Every
    # start (and the squared-error trees) gives the negated model and the
    # same decisions; the index start because it tries its penalties
    # anchored at both ends of the index (the index of -C is the negated
    # index, so the two swap). Anchored at the low end only, as before, its
    # fit of -C was another model.
    import spotree.boost as boost

    X, C, Xt, _ = _sp_data(n=80, n_test=40)
    V = SP.vertices()
    lo, hi = FiniteDecisions(V), FiniteDecisions(V, sense="max")
    for init in ("ridge", "linear", "spo+", "index", "auto", "low end"):
        # The default itself for every start but the old one (a default
        # switched back to the low end must fail here).
        if init == "low end":
            monkeypatch.setattr(boost, "_LINK_BOTH_ENDS", False)
        kw = dict(init="index" if init == "low end" else init, n_estimators=3, max_depth=2,
                  random_state=0)
        a = SPOBoost(lo, **kw).fit(X, C)
        b = SPOBoost(hi, **kw).fit(X, -C)
        if init == "low end":
            assert not np.allclose(b.predict(Xt), -a.predict(Xt), rtol=0.0, atol=1e-3)
        else:
            assert_allclose(b.predict(Xt), -a.predict(Xt), rtol=1e-9, atol=1e-9)
            assert_array_equal(b.predict_decision(Xt), a.predict_decision(Xt))


def test_leaf_line_search_leaves_its_inputs_alone_and_reads_them_by_rows():
    # SPOBoost passes its own F, C and W_true (not copies) when every row
    # weighs, and the search computes in place: they must come back unchanged,
    # and the steps must be those of the same rows given as copies in another
    # order (an independent reading of the same leaves).
    from spotree.boost import _leaf_line_search

    problem = ShortestPath((3, 3))
    rng = np.random.default_rng(0)
    n, d = 60, problem.n_costs
    C = rng.uniform(1, 2, size=(n, d))
    F = rng.uniform(1, 2, size=(n, d))
    W_true = problem.solve(C)[0]
    w = rng.uniform(0.5, 1.5, size=n)
    leaf = rng.integers(0, 3, size=n)
    V = rng.normal(size=(3, d))
    W2 = problem.solve(2 * F - C)[0]
    grad = 2.0 * (W_true - W2)
    f0 = np.bincount(leaf, weights=w * np.maximum(np.einsum("ij,ij->i", 2 * F - C,
                                                            W_true - W2), 0), minlength=3)
    g0 = np.bincount(leaf, weights=w * np.einsum("ij,ij->i", grad, V[leaf]), minlength=3)
    kept = [a.copy() for a in (F, C, W_true, w, leaf, V)]
    gamma, _ = _leaf_line_search(problem, F, C, W_true, w, leaf, V, f0, g0, 1.0)
    for a, b in zip((F, C, W_true, w, leaf, V), kept):
        assert np.array_equal(a, b)
    p = rng.permutation(n)
    gamma_p, _ = _leaf_line_search(problem, F[p], C[p], W_true[p], w[p], leaf[p], V, f0, g0,
                                   1.0)
    np.testing.assert_allclose(gamma_p, gamma, rtol=1e-9)
    assert (gamma > 0).any()
