"""SPOTree: fitted node quantities, Theorem 1, the paper's example, pruning, API, bad input."""

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.tree import DecisionTreeRegressor

from spotree import SPOTree
from spotree.datasets import make_illustrative, make_shortest_path
from spotree.metrics import make_spo_scorer, normalized_spo_loss
from spotree.problems import CallableProblem, FiniteDecisions, Knapsack, ShortestPath

SP = ShortestPath((3, 3))


def _random_finite(seed, sense="min", K=6, d=4):
    rng = np.random.default_rng(500 + seed)
    return FiniteDecisions(rng.uniform(-1.0, 1.0, size=(K, d)), sense=sense)


def _oracle_only(problem):
    def oracle(C):
        return problem.solve(C)[0]

    return CallableProblem(oracle, n_costs=problem.n_costs, sense=problem.sense,
                           batched=True)


def _sp_data(n=80, seed=0, p=3, noise=0.5):
    return make_shortest_path(n, n_features=p, grid=(3, 3), noise=noise, random_state=seed)


def _data(problem, n, seed, p=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    # Costs that depend on X so that trees have something to find.
    B = rng.normal(size=(p, problem.n_costs))
    C = rng.uniform(0.5, 1.5, size=(n, problem.n_costs)) + X @ B * 0.5
    return X, C


# ------------------------------------------------- every node, recomputed
PROBLEMS = {
    "sp33": lambda s: ShortestPath((3, 3)),
    "sp33-max": lambda s: ShortestPath((3, 3), sense="max"),
    "finite": lambda s: _random_finite(s),
    "finite-max": lambda s: _random_finite(s, sense="max"),
    "sp-oracle": lambda s: _oracle_only(ShortestPath((2, 3))),
}


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("criterion", ["spo", "mse"])
def test_every_node_matches_a_recomputation(name, seed, criterion):
    problem = PROBLEMS[name](seed)
    X, C = _data(problem, 70, seed)
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.2, 3.0, size=70)
    est = SPOTree(problem, criterion=criterion, max_depth=4).fit(X, C, sample_weight=w)
    t = est.tree_
    _, z = problem.solve(C)
    P = est.decision_path(X).toarray().astype(bool)  # samples x nodes
    for u in range(t.node_count):
        m = P[:, u]
        assert t.n_node_samples[u] == m.sum()
        assert t.weighted_n_node_samples[u] == pytest.approx(w[m].sum(), rel=1e-12)
        mean = (w[m, None] * C[m]).sum(axis=0) / w[m].sum()
        np.testing.assert_allclose(t.value[u], mean, rtol=1e-10, atol=1e-12)
        W, zbar = problem.solve(mean[None, :])
        if not np.allclose(t.decision[u], W[0]):
            # Only a floating tie between optimal decisions may differ.
            assert problem.sign * (mean @ t.decision[u] - zbar[0]) <= 1e-9 * abs(zbar[0])
        spo = np.sum(w[m] * problem.sign * (C[m] @ t.decision[u] - z[m]))
        assert t.loss[u] == pytest.approx(spo, rel=1e-9, abs=1e-9)
        sse = np.sum(w[m] * ((C[m] - mean) ** 2).sum(axis=1))
        assert t.impurity[u] == pytest.approx(spo if criterion == "spo" else sse,
                                              rel=1e-9, abs=1e-9)
        if t.children_left[u] != -1:
            left, right = t.children_left[u], t.children_right[u]
            np.testing.assert_array_equal(P[:, left] | P[:, right], m)
            assert not (P[:, left] & P[:, right]).any()
    # Leaves partition the training set and predictions come from them.
    leaves = est.apply(X)
    np.testing.assert_array_equal(est.predict(X), t.value[leaves])
    np.testing.assert_array_equal(est.predict_decision(X), t.decision[leaves])


def test_children_losses_do_not_exceed_their_parents():
    # z* is concave, so splitting never raises the SPO loss (the node values
    # themselves are checked against a recomputation above).
    X, C = _sp_data(200, seed=3)
    t = SPOTree(SP, max_depth=5).fit(X, C).tree_
    internal = np.flatnonzero(t.children_left != -1)
    kids = t.loss[t.children_left[internal]] + t.loss[t.children_right[internal]]
    assert (kids <= t.loss[internal] + 1e-9 * t.loss[0]).all()


@pytest.mark.parametrize("seed", range(3))
def test_integer_weights_equal_duplicated_rows(seed):
    problem = _random_finite(seed)
    X, C = _data(problem, 30, seed)
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 4, size=30)
    w[0] = 1
    Xr, Cr = np.repeat(X, w, axis=0), np.repeat(C, w, axis=0)
    perm = rng.permutation(30)
    # A leaf of at least 4 copies is a leaf of weight at least 4: by weight
    # fraction, since min_samples_leaf counts rows whatever their weights.
    frac = dict(min_weight_fraction_leaf=4 / w.sum())
    for kw in [dict(max_depth=3), frac, dict(criterion="mse", max_depth=3)]:
        a = SPOTree(problem, **kw).fit(X[perm], C[perm], sample_weight=w[perm]).tree_
        b = SPOTree(problem, **kw).fit(Xr, Cr).tree_
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_allclose(a.threshold, b.threshold)
        np.testing.assert_allclose(a.value, b.value, rtol=1e-10)
        np.testing.assert_array_equal(a.decision, b.decision)
        np.testing.assert_allclose(a.loss, b.loss, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(a.weighted_n_node_samples, b.weighted_n_node_samples)


def test_zero_weights_equal_removing_rows():
    X, C = _sp_data(60, seed=4)
    w = np.ones(60)
    w[::3] = 0.0
    a = SPOTree(SP, max_depth=4).fit(X, C, sample_weight=w)
    b = SPOTree(SP, max_depth=4).fit(X[w > 0], C[w > 0])
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.tree_.n_node_samples, b.tree_.n_node_samples)


@pytest.mark.parametrize("param", ["min_samples_leaf", "min_samples_split"])
def test_a_fractional_min_count_is_a_fraction_of_the_rows_of_positive_weight(param):
    # A row of weight 0 is a row removed, so the fraction is of the 45 rows of
    # positive weight (ceil(0.3 * 45) = 14), not of all 60 (18, scikit-learn's).
    X, C = _sp_data(60, seed=7)
    w = np.ones(60)
    w[::4] = 0.0
    a = SPOTree(SP, **{param: 0.3}).fit(X, C, sample_weight=w)
    b = SPOTree(SP, **{param: 14}).fit(X[w > 0], C[w > 0])
    c = SPOTree(SP, **{param: 18}).fit(X[w > 0], C[w > 0])
    np.testing.assert_array_equal(a.tree_.n_node_samples, b.tree_.n_node_samples)
    assert a.tree_.node_count != c.tree_.node_count
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


# ------------------------------------------------------- invariances
def _partition(leaves):
    """Leaf labels renamed by first appearance: equal iff the same grouping of rows."""
    first = {}
    return np.array([first.setdefault(v, len(first)) for v in leaves])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), criterion=st.sampled_from(["spo", "mse", "mixed"]),
       nan=st.booleans(), categorical=st.booleans())
