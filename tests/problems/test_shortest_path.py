"""Tests of ShortestPath against an independent brute-force enumeration.

The reference paths here are built from move sequences (itertools) and the
documented node numbering, never from ``ShortestPath.vertices()``, so the
class and the test only agree if both follow the documented edge order.
"""

import itertools
from math import comb

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from spotree.problems import ShortestPath
from spotree.problems._base import _unoverflowed

SHAPES = [(1, 2), (1, 5), (2, 1), (5, 1), (2, 3), (3, 2), (4, 4), (5, 5)]

# The paper's 4x4 grid, written out by hand from the documented rule: nodes
# 1..16 row by row from the south-west corner; east edges first, then north.
HAND_EDGES_4x4 = [
    (1, 2), (2, 3), (3, 4),
    (5, 6), (6, 7), (7, 8),
    (9, 10), (10, 11), (11, 12),
    (13, 14), (14, 15), (15, 16),
    (1, 5), (2, 6), (3, 7), (4, 8),
    (5, 9), (6, 10), (7, 11), (8, 12),
    (9, 13), (10, 14), (11, 15), (12, 16),
]


# ---------------------------------------------------------------- reference
def reference_edges(rows, cols):
    """Edges in the documented order, from node arithmetic alone."""
    n = rows * cols
    east = [(i, i + 1) for i in range(1, n + 1) if i % cols != 0]
    north = [(i, i + cols) for i in range(1, n - cols + 1)]
    return east + north


def reference_paths(rows, cols):
    """All monotone paths as (moves, node sequence, 0/1 decision vector).

    A path is a string of 'E' and 'N' moves; the positions of the
    ``rows - 1`` north moves among ``rows + cols - 2`` steps determine it.
    """
    index = {e: k for k, e in enumerate(reference_edges(rows, cols))}
    n_steps = rows + cols - 2
    out = []
    for north_at in itertools.combinations(range(n_steps), rows - 1):
        moves = "".join("N" if s in north_at else "E" for s in range(n_steps))
        node, nodes = 1, [1]
        w = np.zeros(len(index))
        for mv in moves:
            nxt = node + 1 if mv == "E" else node + cols
            w[index[(node, nxt)]] = 1.0
            node = nxt
            nodes.append(node)
        assert node == rows * cols
        out.append((moves, nodes, w))
    return out


def brute_force(C, rows, cols, sense):
    V = np.array([w for _, _, w in reference_paths(rows, cols)])
    G = np.array([[float(np.dot(c, v)) for v in V] for c in C])
    z = G.min(axis=1) if sense == "min" else G.max(axis=1)
    return V, G, z


def assert_valid_paths(W, rows, cols):
    """0/1 entries, one unit of flow from node 1 to node rows*cols."""
    edges = reference_edges(rows, cols)
    assert set(np.unique(W)) <= {0.0, 1.0}
    for w in W:
        assert w.sum() == rows + cols - 2
        balance = np.zeros(rows * cols + 1)
        for k in np.flatnonzero(w):
            i, j = edges[k]
            balance[i] += 1
            balance[j] -= 1
        expected = np.zeros(rows * cols + 1)
        expected[1] = 1
        expected[rows * cols] = -1
        assert_array_equal(balance, expected)


# --------------------------------------------------------------- edge order
def test_paper_grid_sizes():
    sp = ShortestPath((4, 4))
    assert sp.n_costs == 24
    assert sp.n_paths() == 20
    assert sp.vertices().shape == (20, 24)


def test_edge_order_4x4_matches_hand_built_list():
    assert ShortestPath((4, 4)).edges() == HAND_EDGES_4x4
    # The reference generator agrees with the hand list, so it can be
    # trusted for the other shapes below.
    assert reference_edges(4, 4) == HAND_EDGES_4x4


@pytest.mark.parametrize("shape", SHAPES + [(3, 4), (4, 3)])
def test_edge_order_other_shapes(shape):
    rows, cols = shape
    sp = ShortestPath(shape)
    assert sp.edges() == reference_edges(rows, cols)
    assert sp.n_costs == rows * (cols - 1) + (rows - 1) * cols
    assert sp.n_paths() == comb(rows + cols - 2, rows - 1)


