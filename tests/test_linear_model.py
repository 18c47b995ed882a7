"""SPOPlusLinear: a closed-form optimum, an LP optimum, PyEPO's own SPO+ and Adam,
estimator checks (the loss itself is tested in test_metrics.py)."""

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import linprog
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from spotree import ShortestPath, SPOPlusLinear
from spotree.datasets import make_pyepo_shortest_path, pyepo_shortest_path_columns
from spotree.metrics import normalized_spo_loss, spo_plus_loss
from spotree.problems import FiniteDecisions

from _helpers import weekday_data

SP = ShortestPath((3, 3))


# ------------------------------------------------------------ SPOPlusLinear
def _sp_data(n=300, seed=0, degree=2):
    X, C, B = make_pyepo_shortest_path(n, grid=(3, 3), degree=degree, noise=0.5,
                                       random_state=seed, return_B=True)
    Xt, Ct = make_pyepo_shortest_path(500, grid=(3, 3), degree=degree, noise=0.5, B=B,
                                      random_state=seed + 100)
    return X, C, Xt, Ct


def test_training_lowers_the_loss():
    X, C, _, _ = _sp_data()
    losses = []
    for epochs in (1, 5, 50):
        m = SPOPlusLinear(SP, max_iter=epochs, batch_size=1000, learning_rate=0.05,
                          random_state=0).fit(X, C)
        losses.append(spo_plus_loss(C, m.predict(X), problem=SP).mean())
    assert losses[0] > losses[1] > losses[2]
    m = SPOPlusLinear(SP, max_iter=20, random_state=0).fit(X, C)
    assert m.loss_curve_.shape == (20,) and m.n_iter_ == 20
    assert m.loss_curve_[-1] < 0.5 * m.loss_curve_[0]


def test_closed_form_constant_model():
    """Two options, no usable feature: only u = b1 - b2 matters.

    For ``FiniteDecisions(eye(2))`` and ``delta = c1 - c2`` the SPO+ loss of a
    constant prediction ``b`` is ``max(0, delta - 2u)`` when ``delta > 0`` and
    ``max(0, 2u - delta)`` when ``delta < 0``. With deltas +1, +3 (weight 1)
    and -1 (weight 1.5) the slope of the weighted risk is -4, -1, +1, +2 on
    the pieces split by u = -0.5, 0.5, 1.5: the unique minimizer is u* = 0.5,
    where the risk is 1 * (3 - 1) + 1.5 * (1 + 1) = 5 (per copy of the three rows).
    """
    rng = np.random.default_rng(0)
    delta = np.tile([1.0, 3.0, -1.0], 10)
    sw = np.tile([1.0, 1.0, 1.5], 10)
    base = rng.uniform(1, 2, delta.shape[0])  # a common offset changes nothing
    C = np.column_stack([base + delta, base])
    X = np.zeros((delta.shape[0], 1))
    roads = FiniteDecisions(np.eye(2))
    m = SPOPlusLinear(roads, max_iter=3000, batch_size=1000, learning_rate=0.005,
                      random_state=0).fit(X, C, sample_weight=sw)
    u = m.intercept_[0] - m.intercept_[1]
    assert u == pytest.approx(0.5, abs=0.03)
    risk = spo_plus_loss(C, m.predict(X), problem=roads, sample_weight=sw).sum()
    assert risk == pytest.approx(5 * 10, rel=0.02)


def test_matches_the_lp_optimum_of_the_spo_plus_risk():
    """The empirical SPO+ risk of a linear model is a linear program (epigraph form)."""
    rng = np.random.default_rng(4)
    n, p, d = 40, 2, 3
    V = np.eye(d)
    X = rng.normal(size=(n, p))
    C = 2 + X @ rng.normal(size=(p, d)) + rng.normal(scale=0.7, size=(n, d))
    # Variables: Theta (d*p, row-major), b (d), t (n). Minimize mean t.
    k_star = np.argmin(C @ V.T, axis=1)
    W_true = V[k_star]
    z = np.einsum("ij,ij->i", C, W_true)
    A, rhs = [], []
    for i in range(n):
        for v in V:
            # t_i >= (c_i - 2 c_hat_i)^T v + 2 c_hat_i^T w_i - z_i, c_hat_i = Theta x_i + b
            a = np.zeros(d * p + d + n)
            coef_c = 2 * (W_true[i] - v)  # multiplies c_hat_i
            a[:d * p] = -np.outer(coef_c, X[i]).ravel()
            a[d * p:d * p + d] = -coef_c
            a[d * p + d + i] = -1.0
            A.append(a)
            rhs.append(-(C[i] @ v - z[i]))
    cost = np.concatenate([np.zeros(d * p + d), np.full(n, 1.0 / n)])
    res = linprog(cost, A_ub=np.array(A), b_ub=np.array(rhs), bounds=(None, None))
    assert res.status == 0
    m = SPOPlusLinear(FiniteDecisions(V), max_iter=4000, batch_size=n, learning_rate=0.003,
                      random_state=0).fit(X, C)
    ours = spo_plus_loss(C, m.predict(X), problem=FiniteDecisions(V)).mean()
    assert res.fun <= ours + 1e-9
    assert ours == pytest.approx(res.fun, rel=0.01, abs=1e-3)


def test_alpha_shrinks_the_coefficients():
    X, C, _, _ = _sp_data()
    free = SPOPlusLinear(SP, max_iter=30, random_state=0).fit(X, C)
    ridge = SPOPlusLinear(SP, alpha=1.0, max_iter=30, random_state=0).fit(X, C)
    assert np.linalg.norm(ridge.coef_) < 0.5 * np.linalg.norm(free.coef_)


