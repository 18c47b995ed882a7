"""Shortest paths written as linear programs: ``ShortestPath.from_incidence`` and the
recognition of ``LinearProgram(A_eq=incidence, b_eq=supply, bounds=(0, 1))``.

References are independent of the code under test: every simple source-target path
enumerated by plain recursion, and scipy's ``linprog`` (HiGHS) on the same LP.
"""

import os
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import linprog

from spotree.problems import LinearProgram, ShortestPath
from spotree.problems._compiled import KIND_DAG, KIND_LABEL_SETTING



def _realdata():
    """``../shared/realdata`` beside the repository (or beside a folder above it)."""
    folder = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for _ in range(3):
        candidate = os.path.join(os.path.dirname(folder), "shared", "realdata")
        if os.path.isdir(candidate):
            return candidate
        folder = os.path.dirname(folder)
    return candidate


UBER = os.path.join(_realdata(), "uber_movement_la_shortest_path")


# ---------------------------------------------------------------- references
def incidence(n_nodes, edges):
    A = np.zeros((n_nodes, len(edges)))
    for e, (t, h) in enumerate(edges):
        A[t, e] -= 1.0
        A[h, e] += 1.0
    return A


def supply(n_nodes, s, t):
    b = np.zeros(n_nodes)
    b[s], b[t] = -1.0, 1.0
    return b


def simple_paths(n_edges, edges, source, target):
    """Every simple source-target path as a 0/1 edge vector (plain recursion)."""
    out = []

    def walk(v, used, seen):
        if v == target:
            w = np.zeros(n_edges)
            w[used] = 1.0
            out.append(w)
            return
        for e, (t, h) in enumerate(edges):
            if t == v and h not in seen:
                walk(h, used + [e], seen | {h})

    walk(source, [], {source})
    return np.array(out)


def linprog_values(A, b, C, sense="min"):
    sign = 1.0 if sense == "min" else -1.0
    out = []
    for c in C:
        res = linprog(sign * c, A_eq=A, b_eq=b, bounds=(0, 1), method="highs")
        assert res.status == 0
        out.append(sign * res.fun)
    return np.array(out)


def random_graph(rng, n_nodes, p_edge, acyclic):
    """Random directed graph; acyclic ones follow a shuffled node order."""
    perm = rng.permutation(n_nodes)
    edges = []
    for a in range(n_nodes):
        for b in range(n_nodes):
            if a == b or (acyclic and b < a):
                continue
            if rng.random() < p_edge:
                edges.append((int(perm[a]), int(perm[b])))
    order = rng.permutation(len(edges))
    return [edges[k] for k in order], int(perm[0]), int(perm[-1])


def graph_cases(n_cases, seed, acyclic, max_nodes=7):
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < n_cases:
        n = int(rng.integers(3, max_nodes + 1))
        edges, s, t = random_graph(rng, n, rng.uniform(0.25, 0.6), acyclic)
        if not edges:
            continue
        P = simple_paths(len(edges), edges, s, t)
        if len(P):
            cases.append((n, edges, s, t, P))
    return cases


# ------------------------------------------------------------- from_incidence
@pytest.mark.parametrize("sense", ["min", "max"])
def test_from_incidence_equals_path_enumeration(sense):
    rng = np.random.default_rng(1)
    for n, edges, s, t, P in graph_cases(25, 2, acyclic=True):
        A, b = incidence(n, edges), supply(n, s, t)
        if rng.random() < 0.5:
            A, b = -A, -b  # the other sign convention: the same feasible set
        sp = ShortestPath.from_incidence(A, b, sense=sense)
        C = rng.normal(size=(10, len(edges)))
        W, z = sp.solve(C)
        G = C @ P.T
        k = G.argmin(axis=1) if sense == "min" else G.argmax(axis=1)
        assert_allclose(z, G[np.arange(10), k], rtol=1e-12, atol=1e-12)
        assert_array_equal(W, P[k])
        assert sp.n_paths() == len(P)