def test_edge_order_single_edge_costs_select_expected_path():
    # Make exactly one path free and everything else expensive: the solver
    # must return the path whose edges we named by node pairs.
    sp = ShortestPath((4, 4))
    path_nodes = [1, 2, 6, 7, 11, 15, 16]
    c = np.full(24, 10.0)
    for i, j in zip(path_nodes[:-1], path_nodes[1:]):
        c[HAND_EDGES_4x4.index((i, j))] = 0.0
    W, z = sp.solve(c[None, :])
    assert z[0] == 0.0
    assert sp.describe_decision(W[0]) == "1->2->6->7->11->15->16"


# ------------------------------------------------------------- vertices
@pytest.mark.parametrize("shape", SHAPES)
def test_vertices_are_all_monotone_paths(shape):
    rows, cols = shape
    V = ShortestPath(shape).vertices()
    ref = {tuple(w) for _, _, w in reference_paths(rows, cols)}
    got = {tuple(v) for v in V}
    assert len(V) == len(got) == len(ref) == comb(rows + cols - 2, rows - 1)
    assert got == ref


@pytest.mark.parametrize("shape", [(1, 1500), (1500, 1), (2, 1200)])
def test_vertices_of_long_grids_do_not_overflow_the_stack(shape):
    # The listing recursed once per edge: RecursionError on a 1 x 1500 grid.
    rows, cols = shape
    sp = ShortestPath(shape)
    V = sp.vertices()
    assert V.shape == (comb(rows + cols - 2, rows - 1), sp.n_costs)
    assert (V.sum(axis=1) == rows + cols - 2).all()
    assert len({tuple(v) for v in V}) == len(V)
    # Listed paths are monotone paths (checked edge by edge; every 40th one,
    # the first and the last, for time).
    assert_valid_paths(np.vstack([V[::40], V[-1:]]), rows, cols)


def test_vertices_none_beyond_limit_but_solve_still_exact():
    # 9x9 has comb(16, 8) = 12870 paths, above max_vertices = 5000.
    sp = ShortestPath((9, 9))
    assert sp.n_paths() > sp.max_vertices
    assert sp.vertices() is None
    rng = np.random.default_rng(3)
    C = rng.uniform(0.0, 1.0, size=(5, sp.n_costs))
    W, z = sp.solve(C)
    _, G, z_bf = brute_force(C, 9, 9, "min")
    assert_allclose(z, z_bf, rtol=1e-12)
    assert_valid_paths(W, 9, 9)


