"""OptimalSPOTree: exactness against enumerating every tree, and its guarantees."""

import itertools
import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

import spotree.tree._optimal as optimal_module
from spotree.datasets import make_news, make_shortest_path
from spotree.problems import CallableProblem, FiniteDecisions, ShortestPath, news_recommendation
from spotree.tree import SPOTree
from spotree.tree._optimal import OptimalSPOTree

# ------------------------------------------------------------ brute force
def _leaf_loss(problem, C, w, mask, z):
    """SPO loss of one leaf, straight from the definition (oracle on the mean)."""
    mean = (w[mask, None] * C[mask]).sum(axis=0) / w[mask].sum()
    dec, _ = problem.solve(mean[None, :])
    return float((w[mask] * problem.sign * (C[mask] @ dec[0] - z[mask])).sum())


def _enumerate_best(X, C, w, problem, depth, min_leaf, alpha=0.0):
    """Best objective over every tree of depth <= depth (explicit enumeration).

    Splits are ``x_j <= t`` for every midpoint t between distinct values;
    where a feature has missing values, each split also with them on the
    left, and the split "present vs missing".
    Objective: total SPO loss / total weight + alpha * number of splits.
    """
    _, z = problem.solve(C)
    W = w.sum()
    splits = []
    for j in range(X.shape[1]):
        x = X[:, j]
        miss = np.isnan(x)
        u = np.unique(x[~miss])
        for t in (u[:-1] + u[1:]) / 2:
            splits.append(~miss & (x <= t))
            if miss.any():
                splits.append(miss | (x <= t))
        if miss.any() and (~miss).any():
            splits.append(~miss)
    cache = {}

    def leaf(mask):
        key = mask.tobytes()
        if key not in cache:
            # min_samples_leaf counts the samples of positive weight (N_min).
            ok = mask.any() and (w[mask] > 0).sum() >= min_leaf
            cache[key] = _leaf_loss(problem, C, w, mask, z) if ok else np.inf
        return cache[key]

    def trees(mask, d):
        """(loss, n_splits) of every tree of depth <= d on the samples in mask."""
        yield leaf(mask), 0
        if d == 0:
            return
        for s in splits:
            lm, rm = mask & s, mask & ~s
            if not lm.any() or not rm.any():
                continue
            for (a, na), (b, nb) in itertools.product(list(trees(lm, d - 1)),
                                                      list(trees(rm, d - 1))):
                yield a + b, na + nb + 1

    root = np.ones(X.shape[0], dtype=bool)
    return min(loss / W + alpha * k for loss, k in trees(root, depth))


def _no_vertices(problem):
    """The same problem seen only through its oracle (no vertex list)."""
    return CallableProblem(lambda C: problem.solve(C)[0], n_costs=problem.n_costs,
                           sense=problem.sense, batched=True)


def _instances():
    """(name, X, C, w, problem) tiny instances with n <= 20."""
    out = []
    X, C = make_shortest_path(12, n_features=2, grid=(2, 2), noise=0.5, random_state=3)
    out.append(("grid2x2", X, C, np.ones(12), ShortestPath((2, 2))))
    X, C = make_shortest_path(12, n_features=2, grid=(3, 3), noise=0.5, random_state=4)
    w = np.random.default_rng(0).integers(1, 4, size=12).astype(float)
    out.append(("grid3x3", X, C, w, ShortestPath((3, 3))))
    rng = np.random.default_rng(5)
    x = rng.uniform(size=(14, 1))
    C = np.column_stack([5 * x[:, 0] + 1.9, (5 * x[:, 0] + 0.4) ** 2])
    C = C * rng.uniform(0.5, 1.5, size=C.shape)   # noise, so depth matters
    X = np.column_stack([x[:, 0], rng.uniform(size=14)])
    out.append(("two_roads", X, C, np.ones(14), FiniteDecisions(np.eye(2))))
    X, C, w = make_news(10, n_articles=4, n_features=2, random_state=1)
    out.append(("news", X, C, w / w.mean(), news_recommendation(4, 2, random_state=2)))
    return out


INSTANCES = _instances()
IDS = [inst[0] for inst in INSTANCES]


# -------------------------------------------------------------- exactness
@pytest.mark.parametrize("inst", INSTANCES, ids=IDS)
@pytest.mark.parametrize("depth", [1, 2])
def test_search_is_exact(inst, depth):
    _, X, C, w, problem = inst
    min_leaf = 2
    best = _enumerate_best(X, C, w, problem, depth, min_leaf)
    for prob in (problem, _no_vertices(problem)):
        est = OptimalSPOTree(prob, max_depth=depth, min_samples_leaf=min_leaf).fit(X, C, w)
        assert est.result_["status"] == "optimal"
        assert est.result_["objective"] == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert est.result_["gap"] == pytest.approx(0.0, abs=1e-9)
        # The stored tree carries that loss and respects the leaf weight.
        t = est.tree_
        assert t.loss[t.is_leaf].sum() / w.sum() == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert (t.n_node_samples[t.is_leaf] >= min_leaf).all()
        assert est.get_depth() <= depth


@pytest.mark.parametrize("inst", INSTANCES, ids=IDS)
@pytest.mark.parametrize("depth", [1, 2])
def test_milp_is_exact(inst, depth):
    _, X, C, w, problem = inst
    n = 10
    X, C, w = X[:n], C[:n], w[:n]
    best = _enumerate_best(X, C, w, problem, depth, 2)
    est = OptimalSPOTree(problem, max_depth=depth, min_samples_leaf=2, method="milp",
                         time_limit=60).fit(X, C, w)
    assert est.result_["status"] == "optimal"
    assert est.result_["objective"] == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert est.result_["warm_start_objective"] >= best - 1e-9


@pytest.mark.parametrize("method", ["search", "oracle", "milp"])
def test_every_method_is_exact_on_a_knapsack_with_fractional_leaves_and_penalty(method):
    # A maximization with a 0/1 feasible set (no exactness test had one for
    # the search), a fractional min_samples_leaf over the rows of positive
    # weight, a removed row and a split penalty, against the enumeration.
    from spotree.problems import Knapsack

    rng = np.random.default_rng(3)
    problem = Knapsack([[1.0, 2.0, 1.5, 1.0]], [2.6])
    X = np.round(rng.normal(size=(9, 2)), 1)            # ties within features
    C = np.abs(rng.normal(1.0, 1.0, size=(9, 4)) + X[:, :1])
    w = rng.integers(1, 4, size=9).astype(float)
    w[4] = 0.0
    keep = w > 0
    best = _enumerate_best(X[keep], C[keep], w[keep], problem, 2, 2, alpha=0.01)
    est = OptimalSPOTree(problem if method != "oracle" else _no_vertices(problem),
                         max_depth=2, min_samples_leaf=0.25, split_penalty=0.01,
                         method="milp" if method == "milp" else "search").fit(X, C, w)
    r = est.result_
    assert r["status"] == "optimal"
    assert r["objective"] == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert r["bound"] <= best + 1e-9
    t = est.tree_
    assert (t.n_node_samples[t.is_leaf] >= 2).all()       # ceil(0.25 * 8 rows)


@pytest.mark.parametrize("inst", INSTANCES[:3], ids=IDS[:3])
@pytest.mark.parametrize("depth", [1, 2])
def test_search_is_exact_with_missing_values(inst, depth):
    _, X, C, w, problem = inst
    X = X.copy()
    rng = np.random.default_rng(depth)
    X[rng.uniform(size=X.shape) < 0.25] = np.nan
    best = _enumerate_best(X, C, w, problem, depth, 2)
    for prob in (problem, _no_vertices(problem)):
        est = OptimalSPOTree(prob, max_depth=depth, min_samples_leaf=2).fit(X, C, w)
        assert est.result_["status"] == "optimal"
        assert est.result_["objective"] == pytest.approx(best, rel=1e-9, abs=1e-12)
        t = est.tree_
        # The stored tree routes the training rows as the search did.
        assert t.loss[t.is_leaf].sum() / w.sum() == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert (t.n_node_samples[t.is_leaf] >= 2).all()
        assert t.weighted_n_node_samples[t.is_leaf].sum() == pytest.approx(w.sum())


def test_milp_refuses_missing_values():
    _, X, C, w, problem = INSTANCES[0]
    X = X.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="missing values"):
        OptimalSPOTree(problem, max_depth=1, method="milp").fit(X, C)


def test_search_depth3_matches_enumeration():
    X, C = make_shortest_path(9, n_features=2, grid=(2, 3), noise=0.5, random_state=11)
    problem = ShortestPath((2, 3))
    best = _enumerate_best(X, C, np.ones(9), problem, 3, 1)
    est = OptimalSPOTree(problem, max_depth=3).fit(X, C)
    assert est.result_["status"] == "optimal"
    assert est.result_["objective"] == pytest.approx(best, rel=1e-9, abs=1e-12)


