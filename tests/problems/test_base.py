"""Tests of the decision-problem base layer: FiniteDecisions, CallableProblem,
the vertex fast path, pickling and the JSON specs, plus property tests shared
by every problem."""

import copy
import json
import pickle
import re

import joblib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import linprog

from _helpers import traced_peak

from spotree.datasets import make_illustrative
from spotree.problems import (CallableProblem, DecisionProblem, FiniteDecisions, Knapsack,
                              ShortestPath, problem_from_dict)


# ------------------------------------------------------------- references
def loop_argbest(C, V, sense):
    """Index of the best row of V for each row of C; ties to the first listed.

    A plain Python loop with strict comparisons, independent of numpy's
    argmin/argmax.
    """
    out = []
    for c in C:
        best_k, best_v = 0, float(np.dot(c, V[0]))
        for k in range(1, len(V)):
            v = float(np.dot(c, V[k]))
            if (v < best_v) if sense == "min" else (v > best_v):
                best_k, best_v = k, v
        out.append(best_k)
    return np.array(out)


class ArgminOracle:
    """A picklable per-row oracle: the best of a fixed candidate list."""

    def __init__(self, V, sense="min"):
        self.V = np.asarray(V, dtype=float)
        self.sense = sense
        self.calls = 0

    def __call__(self, c):
        self.calls += 1
        g = self.V @ c
        return self.V[np.argmin(g) if self.sense == "min" else np.argmax(g)]


class BatchedArgminOracle(ArgminOracle):
    def __call__(self, C):
        self.calls += 1
        G = C @ self.V.T
        return self.V[np.argmin(G, axis=1) if self.sense == "min" else np.argmax(G, axis=1)]


def simplex_lp(c):
    """min c^T w over the probability simplex, through scipy's HiGHS linprog."""
    res = linprog(c, A_eq=np.ones((1, len(c))), b_eq=[1.0], bounds=(0, None), method="highs")
    assert res.status == 0
    return res.x


def wrong_length_oracle(c):
    return np.zeros(len(c) - 1)


# ---------------------------------------------------------- FiniteDecisions
@pytest.mark.parametrize("sense", ["min", "max"])
def test_finite_decisions_equals_brute_force(sense):
    rng = np.random.default_rng(0 if sense == "min" else 1)
    V = rng.normal(size=(12, 5))
    C = rng.normal(size=(200, 5))
    p = FiniteDecisions(V, sense=sense)
    W, z = p.solve(C)
    k = loop_argbest(C, V, sense)
    assert_array_equal(W, V[k])
    assert_allclose(z, [np.dot(c, V[j]) for c, j in zip(C, k)], rtol=1e-12, atol=1e-12)
    W2, z2, k2 = p.solve_vertices(C)
    assert_array_equal(k2, k)
    assert_array_equal(W2, W)


@pytest.mark.parametrize("sense", ["min", "max"])
def test_finite_decisions_ties_go_to_first_listed(sense):
    # Small integer data: many exact ties, all sums exact.
    rng = np.random.default_rng(5)
    V = rng.integers(0, 2, size=(8, 4)).astype(float)
    V[5] = V[2]  # a duplicated candidate can never be chosen over its twin
    C = rng.integers(0, 3, size=(300, 4)).astype(float)
    p = FiniteDecisions(V, sense=sense)
    _, _, k = p.solve_vertices(C)
    assert_array_equal(k, loop_argbest(C, V, sense))
    assert not (k == 5).any()
    # Explicit: both roads equally fast -> the first road.
    W, z = FiniteDecisions(np.eye(2), sense=sense).solve([[4.0, 4.0]])
    assert_array_equal(W, [[1.0, 0.0]])
    assert_array_equal(z, [4.0])


@pytest.mark.parametrize("block", [1, 17, 40])
@pytest.mark.parametrize("sense", ["min", "max"])
def test_solve_vertices_in_row_blocks(block, sense, monkeypatch):
    # The value matrix is formed a block of rows at a time (block // K rows):
    # 1 -> one row per block, 17 -> 2 rows, 40 -> 5 rows (K = 8); ties included.
    monkeypatch.setattr(FiniteDecisions, "_vertex_block", block)
    rng = np.random.default_rng(6)
    V = rng.integers(0, 2, size=(8, 4)).astype(float)
    C = rng.integers(-2, 3, size=(23, 4)).astype(float)
    W, z, k = FiniteDecisions(V, sense=sense).solve_vertices(C)
    expected = loop_argbest(C, V, sense)
    assert_array_equal(k, expected)
    assert_array_equal(W, V[expected])


def test_finite_decisions_max_sense_picks_largest():
    p = FiniteDecisions(np.eye(3), sense="max")
    W, z = p.solve([[0.1, 0.7, 0.3], [0.5, -1.0, 0.2]])
    assert_array_equal(W, [[0, 1, 0], [1, 0, 0]])
    assert_array_equal(z, [0.7, 0.5])
    assert p.sign == -1.0
    assert FiniteDecisions(np.eye(3)).sign == 1.0


def test_two_road_docstring_example():
    roads = FiniteDecisions(np.eye(2))
    W, z = roads.solve([[3.0, 2.0], [1.0, 5.0]])
    assert_array_equal(W, [[0.0, 1.0], [1.0, 0.0]])
    assert_array_equal(z, [2.0, 1.0])


def test_two_road_illustrative_decision_boundary():
    # c1 = 5x + 1.9 and c2 = (5x + 0.4)^2 cross where u = 5x + 0.4 solves
    # u^2 = u + 1.5, i.e. u = (1 + sqrt(7)) / 2, x = (u - 0.4) / 5 ~ 0.2846.
    x_star = ((1 + np.sqrt(7)) / 2 - 0.4) / 5
    X, C = make_illustrative(2000, random_state=0)
    W, z = FiniteDecisions(np.eye(2)).solve(C)
    x = X[:, 0]
    assert_array_equal(W[x < x_star], np.tile([0.0, 1.0], ((x < x_star).sum(), 1)))
    assert_array_equal(W[x > x_star], np.tile([1.0, 0.0], ((x > x_star).sum(), 1)))
    assert_allclose(z, np.minimum(5 * x + 1.9, (5 * x + 0.4) ** 2), rtol=1e-14)


def test_finite_decisions_validation_and_repr():
    p = FiniteDecisions(np.eye(2))
    # V holds decisions: its messages spoke of samples and cost vectors.
    with pytest.raises(ValueError, match=r"V must be a 2-D array of shape \(n_decisions, "
                                         r"n_costs\).* a single decision with w\.reshape"):
        FiniteDecisions([1.0, 0.0])
    with pytest.raises(ValueError, match="V is empty"):
        FiniteDecisions(np.empty((0, 3)))
    with pytest.raises(ValueError, match="V contains NaN.*; decisions must be finite"):
        FiniteDecisions([[np.nan, 1.0]])
    with pytest.raises(ValueError, match="W contains NaN.*; decisions must be finite"):
        p.value(np.ones((1, 2)), [[np.inf, 0.0]])
    with pytest.raises(ValueError, match="C contains NaN.*; costs must be finite"):
        p.value([[np.nan, 0.0]], np.ones((1, 2)))
    with pytest.raises(ValueError, match="sense must be 'min' or 'max'; got 'best'"):
        FiniteDecisions(np.eye(2), sense="best")
    p = FiniteDecisions(np.ones((3, 4)), sense="max")
    assert p.n_costs == 4
    assert repr(p) == "FiniteDecisions(n_decisions=3, n_costs=4, sense='max')"


