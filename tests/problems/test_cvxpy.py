"""Tests of from_cvxpy against independent solves: a PyEPO-style portfolio with
a quadratic risk constraint, checked by fresh CVXPY problems (no parameter)
and by scipy's SLSQP, and an LP checked by scipy's linprog."""

import copy
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import linprog, minimize

cp = pytest.importorskip("cvxpy")

from spotree import SPOForest  # noqa: E402
from spotree.problems import CVXPYProblem, from_cvxpy  # noqa: E402

SOLVER = "CLARABEL"  # installed with cvxpy; pinned so results do not depend on extras


def portfolio_data(n_assets=8, seed=0):
    """PyEPO's portfolio: a factor covariance and risk budget 2.25 * mean(cov)."""
    rng = np.random.default_rng(seed)
    L = rng.uniform(-2.5e-3, 2.5e-3, size=(n_assets, 4))
    cov = L @ L.T + (1e-2) ** 2 * np.eye(n_assets)
    return cov, 2.25 * cov.mean()


def portfolio_problem(cov, risk):
    n = cov.shape[0]
    c = cp.Parameter(n)
    x = cp.Variable(n)
    prob = cp.Problem(cp.Maximize(c @ x),
                      [cp.sum(x) == 1, x >= 0, x <= 1, cp.quad_form(x, cov) <= risk])
    return prob, c, x


def fresh_cvxpy_value(c, cov, risk):
    """The same portfolio built from constants, solved afresh."""
    x = cp.Variable(len(c))
    prob = cp.Problem(cp.Maximize(c @ x),
                      [cp.sum(x) == 1, x >= 0, x <= 1, cp.quad_form(x, cov) <= risk])
    prob.solve(solver=SOLVER)
    assert prob.status == "optimal"
    return prob.value