# ---------------------------------------------------------- brute force
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sense", ["min", "max"])
def test_solve_equals_brute_force(shape, sense):
    rows, cols = shape
    sp = ShortestPath(shape, sense=sense)
    rng = np.random.default_rng(rows * 100 + cols + (sense == "max"))
    # Mixed-sign costs: the DAG has no cycles, so negative costs are fine.
    C = rng.normal(size=(40, sp.n_costs)) * rng.uniform(0.1, 10.0, size=(40, 1))
    W, z = sp.solve(C)
    V, G, z_bf = brute_force(C, rows, cols, sense)
    assert W.shape == C.shape and z.shape == (40,)
    assert W.dtype == np.float64 and z.dtype == np.float64
    assert_allclose(z, z_bf, rtol=1e-12, atol=1e-12)
    # Continuous costs have a unique optimum with probability one, so the
    # decision itself must be the brute-force argmin/argmax.
    k = G.argmin(axis=1) if sense == "min" else G.argmax(axis=1)
    assert_array_equal(W, V[k])
    assert_valid_paths(W, rows, cols)
    assert_allclose(sp.value(C, W), z_bf, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sense", ["min", "max"])
def test_max_is_min_of_negated_costs(sense):
    rng = np.random.default_rng(7)
    C = rng.uniform(0, 5, size=(30, 24))
    W_max, z_max = ShortestPath((4, 4), sense="max").solve(C)
    W_min, z_min = ShortestPath((4, 4), sense="min").solve(-C)
    assert_array_equal(W_max, W_min)
    assert_allclose(z_max, -z_min, rtol=1e-14)


def test_batch_equals_row_by_row():
    sp = ShortestPath((3, 4))
    rng = np.random.default_rng(11)
    C = rng.integers(0, 3, size=(25, sp.n_costs)).astype(float)  # many ties
    W, z = sp.solve(C)
    for i in range(len(C)):
        Wi, zi = sp.solve(C[i:i + 1])
        assert_array_equal(Wi[0], W[i])
        assert zi[0] == z[i]


def test_solve_accepts_lists_and_does_not_modify_input():
    sp = ShortestPath((2, 3))
    C = np.arange(14, dtype=float).reshape(2, 7)
    before = C.copy()
    W, z = sp.solve(C.tolist())
    assert_array_equal(C, before)
    W2, z2 = sp.solve(C)
    assert_array_equal(W, W2)
    assert_array_equal(z, z2)


@pytest.mark.parametrize("shape", [(1, 3), (3, 1), (4, 4)])
def test_empty_batch(shape):
    sp = ShortestPath(shape)
    W, z = sp.solve(np.empty((0, sp.n_costs)))
    assert W.shape == (0, sp.n_costs)
    assert z.shape == (0,)


def test_degenerate_grids_have_one_path():
    for shape in [(1, 6), (6, 1)]:
        sp = ShortestPath(shape)
        C = np.random.default_rng(0).normal(size=(4, sp.n_costs))
        W, z = sp.solve(C)
        assert_array_equal(W, np.ones_like(C))
        assert_allclose(z, C.sum(axis=1), rtol=1e-12)


# ------------------------------------------------------------------ ties
def tie_rule_path(C_row, rows, cols, sense):
    """The documented tie rule, stated on whole paths.

    "At each node the path arrives from the west whenever that is no worse
    than arriving from the south": walking back from the north-east corner,
    the first step is west if any optimal path ends with an east move, and
    so on. That selects, among the optimal paths, the one whose *reversed*
    move sequence is lexicographically smallest with 'E' < 'N'.
    """
    paths = reference_paths(rows, cols)
    vals = [float(np.dot(C_row, w)) for _, _, w in paths]
    best = min(vals) if sense == "min" else max(vals)
    optimal = [p for p, v in zip(paths, vals) if v == best]
    return min(optimal, key=lambda p: p[0][::-1])


@pytest.mark.parametrize("sense", ["min", "max"])
def test_all_equal_costs_follow_tie_rule(sense):
    sp = ShortestPath((4, 4), sense=sense)
    W, z = sp.solve(np.full((3, 24), 2.5))
    assert_array_equal(z, [15.0] * 3)
    # Arriving from the west is preferred at every node, so the path hugs the
    # west column and then the north row.
    for w in W:
        assert sp.describe_decision(w) == "1->5->9->13->14->15->16"
    moves, nodes, w = tie_rule_path(np.full(24, 2.5), 4, 4, sense)
    assert moves == "NNNEEE"
    assert_array_equal(W[0], w)


@pytest.mark.parametrize("shape", [(2, 3), (3, 3), (3, 4), (4, 4)])
@pytest.mark.parametrize("sense", ["min", "max"])
def test_tie_rule_on_integer_costs(shape, sense):
    # Small integer costs make exact ties frequent, and integer sums are
    # exact in floating point, so "tied" is unambiguous.
    rows, cols = shape
    sp = ShortestPath(shape, sense=sense)
    rng = np.random.default_rng(rows * 10 + cols)
    C = rng.integers(0, 3, size=(60, sp.n_costs)).astype(float)
    W, z = sp.solve(C)
    n_tied = 0
    for c, w in zip(C, W):
        moves, _, w_ref = tie_rule_path(c, rows, cols, sense)
        assert_array_equal(w, w_ref)
        vals = [float(np.dot(c, v)) for _, _, v in reference_paths(rows, cols)]
        n_tied += sum(v == (min(vals) if sense == "min" else max(vals)) for v in vals) > 1
    assert n_tied > 10  # the test really exercised ties


# -------------------------------------------------------- describe_decision
@pytest.mark.parametrize("shape", [(1, 4), (4, 1), (2, 3), (4, 4)])
def test_describe_decision_lists_nodes_of_path(shape):
    rows, cols = shape
    sp = ShortestPath(shape)
    for _, nodes, w in reference_paths(rows, cols):
        assert sp.describe_decision(w) == "->".join(map(str, nodes))


def test_describe_decision_hand_example():
    sp = ShortestPath((4, 4))
    w = np.zeros(24)
    for e in [(1, 2), (2, 3), (3, 4), (4, 8), (8, 12), (12, 16)]:
        w[HAND_EDGES_4x4.index(e)] = 1.0
    assert sp.describe_decision(w) == "1->2->3->4->8->12->16"


# ---------------------------------------------------------------- errors
def test_1d_costs_rejected():
    with pytest.raises(ValueError, match=r"C must be a 2-D array.*reshape\(1, -1\)"):
        ShortestPath((4, 4)).solve(np.ones(24))


def test_wrong_number_of_columns_rejected():
    with pytest.raises(ValueError, match=r"C has 23 columns but the problem has n_costs=24"):
        ShortestPath((4, 4)).solve(np.ones((3, 23)))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_costs_rejected(bad):
    C = np.ones((3, 24))
    C[2, 5] = bad
    with pytest.raises(ValueError, match=r"C contains NaN or infinity \(first at row 2, column 5\)"):
        ShortestPath((4, 4)).solve(C)


def test_non_numeric_costs_rejected():
    with pytest.raises(ValueError, match="C must be a numeric 2-D array"):
        ShortestPath((2, 2)).solve([["a", "b", "c", "d"]])


@pytest.mark.parametrize("sense", ["minimize", "MIN", None, 1])
def test_unknown_sense_rejected(sense):
    with pytest.raises(ValueError, match="sense must be 'min' or 'max'"):
        ShortestPath((4, 4), sense=sense)


@pytest.mark.parametrize("grid", [(1, 1), (0, 4), (4, 0), (-2, 3), (4,), (4, 4, 4), 4, None, "ab"])
def test_bad_grid_rejected(grid):
    with pytest.raises(ValueError, match="grid must"):
        ShortestPath(grid)


def test_non_integer_grid_rejected():
    with pytest.raises(ValueError, match="grid must"):
        ShortestPath((2.5, 3))


def test_value_checks_its_arguments():
    sp = ShortestPath((2, 2))
    C = np.ones((2, 4))
    with pytest.raises(ValueError, match="C and W must have the same number of rows; got 2 and 1"):
        sp.value(C, np.ones((1, 4)))
    with pytest.raises(ValueError, match="W has 3 columns"):
        sp.value(C, np.ones((2, 3)))
    with pytest.raises(ValueError, match="W contains NaN"):
        sp.value(C, np.full((2, 4), np.nan))


def test_repr_and_to_dict():
    sp = ShortestPath((3, 5), sense="max")
    assert repr(sp) == "ShortestPath(grid=(3, 5), sense='max')"
    assert sp.to_dict() == {"type": "shortest_path", "grid": [3, 5], "sense": "max"}


# ============================================== any DAG: ShortestPath.from_edges
def random_dag(rng, n_nodes, p_edge, n_parallel=0):
    """A random DAG on a shuffled node numbering, with a few parallel edges."""
    perm = rng.permutation(n_nodes)
    edges = [(int(perm[a]), int(perm[b])) for a in range(n_nodes) for b in range(a + 1, n_nodes)
             if rng.random() < p_edge]
    for _ in range(n_parallel):
        if edges:
            edges.append(edges[int(rng.integers(len(edges)))])
    order = rng.permutation(len(edges))  # edge order unrelated to the node order
    return [edges[k] for k in order], int(perm[0]), int(perm[-1])


def enumerate_paths(n_edges, edges, source, target):
    """Every source-target path as a 0/1 edge vector, by plain recursion."""
    out = []

    def walk(v, used):
        if v == target:
            w = np.zeros(n_edges)
            w[used] = 1.0
            out.append(w)
            return
        for e, (t, h) in enumerate(edges):
            if t == v:
                walk(h, used + [e])

    walk(source, [])
    return np.array(out)


def dag_tie_rule_path(c, n_nodes, edges, source, target, sense):
    """The documented rule from brute-force values: walking back from the
    target, arrive at each node through the lowest-index in-edge that
    reaches it at its best value."""
    sign = 1.0 if sense == "min" else -1.0
    best = {}
    for v in range(n_nodes):
        if v == source:
            best[v] = 0.0
            continue
        P = enumerate_paths(len(edges), edges, source, v)
        if len(P):
            best[v] = min(sign * float(P[k] @ c) for k in range(len(P)))
    w = np.zeros(len(edges))
    v = target
    while v != source:
        e = min(e for e, (t, h) in enumerate(edges)
                if h == v and t in best and best[t] + sign * c[e] == best[v])
        w[e] = 1.0
        v = edges[e][0]
    return w


def dag_cases(n_cases, seed, max_nodes=8):
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < n_cases:
        n = int(rng.integers(2, max_nodes + 1))
        edges, s, t = random_dag(rng, n, rng.uniform(0.3, 0.9), n_parallel=int(rng.integers(0, 3)))
        if edges and len(enumerate_paths(len(edges), edges, s, t)):
            cases.append((n, edges, s, t))
    return cases


@pytest.mark.parametrize("sense", ["min", "max"])
def test_dag_solve_equals_brute_force(sense):
    rng = np.random.default_rng(21 if sense == "min" else 22)
    for n, edges, s, t in dag_cases(40, 20 if sense == "min" else 23):
        sp = ShortestPath.from_edges(n, edges, s, t, sense=sense)
        P = enumerate_paths(len(edges), edges, s, t)
        C = rng.normal(size=(20, len(edges))) * rng.uniform(0.1, 10.0)
        W, z = sp.solve(C)
        G = C @ P.T
        k = G.argmin(axis=1) if sense == "min" else G.argmax(axis=1)
        assert_allclose(z, G[np.arange(20), k], rtol=1e-12, atol=1e-12)
        assert_array_equal(W, P[k])  # continuous costs: a unique optimum
        assert sp.n_paths() == len(P)
        V = sp.vertices()
        assert {tuple(v) for v in V} == {tuple(p) for p in P} and len(V) == len(P)


@pytest.mark.parametrize("sense", ["min", "max"])
def test_dag_tie_rule_on_integer_costs(sense):
    rng = np.random.default_rng(24)
    n_tied = 0
    for n, edges, s, t in dag_cases(25, 25 if sense == "min" else 26, max_nodes=7):
        sp = ShortestPath.from_edges(n, edges, s, t, sense=sense)
        P = enumerate_paths(len(edges), edges, s, t)
        C = rng.integers(0, 3, size=(8, len(edges))).astype(float)
        W, _ = sp.solve(C)
        for c, w in zip(C, W):
            assert_array_equal(w, dag_tie_rule_path(c, n, edges, s, t, sense))
            g = P @ c
            n_tied += (g == (g.min() if sense == "min" else g.max())).sum() > 1
    assert n_tied > 30  # ties were exercised


def test_dag_parallel_edges_are_distinct_decisions():
    sp = ShortestPath.from_edges(3, [(0, 1), (0, 1), (1, 2)], 0, 2)
    W, z = sp.solve([[2.0, 1.0, 5.0], [1.0, 1.0, 0.0]])
    assert_array_equal(W, [[0, 1, 1], [1, 0, 1]])  # a tie goes to the lower index
    assert_array_equal(z, [6.0, 1.0])
    assert sp.n_paths() == 2


def test_dag_edges_off_every_path_stay_zero():
    # Node 3 is unreachable and node 4 cannot reach the target.
    edges = [(0, 1), (1, 2), (3, 1), (1, 4), (0, 2)]
    sp = ShortestPath.from_edges(5, edges, 0, 2)
    C = np.random.default_rng(27).normal(size=(30, 5))
    W, z = sp.solve(C)
    assert not W[:, [2, 3]].any()
    assert_allclose(z, np.minimum(C[:, 0] + C[:, 1], C[:, 4]), rtol=1e-12)
    assert sp.n_paths() == 2


@pytest.mark.parametrize("shape", [(2, 3), (4, 4), (5, 5), (10, 10)])
def test_dag_of_grid_edges_equals_grid_with_same_ties(shape):
    grid = ShortestPath(shape)
    edges = [(i - 1, j - 1) for i, j in grid.edges()]
    n = shape[0] * shape[1]
    dag = ShortestPath.from_edges(n, edges, 0, n - 1)
    rng = np.random.default_rng(28)
    C = np.vstack([rng.integers(0, 3, size=(40, grid.n_costs)).astype(float),  # ties
                   rng.normal(size=(40, grid.n_costs))])
    Wg, zg = grid.solve(C)
    Wd, zd = dag.solve(C)
    assert_array_equal(Wd, Wg)
    assert_array_equal(zd, zg)
    assert dag.n_paths() == grid.n_paths()


def test_dag_vertices_none_beyond_limit():
    # A chain of 13 diamonds has 2^13 = 8192 paths.
    edges = []
    for k in range(13):
        a, b, c, d = 3 * k, 3 * k + 1, 3 * k + 2, 3 * k + 3
        edges += [(a, b), (a, c), (b, d), (c, d)]
    sp = ShortestPath.from_edges(40, edges, 0, 39)
    assert sp.n_paths() == 8192
    assert sp.vertices() is None
    C = np.random.default_rng(29).normal(size=(5, len(edges)))
    W, z = sp.solve(C)
    # Each diamond independently takes its cheaper side.
    ref = sum(np.minimum(C[:, 4 * k] + C[:, 4 * k + 2], C[:, 4 * k + 1] + C[:, 4 * k + 3])
              for k in range(13))
    assert_allclose(z, ref, rtol=1e-12)


def test_dag_compiled_oracle_value_only_equals_full_solve():
    from spotree.problems._compiled import solve_min

    for n, edges, s, t in dag_cases(10, 30):
        sp = ShortestPath.from_edges(n, edges, s, t)
        o = sp.compiled_oracle()
        work = np.empty(o.work_size)
        iwork = np.empty(o.iwork_size, dtype=np.int64)
        C = np.random.default_rng(31).normal(size=(10, len(edges)))
        _, z = sp.solve(C)
        for c, zi in zip(C, z):
            v = solve_min(o.kind, o.ints, o.floats, c, np.empty(0), work, iwork)
            assert_allclose(v, zi, rtol=1e-12, atol=1e-12)


def test_grid_compiled_oracle_equals_grid_solve():
    from spotree.problems._compiled import solve_batch

    for shape in [(3, 4), (8, 8)]:
        sp = ShortestPath(shape)
        o = sp.compiled_oracle()
        rng = np.random.default_rng(32)
        C = np.vstack([rng.integers(0, 3, size=(30, sp.n_costs)).astype(float),
                       rng.normal(size=(30, sp.n_costs))])
        W = np.empty_like(C)
        z = solve_batch(o.kind, o.ints, o.floats, C, W, np.empty(o.work_size),
                        np.empty(o.iwork_size, dtype=np.int64))
        Wg, zg = sp.solve(C)
        assert_array_equal(W, Wg)
        assert_allclose(z, zg, rtol=1e-12, atol=1e-12)


def test_dag_docstring_example_and_describe():
    sp = ShortestPath.from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3)], 0, 3)
    W, z = sp.solve([[1.0, 2.0, 5.0, 1.0]])
    assert_array_equal(W, [[0, 1, 0, 1]])
    assert sp.describe_decision(W[0]) == "0->2->3"
    assert repr(sp) == ("ShortestPath.from_edges(n_nodes=4, n_edges=4, source=0, target=3, "
                        "sense='min')")
    assert sp.edges() == [(0, 1), (0, 2), (1, 3), (2, 3)]