def test_row_order_and_monotone_feature_maps_do_not_change_the_tree(seed, criterion, nan,
                                                                    categorical):
    # Metamorphic checks, run on 300-plus random instances in the hunt that
    # added them: the rows' order must not matter (ties go by feature, then
    # threshold, never by row), and splits only see the order of a feature's
    # values, so a strictly increasing or decreasing map of a numeric
    # feature groups the training rows the same way.
    rng = np.random.default_rng(seed)
    problem = ShortestPath((2, 3)) if seed % 2 else _random_finite(seed % 7, sense="max")
    n = 40
    X = rng.normal(size=(n, 3))
    C = rng.uniform(0.5, 1.5, size=(n, problem.n_costs)) + np.outer(X[:, 0], rng.normal(
        size=problem.n_costs))
    if nan:
        X[rng.random(X.shape) < 0.15] = np.nan
    kw = dict(max_depth=3, min_samples_leaf=2)
    if categorical:
        X[:, 2] = rng.integers(0, 4, size=n)
        kw["categorical_features"] = [2]
    if criterion == "mse":
        kw["criterion"] = "mse"
    elif criterion == "mixed":
        kw["spo_weight"] = 0.5
    w = rng.uniform(0.5, 2.0, size=n)
    base = SPOTree(problem, **kw).fit(X, C, sample_weight=w)
    perm = rng.permutation(n)
    shuffled = SPOTree(problem, **kw).fit(X[perm], C[perm], sample_weight=w[perm])
    for attr in ("feature", "children_left", "missing_go_to_left"):
        np.testing.assert_array_equal(getattr(shuffled.tree_, attr), getattr(base.tree_, attr))
    np.testing.assert_array_equal(shuffled.tree_.threshold, base.tree_.threshold)
    np.testing.assert_allclose(shuffled.tree_.value, base.tree_.value, rtol=1e-12)
    np.testing.assert_allclose(shuffled.tree_.impurity, base.tree_.impurity, rtol=1e-9,
                               atol=1e-12)
    for f in (lambda x: np.exp(x / 2.0) * 3.0 - 1.0, lambda x: -(x ** 3) - 2.0):
        Xm = X.copy()
        Xm[:, 0] = f(Xm[:, 0])  # NaN stays NaN
        mapped = SPOTree(problem, **kw).fit(Xm, C, sample_weight=w)
        np.testing.assert_array_equal(_partition(mapped.apply(Xm)), _partition(base.apply(X)))
        # A decreasing map swaps the children of its splits: the same losses,
        # in another node order.
        np.testing.assert_allclose(np.sort(mapped.tree_.impurity), np.sort(base.tree_.impurity),
                                   rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------- Theorem 1
@st.composite
def _leaf(draw):
    kind = draw(st.sampled_from(["sp22", "sp23-max", "finite", "finite-max"]))
    seed = draw(st.integers(0, 2**16))
    problem = {"sp22": ShortestPath((2, 2)), "sp23-max": ShortestPath((2, 3), sense="max"),
               "finite": _random_finite(seed % 50),
               "finite-max": _random_finite(seed % 50, sense="max")}[kind]
    n = draw(st.integers(1, 12))
    rng = np.random.default_rng(seed)
    C = rng.normal(1.0, 1.0, size=(n, problem.n_costs))
    w = rng.uniform(0.1, 3.0, size=n)
    return problem, C, w, rng


def _total_spo(problem, C, w, c_hat, z):
    W, _ = problem.solve(c_hat[None, :])
    return float(np.sum(w * problem.sign * (C @ W[0] - z)))


@settings(max_examples=60, deadline=None)
@given(_leaf())
def test_theorem1_leaf_mean_beats_any_alternative(leaf):
    problem, C, w, rng = leaf
    _, z = problem.solve(C)
    # The library's leaf: one node holding all samples (constant feature).
    est = SPOTree(problem).fit(np.zeros((len(C), 1)), C, sample_weight=w)
    assert est.get_n_leaves() == 1
    mean = (w[:, None] * C).sum(axis=0) / w.sum()
    np.testing.assert_allclose(est.tree_.value[0], mean, rtol=1e-10, atol=1e-12)
    leaf_loss = est.tree_.loss[0]
    assert leaf_loss == pytest.approx(_total_spo(problem, C, w, mean, z), rel=1e-9, abs=1e-9)
    alternatives = [rng.normal(0.0, 2.0, size=problem.n_costs) for _ in range(20)]
    alternatives += [mean + rng.normal(0.0, 0.5, size=problem.n_costs) for _ in range(10)]
    alternatives += list(C)  # each sample's own cost as the leaf's prediction
    alternatives.append(-mean)
    tol = 1e-9 * (1.0 + np.abs(w @ z))
    for c_hat in alternatives:
        assert leaf_loss <= _total_spo(problem, C, w, c_hat, z) + tol


# ------------------------------------------------- the illustrative example
def test_illustrative_example_spot_finds_the_decision_boundary():
    problem = FiniteDecisions(np.eye(2))
    X, C = make_illustrative(10000, random_state=0)
    spot = SPOTree(problem, max_depth=1).fit(X, C)
    crossing = (0.2 + np.sqrt(0.04 + 4 * 1.74)) / 2 / 5  # 5x + 1.9 = (5x + 0.4)^2
    assert crossing == pytest.approx(0.2846, abs=1e-4)
    thr = spot.tree_.threshold[0]
    assert abs(thr - 0.28) <= 0.01
    assert abs(thr - crossing) <= 0.002
    X_new, C_new = make_illustrative(5000, random_state=1)
    assert normalized_spo_loss(C_new, spot.predict(X_new), problem=problem) < 1e-3
    assert -spot.score(X_new, C_new) < 1e-3


def test_illustrative_example_cart_splits_near_062_and_decides_wrongly():
    problem = FiniteDecisions(np.eye(2))
    X, C = make_illustrative(10000, random_state=0)
    cart = SPOTree(problem, criterion="mse", max_depth=1).fit(X, C)
    assert abs(cart.tree_.threshold[0] - 0.62) <= 0.01
    X_new, C_new = make_illustrative(10000, random_state=1)
    best = np.argmin(C_new, axis=1)
    chosen = np.argmax(cart.predict_decision(X_new), axis=1)
    wrong = np.mean(chosen != best)
    assert 0.25 <= wrong <= 0.31  # the paper's 28%
    assert normalized_spo_loss(C_new, cart.predict(X_new), problem=problem) > 0.01


# ----------------------------------------------------------------- pruning
def _train_val(seed=0):
    X, C = _sp_data(200, seed=seed, noise=0.5)
    Xv, Cv = _sp_data(100, seed=seed + 100, noise=0.5)
    return X, C, Xv, Cv


@pytest.mark.parametrize("criterion", ["spo", "mse"])
def test_cost_complexity_pruning_path(criterion):
    X, C, _, _ = _train_val(0)
    est = SPOTree(SP, criterion=criterion, min_samples_leaf=5)
    path = est.cost_complexity_pruning_path(X, C)
    alphas, imp = path.ccp_alphas, path.impurities
    full = clone(est).fit(X, C).tree_
    assert alphas[0] == 0.0
    assert np.all(np.diff(alphas) >= 0)
    assert np.all(np.diff(alphas[alphas > 0]) > 0)  # only zero-gain prunings repeat
    assert np.all(np.diff(imp) >= -1e-9 * imp[-1])
    assert imp[0] == pytest.approx(full.impurity[full.is_leaf].sum())
    assert imp[-1] == pytest.approx(full.impurity[0])
    assert not hasattr(est, "tree_")  # the path does not fit the estimator itself


def test_ccp_alpha_gives_the_subtree_of_the_sequence():
    X, C, _, _ = _train_val(1)
    path = SPOTree(SP, min_samples_leaf=5).cost_complexity_pruning_path(X, C)
    full = SPOTree(SP, min_samples_leaf=5).fit(X, C).tree_
    alphas, masks, _ = full.pruning_sequence()
    np.testing.assert_array_equal(alphas, path.ccp_alphas)
    for i in range(1, len(alphas)):
        for a in {alphas[i], 0.5 * (alphas[i] + (alphas[i + 1] if i + 1 < len(alphas)
                                                 else 2 * alphas[i]))}:
            if a <= 0:
                continue
            est = SPOTree(SP, min_samples_leaf=5, ccp_alpha=float(a)).fit(X, C)
            k = np.searchsorted(alphas, a, side="right") - 1
            expected = full.pruned(masks[k])
            assert est.get_n_leaves() == expected.n_leaves
            np.testing.assert_array_equal(est.tree_.feature, expected.feature)
            np.testing.assert_array_equal(est.tree_.threshold, expected.threshold)
            np.testing.assert_array_equal(est.predict(X), expected.value[expected.apply(X)])
    huge = SPOTree(SP, min_samples_leaf=5, ccp_alpha=10 * alphas[-1] + 1).fit(X, C)
    assert huge.get_n_leaves() == 1


@pytest.mark.parametrize("seed", range(3))
def test_prune_picks_the_subtree_with_the_lowest_validation_loss(seed):
    X, C, Xv, Cv = _train_val(seed)
    est = SPOTree(SP, min_samples_leaf=5).fit(X, C)
    before = copy.deepcopy(est.tree_.to_dict())
    pruned = est.prune(Xv, Cv)
    # Brute force over the sequence's subtrees, scored with the public metric.
    alphas, masks, _ = est.tree_.pruning_sequence()
    scores = []
    for mask in masks:
        sub = est.tree_.pruned(mask)
        scores.append(normalized_spo_loss(Cv, sub.value[sub.apply(Xv)], problem=SP))
    scores = np.array(scores)
    best = scores.min()
    got = normalized_spo_loss(Cv, pruned.predict(Xv), problem=SP)
    assert got == pytest.approx(best, rel=1e-9, abs=1e-12)
    # Ties go to the smaller tree: the chosen subtree is the last one at the minimum.
    k = np.flatnonzero(scores <= best + 1e-9 * best)[-1]
    assert pruned.get_n_leaves() == est.tree_.pruned(masks[k]).n_leaves
    assert pruned.pruning_alpha_ == pytest.approx(alphas[k])
    # A copy: the original is untouched.
    assert est.tree_.to_dict() == before
    assert pruned is not est and pruned.tree_ is not est.tree_
    # One-SE rule: the smallest subtree within one standard error of the best
    # total validation loss (the standard error of the best subtree's mean
    # per-sample loss, scaled to a total).
    se_tree = est.prune(Xv, Cv, one_se_rule=True)
    assert se_tree.get_n_leaves() <= pruned.get_n_leaves()
    _, zv = SP.solve(Cv)
    totals, per_best = [], None
    for j, mask in enumerate(masks):
        sub = est.tree_.pruned(mask)
        per = np.einsum("ij,ij->i", Cv, sub.decision[sub.apply(Xv)]) - zv
        totals.append(per.sum())
        if j == k:
            per_best = per
    se = per_best.std(ddof=1) / np.sqrt(len(per_best)) * len(per_best)
    k_se = np.flatnonzero(np.array(totals) <= totals[k] + se)[-1]
    assert se_tree.get_n_leaves() == est.tree_.pruned(masks[k_se]).n_leaves
    assert est.tree_.to_dict() == before


def _prunings(t, u=0):
    """Every pruning of the subtree at ``u``, each as a frozenset of its leaves."""
    if t.children_left[u] == -1:
        return [frozenset([u])]
    out = [frozenset([u])]
    for a in _prunings(t, t.children_left[u]):
        for b in _prunings(t, t.children_right[u]):
            out.append(a | b)
    return out


def _train_node_losses(t, P, C, z):
    """(SPO, squared error) of every node on its training rows, from scratch."""
    spo, sse = np.zeros(t.node_count), np.zeros(t.node_count)
    for u in range(t.node_count):
        m = P[:, u]
        mean = C[m].mean(axis=0)
        w_u = SP.solve(mean[None, :])[0][0]
        spo[u] = np.sum(C[m] @ w_u - z[m])
        sse[u] = np.sum((C[m] - mean) ** 2)
    return spo, sse


@pytest.mark.parametrize("criterion, spo_weight, loss", [
    ("spo", 1.0, "criterion"), ("mse", 1.0, "criterion"), ("spo", 0.5, "criterion"),
    ("spo", 1.0, "spo"), ("mse", 1.0, "mse"), ("mse", 1.0, "spo"), ("spo", 0.5, "mse"),
    ("spo", 0.3, "spo")])
def test_every_pruning_mode_against_brute_force(criterion, spo_weight, loss):
    # Brute force over every pruning of a depth-4 tree: the cost-complexity
    # optimal subtrees (for some alpha >= 0, ties to the smaller) by the
    # training loss of the mode, then the one with the lowest validation loss.
    X, C, Xv, Cv = _train_val(7)
    C, Cv = 1e3 * C, 1e3 * Cv  # costs far from 1, where scalings and powers show
    est = SPOTree(SP, criterion=criterion, spo_weight=spo_weight, max_depth=4,
                  min_samples_leaf=5).fit(X, C)
    t = est.tree_
    _, z = SP.solve(C)
    _, zv = SP.solve(Cv)
    spo_tr, sse_tr = _train_node_losses(t, est.decision_path(X).toarray().astype(bool), C, z)
    Pv = est.decision_path(Xv).toarray().astype(bool)
    spo_va = np.array([np.sum(Cv[Pv[:, u]] @ t.decision[u] - zv[Pv[:, u]])
                       for u in range(t.node_count)])
    sse_va = np.array([np.sum((Cv[Pv[:, u]] - t.value[u]) ** 2) for u in range(t.node_count)])
    mixed = criterion == "spo" and 0 < spo_weight < 1
    if mixed:  # the scales are the root's training losses
        np.testing.assert_allclose(est.loss_scales_, (spo_tr[0], sse_tr[0]), rtol=1e-9)
    def pick(spo, sse):
        if loss == "spo" or (loss == "criterion" and criterion == "spo" and not mixed):
            return spo
        if loss == "mse" or criterion == "mse":
            return sse
        return spo_weight * spo / spo_tr[0] + (1 - spo_weight) * sse / sse_tr[0]
    train, val = pick(spo_tr, sse_tr), pick(spo_va, sse_va)
    subtrees = _prunings(t)
    R = np.array([train[list(S)].sum() for S in subtrees])
    size = np.array([len(S) for S in subtrees])
    alphas = {0.0} | {(R[i] - R[j]) / (size[j] - size[i])
                      for i in range(len(R)) for j in range(len(R))
                      if size[j] > size[i] and R[i] >= R[j]}
    optimal = set()
    for a in alphas:
        cost = R + a * size
        best = np.flatnonzero(cost <= cost.min() + 1e-9 * abs(R).max())
        optimal.add(best[np.argmin(size[best])])
    assert len(optimal) >= 3  # a real choice between subtrees
    V = {i: val[list(subtrees[i])].sum() for i in optimal}
    vbest = min(V.values())
    chosen = min((i for i in optimal if V[i] <= vbest + 1e-9 * abs(vbest)), key=lambda i: size[i])
    pruned = est.prune(Xv, Cv, loss=loss)
    assert pruned.get_n_leaves() == size[chosen]
    np.testing.assert_allclose(pruned.pruning_path_.val_losses.min(), vbest, rtol=1e-9)
    # The pruned tree predicts from the chosen subtree's leaves.
    leaf = np.array([next(u for u in subtrees[chosen] if Pv[r, u]) for r in range(len(Xv))])
    np.testing.assert_allclose(pruned.predict(Xv), t.value[leaf], rtol=1e-12)
    # One-SE rule: the smallest of those subtrees within one standard error of
    # the best total validation loss (from the best subtree's per-row losses).
    per_row = pick(np.einsum("ij,ij->i", Cv, t.decision[leaf]) - zv,
                   ((Cv - t.value[leaf]) ** 2).sum(axis=1))
    se = per_row.std(ddof=1) / np.sqrt(len(per_row)) * len(per_row)
    within = [i for i in optimal if V[i] <= V[chosen] + se]
    se_tree = est.prune(Xv, Cv, loss=loss, one_se_rule=True)
    assert se_tree.get_n_leaves() == min(size[i] for i in within)
    assert se_tree.pruning_path_.standard_error == pytest.approx(se, rel=1e-9)
    assert np.isnan(pruned.pruning_path_.standard_error)


def test_prune_by_squared_error_needs_a_tree_that_kept_it():
    X, C, Xv, Cv = _train_val(2)
    est = SPOTree(SP, max_depth=2).fit(X, C)
    with pytest.raises(ValueError, match="loss='mse' pruning needs the training squared"):
        est.prune(Xv, Cv, loss="mse")


@pytest.mark.parametrize("name", ["SPOTree", "OptimalSPOTree"])
def test_prune_names_x_val_in_its_feature_errors(name):
    # X_val's errors spoke of "X" ("Input X contains infinity", "X has 2
    # features, but SPOTree is expecting 3"), an argument prune does not take.
    import pandas as pd

    import spotree
    X, C, Xv, Cv = _train_val(2)
    est = getattr(spotree, name)(SP, max_depth=1).fit(X, C)
    bad = Xv.copy()
    bad[0, 0] = np.inf
    for Xb in (bad, Xv[:, :2], Xv[:, :, None]):
        with pytest.raises(ValueError, match="^X_val: "):
            est.prune(Xb, Cv)
    # predict keeps "X".
    with pytest.raises(ValueError, match="^Input X contains infinity"):
        est.predict(bad)
    frame = est.fit(pd.DataFrame(X, columns=["a", "b", "c"]), C)
    with pytest.raises(ValueError, match="^X_val: .*feature names"):
        frame.prune(pd.DataFrame(Xv, columns=["a", "b", "d"]), Cv)


@pytest.mark.parametrize("loss", ["criterion", "mse"])
@pytest.mark.parametrize("name", ["SPOTree", "OptimalSPOTree"])
def test_prune_before_fit_raises_not_fitted(name, loss):
    # It raised AttributeError ('... has no attribute tree_'), unlike predict.
    import spotree
    X, C, Xv, Cv = _train_val(2)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        getattr(spotree, name)(SP).prune(Xv, Cv, loss=loss)


def test_prune_uses_the_criterion_the_tree_was_grown_with_not_later_set_params(tmp_path):
    # prune() read criterion and spo_weight from the parameters: after
    # set_params(criterion="mse") on a fitted SPO tree it ordered the SPO
    # training losses but scored the validation rows by squared error (9
    # leaves kept instead of 1 on seed 0), and a mixed tree set to
    # spo_weight=1 refused loss="mse" pruning.
    import spotree
    from spotree.metrics import decision_loss

    X, C, Xv, Cv = _train_val(0)
    spo = SPOTree(SP, max_depth=4).fit(X, C)
    spo.set_params(criterion="mse")
    kept = spo.prune(Xv, Cv)
    regret = decision_loss(Cv, kept.predict_decision(Xv), problem=SP).sum()
    assert kept.pruning_path_.val_losses.min() == pytest.approx(regret, rel=1e-9)
    mixed = SPOTree(SP, max_depth=4, spo_weight=0.5).fit(X, C)
    before = mixed.prune(Xv, Cv, loss="mse")
    mixed.set_params(spo_weight=1.0)
    after = mixed.prune(Xv, Cv, loss="mse")
    np.testing.assert_array_equal(after.pruning_path_.val_losses,
                                  before.pruning_path_.val_losses)
    assert after.get_n_leaves() == before.get_n_leaves()
    # Saved, it holds the criterion it was grown with, and prunes as before.
    path = tmp_path / "spo.json"
    spo.save(path)
    loaded = spotree.load(path)
    assert loaded.get_params()["criterion"] == "spo"
    np.testing.assert_array_equal(loaded.prune(Xv, Cv).pruning_path_.val_losses,
                                  kept.pruning_path_.val_losses)


def test_prune_with_weights_matches_duplicated_validation_rows():
    X, C, Xv, Cv = _train_val(5)
    est = SPOTree(SP, min_samples_leaf=5).fit(X, C)
    w = np.random.default_rng(0).integers(1, 4, size=len(Xv))
    a = est.prune(Xv, Cv, sample_weight=w)
    b = est.prune(np.repeat(Xv, w, axis=0), np.repeat(Cv, w, axis=0))
    assert a.get_n_leaves() == b.get_n_leaves()
    np.testing.assert_allclose(a.pruning_path_.val_losses, b.pruning_path_.val_losses)


@pytest.mark.parametrize("one_se_rule", [False, True])
def test_prune_with_validation_weights_whose_sums_pass_the_float_range(one_se_rule):
    # Validation weights times 2^1016: each finite, the nodes' weighted losses
    # summed over the rows not (prune raised IndexError on their NaN). A power
    # of two must choose the same subtree, with the losses times it.
    X, C, Xv, Cv = _train_val(5)
    est = SPOTree(SP, min_samples_leaf=5).fit(X, C)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(Xv))
    big = 2.0 ** 1016
    a = est.prune(Xv, Cv, sample_weight=w, one_se_rule=one_se_rule)
    b = est.prune(Xv, Cv, sample_weight=w * big, one_se_rule=one_se_rule)
    assert a.pruning_path_.n_leaves.size > 2
    assert b.get_n_leaves() == a.get_n_leaves()
    assert b.pruning_alpha_ == a.pruning_alpha_
    ok = np.isfinite(b.pruning_path_.val_losses)
    assert ok.any()
    np.testing.assert_array_equal(b.pruning_path_.val_losses[ok],
                                  a.pruning_path_.val_losses[ok] * big)
    assert (b.pruning_path_.standard_error == a.pruning_path_.standard_error * big
            or np.isnan(a.pruning_path_.standard_error))


