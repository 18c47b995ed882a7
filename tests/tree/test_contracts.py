"""Contracts of the growth routine that a self-comparison could not check.

- feature bagging draws ``max_features`` features uniformly at every node;
- scaling the costs by any positive factor that does not overflow grows the
  same tree (and the same decisions) on every split-search path, and so does
  scaling the weights;
- extreme feature values (near the float range) split without overflow;
- the compiled kernels' cache lives outside the package, keyed by their source.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from spotree import OptimalSPOTree, SPOTree
from spotree.problems import CallableProblem, FiniteDecisions, ShortestPath
from spotree.tree._builder import grow_tree
from spotree.tree._fit_data import FitData


# ------------------------------------------------------- feature bagging
def _ranked_features_data(p=5, n=200, seed=0):
    """Feature j separates the two roads perfectly up to noise level j: f0 is best."""
    rng = np.random.default_rng(seed)
    y = rng.uniform(size=n) < 0.5
    X = np.empty((n, p))
    for j in range(p):
        flip = rng.uniform(size=n) < 0.04 * (j + 1)
        X[:, j] = np.where(y ^ flip, 1.0, 0.0) + rng.uniform(0, 0.5, size=n)
    C = np.column_stack([np.where(y, 1.0, 3.0), np.full(n, 2.0)])
    return X, C


@pytest.mark.parametrize("k", [1, 2, 3])
def test_max_features_draws_k_of_p_features_uniformly(k):
    p, n_trees = 5, 600
    X, C = _ranked_features_data(p)
    roads = FiniteDecisions(np.eye(2))
    loss = {}
    for j in range(p):
        t = SPOTree(roads, max_depth=1).fit(X[:, [j]], C).tree_
        loss[j] = t.loss[t.children_left[0]] + t.loss[t.children_right[0]]
    order = sorted(range(p), key=loss.get)
    assert order == list(range(p))  # the data make f0 best, then f1, ...
    roots = np.array([SPOTree(roads, max_depth=1, max_features=k, random_state=s)
                      .fit(X, C).tree_.feature[0] for s in range(n_trees)])
    # With a uniform draw of k features the root is feature j when j is drawn
    # and no better one is: C(p - 1 - j, k - 1) / C(p, k).
    expected = np.array([math.comb(p - 1 - j, k - 1) / math.comb(p, k) for j in range(p)])
    observed = np.bincount(roots, minlength=p) / n_trees
    z = (observed - expected) / np.sqrt(np.maximum(expected * (1 - expected), 1e-12) / n_trees)
    assert np.abs(z).max() < 4.5, (observed, expected)
    assert (observed[expected == 0] == 0).all()


def test_max_features_redraws_at_every_node():
    # Depth 2: the left and right children draw their own features.
    X, C = _ranked_features_data(4, n=400, seed=1)
    roads = FiniteDecisions(np.eye(2))
    pairs = set()
    for s in range(60):
        t = SPOTree(roads, max_depth=2, max_features=1, random_state=s).fit(X, C).tree_
        if t.node_count == 7:
            pairs.add((t.feature[0], t.feature[1], t.feature[2]))
    # One draw per tree would give feature[0] == feature[1] == feature[2].
    assert any(len(set(p)) > 1 for p in pairs)


# ----------------------------------------------------------- scale
def _sp_data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    C = np.exp(0.5 * rng.normal(size=(n, 12)) + 0.3 * X[:, :1])
    return X, C


@pytest.mark.parametrize("factor", [1e-13, 1e-11, 3.7, 1e100, 2.0 ** 900])
@pytest.mark.parametrize("path", ["vertex", "solver", "oracle"])
@pytest.mark.parametrize("a", [1.0, 0.0, 0.5])
def test_scaling_the_costs_grows_the_same_tree(factor, path, a):
    problem = ShortestPath((3, 3))
    X, C = _sp_data()
    trees = []
    for Cx in (C, C * factor):
        data = FitData(problem, X, Cx, np.zeros(3, dtype=bool), need_spo=a > 0, path=path)
        tree, _, _ = grow_tree(data, np.ones(len(X)), np.ones(len(X)), a=a, max_depth=4,
                               min_leaf_cnt=10, min_leaf_w=0.0, min_split_cnt=2,
                               max_features=None, n_quantiles=0, min_loss_decrease=0.0,
                               seed=0)
        trees.append(tree)
    t0, t1 = trees
    assert t0.node_count > 3
    assert_array_equal(t0.feature, t1.feature)
    assert_array_equal(t0.threshold, t1.threshold)
    assert_array_equal(t0.decision, t1.decision)
    np.testing.assert_allclose(t1.value, t0.value * factor, rtol=1e-12)
    np.testing.assert_allclose(t1.loss, t0.loss * factor, rtol=1e-9)


@pytest.mark.parametrize("factor", [1e-13, 1e150])
def test_estimators_are_scale_invariant(factor):
    problem = ShortestPath((3, 3))
    X, C = _sp_data(200, seed=2)
    for make in (lambda: SPOTree(problem, max_depth=3, min_samples_leaf=20),
                 lambda: SPOTree(problem, criterion="mse", max_depth=3, min_samples_leaf=20),
                 lambda: OptimalSPOTree(problem, max_depth=2, min_samples_leaf=20,
                                        global_thresholds=8)):
        a = make().fit(X, C)
        b = make().fit(X, C * factor)
        assert a.tree_.node_count > 1
        assert_array_equal(a.tree_.feature, b.tree_.feature)
        assert_array_equal(a.tree_.threshold, b.tree_.threshold)
        assert_array_equal(a.predict_decision(X), b.predict_decision(X))
        assert a.score(X, C) == pytest.approx(b.score(X, C * factor), rel=1e-9)


@pytest.mark.parametrize("factor", [1e-200, 3.0, 1e200])
@pytest.mark.parametrize("path", ["vertex", "solver", "oracle"])
@pytest.mark.parametrize("a", [1.0, 0.0, 0.5])
def test_scaling_the_weights_grows_the_same_tree(factor, path, a):
    """Weights times a constant: the same splits, the weighted sums times it.

    The squared-error sums hold the square of the total weight: beyond about
    1e+-160 it under- or overflowed, and a squared-error or mixed tree (or an
    SPO tree's zero-gain splits, which squared error chooses) came out
    different: 7 nodes instead of 15 at 1e-200, a single leaf at 1e200."""
    problem = ShortestPath((3, 3))
    X, C = _sp_data()
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(X))
    trees = []
    for scale in (1.0, factor):
        data = FitData(problem, X, C, np.zeros(3, dtype=bool), need_spo=a > 0, path=path)
        trees.append(grow_tree(data, w * scale, np.ones(len(X)), a=a, max_depth=4,
                               min_leaf_cnt=10, min_leaf_w=0.05 * w.sum() * scale,
                               min_split_cnt=2, max_features=None, n_quantiles=0,
                               min_loss_decrease=0.0, seed=0))
    (t0, imp0, scales0), (t1, imp1, scales1) = trees
    assert t0.node_count > 3
    assert_array_equal(t0.feature, t1.feature)
    assert_array_equal(t0.threshold, t1.threshold)
    assert_array_equal(t0.decision, t1.decision)
    np.testing.assert_allclose(t1.value, t0.value, rtol=1e-12)
    np.testing.assert_allclose(t1.weighted_n_node_samples, t0.weighted_n_node_samples * factor,
                               rtol=1e-12)
    np.testing.assert_allclose(t1.loss, t0.loss * factor, rtol=1e-9)
    # The mixed criterion has no unit; a pure one is a weighted sum.
    np.testing.assert_allclose(t1.impurity, t0.impurity * (factor if a in (0.0, 1.0) else 1.0),
                               rtol=1e-9)
    np.testing.assert_allclose(scales1, np.array(scales0) * (factor if 0 < a < 1 else 1.0),
                               rtol=1e-9)
    np.testing.assert_allclose(imp1 / imp1.sum(), imp0 / imp0.sum(), rtol=1e-9)


def test_estimators_are_invariant_to_scaling_the_weights():
    problem = ShortestPath((3, 3))
    X, C = _sp_data(200, seed=2)
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=200)
    for make in (lambda: SPOTree(problem, max_depth=3, min_samples_leaf=20),
                 lambda: SPOTree(problem, criterion="mse", max_depth=3, min_samples_leaf=20),
                 lambda: SPOTree(problem, spo_weight=0.5, max_depth=3,
                                 min_weight_fraction_leaf=0.05)):
        a = make().fit(X, C, w)
        for factor in (1e-200, 1e200):
            b = make().fit(X, C, w * factor)
            assert a.tree_.node_count > 1
            assert_array_equal(a.tree_.feature, b.tree_.feature)
            assert_array_equal(a.tree_.threshold, b.tree_.threshold)
            assert_array_equal(a.predict_decision(X), b.predict_decision(X))
            # Pruning reads the stored losses (and the mixed criterion's scales).
            assert (a.prune(X[:50], C[:50]).get_n_leaves()
                    == b.prune(X[:50], C[:50]).get_n_leaves())


# ----------------------------------------------------------- extremes
# Squared-error trees sweep on the node's centred costs where a node sweeps at
# least CENTRE_MIN_FEATURES features, on the costs themselves below: both
# sweeps are checked (1 or 2 features, and 10).
def _brute_force_mse_root(X, C, leaf):
    """(feature, threshold) of the best squared-error cut, costs centred first."""
    n = len(X)
    best = (np.inf, None, None)
    for f in range(X.shape[1]):
        order = np.argsort(X[:, f], kind="stable")
        xs, Cs = X[order, f], C[order] - C.mean(axis=0)
        cs, q = np.cumsum(Cs, axis=0), np.cumsum((Cs ** 2).sum(axis=1))
        for k in range(leaf, n - leaf + 1):
            if xs[k - 1] == xs[k]:
                continue
            sse = (q[k - 1] - (cs[k - 1] ** 2).sum() / k
                   + q[-1] - q[k - 1] - ((cs[-1] - cs[k - 1]) ** 2).sum() / (n - k))
            if sse < best[0]:
                best = (sse, f, (xs[k - 1] + xs[k]) / 2)
    return best[1], best[2]


@pytest.mark.parametrize("p", [1, 10])
def test_squared_error_split_of_costs_far_from_zero_matches_brute_force(p):
    # Costs at 1e6 with unit noise and a jump on the three largest x: the sums
    # of squares of a child are differences of numbers near 1e15 (a form that
    # expands |S_right|^2 as |S|^2 - 2 S.S_left + |S_left|^2 lost this split).
    rng = np.random.default_rng(0)
    n, d = 3000, 3
    X = np.column_stack([rng.permutation(n) for _ in range(p)]).astype(float)
    x = X[:, 0]
    C = 1e6 + rng.normal(0, 1, size=(n, d))
    C[x >= n - 3] += 50.0
    C[x < 1000] += 0.3 * np.sin(x[x < 1000])[:, None]
    tree = SPOTree(FiniteDecisions(np.eye(d)), criterion="mse", max_depth=1,
                   min_samples_leaf=1).fit(X, C).tree_
    f, thr = _brute_force_mse_root(X, C, 1)
    assert (f, thr) == (0, n - 3.5)  # the three jump rows alone on the right
    assert tree.feature[0] == f and tree.threshold[0] == thr


@pytest.mark.parametrize("p", [2, 10])
@pytest.mark.parametrize("seed", range(6))
def test_squared_error_root_split_with_ties_and_leaf_sizes_matches_brute_force(seed, p):
    # Integer features (runs of equal values) and a minimum leaf size: the
    # sweep passes rows it does not score, and their sums must still count.
    rng = np.random.default_rng(seed)
    n, d, leaf = 120, 4, 7
    X = rng.integers(0, 15, size=(n, p)).astype(float)
    C = 5.0 + rng.normal(size=(n, d)) + np.outer(np.sin(X[:, 0]) + 0.5 * X[:, 1], np.ones(d))
    tree = SPOTree(FiniteDecisions(np.eye(d)), criterion="mse", max_depth=1,
                   min_samples_leaf=leaf).fit(X, C).tree_
    f, thr = _brute_force_mse_root(X, C, leaf)
    assert tree.feature[0] == f and tree.threshold[0] == thr


@pytest.mark.parametrize("p", [2, 10])
def test_squared_error_root_split_on_noise_with_weights_matches_brute_force(p):
    # No signal: the best cut is decided by the noise alone, among near ties,
    # so an error in the criterion's weighting of the two children (even 1%
    # of one child's term) moves it on some draw.
    for seed in range(40):
        rng = np.random.default_rng(100 + seed)
        n, d, leaf = 150, 3, 5
        X = rng.normal(size=(n, p))
        C = 3.0 + rng.normal(size=(n, d))
        w = rng.uniform(0.2, 2.0, size=n)
        tree = SPOTree(FiniteDecisions(np.eye(d)), criterion="mse", max_depth=1,
                       min_samples_leaf=leaf).fit(X, C, sample_weight=w).tree_
        best = (np.inf, None, None)
        for f in range(p):
            order = np.argsort(X[:, f], kind="stable")
            xs, Cs, ws = X[order, f], C[order] - C.mean(axis=0), w[order]
            # Weighted sums: a child's SSE is sum w|c|^2 - |sum w c|^2 / sum w.
            W, S = np.cumsum(ws), np.cumsum(ws[:, None] * Cs, axis=0)
            Q = np.cumsum(ws * (Cs ** 2).sum(axis=1))
            k = np.arange(leaf, n - leaf + 1)
            sse = (Q[k - 1] - (S[k - 1] ** 2).sum(axis=1) / W[k - 1]
                   + Q[-1] - Q[k - 1] - ((S[-1] - S[k - 1]) ** 2).sum(axis=1) / (W[-1] - W[k - 1]))
            j = int(np.argmin(sse))
            if sse[j] < best[0]:
                best = (sse[j], f, (xs[k[j] - 1] + xs[k[j]]) / 2)
        assert (tree.feature[0], tree.threshold[0]) == best[1:], seed


@pytest.mark.parametrize("p", [2, 10])
def test_squared_error_tree_resumed_after_every_few_rows_is_the_same_tree(monkeypatch, p):
    # A sweep returns to Python when its work budget is spent and resumes
    # where it stopped (for Ctrl-C and progress); with a budget of a few rows
    # every node is swept in many calls, the centred costs kept between them.
    import spotree.tree._builder as builder

    rng = np.random.default_rng(11)
    n, d = 300, 4
    X = rng.normal(size=(n, p))
    C = 50.0 + rng.normal(size=(n, d)) + np.outer(np.sin(2 * X[:, 0]) + X[:, 1] ** 2,
                                                   np.ones(d))
    w = rng.uniform(0.5, 2.0, size=n)
    params = dict(criterion="mse", max_depth=4, min_samples_leaf=5)
    ref = SPOTree(FiniteDecisions(np.eye(d)), **params).fit(X, C, sample_weight=w).tree_
    monkeypatch.setattr(builder, "WORK_BUDGET", 40.0 * d)
    got = SPOTree(FiniteDecisions(np.eye(d)), **params).fit(X, C, sample_weight=w).tree_
    assert got.node_count == ref.node_count > 7
    for name in ("children_left", "feature", "threshold", "impurity"):
        np.testing.assert_array_equal(getattr(got, name), getattr(ref, name), err_msg=name)
    np.testing.assert_array_equal(got.value, ref.value)


def test_huge_feature_values_split_without_overflow():
    X = np.array([[-1.7e308, 0.0], [-1.7e308, 0.0], [-1e308, 1.0], [-1e308, 1.0]])
    C = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0], [2.0, 1.0]])
    roads = FiniteDecisions(np.eye(2))
    for cat in (None, [1]):
        for path in (None, "oracle"):
            est = SPOTree(roads if path is None else CallableProblem(
                lambda c: roads.solve(c)[0], 2, batched=True), categorical_features=cat)
            est.fit(X, C)
            t = est.tree_
            assert t.node_count == 3
            assert np.isfinite(t.threshold[0]) or t.categories[0].size
            assert est.score(X, C) == pytest.approx(0.0, abs=1e-12)
    t = SPOTree(roads).fit(X[:, :1], C).tree_
    assert -1.7e308 <= t.threshold[0] < -1e308


def test_feature_values_at_neighbouring_floats_are_separated():
    a = 1.0
    b = np.nextafter(a, 2.0)
    X = np.array([[a], [a], [b], [b]])
    C = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0], [2.0, 1.0]])
    t = SPOTree(FiniteDecisions(np.eye(2))).fit(X, C).tree_
    assert t.threshold[0] == a  # x <= a goes left, b right


# ------------------------------------------------------------ cache
def test_kernel_cache_is_outside_the_package_and_keyed_by_all_kernel_sources(tmp_path,
                                                                            monkeypatch):
    import pathlib

    import spotree
    from spotree import _numba

    folder = _numba.cache_dir()
    pkg = pathlib.Path(spotree.__file__).resolve().parent
    if folder is not None:
        assert pkg not in pathlib.Path(folder).resolve().parents
    # Any edit to any kernel module changes the folder's key.
    before = _numba._fingerprint()
    fake = tmp_path / "pkg"
    for rel in _numba.KERNEL_MODULES:
        (fake / rel).parent.mkdir(parents=True, exist_ok=True)
        (fake / rel).write_bytes((pkg / rel).read_bytes())
    monkeypatch.setattr(_numba, "_PKG", fake)
    assert _numba._fingerprint() == before
    for rel in _numba.KERNEL_MODULES:
        path = fake / rel
        original = path.read_bytes()
        path.write_bytes(original + b"\n# edited\n")
        assert _numba._fingerprint() != before, rel
        path.write_bytes(original)


def test_every_compiled_function_goes_through_the_cache_helper():
    import pathlib
    import re

    import spotree
    from spotree._numba import KERNEL_MODULES

    pkg = pathlib.Path(spotree.__file__).resolve().parent
    offenders, kernel_files = [], set()
    for path in pkg.rglob("*.py"):
        text = path.read_text()
        rel = path.relative_to(pkg).as_posix()
        if re.search(r"from numba import .*\bn?jit\b|numba\.n?jit\b", text) and \
                rel != "_numba.py":
            offenders.append(rel)
        if re.search(r"^@jit\b", text, flags=re.M):
            kernel_files.add(rel)
    assert not offenders
    # Their sources key the cache: every module with kernels must be listed.
    assert kernel_files <= set(KERNEL_MODULES), kernel_files - set(KERNEL_MODULES)


@pytest.mark.parametrize("param, value", [("ccp_alpha", 2.0), ("min_loss_decrease", 1.0)])
def test_scaled_weights_need_ccp_alpha_and_min_loss_decrease_scaled_alike(param, value):
    # Both are in units of the weighted loss (SPOTree.fit says so): weights
    # times 4 with the parameter times 4 grow the same tree; the parameter
    # as it was prunes less.
    problem = ShortestPath((3, 3))
    X, C = _sp_data(120, seed=5)
    w = np.random.default_rng(6).uniform(0.5, 2.0, size=120)
    a = SPOTree(problem, **{param: value}).fit(X, C, w)
    b = SPOTree(problem, **{param: 4 * value}).fit(X, C, 4 * w)
    c = SPOTree(problem, **{param: value}).fit(X, C, 4 * w)
    assert 1 < a.tree_.node_count < c.tree_.node_count
    assert_array_equal(a.tree_.feature, b.tree_.feature)
    assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    assert_array_equal(a.predict_decision(X), b.predict_decision(X))


@pytest.mark.parametrize("param, value", [("ccp_alpha", 0.3), ("min_loss_decrease", 0.3)])
@pytest.mark.parametrize("criterion, power", [("spo", 1), ("mse", 2)])
def test_pure_criteria_need_the_parameters_scaled_with_the_costs(param, value, criterion, power):
    # Both are in units of the criterion loss: costs times 4 with the
    # parameter times 4 (times 16 for squared error) grow the same tree, the
    # parameter as it was prunes less (ccp_alpha=0.3 on SPO: 24 leaves, not 41).
    problem = ShortestPath((2, 2))
    rng = np.random.default_rng(0)
    X, C = rng.uniform(size=(80, 2)), rng.uniform(size=(80, 4))
    if criterion == "mse":
        value = value / 10
    a = SPOTree(problem, criterion=criterion, **{param: value}).fit(X, C)
    b = SPOTree(problem, criterion=criterion, **{param: value * 4 ** power}).fit(X, 4 * C)
    c = SPOTree(problem, criterion=criterion, **{param: value}).fit(X, 4 * C)
    assert 1 < a.tree_.node_count < c.tree_.node_count
    assert_array_equal(a.tree_.feature, b.tree_.feature)
    assert_array_equal(a.tree_.threshold, b.tree_.threshold)


@pytest.mark.parametrize("param, value", [("ccp_alpha", 0.03), ("min_loss_decrease", 0.01)])
def test_a_mixed_criterion_needs_neither_parameter_scaled(param, value):
    # The mixed criterion is a fraction of the root's (its losses divided by
    # the root's): scaling the costs or the weights leaves the tree as it is,
    # the parameters unscaled. (ccp_alpha times 4 with weights times 4, as the
    # docs said for every criterion, pruned the 10 leaves to 1.)
    problem = ShortestPath((2, 2))
    rng = np.random.default_rng(0)
    X, C = rng.uniform(size=(80, 2)), rng.uniform(size=(80, 4))
    a = SPOTree(problem, spo_weight=0.5, **{param: value}).fit(X, C)
    assert 1 < a.tree_.node_count < SPOTree(problem, spo_weight=0.5).fit(X, C).tree_.node_count
    for Cx, w in ((4 * C, None), (C, np.full(80, 4.0)), (1e6 * C, np.full(80, 1e-3))):
        b = SPOTree(problem, spo_weight=0.5, **{param: value}).fit(X, Cx, w)
        assert_array_equal(a.tree_.feature, b.tree_.feature)
        assert_array_equal(a.tree_.threshold, b.tree_.threshold)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), nan=st.booleans(),
       kw=st.sampled_from([dict(max_depth=3), dict(min_samples_leaf=0.1),
                           dict(min_samples_split=0.3, thresholds=4),
                           dict(max_features=1, random_state=3, max_depth=3),
                           dict(criterion="mse", min_weight_fraction_leaf=0.1),
                           dict(spo_weight=0.5, ccp_alpha=0.2)]))
def test_rows_of_zero_weight_are_rows_removed(seed, nan, kw):
    # Refit without the rows of weight 0: the same tree node for node, the
    # same pruning path, the same pruned tree on validation rows of weight 0.
    problem = ShortestPath((3, 3))
    rng = np.random.default_rng(seed)
    X, C = _sp_data(48, seed)
    if nan:
        X[rng.random(X.shape) < 0.15] = np.nan
    w = rng.uniform(0.5, 2.0, 48)
    w[rng.random(48) < 0.3] = 0.0
    w[0] = 1.0
    keep = w > 0
    a = SPOTree(problem, **kw).fit(X, C, sample_weight=w)
    b = SPOTree(problem, **kw).fit(X[keep], C[keep], sample_weight=w[keep])
    for name in ("feature", "threshold", "missing_go_to_left", "n_node_samples"):
        assert_array_equal(getattr(a.tree_, name), getattr(b.tree_, name), err_msg=name)
    np.testing.assert_allclose(a.tree_.value, b.tree_.value, rtol=1e-12)
    assert_array_equal(a.predict_decision(X), b.predict_decision(X))
    pa = a.cost_complexity_pruning_path(X, C, sample_weight=w)
    pb = b.cost_complexity_pruning_path(X[keep], C[keep], sample_weight=w[keep])
    np.testing.assert_allclose(pa.ccp_alphas, pb.ccp_alphas, rtol=1e-9, atol=1e-12)
    ra = a.prune(X, C, sample_weight=w, one_se_rule=True)
    rb = b.prune(X[keep], C[keep], sample_weight=w[keep], one_se_rule=True)
    assert ra.get_n_leaves() == rb.get_n_leaves()