def test_alpha_adds_alpha_coef_to_the_gradient_and_its_penalty_to_the_curve():
    # Hand loop: full-batch Adam from given coefficients (warm start) on the
    # mean SPO+ subgradient 2 (w*(c) - w*(2 c_hat - c)) of a pick-the-cheapest
    # problem, plus alpha * coef (the gradient of alpha / 2 * |coef|^2); each
    # curve entry is the mean SPO+ loss plus that penalty, both at the
    # coefficients the step started from.
    rng = np.random.default_rng(0)
    n, p, d, alpha = 40, 3, 3, 0.7
    X = rng.normal(size=(n, p))
    C = 2 + X @ rng.normal(size=(p, d)) + rng.normal(scale=0.5, size=(n, d))
    A0, b0 = rng.normal(size=(d, p)), rng.normal(size=d)
    m = SPOPlusLinear(FiniteDecisions(np.eye(d)), alpha=alpha, max_iter=4, batch_size=n,
                      warm_start=True, random_state=0)
    m.coef_, m.intercept_ = A0.copy(), b0.copy()
    m.fit(X, C)
    eye = np.eye(d)
    W_true = eye[np.argmin(C, axis=1)]
    A, b = A0.copy(), b0.copy()
    moments = [[0.0, 0.0], [0.0, 0.0]]
    curve = []
    for t in range(1, 5):
        T = 2 * (X @ A.T + b) - C
        D = W_true - eye[np.argmin(T, axis=1)]
        curve.append(np.mean(np.einsum("ij,ij->i", T, D)) + 0.5 * alpha * np.sum(A ** 2))
        G = 2 * D / n
        for param, g, mv in zip((A, b), (G.T @ X + alpha * A, G.sum(axis=0)), moments):
            mv[0] = 0.9 * mv[0] + 0.1 * g
            mv[1] = 0.999 * mv[1] + 0.001 * g * g
            param -= 0.01 * (mv[0] / (1 - 0.9 ** t)) / (np.sqrt(mv[1] / (1 - 0.999 ** t)) + 1e-8)
    assert_allclose(m.coef_, A, rtol=1e-10, atol=1e-12)
    assert_allclose(m.intercept_, b, rtol=1e-10, atol=1e-12)
    assert_allclose(m.loss_curve_, curve, rtol=1e-10)


def test_integer_weights_equal_repeated_rows_full_batch():
    X, C, _, _ = _sp_data(n=60)
    reps = np.random.default_rng(0).integers(0, 3, 60)
    a = SPOPlusLinear(SP, max_iter=30, batch_size=10_000, random_state=0).fit(
        X, C, sample_weight=reps)
    b = SPOPlusLinear(SP, max_iter=30, batch_size=10_000, random_state=0).fit(
        np.repeat(X, reps, axis=0), np.repeat(C, reps, axis=0))
    assert_allclose(a.coef_, b.coef_, atol=1e-10)
    assert_allclose(a.intercept_, b.intercept_, atol=1e-10)


def test_rows_of_zero_weight_are_rows_removed():
    # Extra rows of weight 0 (wild features and costs) give the model fitted
    # without them. They were drawn into the minibatches (and counted in the
    # mean weight that scales the steps): predictions 7% apart, decisions of
    # 2.5% of the rows changed.
    X, C, Xt, _ = _sp_data(n=90)
    rng = np.random.default_rng(5)
    sw = rng.uniform(0.5, 2.0, len(X))
    Xz = np.vstack([X[:30], rng.normal(size=(20, X.shape[1])), X[30:]])
    Cz = np.vstack([C[:30], rng.uniform(0, 50, (20, C.shape[1])), C[30:]])
    swz = np.concatenate([sw[:30], np.zeros(20), sw[30:]])
    a = SPOPlusLinear(SP, max_iter=5, random_state=0).fit(X, C, sample_weight=sw)
    b = SPOPlusLinear(SP, max_iter=5, random_state=0).fit(Xz, Cz, sample_weight=swz)
    assert_allclose(b.coef_, a.coef_, rtol=1e-12, atol=1e-14)
    assert_allclose(b.intercept_, a.intercept_, rtol=1e-12, atol=1e-14)
    assert_allclose(b.loss_curve_, a.loss_curve_, rtol=1e-12)
    assert_allclose(b.predict(Xt), a.predict(Xt), rtol=1e-12, atol=1e-14)


