"""check_decisions: the decisions stored in a model belong to its problem."""

import copy

import numpy as np
import pytest

from spotree import SPOTree
from spotree._schema import SchemaError
from spotree.datasets import make_shortest_path
from spotree.problems import CallableProblem, FiniteDecisions, LinearProgram, ShortestPath
from spotree.tree import _validate_file
from spotree.tree._validate_file import check_decisions


def _tree_with(tree, **arrays):
    t = copy.deepcopy(tree)
    for name, a in arrays.items():
        setattr(t, name, np.asarray(a, dtype=np.float64))
    return t


def _fit(problem, C, max_depth=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(C.shape[0], 3))
    return SPOTree(problem, max_depth=max_depth).fit(X, C).tree_


def _reject(tree, problem, match):
    with pytest.raises(SchemaError, match=match):
        check_decisions([tree], problem)


# --------------------------------------------------------- linear programs
LP = LinearProgram(A_ub=[[1.0, 1.0, 1.0], [1.0, -1.0, 0.0]], b_ub=[1.0, 0.5],
                   bounds=(0, 1), sense="max")


def _lp_tree():
    C = np.random.default_rng(0).uniform(-0.2, 1.0, size=(120, 3))
    return _fit(LP, C)


def test_lp_decisions_are_checked_against_the_constraints():
    tree = _lp_tree()
    check_decisions([tree], LP)
    # Each violates one constraint (by 0.1, far above rounding) and no other.
    for w in ([0.6, 0.5, 0.0],       # sum <= 1
              [0.8, 0.2, 0.0],       # w0 - w1 <= 0.5
              [0.0, 0.0, -0.1],      # w >= 0
              [0.0, 0.0, 1.1]):      # w <= 1
        D = tree.decision.copy()
        D[2] = w
        _reject(_tree_with(tree, decision=D), LP,
                r"trees\[0\]\.decision\[2\] is not a feasible decision of the model's problem "
                r"\(LinearProgram, a 'max' problem\)")


def test_lp_check_uses_relative_tolerances():
    # Rounding-level noise passes, at any scale of the feasible set.
    for s in (1e-9, 1.0, 1e9):
        lp = LinearProgram(A_ub=[[1.0, 1.0, 1.0]], b_ub=[s], bounds=(0, None), sense="max")
        C = np.random.default_rng(1).uniform(0.1, 1.0, size=(60, 3))
        tree = _fit(lp, C, max_depth=2)
        assert np.abs(tree.decision).max() == pytest.approx(s)
        noisy = tree.decision * (1 + 1e-12) - 1e-14 * s
        check_decisions([_tree_with(tree, decision=noisy)], lp)
        _reject(_tree_with(tree, decision=tree.decision * 1.001), lp, "not a feasible decision")


def test_milp_decisions_must_be_integer():
    milp = LinearProgram(A_ub=[[2.0, 3.0, 4.0]], b_ub=[6.0], bounds=(0, 1),
                         integrality=[1, 1, 1], sense="max")
    C = np.random.default_rng(2).uniform(size=(80, 3))
    tree = _fit(milp, C, max_depth=2)
    check_decisions([tree], milp)
    D = tree.decision.copy()
    D[0] = [0.5, 0.0, 0.0]   # inside the relaxation, not an integer point
    _reject(_tree_with(tree, decision=D), milp, r"decision\[0\] is not a feasible decision")


# ---------------------------------------------------------- vertex lists
def test_decisions_must_be_in_the_vertex_list():
    V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    fd = FiniteDecisions(V)
    C = np.random.default_rng(3).uniform(size=(90, 3))
    tree = _fit(fd, C)
    check_decisions([tree], fd)
    D = tree.decision.copy()
    D[1] = [0.5, 0.5, 0.0]    # in the convex hull, not in the finite set
    _reject(_tree_with(tree, decision=D), fd, r"decision\[1\] is not a feasible decision of "
                                              r"the model's problem \(FiniteDecisions")


def test_a_wrong_oracle_is_caught_by_decisions_better_than_its_optimum():
    # The oracle ignores the costs: the stored (truly optimal) decisions beat it.
    V = np.eye(3)
    tree = _fit(FiniteDecisions(V), np.random.default_rng(4).uniform(size=(90, 3)))
    lazy = CallableProblem(lambda c: V[0], n_costs=3, vertices=V)
    with pytest.raises(SchemaError, match="is better than the optimum of the node's value"):
        check_decisions([tree], lazy)


# ----------------------------------------- no exact test: the oracle fallback
@pytest.mark.parametrize("make_problem", [
    lambda: ShortestPath((10, 10)),   # 48,620 paths: no vertex list
    lambda: CallableProblem(lambda C: ShortestPath((10, 10)).solve(C)[0], n_costs=180,
                            batched=True),
], ids=["large_grid", "callable"])
def test_without_a_vertex_list_infeasible_decisions_are_caught(make_problem):
    problem = make_problem()
    assert problem.vertices() is None
    X, C = make_shortest_path(150, n_features=3, grid=(10, 10), noise=0.5, random_state=0)
    tree = SPOTree(problem, max_depth=2).fit(X, C).tree_
    check_decisions([tree], problem)
    leaves = np.flatnonzero(tree.is_leaf)
    # All zeros, or a path with an edge removed: cheaper than any path for
    # positive costs.
    D = tree.decision.copy()
    D[leaves] = 0.0
    _reject(_tree_with(tree, decision=D), problem,
            rf"decision\[{leaves[0]}\] is better than the optimum")
    D = tree.decision.copy()
    D[0, np.flatnonzero(D[0])[0]] = 0.0
    _reject(_tree_with(tree, decision=D), problem, r"decision\[0\] is better than the optimum")