def _recursive_best(X, G, z, depth, min_leaf):
    """Best depth-limited tree by exhaustive recursion (every split at every node)."""
    cols = []
    for j in range(X.shape[1]):
        u = np.unique(X[:, j])
        cols += [X[:, j] <= t for t in (u[:-1] + u[1:]) / 2]
    memo = {}

    def best(mask, d):
        key = (mask.tobytes(), d)
        if key not in memo:
            b = G[mask].sum(axis=0).min()
            if d > 0:
                for col in cols:
                    left, right = mask & col, mask & ~col
                    if left.sum() >= min_leaf and right.sum() >= min_leaf:
                        b = min(b, best(left, d - 1) + best(right, d - 1))
            memo[key] = b
        return memo[key]

    return (best(np.ones(X.shape[0], dtype=bool), depth) - z.sum()) / X.shape[0]


@pytest.mark.parametrize("seed, n, depth", [(0, 20, 4), (1, 20, 4), (1, 22, 5)])
def test_deep_search_matches_exhaustive_recursion(seed, n, depth):
    """Depth 5 reaches the same subsets along several paths: it exercises the
    subset cache, both its exact entries and its lower-bound entries."""
    X, C = make_shortest_path(n, n_features=2, grid=(2, 3), noise=0.5, random_state=seed)
    problem = ShortestPath((2, 3))
    _, z = problem.solve(C)
    best = _recursive_best(X, C @ problem.vertices().T, z, depth, 2)
    est = OptimalSPOTree(problem, max_depth=depth, min_samples_leaf=2).fit(X, C)
    assert est.result_["status"] == "optimal"
    assert est.result_["objective"] == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert est.get_depth() <= depth


@pytest.mark.parametrize("method", ["search", "milp"])
def test_alpha_penalizes_splits_exactly(method):
    _, X, C, w, problem = INSTANCES[1]
    X, C, w = X[:10], C[:10], w[:10]
    alpha = 0.05
    best = _enumerate_best(X, C, w, problem, 2, 1, alpha=alpha)
    est = OptimalSPOTree(problem, max_depth=2, split_penalty=alpha,
                         method=method).fit(X, C, w)
    assert est.result_["objective"] == pytest.approx(best, rel=1e-6, abs=1e-9)
    n_splits = est.get_n_leaves() - 1
    loss = est.tree_.loss[est.tree_.is_leaf].sum() / w.sum()
    assert est.result_["objective"] == pytest.approx(loss + alpha * n_splits)


# ----------------------------------------------------------- guarantees
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), depth=st.integers(1, 3),
       min_leaf=st.sampled_from([1, 3, 5]), weighted=st.booleans())
def test_optimal_never_worse_than_greedy(seed, depth, min_leaf, weighted):
    X, C = make_shortest_path(40, n_features=3, grid=(3, 3), noise=0.5, random_state=seed)
    w = (np.random.default_rng(seed).integers(1, 4, size=40).astype(float)
         if weighted else None)
    problem = ShortestPath((3, 3))
    greedy = SPOTree(problem, max_depth=depth, min_samples_leaf=min_leaf).fit(X, C, w)
    opt = OptimalSPOTree(problem, max_depth=depth, min_samples_leaf=min_leaf).fit(X, C, w)
    g, o = greedy.tree_, opt.tree_
    assert o.loss[o.is_leaf].sum() <= g.loss[g.is_leaf].sum() * (1 + 1e-9) + 1e-9
    assert opt.get_depth() <= depth


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), nan=st.booleans(), penalty=st.sampled_from([0.0, 0.01]))
def test_row_order_monotone_maps_and_integer_weights_keep_the_optimum(seed, nan, penalty):
    # Metamorphic checks (held on 300 random instances in the hunt that added
    # them): the optimum does not depend on the rows' order, on a strictly
    # monotone map of a feature (the candidate splits group the rows the
    # same way), nor on writing an integer weight k as k copies of the row.
    rng = np.random.default_rng(seed)
    problem = ShortestPath((2, 3))
    n = 24
    X = rng.normal(size=(n, 2))
    C = np.abs(rng.normal(1.0, 1.0, size=(n, 7)) + X[:, :1])
    if nan:
        X[rng.random(X.shape) < 0.15] = np.nan
    kw = dict(max_depth=2, split_penalty=penalty)
    base = OptimalSPOTree(problem, **kw).fit(X, C).result_["objective"]
    perm = rng.permutation(n)
    assert OptimalSPOTree(problem, **kw).fit(X[perm], C[perm]).result_["objective"] == (
        pytest.approx(base, rel=1e-12, abs=1e-15))
    Xm = X.copy()
    Xm[:, 1] = -np.exp(Xm[:, 1])
    assert OptimalSPOTree(problem, **kw).fit(Xm, C).result_["objective"] == pytest.approx(
        base, rel=1e-12, abs=1e-15)
    k = rng.integers(1, 4, size=n)
    weighted = OptimalSPOTree(problem, **kw).fit(X, C, k).result_["objective"]
    copies = OptimalSPOTree(problem, **kw).fit(np.repeat(X, k, axis=0), np.repeat(C, k, axis=0))
    assert weighted == pytest.approx(copies.result_["objective"], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("thresholds", ["all", 4])
def test_search_zero_weight_rows_add_no_thresholds(thresholds):
    # A zero weight is a removed row: its feature values must neither add
    # candidate thresholds (midpoints, quantiles) nor move the stored ones.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    C = rng.normal(size=(40, 3)) + X[:, :1] * np.array([1.0, -1.0, 0.5])
    w = np.ones(40)
    w[::3] = 0.0
    keep = w > 0
    problem = FiniteDecisions(np.eye(3))
    est = OptimalSPOTree(problem, max_depth=2, global_thresholds=thresholds).fit(X, C, w)
    t = est.tree_
    assert (~t.is_leaf).any()
    Xk = X[keep]
    path = t.decision_path(Xk).toarray().astype(bool)
    for node in np.flatnonzero(~t.is_leaf):
        x = Xk[path[:, node], t.feature[node]]
        go_left = x <= t.threshold[node]
        if thresholds == "all":
            # Halfway between the closest kept values on either side.
            assert t.threshold[node] == pytest.approx((x[go_left].max() + x[~go_left].min()) / 2)
        else:
            q = np.quantile(Xk[:, t.feature[node]], np.arange(1, 5) / 5.0)
            assert np.isclose(q, t.threshold[node]).any()
    removed = OptimalSPOTree(problem, max_depth=2, global_thresholds=thresholds).fit(Xk, C[keep])
    assert est.result_["objective"] == pytest.approx(removed.result_["objective"])
    assert_array_equal(t.threshold, removed.tree_.threshold)
    assert t.n_node_samples[0] == keep.sum()


def test_milp_zero_weight_rows_are_rows_removed():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(24, 2))
    C = rng.normal(size=(24, 3)) + X[:, :1] * np.array([1.0, -1.0, 0.5])
    w = np.ones(24)
    w[::4] = 0.0
    keep = w > 0
    problem = FiniteDecisions(np.eye(3))
    est = OptimalSPOTree(problem, max_depth=1, method="milp").fit(X, C, w)
    exact = _enumerate_best(X[keep], C[keep], np.ones(keep.sum()), problem, 1, 1)
    assert est.result_["objective"] == pytest.approx(exact, rel=1e-9, abs=1e-12)
    # Counted like SPOTree: rows of positive weight only (they counted all rows).
    assert est.tree_.n_node_samples[0] == keep.sum()


