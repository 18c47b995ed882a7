"""Tests of from_pyepo against a test double of PyEPO's models, and against the
real PyEPO package and its own solvers wherever it is installed.

CI installs neither PyEPO nor torch (too large for it), so every test here
also runs on ``_pyepo_double`` (PyEPO's model interface imitated, solved by
scipy's MILP solver); the tests that need PyEPO's own code (its regret
metric, an OR-Tools model) skip without it. PyEPO rounds cost vectors to
float32 before solving, hence the 1e-6 relative tolerance on values
compared with a model's own.
"""

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from spotree import SPOForest
from spotree.problems import (DAGShortestPath, Knapsack, PyEPOProblem, ShortestPath,
                              describe_not_a_problem, from_pyepo)

from . import _pyepo_double


def _backends():
    out = [pytest.param(_pyepo_double, id="double")]
    try:
        import ortools  # noqa: F401

        import pyepo.model.ort as ort

        out.append(pytest.param(ort, id="ortools"))
    except ImportError:
        pass
    try:
        import gurobipy

        import pyepo.model.grb as grb

        gurobipy.Model().dispose()  # the size-limited license is enough
        out.append(pytest.param(grb, id="gurobi"))
    except Exception:
        pass
    return out


BACKENDS = _backends()
REAL_BACKENDS = BACKENDS[1:]  # PyEPO's own, where installed


def own_values(model, C):
    """PyEPO's own optimal values, one solve per cost vector."""
    out = []
    for c in C:
        model.setObj(c)
        _, obj = model.solve()
        out.append(obj)
    return np.array(out)


def pyepo_knapsack_data(rng, n_items=32, dim=2, n=50):
    # PyEPO's generator: weights in [3, 8) with two decimals, integer values.
    weights = rng.choice(range(300, 800), size=(dim, n_items)) / 100
    capacity = 0.5 * weights.sum(axis=1)
    C = np.ceil(rng.uniform(1, 20, size=(n, n_items)))
    return weights, capacity, C