def slsqp_value(c, cov, risk):
    """An independent nonlinear solver: scipy's SLSQP from a few starts."""
    n = len(c)
    cons = [{"type": "eq", "fun": lambda x: x.sum() - 1, "jac": lambda x: np.ones(n)},
            {"type": "ineq", "fun": lambda x: risk - x @ cov @ x, "jac": lambda x: -2 * cov @ x}]
    best = -np.inf
    for x0 in (np.full(n, 1.0 / n), np.eye(n)[np.argmax(c)] * 0.5 + 0.5 / n):
        res = minimize(lambda x: -c @ x, x0, jac=lambda x: -c, bounds=[(0, 1)] * n,
                       constraints=cons, method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
        if res.success and risk - res.x @ cov @ res.x > -1e-9:
            best = max(best, -res.fun)
    return best


def test_portfolio_equals_independent_solves():
    cov, risk = portfolio_data()
    prob, c, x = portfolio_problem(cov, risk)
    problem = from_cvxpy(prob, c, x, solver=SOLVER)
    assert problem.sense == "max" and problem.n_costs == 8
    C = np.random.default_rng(1).normal(0.1, 0.05, size=(50, 8))
    W, z = problem.solve(C)
    fresh = np.array([fresh_cvxpy_value(ci, cov, risk) for ci in C])
    assert_allclose(z, fresh, rtol=1e-6, atol=1e-8)
    slsqp = np.array([slsqp_value(ci, cov, risk) for ci in C])
    assert_allclose(z, slsqp, rtol=1e-5, atol=1e-7)
    # The decisions are feasible.
    assert_allclose(W.sum(axis=1), 1.0, atol=1e-7)
    assert (W >= -1e-7).all()
    assert (np.einsum("ij,jk,ik->i", W, cov, W) <= risk * (1 + 1e-6)).all()


def _box_lp(rng):
    """A 6-variable LP with 4 packing rows and unit bounds, through CVXPY, and
    its data for linprog."""
    A = rng.uniform(0, 1, size=(4, 6))
    b = A.sum(axis=1) * 0.4
    c, x = cp.Parameter(6), cp.Variable(6)
    problem = from_cvxpy(cp.Problem(cp.Minimize(c @ x), [A @ x <= b, x >= 0, x <= 1]), c, x,
                         solver=SOLVER)
    return problem, A, b


def test_lp_equals_linprog():
    rng = np.random.default_rng(2)
    problem, A, b = _box_lp(rng)
    C = rng.normal(size=(30, 6))
    _, z = problem.solve(C)
    ref = [linprog(ci, A_ub=A, b_ub=b, bounds=(0, 1), method="highs").fun for ci in C]
    assert_allclose(z, ref, rtol=1e-6, atol=1e-7)


def test_tiny_and_huge_costs_keep_the_solver_accuracy():
    # Solver tolerances are absolute: with costs of order 1e-9 the default
    # solver's values were ~50% off, and with costs of order 1e9 it failed.
    rng = np.random.default_rng(2)
    problem, A, b = _box_lp(rng)
    C = rng.normal(size=(10, 6))
    ref = np.array([linprog(ci, A_ub=A, b_ub=b, bounds=(0, 1), method="highs").fun
                    for ci in C])
    for scale in (1e-9, 1e9):
        _, z = problem.solve(scale * C)
        assert_allclose(z / scale, ref, rtol=1e-6, atol=1e-7)


def test_pickle_and_deepcopy_give_the_same_answers():
    cov, risk = portfolio_data(5, seed=3)
    prob, c, x = portfolio_problem(cov, risk)
    problem = from_cvxpy(prob, c, x, solver=SOLVER, solver_options={"max_iter": 200})
    C = np.random.default_rng(4).normal(0.1, 0.05, size=(10, 5))
    W, z = problem.solve(C)
    for q in (pickle.loads(pickle.dumps(problem)), copy.deepcopy(problem)):
        assert isinstance(q, CVXPYProblem)
        assert q.solver == SOLVER and q.solver_options == {"max_iter": 200}
        Wq, zq = q.solve(C)
        assert_allclose(zq, z, rtol=1e-9)
    # The original still works after the copies solved.
    assert_allclose(problem.solve(C)[1], z, rtol=1e-12)
    assert repr(problem) == "from_cvxpy(n_costs=5, sense='max', solver='CLARABEL')"
    with pytest.raises(NotImplementedError, match="cannot be written to JSON"):
        problem.to_dict()


def test_forest_n_jobs_2_equals_n_jobs_1():
    c, x = cp.Parameter(3), cp.Variable(3)
    ball = cp.Problem(cp.Minimize(c @ x), [cp.sum_squares(x) <= 1])
    problem = from_cvxpy(ball, c, x, solver=SOLVER)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(24, 2))
    C = X[:, :1] + rng.normal(size=(24, 3))
    kw = dict(n_estimators=2, max_depth=1, min_samples_leaf=6, random_state=0)
    p1 = SPOForest(problem, n_jobs=1, **kw).fit(X, C).predict(X)
    p2 = SPOForest(problem, n_jobs=2, **kw).fit(X, C).predict(X)
    assert_array_equal(p1, p2)


# ------------------------------------------------------------ bad input
def test_infeasible_problem_is_rejected_at_construction():
    c, x = cp.Parameter(3), cp.Variable(3)
    prob = cp.Problem(cp.Minimize(c @ x), [x >= 1, cp.sum(x) <= 0])
    with pytest.raises(ValueError, match=r"The CVXPY problem passed to from_cvxpy is "
                                         r"infeasible \(status 'infeasible'\)"):
        from_cvxpy(prob, c, x, solver=SOLVER)


def test_unbounded_cost_vector_names_the_source():
    c, x = cp.Parameter(2), cp.Variable(2)
    problem = from_cvxpy(cp.Problem(cp.Minimize(c @ x), [x >= 0]), c, x, solver=SOLVER)
    assert_allclose(problem.solve([[1.0, 2.0]])[1], [0.0], atol=1e-8)
    with pytest.raises(ValueError, match=r"The CVXPY problem passed to from_cvxpy is unbounded "
                                         r"for cost vector 1 \(status 'unbounded'\)"):
        problem.solve([[1.0, 2.0], [1.0, -1.0]])


