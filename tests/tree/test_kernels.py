"""The growth kernels' row bookkeeping against direct computations."""

import numpy as np

from spotree.tree._kernels import filter_order, partition_segment


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
