"""Root split of SPOTree against brute force over every candidate partition (every path).

Every candidate partition is scored from scratch: the weighted mean cost of
each child, one oracle call on that mean, and the weighted SPO loss
``sum_i w_i * sign * (c_i^T w*(mean) - z*(c_i))`` (or the weighted sum of
squared errors for ``criterion="mse"``). Nothing here uses the running sums,
the vertex matrix G or the quantile code of the library.
"""

import itertools

import numpy as np
import pytest

from spotree import SPOTree
from spotree.problems import CallableProblem, FiniteDecisions, LinearProgram, ShortestPath

SEEDS = range(6)


# ---------------------------------------------------------------- problems
def _random_finite(seed, sense="min"):
    rng = np.random.default_rng(1000 + seed)
    return FiniteDecisions(rng.uniform(-1.0, 1.0, size=(5, 4)), sense=sense)


def _oracle_only(problem):
    """The same problem seen only through its batch oracle (no vertex list)."""

    def oracle(C):
        return problem.solve(C)[0]

    return CallableProblem(oracle, n_costs=problem.n_costs, sense=problem.sense,
                           batched=True)


PROBLEMS = {
    "sp22": lambda s: ShortestPath((2, 2)),
    "sp33": lambda s: ShortestPath((3, 3)),
    "sp33-max": lambda s: ShortestPath((3, 3), sense="max"),
    "two-roads": lambda s: FiniteDecisions(np.eye(2)),
    "finite-random": lambda s: _random_finite(s),
    "finite-random-max": lambda s: _random_finite(s, sense="max"),
    "sp33-oracle": lambda s: _oracle_only(ShortestPath((3, 3))),
    "finite-oracle-max": lambda s: _oracle_only(_random_finite(s, sense="max")),
}


def _data(problem, seed, n=None, p=3, rounded=True):
    """Small data; rounding X to one decimal makes repeated feature values likely."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 13)) if n is None else n
    X = rng.uniform(0.0, 1.0, size=(n, p))
    if rounded:
        X = np.round(X, 1)
    C = rng.uniform(0.2, 2.0, size=(n, problem.n_costs))
    return X, C


# ------------------------------------------------------------ brute force
def spo_loss_of_partition(problem, C, w, masks):
    """Weighted SPO loss of a partition, every child's decision from its own mean."""
    _, z = problem.solve(C)
    total = 0.0
    for m in masks:
        if w[m].sum() == 0:
            continue
        mean = (w[m, None] * C[m]).sum(axis=0) / w[m].sum()
        W, _ = problem.solve(mean[None, :])
        total += float(np.sum(w[m] * problem.sign * (C[m] @ W[0] - z[m])))
    return total


def sse_of_partition(C, w, masks):
    total = 0.0
    for m in masks:
        if w[m].sum() == 0:
            continue
        mean = (w[m, None] * C[m]).sum(axis=0) / w[m].sum()
        total += float(np.sum(w[m] * ((C[m] - mean) ** 2).sum(axis=1)))
    return total


def numeric_partitions(X, features, thresholds="all"):
    """Left masks of every candidate threshold of the given numeric features.

    ``"all"``: x <= u_k for every pair of consecutive distinct values.
    ``q`` (int): x <= t for t the linear-interpolation quantile of the node's
    sorted values at levels k / (q + 1), k = 1..q.
    """
    for j in features:
        x = X[:, j]
        if thresholds == "all":
            cuts = np.unique(x)[:-1]
        else:
            levels = np.arange(1, thresholds + 1) / (thresholds + 1.0)
            cuts = np.quantile(np.sort(x), levels, method="linear")
        for t in cuts:
            left = x <= t
            if 0 < left.sum() < x.size:
                yield j, left


def equality_partitions(X, j):
    for c in np.unique(X[:, j]):
        yield j, X[:, j] == c


def subset_partitions(X, j):
    cats = np.unique(X[:, j])
    for r in range(1, cats.size):
        for left_set in itertools.combinations(cats, r):
            yield j, np.isin(X[:, j], left_set)


def _key(mask):
    """A partition up to swapping its sides."""
    return tuple(mask if mask[0] else ~mask)