def test_one_se_rule_ignores_validation_rows_of_zero_weight():
    # A zero weight is a removed row: it must not count in the standard
    # error's n (it did: the SE shrank by sqrt((n_kept - 1) / (n_all - 1))).
    X, C, Xv, Cv = _train_val(5)
    est = SPOTree(SP, min_samples_leaf=5).fit(X, C)
    w = np.ones(len(Xv))
    w[::2] = 0.0
    keep = w > 0
    a = est.prune(Xv, Cv, sample_weight=w, one_se_rule=True)
    b = est.prune(Xv[keep], Cv[keep], one_se_rule=True)
    # By hand on the kept rows: per-row regret of the best subtree's decisions.
    best = est.prune(Xv[keep], Cv[keep])
    _, zk = SP.solve(Cv[keep])
    per = np.einsum("ij,ij->i", Cv[keep], best.predict_decision(Xv[keep])) - zk
    se = per.std(ddof=1) * np.sqrt(len(per))
    assert a.pruning_path_.standard_error == pytest.approx(se, rel=1e-9)
    assert b.pruning_path_.standard_error == pytest.approx(se, rel=1e-9)
    assert a.get_n_leaves() == b.get_n_leaves()


def test_one_se_rule_scales_with_the_validation_weights():
    # Weights times 1000: every validation loss and the standard error of the
    # best subtree's total loss times 1000 (the per-row losses and their
    # weighted spread unchanged), so the same subtree is kept.
    X, C, Xv, Cv = _train_val(0)
    est = SPOTree(SP, min_samples_leaf=5).fit(X, C)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(Xv))
    base = est.prune(Xv, Cv, sample_weight=w, one_se_rule=True)
    assert base.get_n_leaves() < est.prune(Xv, Cv, sample_weight=w).get_n_leaves()
    got = est.prune(Xv, Cv, sample_weight=1e3 * w, one_se_rule=True)
    np.testing.assert_allclose(got.pruning_path_.val_losses, 1e3 * base.pruning_path_.val_losses,
                               rtol=1e-9)
    assert got.pruning_path_.standard_error == pytest.approx(
        1e3 * base.pruning_path_.standard_error, rel=1e-9)
    assert got.get_n_leaves() == base.get_n_leaves()