@pytest.mark.filterwarnings("error::RuntimeWarning:spotree")
# scikit-learn's finiteness check sums X (inf, then inf - inf): not ours.
@pytest.mark.filterwarnings("ignore:invalid value encountered in reduce:RuntimeWarning")
def test_milp_features_spanning_the_float_range():
    # max - min overflowed (inf / inf = NaN in the scaled features: HiGHS
    # rejected the model), and so did the midpoint of two values near the top.
    rng = np.random.default_rng(8)
    X = np.column_stack([rng.choice([-1e308, -1.0, 1.0, 1e308], size=16),
                         rng.choice([1.6e308, 1.7e308, np.finfo(float).max], size=16)])
    C = rng.normal(size=(16, 3)) + np.eye(3)[(X[:, 0] > 0).astype(int) + (X[:, 1] > 1.65e308)]
    problem = FiniteDecisions(np.eye(3))
    est = OptimalSPOTree(problem, max_depth=2, method="milp").fit(X, C)
    # The enumeration on the ranks of the values (the same partitions; its
    # own midpoints of the raw values would overflow).
    ranks = np.column_stack([np.unique(x, return_inverse=True)[1] for x in X.T]).astype(float)
    exact = _enumerate_best(ranks, C, np.ones(16), problem, 2, 1)
    assert est.result_["objective"] == pytest.approx(exact, rel=1e-9, abs=1e-12)
    assert np.isfinite(est.tree_.threshold).all()
    # The stored tree routes the training rows as the objective says.
    t = est.tree_
    assert t.loss[t.is_leaf].sum() / 16 == pytest.approx(exact, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("scale", [1e-18, 1e18])
def test_milp_at_any_cost_scale(scale):
    # Costs of 1e18 made HiGHS reject the model ('HiGHS rejected the model.'):
    # the MILP is now built on costs divided by a power of two, as the search.
    rng = np.random.default_rng(9)
    X = rng.normal(size=(14, 2))
    C = rng.normal(size=(14, 3)) + X[:, :1] * np.array([1.0, -1.0, 0.0])
    problem = FiniteDecisions(np.eye(3))
    exact = _enumerate_best(X, scale * C, np.ones(14), problem, 2, 1)
    est = OptimalSPOTree(problem, max_depth=2, method="milp").fit(X, scale * C)
    r = est.result_
    assert r["status"] == "optimal"
    assert r["objective"] == pytest.approx(exact, rel=1e-9)
    # The solver's numbers are in the same units as the objective.
    assert r["solver_objective"] == pytest.approx(r["objective"], rel=1e-6)
    assert 0.0 <= r["bound"] <= r["objective"]
    assert r["warm_start_objective"] >= r["objective"] * (1 - 1e-9)


@pytest.mark.parametrize("vertices", [True, False])
@pytest.mark.parametrize("exponent", [1016, 1020])
def test_search_with_weights_whose_sums_pass_the_float_range(vertices, exponent):
    # Weights times 2^1016 on 100 rows: their total and the tree's losses are
    # finite, but the search's sums of weighted path costs were not. It
    # returned another tree with an objective of inf or NaN (status
    # 'optimal'); it now searches on the weights divided by a power of two,
    # as on the costs (and the tree's sums are taken so too). Times 2^1020
    # the total itself is inf: the split penalty (alpha times the total) was
    # inf, a lone leaf with an objective of NaN; the fit now takes the weights
    # in units of a power of two throughout.
    from spotree.datasets import make_pyepo_shortest_path

    X, C = make_pyepo_shortest_path(100, grid=(3, 3), degree=4, noise=0.5, random_state=0)
    X = X[:, :2]
    sp = ShortestPath((3, 3))
    problem = sp if vertices else _no_vertices(sp)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=100)
    exact = _enumerate_best(X, C, w, sp, 1, 5)
    big = w * 2.0 ** exponent
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow on the way
        est = OptimalSPOTree(problem, max_depth=1, min_samples_leaf=5).fit(X, C, big)
    r = est.result_
    assert est.get_n_leaves() == 2
    assert r["status"] == "optimal"
    assert r["objective"] == pytest.approx(exact, rel=1e-9)
    assert r["search_objective"] == pytest.approx(exact, rel=1e-9)
    assert 0.0 <= r["bound"] <= r["objective"]


def _misreported_knapsack():
    from spotree.problems import Knapsack

    problem = Knapsack([[1.4014749275280547, 1.6135581592212653, 1.9979779826978785]], [2.5])
    X = np.array([[2.0, 0.0], [2.0, 1.0], [2.0, 0.0], [2.0, 0.0], [3.0, 3.0]])
    C = np.array([[1.710998259594143, 0.6312940172286441, -0.07566367350497542],
                  [-1.4960285208431197, 0.18009861899241114, 0.5318801152173853],
                  [-1.3706257653434577, -0.11971924896036745, 2.032542284551058],
                  [-0.1994123941934126, 0.7077667466996015, -0.9843646620207525],
                  [0.016624923344659728, -0.5794635736786925, -0.9725660248795511]])
    return X, C, np.array([1.0, 2.0, 1.0, 1.0, 2.0]), problem


def test_milp_with_a_warm_start_that_highs_mis_reports():
    # HiGHS (presolve with the greedy tree as a start) returned the start,
    # reported a lower objective than any tree has and called it optimal:
    # the fit kept the greedy tree (0.862) as "optimal" (the optimum is 0.697).
    X, C, w, problem = _misreported_knapsack()
    exact = _enumerate_best(X, C, w, problem, 2, 1, alpha=0.2)
    est = OptimalSPOTree(problem, max_depth=2, split_penalty=0.2, method="milp").fit(X, C, w)
    r = est.result_
    assert r["objective"] == pytest.approx(exact, rel=1e-9)
    assert r["warm_start_objective"] > exact + 0.1  # the start was not optimal
    assert r["bound"] <= r["objective"] + 1e-12
    assert r["solver_objective"] == pytest.approx(r["objective"], rel=1e-6)


def test_milp_inconsistent_solver_result_proves_no_bound(monkeypatch):
    # A solver whose reported objective is not that of the point it returns
    # (as HiGHS 1.16 did above, twice here) proves nothing: its bound (10,
    # above every tree) was clipped to the returned tree's objective, which
    # the fit then reported with a gap of 0 (0.862, the greedy tree; the
    # optimum is 0.697).
    import spotree.problems._highs as highs_module

    real = highs_module.solve_once
    starts = []

    def lying(*args, start=None, **kwargs):
        res = real(*args, start=start, **kwargs)
        if start is not None:
            starts.append(start)
        return dict(res, x=starts[0], objective=-1.0, bound=10.0, gap=0.0, status="Optimal")

    monkeypatch.setattr(highs_module, "solve_once", lying)
    X, C, w, problem = _misreported_knapsack()
    exact = _enumerate_best(X, C, w, problem, 2, 1, alpha=0.2)
    r = OptimalSPOTree(problem, max_depth=2, split_penalty=0.2, method="milp").fit(X, C, w).result_
    assert r["status"] == "Inconsistent solver result"
    # HiGHS's own word stays in solver_status (it held spotree's label).
    assert r["solver_status"] == "Optimal"
    assert r["objective"] > exact + 0.1         # the greedy tree was kept
    assert r["bound"] <= exact + 1e-12 and r["gap"] == 1.0


@pytest.mark.parametrize("min_samples_leaf", [11, 0.99])
def test_milp_min_samples_leaf_above_the_rows_gives_the_optimal_lone_leaf(min_samples_leaf):
    # The only tree is the lone leaf (SPOTree and the search return it): the
    # MILP's N_min row bound the root leaf too, so it reported "Infeasible"
    # with a gap of 1 and kept its warm start.
    _, X, C, w, problem = INSTANCES[0]
    X, C, w = X[:10], C[:10], w[:10]
    if isinstance(min_samples_leaf, float):
        w = w.copy()
        w[0] = 0.0          # 0.99 of 9 rows of positive weight: 9 rows
    _, z = problem.solve(C)
    leaf = _leaf_loss(problem, C, w, w > 0, z) / w.sum()
    est = OptimalSPOTree(problem, max_depth=2, min_samples_leaf=min_samples_leaf,
                         method="milp").fit(X, C, w)
    r = est.result_
    assert est.get_n_leaves() == 1
    assert r["status"] == "optimal"
    assert r["objective"] == pytest.approx(leaf, rel=1e-9)
    assert r["bound"] == pytest.approx(leaf, rel=1e-6) and r["gap"] < 1e-6


def _close_values_instance(kind, seed):
    """12 rows whose feature 0 has values far closer than 1e-7 of its range."""
    rng = np.random.default_rng(seed)
    if kind == "tiny":
        # Spans 1e3, but the rows that matter differ by about 1e-9.
        x0 = np.concatenate([rng.uniform(0, 1e-8, size=11), [1e3]])
        half = x0 > 5e-9
    else:
        # Values 1e6 + k 1e-4 and one at 1e6 + 1e4: gaps of 1e-8 of the range.
        k = rng.permutation(12)
        x0 = np.where(k == 11, 1e6 + 1e4, 1e6 + k * 1e-4)
        half = k >= 6
    x1 = rng.normal(size=12)
    C = rng.uniform(size=(12, 3)) + np.eye(3)[half.astype(int) + (x1 > 0)]
    return np.column_stack([x0, x1]), C


@pytest.mark.parametrize("kind, seed, depth", [("tiny", 0, 2), ("offset", 5, 2),
                                               ("offset", 6, 1)])