def brute_force_best(candidates, loss, w, min_leaf=1, min_weight=0.0):
    """Every admissible candidate (deduplicated by partition) with its loss, best first.

    ``min_leaf`` counts the samples of each side, ``min_weight`` weighs them.
    """
    seen = {}
    for j, left in candidates:
        if left.sum() < min_leaf or (~left).sum() < min_leaf:
            continue
        if w[left].sum() < min_weight or w[~left].sum() < min_weight:
            continue
        k = _key(left)
        if k not in seen:
            seen[k] = (loss([left, ~left]), j, left)
    return sorted(seen.values(), key=lambda r: r[0])


def tree_root_partition(tree, X):
    t = tree.tree_
    j = t.feature[0]
    if t.categories[0].size:
        return j, np.isin(X[:, j], t.categories[0])
    return j, X[:, j] <= t.threshold[0]


def check_root(tree, X, C, w, ranked, loss, root_loss):
    """The tree's root split is a brute-force best one (the best itself if unique)."""
    scale = max(abs(root_loss), 1.0)
    tol = 1e-9 * scale
    t = tree.tree_
    if t.node_count == 1:
        # A single leaf is only right if no admissible split lowers the loss.
        assert not ranked or ranked[0][0] >= root_loss - tol or root_loss <= tol
        return
    j, left = tree_root_partition(tree, X)
    got = loss([left, ~left])
    best = ranked[0][0]
    assert got == pytest.approx(best, rel=1e-9, abs=tol)
    # The stored child losses are the same number.
    assert t.impurity[1] + t.impurity[2] == pytest.approx(best, rel=1e-9, abs=tol)
    if len(ranked) == 1 or ranked[1][0] > best + 1e-7 * scale:
        assert _key(left) == _key(ranked[0][2])
        assert j == ranked[0][1]


# ------------------------------------------------------------------ tests
@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_root_split_spo_matches_brute_force(name, seed, weighted):
    problem = PROBLEMS[name](seed)
    X, C = _data(problem, seed)
    rng = np.random.default_rng(seed + 77)
    w = rng.integers(1, 4, size=X.shape[0]).astype(float) if weighted else np.ones(len(X))
    tree = SPOTree(problem, max_depth=1).fit(X, C, sample_weight=w if weighted else None)

    def loss(masks):
        return spo_loss_of_partition(problem, C, w, masks)

    ranked = brute_force_best(numeric_partitions(X, range(X.shape[1])), loss, w)
    root_loss = loss([np.ones(len(X), dtype=bool)])
    assert tree.tree_.loss[0] == pytest.approx(root_loss, rel=1e-9, abs=1e-9)
    check_root(tree, X, C, w, ranked, loss, root_loss)


@pytest.mark.parametrize("name", ["sp33", "finite-random-max", "sp33-oracle"])
@pytest.mark.parametrize("seed", SEEDS)
def test_root_split_respects_min_samples_leaf(name, seed):
    problem = PROBLEMS[name](seed)
    X, C = _data(problem, seed, n=12)
    w = np.random.default_rng(seed).integers(1, 4, size=12).astype(float)
    min_leaf = 5
    tree = SPOTree(problem, max_depth=1, min_samples_leaf=min_leaf).fit(X, C, w)

    def loss(masks):
        return spo_loss_of_partition(problem, C, w, masks)

    ranked = brute_force_best(numeric_partitions(X, range(3)), loss, w, min_leaf=min_leaf)
    check_root(tree, X, C, w, ranked, loss, loss([np.ones(12, dtype=bool)]))
    if tree.tree_.node_count > 1:
        # A leaf may hold exactly min_samples_leaf samples (whatever their
        # weights), never fewer.
        assert tree.tree_.n_node_samples[1:].min() >= min_leaf


@pytest.mark.parametrize("name", ["sp33", "finite-random-max", "sp33-oracle"])
@pytest.mark.parametrize("seed", SEEDS)
def test_root_split_respects_min_weight_fraction_leaf(name, seed):
    problem = PROBLEMS[name](seed)
    X, C = _data(problem, seed, n=12)
    w = np.random.default_rng(seed).integers(1, 6, size=12).astype(float)
    frac = 0.3
    tree = SPOTree(problem, max_depth=1, min_weight_fraction_leaf=frac).fit(X, C, w)

    def loss(masks):
        return spo_loss_of_partition(problem, C, w, masks)

    ranked = brute_force_best(numeric_partitions(X, range(3)), loss, w,
                              min_weight=frac * w.sum())
    check_root(tree, X, C, w, ranked, loss, loss([np.ones(12, dtype=bool)]))
    if tree.tree_.node_count > 1:
        assert tree.tree_.weighted_n_node_samples[1:].min() >= frac * w.sum() - 1e-12