@pytest.mark.parametrize("flag", ["no", "False", 0, None])
def test_one_se_rule_must_be_a_bool(flag):
    # Taken by its truth: "no" applied the one-SE rule (a smaller tree here)
    # without a word, and 0 / None passed for False.
    X, C, Xv, Cv = _train_val(0)
    est = SPOTree(SP, min_samples_leaf=5).fit(X, C)
    assert (est.prune(Xv, Cv, one_se_rule=True).get_n_leaves()
            < est.prune(Xv, Cv).get_n_leaves())
    with pytest.raises(ValueError, match=f"The 'one_se_rule' parameter of SPOTree.prune must "
                                         f"be a bool. Got {flag!r} instead."):
        est.prune(Xv, Cv, one_se_rule=flag)


# ----------------------------------------------------- scikit-learn habits
def test_clone_and_params():
    est = SPOTree(SP, max_depth=3, thresholds=9, min_samples_leaf=2)
    c = clone(est)
    assert c.get_params() == {**est.get_params(), "problem": c.problem}
    assert c.max_depth == 3 and c.thresholds == 9
    X, C = _sp_data(60)
    fitted = clone(est).fit(X, C)
    c2 = clone(fitted)
    assert not hasattr(c2, "tree_")
    np.testing.assert_array_equal(clone(est).fit(X, C).predict(X), fitted.predict(X))


def test_default_problem_picks_the_cheapest_option():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(50, 2))
    C = rng.uniform(size=(50, 4)) + np.column_stack([X[:, 0], -X[:, 0], X[:, 1], 0 * X[:, 1]])
    est = SPOTree(max_depth=2).fit(X, C)
    assert isinstance(est.problem_, FiniteDecisions) and est.problem_.n_costs == 4
    np.testing.assert_array_equal(est.problem_.V, np.eye(4))
    pred = est.predict(X)
    np.testing.assert_array_equal(est.predict_decision(X), np.eye(4)[pred.argmin(axis=1)])


def test_grid_search_with_the_spo_scorer():
    X, C = _sp_data(120, seed=2)
    scorer = make_spo_scorer(SP)
    cv = KFold(3, shuffle=True, random_state=0)
    grid = GridSearchCV(SPOTree(SP, min_samples_leaf=5), {"max_depth": [1, 2, 4]},
                        scoring=scorer, cv=cv).fit(X, C)
    manual = {}
    for depth in (1, 2, 4):
        s = []
        for tr, te in cv.split(X):
            m = SPOTree(SP, min_samples_leaf=5, max_depth=depth).fit(X[tr], C[tr])
            s.append(-normalized_spo_loss(C[te], m.predict(X[te]), problem=SP))
        manual[depth] = np.mean(s)
    best = max(manual, key=manual.get)
    assert grid.best_params_ == {"max_depth": best}
    assert grid.best_score_ == pytest.approx(manual[best])
    assert grid.best_estimator_.get_depth() <= best


def test_pandas_input_keeps_feature_names():
    pd = pytest.importorskip("pandas")
    X, C = _sp_data(60)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    est = SPOTree(SP, max_depth=2).fit(df, C)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    np.testing.assert_array_equal(est.predict(df), SPOTree(SP, max_depth=2).fit(X, C)
                                  .predict(X))
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(df.rename(columns={"a": "z"}))
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(df[["b", "a", "c"]])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        est.predict(X)
    # Categorical features may be named.
    dfc = df.assign(a=np.floor(df["a"] * 3))
    named = SPOTree(SP, max_depth=2, categorical_features=["a"]).fit(dfc, C)
    by_index = SPOTree(SP, max_depth=2, categorical_features=[0]).fit(dfc.to_numpy(), C)
    np.testing.assert_array_equal(named.predict(dfc), by_index.predict(dfc.to_numpy()))


def test_mse_criterion_grows_scikit_learns_cart_tree():
    X, C = _sp_data(150, seed=6)
    ours = SPOTree(SP, criterion="mse", max_depth=4, min_samples_leaf=3).fit(X, C)
    ref = DecisionTreeRegressor(max_depth=4, min_samples_leaf=3).fit(X, C)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-10)
    assert ours.get_n_leaves() == ref.get_n_leaves()


def test_spo_weight_zero_is_cart_and_one_is_spo():
    X, C = _sp_data(100, seed=7)
    for a, crit in [(0.0, "mse"), (1.0, "spo")]:
        mixed = SPOTree(SP, spo_weight=a, max_depth=3).fit(X, C)
        pure = SPOTree(SP, criterion=crit, max_depth=3).fit(X, C)
        np.testing.assert_array_equal(mixed.tree_.feature, pure.tree_.feature)
        np.testing.assert_array_equal(mixed.tree_.threshold, pure.tree_.threshold)


def test_feature_importances_and_shape_accessors():
    rng = np.random.default_rng(0)
    X, C = _data(SP, 150, seed=8, p=3)
    X = np.column_stack([X, np.full(150, 0.5), rng.uniform(size=150)])  # constant column 3
    est = SPOTree(SP, max_depth=3, min_samples_leaf=5).fit(X, C)
    t = est.tree_
    imp = est.feature_importances_
    assert imp.shape == (5,)
    assert imp.sum() == pytest.approx(1.0)
    assert (imp >= 0).all()
    used = set(t.feature[t.children_left != -1].tolist())
    assert imp[3] == 0.0
    for j in range(5):
        if j not in used:
            assert imp[j] == 0.0
    # Recompute: decrease of the training criterion, summed per feature.
    raw = np.zeros(5)
    for u in np.flatnonzero(t.children_left != -1):
        raw[t.feature[u]] += (t.impurity[u] - t.impurity[t.children_left[u]]
                              - t.impurity[t.children_right[u]])
    assert raw.sum() > 1e-3 * t.impurity[0]  # real decreases, not rounding noise
    np.testing.assert_allclose(imp, raw / raw.sum(), atol=1e-12)
    # Shape accessors agree with the arrays and with each other.
    assert est.get_n_leaves() == t.is_leaf.sum()
    assert est.get_depth() == t.node_depth().max() <= 3
    leaves = est.apply(X)
    assert set(leaves.tolist()) <= set(np.flatnonzero(t.is_leaf).tolist())
    P = est.decision_path(X)
    assert P.shape == (150, t.node_count)
    np.testing.assert_array_equal(P.sum(axis=1).A.ravel() - 1, t.node_depth()[leaves])
    np.testing.assert_array_equal(P.toarray()[np.arange(150), leaves], 1)