def test_from_incidence_docstring_graph_and_sparse_input():
    import scipy.sparse as sparse

    edges = [(0, 1), (0, 2), (1, 3), (2, 3)]
    A = incidence(4, edges)
    sp = ShortestPath.from_incidence(sparse.csr_matrix(A), supply(4, 0, 3))
    assert sp.edges() == edges and (sp.source, sp.target, sp.n_nodes) == (0, 3, 4)
    # The caller's CSC matrix (float64, so converting it made no copy) keeps
    # its explicit zero: reading it used to drop the zero in place.
    rows, cols = np.nonzero(A)
    M = sparse.csc_matrix((np.r_[A[rows, cols], 0.0], (np.r_[rows, 3], np.r_[cols, 0])),
                          shape=A.shape)
    assert M.nnz == 9 and M.dtype == np.float64
    assert ShortestPath.from_incidence(M, supply(4, 0, 3)).edges() == edges
    assert M.nnz == 9 and (M.toarray() == A).all()


def test_one_entry_column_is_an_edge_of_the_left_out_node():
    # Drop the target's row: its edges keep only their -1 at the tail, and b
    # keeps only the source. The left-out node comes back as node n - 1.
    rng = np.random.default_rng(3)
    for n, edges, s, t, P in graph_cases(15, 4, acyclic=True):
        A, b = incidence(n, edges), supply(n, s, t)
        keep = np.arange(n) != t
        A_cut, b_cut = A[keep], b[keep]
        sp = ShortestPath.from_incidence(A_cut, b_cut)
        assert sp.n_nodes == n and sp.target == n - 1
        C = rng.normal(size=(8, len(edges)))
        W, z = sp.solve(C)
        G = C @ P.T
        assert_allclose(z, G.min(axis=1), rtol=1e-12, atol=1e-12)
        assert_array_equal(W, P[G.argmin(axis=1)])
        lp = LinearProgram(A_eq=A_cut, b_eq=b_cut, bounds=(0, 1))
        assert lp.compiled_oracle() is not None
        assert_allclose(lp.solve(C)[1], linprog_values(A_cut, b_cut, C), rtol=1e-9,
                        atol=1e-9)


def test_dangling_edge_as_in_the_uber_network_is_never_used():
    # A column with only a +1: an edge into node 2 from outside the network.
    # All rows add up to w_dangling = sum(b) = 0, so the LP never uses it,
    # however negative its cost; the path solver must agree.
    edges = [(0, 1), (1, 3), (0, 2), (2, 3)]
    A = np.hstack([incidence(4, edges), np.array([[0.0], [0.0], [1.0], [0.0]])])
    b = supply(4, 0, 3)
    C = np.array([[1.0, 1.0, 5.0, 5.0, -100.0], [3.0, 3.0, 1.0, 1.0, 0.0]])
    lp = LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1))
    W, z = lp.solve(C)
    assert_allclose(z, linprog_values(A, b, C), rtol=1e-12)
    assert_array_equal(W, [[1, 1, 0, 0, 0], [0, 0, 1, 1, 0]])
    assert_array_equal(ShortestPath.from_incidence(A, b).solve(C)[0], W)


@pytest.mark.parametrize("A, b, match", [
    ([[-1.0, 2.0], [1.0, -2.0]], [-1, 1], "-1, 0 or 1"),
    ([[-1.0, -1.0], [-1.0, 1.0]], [-1, 1], "column 0 of 'A' is not an edge"),
    ([[-1.0, 0.0], [1.0, 0.0]], [-1, 1], "column 1 of 'A' is not an edge"),
    ([[-1.0], [1.0]], [-1, 1, 0], "'b' has 3 entries"),
    ([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]], [-1, 1, 1], "one -1 \\(the source\\)"),
    ([[-1.0, 1.0], [1.0, -1.0]], [-1, 1], "has a cycle \\(.*\\); solve it as LinearProgram"),
])
def test_from_incidence_bad_input(A, b, match):
    with pytest.raises(ValueError, match=match):
        ShortestPath.from_incidence(np.array(A), np.array(b))