def test_milp_is_exact_on_values_closer_than_the_solvers_tolerance(kind, seed, depth):
    # On [0, 1]-scaled features these gaps were far below HiGHS's tolerance:
    # it "proved" objectives no tree has (0 on "tiny"), and the fit kept its
    # warm start (0.051 against a brute-force optimum of 0.0088) with status
    # "solver_tolerance". The MILP is now built on each feature's ranks.
    X, C = _close_values_instance(kind, seed)
    problem = FiniteDecisions(np.eye(3))
    exact = _enumerate_best(X, C, np.ones(12), problem, depth, 1)
    est = OptimalSPOTree(problem, max_depth=depth, method="milp").fit(X, C)
    r = est.result_
    assert r["status"] == "optimal"
    assert r["objective"] == pytest.approx(exact, rel=1e-9, abs=1e-12)
    assert r["bound"] == pytest.approx(exact, rel=1e-6, abs=1e-9)
    t = est.tree_
    assert t.n_leaves > 1
    assert t.loss[t.is_leaf].sum() / 12 == pytest.approx(exact, rel=1e-9, abs=1e-12)
    for node in np.flatnonzero(~t.is_leaf):
        # Thresholds in the feature's own units: the midpoint of two
        # neighbouring training values, as SPOTree places them.
        u = np.unique(X[:, t.feature[node]])
        i = np.searchsorted(u, t.threshold[node])
        assert 0 < i < u.size
        assert t.threshold[node] == pytest.approx((u[i - 1] + u[i]) / 2, rel=1e-15)
    # The greedy tree, mapped to ranks, is a feasible warm start.
    from spotree.tree._optimal_milp import MilpModel

    greedy = SPOTree(problem, max_depth=depth).fit(X, C).tree_
    model = MilpModel(X, C, np.ones(12), problem.solve(C)[1], problem, depth, 1).build()
    Ax = model.A @ model.assignment_from_tree(greedy)
    assert (Ax >= model.row_lo - 1e-9).all() and (Ax <= model.row_hi + 1e-9).all()


def _near_twin_features(seed):
    """Feature 1 is feature 0 with two rows of a tiny weight swapped: splits on
    the two differ by a hair."""
    rng = np.random.default_rng(seed)
    x = rng.permutation(10).astype(float)
    i, j = rng.choice(10, 2, replace=False)
    X = np.column_stack([x, x])
    X[[i, j], 1] = X[[j, i], 1]
    C = rng.normal(size=(10, 3)) + 3
    w = np.ones(10)
    w[[i, j]] = rng.choice([1e-4, 3e-5, 1e-5])
    return X, C, w


@pytest.mark.parametrize("solver, seed", [("highs", 5), ("gurobi", 34)])
def test_milp_optimal_status_means_a_zero_relative_gap(monkeypatch, solver, seed):
    # HiGHS and Gurobi stop at a relative gap of 1e-4 by default, and the fit
    # called "optimal" a depth-1 tree 6.6e-5 (HiGHS, seed 5) or 7.0e-5
    # (Gurobi, a stand-in solving with scipy.optimize.milp, seed 34) above
    # the best one, found by enumeration.
    import sys

    monkeypatch.setitem(sys.modules, "gurobipy", _scipy_gurobipy("never"))
    monkeypatch.setattr(optimal_module, "GUROBI_INSTALLED", True)
    X, C, w = _near_twin_features(seed)
    problem = FiniteDecisions(np.eye(3))
    best = _enumerate_best(X, C, w, problem, 1, 1)
    r = OptimalSPOTree(problem, max_depth=1, method="milp", warm_start=False, solver=solver,
                       random_state=5).fit(X, C, w).result_
    assert r["status"] == "optimal"
    assert r["objective"] == pytest.approx(best, rel=1e-7)


def test_milp_never_worse_than_its_warm_start():
    X, C = make_shortest_path(40, n_features=3, grid=(3, 3), noise=0.5, random_state=2)
    problem = ShortestPath((3, 3))
    est = OptimalSPOTree(problem, max_depth=2, min_samples_leaf=3, method="milp",
                         time_limit=1).fit(X, C)
    greedy = SPOTree(problem, max_depth=2, min_samples_leaf=3).fit(X, C)
    g = greedy.tree_
    r = est.result_
    assert r["warm_start_objective"] == pytest.approx(g.loss[g.is_leaf].sum() / 40)
    assert r["objective"] <= r["warm_start_objective"] + 1e-9
    assert 0.0 <= r["bound"] <= r["objective"] + 1e-12
    assert r["n_binaries"] == 40 * 4 + 4 + 3 * 3 + 3


def test_milp_random_state_seeds_the_solver_as_scikit_learn(monkeypatch):
    # None drew no seed (HiGHS always got 0, np.random.seed changed nothing);
    # as scikit-learn, it draws from numpy's global state, an instance is
    # consumed, and an int fixes the seed.
    from spotree.tree._optimal_milp import MilpModel

    seeds, solve = [], MilpModel.solve_highs

    def spy(self, *args, random_state, **kwargs):
        seeds.append(random_state)
        return solve(self, *args, random_state=random_state, **kwargs)

    monkeypatch.setattr(MilpModel, "solve_highs", spy)
    _, X, C, w, problem = INSTANCES[0]
    rs = np.random.RandomState(9)
    saved = np.random.get_state()
    try:
        np.random.seed(7)
        for random_state in (None, None, 5, rs, rs):
            OptimalSPOTree(problem, max_depth=1, method="milp",
                           random_state=random_state).fit(X, C, w)
    finally:
        np.random.set_state(saved)
    top = np.iinfo(np.int32).max
    g, r = np.random.RandomState(7), np.random.RandomState(9)
    assert seeds == [g.randint(top), g.randint(top), np.random.RandomState(5).randint(top),
                     r.randint(top), r.randint(top)]
    assert seeds[0] != seeds[1] and seeds[3] != seeds[4]


def test_milp_with_an_int_random_state_leaves_numpys_global_state_alone():
    # Its greedy warm-start tree had random_state=None and drew a seed from
    # np.random (which it never used: it searches every feature), so a fit
    # seeded by an int still moved the global state, as scikit-learn's never do.
    _, X, C, w, problem = INSTANCES[0]
    saved = np.random.get_state()
    try:
        np.random.seed(7)
        OptimalSPOTree(problem, max_depth=1, method="milp", random_state=3).fit(X, C, w)
        after = np.random.randint(1 << 30)
    finally:
        np.random.set_state(saved)
    assert after == np.random.RandomState(7).randint(1 << 30)


def test_search_time_limit_returns_incumbent_with_gap():
    X, C = make_shortest_path(60, n_features=3, grid=(3, 3), noise=0.5, random_state=0)
    problem = ShortestPath((3, 3))
    est = OptimalSPOTree(problem, max_depth=3, time_limit=1e-9).fit(X, C)
    r = est.result_
    full = OptimalSPOTree(problem, max_depth=3).fit(X, C).result_
    assert r["status"] == "time_limit"
    assert r["bound"] <= full["objective"] + 1e-12 <= r["objective"] + 2e-12
    assert r["gap"] == pytest.approx((r["objective"] - r["bound"]) / r["objective"])
    assert full["status"] == "optimal" and full["gap"] == 0.0


@pytest.mark.parametrize("vertices", [True, False])
def test_search_at_the_time_limit_is_never_worse_than_the_greedy_tree(vertices):
    # Stopped at once, the depth-3 search returned its depth-2 incumbent
    # (objective 0.518) where the greedy tree of depth 3 has 0.276; the MILP
    # never returns worse than its greedy warm start, and now neither does
    # the search. The objective is recomputed from the definition.
    X, C = make_shortest_path(30, n_features=2, grid=(2, 2), degree=4, noise=0.3,
                              random_state=4)
    sp = ShortestPath((2, 2))
    problem = sp if vertices else _no_vertices(sp)
    greedy = SPOTree(sp, max_depth=3).fit(X, C).tree_
    greedy_loss = greedy.loss[greedy.is_leaf].sum() / 30
    est = OptimalSPOTree(problem, max_depth=3, time_limit=1e-9).fit(X, C)
    r = est.result_
    assert r["status"] == "time_limit"
    _, z = sp.solve(C)
    loss = float(((C * est.predict_decision(X)).sum(axis=1) - z).mean())
    assert r["objective"] == pytest.approx(loss, rel=1e-9)
    assert r["objective"] <= greedy_loss * (1 + 1e-9)
    assert r["search_objective"] > greedy_loss + 0.1     # the incumbent was worse
    assert r["used_greedy_tree"] is True
    full = OptimalSPOTree(sp, max_depth=3).fit(X, C).result_   # (the oracle's is slow)
    assert full["used_greedy_tree"] is False
    assert 0.0 <= r["bound"] <= full["objective"] + 1e-12
    assert r["gap"] == pytest.approx((r["objective"] - r["bound"]) / r["objective"])


def test_oracle_search_stops_at_the_time_limit():
    X, C = make_shortest_path(40, n_features=3, grid=(3, 3), noise=0.5, random_state=0)
    problem = _no_vertices(ShortestPath((3, 3)))
    est = OptimalSPOTree(problem, max_depth=2, time_limit=1e-9).fit(X, C)
    full = OptimalSPOTree(problem, max_depth=2).fit(X, C)
    r = est.result_
    assert r["status"] == "time_limit" and full.result_["status"] == "optimal"
    assert r["bound"] <= full.result_["objective"] + 1e-12
    assert full.result_["objective"] <= r["objective"] + 1e-12
    assert r["objective"] == pytest.approx(est.tree_.loss[est.tree_.is_leaf].sum() / 40)