def test_zero_gain_splits_give_zero_importances():
    X, C = _sp_data(150, seed=8, p=3)
    X = np.column_stack([X, np.full(150, 0.5), np.random.default_rng(0).uniform(size=150)])
    est = SPOTree(SP, max_depth=3, min_samples_leaf=5).fit(X, C)
    t = est.tree_
    internal = np.flatnonzero(t.children_left != -1)
    gains = (t.loss[internal] - t.loss[t.children_left[internal]]
             - t.loss[t.children_right[internal]])
    assert internal.size > 0
    assert np.abs(gains).max() <= 1e-12 * t.loss[0]  # the data has no SPO gain anywhere
    np.testing.assert_array_equal(est.feature_importances_, 0.0)


def test_single_leaf_has_zero_importances():
    X = np.ones((10, 2))
    est = SPOTree(SP).fit(X, _sp_data(10)[1])
    np.testing.assert_array_equal(est.feature_importances_, 0.0)


def test_max_features_is_reproducible_with_random_state():
    X, C = _sp_data(100, seed=9, p=6)
    a = SPOTree(SP, max_features=2, random_state=0, max_depth=4).fit(X, C)
    b = SPOTree(SP, max_features=2, random_state=0, max_depth=4).fit(X, C)
    np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
    np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)


def test_score_is_minus_the_normalized_spo_loss():
    X, C, Xv, Cv = _train_val(2)
    est = SPOTree(SP, max_depth=3).fit(X, C)
    w = np.random.default_rng(0).uniform(size=len(Xv))
    assert est.score(Xv, Cv) == pytest.approx(
        -normalized_spo_loss(Cv, est.predict(Xv), problem=SP))
    assert est.score(Xv, Cv, sample_weight=w) == pytest.approx(
        -normalized_spo_loss(Cv, est.predict(Xv), problem=SP, sample_weight=w))


def test_categorical_unseen_categories_follow_the_missing_side():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 4, size=60).astype(float), rng.uniform(size=60)])
    C = np.where((X[:, 0] == 2)[:, None], [1.0, 3.0], [3.0, 1.0]) + rng.uniform(size=(60, 2))
    est = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1, categorical_features=[0]).fit(X, C)
    t = est.tree_
    assert t.feature[0] == 0 and t.categories[0].tolist() == [2.0]
    missing_side = t.children_left[0] if t.missing_go_to_left[0] else t.children_right[0]
    Xnew = np.array([[7.0, 0.5], [-1.0, 0.5], [2.5, 0.5], [np.nan, 0.5], [2.0, 0.5],
                     [1.0, 0.5]])
    np.testing.assert_array_equal(est.apply(Xnew), [missing_side] * 4
                                  + [t.children_left[0], t.children_right[0]])
    # Rows missing the category at fit decide the missing side, for unseen ones too.
    Xm = X.copy()
    Xm[:15, 0] = np.nan
    Cm = C.copy()
    Cm[:15] = [1.0, 3.0]
    est = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1, categorical_features=[0]).fit(Xm, Cm)
    t = est.tree_
    assert t.feature[0] == 0 and t.missing_go_to_left[0] == 1
    assert (est.apply(Xnew[:4]) == t.children_left[0]).all()


def test_a_category_seen_only_in_rows_of_zero_weight_is_unseen():
    # A row of weight 0 is a row removed: a category only it holds was never
    # seen, so at predict it follows the missing side like any unseen one.
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 3, size=40).astype(float), rng.uniform(size=40)])
    X[:12, 0] = np.nan
    C = np.where(np.isnan(X[:, :1]), [1.0, 3.0], [3.0, 1.0]) + rng.uniform(size=(40, 2))
    X[-3:, 0] = 5.0
    w = np.ones(40)
    w[-3:] = 0.0
    est = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1, categorical_features=[0]).fit(
        X, C, sample_weight=w)
    t = est.tree_
    assert t.feature[0] == 0
    kept = X[:37, 0]
    np.testing.assert_array_equal(est.categories_seen_[0], np.unique(kept[~np.isnan(kept)]))
    missing_side = t.children_left[0] if t.missing_go_to_left[0] else t.children_right[0]
    np.testing.assert_array_equal(est.apply(np.array([[5.0, 0.5], [np.nan, 0.5]])),
                                  [missing_side, missing_side])


def test_min_samples_leaf_as_fraction_and_min_samples_split():
    X, C = _sp_data(100, seed=10)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=100)
    est = SPOTree(SP, min_samples_leaf=0.1).fit(X, C, w)
    t = est.tree_
    assert t.weighted_n_node_samples[t.is_leaf].min() >= 0.1 * w.sum() - 1e-9
    est = SPOTree(SP, min_samples_split=30).fit(X, C)
    t = est.tree_
    internal = t.children_left != -1
    assert (t.weighted_n_node_samples[internal] >= 30).all()


def test_a_leaf_may_weigh_exactly_min_samples_leaf():
    problem = FiniteDecisions(np.eye(2))
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    C = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0], [2.0, 1.0]])
    for kw, w in [(dict(min_samples_leaf=2), None), (dict(min_samples_leaf=0.5), None),
                  (dict(min_samples_leaf=2), [1.0, 1.0, 0.5, 1.5])]:
        t = SPOTree(problem, **kw).fit(X, C, sample_weight=w).tree_
        assert t.n_leaves == 2 and 1.0 <= t.threshold[0] < 2.0
    # One unit more and no split is admissible.
    assert SPOTree(problem, min_samples_leaf=3).fit(X, C).get_n_leaves() == 1


def test_max_depth_and_min_loss_decrease():
    X, C = _sp_data(150, seed=11)
    for depth in (1, 2, 3):
        assert SPOTree(SP, max_depth=depth).fit(X, C).get_depth() <= depth
    full = SPOTree(SP).fit(X, C)
    t = full.tree_
    internal = np.flatnonzero(t.children_left != -1)
    gains = t.impurity[internal] - t.impurity[t.children_left[internal]] \
        - t.impurity[t.children_right[internal]]
    thr = float(np.median(gains[gains > 0]))
    t2 = SPOTree(SP, min_loss_decrease=thr).fit(X, C).tree_
    internal2 = np.flatnonzero(t2.children_left != -1)
    gains2 = t2.impurity[internal2] - t2.impurity[t2.children_left[internal2]] \
        - t2.impurity[t2.children_right[internal2]]
    assert (gains2 >= thr * (1 - 1e-9)).all()
    assert t2.node_count < t.node_count


def _gains(t):
    internal = np.flatnonzero(~t.is_leaf)
    return internal, (t.impurity[internal] - t.impurity[t.children_left[internal]]
                      - t.impurity[t.children_right[internal]])


def _same_truncated(full, t, thr):
    """``t`` is ``full`` cut (from the root down) at the first node gaining less than thr."""
    gain = dict(zip(*_gains(full)))

    def walk(u, v):
        if full.children_left[u] == -1 or gain[u] < thr:
            assert t.children_left[v] == -1, f"node {v} split; full tree gains {gain.get(u)}"
            return 1
        assert t.children_left[v] != -1, f"node {v} is a leaf; full tree gains {gain[u]}"
        assert t.feature[v] == full.feature[u] and t.threshold[v] == full.threshold[u]
        return (walk(full.children_left[u], t.children_left[v])
                + walk(full.children_right[u], t.children_right[v]))

    return walk(0, 0)


@pytest.mark.parametrize("criterion, spo_weight", [("spo", 1.0), ("mse", 1.0), ("spo", 0.5)])
def test_min_loss_decrease_cuts_the_full_tree_where_splits_gain_less(criterion, spo_weight):
    # The best split of a node does not depend on min_loss_decrease, so the
    # tree grown with it is the full tree cut at every node whose split
    # gains (impurity less its children's, in the problem's units, weighted)
    # less than it. Costs about 1e3 and weights about 200 (far from 1, where
    # the kernel's scaling of the costs and weights shows).
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 3))
    C = 1e3 * np.exp(0.5 * rng.normal(size=(120, SP.n_costs)) + 0.4 * X[:, :1])
    w = rng.uniform(100.0, 300.0, size=120)
    kw = dict(criterion=criterion, spo_weight=spo_weight, max_depth=5, min_samples_leaf=4)
    full = SPOTree(SP, **kw).fit(X, C, w).tree_
    g = np.unique(_gains(full)[1])
    g = g[g > 1e-9 * g.max()]
    assert g.size >= 6
    for q in (0.3, 0.7):
        k = int(q * g.size)
        thr = 0.5 * (g[k - 1] + g[k])
        t = SPOTree(SP, min_loss_decrease=thr, **kw).fit(X, C, w).tree_
        n_leaves = _same_truncated(full, t, thr)
        assert t.n_leaves == n_leaves < full.n_leaves


def test_max_features_searches_the_other_features_where_the_drawn_ones_cannot_split():
    # Features 0 and 2 are constant: a node that draws one of them alone has
    # no admissible split, and (as CART) searches the other features too. So
    # every random_state grows the tree grown on all the features.
    X1, C = make_shortest_path(150, n_features=1, grid=(3, 3), noise=0.5, random_state=2)
    X = np.column_stack([np.ones(150), X1[:, 0], np.zeros(150)])
    kw = dict(max_depth=3, min_samples_leaf=5)
    full = SPOTree(SP, **kw).fit(X, C).tree_
    assert full.node_count >= 7
    for s in range(6):
        t = SPOTree(SP, max_features=1, random_state=s, **kw).fit(X, C).tree_
        np.testing.assert_array_equal(t.feature, full.feature)
        np.testing.assert_array_equal(t.threshold, full.threshold)