# -------------------------------------------------- LinearProgram recognized
@pytest.mark.parametrize("sense", ["min", "max"])
def test_acyclic_network_lp_equals_enumeration_and_linprog(sense):
    rng = np.random.default_rng(5)
    for n, edges, s, t, P in graph_cases(12, 6, acyclic=True):
        A, b = incidence(n, edges), supply(n, s, t)
        lp = LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1), sense=sense)
        assert lp.compiled_oracle().kind == KIND_DAG
        C = rng.normal(size=(6, len(edges)))
        W, z = lp.solve(C)
        G = C @ P.T
        k = G.argmin(axis=1) if sense == "min" else G.argmax(axis=1)
        assert_array_equal(W, P[k])
        assert_allclose(z, linprog_values(A, b, C, sense), rtol=1e-9, atol=1e-9)
        assert {tuple(v) for v in lp.vertices()} == {tuple(p) for p in P}


def test_cyclic_network_nonnegative_costs_by_label_setting():
    rng = np.random.default_rng(7)
    n_cyclic = 0
    for n, edges, s, t, P in graph_cases(25, 8, acyclic=False):
        A, b = incidence(n, edges), supply(n, s, t)
        lp = LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1))
        oracle = lp.compiled_oracle()
        if oracle.kind != KIND_LABEL_SETTING:
            continue
        n_cyclic += 1
        C = rng.uniform(0.0, 3.0, size=(8, len(edges)))
        W, z = lp.solve(C)
        G = C @ P.T
        # Non-negative continuous costs: the unique optimum is a simple path.
        assert_array_equal(W, P[G.argmin(axis=1)])
        assert_allclose(z, linprog_values(A, b, C), rtol=1e-9, atol=1e-12)
    assert n_cyclic >= 15


def test_label_setting_tie_rule_on_positive_integer_costs():
    # Ties as the DAG solver: walking back from the target, each node is
    # entered through the lowest-index in-edge that reaches it at its best
    # value (values here by brute force over simple paths).
    rng = np.random.default_rng(9)
    n_tied = 0
    for n, edges, s, t, P in graph_cases(20, 10, acyclic=False):
        lp = LinearProgram(A_eq=incidence(n, edges), b_eq=supply(n, s, t), bounds=(0, 1))
        if lp.compiled_oracle().kind != KIND_LABEL_SETTING:
            continue
        C = rng.integers(1, 3, size=(6, len(edges))).astype(float)
        W, _ = lp.solve(C)
        for c, w in zip(C, W):
            best = {s: 0.0}
            for v in range(n):
                Pv = simple_paths(len(edges), edges, s, v) if v != s else []
                if len(Pv):
                    best[v] = float((Pv @ c).min())
            expect = np.zeros(len(edges))
            v = t
            while v != s:
                e = min(e for e, (a, h) in enumerate(edges)
                        if h == v and a in best and best[a] + c[e] == best[v])
                expect[e] = 1.0
                v = edges[e][0]
            n_tied += int((simple_paths(len(edges), edges, s, t) @ c == best[t]).sum() > 1)
            assert_array_equal(w, expect)
    assert n_tied >= 10


def test_cyclic_network_negative_costs_go_to_highs():
    # 0 -> 1 -> 3 with a cycle 1 -> 2 -> 1: a negative cost on the cycle makes
    # the LP send flow around it, below every simple path's cost.
    edges = [(0, 1), (1, 3), (1, 2), (2, 1), (0, 3)]
    A, b = incidence(4, edges), supply(4, 0, 3)
    lp = LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1))
    assert lp.compiled_oracle().kind == KIND_LABEL_SETTING
    C = np.array([[1.0, 1.0, -2.0, 1.0, 5.0],     # cycle of cost -1: the LP uses it
                  [1.0, 1.0, 1.0, 1.0, 5.0],      # non-negative: a path
                  [-1.0, 3.0, 1.0, 1.0, 1.5]])    # negative on a path edge
    W, z = lp.solve(C)
    ref = linprog_values(A, b, C)
    assert_allclose(z, ref, rtol=1e-9)
    P = simple_paths(len(edges), edges, 0, 3)
    assert ref[0] < (P @ C[0]).min() - 0.5
    assert_array_equal(W[0], [1, 1, 1, 1, 0])