def test_dag_to_dict_round_trip_and_pickle():
    import json
    import pickle

    from spotree.problems import DAGShortestPath

    sp = ShortestPath.from_edges(5, [(0, 1), (1, 4), (0, 2), (2, 4), (0, 4), (3, 4)], 0, 4,
                                 sense="max")
    spec = json.loads(json.dumps(sp.to_dict()))
    assert spec == {"type": "dag_shortest_path", "n_nodes": 5,
                    "edges": [[0, 1], [1, 4], [0, 2], [2, 4], [0, 4], [3, 4]],
                    "source": 0, "target": 4, "sense": "max"}
    C = np.random.default_rng(33).normal(size=(10, 6))
    for q in (DAGShortestPath.from_dict(spec), pickle.loads(pickle.dumps(sp))):
        assert q.to_dict() == sp.to_dict()
        assert_array_equal(q.solve(C)[0], sp.solve(C)[0])


def test_dag_accepts_numpy_edges_and_integral_floats():
    sp = ShortestPath.from_edges(np.int64(3), np.array([[0.0, 1.0], [1.0, 2.0]]), 0,
                                 np.int32(2))
    assert sp.n_costs == 2 and sp.target == 2


@pytest.mark.parametrize("args, match", [
    ((3, [(0, 1), (1, 2), (2, 0)], 0, 2), r"'edges' parameter of ShortestPath.from_edges has "
                                          r"a cycle \((0->1->2->0|1->2->0->1|2->0->1->2)\)"),
    ((4, [(0, 1), (1, 2), (2, 1), (2, 3)], 0, 3), r"has a cycle \((1->2->1|2->1->2)\)"),
    ((3, [(0, 1), (1, 1), (1, 2)], 0, 2), r"has a self loop: edge 1 is \(1, 1\)"),
    ((3, [(0, 1), (1, 3)], 0, 2), r"has a node id out of the range \[0, 2\]: edge 1 is "
                                  r"\(1, 3\)"),
    ((3, [(0, 1), (-1, 2)], 0, 2), r"node id out of the range"),
    ((4, [(0, 1), (2, 3)], 0, 3), r"gives no path from source 0 to target 3"),
    ((3, [(0, 1), (1, 2)], 2, 0), r"gives no path from source 2 to target 0"),
    ((3, [(0, 1), (1, 2)], 1, 1), r"'source' and 'target' parameters .* must differ"),
    ((3, [(0, 1), (1, 2)], 0, 3), r"'target' parameter of ShortestPath.from_edges must be a "
                                  r"node id in the range \[0, 2\]. Got 3"),
    ((3, [(0, 1), (1, 2)], 0.0, 2), r"'source' parameter .* must be an int node id"),
    ((3, [(0, 1), (1, 2)], None, 2), r"'source' parameter .* must be an int node id"),
    ((1, [(0, 0)], 0, 0), r"'n_nodes' parameter .* must be an int in the range \[2, inf\)"),
    ((2.0, [(0, 1)], 0, 1), r"'n_nodes' parameter"),
    ((3, [], 0, 2), r"'edges' parameter .* must be a non-empty sequence of \(tail, head\)"),
    ((3, [(0, 1, 2)], 0, 2), r"'edges' parameter .* sequence of \(tail, head\) pairs"),
    ((3, [(0, 1), (1,)], 0, 2), r"'edges' parameter .* sequence of \(tail, head\) pairs"),
    ((3, [(0, 1.5), (1, 2)], 0, 2), r"pairs of int node ids"),
    ((3, [("a", "b")], 0, 2), r"pairs of int node ids"),
    ((3, None, 0, 2), r"pairs of int node ids"),
])
def test_dag_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        ShortestPath.from_edges(*args)