def test_verbose_search_logs_progress(capsys):
    X, C = make_shortest_path(40, n_features=2, grid=(2, 2), noise=0.5, random_state=0)
    est = OptimalSPOTree(ShortestPath((2, 2)), max_depth=3, min_samples_leaf=3,
                         verbose=True).fit(X, C)
    out = capsys.readouterr().out
    assert "root feature 0: incumbent objective" in out
    assert f"objective {est.result_['objective']:.6g}" in out


def test_verbose_incumbents_are_in_the_units_of_the_objective(capsys):
    # The per-feature incumbent was printed in the search's scaled units
    # (costs over a power of two near their size, over the count of rows):
    # on these costs (times 100) and weights of 3 the first read 0.0526 for
    # a depth-2 tree of mean regret 17.94.
    import re

    from spotree.metrics import decision_loss

    X, C = make_shortest_path(40, n_features=2, grid=(2, 2), noise=0.5, random_state=0)
    C = 100.0 * C
    problem = ShortestPath((2, 2))
    sw = np.full(len(X), 3.0)
    est = OptimalSPOTree(problem, max_depth=3, min_samples_leaf=3,
                         verbose=True).fit(X, C, sample_weight=sw)
    out = capsys.readouterr().out
    seen = [float(v) for v in re.findall(r"incumbent objective ([^,]+),", out)]
    # The first incumbent is the best tree of depth 2: its mean regret.
    two = OptimalSPOTree(problem, max_depth=2, min_samples_leaf=3).fit(X, C)
    regret = decision_loss(C, two.predict_decision(X), problem=problem).mean()
    assert seen and seen[0] == pytest.approx(regret, rel=1e-5)
    assert est.result_["status"] == "optimal"
    assert min(seen) >= est.result_["search_objective"] * (1 - 1e-5)


def test_quantile_thresholds_match_the_binarized_search():
    X, C = make_shortest_path(50, n_features=2, grid=(3, 3), noise=0.3, random_state=1)
    problem = ShortestPath((3, 3))
    est = OptimalSPOTree(problem, max_depth=2, global_thresholds=4,
                         min_samples_leaf=5).fit(X, C)
    # Every split uses one of the 4 quantile thresholds of its feature.
    q = np.arange(1, 5) / 5.0
    t = est.tree_
    for node in np.flatnonzero(~t.is_leaf):
        assert np.isclose(np.quantile(X[:, t.feature[node]], q), t.threshold[node]).any()
    finer = OptimalSPOTree(problem, max_depth=2, min_samples_leaf=5).fit(X, C)
    assert finer.result_["objective"] <= est.result_["objective"] + 1e-12


# -------------------------------------------------------- shared estimator API
def test_shares_the_fitted_tree_api(tmp_path):
    X, C = make_shortest_path(60, n_features=3, grid=(3, 3), noise=0.5, random_state=7)
    problem = ShortestPath((3, 3))
    est = OptimalSPOTree(problem, max_depth=2, min_samples_leaf=5).fit(X, C)
    leaves = est.apply(X)
    np.testing.assert_allclose(est.predict(X), est.tree_.value[leaves])
    np.testing.assert_allclose(est.predict_decision(X), est.tree_.decision[leaves])
    assert est.score(X, C) == pytest.approx(-est.result_["train_loss"] / np.mean(
        problem.solve(C)[1]))
    assert est.feature_importances_.sum() == pytest.approx(1.0)
    pruned = est.prune(X[:30], C[:30])
    assert pruned.get_n_leaves() <= est.get_n_leaves()
    path = est.cost_complexity_pruning_path(X, C)
    assert (np.diff(path.ccp_alphas) >= 0).all()
    assert path.impurities[0] == pytest.approx(est.tree_.loss[est.tree_.is_leaf].sum())
    from spotree import export_text
    assert export_text(est).count("decision:") == est.get_n_leaves()
    path = tmp_path / "opt.json"
    est.save(path)
    from spotree.tree import load
    back = load(path)
    np.testing.assert_allclose(back.predict(X), est.predict(X))
    cloned = clone(est).get_params()
    assert {k: repr(v) for k, v in cloned.items()} == {
        k: repr(v) for k, v in est.get_params().items()}


@pytest.mark.parametrize("vertices", [True, False])
def test_a_split_sending_only_missing_values_left_saves_and_loads(tmp_path, vertices):
    """The search may cut a feature's missing values off to the left; the tree
    stored a threshold of -inf for it, which a model file refuses to load (and
    export_text printed 'x0 <= -inf or missing'). The best tree is known: the
    root splits on x1 <= 0.5, then each side on whether x0 is missing."""
    rng = np.random.default_rng(0)
    n = 80
    miss = rng.uniform(size=n) < 0.5
    x1 = rng.uniform(size=n)
    X = np.column_stack([np.where(miss, np.nan, rng.normal(size=n)), x1])
    best = np.where(miss ^ (x1 > 0.5), 0, 1)          # the cheaper option of each row
    C = np.eye(2)[1 - best] + 0.01 * rng.uniform(size=(n, 2))
    problem = FiniteDecisions(np.eye(2))
    est = OptimalSPOTree(problem if vertices else _no_vertices(problem),
                         max_depth=2).fit(X, C)
    assert_array_equal(est.predict_decision(X), np.eye(2)[best])
    t = est.tree_
    split = ~t.is_leaf
    assert (np.isfinite(t.threshold[split]) | (t.threshold[split] == np.inf)).all()
    from spotree.tree import export_text, load
    assert "-inf" not in export_text(est)
    path = tmp_path / "tree.json"
    est.save(path)
    back = load(path, problem=None if vertices else est.problem_)
    assert_array_equal(back.predict_decision(X), np.eye(2)[best])
    assert_array_equal(back.predict(X), est.predict(X))


# -------------------------------------------------------------- bad input
def test_rejects_a_milp_that_is_too_large():
    X, C = make_shortest_path(200, n_features=2, grid=(2, 2), random_state=0)
    est = OptimalSPOTree(ShortestPath((2, 2)), max_depth=10, method="milp")
    L = 2 ** 10          # r: n L, k: L, a: p (L - 1), d: L - 1
    expected = f"{200 * L + L + 2 * (L - 1) + (L - 1):,}"
    with pytest.raises(ValueError, match=f"{expected} binary variables.*limit of 100,000"):
        est.fit(X, C)


@pytest.mark.parametrize("value", [0, -1.0])
def test_rejects_non_positive_time_limit(value):
    X, C = make_shortest_path(10, n_features=2, grid=(2, 2), random_state=0)
    with pytest.raises(ValueError, match="'time_limit' parameter of OptimalSPOTree must be"):
        OptimalSPOTree(ShortestPath((2, 2)), time_limit=value).fit(X, C)


def test_rejects_milp_for_a_problem_without_constraints_or_vertices():
    X, C = make_shortest_path(10, n_features=2, grid=(2, 2), random_state=0)
    est = OptimalSPOTree(_no_vertices(ShortestPath((2, 2))), method="milp")
    with pytest.raises(ValueError, match="neither.*method='search'"):
        est.fit(X, C)


def test_gurobi_missing_names_the_extra(monkeypatch):
    monkeypatch.setattr(optimal_module, "GUROBI_INSTALLED", False)
    X, C = make_shortest_path(10, n_features=2, grid=(2, 2), random_state=0)
    est = OptimalSPOTree(ShortestPath((2, 2)), method="milp", solver="gurobi")
    with pytest.raises(ImportError, match=r"spotree\[gurobi\]"):
        est.fit(X, C)


def _fake_gurobipy(outcome, disposed):
    """A gurobipy stand-in whose optimize() returns the warm start as optimal."""
    import types

    GRB = types.SimpleNamespace(INTEGER="I", CONTINUOUS="C", OPTIMAL=2, TIME_LIMIT=9,
                                INTERRUPTED=11, NUMERIC=12, SUBOPTIMAL=13)

    class Env:
        def __init__(self, empty=False):
            pass

        def setParam(self, name, value):
            pass

        def start(self):
            if outcome == "no_license":
                raise RuntimeError("No Gurobi license found")

        def dispose(self):
            disposed.append("env")

    class Params(types.SimpleNamespace):
        def __setattr__(self, name, value):
            # Gurobi's int parameters stop at its MAXINT, 2e9, short of 2^31 - 1.
            if name == "Seed" and not 0 <= value <= 2_000_000_000:
                raise RuntimeError(f"Unable to set parameter Seed to value {value} "
                                   "(maximum is 2000000000)")
            super().__setattr__(name, value)

    class Model:
        def __init__(self, env):
            self.Params = Params()
            self.ObjCon = 0.0

        def addMVar(self, n, lb, ub, obj, vtype):
            self.obj, self.var = obj, types.SimpleNamespace(Start=None)
            return self.var

        def addMConstr(self, A, x, sense, b):
            pass

        def optimize(self):
            self.var.X = self.var.Start
            self.Status = {"interrupted": GRB.INTERRUPTED, "numeric": GRB.NUMERIC,
                           "suboptimal": GRB.SUBOPTIMAL}.get(outcome, GRB.OPTIMAL)
            self.SolCount, self.NodeCount, self.MIPGap = 1, 0, 0.0
            self.ObjVal = self.ObjBound = float(self.obj @ self.var.Start + self.ObjCon)

        def dispose(self):
            disposed.append("model")

    return types.SimpleNamespace(Env=Env, Model=Model, GRB=GRB)