def test_weights_whose_sum_passes_the_float_range():
    # Weights times 2^1020 (each finite, their sum not): the steps were scaled
    # by their mean, which overflowed to inf, so every step was 0 and the
    # model stayed at its random start (loss_curve_ all 0), silently. A
    # power of two changes nothing in the objective sum_i w_i l_i / sum_i w_i.
    X, C, Xt, _ = _sp_data(n=90)
    sw = np.random.default_rng(4).uniform(0.5, 2.0, len(X))
    a = SPOPlusLinear(SP, max_iter=3, random_state=0).fit(X, C, sample_weight=sw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        b = SPOPlusLinear(SP, max_iter=3, random_state=0).fit(X, C,
                                                              sample_weight=sw * 2.0 ** 1020)
    assert (a.loss_curve_ > 0).all()
    assert_array_equal(b.loss_curve_, a.loss_curve_)
    assert_array_equal(b.coef_, a.coef_)
    assert_array_equal(b.intercept_, a.intercept_)


def test_fit_intercept_false_and_warm_start():
    X, C, _, _ = _sp_data()
    m = SPOPlusLinear(SP, fit_intercept=False, max_iter=3, random_state=0).fit(X, C)
    assert_allclose(m.intercept_, 0.0)
    assert_allclose(m.predict(X), X @ m.coef_.T)
    w = SPOPlusLinear(SP, max_iter=2, random_state=0, warm_start=True).fit(X, C)
    first = w.coef_.copy()
    w.fit(X, C)
    cold = SPOPlusLinear(SP, max_iter=2, random_state=0).fit(X, C)
    assert_allclose(cold.coef_, first)  # the first warm fit starts cold
    assert not np.allclose(w.coef_, first)


def test_warm_start_from_coefficients_that_do_not_fit_the_data_is_an_error():
    # A coef_ set by hand (or left by a fit on other columns) of the wrong
    # shape was silently replaced by a random start, though warm_start=True
    # promises to continue from it; coefficients of other categories of the
    # same count were read as this data's.
    import pandas as pd

    X, C, _, _ = _sp_data(n=60)
    m = SPOPlusLinear(SP, max_iter=1, random_state=0, warm_start=True)
    m.coef_, m.intercept_ = np.zeros((SP.n_costs, X.shape[1] + 1)), np.zeros(SP.n_costs)
    with pytest.raises(ValueError, match=r"continues from coef_, which has shape \(12, 6\), "
                                         r"but this data needs \(12, 5\)"):
        m.fit(X, C)
    m.coef_, m.intercept_ = np.zeros((SP.n_costs, X.shape[1])), np.zeros(3)
    with pytest.raises(ValueError, match=r"continues from intercept_, which has shape "
                                         r"\(3,\), but this data needs \(12,\)"):
        m.fit(X, C)
    # A start of the right shape is continued from: one full-batch epoch from
    # all-zero weights moves each weight by Adam's first step, lr * sign(grad).
    m.intercept_ = np.zeros(SP.n_costs)
    m.set_params(batch_size=len(X)).fit(X, C)
    assert np.abs(m.coef_).max() == pytest.approx(0.01)
    frame = pd.DataFrame({"x": X[:, 0], "soil": np.where(X[:, 1] > 0, "dry", "wet")})
    warm = SPOPlusLinear(SP, max_iter=1, random_state=0, warm_start=True).fit(frame, C)
    relabelled = frame.assign(soil=np.where(X[:, 1] > 0, "clay", "dry"))
    with pytest.raises(ValueError, match=r"coefficients of the categories \[None, \['dry', "
                                         r"'wet'\]\] .* but this data has \[None, \['clay', "
                                         r"'dry'\]\]"):
        warm.fit(relabelled, C)
    assert warm.category_values_ == [None, ["dry", "wet"]]  # the refused fit changed nothing
    warm.fit(frame, C)  # the same categories continue


def test_score_decisions_and_pickle():
    X, C, Xt, Ct = _sp_data()
    m = SPOPlusLinear(SP, random_state=0).fit(X, C)
    assert m.score(Xt, Ct) == pytest.approx(-normalized_spo_loss(Ct, m.predict(Xt),
                                                                 problem=SP))
    W = m.predict_decision(Xt)
    assert_allclose(W, SP.solve(m.predict(Xt))[0])
    m2 = pickle.loads(pickle.dumps(m))
    assert_allclose(m2.predict(Xt), m.predict(Xt))


def test_decisions_and_score_before_fit_raise_not_fitted():
    # predict_decision read problem_ (set by fit) before predict checked the fit,
    # so an unfitted model raised AttributeError: 'SPOPlusLinear' ... 'problem_'.
    X, C, _, _ = _sp_data(n=20)
    for method, args in (("predict_decision", (X,)), ("score", (X, C))):
        with pytest.raises(NotFittedError):
            getattr(SPOPlusLinear(SP), method)(*args)

@pytest.mark.parametrize("params, match", [
    ({"learning_rate": 0.0}, "'learning_rate' parameter of SPOPlusLinear must be a float in "
                             r"the range \(0.0, inf\)"),
    ({"max_iter": 0}, "'max_iter' parameter of SPOPlusLinear must be an int"),
    ({"batch_size": 0}, "'batch_size' parameter"),
    ({"alpha": -1.0}, "'alpha' parameter"),
    ({"fit_intercept": "yes"}, "'fit_intercept' parameter"),
])
def test_bad_parameters(params, match):
    X, C, _, _ = _sp_data(n=20)
    with pytest.raises(ValueError, match=match):
        SPOPlusLinear(SP, **params).fit(X, C)


def test_costs_not_matching_the_problem():
    X, C, _, _ = _sp_data(n=20)
    with pytest.raises(ValueError, match="C has 11 columns but the problem has n_costs=12"):
        SPOPlusLinear(SP).fit(X, C[:, :11])


# ------------------------------------------------------------------ PyEPO
def _pyepo_sp_model(grid):
    pytest.importorskip("pyepo")
    pytest.importorskip("ortools")
    from pyepo.model.ort import shortestPathModel

    return shortestPathModel(grid)


def test_spo_plus_equals_pyepo_spoplus():
    torch = pytest.importorskip("torch")
    optmodel = _pyepo_sp_model((3, 3))
    from pyepo.func import SPOPlus

    cols = pyepo_shortest_path_columns((3, 3))
    inv = np.argsort(cols)
    rng = np.random.default_rng(5)
    C = rng.uniform(0.5, 2, (30, 12))
    C_hat = rng.uniform(0, 2, (30, 12))
    W, z = SP.solve(C)
    loss = SPOPlus(optmodel, reduction="none")(
        torch.tensor(C_hat[:, inv]), torch.tensor(C[:, inv]), torch.tensor(W[:, inv]),
        torch.tensor(z[:, None]))
    assert_allclose(loss.detach().numpy().ravel(), spo_plus_loss(C, C_hat, problem=SP),
                    atol=1e-5)


def test_full_batch_adam_equals_pyepo_spoplus_with_torch_adam():
    """Same start, same data, full batches: PyEPO's SPO+ and torch's Adam give our weights."""
    torch = pytest.importorskip("torch")
    optmodel = _pyepo_sp_model((3, 3))
    from pyepo.func import SPOPlus

    X, C, _, _ = _sp_data(n=64)
    cols = pyepo_shortest_path_columns((3, 3))
    inv = np.argsort(cols)
    W, z = SP.solve(C)
    lin = torch.nn.Linear(X.shape[1], 12).double()
    coef0 = lin.weight.detach().numpy()[cols].copy()
    b0 = lin.bias.detach().numpy()[cols].copy()
    opt = torch.optim.Adam(lin.parameters(), lr=0.01)
    spop = SPOPlus(optmodel)
    xt, ct = torch.tensor(X), torch.tensor(C[:, inv])
    wt, zt = torch.tensor(W[:, inv]), torch.tensor(z[:, None])
    for _ in range(10):
        opt.zero_grad()
        spop(lin(xt), ct, wt, zt).backward()
        opt.step()
    ours = SPOPlusLinear(SP, max_iter=10, batch_size=64, learning_rate=0.01, warm_start=True)
    ours.coef_, ours.intercept_ = coef0, b0
    ours.fit(X, C)
    assert_allclose(ours.coef_, lin.weight.detach().numpy()[cols], atol=1e-7)
    assert_allclose(ours.intercept_, lin.bias.detach().numpy()[cols], atol=1e-7)


# ------------------------------------------------------------ sklearn checks
_NAMED_C = ("the target is the cost matrix C (fit(X, C), score(X, C)); this check passes y "
            "by keyword or requires the name y")
_MINIBATCH = ("minibatch SGD: repeating a row changes the batches, so integer weights "
              "cannot equal repeated rows (they do with full batches, see "
              "test_integer_weights_equal_repeated_rows_full_batch)")


def _expected_failed_checks(estimator):
    return {
        "check_fit_score_takes_y": _NAMED_C,
        "check_n_features_in_after_fitting": _NAMED_C,
        "check_sample_weight_equivalence_on_dense_data": _MINIBATCH,
    }


@parametrize_with_checks([SPOPlusLinear(max_iter=5)],
                         expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


class _TargetNamedY(SPOPlusLinear):
    def fit(self, X, y=None, sample_weight=None):
        return super().fit(X, y, sample_weight=sample_weight)

    def score(self, X, y=None, sample_weight=None):
        return super().score(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("check_name", ["check_fit_score_takes_y",
                                        "check_n_features_in_after_fitting"])
def test_failed_checks_only_fail_on_the_name(check_name):
    import sklearn.utils.estimator_checks as ec

    getattr(ec, check_name)("SPOPlusLinear", _TargetNamedY(max_iter=5))


# ------------------------------------------- normalized regret = PyEPO's regret
def _pyepo_regret(optmodel, X, C_pyepo, P_pyepo):
    """pyepo.metric.regret of fixed predictions, through PyEPO's own data pipeline."""
    from pyepo.data.dataset import optDataset
    from pyepo.metric import regret
    from torch.utils.data import DataLoader

    data = optDataset(optmodel, X.astype(np.float32), C_pyepo.astype(np.float32))
    lookup = {x.tobytes(): p for x, p in zip(X.astype(np.float32), P_pyepo)}
    # PyEPO hands the callable the batch's features; map them back to our predictions.
    predict = lambda xb: np.array([lookup[x.tobytes()] for x in np.asarray(xb)])  # noqa: E731
    return regret(predict, optmodel, DataLoader(data, batch_size=16, shuffle=False))


def test_normalized_regret_equals_pyepo_regret_shortest_path():
    pytest.importorskip("torch")
    optmodel = _pyepo_sp_model((5, 5))
    X, C, B = make_pyepo_shortest_path(60, degree=4, noise=0.5, random_state=0,
                                       return_B=True)
    sp = ShortestPath((5, 5))
    m = SPOPlusLinear(sp, max_iter=3, random_state=0).fit(X, C)
    Xt, Ct = make_pyepo_shortest_path(80, degree=4, noise=0.5, B=B, random_state=1)
    P = m.predict(Xt)
    inv = np.argsort(pyepo_shortest_path_columns((5, 5)))  # spotree -> PyEPO order
    theirs = _pyepo_regret(optmodel, Xt, Ct[:, inv], P[:, inv])
    ours = normalized_spo_loss(Ct, P, problem=sp)
    assert ours > 0.01
    # PyEPO works in float32.
    assert ours == pytest.approx(theirs, rel=1e-5)


def test_normalized_regret_equals_pyepo_regret_knapsack():
    pytest.importorskip("torch")
    pytest.importorskip("pyepo")
    pytest.importorskip("ortools")
    from pyepo.model.ort import knapsackModel

    from spotree.datasets import make_pyepo_knapsack
    from spotree.problems import LinearProgram

    X, C, weights = make_pyepo_knapsack(40, n_items=12, n_resources=2, degree=2, noise=0.5,
                                        random_state=0)
    caps = np.array([12.0, 12.0])
    kp = LinearProgram(A_ub=weights, b_ub=caps, bounds=(0, 1), integrality=np.ones(12),
                       sense="max")
    P = C + np.random.default_rng(0).normal(scale=2.0, size=C.shape)
    ours = normalized_spo_loss(C, P, problem=kp)
    theirs = _pyepo_regret(knapsackModel(weights, caps), X, C, P)
    assert ours > 0.01
    assert ours == pytest.approx(theirs, rel=1e-5)


# ------------------------------------------------------------ categories
def _soil_frame(n=80, seed=0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    soil = rng.choice(["wet", "dry", "clay"], n)
    a = rng.normal(size=n)
    X = pd.DataFrame({"a": a, "soil": pd.Categorical(soil), "b": rng.normal(size=n)})
    C = np.column_stack([np.where(soil == "dry", 1.0, 3.0) + a, np.full(n, 2.0),
                         np.where(soil == "wet", 1.5, 2.5)]) + rng.normal(scale=0.1, size=(n, 3))
    # The categories by hand: one indicator per label (in the dtype's sorted
    # order), in the column's place.
    hand = np.column_stack([a, soil == "clay", soil == "dry", soil == "wet",
                            X["b"]]).astype(float)
    return X, C, hand


def test_a_category_column_is_one_indicator_column_per_category():
    # Before: fit used the codes as numbers and predict failed on the labels.
    X, C, hand = _soil_frame()
    roads = FiniteDecisions(np.eye(3))
    est = SPOPlusLinear(roads, max_iter=5, random_state=0).fit(X, C)
    ref = SPOPlusLinear(roads, max_iter=5, random_state=0).fit(hand, C)
    assert est.coef_.shape == (3, 5)
    assert_allclose(est.coef_, ref.coef_, rtol=1e-12, atol=1e-14)
    assert_allclose(est.predict(X), ref.predict(hand), rtol=1e-12, atol=1e-14)
    assert est.score(X, C) == pytest.approx(ref.score(hand, C), rel=1e-12)
    # A category never seen, or missing, is all zeros; text columns work the same.
    new = X.iloc[:3].copy()
    new["soil"] = new["soil"].astype(object)
    new.loc[new.index[0], "soil"] = "sand"
    new.loc[new.index[1], "soil"] = None
    h = hand[:3].copy()
    h[:2, 1:4] = 0.0
    assert_allclose(est.predict(new), ref.predict(h), rtol=1e-12, atol=1e-14)


def test_a_category_without_a_training_row_of_positive_weight_is_unseen():
    # "sand" is a category of the dtype that no row holds, "clay" is held by
    # rows of zero weight only: neither was seen, so each is all zeros (the
    # prediction of a missing category), not a random initial coefficient.
    import pandas as pd

    X, C, _ = _soil_frame()
    X["soil"] = X["soil"].cat.add_categories(["sand"])
    w = np.where(X["soil"] == "clay", 0.0, 1.0)
    roads = FiniteDecisions(np.eye(3))
    est = SPOPlusLinear(roads, max_iter=5, random_state=0).fit(X, C, sample_weight=w)
    new = pd.concat([X.iloc[:1]] * 3, ignore_index=True)
    new["soil"] = pd.Categorical(["sand", "clay", None], categories=X["soil"].cat.categories)
    P = est.predict(new)
    assert_allclose(P[0], P[2], rtol=0, atol=1e-12)
    assert_allclose(P[1], P[2], rtol=0, atol=1e-12)
    # The seen categories still move the prediction.
    new["soil"] = pd.Categorical(["dry", "wet", None], categories=X["soil"].cat.categories)
    P = est.predict(new)
    assert np.abs(P[0] - P[2]).max() > 1e-3 and np.abs(P[1] - P[2]).max() > 1e-3
    # Nor does an unused category change the model of the other columns.
    X["soil"] = X["soil"].cat.remove_unused_categories()
    ref = SPOPlusLinear(roads, max_iter=5, random_state=0).fit(X, C, sample_weight=w)
    assert_allclose(est.coef_[:, [0, 1, 2, 3, 5]], ref.coef_, rtol=1e-12, atol=1e-14)
    assert_allclose(est.intercept_, ref.intercept_, rtol=1e-12, atol=1e-14)
    assert (est.coef_[:, [1, 4]] == 0).all()


# ------------------------------------------------- categorical_features
def _weekday_data(n=90, seed=0):
    return weekday_data(n, seed, noise=0.1, costs=lambda day, a, b: np.column_stack(
        [1.0 + (day == 1) + a, np.full(n, 2.0), 2.5 - (day >= 3)]))


@pytest.mark.parametrize("marked", [[1], (1,), np.array([1]), [False, True, False]])
def test_categorical_features_make_codes_a_category_column(marked):
    # Before: SPOPlusLinear had no categorical_features; the codes were one
    # number with one coefficient. Now column 1 is the indicator columns of
    # a DataFrame's category column, and of X one-hot encoded by hand.
    import pandas as pd

    X, frame, hand, C = _weekday_data()
    roads = FiniteDecisions(np.eye(3))
    est = SPOPlusLinear(roads, max_iter=4, random_state=0, categorical_features=marked)
    est.fit(X, C)
    by_dtype = SPOPlusLinear(roads, max_iter=4, random_state=0).fit(frame, C)
    by_hand = SPOPlusLinear(roads, max_iter=4, random_state=0).fit(hand, C)
    assert est.category_values_ == by_dtype.category_values_ == [None, [0, 1, 2, 3, 4], None]
    # The same indicator matrix reaches the same Adam steps: exactly equal.
    assert_array_equal(est.coef_, by_dtype.coef_)
    assert_array_equal(est.predict(X), by_dtype.predict(frame))
    assert_allclose(est.coef_, by_hand.coef_, rtol=1e-12, atol=1e-14)
    assert_allclose(est.predict(X), by_hand.predict(hand), rtol=1e-12, atol=1e-14)
    # A day never seen at fit (7), or missing, predicts as all-zero indicators.
    new = X[:3].copy()
    new[0, 1], new[1, 1] = 7.0, np.nan
    h = hand[:3].copy()
    h[:2, 1:6] = 0.0
    assert_allclose(est.predict(new), by_hand.predict(h), rtol=1e-12, atol=1e-14)
    unseen = frame.iloc[:2].assign(day=pd.Categorical([None, None], categories=range(5)))
    assert_array_equal(est.predict(new)[:2], by_dtype.predict(unseen))


def test_categorical_features_on_a_dataframe():
    # A numeric column named by categorical_features is coded by its values;
    # a category column also named stays what its dtype says. An array at
    # predict is accepted only when no column is categorical by dtype.
    import pandas as pd

    X, frame, hand, C = _weekday_data()
    roads = FiniteDecisions(np.eye(3))
    numeric = frame.assign(day=X[:, 1])
    est = SPOPlusLinear(roads, max_iter=4, random_state=0, categorical_features=["day"])
    est.fit(numeric, C)
    ref = SPOPlusLinear(roads, max_iter=4, random_state=0).fit(frame, C)
    assert est.category_values_ == ref.category_values_
    assert_array_equal(est.predict(numeric), ref.predict(frame))
    with pytest.warns(UserWarning, match="valid feature names"):
        assert_array_equal(est.predict(X), ref.predict(frame))
    with pytest.raises(ValueError, match=r"Column 'day' of X holds text or categories"):
        est.predict(numeric.assign(day=numeric["day"].astype(str)))
    # Listing the category column changes nothing.
    both = SPOPlusLinear(roads, max_iter=4, random_state=0,
                         categorical_features=["day"]).fit(frame, C)
    assert_array_equal(both.coef_, ref.coef_)
    # A text column by dtype and a listed numeric one: only the text one
    # keeps an array out.
    soil = pd.Categorical(np.where(X[:, 0] > 0, "wet", "dry"))
    mixed = numeric.assign(soil=soil)
    est.set_params(categorical_features=[1]).fit(mixed, C)
    assert est.category_values_ == [None, [0, 1, 2, 3, 4], None, ["dry", "wet"]]
    with pytest.raises(ValueError, match=r"fitted on a DataFrame whose columns \['soil'\] "
                                         r"hold categories"):
        est.predict(mixed.to_numpy(dtype=object))
    ref.fit(frame.assign(soil=soil), C)
    assert_array_equal(est.predict(mixed), ref.predict(frame.assign(soil=soil)))


@pytest.mark.parametrize("marked, match", [
    ([3], r"categorical_features index 3 is out of range for 3 features"),
    ([-1], r"categorical_features index -1 is out of range"),
    ([1.0], r"must hold feature indices \(ints\), names of columns of X or be a boolean "
            r"mask; got 1\.0"),
    (["day"], r"categorical_features names 'day', which is not a column of X"),
    ([True, False], r"as a boolean mask must have shape \(3,\); got \(2,\)"),
    ([True, 1], r"mixes bools with feature indices"),
    ([[1]], r"must be a 1-D list"),
    (1, r"The 'categorical_features' parameter of SPOPlusLinear must be an array-like"),
])
def test_bad_categorical_features_are_refused_as_by_spotree(marked, match):
    from spotree import SPOTree

    X, _, _, C = _weekday_data(n=30)
    with pytest.raises(ValueError, match=match) as ours:
        SPOPlusLinear(max_iter=1, categorical_features=marked).fit(X, C)
    with pytest.raises(ValueError) as tree:
        SPOTree(categorical_features=marked).fit(X, C)
    assert str(ours.value) == str(tree.value).replace("SPOTree", "SPOPlusLinear")


def test_categorical_features_persist(tmp_path):
    import json

    import spotree
    from sklearn.base import clone

    X, _, _, C = _weekday_data(n=60)
    est = SPOPlusLinear(max_iter=2, random_state=0, categorical_features=[1]).fit(X, C)
    new = X[:4].copy()
    new[0, 1] = 9.0
    P = est.predict(new)
    assert clone(est).get_params()["categorical_features"] == [1]
    assert_array_equal(pickle.loads(pickle.dumps(est)).predict(new), P)
    path, doc = _saved(tmp_path, est)
    back = spotree.load(path)
    assert back.categorical_features == [1]
    assert back.category_values_ == [None, [0, 1, 2, 3, 4], None]
    assert_array_equal(back.predict(new), P)  # an array, as at fit
    # The labels of a column coded by value are found by binary search.
    doc["fitted"]["category_values_"][1] = [0, 2, 1, 3, 4]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"fitted\.category_values_\[1\] must list "
                                         r"increasing numbers"):
        spotree.load(path)
    doc["fitted"]["category_values_"][1] = ["a", "b", "c", "d", "e"]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"fitted\.category_values_\[1\] must list numbers"):
        spotree.load(path)
    doc["fitted"]["_numeric_categories"] = [0, 1, 0]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"fitted\._numeric_categories must be null or a "
                                         r"list of n_features_in_=3 bools"):
        spotree.load(path)


# ------------------------------------------------------------- save/load
def _one_leaf_tree(p, d):
    from spotree.tree._tree import Tree

    return Tree(n_features=p, n_outputs=d, children_left=[-1], children_right=[-1],
                feature=[-2], threshold=[-2.0], value=np.ones((1, d)),
                decision=np.eye(d)[:1], loss=[0.0], impurity=[0.0], n_node_samples=[1],
                weighted_n_node_samples=[1.0]).to_dict()


def _saved(tmp_path, model, name="linear.json"):
    import json

    path = tmp_path / name
    model.save(path)
    return path, json.loads(path.read_text())


def test_save_and_load_give_the_same_predictions(tmp_path):
    import spotree

    X, C, Xt, _ = _sp_data(n=120)
    m = SPOPlusLinear(ShortestPath((3, 3)), max_iter=3, random_state=0).fit(X, C)
    path, doc = _saved(tmp_path, m)
    assert doc["estimator"] == "SPOPlusLinear" and doc["trees"] == []
    back = spotree.load(path)
    assert isinstance(back, SPOPlusLinear)
    np.testing.assert_array_equal(back.coef_, m.coef_)
    np.testing.assert_array_equal(back.intercept_, m.intercept_)
    np.testing.assert_array_equal(back.loss_curve_, m.loss_curve_)
    assert back.n_iter_ == 3 and back.get_params()["max_iter"] == 3
    # The loaded model predicts X @ coef_.T + intercept_ (by hand) and decides.
    np.testing.assert_allclose(back.predict(Xt), Xt @ m.coef_.T + m.intercept_, rtol=1e-12)
    np.testing.assert_array_equal(back.predict_decision(Xt), m.predict_decision(Xt))


def test_save_and_load_with_category_columns_and_without_intercept(tmp_path):
    pd = pytest.importorskip("pandas")
    import spotree

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=60),
                       "weather": pd.Categorical(rng.choice(["dry", "wet", "snow"], 60))})
    C = np.column_stack([1 + (df["weather"] == "wet"), 1 + df["x"] ** 2]) + 0.1
    m = SPOPlusLinear(max_iter=2, fit_intercept=False, random_state=0).fit(df, C)
    assert m.coef_.shape == (2, 4)  # x, then one column per category
    path, _ = _saved(tmp_path, m)
    back = spotree.load(path)
    np.testing.assert_array_equal(back.predict(df), m.predict(df))