def test_dag_bad_sense():
    with pytest.raises(ValueError, match="sense must be 'min' or 'max'"):
        ShortestPath.from_edges(2, [(0, 1)], 0, 1, sense="shortest")


def test_tree_on_dag_equals_tree_on_grid():
    from spotree import SPOTree

    grid = ShortestPath((5, 5))
    dag = ShortestPath.from_edges(25, [(i - 1, j - 1) for i, j in grid.edges()], 0, 24)
    rng = np.random.default_rng(34)
    X = rng.normal(size=(300, 3))
    C = np.abs(X[:, :1] * rng.normal(size=(1, grid.n_costs))
               + rng.normal(size=(300, grid.n_costs)))
    t_grid = SPOTree(grid, max_depth=3, min_samples_leaf=10).fit(X, C)
    t_dag = SPOTree(dag, max_depth=3, min_samples_leaf=10).fit(X, C)
    assert_allclose(t_dag.predict(X), t_grid.predict(X), rtol=1e-12)
    assert_array_equal(t_dag.predict_decision(X), t_grid.predict_decision(X))


# ====================================== difference_basis: the span of path differences
def assert_basis_of_differences(B, P, d):
    """B: orthonormal columns spanning exactly the differences of the rows of P."""
    assert B.shape[0] == d
    assert_allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-12)
    D = P[1:] - P[0]
    # Every difference lies in span(B) ...
    assert_allclose(D - D @ B @ B.T, 0.0, atol=1e-12)
    # ... and span(B) is no larger than the span of the differences.
    rank = np.linalg.matrix_rank(D) if len(D) else 0
    assert B.shape[1] == rank