def test_finite_decisions_does_not_touch_callers_array():
    V = np.eye(3)
    p = FiniteDecisions(V)
    p.vertices()
    assert V.flags.writeable
    V[0, 0] = 7.0  # must not change the problem
    assert p.vertices()[0, 0] == 1.0


# ---------------------------------------------------------- CallableProblem
@pytest.mark.parametrize("sense", ["min", "max"])
def test_callable_per_row_oracle(sense):
    rng = np.random.default_rng(2)
    V = rng.normal(size=(7, 4))
    C = rng.normal(size=(30, 4))
    oracle = ArgminOracle(V, sense)
    p = CallableProblem(oracle, n_costs=4, sense=sense)
    W, z = p.solve(C)
    assert oracle.calls == 30
    k = loop_argbest(C, V, sense)
    assert_array_equal(W, V[k])
    assert_allclose(z, np.einsum("ij,ij->i", C, V[k]), rtol=1e-14)


@pytest.mark.parametrize("sense", ["min", "max"])
def test_callable_batched_oracle(sense):
    rng = np.random.default_rng(3)
    V = rng.normal(size=(7, 4))
    C = rng.normal(size=(30, 4))
    oracle = BatchedArgminOracle(V, sense)
    p = CallableProblem(oracle, n_costs=4, sense=sense, batched=True)
    W, z = p.solve(C)
    assert oracle.calls == 1
    assert_array_equal(W, V[loop_argbest(C, V, sense)])
    W_fd, z_fd = FiniteDecisions(V, sense=sense).solve(C)
    assert_array_equal(W, W_fd)
    assert_allclose(z, z_fd, rtol=1e-12, atol=1e-12)


def test_callable_wrapping_linprog_matches_simplex_vertices():
    # The docstring example: an LP over the simplex is solved at a vertex
    # e_j with j = argmin c_j, so the brute force is over the identity rows.
    p = CallableProblem(simplex_lp, n_costs=3)
    W, z = p.solve([[3.0, 1.0, 2.0]])
    assert_allclose(W, [[0.0, 1.0, 0.0]], atol=1e-9)
    assert_allclose(z, [1.0], atol=1e-9)
    rng = np.random.default_rng(4)
    C = rng.normal(size=(15, 3))
    W, z = p.solve(C)
    assert_allclose(W, np.eye(3)[C.argmin(axis=1)], atol=1e-9)
    assert_allclose(z, C.min(axis=1), atol=1e-9)
    # With the vertex list supplied, the fast path agrees with linprog.
    pv = CallableProblem(simplex_lp, n_costs=3, vertices=np.eye(3))
    Wv, zv, _ = pv.solve_vertices(C)
    assert_allclose(Wv, W, atol=1e-9)
    assert_allclose(zv, z, atol=1e-9)


def _cheapest_pair(c):
    w = np.eye(len(c))[int(np.argmin(c))]
    return w, float(c @ w)


@pytest.mark.parametrize("oracle, batched, shapes", [
    (lambda c: (_cheapest_pair(c)[0][:, None], _cheapest_pair(c)[1]), False, r"\(3, 1\) and \(\)"),
    (lambda c: (_cheapest_pair(c)[0], np.array([_cheapest_pair(c)[1]])), False,
     r"\(3,\) and \(1,\)"),
    (lambda C: (np.eye(3)[C.argmin(1)], C.min(1)[:, None]), True, r"\(4, 3\) and \(4, 1\)"),
])
def test_callable_pair_of_other_shapes_names_the_shapes(oracle, batched, shapes):
    # A pair (w, z) with a column w or a length-1 z was reported as "a decision
    # that is not an array of numbers (tuple)", about a tuple the oracle
    # meant as a pair; the message now gives the parts' shapes and the fix.
    C = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, 1.0], [2.0, 2.0, -1.0], [1.0, 0.0, 5.0]])
    with pytest.raises(ValueError, match=r"returned a pair whose parts have shapes " + shapes
                                         + r".* must hold "):
        CallableProblem(oracle, n_costs=3, batched=batched).solve(C)
    # The well-shaped pair, and two numbers as a decision of length 2, still solve
    # (the cheapest option, by hand: columns 1, 0, 2, 1).
    W, z = CallableProblem(_cheapest_pair, n_costs=3).solve(C)
    assert_array_equal(W.argmax(1), [1, 0, 2, 1])
    assert_array_equal(z, [1.0, 0.5, -1.0, 0.0])
    W2, _ = CallableProblem(lambda c: (1.0, 0.0) if c[0] < c[1] else (0.0, 1.0),
                            n_costs=2).solve(C[:, :2])
    assert_array_equal(W2, [[0, 1], [1, 0], [0, 1], [0, 1]])


def test_callable_wrong_output_shape_names_the_oracle():
    p = CallableProblem(wrong_length_oracle, n_costs=4)
    with pytest.raises(ValueError, match=r"The oracle wrong_length_oracle returned a decision "
                                         r"of shape \(3,\) for cost vector 0; expected \(4,\)"):
        p.solve(np.ones((2, 4)))
    pb = CallableProblem(lambda C: np.ones((len(C), 5)), n_costs=4, batched=True)
    with pytest.raises(ValueError, match=r"The oracle .*<lambda> returned decisions of shape "
                                         r"\(3, 5\) for a batch of shape \(3, 4\)"):
        pb.solve(np.ones((3, 4)))
    pscalar = CallableProblem(lambda c: 1.0, n_costs=4)
    with pytest.raises(ValueError, match=r"returned a decision of shape \(\) for cost vector 0"):
        pscalar.solve(np.ones((3, 4)))
    # A per-row oracle given a batch by mistake says to pass batched=True.
    with pytest.raises(ValueError, match="pass batched=True"):
        CallableProblem(lambda c: np.zeros((2, 4)), n_costs=4).solve(np.ones((1, 4)))
    pstr = CallableProblem(lambda c: ["a"] * 4, n_costs=4)
    with pytest.raises(ValueError, match=r"returned a decision for cost vector 0 that is not "
                                         r"an array of numbers"):
        pstr.solve(np.ones((1, 4)))


def nan_oracle(c):
    return np.array([np.nan, 1.0])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_callable_non_finite_decision_names_the_oracle(bad):
    # Issue 9: a NaN decision used to fit silently with zero losses.
    p = CallableProblem(lambda c: np.array([bad, 1.0]), n_costs=2)
    with pytest.raises(ValueError, match=r"The oracle .*<lambda> returned a decision "
                                         r"containing NaN or infinity for cost vector 0"):
        p.solve(np.ones((3, 2)))
    pb = CallableProblem(lambda C: np.where(np.arange(len(C))[:, None] == 2, bad, C),
                         n_costs=2, batched=True)
    with pytest.raises(ValueError, match=r"NaN or infinity for cost vector 2"):
        pb.solve(np.ones((4, 2)))


def test_callable_nan_decision_fails_a_fit():
    from spotree import SPOTree

    X = np.random.default_rng(0).normal(size=(20, 2))
    C = np.abs(np.random.default_rng(1).normal(size=(20, 2)))
    with pytest.raises(ValueError, match="oracle nan_oracle returned a decision containing NaN"):
        SPOTree(CallableProblem(nan_oracle, n_costs=2), max_depth=1).fit(X, C)


def argmin_with_value(c):
    """A PyEPO-style oracle: (decision, objective value)."""
    w = np.eye(len(c))[np.argmin(c)]
    return w, float(c @ w)


def argmin_with_wrong_value(c):
    w = np.eye(len(c))[np.argmin(c)]
    return w, float(c @ w) + 1e-3 * (1.0 + abs(c).sum())