@pytest.mark.parametrize("edit, match", [
    (lambda d: d["fitted"]["coef_"][0].append(1.0),
     r"fitted\.coef_\[1\] must have 6 entries; got 5"),
    (lambda d: [r.append(1.0) for r in d["fitted"]["coef_"]],
     r"fitted\.coef_ has 6 columns but the model has 5"),
    (lambda d: d["fitted"]["intercept_"].pop(),
     r"fitted\.intercept_ must have 12 entries \(one per cost\); got 11"),
    (lambda d: d["fitted"]["coef_"][3].__setitem__(2, "x"),
     r"fitted\.coef_\[3\]\[2\] must be a finite number; got 'x'"),
    (lambda d: d["fitted"].pop("coef_"), r"fitted\.coef_ is missing"),
    (lambda d: d["fitted"].__setitem__("n_iter_", 7),
     r"fitted\.loss_curve_ has 3 entries but fitted\.n_iter_ is 7"),
    (lambda d: d["trees"].append(_one_leaf_tree(5, 12)),
     r"trees must be empty for an SPOPlusLinear \(a linear model\); got 1 trees"),
    (lambda d: d["params"].__setitem__("alpha", -1.0), r"params\.alpha is invalid"),
    (lambda d: d["fitted"].__setitem__("feature_importances_", [1.0] * 5),
     r"fitted\.feature_importances_ is not a known key"),
])
def test_a_hand_edited_file_is_refused_naming_the_key(tmp_path, edit, match):
    import json

    import spotree

    X, C, _, _ = _sp_data(n=60)
    m = SPOPlusLinear(ShortestPath((3, 3)), max_iter=3, random_state=0).fit(X, C)
    path, doc = _saved(tmp_path, m)
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"is a malformed spotree model: " + match):
        spotree.load(path)