@pytest.mark.parametrize("shape", SHAPES)
def test_grid_difference_basis_spans_exactly_the_path_differences(shape):
    rows, cols = shape
    P = np.array([w for _, _, w in reference_paths(rows, cols)])
    B = ShortestPath(shape).difference_basis()
    assert_basis_of_differences(B, P, P.shape[1])
    # A grid's paths differ by the circulations: edges - nodes + 1 of them.
    assert B.shape[1] == P.shape[1] - rows * cols + 1


def test_dag_difference_basis_spans_exactly_the_path_differences():
    n_unused = 0
    for n, edges, s, t in dag_cases(40, 31):
        B = ShortestPath.from_edges(n, edges, s, t).difference_basis()
        P = enumerate_paths(len(edges), edges, s, t)
        assert_basis_of_differences(B, P, len(edges))
        unused = P.sum(axis=0) == 0
        n_unused += unused.sum()
        assert_array_equal(B[unused], 0.0)
    assert n_unused > 10  # edges off every path were exercised


def test_difference_basis_is_cached_read_only_and_not_pickled():
    import pickle

    sp = ShortestPath((3, 3))
    B = sp.difference_basis()
    assert sp.difference_basis() is B and not B.flags.writeable
    assert "_difference_cache" not in pickle.loads(pickle.dumps(sp)).__dict__