def test_callable_accepts_decision_value_pairs():
    C = np.random.default_rng(3).normal(size=(20, 4))
    W, z = CallableProblem(argmin_with_value, n_costs=4).solve(C)
    assert_array_equal(W, np.eye(4)[C.argmin(axis=1)])
    assert_allclose(z, C.min(axis=1), rtol=1e-14)
    pb = CallableProblem(lambda C: (np.eye(4)[C.argmin(axis=1)], C.min(axis=1)), n_costs=4,
                         batched=True)
    Wb, zb = pb.solve(C)
    assert_array_equal(Wb, W)
    # A pair of two numbers from a 2-cost oracle is a decision, not (w, z).
    p2 = CallableProblem(lambda c: (0.0, 1.0), n_costs=2)
    assert_array_equal(p2.solve(np.ones((1, 2)))[0], [[0.0, 1.0]])


def test_callable_value_disagreeing_with_decision_names_the_oracle():
    C = np.random.default_rng(4).normal(size=(6, 4))
    with pytest.raises(ValueError, match=r"The oracle argmin_with_wrong_value returned the "
                                         r"value .* for cost vector 0, but its decision's value "
                                         r"c\^T w is .*\(6 of 6 rows disagree"):
        CallableProblem(argmin_with_wrong_value, n_costs=4).solve(C)
    # The numbers as a user reads them (numpy 2's repr wrote np.float64(99.0)).
    with pytest.raises(ValueError, match=r"returned the value 99\.0 for cost vector 0, but its "
                                         r"decision's value c\^T w is 2\.0 "):
        CallableProblem(lambda c: (np.eye(2)[0], 99.0), n_costs=2).solve([[2.0, 3.0]])
    # Within the tolerance it passes; a looser tolerance accepts the offset.
    CallableProblem(argmin_with_wrong_value, n_costs=4, value_rtol=0.5).solve(C)
    # A value in the wrong sense (min value for a max problem) is caught.
    with pytest.raises(ValueError, match="in the problem's sense \\(sense='max'\\)"):
        CallableProblem(lambda c: (np.eye(4)[np.argmax(c)], -float(np.max(c)) - 1.0),
                        n_costs=4, sense="max").solve(np.abs(C) + 1.0)
    pb = CallableProblem(lambda C: (np.eye(4)[C.argmin(axis=1)], C.min(axis=1)[:-1]),
                         n_costs=4, batched=True)
    with pytest.raises(ValueError, match="returned 5 values for a batch of 6 cost vectors"):
        pb.solve(C)
    with pytest.raises(ValueError, match="returned a NaN or infinite value for cost vector 0"):
        CallableProblem(lambda c: (np.eye(4)[0], np.nan), n_costs=4).solve(C)


def test_callable_mixed_pairs_and_plain_decisions_rejected():
    calls = []

    def flaky(c):
        calls.append(1)
        w = np.eye(3)[np.argmin(c)]
        return (w, float(c @ w)) if len(calls) % 2 else w

    with pytest.raises(ValueError, match="returned a value for some cost vectors but not"):
        CallableProblem(flaky, n_costs=3).solve(np.ones((4, 3)))


def test_callable_n_jobs_solves_in_processes_with_same_result():
    rng = np.random.default_rng(5)
    V = rng.normal(size=(7, 4))
    C = rng.normal(size=(9, 4))
    W1, z1 = CallableProblem(ArgminOracle(V), n_costs=4).solve(C)
    oracle = ArgminOracle(V)
    W2, z2 = CallableProblem(oracle, n_costs=4, n_jobs=2).solve(C)
    assert_array_equal(W2, W1)
    assert_array_equal(z2, z1)
    assert oracle.calls == 0  # every call ran in a worker process, on a copy
    # A lambda travels to the workers by cloudpickle.
    W3, _ = CallableProblem(lambda c: V[np.argmin(V @ c)], n_costs=4, n_jobs=2).solve(C)
    assert_array_equal(W3, W1)
    # Validation happens on the gathered rows, naming the row.
    with pytest.raises(ValueError, match="returned a decision of shape \\(3,\\) for cost "
                                         "vector 0"):
        CallableProblem(wrong_length_oracle, n_costs=4, n_jobs=2).solve(C)


class LockedOracle:
    """An oracle holding a lock, which cannot be pickled."""

    def __init__(self):
        import threading

        self.lock = threading.Lock()

    def __call__(self, c):
        return np.eye(len(c))[np.argmin(c)]


def test_unpicklable_oracle_says_how_to_fix():
    p = CallableProblem(LockedOracle(), n_costs=3)
    assert_array_equal(p.solve([[3.0, 1.0, 2.0]])[0], [[0, 1, 0]])
    hint = (r"The oracle .*LockedOracle.* of a CallableProblem cannot be pickled \(TypeError: "
            r".*lock.*\).*Make it picklable: use a function defined at module level.*"
            r"functools.partial.*__call__.*from_pyepo")
    with pytest.raises(TypeError, match=hint):
        pickle.dumps(p)
    with pytest.raises(TypeError, match=hint):
        CallableProblem(LockedOracle(), n_costs=3, n_jobs=2).solve(np.ones((4, 3)))
    # A deep copy (scikit-learn's clone) does not pickle.
    q = copy.deepcopy(p)
    assert_array_equal(q.solve([[3.0, 1.0, 2.0]])[0], [[0, 1, 0]])


def test_lambda_and_partial_oracles_pickle():
    import functools

    V = np.eye(3)
    p = CallableProblem(lambda c: V[np.argmin(c)], n_costs=3)
    q = pickle.loads(pickle.dumps(p))
    assert_array_equal(q.solve([[3.0, 1.0, 2.0]])[0], [[0, 1, 0]])
    r = pickle.loads(pickle.dumps(CallableProblem(functools.partial(loop_argbest_row, V=V),
                                                  n_costs=3)))
    assert_array_equal(r.solve([[3.0, 1.0, 2.0]])[0], [[0, 1, 0]])


def loop_argbest_row(c, V):
    return V[loop_argbest(c[None, :], V, "min")[0]]


def test_oracle_names():
    import functools

    from spotree.problems._base import oracle_name

    assert oracle_name(simplex_lp) == "simplex_lp"
    assert oracle_name(functools.partial(simplex_lp)) == "partial(simplex_lp)"
    assert oracle_name(ArgminOracle(np.eye(2))).startswith("<")
    assert "ArgminOracle" in oracle_name(ArgminOracle(np.eye(2)))
    assert oracle_name(lambda c: c).endswith("<lambda>")


class FakePyEPOModel:
    """Duck-typed like PyEPO's optModel."""

    modelSense = 1
    num_cost = 3

    def setObj(self, c):
        self.c = np.asarray(c)

    def solve(self):
        w = np.eye(3)[np.argmin(self.c)]
        return w, float(self.c @ w)


