"""The compiled growth routine against an independent reference builder.

``tests/tree/_reference.py`` grows trees by brute force from the documented
rules (every candidate child scored from scratch with one oracle call on its
mean). Here every split-search path of spotree (vertex list, compiled
solver, batched oracle) must grow the same tree on small data: same features,
same partition of the training rows at every node, same decisions and
losses; with missing values, categorical features, quantile thresholds,
sample weights, both senses and the three criteria.
"""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from spotree.problems import (Assignment, CallableProblem, FiniteDecisions, Knapsack,
                              ShortestPath, news_recommendation)
from spotree.tree._builder import grow_tree
from spotree.tree._fit_data import FitData

from ._reference import ReferenceTree


def _oracle_only(problem):
    def oracle(C):
        return problem.solve(C)[0]

    return CallableProblem(oracle, n_costs=problem.n_costs, sense=problem.sense, batched=True)


def _finite(seed, sense="min"):
    rng = np.random.default_rng(100 + seed)
    return FiniteDecisions(rng.uniform(-1, 1, size=(6, 4)), sense=sense)


DAG_EDGES = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (2, 4), (3, 4), (3, 5), (4, 5), (1, 5)]

# (problem factory, paths it can take)
PROBLEMS = {
    "sp33": (lambda s: ShortestPath((3, 3)), ("vertex", "solver", "oracle")),
    "sp23-max": (lambda s: ShortestPath((2, 3), sense="max"), ("vertex", "solver", "oracle")),
    "finite": (lambda s: _finite(s), ("vertex", "oracle")),
    "finite-max": (lambda s: _finite(s, "max"), ("vertex", "oracle")),
    "news-lp": (lambda s: news_recommendation(4, 2, random_state=s), ("vertex", "oracle")),
    "sp33-callable": (lambda s: _oracle_only(ShortestPath((3, 3))), ("oracle",)),
    # A DAG given by its edges: the solver path solves its candidates in blocks.
    "dag": (lambda s: ShortestPath.from_edges(6, DAG_EDGES, 0, 5), ("vertex", "solver",
                                                                      "oracle")),
    # Knapsacks: the solver path rules candidates out by bounds before solving.
    "knap-dp": (lambda s: Knapsack([[2, 3, 1, 4]], [5]), ("vertex", "solver", "oracle")),
    "knap-bb": (lambda s: Knapsack([[2.5, 1.0, 1.5, 3.0], [1.0, 2.0, 2.5, 0.5]], [4.0, 3.5]),
                ("vertex", "solver", "oracle")),
    # An assignment: the compiled Hungarian method on the transposed side (3 agents, 2
    # tasks), with a forbidden pair.
    "assign-max": (lambda s: Assignment(3, 2, sense="max", allowed=[[1, 1], [0, 1], [1, 1]]),
                   ("vertex", "solver", "oracle")),
}


def _data(problem, seed, n=14, p=3, missing=0.0, n_cat=0, levels=4):
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0, 1, size=(n, p)), 1)
    for j in range(n_cat):
        X[:, j] = rng.integers(0, levels, size=n)
    if missing:
        X[rng.uniform(size=X.shape) < missing] = np.nan
    C = rng.uniform(0.2, 2.0, size=(n, problem.n_costs))
    return X, C


def _grow(problem, X, C, w, path, *, a, is_cat=None, **kw):
    p = X.shape[1]
    is_cat = np.zeros(p, dtype=bool) if is_cat is None else is_cat
    data = FitData(problem, X, C, is_cat, need_spo=a > 0, path=path)
    params = dict(max_depth=None, min_leaf_cnt=1, min_leaf_w=0.0, min_split_cnt=2,
                  max_features=None, n_quantiles=0, min_loss_decrease=0.0, seed=0)
    params.update(kw)
    tree, _, _ = grow_tree(data, w, (w > 0).astype(float), a=a, **params)
    return tree


def _node_rows(tree, X, rows):
    path = tree.decision_path(X[rows]).tocsc()
    return [rows[path[:, t].indices] for t in range(tree.node_count)]