def test_fractions_of_samples_round_up_as_scikit_learns():
    # min_samples_leaf as a fraction counts ceil(fraction * n) rows: 0.25 of 10
    # is 3, so the split isolating the two rows that prefer road 0 (a zero
    # loss) is not admissible; 0.2 of 10 (2 rows) allows it.
    roads = FiniteDecisions(np.eye(2))
    X = np.arange(10.0)[:, None]
    C = np.where(X < 2, [1.0, 2.0], [2.0, 1.0]) + 0.01 * X
    t = SPOTree(roads, max_depth=1, min_samples_leaf=0.2).fit(X, C).tree_
    assert t.threshold[0] == 1.5 and t.loss[1] == t.loss[2] == 0.0
    # 0.25: 3 rows at least; the best such split leaves rows 0 to 2 left.
    t = SPOTree(roads, max_depth=1, min_samples_leaf=0.25).fit(X, C).tree_
    assert t.threshold[0] == 2.5 and t.n_node_samples[1] == 3


def test_max_features_fractions_and_names_resolve_as_scikit_learns():
    # 8 features: "sqrt" draws int(2.83) = 2, "log2" int(3) = 3, 0.3 int(2.4) = 2
    # and 0.45 int(3.6) = 3; the same random_state grows the tree drawn with
    # that many features.
    X, C = make_shortest_path(150, n_features=8, grid=(3, 3), noise=0.5, random_state=4)
    X = X + np.random.default_rng(0).normal(scale=0.3, size=X.shape)

    def grown(k, s):
        return SPOTree(SP, max_depth=3, min_samples_leaf=5, max_features=k,
                       random_state=s).fit(X, C).tree_

    for s in range(3):
        by_k = {k: grown(k, s) for k in (2, 3)}
        assert by_k[2].to_dict() != by_k[3].to_dict()
        for k, same in (("sqrt", 2), ("log2", 3), (0.3, 2), (0.45, 3)):
            assert grown(k, s).to_dict() == by_k[same].to_dict(), (k, s)


# ---------------------------------------------------------------- bad input
def test_inf_in_x_and_nan_or_inf_in_c_are_rejected_with_a_clear_error():
    # NaN in X is a missing value (tests/tree/test_missing.py); infinity is not.
    X, C = _sp_data(30)
    for bad in (-np.inf, np.inf):
        Xb = X.copy()
        Xb[3, 1] = bad
        with pytest.raises(ValueError, match="infinity"):
            SPOTree(SP).fit(Xb, C)
    for bad in (np.nan, np.inf):
        Cb = C.copy()
        Cb[4, 2] = bad
        with pytest.raises(ValueError, match=r"C contains NaN or infinity"):
            SPOTree(SP).fit(X, Cb)
    est = SPOTree(SP).fit(X, C)
    Xb = X.copy()
    Xb[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        est.predict(Xb)


def test_wrong_shapes_and_weights_are_rejected():
    X, C = _sp_data(30)
    with pytest.raises(ValueError, match="C has 5 columns but the problem has n_costs=12"):
        SPOTree(SP).fit(X, C[:, :5])
    with pytest.raises(ValueError, match="same number of rows"):
        SPOTree(SP).fit(X, C[:-1])
    with pytest.raises(ValueError, match="sample_weight contains negative"):
        SPOTree(SP).fit(X, C, sample_weight=np.r_[-1.0, np.ones(29)])
    with pytest.raises(ValueError, match="sample_weight sums to zero"):
        SPOTree(SP).fit(X, C, sample_weight=np.zeros(30))
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        SPOTree(SP).fit(X, C, sample_weight=np.ones(3))
    est = SPOTree(SP).fit(X, C)
    with pytest.raises(ValueError, match="3 features"):
        est.predict(X[:, :2])
    # prune's arguments are X_val and C_val (the errors said X and C).
    with pytest.raises(ValueError, match="C_val has 5 columns but the problem has n_costs=12"):
        est.prune(X, C[:, :5])
    with pytest.raises(ValueError, match="X_val and C_val must have the same number of rows; "
                                         "got 30 and 29"):
        est.prune(X, C[:-1])


def test_missing_costs_are_named_in_the_error():
    X, _ = _sp_data(10)
    with pytest.raises(ValueError, match=r"\bC\b"):
        SPOTree().fit(X, None)


def test_degenerate_data_gives_a_single_leaf():
    X, C = _sp_data(30)
    # Fewer samples than 2 * min_samples_leaf.
    est = SPOTree(SP, min_samples_leaf=16).fit(X, C)
    assert est.get_n_leaves() == 1 and est.get_depth() == 0
    np.testing.assert_allclose(est.predict(X[:3]), np.tile(C.mean(axis=0), (3, 1)))
    # Constant features.
    est = SPOTree(SP).fit(np.full((30, 3), 2.0), C)
    assert est.get_n_leaves() == 1
    # A single sample.
    est = SPOTree(SP).fit(X[:1], C[:1])
    assert est.get_n_leaves() == 1
    np.testing.assert_array_equal(est.predict(X[:4]), np.tile(C[0], (4, 1)))
    # All costs equal: nothing to gain.
    est = SPOTree(SP).fit(X, np.tile(C[0], (30, 1)))
    assert est.get_n_leaves() == 1


def test_unfitted_accessors_raise_not_fitted():
    est = SPOTree(SP)
    for call in (est.get_depth, est.get_n_leaves):
        with pytest.raises(NotFittedError):
            call()


@pytest.mark.parametrize("method", ["apply", "decision_path", "predict", "predict_decision",
                                    "score"])
def test_predict_before_fit_raises_not_fitted(method):
    est = SPOTree(SP)
    X, C = _sp_data(10)
    args = (X, C) if method == "score" else (X,)
    with pytest.raises(NotFittedError):
        getattr(est, method)(*args)


@pytest.mark.parametrize("param, value, expected", [
    ("max_depth", -1, "an int in the range [1, inf) or None. Got -1 instead."),
    ("max_depth", 1.5, "an int in the range [1, inf) or None. Got 1.5 instead."),
    ("criterion", "gini", "a str among {'spo', 'mse'}. Got 'gini' instead."),
    ("min_samples_leaf", 0, "Got 0 instead."),
    ("thresholds", "some", "Got 'some' instead."),
    ("thresholds", 0, "Got 0 instead."),
    ("spo_weight", 1.5, "a float in the range [0.0, 1.0]. Got 1.5 instead."),
    ("ccp_alpha", -0.1, "Got -0.1 instead."),
    ("categorical_splits", "all", "Got 'all' instead."),
    ("max_features", "all", "Got 'all' instead."),
])
def test_invalid_parameters_have_one_message_shape(param, value, expected):
    X, C = _sp_data(10)
    est = SPOTree(SP, **{param: value})  # __init__ only stores
    msg = f"The '{param}' parameter of SPOTree must be "
    with pytest.raises(ValueError) as info:
        est.fit(X, C)
    assert str(info.value).startswith(msg)
    assert str(info.value).endswith(expected)


def test_problem_must_be_a_decision_problem():
    X, C = _sp_data(10)
    with pytest.raises(TypeError, match="DecisionProblem"):
        SPOTree("shortest path").fit(X, C)


def test_numpy_scalar_and_huge_parameters_grow_the_same_tree():
    # Valid values of odd types: a float16 spo_weight reached compiled code
    # (NotImplementedError: float16) and a max_depth beyond int64 overflowed.
    X, C = _sp_data(60, seed=3)
    plain = SPOTree(SP, spo_weight=0.5).fit(X, C)
    odd = SPOTree(SP, spo_weight=np.float16(0.5)).fit(X, C)
    np.testing.assert_array_equal(odd.tree_.threshold, plain.tree_.threshold)
    unlimited = SPOTree(SP).fit(X, C)
    huge = SPOTree(SP, max_depth=2 ** 70).fit(X, C)
    np.testing.assert_array_equal(huge.tree_.threshold, unlimited.tree_.threshold)
    assert huge.get_depth() == unlimited.get_depth() > 1


def test_ints_beyond_the_float_range_are_valid_parameters():
    # Each raised OverflowError: in the parameter check (math.isfinite), in
    # float(min_samples_leaf) or in the compiled call (thresholds).
    X, C = _sp_data(60, seed=3)
    big = 10 ** 400
    unlimited = SPOTree(SP).fit(X, C)
    assert SPOTree(SP, max_depth=big).fit(X, C).get_depth() == unlimited.get_depth() > 1
    assert SPOTree(SP, min_samples_leaf=big).fit(X, C).get_n_leaves() == 1
    assert SPOTree(SP, min_samples_split=big).fit(X, C).get_n_leaves() == 1
    # q quantiles per node with q >= the node's rows - 1 hit every gap.
    every = SPOTree(SP, thresholds=big).fit(X, C)
    np.testing.assert_array_equal(every.tree_.threshold, unlimited.tree_.threshold)
    with pytest.raises(ValueError, match="The 'ccp_alpha' parameter of SPOTree must be a float"):
        SPOTree(SP, ccp_alpha=big).fit(X, C)


def test_refitting_a_forest_tree_or_a_pruned_tree_forgets_their_outside_state():
    # A forest's tree holds the forest's ridge map and a pruned copy its
    # pruning choice; fit on its own kept them (export_text then raised
    # IndexError naming the extra columns, and the file kept a stale alpha).
    from spotree import SPOForest, export_text

    X, C, Xv, Cv = _train_val(4)
    forest = SPOForest(SP, n_estimators=2, ridge_features=True, random_state=0).fit(X, C)
    tree = forest.estimators_[0]
    assert tree.ridge_features_ is not None
    tree.fit(X, C)
    fresh = SPOTree(**tree.get_params()).fit(X, C)
    assert not hasattr(tree, "ridge_features_")
    np.testing.assert_array_equal(tree.tree_.threshold, fresh.tree_.threshold)
    assert export_text(tree) == export_text(fresh)
    pruned = SPOTree(SP, min_samples_leaf=5).fit(X, C).prune(Xv, Cv)
    assert hasattr(pruned, "pruning_alpha_")
    pruned.fit(X, C)
    assert not hasattr(pruned, "pruning_alpha_") and not hasattr(pruned, "pruning_path_")


def test_categorical_features_from_pandas_columns(tmp_path):
    # df.columns[...] and a Series are array-likes; they were refused as not
    # "an array-like of feature indices, names or a boolean mask".
    pd = pytest.importorskip("pandas")
    import spotree

    rng = np.random.default_rng(6)
    code = rng.integers(0, 4, size=80)
    df = pd.DataFrame({"x": rng.uniform(size=80), "code": code})
    C = rng.uniform(size=(80, 3)) + np.eye(3)[code % 3] * 2.0
    problem = FiniteDecisions(np.eye(3))
    as_list = SPOTree(problem, max_depth=3, categorical_features=["code"]).fit(df, C)
    assert as_list.tree_.is_categorical.any()
    for given in (df.columns[[1]], pd.Series(["code"]), range(1, 2)):
        est = SPOTree(problem, max_depth=3, categorical_features=given)
        est = clone(est).fit(df, C)
        np.testing.assert_array_equal(est.predict(df), as_list.predict(df))
        est.save(tmp_path / "m.json")
        back = spotree.load(tmp_path / "m.json")
        np.testing.assert_array_equal(back.predict(df), as_list.predict(df))


def _coded_data():
    rng = np.random.default_rng(6)
    code = rng.integers(0, 4, size=80)
    X = np.column_stack([rng.uniform(size=80), code])
    C = rng.uniform(size=(80, 3)) + np.eye(3)[code % 3] * 2.0
    return X, C


@pytest.mark.parametrize("given, match", [
    # int(1.5) is 1: feature 1 was made categorical without a word.
    ([1.5], r"categorical_features must hold feature indices \(ints\), names of columns "
            r"of X or be a boolean mask; got 1\.5"),
    # Fitted, saved, and then refused by spotree.load ('must be an int').
    ([1.0], r"must hold feature indices \(ints\).*got 1\.0"),
    ([[1]], r"categorical_features must be a 1-D list of feature indices, names or a "
            r"boolean mask; got an array of shape \(1, 1\)"),
    ([None], r"must hold feature indices \(ints\).*got None"),        # was a bare TypeError
    ([np.nan], r"must hold feature indices \(ints\).*got nan"),
    # numpy read it as the indices 1 and 1; spotree.load refused the saved True.
    ([True, 1], r"categorical_features mixes bools with feature indices or names"),
])
def test_categorical_features_that_are_no_indices_are_refused(given, match):
    X, C = _coded_data()
    with pytest.raises(ValueError, match=match):
        SPOTree(FiniteDecisions(np.eye(3)), max_depth=2, categorical_features=given).fit(X, C)


def test_categorical_features_as_an_object_array_of_bools_is_a_mask(tmp_path):
    # It was read as the indices True and False, so both features were
    # categorical (and spotree.load read the saved list as a mask).
    X, C = _coded_data()
    problem = FiniteDecisions(np.eye(3))
    by_index = SPOTree(problem, max_depth=3, categorical_features=[1]).fit(X, C)
    mask = np.array([False, True], dtype=object)
    est = SPOTree(problem, max_depth=3, categorical_features=mask).fit(X, C)
    assert [c.tolist() for c in est.tree_.categories] == [
        c.tolist() for c in by_index.tree_.categories]
    np.testing.assert_array_equal(est.tree_.threshold, by_index.tree_.threshold)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_squared_error_tree_at_extreme_cost_scales():
    # The docstring's promise, at the ends of the float range: costs of 1e-200
    # raised ZeroDivisionError (min_loss_decrease / s**2, s**2 underflowing to
    # 0); at 1e200 a pure node's squared error was 0 * inf = NaN.
    X, C = _sp_data(60, seed=8)
    base = SPOTree(SP, criterion="mse", max_depth=4).fit(X, C)
    for scale in (1e-200, 1e200):
        est = SPOTree(SP, criterion="mse", max_depth=4).fit(X, scale * C)
        np.testing.assert_array_equal(est.tree_.threshold, base.tree_.threshold)
        np.testing.assert_allclose(est.predict(X), scale * base.predict(X), rtol=1e-12)
        assert not np.isnan(est.tree_.impurity).any()
    # A pure leaf at 1e200: squared error 0, not NaN.
    Xp = np.array([[0.0], [0.0], [1.0], [1.0]])
    Cp = 1e200 * np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0], [2.0, 1.0]])
    pure = SPOTree(FiniteDecisions(np.eye(2)), criterion="mse").fit(Xp, Cp)
    np.testing.assert_array_equal(pure.tree_.impurity[pure.tree_.is_leaf], [0.0, 0.0])