def test_describe_not_a_problem_points_to_the_right_wrapper():
    from spotree.problems import describe_not_a_problem

    msg = describe_not_a_problem(FakePyEPOModel())
    assert msg.startswith("problem must be a spotree DecisionProblem (or None); got "
                          "FakePyEPOModel.")
    assert "spotree.problems.from_pyepo(model)" in msg
    assert "CallableProblem(oracle, n_costs=...)" in describe_not_a_problem(simplex_lp)
    assert "Use one of spotree.problems" in describe_not_a_problem(np.eye(2))
    # The list names every problem a user builds directly (Assignment was missing);
    # the others are made by from_pyepo/from_cvxpy or are the base class.
    listed = describe_not_a_problem(np.eye(2)).split("Use one of spotree.problems (")[1]
    import spotree.problems as problems
    for name in problems.__all__:
        obj = getattr(problems, name)
        if (isinstance(obj, type) and issubclass(obj, problems.DecisionProblem)
                and name not in ("DecisionProblem", "CVXPYProblem", "PyEPOProblem",
                                 "DAGShortestPath")):
            assert re.search(rf"\b{name}\b", listed), name
    assert describe_not_a_problem(3, what="estimator.problem").startswith(
        "estimator.problem must be")
    # A PyEPO model passed as an oracle points there too.
    with pytest.raises(TypeError, match="oracle must be callable; got FakePyEPOModel. It "
                                        "looks like a PyEPO optModel: use "
                                        "spotree.problems.from_pyepo"):
        CallableProblem(FakePyEPOModel(), n_costs=3)


def test_a_problem_class_instead_of_an_instance_is_named_everywhere():
    # SPOTree(problem=ShortestPath) said "got type" and to wrap a function
    # with CallableProblem (a class is callable).
    from spotree import OptimalSPOTree, SPOBoost, SPOForest, SPOPlusLinear, SPOTree
    from spotree.metrics import compare_decisions, make_spo_scorer, spo_loss
    from spotree.problems import ShortestPath, describe_not_a_problem

    rng = np.random.default_rng(0)
    X, C = rng.random((10, 2)), rng.random((10, 12))
    match = (r"^problem must be a spotree DecisionProblem instance \(or None\); got the "
             r"class ShortestPath itself\. Pass an instance: problem=ShortestPath\(\.\.\.\)\.$")
    for est in (SPOTree, OptimalSPOTree, SPOForest, SPOBoost, SPOPlusLinear):
        with pytest.raises(TypeError, match=match):
            est(problem=ShortestPath).fit(X, C)
    for call in (lambda: spo_loss(C, C, problem=ShortestPath),
                 lambda: make_spo_scorer(ShortestPath),
                 lambda: compare_decisions({"a": C}, None, C, problem=ShortestPath)):
        with pytest.raises(TypeError, match=match):
            call()
    assert describe_not_a_problem(FakePyEPOModel).endswith(
        "got the class FakePyEPOModel, not an instance.")


def test_callable_rejects_non_callable_and_bad_arguments():
    with pytest.raises(TypeError, match="oracle must be callable; got ndarray"):
        CallableProblem(np.eye(2), n_costs=2)
    for bad in [0, 1.5, "2", True]:
        with pytest.raises(ValueError, match=r"'n_jobs' parameter of CallableProblem must be "
                                             r"a nonzero int or None"):
            CallableProblem(simplex_lp, n_costs=3, n_jobs=bad)
    with pytest.raises(ValueError, match="applies to per-row oracles only"):
        CallableProblem(simplex_lp, n_costs=3, batched=True, n_jobs=2)
    for bad in [-0.1, 1.0, "x", None]:
        with pytest.raises(ValueError, match=r"'value_rtol' parameter of CallableProblem"):
            CallableProblem(simplex_lp, n_costs=3, value_rtol=bad)
    for n in [0, -1, 2.5]:
        with pytest.raises(ValueError, match="n_costs must be a positive int"):
            CallableProblem(simplex_lp, n_costs=n)
    with pytest.raises(ValueError, match="sense must be 'min' or 'max'"):
        CallableProblem(simplex_lp, n_costs=3, sense="maximize")
    with pytest.raises(ValueError, match="vertices has 2 columns but the problem has n_costs=3"):
        CallableProblem(simplex_lp, n_costs=3, vertices=np.eye(2))


def test_callable_n_costs_none_names_argument():
    with pytest.raises(ValueError, match="n_costs must be a positive int"):
        CallableProblem(simplex_lp, n_costs=None)


def test_callable_without_vertices_has_no_fast_path():
    p = CallableProblem(simplex_lp, n_costs=3)
    assert p.vertices() is None
    with pytest.raises(ValueError, match="CallableProblem has no vertex list"):
        p.solve_vertices(np.ones((1, 3)))
    with pytest.raises(NotImplementedError, match="CallableProblem cannot be written to JSON: "
                                                  "its oracle simplex_lp is code"):
        p.to_dict()


def test_empty_batch_for_every_problem():
    for p in [FiniteDecisions(np.eye(3)), CallableProblem(simplex_lp, n_costs=3),
              CallableProblem(BatchedArgminOracle(np.eye(3)), n_costs=3, batched=True)]:
        W, z = p.solve(np.empty((0, 3)))
        assert W.shape == (0, 3) and z.shape == (0,)


# ------------------------------------------------- vertices / solve_vertices
def all_problems():
    rng = np.random.default_rng(9)
    V = rng.normal(size=(6, 5))
    return [
        ShortestPath((4, 4)),
        ShortestPath((2, 3), sense="max"),
        FiniteDecisions(V),
        FiniteDecisions(V, sense="max"),
        CallableProblem(ArgminOracle(V), n_costs=5, vertices=V),
        CallableProblem(BatchedArgminOracle(V, "max"), n_costs=5, sense="max",
                        batched=True, vertices=V),
        Knapsack([[1.5, 2.0, 3.25, 1.0, 0.5], [1.0, 1.0, 2.0, 3.0, 0.0]], [4.0, 3.0]),
        Knapsack([3, 1, 4, 1, 5], 7, sense="min"),
        ShortestPath.from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3), (0, 3)], 0, 3),
    ]


@pytest.mark.parametrize("problem", all_problems(), ids=repr)
def test_solve_vertices_agrees_with_solve(problem):
    rng = np.random.default_rng(10)
    C = rng.normal(size=(100, problem.n_costs))
    W, z = problem.solve(C)
    Wv, zv, k = problem.solve_vertices(C)
    V = problem.vertices()
    assert_array_equal(Wv, V[k])
    assert_array_equal(Wv, W)  # continuous costs: unique optimum
    assert_allclose(zv, z, rtol=1e-12, atol=1e-12)
    # The explicit V argument overrides the problem's list.
    Wsub, _, ksub = problem.solve_vertices(C, V=V[:2])
    assert set(np.unique(ksub)) <= {0, 1}
    assert_array_equal(Wsub, V[:2][ksub])


@pytest.mark.parametrize("problem", all_problems(), ids=repr)
def test_vertices_cached_and_read_only(problem):
    V = problem.vertices()
    assert V is problem.vertices()
    assert V.dtype == np.float64 and V.flags.c_contiguous
    with pytest.raises(ValueError):
        V[0, 0] = 3.0


# ----------------------------------------------------- pickling and copies
def _assert_same_problem(p, q):
    assert type(p) is type(q)
    assert q.n_costs == p.n_costs and q.sense == p.sense
    C = np.random.default_rng(12).normal(size=(20, p.n_costs))
    W1, z1 = p.solve(C)
    W2, z2 = q.solve(C)
    assert_array_equal(W1, W2)
    assert_array_equal(z1, z2)
    if p.vertices() is None:
        assert q.vertices() is None
    else:
        assert_array_equal(p.vertices(), q.vertices())


@pytest.mark.parametrize("problem", all_problems() + [CallableProblem(simplex_lp, n_costs=5)],
                         ids=repr)