def test_objective_must_be_cost_at_decision():
    c, x, y = cp.Parameter(3), cp.Variable(3), cp.Variable(3)
    q = cp.Parameter(3, value=np.ones(3))
    cons = [x >= 0, x <= 1, y >= 0, y <= 1]
    for objective, match in [
        (cp.Minimize(c @ x + cp.sum_squares(x)), "differs from cost @ decision"),
        (cp.Minimize(2 * (c @ x)), "differs from cost @ decision"),
        (cp.Minimize(c @ x + q @ x), r"depends on the parameters"),
        (cp.Minimize(c @ x + cp.sum(y)), r"depends on the variables"),
        (cp.Minimize(cp.sum(x)), r"depends on the parameters \[\]"),
    ]:
        with pytest.raises(ValueError, match="objective of the problem passed to from_cvxpy "
                                             "must be exactly cost @ decision.*" + match):
            # (cost also in a constraint, so that it is a parameter of the problem)
            from_cvxpy(cp.Problem(objective, cons + [c @ y <= 5]), c, x)
    # Equivalent spellings of cost @ decision are accepted.
    for objective in [cp.Minimize(x @ c), cp.Maximize(cp.sum(cp.multiply(c, x)))]:
        p = from_cvxpy(cp.Problem(objective, cons), c, x, solver=SOLVER)
        assert p.n_costs == 3


def test_variables_and_parameters_with_attributes():
    # The objective check sets cost and decision to random points; CVXPY
    # refuses values outside a leaf's domain, so a boolean or nonneg
    # decision (or a nonneg cost) was rejected with "Variable value must be ...".
    import itertools

    weights, capacity = np.array([3.0, 4.0, 2.0, 5.0]), 8.0
    c, x = cp.Parameter(4, nonneg=True), cp.Variable(4, boolean=True)
    # (SCIPY: scipy's HiGHS MILP; CVXPY's own "HIGHS" interface is new in CVXPY 1.6.)
    knap = from_cvxpy(cp.Problem(cp.Maximize(c @ x), [weights @ x <= capacity]), c, x,
                      solver="SCIPY")
    C = np.random.default_rng(0).uniform(0, 5, size=(6, 4))
    W, z = knap.solve(C)
    subsets = np.array([s for s in itertools.product([0, 1], repeat=4)
                        if weights @ np.array(s) <= capacity], dtype=float)
    assert_allclose(z, (C @ subsets.T).max(axis=1), rtol=1e-7)
    assert_allclose(W, np.round(W), atol=1e-6)
    c, x = cp.Parameter(3), cp.Variable(3, nonneg=True)
    lp = from_cvxpy(cp.Problem(cp.Minimize(c @ x), [cp.sum(x) == 1, x <= 0.7]), c, x,
                    solver=SOLVER)
    C = np.random.default_rng(1).normal(size=(5, 3))
    ref = [linprog(ci, A_eq=np.ones((1, 3)), b_eq=[1.0], bounds=(0, 0.7)).fun for ci in C]
    assert_allclose(lp.solve(C)[1], ref, rtol=1e-6, atol=1e-7)


def test_cost_in_a_constraint_is_rejected():
    # The feasible set would change with the cost vector: not a decision problem.
    c, x = cp.Parameter(3), cp.Variable(3)
    prob = cp.Problem(cp.Minimize(c @ x), [x >= 0, cp.sum(x) == 1, x[0] <= c[1] + 0.5])
    assert prob.is_dcp(dpp=True)
    with pytest.raises(ValueError, match=r"'cost' parameter of from_cvxpy .* appears in "
                                         r"constraint 2 of the problem"):
        from_cvxpy(prob, c, x, solver=SOLVER)


def test_not_dpp_is_rejected():
    c, x = cp.Parameter(3), cp.Variable(3)
    s = cp.Parameter(value=1.0)
    prob = cp.Problem(cp.Minimize(c @ x), [x >= 0, (s * s) * cp.sum(x) <= 1])
    assert not prob.is_dcp(dpp=True)
    with pytest.raises(ValueError, match=r"must be DCP and DPP-compliant"):
        from_cvxpy(prob, c, x)