def test_features_that_are_all_missing_categories_fit_an_intercept():
    # A DataFrame whose only column is categorical and missing on every row
    # of positive weight: no column can move, and the initial bound
    # 1 / sqrt(0) raised OverflowError ('Range exceeds valid bounds').
    import warnings

    import pandas as pd

    rng = np.random.default_rng(0)
    C = rng.uniform(1.0, 2.0, (40, 12))
    C[:, 0] += 3.0  # the first east edge is slow: not on the best path
    problem = ShortestPath((3, 3))
    empty = pd.DataFrame({"k": pd.Categorical([None] * 40, categories=["a", "b"])})
    held = pd.DataFrame({"k": pd.Categorical(["a"] * 5 + [None] * 35, categories=["a", "b"])})
    sw = np.r_[np.zeros(5), np.ones(35)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = SPOPlusLinear(problem, learning_rate=0.1, random_state=0).fit(empty, C)
        # Rows of weight 0 are rows removed: the same model as on the 35 others
        # (full batches: minibatches of other rows would differ).
        weighted = SPOPlusLinear(problem, batch_size=64, random_state=0).fit(
            held, C, sample_weight=sw)
        dropped = SPOPlusLinear(problem, batch_size=64, random_state=0).fit(
            empty.iloc[5:].reset_index(drop=True), C[5:])
    assert np.all(model.coef_ == 0.0)
    assert_allclose(model.predict(empty), np.tile(model.intercept_, (40, 1)))
    assert np.isfinite(model.loss_curve_).all()
    assert model.loss_curve_[-1] < model.loss_curve_[0]
    # The learned intercept avoids the slow edge, as the mean cost does.
    assert problem.solve(model.intercept_[None, :])[0][0, 0] == 0.0
    assert_allclose(weighted.predict(empty), dropped.predict(empty), rtol=1e-12)


def test_verbose_says_the_curve_holds_the_penalty_when_there_is_one(capsys):
    # verbose printed "mean SPO+ loss" for loss_curve_, which adds 0.5 * alpha * |coef|^2.
    X, C, _, _ = _sp_data(n=60)
    for alpha, label in ((0.0, "mean SPO+ loss"), (5.0, "mean SPO+ loss + L2 penalty")):
        model = SPOPlusLinear(SP, alpha=alpha, max_iter=2, verbose=1, random_state=0).fit(X, C)
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == 2
        for k, line in enumerate(lines):
            head, value = line.rsplit(" ", 1)
            assert head == f"SPOPlusLinear epoch {k + 1}/2: {label}"
            assert float(value) == pytest.approx(model.loss_curve_[k], rel=1e-5)
    # With alpha = 5 the penalty is a visible part of the curve: 0.5 * 5 * |coef|^2.
    assert 2.5 * float((model.coef_ ** 2).sum()) > 1e-3


def test_a_max_problem_on_negated_costs_mirrors_the_min_fit_from_negated_weights():
    # The Notes: "max" on -C is "min" on C. From negated start weights the
    # fits mirror each other exactly (Adam and the SPO+ subgradient are odd in
    # the costs); from random_state both draw the same, unnegated start.
    X, C, Xt, _ = _sp_data(n=64)
    V = SP.vertices()
    lo, hi = FiniteDecisions(V), FiniteDecisions(V, sense="max")
    rng = np.random.default_rng(0)
    coef, intercept = rng.uniform(-0.4, 0.4, (12, 5)), rng.uniform(-0.4, 0.4, 12)
    a = SPOPlusLinear(lo, max_iter=3, warm_start=True, random_state=0)
    a.coef_, a.intercept_ = coef.copy(), intercept.copy()
    b = SPOPlusLinear(hi, max_iter=3, warm_start=True, random_state=0)
    b.coef_, b.intercept_ = -coef, -intercept
    a.fit(X, C)
    b.fit(X, -C)
    assert_allclose(b.coef_, -a.coef_, rtol=1e-12, atol=1e-12)
    assert_allclose(b.intercept_, -a.intercept_, rtol=1e-12, atol=1e-12)
    assert_array_equal(b.predict_decision(Xt), a.predict_decision(Xt))


@pytest.mark.parametrize("top", [1e160, np.finfo(np.float64).max])
def test_features_too_large_for_the_plain_linear_model_are_refused_naming_x(top):
    # Features of 1e160: the squares of the gradients (1e320) were inf, every
    # later Adam step 0, and the random start came back as the model without a
    # word. At 1.8e308 the predictions overflowed and the error blamed C
    # ("C contains NaN or infinity", costs of about 1).
    X, C = make_pyepo_shortest_path(40, grid=(3, 3), degree=2, noise=0.5, random_state=0)
    Xs = X / np.abs(X).max() * top
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=r"passed the float range during the fit, with "
                                             r"features up to .* Standardize X first"):
            SPOPlusLinear(SP, random_state=0, max_iter=2).fit(Xs, C)
    # Features up to 1e150 still fit (their squared gradients stay finite).
    m = SPOPlusLinear(SP, random_state=0, max_iter=2).fit(X / np.abs(X).max() * 1e150, C)
    assert np.isfinite(m.coef_).all() and np.abs(m.coef_).max() < 2.0


def test_predicted_costs_beyond_the_float_range_are_refused_naming_the_row():
    # A row whose features make c_hat = X coef^T + intercept pass the float
    # range: predict returned inf (NaN where the terms had both signs) without
    # a word, and predict_decision blamed C ("C contains NaN or infinity").
    X, C = make_pyepo_shortest_path(40, grid=(3, 3), degree=2, noise=0.5, random_state=0)
    m = SPOPlusLinear(SP, random_state=0, max_iter=2).fit(X, C)
    m.coef_[0] = 1.0  # coefficients set by hand (as a warm start takes them)
    big = np.finfo(np.float64).max
    Xb = X[:3].copy()
    Xb[1] = big  # row 1's first cost: 5 * big + intercept, beyond big by hand
    for method in (m.predict, m.predict_decision):
        with pytest.raises(ValueError, match=r"predicts costs beyond the float range for row 1 "
                                             r"of X \(features up to 1\.8e\+308"):
            method(Xb)
    assert np.isfinite(m.predict(X)).all()