def test_pickle_and_deepcopy(problem):
    problem.vertices()  # populate the cache, which must not travel
    assert "_vertex_cache" in problem.__dict__
    assert "_vertex_cache" not in problem.__getstate__()
    # A solver handle (here an unpicklable lambda) is dropped on pickling.
    problem._model = lambda: None
    q = pickle.loads(pickle.dumps(problem))
    assert not hasattr(q, "_model")
    _assert_same_problem(problem, q)
    r = copy.deepcopy(problem)
    assert not hasattr(r, "_model")
    _assert_same_problem(problem, r)


# ------------------------------------------------------------- JSON specs
@pytest.mark.parametrize("problem", [
    ShortestPath((4, 4)), ShortestPath((1, 5), sense="max"), ShortestPath((3, 2)),
    FiniteDecisions(np.eye(2)), FiniteDecisions([[0.5, -1.25, 3.0], [1.0, 2.0, 0.0]], sense="max"),
], ids=repr)
def test_problem_from_dict_round_trip(problem):
    spec = json.loads(json.dumps(problem.to_dict()))
    q = problem_from_dict(spec)
    assert q.to_dict() == problem.to_dict()
    assert repr(q) == repr(problem)
    _assert_same_problem(problem, q)


@pytest.mark.parametrize("spec, match", [
    ([1, 2], "a problem spec must be a JSON object; got list"),
    ({}, "problem spec 'type' must be one of .*got None"),
    ({"type": "bogus"}, "must be one of 'shortest_path', 'finite', 'linear_program', "
                        "'knapsack', 'dag_shortest_path', 'assignment'; got 'bogus'"),
    ({"type": "finite", "sense": "min"}, "problem spec of type 'finite' is missing the key "
                                         "'decisions'"),
    ({"type": "shortest_path", "grid": [4, 4], "size": 3}, "problem spec of type "
                                                           "'shortest_path' has unexpected keys"),
    ({"type": "shortest_path", "grid": [4, 4], "sense": "fastest"},
     "key 'sense': must be one of 'min', 'max'; got 'fastest'"),
    ({"type": "shortest_path", "grid": [1, 1]}, "key 'grid': must have at least 2 nodes"),
    ({"type": "finite", "decisions": [1, 2]}, "V must be a 2-D array"),
])
def test_problem_from_dict_bad_specs(spec, match):
    with pytest.raises(ValueError, match=match):
        problem_from_dict(spec)


def test_base_class_is_abstract_about_json():
    class Tiny(DecisionProblem):
        n_costs = 2

        def _solve(self, C):
            return C * 0, C.sum(axis=1) * 0

    with pytest.raises(NotImplementedError, match="Tiny cannot be written to JSON"):
        Tiny().to_dict()
    assert Tiny().vertices() is None
    assert repr(Tiny()) == "Tiny(n_costs=2, sense='min')"


# --------------------------------------------------------- property tests
GRIDS = [(1, 3), (3, 1), (2, 2), (2, 3), (3, 3), (4, 4)]
finite = st.floats(-100.0, 100.0, allow_nan=False, allow_infinity=False,
                   allow_subnormal=False)


@st.composite
def problems(draw):
    sense = draw(st.sampled_from(["min", "max"]))
    if draw(st.booleans()):
        return ShortestPath(draw(st.sampled_from(GRIDS)), sense=sense)
    k = draw(st.integers(1, 6))
    d = draw(st.integers(1, 5))
    V = draw(arrays(np.float64, (k, d), elements=finite))
    return FiniteDecisions(V, sense=sense)


@st.composite
def problem_and_costs(draw):
    p = draw(problems())
    m = draw(st.integers(1, 6))
    C = draw(arrays(np.float64, (m, p.n_costs), elements=finite))
    return p, C


def _scale(p, C):
    """A magnitude for rounding tolerances: the largest |c|^T |v|."""
    V = p.vertices()
    return 1.0 + float((np.abs(C) @ np.abs(V).T).max())


@settings(max_examples=150, deadline=None)
@given(problem_and_costs(), st.floats(0.01, 100.0))
def test_positive_scaling_invariance(pc, a):
    p, C = pc
    W, z = p.solve(C)
    Wa, za = p.solve(a * C)
    tol = 1e-12 * a * _scale(p, C)
    assert_allclose(za, a * z, rtol=0, atol=tol)
    # Same decision up to ties: the decision for aC is optimal for C.
    assert_allclose(p.value(C, Wa), z, rtol=0, atol=tol / a + 1e-12 * _scale(p, C))
    # And where the optimum of C is clearly unique, it is the same decision.
    G = p.sign * (C @ p.vertices().T)
    gap = np.sort(G, axis=1)[:, 1] - G.min(axis=1) if G.shape[1] > 1 else np.full(len(C), np.inf)
    clear = gap > 1e-6 * _scale(p, C)
    assert_array_equal(Wa[clear], W[clear])


@settings(max_examples=150, deadline=None)
@given(problem_and_costs())
def test_optimal_value_equals_value_of_decision(pc):
    p, C = pc
    W, z = p.solve(C)
    assert W.shape == C.shape and z.shape == (len(C),)
    assert_allclose(p.value(C, W), z, rtol=0, atol=1e-12 * _scale(p, C))
    # W is feasible (one of the listed decisions) and no listed decision beats it.
    V = p.vertices()
    assert all((np.abs(V - w).max(axis=1) == 0).any() for w in W)
    G = C @ V.T
    best = G.min(axis=1) if p.sense == "min" else G.max(axis=1)
    assert_allclose(z, best, rtol=0, atol=1e-12 * _scale(p, C))


@pytest.mark.parametrize("problem", [ShortestPath((4, 4)),
                                     FiniteDecisions(np.random.default_rng(0).normal(size=(30, 24)))],
                         ids=repr)
def test_optimal_value_equals_value_of_decision_exactly(problem):
    C = np.random.default_rng(0).uniform(0.0, 1.0, size=(1000, 24))
    W, z = problem.solve(C)
    assert_array_equal(problem.value(C, W), z)


@settings(max_examples=60, deadline=None)
@given(problem_and_costs(), st.integers(0, 2**31 - 1))
def test_value_validation_errors(pc, seed):
    p, C = pc
    W, _ = p.solve(C)
    bad = W.copy()
    bad[np.random.default_rng(seed).integers(len(W)), 0] = np.nan
    with pytest.raises(ValueError, match="W contains NaN or infinity"):
        p.value(C, bad)
    with pytest.raises(ValueError, match="C and W must have the same number of rows"):
        p.value(C, np.vstack([W, W[:1]]))
    with pytest.raises(ValueError, match=f"W has {p.n_costs + 1} columns"):
        p.value(C, np.hstack([W, W[:, :1]]))
    with pytest.raises(ValueError, match="W must be a 2-D array"):
        p.value(C, W[0])
    with pytest.raises(ValueError, match=f"C has {p.n_costs + 1} columns"):
        p.value(np.hstack([C, C[:, :1]]), W)


def test_a_problems_cost_shape_hint_ends_the_shape_errors():
    # A subclass that knows a natural shape of its costs says how to flatten
    # them, in every check of costs against it (solve, solve_vertices,
    # value, fit); the base class adds nothing.
    from spotree import SPOTree

    class Grid(FiniteDecisions):
        def cost_shape_hint(self, shape, name="C"):
            return f"Flatten the 2x2 grid: {name}.reshape(len({name}), 4)."

    V = np.eye(4)
    C3 = np.zeros((3, 2, 2))
    for call in (lambda p: p.solve(C3), lambda p: p.solve_vertices(C3),
                 lambda p: p.value(C3, np.zeros((3, 4))),
                 lambda p: SPOTree(p).fit(np.zeros((3, 1)), C3)):
        with pytest.raises(ValueError, match=r"shape \(3, 2, 2\)\. Flatten the 2x2 grid: "
                                             r"C\.reshape\(len\(C\), 4\)\.$"):
            call(Grid(V))
        with pytest.raises(ValueError, match=r"shape \(3, 2, 2\)\.$"):
            call(FiniteDecisions(V))
    with pytest.raises(ValueError, match=r"n_costs=4: .*variable\. Flatten the 2x2 grid: "
                                         r"W\.reshape"):
        Grid(V).value(np.zeros((3, 4)), np.zeros((3, 2)))
    assert FiniteDecisions(V).cost_shape_hint((3, 2, 2)) is None


