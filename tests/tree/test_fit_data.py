"""FitData's per-tree row order against a direct computation."""

import numpy as np

from _helpers import traced_peak

from spotree.problems import ShortestPath
from spotree.tree._fit_data import FitData


def test_active_order_keeps_the_sorted_rows_of_the_active_ones():
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(60, 5)), 1)
    X[rng.uniform(size=X.shape) < 0.1] = np.nan
    C = rng.uniform(1, 2, size=(60, 12))
    data = FitData(ShortestPath((3, 3)), X, C, np.zeros(5, dtype=bool))
    for active in (rng.uniform(size=60) < 0.6, np.ones(60, dtype=bool), np.eye(1, 60, 7)[0] > 0):
        order = data.active_order(active)
        assert order.shape == (2, 5, int(active.sum()))
        order = order[0]
        for f in range(5):
            # Stable: the full sort's order among the kept rows.
            want = [i for i in np.argsort(X[:, f], kind="stable") if active[i]]
            np.testing.assert_array_equal(order[f], want)


def test_missing_features_sees_only_the_active_rows():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 6))
    X[3, 1] = np.nan  # feature 1: missing on row 3 only
    X[rng.uniform(size=40) < 0.3, 4] = np.nan
    C = rng.uniform(1, 2, size=(40, 12))
    data = FitData(ShortestPath((3, 3)), X, C, np.zeros(6, dtype=bool))
    for active in (rng.uniform(size=40) < 0.5, np.arange(40) != 3, np.ones(40, dtype=bool)):
        want = [any(np.isnan(X[i, f]) for i in range(40) if active[i]) for f in range(6)]
        np.testing.assert_array_equal(data.missing_features(active), want)
    clean = FitData(ShortestPath((3, 3)), np.nan_to_num(X), C, np.zeros(6, dtype=bool))
    assert not clean.missing_features(np.ones(40, dtype=bool)).any()


def test_fit_data_holds_no_temporary_of_the_costs_size():
    # Peak (tracemalloc: every numpy allocation) of building the statistics,
    # above what they keep: |C| of all rows at once, and sign * C next to its
    # quotient, were an n x d array more than they keep (the peak of a single
    # tree's fit). What is left is the presort's int64 indices (n x p).
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20_000, 2))
    C = rng.uniform(1, 2, size=(20_000, 12))
    problem = ShortestPath((3, 3))
    FitData(problem, X[:50], C[:50], np.zeros(2, dtype=bool))  # (vertex list cached)
    data, kept, peak = traced_peak(lambda: FitData(problem, X, C, np.zeros(2, dtype=bool)))
    assert data.Cm.shape == C.shape
    assert peak - kept < 0.5 * C.nbytes