def test_random_cost_vectors_catch_what_the_stored_values_miss(monkeypatch):
    # Every edge at once is no path. At a node whose value is zero any
    # decision is optimal, and for the other (non-negative) stored values it
    # costs more than the best path: only cost vectors with negative entries,
    # the random ones, show it beating the optimum.
    problem = CallableProblem(lambda C: ShortestPath((3, 3)).solve(C)[0], n_costs=12,
                              batched=True)
    X, C = make_shortest_path(60, n_features=3, grid=(3, 3), random_state=0)
    tree = SPOTree(problem, max_depth=2).fit(X, C).tree_
    assert (tree.value >= 0).all()
    t = int(np.flatnonzero(tree.is_leaf)[-1])
    D, values = tree.decision.copy(), tree.value.copy()
    D[t], values[t] = 1.0, 0.0
    edited = _tree_with(tree, decision=D, value=values)
    _reject(edited, problem, rf"decision\[{t}\] is better than the optimum of the model's "
                             r"problem \(CallableProblem, a 'min' problem\) for some cost vector")
    monkeypatch.setattr(_validate_file, "N_RANDOM", 0)
    check_decisions([edited], problem)  # the necessary condition is only that


# ------------------------------------------------------------- optimality
def _sp_tree(grid=(3, 3), sense="min"):
    X, C = make_shortest_path(100, n_features=3, grid=grid, noise=0.5, random_state=1)
    sp = ShortestPath(grid, sense=sense)
    return SPOTree(sp, max_depth=3).fit(X, C).tree_, sp


@pytest.mark.parametrize("scale", [1e-310, 1e-300, 1e-13, 1.0, 1e13, 1e300, "max"])
def test_the_verdicts_do_not_depend_on_the_scale_of_the_costs(scale):
    # 1e-310: subnormal values; "max": the largest value is 90% of the largest
    # float, so path costs overflow unless the check rescales the values.
    tree, sp = _sp_tree()
    if scale == "max":
        scale = 0.9 * np.finfo(np.float64).max / tree.value.max()
    scaled = _tree_with(tree, value=tree.value * scale)
    assert np.isfinite(scaled.value).all()
    check_decisions([scaled], sp)
    # A flipped sense fails at every scale.
    _reject(scaled, ShortestPath((3, 3), sense="max"),
            r"decision\[0\] is not optimal for the node's value under the model's problem "
            r"\(ShortestPath, a 'max' problem\)")
    # So does one decision swapped for the worst path of its node's value.
    V = sp.vertices()
    D = tree.decision.copy()
    t = int(np.flatnonzero(tree.is_leaf)[0])
    D[t] = V[np.argmax(V @ tree.value[t])]
    _reject(_tree_with(scaled, decision=D), sp, rf"decision\[{t}\] is not optimal")


def test_optimality_tolerance_is_relative_and_tight():
    tree, sp = _sp_tree()
    # Rounding-level noise in the stored values passes ...
    rng = np.random.default_rng(5)
    noisy = tree.value * (1 + 1e-12 * rng.standard_normal(tree.value.shape))
    check_decisions([_tree_with(tree, value=noisy)], sp)
    # ... a value moved until its decision is 1e-3 (relative) worse than the
    # best path does not.
    t = 0
    V = sp.vertices()
    v = tree.value[t].copy()
    w = tree.decision[t]
    others = V[~(V == w).all(axis=1)]
    best_other = others[np.argmin(others @ v)]
    # Raise the cost of the stored path's own edges until another path is 0.1% cheaper.
    only_w = (w > 0) & (best_other == 0)
    gap = best_other @ v - w @ v
    v[only_w] += (gap + 1e-3 * (w @ v)) / only_w.sum()
    values = tree.value.copy()
    values[t] = v
    _reject(_tree_with(tree, value=values), sp, r"decision\[0\] is not optimal")


def test_the_number_of_oracle_calls_is_bounded(monkeypatch):
    monkeypatch.setattr(_validate_file, "MAX_SOLVES", 7)
    calls = []
    sp = ShortestPath((3, 3))

    def oracle(C):
        calls.append(C.shape[0])
        return sp.solve(C)[0]

    problem = CallableProblem(oracle, n_costs=12, batched=True)
    tree, _ = _sp_tree()
    assert tree.node_count > 7
    check_decisions([tree, tree, tree], problem)
    assert sum(calls) == 7 + _validate_file.N_RANDOM
    # Without the cap, every node is solved.
    monkeypatch.setattr(_validate_file, "MAX_SOLVES", 10 ** 6)
    calls.clear()
    check_decisions([tree], problem)
    assert sum(calls) == tree.node_count + _validate_file.N_RANDOM


def test_errors_name_the_tree_and_node():
    tree, sp = _sp_tree()
    D = tree.decision.copy()
    D[3] = 0.0
    with pytest.raises(SchemaError, match=r"^forest\[2\]\.decision\[3\] is not a feasible"):
        check_decisions([tree, tree, _tree_with(tree, decision=D)], sp, where="forest")