def test_finite_decisions_difference_basis_spans_the_differences():
    rng = np.random.default_rng(0)
    # Five decisions in a 3-dimensional affine subspace of R^6.
    V = rng.normal(size=(1, 6)) + rng.normal(size=(5, 3)) @ rng.normal(size=(3, 6))
    B = FiniteDecisions(V).difference_basis()
    assert B.shape == (6, 3)
    np.testing.assert_allclose(B.T @ B, np.eye(3), atol=1e-12)
    D = V - V[2]
    np.testing.assert_allclose(D - D @ B @ B.T, 0.0, atol=1e-12)
    assert FiniteDecisions(V[:1]).difference_basis() is None


def test_a_subclass_solve_that_returns_the_wrong_shape_or_no_n_costs_is_named():
    # A subclass returning one decision for a batch of three was broadcast
    # over the batch by the value computation: a tree fitted on it scored 0.
    from spotree import SPOTree

    class OneRow(DecisionProblem):
        def __init__(self):
            self.n_costs, self.sense = 3, "min"

        def _solve(self, C):
            return np.eye(3)[:1], np.zeros(1)

    class NaNs(OneRow):
        def _solve(self, C):
            return np.full(C.shape, np.nan), np.zeros(len(C))

    class NoCosts(DecisionProblem):
        def _solve(self, C):
            return np.eye(3)[C.argmin(axis=1)], C.min(axis=1)

    C = np.random.default_rng(0).random((3, 3))
    with pytest.raises(ValueError, match=r"OneRow\._solve returned decisions of shape \(1, 3\) "
                                         r"for 3 cost vectors of length 3"):
        OneRow().solve(C)
    with pytest.raises(ValueError, match=r"NaNs\._solve returned a decision containing NaN or "
                                         r"infinity for cost vector 0"):
        NaNs().solve(C)
    with pytest.raises(TypeError, match=r"NoCosts has no n_costs: a DecisionProblem subclass "
                                        r"sets n_costs"):
        SPOTree(NoCosts()).fit(np.random.default_rng(1).random((10, 2)), np.ones((10, 3)))


def test_a_subclass_that_overrides_solve_itself_gets_its_output_checked():
    # Overriding the public solve (not _solve) bypassed every check: a NaN
    # decision gave SPOTree NaN predictions, one row for a batch an IndexError
    # in SPOBoost, a value off c^T w shifted every regret silently.
    from spotree import SPOTree

    class Argmin(DecisionProblem):
        def __init__(self):
            self.n_costs, self.sense = 3, "min"

        def solve(self, C, *, label=None):  # a keyword of the user's own passes through
            C = np.asarray(C, dtype=float)
            k = C.argmin(axis=1)
            return np.eye(3)[k].tolist(), C[np.arange(len(C)), k]

    class NaNs(Argmin):
        def solve(self, C):
            W, z = super().solve(C)
            W = np.array(W)
            W[1, 0] = np.nan
            return W, z

    class OneRow(Argmin):
        def solve(self, C):
            W, z = super().solve(C)
            return W[:1], z[:1]

    class Offset(Argmin):
        def solve(self, C):
            W, z = super().solve(C)
            return W, z + 1.0

    rng = np.random.default_rng(0)
    X, C = rng.random((20, 2)), rng.random((20, 3))
    W, z = Argmin().solve(C, label="x")  # checked, as float arrays, and right
    assert isinstance(W, np.ndarray) and W.shape == (20, 3)
    assert_array_equal(W, np.eye(3)[C.argmin(axis=1)])
    assert_array_equal(z, C.min(axis=1))
    assert Argmin.solve.__name__ == "solve"
    for cls, match in [(NaNs, r"NaNs\.solve returned a decision containing NaN or "
                               r"infinity for cost vector 1"),
                       (OneRow, r"OneRow\.solve returned decisions of shape \(1, 3\) for 20 "
                                r"cost vectors of length 3; it must return one decision per "
                                r"cost vector, shape \(20, 3\)"),
                       (Offset, r"Offset\.solve returned the value .* for cost vector 0, "
                                r"whose decision costs c\^T w = .*; z must be c\^T w")]:
        with pytest.raises(ValueError, match=match):
            cls().solve(C)
        with pytest.raises(ValueError, match=match):
            SPOTree(cls(), max_depth=1).fit(X, C)
    # A class of spotree's own is not wrapped.
    assert FiniteDecisions.solve is DecisionProblem.solve


@pytest.mark.parametrize("bad", [
    lambda C: np.eye(3)[C.argmin(axis=1)],                      # the decisions alone
    lambda C: (np.eye(3)[C.argmin(axis=1)], C.min(axis=1), 0),  # a triple
    lambda C: ([["a"] * 3] * len(C), C.min(axis=1)),            # not numeric
    lambda C: (None, C.min(axis=1)),
    lambda C: (np.eye(3)[:1], C.min(axis=1)[:1]),               # one row for the batch
    lambda C: (np.eye(3)[C.argmin(axis=1)][:, :2], C.min(axis=1)),
    lambda C: (np.where(np.arange(3) == 1, np.nan, np.eye(3)[C.argmin(axis=1)]),
               C.min(axis=1)),
    lambda C: (np.full(C.shape, np.inf), C.min(axis=1)),
])
def test_solve_and_an_overriding_solve_refuse_a_bad_pair_alike(bad):
    # An overridden solve (8f9c1c3) was checked by a copy of _solve's checks
    # whose messages differed (", it must return one decision per cost vector"
    # against "... per row", "a decision or value" against "a decision"), and
    # a non-numeric _solve output raised numpy's own error unnamed.
    class Via_solve(DecisionProblem):
        def __init__(self):
            self.n_costs, self.sense = 3, "min"

        def _solve(self, C):
            return bad(C)

    class Viasolve(Via_solve):
        def solve(self, C):
            return bad(np.asarray(C, dtype=float))

    C = np.random.default_rng(0).random((4, 3))
    messages = []
    for cls in (Via_solve, Viasolve):
        with pytest.raises(ValueError) as info:
            cls().solve(C)
        messages.append(str(info.value))
    assert messages[0].startswith("Via_solve._solve ")
    assert messages[1].startswith("Viasolve.solve ")
    assert messages[0][len("Via_solve._solve"):] == messages[1][len("Viasolve.solve"):]
    assert "(4, 3)" in messages[0] or "NaN or infinity for cost vector 0" in messages[0]


def test_an_overriding_solve_with_bad_values_is_named():
    class Values(DecisionProblem):
        def __init__(self, z):
            self.n_costs, self.sense, self.z = 3, "min", z

        def solve(self, C):
            C = np.asarray(C, dtype=float)
            return np.eye(3)[C.argmin(axis=1)], self.z

    C = np.random.default_rng(0).random((4, 3))
    with pytest.raises(ValueError, match=r"Values\.solve returned values of shape \(3,\); it "
                                         r"must return one value c\^T w per cost vector, shape "
                                         r"\(4,\)"):
        Values(C.min(axis=1)[:3]).solve(C)
    with pytest.raises(ValueError, match=r"Values\.solve returned a value that is NaN or "
                                         r"infinite for cost vector 2"):
        Values(np.where(np.arange(4) == 2, np.nan, C.min(axis=1))).solve(C)