@pytest.mark.parametrize("outcome", ["solved", "interrupted", "no_license"])
def test_gurobi_model_and_environment_are_disposed(monkeypatch, outcome):
    # Neither was disposed: each fit held a license token until garbage
    # collection. (gurobipy is replaced by a stand-in.)
    import sys

    disposed = []
    monkeypatch.setitem(sys.modules, "gurobipy", _fake_gurobipy(outcome, disposed))
    monkeypatch.setattr(optimal_module, "GUROBI_INSTALLED", True)
    X, C = make_shortest_path(10, n_features=2, grid=(2, 2), random_state=0)
    est = OptimalSPOTree(ShortestPath((2, 2)), max_depth=1, method="milp", solver="gurobi")
    if outcome == "solved":
        assert est.fit(X, C).result_["solver"] == "gurobi"
    else:
        with pytest.raises(KeyboardInterrupt if outcome == "interrupted" else RuntimeError):
            est.fit(X, C)
    assert sorted(disposed) == (["env"] if outcome == "no_license" else ["env", "model"])


def test_gurobi_takes_every_seed_that_random_state_draws(monkeypatch):
    # Seeds are drawn below 2^31 - 1, and Gurobi refuses a Seed above its
    # MAXINT of 2e9: random_state=45 draws 2,100,288,459 and the fit failed
    # (as did about 7% of fits with random_state=None).
    import sys

    assert np.random.RandomState(45).randint(np.iinfo(np.int32).max) > 2_000_000_000
    monkeypatch.setitem(sys.modules, "gurobipy", _fake_gurobipy("solved", []))
    monkeypatch.setattr(optimal_module, "GUROBI_INSTALLED", True)
    X, C = make_shortest_path(10, n_features=2, grid=(2, 2), random_state=0)
    est = OptimalSPOTree(ShortestPath((2, 2)), max_depth=1, method="milp", solver="gurobi",
                         random_state=45)
    assert est.fit(X, C).result_["solver"] == "gurobi"


@pytest.mark.parametrize("outcome, name", [("numeric", "Numeric"),
                                           ("suboptimal", "Suboptimal")])
def test_gurobi_status_is_reported_in_words(monkeypatch, outcome, name):
    # solver_status is documented as the solver's own wording; Gurobi's
    # statuses other than optimal and time limit came out as their codes
    # ("12"), in status too. (The names are Gurobi's GRB constants.)
    import sys

    monkeypatch.setitem(sys.modules, "gurobipy", _fake_gurobipy(outcome, []))
    monkeypatch.setattr(optimal_module, "GUROBI_INSTALLED", True)
    X, C = make_shortest_path(10, n_features=2, grid=(2, 2), random_state=0)
    r = OptimalSPOTree(ShortestPath((2, 2)), max_depth=1, method="milp",
                       solver="gurobi").fit(X, C).result_
    assert r["solver_status"] == name and r["status"] == name


def _scipy_gurobipy(lie):
    """A gurobipy stand-in that solves with scipy.optimize.milp (an independent solver).

    ``lie="with_start"``: given a start, it returns the start and reports
    "optimal" with an objective of -1 and a bound of 10 (as HiGHS 1.16 did,
    see _misreported_knapsack); ``lie="always"``: it does so for its own
    solution too.
    """
    import types

    from scipy.optimize import LinearConstraint, milp

    GRB = types.SimpleNamespace(INTEGER="I", CONTINUOUS="C", OPTIMAL=2, TIME_LIMIT=9,
                                INTERRUPTED=11)

    class Env:
        def __init__(self, empty=False):
            pass

        def setParam(self, name, value):
            pass

        def start(self):
            pass

        def dispose(self):
            pass

    class Model:
        def __init__(self, env):
            self.Params = types.SimpleNamespace()
            self.ObjCon, self.rows = 0.0, []

        def addMVar(self, n, lb, ub, obj, vtype):
            self.lb, self.ub, self.obj = lb, ub, obj
            self.integ = (np.asarray(vtype) == GRB.INTEGER).astype(int)
            self.var = types.SimpleNamespace(Start=None)
            return self.var

        def addMConstr(self, A, x, sense, b):
            lo, hi = (-np.inf, b) if sense == "<" else (b, np.inf)
            self.rows.append(LinearConstraint(A.toarray(), lo, hi))

        def optimize(self):
            start = self.var.Start
            if start is None:
                # (Gurobi's MIPGap defaults to 1e-4, as HiGHS's mip_rel_gap.)
                gap = getattr(self.Params, "MIPGap", 1e-4)
                res = milp(self.obj, integrality=self.integ, constraints=self.rows,
                           bounds=(self.lb, self.ub), options={"mip_rel_gap": gap})
                assert res.success
                x, own = res.x, float(res.fun + self.ObjCon)
            else:
                x, own = np.asarray(start), None
            self.var.X = x
            self.Status, self.SolCount, self.NodeCount = GRB.OPTIMAL, 1, 0
            if own is None or lie == "always":
                self.ObjVal, self.ObjBound, self.MIPGap = -1.0, 10.0, 0.0
            else:
                self.ObjVal = self.ObjBound = own
                self.MIPGap = 0.0

        def dispose(self):
            pass

    return types.SimpleNamespace(Env=Env, Model=Model, GRB=GRB)


@pytest.mark.parametrize("lie", ["with_start", "always"])
def test_gurobi_objective_is_checked_against_its_point(monkeypatch, lie):
    # The Gurobi path took the reported objective and bound at their word
    # (HiGHS's path checks them): a start returned with a lower objective
    # than any tree was kept as "optimal" with a gap of 0 (0.862, the greedy
    # tree; the optimum, by enumeration, is 0.697). Now, as with HiGHS, the
    # solve is retried without the start, and a result still inconsistent
    # proves no bound.
    import sys

    monkeypatch.setitem(sys.modules, "gurobipy", _scipy_gurobipy(lie))
    monkeypatch.setattr(optimal_module, "GUROBI_INSTALLED", True)
    X, C, w, problem = _misreported_knapsack()
    exact = _enumerate_best(X, C, w, problem, 2, 1, alpha=0.2)
    r = OptimalSPOTree(problem, max_depth=2, split_penalty=0.2, method="milp",
                       solver="gurobi").fit(X, C, w).result_
    assert r["solver"] == "gurobi"
    if lie == "with_start":
        assert r["status"] == "optimal"
        assert r["objective"] == pytest.approx(exact, rel=1e-6)
        assert r["solver_objective"] == pytest.approx(exact, rel=1e-6)
    else:
        assert r["status"] == "Inconsistent solver result"
        assert r["solver_status"] == "Optimal"  # the solver's own word
        # (Its point, found without the start, is the optimum; its word is not.)
        assert r["objective"] == pytest.approx(exact, rel=1e-6)
        assert r["bound"] == 0.0 and r["gap"] == 1.0


@pytest.mark.parametrize("param, value", [("max_depth", 0), ("method", "greedy"),
                                          ("split_penalty", -1.0), ("solver", "cplex"),
                                          ("global_thresholds", 0), ("alpha", -1.0),
                                          ("thresholds", 0), ("verbose", -1), ("verbose", "no"),
                                          ("verbose", 1.5)])
def test_rejects_bad_parameters(param, value):
    X, C = make_shortest_path(10, n_features=2, grid=(2, 2), random_state=0)
    est = OptimalSPOTree(ShortestPath((2, 2)), **{param: value})
    with pytest.raises(ValueError, match=f"'{param}' parameter of OptimalSPOTree"):
        est.fit(X, C)


def test_verbose_takes_a_non_negative_int_or_a_bool_as_the_other_estimators(capsys):
    # verbose=-1 printed the log (taken by its truth) and np.int64(1) was refused,
    # where SPOTree's siblings take Interval(int, 0, None) or a bool.
    X, C = make_shortest_path(10, n_features=2, grid=(2, 2), random_state=0)
    for value in (np.int64(0), np.int64(1), 2, np.bool_(True), False):
        OptimalSPOTree(ShortestPath((2, 2)), max_depth=1, verbose=value).fit(X, C)
        assert ("OptimalSPOTree(search)" in capsys.readouterr().out) == bool(value)