def assert_same_tree(tree, ref, X, w):
    rows = np.flatnonzero(w > 0)
    node_rows = _node_rows(tree, X, rows)
    scale = max(abs(ref.nodes[0]["impurity"]), abs(ref.nodes[0]["loss"]), 1e-300)

    def walk(t, r):
        node = ref.nodes[r]
        assert sorted(node_rows[t]) == sorted(node["idx"]), f"rows of node {t}"
        np.testing.assert_allclose(tree.decision[t], node["decision"], atol=1e-9)
        assert tree.loss[t] == pytest.approx(node["loss"], rel=1e-7, abs=1e-9 * scale)
        assert tree.impurity[t] == pytest.approx(node["impurity"], rel=1e-7, abs=1e-9 * scale)
        is_leaf = tree.children_left[t] < 0
        assert is_leaf == (node["left"] < 0), f"node {t}: leaf in one tree only ({node})"
        if not is_leaf:
            assert tree.feature[t] == node["feature"]
            walk(tree.children_left[t], node["left"])
            walk(tree.children_right[t], node["right"])

    walk(0, 0)


CASES = [
    dict(),
    dict(max_depth=2),
    dict(min_leaf_cnt=3),
    dict(n_quantiles=3),
    dict(missing=0.15),
    dict(missing=0.25, min_leaf_cnt=2),
    dict(n_cat=1),
    dict(n_cat=2, missing=0.1),
    dict(n_cat=1, subsets=True),
    dict(n_cat=1, subsets=True, missing=0.2, levels=5),
    dict(weighted=True),
    dict(weighted=True, min_weight=6.0, missing=0.1),
]


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("a", [1.0, 0.0, 0.4])
@pytest.mark.parametrize("seed", [0])
def test_every_path_grows_the_reference_tree(name, case, a, seed):
    make, paths = PROBLEMS[name]
    problem = make(seed)
    cfg = dict(CASES[case])
    rng = np.random.default_rng(seed + 31)
    X, C = _data(problem, seed, missing=cfg.pop("missing", 0.0), n_cat=cfg.get("n_cat", 0),
                 levels=cfg.pop("levels", 4))
    n_cat = cfg.pop("n_cat", 0)
    is_cat = np.arange(X.shape[1]) < n_cat
    w = rng.integers(0, 4, size=X.shape[0]).astype(float) if cfg.pop("weighted", False) \
        else np.ones(X.shape[0])
    w[0] = max(w[0], 1.0)
    subsets = cfg.pop("subsets", False)
    min_weight = cfg.pop("min_weight", 0.0)
    q = cfg.get("n_quantiles", 0)
    if q:
        X = X + rng.uniform(0, 1e-3, size=X.shape)  # quantiles never hit a value exactly
    ref = ReferenceTree(problem, X, C, w, a=a, max_depth=cfg.get("max_depth"),
                        min_leaf=cfg.get("min_leaf_cnt", 1), min_weight=min_weight,
                        thresholds=q or "all", is_cat=is_cat, subsets=subsets)
    for path in paths:
        tree = _grow(problem, X, C, w, path, a=a, is_cat=is_cat, min_leaf_w=min_weight,
                     categorical_subsets=subsets, **cfg)
        assert_same_tree(tree, ref, X, w)


@pytest.mark.parametrize("seed", range(3))
def test_every_path_draws_the_same_features_with_max_features(seed):
    # One random stream per tree: the vertex and solver paths draw no
    # features at a node of zero SPO loss (no split can lower it), but the
    # oracle path learns that loss with its candidates', after its draw, and
    # kept that draw: from there on its nodes searched other features (8
    # rows: 7 nodes on the vertex path, 9 on the oracle path).
    problem = ShortestPath((2, 2))
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(size=(8, 3)), 2)
    C = np.round(rng.uniform(size=(8, 4)), 2)
    w = np.ones(8)
    trees = [_grow(problem, X, C, w, path, a=1.0, max_features=1, seed=seed)
             for path in ("vertex", "solver", "oracle")]
    assert (trees[0].loss == 0).sum() > trees[0].n_leaves // 2  # nodes of zero loss
    for tree in trees[1:]:
        assert_array_equal(tree.feature, trees[0].feature)
        assert_array_equal(tree.threshold, trees[0].threshold)


def test_the_oracle_path_searched_again_after_growing_its_buffer_draws_the_same_features():
    # 1200 rows: the oracle path's request buffer is too small for the root's
    # candidates, so it grows and the root is searched again. It drew its
    # features again: the root split on feature 0, not on the drawn feature 1.
    problem = ShortestPath((2, 2))
    rng = np.random.default_rng(5)
    n = 1200
    X = np.round(rng.uniform(size=(n, 3)), 6)
    C = (0.5 * rng.uniform(size=(n, 4)) + X[:, :1] * np.array([1, 0, 0, 1])
         + X[:, 1:2] * np.array([0, 0.6, 0.6, 0]) + X[:, 2:] * np.array([0.3, 0, 0, 0]))
    w = np.ones(n)
    trees = [_grow(problem, X, C, w, path, a=1.0, max_features=2, seed=5, max_depth=1)
             for path in ("vertex", "oracle")]
    assert trees[0].feature[0] == 1
    assert_array_equal(trees[1].feature, trees[0].feature)
    assert_array_equal(trees[1].threshold, trees[0].threshold)