@pytest.mark.parametrize("V, match", [
    (np.eye(4), r"shape \(4, 4\); expected \(K, 3\)"),
    (np.eye(3)[:, :2], r"shape \(3, 2\); expected \(K, 3\)"),
    (np.zeros((0, 3)), r"shape \(0, 3\); expected \(K, 3\) with K >= 1"),
    (np.array([[np.nan, 0.0, 0.0]]), r"NaN or infinity"),
])
def test_a_subclass_vertex_list_of_the_wrong_shape_is_named(V, match):
    # It failed deep in the split search: a matmul error, a reduction over
    # an empty list, or NaN decisions reported as bad predictions.
    from spotree import SPOTree

    class Listed(DecisionProblem):
        def __init__(self):
            self.n_costs, self.sense = 3, "min"

        def _solve(self, C):
            return np.eye(3)[C.argmin(axis=1)], C.min(axis=1)

        def _vertices(self):
            return V

    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"Listed\._vertices returned .*" + match):
        SPOTree(Listed(), max_depth=2).fit(rng.random((20, 2)), rng.random((20, 3)))


def test_solve_vertices_takes_a_list_of_candidates_and_names_a_bad_one():
    # V given as a list of lists crashed ("'list' object has no attribute
    # 'shape'"); a wrong width or NaN gave numpy's matmul message or NaN values.
    p = ShortestPath((2, 2))
    C = [[1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0]]
    V = [[1, 0, 0, 1], [0, 1, 1, 0]]  # the grid's two paths
    W, z, k = p.solve_vertices(C, V)
    # By hand: path 0 costs 1 + 4 and 4 + 1, path 1 costs 2 + 3 and 3 + 2: ties, first wins.
    np.testing.assert_array_equal(k, [0, 0])
    np.testing.assert_array_equal(z, [5.0, 5.0])
    np.testing.assert_array_equal(W, [V[0], V[0]])
    with pytest.raises(ValueError, match="V has 3 columns but the problem has n_costs=4"):
        p.solve_vertices(C, [[1, 0, 0]])
    with pytest.raises(ValueError, match="V contains NaN"):
        p.solve_vertices(C, [[np.nan, 0, 0, 1]])
    with pytest.raises(ValueError, match="V is empty"):
        p.solve_vertices(C, np.zeros((0, 4)))


@pytest.mark.parametrize("make", [
    lambda: ShortestPath((3, 3)),
    lambda: ShortestPath.from_edges(5, [(0, 1), (0, 2), (1, 3), (2, 3), (1, 4), (3, 4), (2, 4)],
                                    0, 4),
    lambda: Knapsack([[1.0, 1.0, 1.0, 2.0]], [2.0]),
    lambda: Knapsack([[1.0, 1.0, 1.0, 2.0]], [2.0], method="bb"),
])
def test_costs_near_the_largest_float_are_solved_exactly(make):
    # Sums of costs of order 1e308 overflowed: the DAG solver found no path
    # and returned a decision of zeros (value 0), the others broke ties among
    # infinite values arbitrarily. The reference enumerates the vertices on
    # the costs divided by 2**20 (exact), where no sum overflows.
    problem = make()
    V = problem.vertices()
    rng = np.random.default_rng(0)
    C = rng.uniform(0.3, 1.0, size=(40, problem.n_costs)) * 1.7e308
    C[::2] *= -1
    best = (C / 2.0 ** 20) @ V.T
    ref = best.max(axis=1) if problem.sense == "max" else best.min(axis=1)
    for W, _ in (problem.solve(C), problem.solve_vertices(C)[:2]):
        assert (np.abs(W[:, None, :] - V[None]).sum(axis=2) == 0).any(axis=1).all()
        assert_allclose(np.einsum("ij,ij->i", C / 2.0 ** 20, W), ref, rtol=1e-12)


def test_large_vertices_times_moderate_costs_are_compared_without_overflow():
    # No cost is near the largest float (1e290), but the vertices' entries
    # (1e30) take the values past it: the rescaling must count the
    # vertices' size, or every value is inf and the first vertex wins the
    # tie. Reference: the same products on the costs divided by 2**200.
    V = np.array([[2e30, 0.0, 0.0], [0.0, 1e30, 0.0], [0.0, 0.0, 3e30]])
    C = np.array([[1e290, 1.5e290, 0.6e290], [1e290, 3e290, 0.7e290]])
    ref = ((C / 2.0 ** 200) @ V.T).argmin(axis=1)
    assert_array_equal(ref, [1, 0])  # by hand: 1.5e320 < 1.8e320 < 2e320; 2e320 < 2.1e320
    for sense, sign in (("min", 1.0), ("max", -1.0)):
        fd = FiniteDecisions(V, sense=sense)
        assert_array_equal(fd.solve_vertices(sign * C)[2], ref)
        assert_array_equal(fd.solve(sign * C)[0], V[ref])


def test_finite_describe_decision_names_only_a_row_equal_to_the_vector():
    # A vector equal to no row was named after the nearest one: the zeros of a
    # boosting tree read "option 0", a half-half mix "option 0" too.
    V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    fd = FiniteDecisions(V)
    assert [fd.describe_decision(v) for v in V] == ["option 0", "option 1", "option 2"]
    assert fd.describe_decision([0.0, 0.0, 0.0]) == "w = 0 (no option)"
    assert fd.describe_decision([0.5, 0.5, 0.0]) == "w = {0: 0.5, 1: 0.5} (no option)"
    # A row read back from a file in its last bit is still that row.
    assert fd.describe_decision([0.0, 1.0 + 1e-15, 0.0]) == "option 1"


@pytest.mark.parametrize("sense", ["minimize", "Min", "MAX", None])
def test_a_subclass_sense_other_than_min_or_max_is_refused(sense):
    # Every part of spotree reads sense == "min" as minimization and anything
    # else as maximization: "minimize" fitted and scored as a maximization.
    from spotree import SPOTree
    from spotree.metrics import normalized_spo_loss

    class Cheapest(DecisionProblem):
        def __init__(self, sense):
            self.n_costs, self.sense = 3, sense

        def _solve(self, C):
            return np.eye(3)[C.argmin(axis=1)], None

    rng = np.random.default_rng(0)
    X, C = rng.random((20, 2)), rng.random((20, 3))
    p = Cheapest(sense)
    with pytest.raises(ValueError, match=r"Cheapest\.sense must be 'min' or 'max'; got "
                                         + re.escape(repr(sense))):
        SPOTree(p, max_depth=1).fit(X, C)
    with pytest.raises(ValueError, match=r"Cheapest\.sense must be 'min' or 'max'"):
        normalized_spo_loss(C, C, problem=p)
    # The same class with sense="min" fits, and picks the cheapest option of
    # the leaf's mean costs (a hand computation: 20 rows cannot be split into
    # leaves of 11, so the tree is one leaf).
    tree = SPOTree(Cheapest("min"), max_depth=1, min_samples_leaf=11).fit(X, C)
    assert_array_equal(tree.predict_decision(X[:1])[0], np.eye(3)[np.argmin(C.mean(axis=0))])