def test_argument_types_and_shapes():
    c, x = cp.Parameter(3), cp.Variable(3)
    prob = cp.Problem(cp.Minimize(c @ x), [x >= 0, x <= 1])
    with pytest.raises(TypeError, match="'problem' parameter of from_cvxpy must be a "
                                        "cvxpy.Problem. Got dict"):
        from_cvxpy({}, c, x)
    with pytest.raises(TypeError, match="'cost' parameter of from_cvxpy must be a "
                                        "cvxpy.Parameter. Got ndarray"):
        from_cvxpy(prob, np.ones(3), x)
    with pytest.raises(TypeError, match="'decision' parameter .* must be a cvxpy.Variable"):
        from_cvxpy(prob, c, c)
    with pytest.raises(ValueError, match=r"must be 1-D or 2-D, of the same shape. Got "
                                         r"shapes \(3,\) and \(4,\)"):
        from_cvxpy(prob, c, cp.Variable(4))
    with pytest.raises(ValueError, match=r"'cost' parameter of from_cvxpy .* is not a "
                                         r"parameter of the problem"):
        from_cvxpy(prob, cp.Parameter(3), x)
    with pytest.raises(ValueError, match=r"'decision' parameter of from_cvxpy .* is not a "
                                         r"variable of the problem"):
        from_cvxpy(prob, c, cp.Variable(3))
    with pytest.raises(ValueError, match="'solver_options' parameter of from_cvxpy must be a "
                                         "dict"):
        from_cvxpy(prob, c, x, solver_options=[1])


@pytest.mark.parametrize("attrs", [{"nonneg": True}, {"bounds": (np.zeros(3), np.full(3, 9.0))}])
def test_a_cost_parameter_with_attributes_takes_any_real_cost(attrs):
    # A cost declared nonneg=True (the costs of a portfolio or a route are)
    # made every negative cost vector fail inside CVXPY ("Parameter value must
    # be nonnegative."), and so the SPO+ loss, which solves for 2 c_hat - c.
    from spotree.metrics import spo_plus_loss

    c, x = cp.Parameter(3, **attrs), cp.Variable(3)
    problem = from_cvxpy(cp.Problem(cp.Minimize(c @ x), [cp.sum(x) == 1, x >= 0]), c, x,
                         solver=SOLVER)
    C = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0], [2.0, 1.0, 3.0]])
    W, z = problem.solve(C)
    for ci, zi in zip(C, z):
        ref = linprog(ci, A_eq=np.ones((1, 3)), b_eq=[1.0], bounds=(0, None))
        assert zi == pytest.approx(ref.fun, abs=1e-6)
    # SPO+ of a prediction far from the truth: 2 c_hat - c has negative entries.
    C_true, C_hat = np.array([[3.0, 1.0, 2.0]]), np.array([[0.5, 2.0, 0.1]])
    # By hand: max over the simplex of (c - 2 c_hat) is max(2, -3, 1.8) = 2, plus
    # 2 c_hat . w*(c) = 2 * 2.0 (w* takes the cheapest true cost, entry 1), minus
    # c . w*(c) = 1: 2 + 4 - 1 = 5.
    assert spo_plus_loss(C_true, C_hat, problem=problem) == pytest.approx(5.0, abs=1e-6)


def test_boolean_and_integer_entries_come_back_as_exact_integers():
    # ECOS_BB returned boolean entries 1.0000000000623 and 3.6e-11 (values
    # 7.0000000004 for 7); LinearProgram snaps integer variables, from_cvxpy
    # did not. The optimum by brute force over the 0/1 points.
    import itertools

    pytest.importorskip("ecos")
    a = np.array([0.5, 0.7, 0.3, 0.9])
    c, x = cp.Parameter(4), cp.Variable(4, boolean=True)
    problem = from_cvxpy(cp.Problem(cp.Maximize(c @ x), [a @ x <= 1.3]), c, x,
                         solver="ECOS_BB")
    C = np.array([[1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0]])
    W, z = problem.solve(C)
    P = np.array([p for p in itertools.product([0.0, 1.0], repeat=4) if a @ p <= 1.3])
    assert set(np.unique(W)) <= {0.0, 1.0} and not np.signbit(W).any()
    assert_array_equal(z, (C @ P.T).max(axis=1))
    # Pickles round-trip with the mask.
    assert_array_equal(pickle.loads(pickle.dumps(problem)).solve(C)[0], W)