# ------------------------------------------------------- shortest path
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("grid", [(5, 5), (3, 6)])
def test_shortest_path_values_equal_pyepo(backend, grid):
    model = backend.shortestPathModel(grid)
    problem = from_pyepo(model)
    assert isinstance(problem, DAGShortestPath)
    assert problem.n_costs == model.num_cost and problem.sense == "min"
    C = np.random.default_rng(0).uniform(0.0, 2.0, size=(50, model.num_cost))
    W, z = problem.solve(C)
    assert_allclose(z, own_values(model, C), rtol=1e-6)
    # Decisions are paths in PyEPO's arc order: each value is c^T w.
    assert_allclose(np.einsum("ij,ij->i", C, W), z, rtol=1e-12)
    # The generic path (calling the model) agrees.
    generic = from_pyepo(model, native=False)
    assert isinstance(generic, PyEPOProblem)
    _, zg = generic.solve(C[:20])
    assert_allclose(zg, z[:20], rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pyepo_arc_order_differs_from_grid_order(backend):
    # What the issue found: PyEPO's costs fed to ShortestPath((5, 5)) as they
    # are give wrong values; from_pyepo maps the columns.
    model = backend.shortestPathModel((5, 5))
    C = np.random.default_rng(1).uniform(0.0, 2.0, size=(50, 40))
    _, z_grid = ShortestPath((5, 5)).solve(C)
    _, z = from_pyepo(model).solve(C)
    assert not np.isclose(z_grid, z, rtol=1e-6).all()
    assert_allclose(z, own_values(model, C), rtol=1e-6)


# ------------------------------------------------------------ knapsack
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dim", [1, 2])
def test_knapsack_values_equal_pyepo(backend, dim):
    rng = np.random.default_rng(2 + dim)
    weights, capacity, C = pyepo_knapsack_data(rng, dim=dim)
    model = backend.knapsackModel(weights, capacity)
    problem = from_pyepo(model)
    assert isinstance(problem, Knapsack) and problem.sense == "max"
    W, z = problem.solve(C)
    assert_allclose(z, own_values(model, C), rtol=1e-6)
    assert (W @ weights.T <= capacity + 1e-7).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_relaxed_or_constrained_models_are_not_replaced(backend):
    rng = np.random.default_rng(4)
    weights, capacity, C = pyepo_knapsack_data(rng, n_items=10, n=10)
    model = backend.knapsackModel(weights, capacity)
    relaxed = model.relax()
    problem = from_pyepo(relaxed)
    assert isinstance(problem, PyEPOProblem)
    _, z_lp = problem.solve(C)
    assert_allclose(z_lp, own_values(relaxed, C), rtol=1e-6)
    _, z_int = from_pyepo(model).solve(C)
    assert (z_lp >= z_int - 1e-6).all() and (z_lp > z_int + 1e-6).any()
    # A model with an added cut keeps its own solver, and the cut.
    cut = model.addConstr(np.ones(10), 2.0)
    problem = from_pyepo(cut)
    assert isinstance(problem, PyEPOProblem)
    W, z = problem.solve(C)
    assert (W.sum(axis=1) <= 2 + 1e-9).all()
    assert_allclose(z, own_values(cut, C), rtol=1e-6)
    # ... which survives pickling (replayed on the rebuilt model).
    W2, _ = pickle.loads(pickle.dumps(problem)).solve(C)
    assert_array_equal(W2, W)


# ------------------------------------------------------------- pickling
@pytest.mark.parametrize("backend", BACKENDS)
def test_generic_problem_pickles_by_rebuilding(backend):
    model = backend.shortestPathModel((4, 4))
    problem = from_pyepo(model, native=False)
    C = np.random.default_rng(5).uniform(0.0, 1.0, size=(10, model.num_cost))
    W, z = problem.solve(C)
    q = pickle.loads(pickle.dumps(problem))
    assert q.oracle._model is None  # rebuilt lazily, not carried
    W2, z2 = q.solve(C)
    assert_array_equal(W2, W)
    assert q.oracle._model is not None and q.oracle._model is not model


class _NotRebuildable:
    """A duck-typed optModel holding a lock: neither rebuildable nor picklable."""

    modelSense = 1
    num_cost = 3

    def __init__(self):
        import threading

        self.lock = threading.Lock()

    def setObj(self, c):
        self.c = np.asarray(c, dtype=float)

    def solve(self):
        w = np.eye(3)[np.argmin(self.c)]
        return w, float(self.c @ w)


def test_model_that_cannot_be_rebuilt_runs_serially_and_says_so():
    problem = from_pyepo(_NotRebuildable())
    W, _ = problem.solve([[2.0, 1.0, 3.0]])
    assert_array_equal(W, [[0, 1, 0]])
    with pytest.raises(TypeError, match=r"The PyEPO model _NotRebuildable .* cannot be sent to "
                                        r"another process.*fit with n_jobs=1"):
        pickle.dumps(problem)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("native", [True, False])
def test_forest_n_jobs_2_equals_n_jobs_1(native, backend):
    model = backend.shortestPathModel((3, 3))
    problem = from_pyepo(model, native=native)
    rng = np.random.default_rng(6)
    X = rng.normal(size=(60, 3))
    C = np.abs(X[:, :1] + rng.normal(size=(60, model.num_cost))) + 0.1
    # Few thresholds: each candidate split is a call to the model when native=False.
    kw = dict(n_estimators=3, max_depth=2, min_samples_leaf=5, thresholds=4, random_state=0)
    p1 = SPOForest(problem, n_jobs=1, **kw).fit(X, C).predict(X)
    p2 = SPOForest(problem, n_jobs=2, **kw).fit(X, C).predict(X)
    assert_array_equal(p1, p2)


# ------------------------------------------------------------ bad input
@pytest.mark.parametrize("backend", BACKENDS)
def test_infeasible_model_names_the_source(backend):
    model = backend.shortestPathModel((3, 3)).addConstr(np.ones(12), -1.0)  # sum w <= -1
    problem = from_pyepo(model)
    with pytest.raises(ValueError, match=r"The PyEPO model shortestPathModel \(pyepo.model."
                                         r".*\) found no optimal solution .*infeasible, or "
                                         r"unbounded"):
        problem.solve(np.ones((2, 12)))


def test_unbounded_model_names_the_source():
    ort = pytest.importorskip("pyepo.model.ort")
    pytest.importorskip("ortools")
    from ortools.linear_solver import pywraplp

    class FreeModel(ort.optOrtModel):
        """min c^T w over all of R^2: unbounded."""

        def _getModel(self):
            m = pywraplp.Solver.CreateSolver("GLOP")
            x = {i: m.NumVar(-m.infinity(), m.infinity(), f"x{i}") for i in range(2)}
            return m, x

    problem = from_pyepo(FreeModel(solver="glop"))
    # GLOP's presolve reports this unbounded LP as INFEASIBLE; the message
    # names both possibilities and the model.
    with pytest.raises(ValueError, match=r"The PyEPO model FreeModel \(.*\) found no optimal "
                                         r"solution \(RuntimeError: OR-Tools found no "
                                         r"solution.*\). The model is infeasible, or unbounded"):
        problem.solve([[1.0, -1.0]])


def test_not_a_pyepo_model():
    with pytest.raises(TypeError, match=r"'model' parameter of from_pyepo must be a PyEPO "
                                        r"optModel .*Got list"):
        from_pyepo([1, 2])
    backend = BACKENDS[0].values[0]
    model = backend.shortestPathModel((2, 2))
    with pytest.raises(ValueError, match="'native' parameter of from_pyepo must be a bool"):
        from_pyepo(model, native="yes")
    msg = describe_not_a_problem(model)
    assert "from_pyepo(model)" in msg


def test_bad_model_sense():
    class Weird(_NotRebuildable):
        modelSense = 0

    with pytest.raises(ValueError, match=r"has modelSense 0; expected PyEPO's EPO.MINIMIZE"):
        from_pyepo(Weird())


@pytest.mark.parametrize("backend", BACKENDS)
def test_disagreeing_native_solver_falls_back_with_a_warning(monkeypatch, backend):
    # Simulate a future PyEPO whose arcs no longer match its cost columns.
    model = backend.shortestPathModel((3, 3))
    # (Reversing the list would not do: the grid's 180-degree symmetry maps
    # it onto the same paths.)
    monkeypatch.setattr(model, "arcs", model.arcs[1:] + model.arcs[:1], raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        problem = from_pyepo(model)
    assert isinstance(problem, PyEPOProblem)
    assert any("disagrees" in str(w.message) for w in caught)


# ------------------------------------------------------ regret metric
@pytest.mark.parametrize("backend", REAL_BACKENDS)
def test_normalized_spo_loss_equals_pyepo_regret(backend):
    # The same predictions scored by PyEPO's own metric (its optDataset
    # solves the true costs, pyepo.metric.regret the predicted ones).
    torch = pytest.importorskip("torch")
    from pyepo.data.dataset import optDataset
    from pyepo.data.shortestpath import genData
    from pyepo.metric import regret

    from spotree.metrics import normalized_spo_loss

    X, C = genData(80, 5, (5, 5), deg=4, noise_width=0.5, seed=3)
    model = backend.shortestPathModel((5, 5))
    linear = torch.nn.Linear(5, C.shape[1])
    torch.manual_seed(0)
    with torch.no_grad():
        linear.weight.normal_(0.0, 0.3)
        linear.bias.fill_(1.0)
        C_pred = linear(torch.as_tensor(X, dtype=torch.float32)).numpy().astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loader = torch.utils.data.DataLoader(optDataset(model, X, C), batch_size=16)
        theirs = regret(linear, model, loader)
    ours = normalized_spo_loss(C, C_pred, problem=from_pyepo(model))
    assert 0.01 < ours < 1.0  # predictions that do lose something
    assert ours == pytest.approx(theirs, rel=1e-5)


def test_model_whose_recipe_does_not_build_says_so_before_a_worker_fails():
    # PyEPO's optOrtModel records ``solver`` in get_config(); a subclass whose
    # __init__ does not take it pickles its recipe fine but cannot be rebuilt.
    ort = pytest.importorskip("pyepo.model.ort")
    pytest.importorskip("ortools")
    from ortools.linear_solver import pywraplp

    class Simplex(ort.optOrtModel):
        """min c^T w over the probability simplex in R^3."""

        def __init__(self):
            super().__init__(solver="glop")

        def _getModel(self):
            m = pywraplp.Solver.CreateSolver("GLOP")
            x = {i: m.NumVar(0.0, 1.0, f"x{i}") for i in range(3)}
            m.Add(sum(x.values()) == 1)
            return m, x

    model = Simplex()
    with pytest.raises(TypeError):  # the ground truth: PyEPO's own rebuild fails
        model.to_spec().build()
    problem = from_pyepo(model)
    W, z = problem.solve([[2.0, 1.0, 3.0]])
    assert_allclose(W, [[0, 1, 0]])
    with pytest.raises(TypeError, match=r"The PyEPO model Simplex .* cannot be sent to another "
                                        r"process: rebuilding it from its to_spec\(\) recipe "
                                        r"fails \(TypeError: .*solver.*fit with n_jobs=1"):
        pickle.dumps(problem)