def test_dag_path_along_parallel_edges_names_the_edge():
    # Both paths read "0->1->2", so a tree's leaves with different decisions
    # looked the same in the exports.
    dag = ShortestPath.from_edges(3, [(0, 1), (0, 1), (1, 2), (0, 2)], 0, 2)
    assert dag.describe_decision([1, 0, 1, 0]) == "0-[e0]->1->2"
    assert dag.describe_decision([0, 1, 1, 0]) == "0-[e1]->1->2"
    assert dag.describe_decision([0, 0, 0, 1]) == "0->2"
    plain = ShortestPath.from_edges(3, [(0, 1), (1, 2), (0, 2)], 0, 2)
    assert plain.describe_decision([1, 1, 0]) == "0->1->2"


def _numpy_grid_dp(C, rows, cols, sense):
    """ShortestPath's former NumPy dynamic program (its solve until the compiled one)."""
    n_east = rows * (cols - 1)
    m = C.shape[0]
    Cm = C if sense == "min" else -C
    dist = np.empty((rows, cols, m))
    from_west = np.zeros((rows, cols, m), dtype=bool)
    dist[0, 0] = 0.0
    for c in range(1, cols):
        dist[0, c] = dist[0, c - 1] + Cm[:, c - 1]
        from_west[0, c] = True
    for r in range(1, rows):
        dist[r, 0] = dist[r - 1, 0] + Cm[:, n_east + (r - 1) * cols]
        for c in range(1, cols):
            west = dist[r, c - 1] + Cm[:, r * (cols - 1) + c - 1]
            south = dist[r - 1, c] + Cm[:, n_east + (r - 1) * cols + c]
            from_west[r, c] = west <= south
            dist[r, c] = np.where(from_west[r, c], west, south)
    W = np.zeros((m, n_east + (rows - 1) * cols))
    rr, cc, ar = np.full(m, rows - 1), np.full(m, cols - 1), np.arange(m)
    for _ in range(rows + cols - 2):
        west = from_west[rr, cc, ar]
        W[ar, np.where(west, rr * (cols - 1) + cc - 1, n_east + (rr - 1) * cols + cc)] = 1.0
        cc = cc - west
        rr = rr - ~west
    return W


@pytest.mark.parametrize("shape", [(1, 4), (4, 1), (3, 5), (4, 4), (6, 6)])
@pytest.mark.parametrize("sense", ["min", "max"])
def test_solve_takes_the_paths_of_the_numpy_dynamic_program(shape, sense):
    # solve runs the compiled dynamic program now: the same paths, bit for
    # bit, as the NumPy one it replaced, on near ties (sums that round
    # alike or not), signed costs and costs near the float range.
    rows, cols = shape
    sp = ShortestPath(shape, sense=sense)
    rng = np.random.default_rng(rows * 7 + cols)
    d = sp.n_costs
    C = np.vstack([rng.normal(size=(200, d)),
                   rng.integers(0, 3, size=(200, d)) * 0.1,
                   rng.integers(-2, 3, size=(50, d)) * 1e307,
                   rng.uniform(0, 1, size=(50, d)) * 1e-300])
    W, z = sp.solve(C)
    # (solve divides rows that could overflow by a power of two first.)
    assert_array_equal(W, _numpy_grid_dp(_unoverflowed(C), rows, cols, sense))
    assert_array_equal(z, np.einsum("ij,ij->i", C, W))