_PRUNE_HUGE = """
import warnings
import numpy as np
from spotree import SPOTree
from spotree.problems import FiniteDecisions
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.uniform(size=(60, 2))
C = 1e200 * (rng.uniform(size=(60, 3)) + np.eye(3)[(3 * X[:, 0]).astype(int)])
tree = SPOTree(FiniteDecisions(np.eye(3)), criterion="mse", max_depth=3)
for run in (lambda: tree.set_params(ccp_alpha=1.0).fit(X, C),
            lambda: tree.set_params(ccp_alpha=0.0).fit(X, C).prune(X, C),
            lambda: tree.cost_complexity_pruning_path(X, C)):
    try:
        run()
        print("no error")
    except ValueError as exc:
        print(exc)
print(tree.set_params(ccp_alpha=0.0).fit(X, C).prune(X, C, loss="spo").get_n_leaves())
"""


def test_pruning_a_tree_whose_squared_errors_overflow_raises_instead_of_hanging():
    # Costs of 1e200: the stored squared errors are inf, the weakest link's
    # gain inf - inf = NaN, nothing was ever pruned and the loop never ended
    # (ccp_alpha hung fit, prune and cost_complexity_pruning_path). In a
    # subprocess, so that a hang fails the test instead of the suite.
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-c", _PRUNE_HUGE], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    msg = ("cost-complexity pruning needs finite node losses; node 0's is inf (a squared error "
           "beyond the float range: costs above about 1e154 in magnitude). Rescale the costs, "
           "or prune by the SPO loss (prune(..., loss='spo')).")
    assert lines[:3] == [msg] * 3
    assert int(lines[3]) >= 1           # the SPO loss prunes it


def test_pruning_a_tree_whose_weights_sum_beyond_the_float_range_names_sample_weight():
    # Weights of 1e308 (each finite): the tree grows, but its stored weighted
    # losses are inf. Pruning said "costs above about 1e154 ... prune by the
    # SPO loss", which the costs (about 1) and loss='spo' do not bear out.
    import warnings

    X, C = _sp_data(40, seed=0, noise=0.5)
    big = np.full(40, 1e308)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the stored sums overflow
        tree = SPOTree(SP, max_depth=2).fit(X, C, sample_weight=big)
        msg = "sample_weight sums beyond the float range"
        for run in (lambda: tree.prune(X, C), lambda: tree.prune(X, C, loss="spo"),
                    lambda: clone(tree).set_params(ccp_alpha=1.0).fit(X, C, big),
                    lambda: tree.cost_complexity_pruning_path(X, C, big)):
            with pytest.raises(ValueError, match=msg):
                run()
    # As it says: the weights divided by a constant prune (the unit weights' alphas times it).
    path = tree.cost_complexity_pruning_path(X, C, np.full(40, 2.0 ** 900))
    ref = tree.cost_complexity_pruning_path(X, C)
    np.testing.assert_allclose(path.ccp_alphas, ref.ccp_alphas * 2.0 ** 900, rtol=1e-9)


@pytest.mark.parametrize("w, kw, match", [
    (1e-320, dict(), "subnormal float"), (1e-320, dict(criterion="mse"), "subnormal float"),
    (1.7e308, dict(spo_weight=0.5), r"mixed criterion's scales loss_scales_=\(inf, inf\)"),
    (1e-320, dict(spo_weight=0.5), "mixed criterion's scales")])