def test_2d_assignment_matches_brute_force_over_permutations():
    """A 2-D cost and decision (an assignment's x[i, j]) were refused; they are
    flattened in C order: entry 3 * i + j of a cost vector is cost[i, j]."""
    import itertools

    n = 3
    c, x = cp.Parameter((n, n)), cp.Variable((n, n))
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(c, x))),
                      [cp.sum(x, axis=0) == 1, cp.sum(x, axis=1) == 1, x >= 0])
    problem = from_cvxpy(prob, c, x, solver=SOLVER)
    assert problem.n_costs == 9
    C = np.random.default_rng(0).uniform(0, 10, (5, 9))
    W, z = problem.solve(C)
    perms = [np.eye(n)[list(p)] for p in itertools.permutations(range(n))]
    for k in range(len(C)):
        # Brute force over the 6 permutation matrices, with cost[i, j] = C[k, 3 i + j].
        values = [np.sum(C[k].reshape(n, n) * P) for P in perms]
        best = perms[int(np.argmin(values))]
        assert sorted(values)[1] - min(values) > 1e-3
        assert_allclose(W[k], best.reshape(-1), atol=1e-6)
        assert z[k] == pytest.approx(min(values), rel=1e-7)
    # Declared boolean: the entries come back as exact 0/1 in the same order.
    xb = cp.Variable((n, n), boolean=True)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(c, xb))),
                      [cp.sum(xb, axis=0) == 1, cp.sum(xb, axis=1) == 1])
    Wb, _ = from_cvxpy(prob, c, xb).solve(C[:2])
    assert_array_equal(Wb, W[:2].round())
    # The objective must be the inner product of cost and decision.
    bad = cp.Problem(cp.Minimize(cp.sum(cp.multiply(c, x.T))),
                     [cp.sum(x, axis=0) == 1, cp.sum(x, axis=1) == 1, x >= 0])
    with pytest.raises(ValueError, match="cp.sum\\(cp.multiply\\(cost, decision\\)\\)"):
        from_cvxpy(bad, c, x, solver=SOLVER)


@pytest.mark.parametrize("solver", ["HIGHS", "SCIPY"])
def test_integer_decisions_are_optimal_not_within_the_default_gap(solver):
    # HiGHS's branch and bound stops at a relative gap of 1e-4: on this
    # knapsack (values within 0.1% of the weights), CVXPY's HIGHS and SCIPY
    # returned a decision 4.1e-5 below the optimum as optimal. Brute force
    # over the 4096 subsets gives the optimum.
    if solver not in cp.installed_solvers():
        pytest.skip(f"{solver} is not installed")
    rng = np.random.default_rng(5)
    n = 12
    w = np.round(rng.uniform(1, 10, size=n), 3)
    cap = np.round(w.sum() / 2.5, 3)
    C = w * (1 + rng.normal(scale=1e-3, size=(60, n)))
    c = C[39]
    cost, x = cp.Parameter(n), cp.Variable(n, boolean=True)
    problem = from_cvxpy(cp.Problem(cp.Maximize(cost @ x), [w @ x <= cap]), cost, x,
                         solver=solver)
    subsets = (np.arange(2 ** n)[:, None] >> np.arange(n)) & 1
    best = (subsets[subsets @ w <= cap] @ c).max()
    W, z = problem.solve(c[None, :])
    assert W @ w <= cap
    assert z[0] == pytest.approx(best, rel=1e-12)
    # A gap the user sets is theirs.
    loose = from_cvxpy(cp.Problem(cp.Maximize(cost @ x), [w @ x <= cap]), cost, x,
                       solver=solver, solver_options=(
                           {"mip_rel_gap": 1e-4} if solver == "HIGHS"
                           else {"scipy_options": {"mip_rel_gap": 1e-4}}))
    assert loose._exact_gap == {}