def test_negative_costs_off_every_path_and_cycle_stay_compiled():
    # Edge 3 leaves the target towards a dead end: no flow ever uses it, so
    # its negative cost must not stop the compiled solve (nor change values).
    edges = [(0, 1), (1, 0), (1, 2), (2, 3), (0, 2)]
    A, b = incidence(4, edges), supply(4, 0, 2)
    lp = LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1))
    C = np.array([[1.0, 1.0, 1.0, -7.0, 3.0]])
    from spotree.problems._compiled import solve_min

    o = lp.compiled_oracle()
    z = solve_min(o.kind, o.ints, o.floats, C[0], np.zeros(0), np.empty(o.work_size),
                  np.empty(o.iwork_size, dtype=np.int64))
    assert z == 2.0
    C[0, 1] = -0.5  # now on a cycle: the compiled solver gives up
    z = solve_min(o.kind, o.ints, o.floats, C[0], np.zeros(0), np.empty(o.work_size),
                  np.empty(o.iwork_size, dtype=np.int64))
    assert np.isnan(z)
    assert_allclose(lp.solve(C)[1], linprog_values(A, b, C), rtol=1e-9)


def test_negative_cycle_off_every_path_goes_to_highs():
    # Cycles that no source-target path touches still carry flow in the LP
    # (a circulation satisfies A w = 0 anywhere): 3 <-> 4 hangs off node 1
    # and cannot reach the target 2; 5 <-> 6 is not even reachable. A
    # negative cost on either must stop the compiled (Dijkstra) solve.
    edges = [(0, 1), (1, 2), (0, 2), (1, 3), (3, 4), (4, 3), (5, 6), (6, 5)]
    A, b = incidence(7, edges), supply(7, 0, 2)
    lp = LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1))
    assert lp.compiled_oracle().kind == KIND_LABEL_SETTING
    C = np.array([[1.0, 1.0, 3.0, 1.0, -1.0, -1.0, 1.0, 1.0],   # cycle 3-4: -2
                  [1.0, 1.0, 3.0, 1.0, 1.0, 1.0, -2.0, 1.0],    # cycle 5-6: -1
                  [1.0, 1.0, 3.0, 1.0, 1.0, 1.0, 1.0, 1.0]])    # a path: 2
    W, z = lp.solve(C)
    assert_allclose(z, linprog_values(A, b, C), rtol=1e-9)
    assert_allclose(z, [0.0, 1.0, 2.0])  # by hand: the path 0-1-2 plus the cycle
    assert_allclose(A @ W.T, np.tile(b[:, None], 3))


def test_edge_bounds_below_one_are_not_a_path_problem():
    # With every edge capped at 0.5 the unit of flow must split over the two
    # routes: no single path is feasible, so no path solver may answer.
    edges = [(0, 1), (1, 3), (0, 2), (2, 3)]
    A, b = incidence(4, edges), supply(4, 0, 3)
    lp = LinearProgram(A_eq=A, b_eq=b, bounds=(0, 0.5))
    assert lp.compiled_oracle() is None
    C = np.array([[1.0, 1.0, 3.0, 3.0], [2.0, -1.0, 0.0, 0.5]])
    W, z = lp.solve(C)
    ref = [linprog(c, A_eq=A, b_eq=b, bounds=(0, 0.5), method="highs").fun for c in C]
    assert_allclose(z, ref, rtol=1e-9)
    assert_allclose(z, [4.0, 0.75])  # by hand: half of each route's cost
    assert_allclose(W, 0.5)


