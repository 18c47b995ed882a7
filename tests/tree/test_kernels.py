"""The growth kernels' row bookkeeping against direct computations."""

import numpy as np

from spotree.tree._kernels import allowed_positions, filter_order, partition_segment


def test_partition_segment_is_a_stable_partition_into_the_other_copy():
    rng = np.random.default_rng(0)
    n, p = 50, 4
    for trial in range(30):
        dtype = np.int32 if trial % 2 else np.int64  # FitData's rows are int32
        # Every feature's segment holds the node's rows (in its own order).
        s, e = sorted(rng.choice(n + 1, size=2, replace=False))
        rows = rng.permutation(n)
        src = np.array([np.r_[rows[:s], rng.permutation(rows[s:e]), rows[e:]]
                        for _ in range(p)], dtype=dtype)
        dst = np.full((p, n), -7, dtype=dtype)
        go_left = rng.uniform(size=n) < rng.uniform()
        before = src.copy()
        n_left = partition_segment(src, dst, s, e, go_left)
        assert n_left == go_left[src[0, s:e]].sum()
        for f in range(p):
            seg = list(src[f, s:e])
            want = [i for i in seg if go_left[i]] + [i for i in seg if not go_left[i]]
            np.testing.assert_array_equal(dst[f, s:e], want)
        # Only the segment is written, and the source is left as it was.
        assert (dst[:, :s] == -7).all() and (dst[:, e:] == -7).all()
        np.testing.assert_array_equal(src, before)


def test_filter_order_keeps_the_active_rows_in_order():
    rng = np.random.default_rng(1)
    n, p = 40, 3
    cases = ((np.int32, rng.uniform(size=n) < 0.5), (np.int64, np.ones(n, dtype=bool)),
             (np.int32, np.arange(n) == 5))
    for dtype, active in cases:
        order = np.array([rng.permutation(n) for _ in range(p)], dtype=dtype)
        out = filter_order(order, active, int(active.sum()))
        assert out.shape == (2, p, int(active.sum())) and out.dtype == dtype
        for f in range(p):
            np.testing.assert_array_equal(out[0, f], [i for i in order[f] if active[i]])


def test_allowed_positions_are_numpys_quantiles_cut_after_every_value_at_most():
    # Positions p (a cut between sorted values p and p + 1) that a quantile
    # threshold hits: numpy's linear quantiles at k / (q + 1), and x <= t goes
    # left, so a quantile landing on a value (whole levels: 13 values and
    # q = 1, 3, 5) cuts after that value and its repeats. The compiled code's
    # Python source (py_func: the function is compiled without a Python wrapper).
    rng = np.random.default_rng(0)
    for trial in range(200):
        m = int(rng.integers(2, 16)) if trial % 2 else 13
        q = int(rng.integers(1, 8))
        xs = np.sort(rng.integers(0, 6, size=m).astype(float))
        allowed = np.zeros(m, dtype=bool)
        allowed_positions.py_func(xs, m, q, allowed)
        want = set()
        for t in np.quantile(xs, np.arange(1, q + 1) / (q + 1.0)):
            p = int(np.searchsorted(xs, t, side="right")) - 1
            if 0 <= p < m - 1:
                want.add(p)
        assert set(np.flatnonzero(allowed[:m])) == want, (xs, q)
    # q <= 0: every position.
    allowed[:] = False
    allowed_positions.py_func(xs, m, 0, allowed)
    assert allowed[:m].all()


# A cold fit compiles only its own kind's code. In a fresh interpreter with an
# empty kernel cache, every kernel a fit uses is compiled there and gains a
# signature; one it does not use has none. (With a warm cache numba loads the
# fit's machine whole, and the callees' signatures say nothing.)
COLD_KNAPSACK_FIT = """
import json, sys
import numpy as np
from spotree import SPOTree
from spotree.problems import Knapsack
from spotree.problems import _compiled
from spotree.tree import _kernels
rng = np.random.RandomState(0)
X = rng.rand(30, 2)
C = rng.rand(30, 12) * (1.0 + X[:, :1])
tree = SPOTree(Knapsack(rng.randint(1, 6, size=12), 10), max_depth=1).fit(X, C)
names = {name: len(getattr(mod, name).signatures) for mod, name in [
    (_kernels, "grow_step"), (_compiled, "_knapsack_dp_bound_warm"),
    (_compiled, "knapsack_dp_cut_bounds"),
    (_compiled, "dag_min_block"), (_compiled, "_dag_layout"), (_compiled, "_dag_min"),
    (_compiled, "_knapsack_bb_bound"), (_compiled, "_knapsack_bb_min"),
    (_compiled, "relaxation_min"), (_compiled, "relaxation_min_warm"),
    (_compiled, "lagrangian_bound_min")]}
print(json.dumps([tree.tree_.node_count, names]))
"""


def test_a_cold_knapsack_fit_compiles_no_other_kinds_code(tmp_path):
    import json
    import os
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, SPOTREE_CACHE_DIR=str(tmp_path), SPOTREE_NUMBA_CACHE="1",
               PYTHONPATH=os.pathsep.join([str(root)] + [p for p in
                                                         [os.environ.get("PYTHONPATH")] if p]))
    res = subprocess.run([sys.executable, "-c", COLD_KNAPSACK_FIT], capture_output=True,
                         text=True, env=env, cwd=root, timeout=300)
    assert res.returncode == 0, res.stderr
    node_count, compiled = json.loads(res.stdout.strip().splitlines()[-1])
    # The fit went through the one-resource knapsack's compiled sweep and its
    # bounds (the control: this process did compile, and we see it).
    assert node_count == 3
    assert compiled.pop("grow_step") == 1
    assert compiled.pop("_knapsack_dp_bound_warm") == 1
    assert compiled.pop("knapsack_dp_cut_bounds") == 1
    # Nothing of the DAG's block solver, the several-resource knapsack, or the
    # bounds dispatched on a kind number at run time (which compile every kind).
    assert compiled == dict.fromkeys(compiled, 0)


def test_ascending_writes_the_distinct_values_sorted_without_a_buffer():
    from spotree.tree._kernels import ascending

    # The compiled function has no Python wrapper (internal); its Python
    # source is what numba compiles, checked here against numpy's unique.
    rng = np.random.default_rng(3)
    for trial in range(200):
        p = int(rng.integers(1, 40))
        k = int(rng.integers(0, p + 1))
        values = rng.permutation(p)[:k].astype(np.int64)
        if trial % 3 == 0 and k:  # repeated values count once
            values = np.r_[values, values[: k // 2 + 1]]
        out = np.full(p + int(rng.integers(0, 3)), -5, dtype=np.int64)
        got = ascending.py_func(values, p, out)
        want = np.unique(values)
        assert got == len(want)
        np.testing.assert_array_equal(out[:got], want)
        assert (out[p:] == -5).all()  # nothing written past p