# ------------------------------------------------------------ MILP encoding
@pytest.mark.parametrize("depth, min_leaf", [(2, 3), (3, 8)])
def test_greedy_tree_is_a_feasible_milp_assignment(depth, min_leaf):
    """The warm start satisfies every row and bound, and its objective is the tree's loss."""
    from spotree.tree._optimal_milp import MilpModel

    X, C = make_shortest_path(30, n_features=3, grid=(3, 3), noise=0.5, random_state=5)
    problem = ShortestPath((3, 3))
    w = np.random.default_rng(1).integers(1, 3, size=30).astype(float)
    greedy = SPOTree(problem, max_depth=depth, min_samples_leaf=min_leaf).fit(X, C, w)
    _, z = problem.solve(C)
    model = MilpModel(X, C, w, z, problem, depth, min_leaf).build()
    x = model.assignment_from_tree(greedy.tree_)
    Ax = model.A @ x
    assert (Ax >= model.row_lo - 1e-9).all() and (Ax <= model.row_hi + 1e-9).all()
    assert (x >= model.col_lo - 1e-12).all() and (x <= model.col_hi + 1e-12).all()
    integral = model.integ > 0
    np.testing.assert_array_equal(x[integral], np.round(x[integral]))
    t = greedy.tree_
    assert model.objective_of(x) == pytest.approx(t.loss[t.is_leaf].sum() / w.sum())
    # Reading the structure back gives a tree that routes every sample alike.
    back = model.structure_from_solution(x)
    from spotree.tree._structure import tree_from_structure

    rebuilt = tree_from_structure(*back, X, C, w, problem, z=z)
    assert rebuilt.loss[rebuilt.is_leaf].sum() == pytest.approx(t.loss[t.is_leaf].sum())


def test_milp_feature_precision_keeps_tied_values_together():
    X, C = make_shortest_path(12, n_features=2, grid=(2, 2), noise=0.5, random_state=8)
    problem = ShortestPath((2, 2))
    est = OptimalSPOTree(problem, max_depth=2, method="milp", feature_precision=0.25,
                         time_limit=30).fit(X, C)
    scaled = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    rounded = np.round(scaled / 0.25) * 0.25
    t = est.tree_
    assert t.n_leaves > 1
    for node in np.flatnonzero(~t.is_leaf):
        j = t.feature[node]
        for v in np.unique(rounded[:, j]):
            # Samples that tie after rounding are never separated.
            side = X[rounded[:, j] == v, j] <= t.threshold[node]
            assert side.all() or not side.any()
    exact = OptimalSPOTree(problem, max_depth=2).fit(X, C)
    assert est.result_["objective"] >= exact.result_["objective"] - 1e-9


def _separated_ties(tree, X, rounded):
    """How many (split, group of values that round alike) pairs the tree separates."""
    count = 0
    for node in np.flatnonzero(~tree.is_leaf):
        j = tree.feature[node]
        for v in np.unique(rounded[:, j]):
            side = X[rounded[:, j] == v, j] <= tree.threshold[node]
            count += not (side.all() or not side.any())
    return count


def test_milp_feature_precision_warm_start_separates_no_ties(monkeypatch):
    # The greedy tree's thresholds split groups of values that round alike:
    # HiGHS dropped that start as infeasible, and when the solver found
    # nothing (a time limit) the fit returned the greedy tree, ties separated.
    import spotree.problems._highs as highs_module

    starts = []

    def out_of_time(*args, start=None, **kwargs):
        starts.append(start)
        return dict(status="Time limit reached", x=None, objective=np.inf, bound=0.0,
                    gap=np.inf, n_nodes=0)

    monkeypatch.setattr(highs_module, "solve_once", out_of_time)
    X, C = make_shortest_path(40, n_features=2, grid=(2, 2), noise=0.5, random_state=0)
    problem = ShortestPath((2, 2))
    rounded = np.round((X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0)) / 0.25) * 0.25
    greedy = SPOTree(problem, max_depth=2, min_samples_leaf=3).fit(X, C).tree_
    assert _separated_ties(greedy, X, rounded) > 0
    est = OptimalSPOTree(problem, max_depth=2, min_samples_leaf=3, method="milp",
                         feature_precision=0.25).fit(X, C)
    t = est.tree_
    assert est.result_["used_warm_start_tree"] and t.n_leaves > 1
    assert _separated_ties(t, X, rounded) == 0
    assert (t.n_node_samples[t.is_leaf] >= 3).all()
    # The start given to the solver routes rows as that tree does: its objective
    # is no better than the tree's (whose leaves take their best decisions).
    assert starts[0] is not None
    assert est.result_["warm_start_objective"] >= est.result_["objective"] - 1e-12


def test_feature_importances_count_no_gain_of_rounding_noise_as_spotree():
    # Every row but two prefers decision 0 by a margin, so every leaf of at
    # least 3 rows takes decision 0 and no split changes the loss: the MILP
    # (indifferent, with no split penalty) returns some split whose "gain" is
    # rounding noise (positive for these seeds), and feature_importances_
    # were [0, 1] or [1, 0] for it (all 0 for seeds whose noise came out
    # negative).
    # SPOTree (and OptimalSPOTree after prune) drop gains below 1e-12 of
    # the root's loss.
    problem = FiniteDecisions(np.eye(2))
    n_split = 0
    for seed in (1, 8, 10):
        rng = np.random.default_rng(seed)
        X = rng.uniform(size=(8, 2))
        C = rng.uniform(0.1, 1, size=(8, 2))
        C[:, 1] = C[:, 0] + np.where(np.arange(8) % 4 == 0, -0.1, 1.0)
        est = OptimalSPOTree(problem, max_depth=1, min_samples_leaf=3, method="milp",
                             time_limit=5, random_state=0).fit(X, C)
        leaves = est.apply(X)
        for leaf in np.unique(leaves):
            # Every leaf's decision (the oracle on its mean costs) is the root's.
            dec, _ = problem.solve(C[leaves == leaf].mean(axis=0)[None, :])
            assert_array_equal(dec[0], [1.0, 0.0])
        n_split += est.tree_.node_count > 1
        assert_array_equal(est.feature_importances_, [0.0, 0.0])
    assert n_split > 0


@pytest.mark.parametrize("max_tied", [8, 0])  # 0: only "all right" and "all left" tried
def test_milp_feature_precision_warm_start_sends_a_tied_group_left_when_right_breaks_the_leaf(
        monkeypatch, max_tied):
    # The greedy split falls inside the group of values that round to 0.5
    # (0.49 and 0.51); sending that group right leaves 3 rows left, below
    # min_samples_leaf=4, and the start was dropped: at a time limit with no
    # incumbent, the fit returned a lone leaf (0.4). Sent left, the group
    # gives a legal start, the best tree that keeps ties together (0.1, by
    # enumerating every tree on the rounded values).
    import spotree.problems._highs as highs_module

    def out_of_time(*args, start=None, **kwargs):
        return dict(status="Time limit reached", x=None, objective=np.inf, bound=0.0,
                    gap=np.inf, n_nodes=0)

    monkeypatch.setattr(highs_module, "solve_once", out_of_time)
    monkeypatch.setattr(OptimalSPOTree, "_MAX_TIED_SPLITS", max_tied)
    x = np.array([0.0, 0.05, 0.1, 0.49, 0.51, 0.7, 0.8, 0.9, 0.95, 1.0])
    X = x[:, None]
    C = np.where(x[:, None] <= 0.49, [0.0, 1.0], [1.0, 0.0])
    problem = FiniteDecisions(np.eye(2))
    rounded = np.round(X / 0.25) * 0.25
    best = _enumerate_best(rounded, C, np.ones(10), problem, 1, 4)
    assert best == pytest.approx(0.1)
    est = OptimalSPOTree(problem, max_depth=1, min_samples_leaf=4, method="milp",
                         feature_precision=0.25).fit(X, C)
    t = est.tree_
    assert est.result_["used_warm_start_tree"]
    assert est.result_["objective"] == pytest.approx(best)
    assert _separated_ties(t, X, rounded) == 0
    assert (t.n_node_samples[t.is_leaf] >= 4).all()


# ------------------------------------------------------- scikit-learn checks
_NAMED_C = "the target is the cost matrix C (fit(X, C)); the check needs the name y"


# The MILP refuses NaN in X: its allow_nan tag is False (it said True, so
# check_estimators_pickle fed it NaN and failed on the refusal).
@parametrize_with_checks(
    [OptimalSPOTree(max_depth=2), OptimalSPOTree(max_depth=1, method="milp", time_limit=5)],
    expected_failed_checks=lambda est: {
        "check_fit_score_takes_y": _NAMED_C,
        "check_n_features_in_after_fitting": _NAMED_C,
        "check_sample_weight_equivalence_on_dense_data": _NAMED_C,
        **({"check_estimators_nan_inf": "only fit refuses NaN; predict routes a missing value "
                                        "as every spotree tree does"}
           if est.method == "milp" else {}),
    })
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# ------------------------------------------------------ renamed parameters
@pytest.mark.parametrize("old, new, value", [("alpha", "split_penalty", 0.05),
                                             ("thresholds", "global_thresholds", 4)])