@pytest.mark.parametrize("kwargs", [
    dict(bounds=(0, 0.5)),
    dict(bounds=(-1, 1)),
    dict(bounds=(0, 1), A_ub=np.ones((1, 4)), b_ub=[2.0]),
])
def test_not_a_path_problem_is_left_to_highs(kwargs):
    edges = [(0, 1), (1, 3), (0, 2), (2, 3)]
    A, b = incidence(4, edges), supply(4, 0, 3)
    if kwargs["bounds"] == (0, 0.5):
        b = b * 0.5
    lp = LinearProgram(A_eq=A, b_eq=b, **kwargs)
    assert lp.compiled_oracle() is None


def test_two_sources_or_non_unit_entries_are_not_networks():
    edges = [(0, 2), (1, 2), (2, 3)]
    A = incidence(4, edges)
    lp = LinearProgram(A_eq=A, b_eq=[-1, -1, 0, 2], bounds=(0, 2))
    assert lp.compiled_oracle() is None
    lp = LinearProgram(A_eq=2 * A, b_eq=2 * supply(4, 0, 3), bounds=(0, 1))
    assert lp.compiled_oracle() is None


def test_network_lp_pickles_and_keeps_its_api():
    edges = [(0, 1), (1, 3), (0, 2), (2, 3)]
    lp = LinearProgram(A_eq=incidence(4, edges), b_eq=supply(4, 0, 3), bounds=(0, 1),
                       variable_names=["a", "b", "c", "d"])
    C = np.array([[1.0, 1.0, 0.5, 2.0]])
    W, _ = lp.solve(C)
    other = pickle.loads(pickle.dumps(lp))
    assert_array_equal(other.solve(C)[0], W)
    assert other.variable_names == ["a", "b", "c", "d"]
    assert other.to_dict() == lp.to_dict()
    assert "_model_network" not in lp.__getstate__()


def test_tree_on_network_lp_equals_tree_on_from_edges():
    from spotree import SPOTree

    rng = np.random.default_rng(11)
    n, edges, s, t, P = graph_cases(1, 12, acyclic=True, max_nodes=8)[0]
    while len(P) < 4:
        n, edges, s, t, P = graph_cases(1, int(rng.integers(100)), acyclic=True,
                                        max_nodes=8)[0]
    X = rng.normal(size=(200, 3))
    C = np.abs(X[:, :1] * rng.normal(size=(1, len(edges))) + rng.normal(size=(200, len(edges))))
    lp = LinearProgram(A_eq=incidence(n, edges), b_eq=supply(n, s, t), bounds=(0, 1))
    dag = ShortestPath.from_edges(n, edges, s, t)
    expect = SPOTree(dag, max_depth=3, min_samples_leaf=10).fit(X, C)
    for vertex_list in (True, False):
        if not vertex_list:
            lp._vertex_cache = None  # no vertex list: the compiled solver path
        got = SPOTree(lp, max_depth=3, min_samples_leaf=10).fit(X, C)
        assert_allclose(got.predict(X), expect.predict(X), rtol=1e-12)
        assert_array_equal(got.predict_decision(X), expect.predict_decision(X))


@pytest.mark.skipif(not os.path.exists(os.path.join(UBER, "A_node_edge_incidence.csv")),
                    reason="the Uber Movement data are not here")
def test_uber_network_values_equal_linprog():
    A = np.loadtxt(os.path.join(UBER, "A_node_edge_incidence.csv"), delimiter=",", skiprows=1)
    b = np.loadtxt(os.path.join(UBER, "b_supply.csv"), delimiter=",", skiprows=1)
    C = np.loadtxt(os.path.join(UBER, "Y_halfyear.csv"), delimiter=",", skiprows=1)[:40]
    lp = LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1))
    assert lp.compiled_oracle().kind == KIND_DAG  # the dangling column 84 leaves it acyclic
    W, z = lp.solve(C)
    assert_allclose(z, linprog_values(A, b, C), rtol=1e-12)
    assert (W[:, 84] == 0).all()
    assert_allclose(A @ W.T, np.repeat(b[:, None], len(C), axis=1))