@pytest.mark.parametrize("n_costs", ["3", 3.0, 0, True])
def test_a_subclass_n_costs_that_is_not_a_positive_int_is_refused(n_costs):
    # n_costs="3" got "C has 3 columns but the problem has n_costs=3".
    from spotree import SPOTree

    class Odd(DecisionProblem):
        def __init__(self):
            self.n_costs, self.sense = n_costs, "min"

        def _solve(self, C):
            return np.eye(3)[C.argmin(axis=1)], None

    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"Odd\.n_costs must be a positive int .*got "
                                         + re.escape(repr(n_costs))):
        SPOTree(Odd(), max_depth=1).fit(rng.random((10, 2)), rng.random((10, 3)))


@pytest.mark.parametrize("m", [1, 2, 3])
def test_a_subclass_solve_that_returns_decisions_alone_is_named(m):
    # Unpacking the decisions as the pair (W, z) gave "too many values to
    # unpack" (m=3), "not enough values" (m=1), or took row 0 for W (m=2).
    class OnlyW(DecisionProblem):
        def __init__(self):
            self.n_costs, self.sense = 3, "min"

        def _solve(self, C):
            return np.eye(3)[C.argmin(axis=1)]

    C = np.random.default_rng(0).random((m, 3))
    with pytest.raises(ValueError, match=r"OnlyW\._solve returned an array of shape "
                                         rf"\({m}, 3\); it must return a pair \(W, z\)"):
        OnlyW().solve(C)


def _cheapest_in_place(c):
    c *= -1.0  # works on its argument: maximize -c
    return np.eye(c.shape[-1])[np.argmax(c, axis=-1)]


@pytest.mark.parametrize("batched", [False, True])
def test_an_oracle_that_works_on_its_argument_in_place_leaves_the_costs_alone(batched):
    # The oracle got a view of the caller's costs: c *= -1 negated them, and
    # the values c^T w were computed from the negated costs (-min instead of min).
    C = np.random.default_rng(0).random((5, 3))
    C0 = C.copy()
    W, z = CallableProblem(_cheapest_in_place, 3, batched=batched).solve(C)
    assert_array_equal(C, C0)
    assert_array_equal(W, np.eye(3)[[loop_argbest(c[None], np.eye(3), "min")[0] for c in C0]])
    assert_array_equal(z, C0.min(axis=1))


def test_a_subclass_solve_that_works_on_its_argument_in_place_leaves_the_costs_alone():
    class InPlace(DecisionProblem):
        def __init__(self):
            self.n_costs, self.sense = 3, "min"

        def _solve(self, C):
            return _cheapest_in_place(C), None

    C = np.random.default_rng(1).random((5, 3))
    C0 = C.copy()
    W, z = InPlace().solve(C)
    assert_array_equal(C, C0)
    assert_array_equal(z, C0.min(axis=1))


class _SolverFailed(Exception):
    pass


def _fails_on_large_first_cost(c):
    if c[0] > 10:
        raise _SolverFailed("no solution")
    return np.eye(3)[np.argmin(c)]


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_an_oracle_error_keeps_its_type_and_names_the_oracle_and_the_row(n_jobs):
    # The solver's bare error said neither which oracle nor which cost vector.
    C = np.ones((4, 3))
    C[3, 0] = 11.0
    problem = CallableProblem(_fails_on_large_first_cost, 3, n_jobs=n_jobs)
    # n_jobs=2 on threads: the same chunks (rows 2 and 3 in the second) as
    # in processes, without starting any (seconds).
    with joblib.parallel_backend("threading"):
        with pytest.raises(_SolverFailed, match="no solution") as info:
            problem.solve(C)
    assert info.value.__notes__ == [
        "(raised by the oracle _fails_on_large_first_cost of a CallableProblem for cost "
        "vector 3 of a batch of 4: c = [11.0, 1.0, 1.0])"]

    def batched(C):
        raise _SolverFailed("no solution")

    with pytest.raises(_SolverFailed) as info:
        CallableProblem(batched, 3, batched=True).solve(C)
    assert "batched oracle " in info.value.__notes__[0]
    assert "for a batch of 4 cost vectors" in info.value.__notes__[0]


@pytest.mark.parametrize("batched", [False, True])
def test_an_oracle_pair_with_a_status_for_its_value_is_named_as_such(batched):
    # (w, 'optimal') was refused with "it must return a decision vector of
    # floats", though the decision was fine and the status was the problem.
    def per_row(c):
        return np.eye(3)[np.argmin(c)], "optimal"

    def per_batch(C):
        return np.eye(3)[np.argmin(C, axis=1)], ["optimal"] * len(C)

    oracle = per_batch if batched else per_row
    with pytest.raises(ValueError, match=r"returned a pair whose second item"
                                         + ("" if batched else " for cost vector 0")
                                         + r" is not (numbers|a number) \((list|str): .*optimal"
                                         r".*objective value"):
        CallableProblem(oracle, 3, batched=batched).solve(np.ones((2, 3)))


def test_a_subclass_holding_a_lock_is_cloned_sharing_it():
    # scikit-learn's clone deep-copies the problem: SPOForest (which clones
    # its trees) and GridSearchCV failed with "cannot pickle
    # '_thread.lock' object" on a subclass keeping a lock or solver handle.
    import threading

    from sklearn.base import clone

    from spotree import SPOForest

    class Locked(DecisionProblem):
        def __init__(self):
            self.n_costs, self.sense = 3, "min"
            self.lock = threading.Lock()
            self.V = np.eye(3)

        def _solve(self, C):
            with self.lock:
                return self.V[C.argmin(axis=1)], None

    p = Locked()
    q = clone(SPOForest(p)).problem
    assert q is not p and q.lock is p.lock  # shared, as CallableProblem shares an oracle
    assert q.V is not p.V and np.array_equal(q.V, p.V)  # plain data is copied
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    C = rng.random((40, 3)) + X[:, :1] * [1.0, -1.0, 0.0]
    kw = dict(n_estimators=3, max_depth=2, min_samples_leaf=5, random_state=0)
    got = SPOForest(p, **kw).fit(X, C).predict_decision(X)
    # The same choice among three options, as a built-in problem.
    want = SPOForest(FiniteDecisions(np.eye(3)), **kw).fit(X, C).predict_decision(X)
    assert_array_equal(got, want)


def test_solve_makes_no_second_array_of_decisions():
    # solve turned -0. into 0. by W = W + 0.0: a second (m, d) array next to
    # the decisions (peak 13.1 MB for 6.4 MB of decisions here). The decisions
    # of spotree's own problems are now changed in place.
    problem = ShortestPath((5, 5))
    C = np.random.default_rng(0).random((20000, problem.n_costs))
    problem.solve(C[:5])  # compile first
    (W, _), _, peak = traced_peak(lambda: problem.solve(C))
    assert peak < 1.5 * W.nbytes, (peak, W.nbytes)


@pytest.mark.parametrize("writeable", [True, False])
def test_solve_turns_negative_zeros_of_an_oracles_kept_array_without_changing_it(writeable):
    # A batched oracle may return an array it keeps (read-only or not): solve
    # returns +0. for its -0. entries, and the oracle's array keeps its own.
    kept = np.array([[-0.0, 1.0], [1.0, -0.0]])
    kept.flags.writeable = writeable
    problem = CallableProblem(lambda C: kept, n_costs=2, batched=True)
    W, z = problem.solve([[3.0, 1.0], [1.0, 3.0]])
    assert not np.signbit(W).any() and W.tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert np.signbit(kept).tolist() == [[True, False], [False, True]]
    assert z.tolist() == [1.0, 1.0]