def test_old_parameter_names_still_work_with_a_future_warning(old, new, value, tmp_path):
    # "alpha" meant a L2 penalty in SPOPlusLinear and "thresholds" per-node
    # quantiles in SPOTree: OptimalSPOTree's were renamed.
    X, C = make_shortest_path(50, n_features=2, grid=(3, 3), noise=0.3, random_state=1)
    problem = ShortestPath((3, 3))
    with pytest.warns(FutureWarning, match=f"'{old}' parameter was renamed '{new}'.*"
                                           f"use {new}={value!r}"):
        est = OptimalSPOTree(problem, max_depth=2, min_samples_leaf=5,
                             **{old: value}).fit(X, C)
    ref = OptimalSPOTree(problem, max_depth=2, min_samples_leaf=5, **{new: value}).fit(X, C)
    plain = OptimalSPOTree(problem, max_depth=2, min_samples_leaf=5).fit(X, C)
    # The old name had the effect of the new one (and the value was not the default's).
    assert est.result_["objective"] == ref.result_["objective"]
    assert_array_equal(est.tree_.threshold, ref.tree_.threshold)
    assert (ref.result_["objective"] != plain.result_["objective"]
            or not np.array_equal(ref.tree_.threshold, plain.tree_.threshold))
    # The new names warn of nothing; an unset old name is not written to a file.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OptimalSPOTree(problem, max_depth=1, **{new: value}).fit(X, C)
    ref.save(tmp_path / "m.json")
    params = json.loads((tmp_path / "m.json").read_text())["params"]
    assert old not in params and params[new] == value


@pytest.mark.parametrize("old, new, value, other", [("alpha", "split_penalty", 0.05, 0.2),
                                                    ("thresholds", "global_thresholds", 4, 9)])
def test_old_and_new_parameter_names_together_are_refused(old, new, value, other):
    # The old name won and the new one was ignored without a word (alpha=0.05
    # with split_penalty=0.2 fitted with a penalty of 0.05).
    X, C = make_shortest_path(20, n_features=2, grid=(2, 2), random_state=0)
    est = OptimalSPOTree(ShortestPath((2, 2)), max_depth=1, **{old: value, new: other})
    with pytest.raises(ValueError, match=f"both {old}={value!r} .* and {new}={other!r}"):
        est.fit(X, C)
    # The new name at its default (an int 0 included) is not a conflict.
    with pytest.warns(FutureWarning):
        OptimalSPOTree(ShortestPath((2, 2)), max_depth=1,
                       **{old: value, new: 0 if new == "split_penalty" else "all"}).fit(X, C)


def test_prune_by_squared_error_is_refused_with_a_message_for_this_estimator():
    # The message named SPOTree's remedies (criterion='mse', spo_weight),
    # parameters OptimalSPOTree does not have.
    X, C = make_shortest_path(60, n_features=2, grid=(3, 3), noise=0.5, random_state=2)
    est = OptimalSPOTree(ShortestPath((3, 3)), max_depth=2).fit(X[:40], C[:40])
    with pytest.raises(ValueError, match="OptimalSPOTree .* does not keep; prune with "
                                         "loss='criterion' or 'spo'") as info:
        est.prune(X[40:], C[40:], loss="mse")
    assert "spo_weight" not in str(info.value) and "criterion='mse'" not in str(info.value)
    assert est.prune(X[40:], C[40:], loss="spo").get_n_leaves() >= 1


@pytest.mark.parametrize("method", ["search", "milp"])
def test_pruned_copy_reports_the_pruned_trees_objective(method):
    # result_ describes tree_: after prune removed splits, its objective,
    # training loss and gap are the pruned tree's (recomputed here from the
    # definition: each training row's extra cost under its leaf's decision),
    # the bound is kept, and the fitted model's result_ is untouched.
    problem = ShortestPath((3, 3))
    X, C = make_shortest_path(120, grid=(3, 3), degree=2, noise=0.5, random_state=3)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=120)
    # (The MILP ran to its default limit of 60 s: 1 s is enough for a tree.)
    tree = OptimalSPOTree(problem, max_depth=2, min_samples_leaf=10, method=method,
                          split_penalty=0.001, random_state=0,
                          time_limit=1).fit(X, C, sample_weight=w)
    before = dict(tree.result_)
    assert tree.tree_.n_leaves > 1
    # Validation costs unrelated to X: the root alone is best.
    rng = np.random.default_rng(5)
    X_val = rng.uniform(size=(200, X.shape[1]))
    C_val = np.tile(rng.uniform(0.5, 2.0, size=problem.n_costs), (200, 1))
    pruned = tree.prune(X_val, C_val)
    assert pruned.tree_.n_leaves < tree.tree_.n_leaves
    _, z = problem.solve(C)
    dec = pruned.tree_.decision[pruned.tree_.apply(X)]
    train_loss = float((w * ((C * dec).sum(axis=1) - z)).sum() / w.sum())
    n_splits = pruned.tree_.n_leaves - 1
    r = pruned.result_
    assert r["pruned"] is True
    assert r["train_loss"] == pytest.approx(train_loss, rel=1e-9, abs=1e-12)
    assert r["objective"] == pytest.approx(train_loss + 0.001 * n_splits, rel=1e-9)
    assert r["bound"] == before["bound"] and r["bound"] <= r["objective"] + 1e-12
    assert r["gap"] == pytest.approx((r["objective"] - r["bound"]) / r["objective"])
    assert r["status"] == before["status"]
    assert tree.result_ == before


def test_a_split_penalty_set_after_fit_is_not_the_pruned_copys(tmp_path):
    # prune() priced the pruned copy's splits at the split_penalty set since
    # fit (0.5 here, not the fit's 0.001): an objective of 1.469 for the
    # one-split tree of training loss 0.969; save() wrote 0.5 too.
    from spotree.tree import load

    problem = ShortestPath((3, 3))
    X, C, B = make_shortest_path(120, grid=(3, 3), degree=2, noise=0.5, random_state=3,
                                 return_B=True)
    X_val, C_val = make_shortest_path(30, grid=(3, 3), degree=2, noise=1.0, random_state=10,
                                      B=B)
    tree = OptimalSPOTree(problem, max_depth=2, min_samples_leaf=10,
                          split_penalty=0.001).fit(X, C)
    tree.set_params(split_penalty=0.5)
    pruned = tree.prune(X_val, C_val)
    n_splits = pruned.tree_.n_leaves - 1
    assert 0 < n_splits < tree.tree_.n_leaves - 1
    _, z = problem.solve(C)
    dec = pruned.tree_.decision[pruned.tree_.apply(X)]
    train_loss = float(((C * dec).sum(axis=1) - z).mean())
    assert pruned.result_["objective"] == pytest.approx(train_loss + 0.001 * n_splits, rel=1e-9)
    tree.save(tmp_path / "t.json")
    assert load(tmp_path / "t.json").get_params()["split_penalty"] == 0.001


@pytest.mark.parametrize("method", ["search", "milp"])
def test_result_is_saved_and_loaded_with_the_model(tmp_path, method):
    # result_ (status, objective, bound, gap...) is part of what a user saves:
    # the loaded model reported no result_ at all before it was written.
    from spotree.tree import load

    problem = ShortestPath((3, 3))
    X, C = make_shortest_path(60, grid=(3, 3), degree=2, noise=0.5, random_state=1)
    est = OptimalSPOTree(problem, max_depth=1, method=method, random_state=0,
                         time_limit=1).fit(X, C)
    pruned = est.prune(X[:20], np.tile(C[:1], (20, 1)))
    for model, name in ((est, "fit.json"), (pruned, "pruned.json")):
        model.save(tmp_path / name)
        back = load(tmp_path / name)
        assert back.result_ == model.result_
        assert set(back.result_) >= {"method", "status", "objective", "bound", "gap"}
    assert load(tmp_path / "pruned.json").result_.get("pruned") is True
    # A result_ that is not an object of scalars is refused, naming the key.
    doc = json.loads((tmp_path / "fit.json").read_text())
    doc["fitted"]["result_"]["status"] = ["optimal"]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"fitted\.result_\.status must be a JSON number"):
        load(tmp_path / "bad.json")
    doc["fitted"]["result_"] = [1]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"fitted\.result_ must be an object"):
        load(tmp_path / "bad.json")


@pytest.mark.parametrize("method", ["search", "milp"])
def test_costs_whose_optimal_values_pass_the_float_range_are_refused_naming_c(method):
    # Costs up to 2^1023 on two-edge paths: the optimal values are inf. The
    # MILP's objective constant was inf and HiGHS crashed the process
    # (segmentation fault); the search failed with "C contains NaN or infinity".
    X, C = make_shortest_path(30, grid=(2, 2), n_features=2, degree=2, random_state=0)
    C = (1.0 + 0.9 * C / C.max()) * 2.0 ** 1023  # each below the largest float
    assert not np.isfinite(ShortestPath((2, 2)).solve(C)[1]).all()  # c^T w*, by the oracle
    with pytest.raises(ValueError, match=r"optimal value c\^T w\* of row \d+ of C is beyond "
                                         r"the float range .* divide C by a power of two"):
        OptimalSPOTree(ShortestPath((2, 2)), max_depth=1, method=method).fit(X, C)