def test_pruning_on_losses_the_floats_cannot_hold_is_refused(w, kw, match):
    # Weights of 1e-320: the stored training losses kept a digit or two and
    # prune could keep another subtree than at any other scale of the weights
    # (seen at depth 2: 1e-320 and 5e-324). Weights of 1.7e308 on the mixed
    # criterion: its scales were inf, every validation loss 0, and prune kept
    # the root. Both silent; refused now, naming sample_weight.
    import warnings

    X, C = _sp_data(40, seed=0, noise=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        tree = SPOTree(SP, max_depth=3, **kw).fit(X, C, sample_weight=np.full(40, w))
        with pytest.raises(ValueError, match=match + ".*sample_weight"):
            tree.prune(X[:20], C[:20])
    ref = SPOTree(SP, max_depth=3, **kw).fit(X, C).prune(X[:20], C[:20])
    ok = SPOTree(SP, max_depth=3, **kw).fit(X, C, sample_weight=np.full(40, 1e-300))
    assert ok.prune(X[:20], C[:20]).get_n_leaves() == ref.get_n_leaves()


@pytest.mark.parametrize("scale", [2.0 ** -540, 1e-160, 2.0 ** 540])
def test_a_mixed_criterion_tree_prunes_on_costs_whose_squares_are_not_floats(scale, tmp_path):
    # spo_weight=0.5 on costs of 1e-160 stored a squared-error scale of 0 (of
    # 2^540, inf): prune refused the tree, blaming sample_weight. The scales
    # are now kept in units of a power of two; pruning is the same as on the
    # unscaled costs (the criterion has no unit), through a file too.
    import json

    from spotree import SPOForest, load

    X, C = _sp_data(60, seed=1)
    ref = SPOTree(SP, max_depth=3, spo_weight=0.5).fit(X[:40], C[:40])
    tree = SPOTree(SP, max_depth=3, spo_weight=0.5).fit(X[:40], C[:40] * scale)
    assert tree.get_n_leaves() == ref.get_n_leaves() > 2
    want = ref.prune(X[40:], C[40:])
    for t in (tree, load(_saved(tree, tmp_path / "t.json"))):
        got = t.prune(X[40:], C[40:] * scale)
        assert got.get_n_leaves() == want.get_n_leaves()
        np.testing.assert_allclose(got.pruning_path_.val_losses, want.pruning_path_.val_losses,
                                   rtol=1e-12)
        one_se = t.prune(X[40:], C[40:] * scale, one_se_rule=True)
        assert one_se.get_n_leaves() == ref.prune(X[40:], C[40:], one_se_rule=True).get_n_leaves()
        with pytest.raises(ValueError, match="loss='mse' pruning needs squared errors in the "
                                             "problem's units"):
            t.prune(X[40:], C[40:] * scale, loss="mse")
    forest = SPOForest(SP, n_estimators=2, max_depth=2, spo_weight=0.5, criterion="spo",
                       ridge_features=False, random_state=0).fit(X[:40], C[:40] * scale)
    back = load(_saved(forest, tmp_path / "f.json"))
    for est in back.estimators_:
        assert est.prune(X[40:], C[40:] * scale).get_n_leaves() >= 1
    # A file without loss_unit_ (an older version's, of ordinary costs) loads as before.
    path = _saved(ref, tmp_path / "r.json")
    doc = json.loads(path.read_text())
    assert doc["fitted"].pop("loss_unit_") == 1.0
    path.write_text(json.dumps(doc))
    old = load(path).prune(X[40:], C[40:])
    np.testing.assert_allclose(old.pruning_path_.val_losses, want.pruning_path_.val_losses,
                               rtol=1e-12)


def _saved(model, path):
    model.save(path)
    return path


def _hand_importances(tree):
    """Normalized criterion-loss decrease per feature, by a loop over the splits."""
    imp = np.zeros(tree.n_features)
    for u in range(tree.node_count):
        if tree.children_left[u] != -1:
            imp[tree.feature[u]] += (tree.impurity[u] - tree.impurity[tree.children_left[u]]
                                     - tree.impurity[tree.children_right[u]])
    return imp / imp.sum() if imp.sum() > 0 else imp


def test_importances_count_only_the_splits_left_after_pruning():
    # ccp_alpha and prune() kept the importances of the unpruned tree: a tree
    # pruned to a single leaf reported [0.84, 0.14, 0.02].
    from spotree import SPOForest

    X, C, Xv, Cv = _train_val(6)
    path = SPOTree(SP).cost_complexity_pruning_path(X, C)
    for alpha in (path.ccp_alphas[-2] * 1.01, 2 * path.ccp_alphas[-1]):
        est = SPOTree(SP, ccp_alpha=float(alpha)).fit(X, C)
        np.testing.assert_allclose(est.feature_importances_, _hand_importances(est.tree_),
                                   atol=1e-12)
    assert est.get_n_leaves() == 1 and not est.feature_importances_.any()
    pruned = SPOTree(SP, min_samples_leaf=5).fit(X, C).prune(Xv, Cv)
    np.testing.assert_allclose(pruned.feature_importances_, _hand_importances(pruned.tree_),
                               atol=1e-12)
    forest = SPOForest(SP, n_estimators=3, ridge_features=False, random_state=0,
                       ccp_alpha=float(path.ccp_alphas[-2])).fit(X, C)
    for tree in forest.estimators_:
        np.testing.assert_allclose(tree.feature_importances_, _hand_importances(tree.tree_),
                                   atol=1e-12)


def test_prune_breaks_ties_at_zero_validation_loss_to_the_smaller_tree():
    # Several subtrees decide every validation row optimally (regret 0 up to
    # rounding). The tie tolerance was relative to the best loss, 0 here, so
    # 2e-16 of rounding kept the 8-leaf tree over the 2-leaf one.
    rng = np.random.default_rng(333)
    problem = ShortestPath((2, 2))
    X = rng.normal(size=(30, 2)).round(1)
    C = rng.normal(size=(30, 4)) + X[:, :1]
    Xv = rng.normal(size=(6, 2)).round(1)
    Cv = rng.normal(size=(6, 4)) + Xv[:, :1]
    est = SPOTree(problem, max_depth=3, min_samples_leaf=2).fit(X, C)
    _, masks, _ = est.tree_.pruning_sequence()
    _, zv = problem.solve(Cv)
    regrets, sizes = [], []
    for mask in masks:  # by hand: each candidate's validation regret
        sub = est.tree_.pruned(mask)
        regrets.append(sum(float(c @ sub.decision[leaf] - z)
                           for c, z, leaf in zip(Cv, zv, sub.apply(Xv))))
        sizes.append(sub.n_leaves)
    regrets = np.array(regrets)
    smallest = min(s for s, r in zip(sizes, regrets) if r <= regrets.min() + 1e-9)
    assert smallest < est.get_n_leaves()
    assert est.prune(Xv, Cv).get_n_leaves() == smallest
    assert est.prune(Xv, Cv, one_se_rule=True).get_n_leaves() <= smallest


def test_zero_gain_prunings_have_alpha_zero():
    # A zero-gain split's weakest-link alpha was its rounding (1.8e-15 here),
    # so ccp_alpha=1e-15 kept it; the cost-complexity optimum at any alpha > 0
    # (enumerated over every pruning) drops it.
    rng = np.random.default_rng(6)
    X = rng.normal(size=(50, 2))
    C = rng.normal(size=(50, 3)) + X[:, :1] * np.array([1, -1, 0.5])
    w = rng.integers(1, 4, size=50).astype(float)
    problem = FiniteDecisions(np.eye(3))
    est = SPOTree(problem, max_depth=4, min_samples_leaf=3)
    path = est.cost_complexity_pruning_path(X, C, sample_weight=w)
    t = clone(est).fit(X, C, w).tree_
    subtrees = _prunings(t)
    R = np.array([t.impurity[list(S)].sum() for S in subtrees])
    size = np.array([len(S) for S in subtrees])
    zero_gain = size[np.abs(R - R.min()) <= 1e-9 * R.max()].min()
    assert zero_gain < t.n_leaves  # the data have zero-gain splits
    assert path.ccp_alphas[1] == 0.0
    assert SPOTree(problem, max_depth=4, min_samples_leaf=3,
                   ccp_alpha=1e-15).fit(X, C, w).get_n_leaves() == zero_gain


@pytest.mark.parametrize("criterion", ["mse", "spo"])
@pytest.mark.parametrize("problem", [FiniteDecisions(np.eye(2)), Knapsack([1.0, 1.0], 1.0)])
def test_weights_spanning_more_than_2_to_the_53_grow_the_exact_root_split(criterion, problem):
    # The right child's weight is the node's less the left child's: with
    # weights 1e17 and 1 it rounded to 0 beside two rows, and the squared
    # error's sweep divided by it (ZeroDivisionError). The root split must be
    # the best one in exact arithmetic (weighted squared error, by Fractions).
    from fractions import Fraction

    X = np.arange(4.0)[:, None]
    C = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 2.0], [2.0, 0.0]])
    sw = np.array([1e17, 1e17, 1.0, 1.0])
    tree = SPOTree(problem, criterion=criterion, max_depth=1).fit(X, C, sample_weight=sw)

    def sse(rows):
        w = [Fraction(sw[i]) for i in rows]
        total = sum(w)
        err = Fraction(0)
        for j in range(2):
            c = [Fraction(C[i, j]) for i in rows]
            mean = sum(wi * ci for wi, ci in zip(w, c)) / total
            err += sum(wi * (ci - mean) ** 2 for wi, ci in zip(w, c))
        return err

    best = min(range(1, 4), key=lambda k: sse(range(k)) + sse(range(k, 4)))
    assert tree.get_n_leaves() == 2
    left = tree.apply(X) == tree.apply(X[:1])[0]
    np.testing.assert_array_equal(left, np.arange(4) < best)
