"""The compiled builder grows exactly the tree of the Python reference builder."""

import numpy as np
import pytest

from spotree.datasets import make_shortest_path
from spotree.problems import FiniteDecisions, ShortestPath
from spotree.tree._builder import grow_tree
from spotree.tree._criterion import Criterion

FIELDS = ("children_left", "children_right", "feature", "threshold", "value", "decision",
          "loss", "impurity", "n_node_samples", "weighted_n_node_samples")


def _grow(problem, X, C, w, a, compiled, **kw):
    crit = Criterion(problem, C, w, spo_weight=a)
    params = dict(max_depth=None, min_leaf=5.0, min_split=2.0, max_features=None,
                  n_quantiles=0, min_loss_decrease=0.0, rng=np.random.RandomState(0))
    params.update(kw)
    return grow_tree(crit, X, np.zeros(X.shape[1], dtype=bool), compiled=compiled, **params)


@pytest.mark.parametrize("a", [1.0, 0.0, 0.4])
@pytest.mark.parametrize("kw", [
    {}, {"max_depth": 3}, {"n_quantiles": 7}, {"min_leaf": 12.5},
    {"min_loss_decrease": 0.5}, {"min_split": 60.0},
])
@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_equals_python_builder(a, kw, weighted):
    X, C = make_shortest_path(300, n_features=4, grid=(3, 3), noise=0.3, random_state=3)
    rng = np.random.default_rng(1)
    w = rng.integers(0, 4, size=300).astype(float) if weighted else np.ones(300)
    problem = ShortestPath((3, 3))
    fast, imp_fast = _grow(problem, X, C, w, a, True, **kw)
    ref, imp_ref = _grow(problem, X, C, w, a, False, **kw)
    assert fast.node_count == ref.node_count
    for name in FIELDS:
        np.testing.assert_allclose(getattr(fast, name), getattr(ref, name), rtol=1e-9,
                                   atol=1e-9, err_msg=name)
    np.testing.assert_allclose(imp_fast, imp_ref, rtol=1e-9, atol=1e-9)


def test_compiled_builder_max_sense_and_ties():
    # Duplicated feature values and a max-sense problem with tied candidates.
    rng = np.random.default_rng(7)
    X = rng.integers(0, 5, size=(120, 3)).astype(float)
    V = rng.uniform(-1, 1, size=(6, 4))
    C = rng.normal(size=(120, 4))
    problem = FiniteDecisions(np.vstack([V, V[:2]]), sense="max")
    fast, _ = _grow(problem, X, C, np.ones(120), 1.0, True, min_leaf=3.0)
    ref, _ = _grow(problem, X, C, np.ones(120), 1.0, False, min_leaf=3.0)
    for name in FIELDS:
        np.testing.assert_allclose(getattr(fast, name), getattr(ref, name), rtol=1e-9,
                                   atol=1e-9, err_msg=name)


def test_compiled_feature_draws_are_deterministic():
    X, C = make_shortest_path(400, random_state=0)
    a, _ = _grow(ShortestPath(), X, C, np.ones(400), 1.0, True, max_features=2,
                 rng=np.random.RandomState(5))
    b, _ = _grow(ShortestPath(), X, C, np.ones(400), 1.0, True, max_features=2,
                 rng=np.random.RandomState(5))
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_array_equal(a.threshold, b.threshold)
