"""SPO+ loss and subgradient, and SPOPlusLinear: brute force, finite differences, a
closed-form optimum, an LP optimum, PyEPO's own SPO+ and Adam, estimator checks."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy.optimize import linprog
from sklearn.utils.estimator_checks import parametrize_with_checks

from spotree import ShortestPath, SPOPlusLinear
from spotree.datasets import make_pyepo_shortest_path, pyepo_shortest_path_columns
from spotree.linear_model import spo_plus_loss, spo_plus_subgradient
from spotree.metrics import normalized_spo_loss, spo_loss
from spotree.problems import FiniteDecisions

SP = ShortestPath((3, 3))


def _brute_spo_plus(V, sense, C, C_hat):
    """SPO+ from its definition, by enumerating the decisions V (min sense inside)."""
    sgn = 1.0 if sense == "min" else -1.0
    Cm, Hm = sgn * C, sgn * C_hat
    out = []
    for c, h in zip(Cm, Hm):
        w_true = V[np.argmin(V @ c)]
        z = c @ w_true
        out.append(np.max(V @ (c - 2 * h)) + 2 * h @ w_true - z)
    return np.array(out)


PROBLEMS = {
    "finite_min": (FiniteDecisions(np.random.default_rng(0).uniform(-1, 1, (6, 4))), None),
    "finite_max": (FiniteDecisions(np.random.default_rng(1).uniform(-1, 1, (5, 4)),
                                   sense="max"), None),
    "shortest_path": (SP, None),
}


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_spo_plus_loss_matches_definition(name):
    problem, _ = PROBLEMS[name]
    rng = np.random.default_rng(2)
    C = rng.uniform(0, 2, (50, problem.n_costs))
    C_hat = rng.uniform(-1, 2, (50, problem.n_costs))
    V = problem.vertices()
    expected = _brute_spo_plus(V, problem.sense, C, C_hat)
    assert_allclose(spo_plus_loss(C, C_hat, problem=problem), expected, atol=1e-12)
    sw = rng.uniform(0, 3, 50)
    assert_allclose(spo_plus_loss(C, C_hat, problem=problem, sample_weight=sw),
                    sw * expected, atol=1e-12)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_spo_plus_subgradient_is_the_finite_difference_gradient(name):
    problem, _ = PROBLEMS[name]
    rng = np.random.default_rng(3)
    C = rng.uniform(0, 2, (20, problem.n_costs))
    C_hat = rng.uniform(-1, 2, (20, problem.n_costs))
    V = problem.vertices()
    G = spo_plus_subgradient(C, C_hat, problem=problem)
    h = 1e-6
    checked = 0
    for i in range(C.shape[0]):
        # Differentiable where the maximizer of (c - 2 c_hat)^T v is unique
        # with a margin wider than the finite-difference step.
        sgn = 1.0 if problem.sense == "min" else -1.0
        vals = np.sort(V @ (sgn * (C[i] - 2 * C_hat[i])))
        if vals[-1] - vals[-2] < 1e-3:
            continue
        fd = np.empty(problem.n_costs)
        for j in range(problem.n_costs):
            e = np.zeros(problem.n_costs)
            e[j] = h
            up = _brute_spo_plus(V, problem.sense, C[i:i + 1], C_hat[i:i + 1] + e)[0]
            dn = _brute_spo_plus(V, problem.sense, C[i:i + 1], C_hat[i:i + 1] - e)[0]
            fd[j] = (up - dn) / (2 * h)
        assert_allclose(G[i], fd, atol=1e-6)
        checked += 1
    assert checked >= 10


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.01, 10.0))
def test_spo_plus_bounds_spo_loss(seed, scale):
    rng = np.random.default_rng(seed)
    C = rng.uniform(0, 1, (10, SP.n_costs))
    C_hat = scale * rng.normal(size=(10, SP.n_costs))
    plus = spo_plus_loss(C, C_hat, problem=SP)
    assert (plus >= spo_loss(C, C_hat, problem=SP) - 1e-12).all()
    # Exact predictions lose nothing.
    assert_allclose(spo_plus_loss(C, C, problem=SP), 0.0, atol=1e-12)


def test_spo_plus_bad_input():
    with pytest.raises(ValueError, match="C_pred has 3 columns"):
        spo_plus_loss(np.ones((2, 12)), np.ones((2, 3)), problem=SP)
    with pytest.raises(ValueError, match="same number of rows"):
        spo_plus_loss(np.ones((2, 12)), np.ones((3, 12)), problem=SP)
    with pytest.raises(TypeError, match="DecisionProblem"):
        spo_plus_subgradient(np.ones((2, 12)), np.ones((2, 12)), problem="sp")


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


def test_integer_weights_equal_repeated_rows_full_batch():
    X, C, _, _ = _sp_data(n=60)
    reps = np.random.default_rng(0).integers(0, 3, 60)
    a = SPOPlusLinear(SP, max_iter=30, batch_size=10_000, random_state=0).fit(
        X, C, sample_weight=reps)
    b = SPOPlusLinear(SP, max_iter=30, batch_size=10_000, random_state=0).fit(
        np.repeat(X, reps, axis=0), np.repeat(C, reps, axis=0))
    assert_allclose(a.coef_, b.coef_, atol=1e-10)
    assert_allclose(a.intercept_, b.intercept_, atol=1e-10)


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


def test_score_decisions_and_pickle():
    X, C, Xt, Ct = _sp_data()
    m = SPOPlusLinear(SP, random_state=0).fit(X, C)
    assert m.score(Xt, Ct) == pytest.approx(-normalized_spo_loss(Ct, m.predict(Xt),
                                                                 problem=SP))
    W = m.predict_decision(Xt)
    assert_allclose(W, SP.solve(m.predict(Xt))[0])
    m2 = pickle.loads(pickle.dumps(m))
    assert_allclose(m2.predict(Xt), m.predict(Xt))


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
                         expected_failed_checks=_expected_failed_checks, xfail_strict=True)
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