@pytest.mark.parametrize("name", ["sp33", "two-roads", "finite-random"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_root_split_mse_matches_brute_force(name, seed, weighted):
    problem = PROBLEMS[name](seed)
    X, C = _data(problem, seed)
    rng = np.random.default_rng(seed + 5)
    w = rng.integers(1, 4, size=X.shape[0]).astype(float) if weighted else np.ones(len(X))
    tree = SPOTree(problem, criterion="mse", max_depth=1).fit(X, C, sample_weight=w)

    def loss(masks):
        return sse_of_partition(C, w, masks)

    ranked = brute_force_best(numeric_partitions(X, range(3)), loss, w)
    root_loss = loss([np.ones(len(X), dtype=bool)])
    assert tree.tree_.impurity[0] == pytest.approx(root_loss, rel=1e-9)
    check_root(tree, X, C, w, ranked, loss, root_loss)


@pytest.mark.parametrize("name", ["sp33", "finite-random-max", "sp33-oracle", "two-roads"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("q", [1, 3, 4])
@pytest.mark.parametrize("criterion", ["spo", "mse"])
def test_root_split_quantile_thresholds(name, seed, q, criterion):
    problem = PROBLEMS[name](seed)
    # Unrounded features: a quantile cut never lands on a data value by accident.
    X, C = _data(problem, seed, n=12, rounded=False)
    w = np.ones(12)
    tree = SPOTree(problem, criterion=criterion, max_depth=1, thresholds=q).fit(X, C)

    def loss(masks):
        if criterion == "mse":
            return sse_of_partition(C, w, masks)
        return spo_loss_of_partition(problem, C, w, masks)

    ranked = brute_force_best(numeric_partitions(X, range(3), thresholds=q), loss, w)
    check_root(tree, X, C, w, ranked, loss, loss([np.ones(12, dtype=bool)]))
    if tree.tree_.node_count > 1:
        # The chosen partition is one of the quantile candidates.
        _, left = tree_root_partition(tree, X)
        assert _key(left) in {_key(r[2]) for r in ranked}


def test_quantile_candidates_are_a_subset_of_all():
    # With q thresholds, the root's loss can only be worse or equal than with all.
    problem = ShortestPath((3, 3))
    for seed in SEEDS:
        X, C = _data(problem, seed, n=12, rounded=False)
        full = SPOTree(problem, max_depth=1).fit(X, C).tree_
        quant = SPOTree(problem, max_depth=1, thresholds=2).fit(X, C).tree_
        if quant.node_count > 1:
            assert full.loss[1] + full.loss[2] <= quant.loss[1] + quant.loss[2] + 1e-9


@pytest.mark.parametrize("name", ["sp33", "finite-random", "sp33-oracle", "two-roads"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("splits", ["equal", "subset"])
def test_root_split_categorical_matches_brute_force(name, seed, splits):
    problem = PROBLEMS[name](seed)
    X, C = _data(problem, seed, n=12)
    rng = np.random.default_rng(seed + 11)
    X[:, 0] = rng.integers(0, 4, size=12)  # codes of a categorical feature
    w = rng.integers(1, 3, size=12).astype(float)
    tree = SPOTree(problem, max_depth=1, categorical_features=[0],
                   categorical_splits=splits).fit(X, C, w)

    def loss(masks):
        return spo_loss_of_partition(problem, C, w, masks)

    cat = equality_partitions(X, 0) if splits == "equal" else subset_partitions(X, 0)
    cands = itertools.chain(cat, numeric_partitions(X, [1, 2]))
    ranked = brute_force_best(cands, loss, w)
    check_root(tree, X, C, w, ranked, loss, loss([np.ones(12, dtype=bool)]))
    t = tree.tree_
    if t.node_count > 1 and t.feature[0] == 0:
        assert t.categories[0].size >= 1
        if splits == "equal":
            assert t.categories[0].size == 1


def test_categorical_only_feature_equality_vs_subset():
    # Categories {0, 1} are cheap on road 0, {2, 3} on road 1: a subset split
    # separates them in one cut; equality splits need two levels.
    problem = FiniteDecisions(np.eye(2))
    x = np.repeat([0.0, 1.0, 2.0, 3.0], 3)
    C = np.where(np.isin(x, [0.0, 1.0])[:, None], [1.0, 2.0], [2.0, 1.0])
    C = C + np.linspace(0, 0.1, 12)[:, None]
    X = x[:, None]
    sub = SPOTree(problem, max_depth=1, categorical_features=[0],
                  categorical_splits="subset").fit(X, C)
    assert sub.tree_.loss[1] + sub.tree_.loss[2] == pytest.approx(0.0, abs=1e-12)
    assert set(sub.tree_.categories[0]) in ({0.0, 1.0}, {2.0, 3.0})
    eq = SPOTree(problem, max_depth=1, categorical_features=[0]).fit(X, C)
    assert eq.tree_.categories[0].size == 1
    assert eq.tree_.loss[1] + eq.tree_.loss[2] > 0.0


def test_ties_go_to_the_lowest_feature_index():
    # Identical columns give identical candidates: the documented tie rule
    # (lowest feature index, then lowest threshold) picks feature 0.
    problem = ShortestPath((3, 3))
    for seed in SEEDS:
        X, C = _data(problem, seed, n=12, rounded=False)
        X3 = np.column_stack([X[:, 1], X[:, 1], X[:, 1]])
        tree = SPOTree(problem, max_depth=1).fit(X3, C)
        if tree.tree_.node_count > 1:
            assert tree.tree_.feature[0] == 0


def test_thresholds_separate_neighbouring_values():
    # The stored threshold lies between the two values it separates, so
    # routing the training data reproduces the partition that was scored.
    problem = FiniteDecisions(np.eye(2))
    X = np.array([[0.1], [0.2], [0.2], [0.3], [0.7], [0.8]])
    C = np.array([[1, 2], [1, 2], [1, 2], [2, 1], [2, 1], [2, 1]], dtype=float)
    t = SPOTree(problem, max_depth=1).fit(X, C).tree_
    assert 0.2 <= t.threshold[0] < 0.3
    assert t.loss[1] == t.loss[2] == 0.0


def test_linear_program_oracle_path_matches_vertex_problem():
    # The probability simplex solved by HiGHS, with vertex enumeration switched
    # off, is "choose the cheapest coordinate". (Written with 2s: a row of 1s
    # would be recognized as a network of parallel edges and solved without HiGHS.)
    lp = LinearProgram(A_eq=2.0 * np.ones((1, 3)), b_eq=[2.0], bounds=(0, None))
    assert lp.compiled_oracle() is None
    lp.max_bases_enumerated = 0
    assert lp.vertices() is None
    fin = FiniteDecisions(np.eye(3))
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(40, 2))
    C = rng.uniform(0.5, 1.5, size=(40, 3)) + np.column_stack([X[:, 0], X[:, 1], 0 * X[:, 0]])
    a = SPOTree(lp, max_depth=2).fit(X, C).tree_
    b = SPOTree(fin, max_depth=2).fit(X, C).tree_
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_allclose(a.threshold, b.threshold)
    np.testing.assert_allclose(a.decision, b.decision, atol=1e-9)
    np.testing.assert_allclose(a.loss, b.loss, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("make", [lambda s: ShortestPath((3, 3)),
                                  lambda s: ShortestPath((2, 3), sense="max"),
                                  lambda s: _random_finite(s)])
def test_oracle_path_grows_the_same_tree(seed, make):
    problem = make(seed)
    oracle = _oracle_only(problem)
    assert oracle.vertices() is None and problem.vertices() is not None
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(40, 3))
    C = rng.uniform(0.2, 2.0, size=(40, problem.n_costs))
    w = rng.integers(1, 4, size=40).astype(float)
    for kw in [dict(max_depth=3), dict(max_depth=3, thresholds=5),
               dict(min_samples_leaf=4)]:
        a = SPOTree(problem, **kw).fit(X, C, w).tree_
        b = SPOTree(oracle, **kw).fit(X, C, w).tree_
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_allclose(a.threshold, b.threshold)
        np.testing.assert_allclose(a.value, b.value, rtol=1e-12)
        np.testing.assert_array_equal(a.decision, b.decision)
        np.testing.assert_allclose(a.loss, b.loss, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_subset_search_falls_back_to_one_vs_rest_beyond_ten_categories(seed):
    problem = _random_finite(seed)
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.arange(24) % 12, rng.uniform(size=24)]).astype(float)
    C = rng.uniform(0.2, 2.0, size=(24, problem.n_costs))
    w = np.ones(24)
    tree = SPOTree(problem, max_depth=1, categorical_features=[0],
                   categorical_splits="subset").fit(X, C)

    def loss(masks):
        return spo_loss_of_partition(problem, C, w, masks)

    ranked = brute_force_best(itertools.chain(equality_partitions(X, 0),
                                              numeric_partitions(X, [1])), loss, w)
    check_root(tree, X, C, w, ranked, loss, loss([np.ones(24, dtype=bool)]))
    if tree.tree_.feature[0] == 0:
        assert tree.tree_.categories[0].size == 1


def test_subset_search_tries_every_subset_of_exactly_ten_categories():
    # "Up to 10 categories per node" (categorical_splits="subset"): ten are
    # still searched by subsets, and here the best split is no single category.
    problem = _random_finite(0)
    rng = np.random.default_rng(0)
    X = np.column_stack([np.arange(20) % 10, rng.uniform(size=20)]).astype(float)
    C = rng.uniform(0.2, 2.0, size=(20, problem.n_costs))
    w = np.ones(20)
    tree = SPOTree(problem, max_depth=1, categorical_features=[0],
                   categorical_splits="subset").fit(X, C)
    _, z = problem.solve(C)

    def loss(masks):  # spo_loss_of_partition with z solved once (511 subsets)
        return sum(float(np.sum(C[m] @ problem.solve(C[m].mean(axis=0)[None, :])[0][0] - z[m]))
                   for m in masks if m.any())

    ranked = brute_force_best(itertools.chain(subset_partitions(X, 0),
                                              numeric_partitions(X, [1])), loss, w)
    one = brute_force_best(equality_partitions(X, 0), loss, w)
    assert ranked[0][0] < one[0][0] - 1e-9
    check_root(tree, X, C, w, ranked, loss, loss([np.ones(20, dtype=bool)]))


# finite-random-max with seed 2 has a zero root SPO loss (computed up to rounding noise).
_MIXED_CASES = [(n, s) for n in ("sp33", "finite-random-max") for s in SEEDS]


def _mixed_loss(problem, C, w, a):
    """loss = a * SPO / SPO_root + (1 - a) * SSE / SSE_root, the root's losses as scales."""
    everything = [np.ones(len(C), dtype=bool)]
    spo_root = spo_loss_of_partition(problem, C, w, everything)
    sse_root = sse_of_partition(C, w, everything)
    # A zero root loss cannot normalize: that part is then left unscaled.
    spo_root, sse_root = spo_root or 1.0, sse_root or 1.0

    def loss(masks):
        return (a * spo_loss_of_partition(problem, C, w, masks) / spo_root
                + (1 - a) * sse_of_partition(C, w, masks) / sse_root)

    return loss


@pytest.mark.parametrize("name, seed", _MIXED_CASES)
@pytest.mark.parametrize("a", [0.3, 0.8])
def test_root_split_mixed_criterion_matches_brute_force(name, seed, a):
    problem = PROBLEMS[name](seed)
    X, C = _data(problem, seed)
    w = np.ones(len(X))
    tree = SPOTree(problem, spo_weight=a, max_depth=1).fit(X, C)
    loss = _mixed_loss(problem, C, w, a)
    ranked = brute_force_best(numeric_partitions(X, range(3)), loss, w)
    root = loss([w > 0])
    assert tree.tree_.impurity[0] == pytest.approx(root)
    check_root(tree, X, C, w, ranked, loss, root)


@pytest.mark.parametrize("a", [0.3, 0.8])
def test_mixed_criterion_with_a_zero_spo_root_loss(a):
    problem = PROBLEMS["finite-random-max"](2)
    X, C = _data(problem, 2)
    w = np.ones(len(X))
    assert spo_loss_of_partition(problem, C, w, [w > 0]) == 0.0
    tree = SPOTree(problem, spo_weight=a, max_depth=1).fit(X, C)
    loss = _mixed_loss(problem, C, w, a)
    ranked = brute_force_best(numeric_partitions(X, range(3)), loss, w)
    _, left = tree_root_partition(tree, X)
    assert loss([left, ~left]) == pytest.approx(ranked[0][0], rel=1e-9)
    assert tree.tree_.impurity[0] == pytest.approx(1 - a)


def test_a_root_with_zero_spo_loss_is_not_split():
    problem = PROBLEMS["finite-random-max"](2)
    X, C = _data(problem, 2)
    w = np.ones(len(X))
    assert spo_loss_of_partition(problem, C, w, [w > 0]) == 0.0
    assert SPOTree(problem).fit(X, C).get_n_leaves() == 1