@pytest.mark.parametrize("name, a", [("sp33", 1.0), ("knap-dp", 0.0)])
def test_min_split_against_the_reference(name, a):
    # A node of exactly min_samples_split rows may be split, one of fewer may
    # not (the reference's rule); some node of each kind sits at the limit.
    make, paths = PROBLEMS[name]
    problem = make(0)
    X, C = _data(problem, 3, n=24)
    w = np.ones(X.shape[0])
    at_limit = 0
    for min_split in (4, 6, 9):
        ref = ReferenceTree(problem, X, C, w, a=a, min_split=min_split)
        at_limit += sum(node["idx"].size == min_split and node["left"] >= 0
                        for node in ref.nodes)
        for path in paths:
            tree = _grow(problem, X, C, w, path, a=a, min_split_cnt=min_split)
            assert_same_tree(tree, ref, X, w)
    assert at_limit > 0


def test_paths_agree_on_larger_data():
    problem = ShortestPath((3, 4))
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4))
    C = np.exp(rng.normal(size=(300, problem.n_costs)) + X[:, :1].clip(-2, 2))
    X[rng.uniform(size=X.shape) < 0.05] = np.nan
    w = np.ones(300)
    trees = [_grow(problem, X, C, w, path, a=1.0, min_leaf_cnt=10)
             for path in ("vertex", "solver", "oracle")]
    for t in trees[1:]:
        np.testing.assert_array_equal(t.feature, trees[0].feature)
        np.testing.assert_array_equal(t.threshold, trees[0].threshold)
        np.testing.assert_array_equal(t.missing_go_to_left, trees[0].missing_go_to_left)
        np.testing.assert_array_equal(t.decision, trees[0].decision)
        np.testing.assert_allclose(t.loss, trees[0].loss, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("a,missing", [(1.0, 0.0), (0.4, 0.0), (1.0, 0.1)])
@pytest.mark.parametrize("resources", [1, 2])
def test_knapsack_solver_path_with_bounds_equals_exhaustive_vertex_path(a, missing,
                                                                         resources):
    # The solver path skips the exact solves of candidates that its bounds
    # rule out; the vertex path scores every candidate exactly (all 0/1
    # points listed). Many rows and near-equal children make the bounds
    # tight, so a bound that were invalid, or a margin too small, would
    # change some split. With missing values, a left child with the missing
    # rows does not hold the rows of the earlier ones without them: a sweep's
    # loss bound taken from it, or its early stop, would be wrong there.
    rng = np.random.default_rng(40 + resources)
    n_items = 9
    weights = rng.integers(1, 6, size=(resources, n_items)).astype(float)
    problem = Knapsack(weights, weights.sum(axis=1) / 2.5)
    X = rng.normal(size=(400, 3))
    C = np.exp(0.3 * rng.normal(size=(400, n_items)) + 0.5 * X[:, :1] * rng.normal(size=n_items))
    X[rng.uniform(size=X.shape) < missing] = np.nan
    w = np.ones(400)
    trees = [_grow(problem, X, C, w, path, a=a, min_leaf_cnt=5, max_depth=4)
             for path in ("vertex", "solver")]
    assert trees[0].node_count > 7
    np.testing.assert_array_equal(trees[1].feature, trees[0].feature)
    np.testing.assert_array_equal(trees[1].threshold, trees[0].threshold)
    np.testing.assert_array_equal(trees[1].missing_go_to_left, trees[0].missing_go_to_left)
    np.testing.assert_array_equal(trees[1].decision, trees[0].decision)
    np.testing.assert_allclose(trees[1].loss, trees[0].loss, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("sense,missing", [("min", 0.0), ("max", 0.0), ("min", 0.1)])
def test_dag_block_solves_equal_the_exhaustive_vertex_path(sense, missing):
    # The solver path solves the children of DAG_BLOCK consecutive thresholds
    # at once and scores them afterwards; the vertex path scores every
    # candidate from the listed paths. Hundreds of candidates per feature
    # (many full blocks and a partial last one), repeated values, weights
    # (zeros drop rows) and near-equal candidates: a lane scored against the
    # wrong threshold, z sum or order would change some split. The sweeps
    # stop early on a bound of the left child's loss; with missing values
    # the scalar solves do (no blocks).
    problem = ShortestPath.from_edges(6, DAG_EDGES, 0, 5, sense=sense)
    rng = np.random.default_rng(8)
    n = 500
    X = np.round(rng.normal(size=(n, 3)), 2)
    C = np.exp(0.3 * rng.normal(size=(n, len(DAG_EDGES))) + 0.4 * X[:, :1]
               * rng.normal(size=len(DAG_EDGES)))
    X[rng.uniform(size=X.shape) < missing] = np.nan
    w = rng.integers(0, 4, size=n).astype(float)
    trees = [_grow(problem, X, C, w, path, a=1.0, min_leaf_cnt=5, max_depth=5)
             for path in ("vertex", "solver")]
    assert trees[0].node_count > 15
    np.testing.assert_array_equal(trees[1].feature, trees[0].feature)
    np.testing.assert_array_equal(trees[1].threshold, trees[0].threshold)
    np.testing.assert_array_equal(trees[1].missing_go_to_left, trees[0].missing_go_to_left)
    np.testing.assert_array_equal(trees[1].decision, trees[0].decision)
    np.testing.assert_allclose(trees[1].loss, trees[0].loss, rtol=1e-9, atol=1e-9)


def test_entry_point_key_separates_what_numba_types_apart():
    # The growth loop calls grow_step's compiled entry point found by a key
    # of its arguments' types: two values may share a key only if numba
    # types them alike (else the wrong compiled code would read them).
    from numba import typeof

    from spotree.problems._compiled import KIND_DAG, KIND_GRID, solver_function
    from spotree.tree._builder import _ENTRY_POINTS, _type_key

    a = np.zeros((3, 4))
    ro = a.copy()
    ro.setflags(write=False)
    values = [a, np.zeros((3, 4), order="F"), a[:, ::2], ro, np.zeros((3, 4), dtype=np.int64),
              np.zeros((3, 4), dtype=np.int32), np.zeros(4), np.zeros((1, 3, 4)), 1, 1.0,
              True, None, 2 ** 63, (a, 1), (a, 1.0), (ro, 1), solver_function(KIND_DAG),
              solver_function(KIND_GRID)]
    for i, u in enumerate(values):
        for v in values[i + 1:]:
            if typeof(u) != typeof(v):
                assert _type_key(u) != _type_key(v), (u, v)
    # And the loop grows the same tree through it as through the dispatcher.
    problem = ShortestPath((3, 3))
    X, C = _data(problem, 1, n=40)
    w = np.ones(40)
    _ENTRY_POINTS.clear()
    first = _grow(problem, X, C, w, "solver", a=1.0)  # through the dispatcher
    assert _ENTRY_POINTS
    again = _grow(problem, X, C, w, "solver", a=1.0)  # through the entry point
    np.testing.assert_array_equal(first.feature, again.feature)
    np.testing.assert_array_equal(first.threshold, again.threshold)


def test_growth_without_numba_entry_points_goes_through_the_dispatcher(monkeypatch):
    # Where numba's internals differ (no ``overloads``), the loop keeps
    # calling grow_step itself and grows the same tree.
    import spotree.tree._builder as builder

    problem = ShortestPath((3, 3))
    X, C = _data(problem, 2, n=60)
    w = np.ones(60)
    builder._ENTRY_POINTS.clear()
    want = _grow(problem, X, C, w, "solver", a=1.0)
    real = builder.grow_step
    calls = []

    def plain(*args):  # a callable without numba's attributes
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(builder, "grow_step", plain)
    builder._ENTRY_POINTS.clear()
    got = _grow(problem, X, C, w, "solver", a=1.0)
    assert calls and not builder._ENTRY_POINTS
    for name in ("feature", "threshold", "children_left", "children_right", "value"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))


def test_mixed_criterion_when_the_root_regret_is_rounding():
    # Every row's best option is the same, so the root's SPO loss is 0 up to
    # rounding (1.2e-16 here): the mixed criterion's SPO normalizer is then 1
    # and the squared-error part decides the splits. (The reference builder
    # used the rounding as normalizer and refused every split.)
    from spotree import SPOTree

    V = np.array([[-0.899710606559248, 1.0428812816933384, -2.0188184833147806],
                  [0.8359872234555566, 0.1641079052451764, 0.036858045644079795],
                  [1.762647475275276, -0.4508307948963284, 0.09847883189832177]])
    problem = FiniteDecisions(V)
    X = np.array([[2.0], [0.0], [0.0], [1.0], [1.0], [0.0]])
    C = np.array([[-0.5188793002426841, 1.7099394560668222, -0.052679817012029],
                  [-0.6191292240696883, -0.1476931343065877, -0.0917061938021924],
                  [-0.8250540938918817, -0.1355866565480372, 0.34965527541484104],
                  [-0.6684292785193999, 0.4040362373671822, 0.22818899618668095],
                  [0.21094824596338774, 1.9060623666329137, -1.4112570532365394],
                  [-0.7669657435112681, -0.8276294292090172, 0.2633790730632233]])
    ref = ReferenceTree(problem, X, C, a=0.5, min_leaf=3, min_split=5, thresholds=1)
    assert 0 < abs(ref.nodes[0]["loss"]) < 1e-15 and len(ref.nodes) == 3
    est = SPOTree(problem, spo_weight=0.5, min_samples_leaf=3, min_samples_split=5,
                  thresholds=1).fit(X, C)
    t = est.tree_
    assert t.node_count == 3 and est.loss_scales_[0] == 1.0
    leaf_of = t.apply(X)
    ref_leaf = ref.leaf_of_rows()
    assert len(set(zip(leaf_of.tolist(), ref_leaf.tolist()))) == 2
    np.testing.assert_allclose(np.sort(t.impurity[t.is_leaf]),
                               np.sort([nd["impurity"] for nd in ref.nodes if nd["left"] < 0]),
                               rtol=1e-9, atol=1e-12)


def _assert_same_partition(tree, ref, X, w):
    """The same features, rows and decisions at every node (the losses left out)."""
    rows = np.flatnonzero(w > 0)
    node_rows = _node_rows(tree, X, rows)

    def walk(t, r):
        node = ref.nodes[r]
        assert sorted(node_rows[t]) == sorted(node["idx"]), f"rows of node {t}"
        np.testing.assert_allclose(tree.decision[t], node["decision"], atol=1e-9)
        assert (tree.children_left[t] < 0) == (node["left"] < 0), f"node {t}"
        if tree.children_left[t] >= 0:
            assert tree.feature[t] == node["feature"]
            walk(tree.children_left[t], node["left"])
            walk(tree.children_right[t], node["right"])

    walk(0, 0)


@pytest.mark.parametrize("fraction", [0.0, 0.2])
def test_spotree_with_weights_whose_total_passes_the_float_range(fraction):
    # Weights times 2^1020: each finite, their total not. The least leaf weight
    # was min_weight_fraction_leaf * sum(w) = 0 * inf = NaN, which refused
    # every split: a stump (1 node instead of 15 here, 1 instead of 5 with 0.2).
    from spotree import SPOTree

    problem = ShortestPath((3, 3))
    X, C = _data(problem, 4, n=20)
    w = np.random.default_rng(5).integers(1, 4, size=20).astype(float)
    ref = ReferenceTree(problem, X, C, w, max_depth=3, min_weight=fraction * w.sum())
    assert ref.nodes[0]["left"] >= 0 and len(ref.nodes) > 3
    est = SPOTree(problem, max_depth=3, min_weight_fraction_leaf=fraction)
    with np.errstate(over="ignore"):  # the root's weight, stored, is not a float
        est.fit(X, C, sample_weight=w * 2.0 ** 1020)
    _assert_same_partition(est.tree_, ref, X, w)


def _owner(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


@pytest.mark.parametrize("problem, kw", [
    (ShortestPath((3, 3)), {}),                        # vertex path
    (ShortestPath((3, 3)), {"spo_weight": 0.5}),       # mixed criterion
    (Knapsack(np.ones((1, 5)), [2.0]), {}),             # compiled solver
    (ShortestPath((3, 3)), {"criterion": "mse"}),
])
def test_fitted_tree_arrays_hold_only_their_nodes(problem, kw):
    # The growth allocates its node arrays for the most nodes the rules allow
    # (here 2 * (200 // 5 + 1) - 1 = 81); the fitted tree kept views of some
    # of them, and with them the whole buffers, for as long as the tree lived.
    from spotree import SPOTree

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    C = rng.uniform(1, 2, size=(200, problem.n_costs))
    tree = SPOTree(problem, min_samples_leaf=5, **kw).fit(X, C).tree_
    assert tree.node_count < 81
    for name, a in vars(tree).items():
        if isinstance(a, np.ndarray) and a.size:
            assert _owner(a).nbytes == a.nbytes, name
