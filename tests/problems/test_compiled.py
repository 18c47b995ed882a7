"""The compiled solvers' lower bounds (``relaxation_min``, ``lagrangian_bound_min``)
against independent computations: scipy's ``linprog`` on the LP relaxation, and the
exact optimum by enumeration of every 0/1 vector."""

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import linprog

from spotree.problems import Knapsack, ShortestPath
from spotree.problems._compiled import (lagrangian_bound_min, relaxation_min,
                                        relaxation_min_warm)


def _buffers(o):
    return np.empty(o.work_size), np.empty(o.iwork_size, dtype=np.int64)


def _exact_min(c, W, cap):
    """min c.x over 0/1 vectors with W x <= cap, by enumeration."""
    best = 0.0
    for x in itertools.product((0.0, 1.0), repeat=c.size):
        x = np.array(x)
        if (W @ x <= cap * (1 + 1e-9)).all():
            best = min(best, float(c @ x))
    return best


def _cases(seed, n_cases, integer):
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        n = int(rng.integers(1, 9))
        if integer:
            W = rng.integers(0, 7, size=(1, n)).astype(float)
            cap = np.array([float(rng.integers(0, 15))])
        else:
            m = int(rng.integers(1, 4))
            W = np.round(rng.uniform(0, 4, size=(m, n)), 2)
            cap = np.round(rng.uniform(0, 8, size=m), 2)
        yield rng, W, cap


def test_one_resource_bound_is_the_lp_relaxation():
    n_frac = 0
    for rng, W, cap in _cases(0, 60, integer=True):
        o = Knapsack(W, cap).compiled_oracle()
        work, iwork = _buffers(o)
        for _ in range(4):
            c = rng.normal(size=W.shape[1])
            bound, lam = relaxation_min(o.kind, o.ints, o.floats, c, work, iwork)
            # The relaxation over the items that fit on their own (the
            # integer program never takes the others).
            ub = [(0, 1 if w <= cap[0] else 0) for w in W[0]]
            res = linprog(c, A_ub=W, b_ub=cap, bounds=ub, method="highs")
            assert bound == pytest.approx(res.fun, abs=1e-9)
            assert bound <= _exact_min(c, W, cap) + 1e-12
            assert lam >= 0.0
            # The multiplier is the relaxation's optimal one: the
            # Lagrangian bound meets the LP value there.
            lag = lagrangian_bound_min(o.kind, o.ints, o.floats, c, lam)
            assert lag == pytest.approx(bound, abs=1e-9)
            n_frac += lam > 0
    assert n_frac > 50


def _warm_cases(seed, n_cases):
    """_cases' small knapsacks, then larger ones (up to 40 items) whose critical
    item can move further than the warm start walks."""
    yield from _cases(seed, n_cases, integer=True)
    rng = np.random.default_rng(seed + 100)
    for _ in range(n_cases // 2):
        n = int(rng.integers(9, 41))
        W = rng.integers(0, 8, size=(1, n)).astype(float)
        cap = np.array([float(rng.integers(0, int(W.sum()) + 2))])
        yield rng, W, cap


def test_warm_started_relaxation_is_the_lp_relaxation():
    # The split search's warm start: the critical item kept across a sequence
    # of costs that drift (a row added at a time), jump, tie or go
    # non-positive, and arbitrary hints (out of range, an excluded item);
    # each call must still give the LP relaxation's value and Dantzig's
    # multiplier (the heap-sorted relaxation's, to the bit).
    n_frac = n_far = 0
    for rng, W, cap in _warm_cases(3, 40):
        o = Knapsack(W, cap).compiled_oracle()
        work, iwork = _buffers(o)
        n = W.shape[1]
        hint = np.array([-1], dtype=np.int64)
        key = np.empty(n)
        ub = [(0, 1 if w <= cap[0] else 0) for w in W[0]]
        c = np.zeros(n)
        for step in range(8):
            if step % 4 == 3:
                c = rng.normal(size=n)
            elif step % 4 == 2:
                c = -np.round(rng.uniform(0, 2, size=n)) * np.maximum(W[0], 1)  # ratio ties
            else:
                c = c + rng.normal(size=n) * (0.1 if step % 2 else 1.0)
            if step == 5:
                hint[0] = rng.integers(-2, n + 2)
            before = int(hint[0])
            bound, lam = relaxation_min_warm(o.kind, o.ints, o.floats, c, work, iwork, hint, key)
            res = linprog(c, A_ub=W, b_ub=cap, bounds=ub, method="highs")
            assert bound == pytest.approx(res.fun, abs=1e-9)
            assert lam >= 0.0
            assert lam == relaxation_min(o.kind, o.ints, o.floats, c, work, iwork)[1]
            lag = lagrangian_bound_min(o.kind, o.ints, o.floats, c, lam)
            assert lag == pytest.approx(bound, abs=1e-9)
            if lam > 0.0:
                n_frac += 1
                # The hint now names an item of the critical ratio.
                j = int(hint[0])
                assert -c[j] / W[0, j] == lam
                n_far += j != before
    assert n_frac > 100
    assert n_far > 50


def test_several_resources_bounds_are_valid():
    # The surrogate relaxation is weaker than the LP relaxation but still a
    # bound; so is the Lagrangian at any multiplier.
    for rng, W, cap in _cases(1, 60, integer=False):
        o = Knapsack(W, cap).compiled_oracle()
        work, iwork = _buffers(o)
        for _ in range(4):
            c = rng.normal(size=W.shape[1])
            exact = _exact_min(c, W, cap)
            bound, lam = relaxation_min(o.kind, o.ints, o.floats, c, work, iwork)
            assert bound <= exact + 1e-12
            lag = lagrangian_bound_min(o.kind, o.ints, o.floats, c, lam)
            assert lag == pytest.approx(bound, abs=1e-9)
            for t in (0.0, 0.3, 1.0, 3.0):
                assert lagrangian_bound_min(o.kind, o.ints, o.floats, c, t * lam + t) \
                    <= exact + 1e-12


def test_lagrangian_bound_below_exact_for_any_multiplier():
    for rng, W, cap in _cases(2, 40, integer=True):
        o = Knapsack(W, cap).compiled_oracle()
        for _ in range(3):
            c = rng.normal(size=W.shape[1])
            exact = _exact_min(c, W, cap)
            for lam in rng.uniform(0, 3, size=5):
                assert lagrangian_bound_min(o.kind, o.ints, o.floats, c, lam) <= exact + 1e-12


def test_hand_example():
    # Weights 2, 2, 3 and capacity 4; values 3, 1, 2. Dantzig's rule takes
    # item 0 (ratio 1.5), then 2/3 of item 2 (ratio 2/3): 3 + 4/3. The
    # multiplier is item 2's ratio. All items fit with room to spare at capacity 8:
    # the bound is the sum of the values and the multiplier 0.
    o = Knapsack([[2, 2, 3]], [4]).compiled_oracle()
    work, iwork = _buffers(o)
    c = np.array([-3.0, -1.0, -2.0])
    bound, lam = relaxation_min(o.kind, o.ints, o.floats, c, work, iwork)
    assert_allclose([bound, lam], [-(3.0 + 4.0 / 3.0), 2.0 / 3.0])
    o = Knapsack([[2, 2, 3]], [8]).compiled_oracle()
    work, iwork = _buffers(o)
    assert_allclose(relaxation_min(o.kind, o.ints, o.floats, c, work, iwork), [-6.0, 0.0])


def test_path_kinds_have_no_bound():
    for problem in (ShortestPath((3, 3)), ShortestPath.from_edges(3, [(0, 1), (1, 2)], 0, 2)):
        o = problem.compiled_oracle()
        work, iwork = _buffers(o)
        c = np.ones(problem.n_costs)
        assert relaxation_min(o.kind, o.ints, o.floats, c, work, iwork)[0] == -np.inf
        assert lagrangian_bound_min(o.kind, o.ints, o.floats, c, 1.0) == -np.inf


def test_knapsack_dp_value_alone_equals_the_full_table_to_the_bit():
    # The split search asks for the value only, which a trimmed table
    # computes; it must equal the full table's value (the solve that also
    # returns the decision), and the enumerated optimum.
    from spotree.problems._compiled import solve_min

    rng = np.random.default_rng(7)
    for t in range(400):
        n = int(rng.integers(1, 11))
        K = int(rng.integers(0, 25))
        W = rng.integers(0, 10, size=(1, n)).astype(float)
        o = Knapsack(W, [K]).compiled_oracle()
        work, iwork = _buffers(o)
        for _ in range(3):
            if t % 2:
                c = rng.normal(size=n)
            else:  # many ties
                c = rng.integers(-4, 2, size=n) * 0.1
            value = solve_min(o.kind, o.ints, o.floats, c, np.zeros(0), work, iwork)
            w = np.zeros(n)
            full = solve_min(o.kind, o.ints, o.floats, c, w, work, iwork)
            assert value == full
            assert value == pytest.approx(_exact_min(c, W, np.array([K])), abs=1e-12)
    # Larger knapsacks, values of very different magnitudes (sums that round):
    # the banded table's value against the full table's, to the bit.
    for t in range(300):
        n = int(rng.integers(1, 50))
        W = rng.integers(0, 12, size=(1, n)).astype(float)
        K = int(rng.integers(0, int(W.sum()) + 3))
        o = Knapsack(W, [K]).compiled_oracle()
        work, iwork = _buffers(o)
        c = rng.normal(size=n) * 10.0 ** rng.integers(-8, 9, size=n)
        value = solve_min(o.kind, o.ints, o.floats, c, np.zeros(0), work, iwork)
        assert value == solve_min(o.kind, o.ints, o.floats, c, np.zeros(n), work, iwork)


def test_solve_rows_remembers_the_chunk_size_its_time_allows(monkeypatch):
    """Chunks of about ``seconds`` each (Ctrl-C is seen between them), starting
    from the size the last call on a problem of the same kind measured."""
    from types import SimpleNamespace

    import spotree.problems._compiled as comp
    from spotree.problems import Knapsack

    rng = np.random.default_rng(3)
    Wt = rng.integers(300, 800, size=(1, 12)) / 100.0
    o = Knapsack(Wt, 0.5 * Wt.sum(axis=1)).compiled_oracle()
    C = -rng.uniform(0, 10, size=(400, 12))
    # A fake clock: every row costs exactly 1 ms, so 0.05 s is 50 rows.
    clock = [0.0]
    chunks = []
    real = comp.solve_batch_with

    def timed_batch(solve, ints, floats, Cs, Ws, work, iwork):
        chunks.append(Cs.shape[0])
        clock[0] += 1e-3 * Cs.shape[0]
        return real(solve, ints, floats, Cs, Ws, work, iwork)

    monkeypatch.setattr(comp, "solve_batch_with", timed_batch)
    monkeypatch.setattr(comp, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(comp, "_FIRST_STEP", {})
    W = np.empty_like(C)
    z = comp.solve_rows(o, C, W, seconds=0.05)
    # Cold: 1 row, then at most 2x + 1 the last chunk, never over 50 rows.
    assert chunks[:4] == [1, 3, 7, 15]
    assert max(chunks) == 50 and sum(chunks) == 400
    chunks.clear()
    z2 = comp.solve_rows(o, C[:120], np.empty((120, 12)), seconds=0.05)
    # Warm: straight to the 50 rows that take 0.05 s.
    assert chunks == [50, 50, 20]
    # A problem of another size starts cold again.
    chunks.clear()
    o2 = Knapsack(np.hstack([Wt, Wt]), Wt.sum()).compiled_oracle()
    comp.solve_rows(o2, np.hstack([C, C])[:10], np.empty((10, 24)), seconds=0.05)
    assert chunks[0] == 1
    # The values are those of one batch over every row.
    W1 = np.empty_like(C)
    z1 = comp.solve_batch(o.kind, o.ints, o.floats, C, W1, np.empty(o.work_size),
                          np.empty(o.iwork_size, dtype=np.int64))
    np.testing.assert_array_equal(z, z1)
    np.testing.assert_array_equal(z2, z1[:120])
    np.testing.assert_array_equal(W, W1)


@pytest.mark.parametrize("threads", [2, 3])
def test_solve_rows_split_over_threads_gives_the_one_batch_values(monkeypatch, threads):
    # Inside solve_threads, a batch long enough is solved in contiguous parts
    # on that many threads: the same decisions and values as one batch over
    # every row (solve_batch, one thread), and every row in exactly one part.
    import threading

    import spotree.problems._compiled as comp

    rng = np.random.default_rng(5)
    Wt = rng.integers(300, 800, size=(1, 16)) / 100.0
    o = Knapsack(Wt, 0.4 * Wt.sum(axis=1)).compiled_oracle()
    C = -rng.uniform(0, 10, size=(1001, 16))
    parts = []
    real = comp._solve_part

    def spy(solve, oracle, Cm, out, z, s, m, seconds, stop):
        parts.append((s, m, threading.current_thread().name))
        return real(solve, oracle, Cm, out, z, s, m, seconds, stop)

    monkeypatch.setattr(comp, "_solve_part", spy)
    monkeypatch.setattr(comp, "MIN_PART_SECONDS", 1e-12)
    monkeypatch.setattr(comp, "_PER_ROW", {})
    monkeypatch.setattr(comp, "_cores", lambda: 8)  # whatever this machine has
    W1 = np.empty_like(C)
    z1 = comp.solve_batch(o.kind, o.ints, o.floats, C, W1, np.empty(o.work_size),
                          np.empty(o.iwork_size, dtype=np.int64))
    comp.solve_rows(o, C[:10], np.empty((10, 16)))  # a time per row measured
    parts.clear()
    W = np.empty_like(C)
    with comp.solve_threads(threads):
        z = comp.solve_rows(o, C, W)
    assert len(parts) == threads
    assert sorted((s, m) for s, m, _ in parts) == [
        (int(a), int(b)) for a, b in zip(np.linspace(0, 1001, threads + 1).astype(int)[:-1],
                                         np.linspace(0, 1001, threads + 1).astype(int)[1:])]
    # The calling thread and the pool's (at most one fewer than the cores).
    assert 2 <= len({name for *_, name in parts}) <= threads
    np.testing.assert_array_equal(z, z1)
    np.testing.assert_array_equal(W, W1)
    # Outside the block: one part again.
    parts.clear()
    comp.solve_rows(o, C, W)
    assert [(s, m) for s, m, _ in parts] == [(0, 1001)]
    # No more parts than the cores the process may use.
    monkeypatch.setattr(comp, "_cores", lambda: 2)
    parts.clear()
    with comp.solve_threads(threads):
        comp.solve_rows(o, C, W)
    assert [(s, m) for s, m, _ in sorted(parts)] == [(0, 500), (500, 1001)]


def _split_ready_knapsack(monkeypatch, comp, *, seed, rows):
    """A knapsack oracle and ``rows`` cost rows, with every batch split in
    ``solve_threads`` (a time per row measured, any part worth a thread, 8 cores)."""
    rng = np.random.default_rng(seed)
    Wt = rng.integers(300, 800, size=(1, 8)) / 100.0
    o = Knapsack(Wt, 0.4 * Wt.sum(axis=1)).compiled_oracle()
    C = -rng.uniform(0, 10, size=(rows, 8))
    monkeypatch.setattr(comp, "_PER_ROW", {})
    monkeypatch.setattr(comp, "_cores", lambda: 8)
    comp.solve_rows(o, C[:10], np.empty((10, 8)))
    monkeypatch.setattr(comp, "MIN_PART_SECONDS", 1e-12)
    return o, C


def test_solve_rows_on_threads_raises_a_part_error_and_stops_the_others(monkeypatch):
    import threading

    import spotree.problems._compiled as comp

    o, C = _split_ready_knapsack(monkeypatch, comp, seed=6, rows=400)
    real = comp.solve_batch_with
    calls = {"main": 0, "other": 0}

    def failing(solve, ints, floats, Cs, Ws, work, iwork):
        main = threading.current_thread() is threading.main_thread()
        calls["main" if main else "other"] += 1
        if main:
            raise KeyboardInterrupt  # Ctrl-C in the calling thread's part
        return real(solve, ints, floats, Cs, Ws, work, iwork)

    monkeypatch.setattr(comp, "solve_batch_with", failing)
    # Chunks of one row: the other part looks at the stop flag after each.
    monkeypatch.setattr(comp, "_FIRST_STEP", {})
    monkeypatch.setattr(comp, "time", type("T", (), {"perf_counter": staticmethod(
        lambda: (calls["main"] + calls["other"]) * 1.0)}))
    with comp.solve_threads(2), pytest.raises(KeyboardInterrupt):
        comp.solve_rows(o, C, np.empty_like(C))
    assert calls["main"] == 1 and calls["other"] < 200  # stopped before its 200 rows

    def failing_other(solve, ints, floats, Cs, Ws, work, iwork):
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("a solver error in another thread")
        return real(solve, ints, floats, Cs, Ws, work, iwork)

    monkeypatch.setattr(comp, "solve_batch_with", failing_other)
    with comp.solve_threads(2), pytest.raises(RuntimeError, match="another thread"):
        comp.solve_rows(o, C, np.empty_like(C))


def test_solve_rows_on_threads_stops_every_part_before_raising_an_error(monkeypatch):
    # Three parts: the second fails at once while the third is still solving.
    # solve_rows must stop the third and wait for it before it raises, so
    # that nothing writes to the caller's arrays after it returned.
    import time as real_time

    import spotree.problems._compiled as comp

    o, C = _split_ready_knapsack(monkeypatch, comp, seed=7, rows=600)
    monkeypatch.setattr(comp, "_FIRST_STEP", {})
    real = comp.solve_batch_with
    third = {"rows": 0}

    def solve(solve_, ints, floats, Cs, Ws, work, iwork):
        # The parts are told apart by the rows they were given (views of C).
        first_row = (Cs.__array_interface__["data"][0] - C.__array_interface__["data"][0]) \
            // C.strides[0]
        if 200 <= first_row < 400:
            raise RuntimeError("a solver error in the second part")
        if first_row >= 400:
            for _ in range(Cs.shape[0]):
                real_time.sleep(0.002)
                third["rows"] += 1
        return real(solve_, ints, floats, Cs, Ws, work, iwork)

    monkeypatch.setattr(comp, "solve_batch_with", solve)
    # Chunks of one row (seconds ~ 0): each part looks at the stop flag after each.
    with comp.solve_threads(3), pytest.raises(RuntimeError, match="second part"):
        comp.solve_rows(o, C, np.empty_like(C), seconds=1e-12)
    done = third["rows"]
    real_time.sleep(0.1)
    assert third["rows"] == done  # no part still running after the error came out
    assert done < 200  # and the third part stopped early


def _dag_paths(n, edges, s, t):
    """Every source-target path of a DAG as a 0/1 edge vector (depth-first)."""
    out = [[] for _ in range(n)]
    for e, (a, b) in enumerate(edges):
        out[a].append(e)
    paths = []

    def walk(v, used):
        if v == t:
            w = np.zeros(len(edges))
            w[used] = 1.0
            paths.append(w)
            return
        for e in out[v]:
            walk(edges[e][1], used + [e])

    walk(s, [])
    return np.array(paths)


def test_dag_block_solver_equals_the_scalar_solve_and_enumeration():
    # Each column of the block is one cost vector: its value must equal the
    # scalar solve's to the bit (the tree compares the two paths' splits),
    # and the minimum over every path listed by enumeration. Negative costs,
    # ties and nodes that the source cannot reach (node 1 here: an edge into
    # it comes only from node 7, which comes after the source in no order).
    from spotree.problems._compiled import DAG_BLOCK, dag_min_block, solve_min

    edges = [(0, 2), (0, 3), (2, 3), (2, 4), (3, 4), (3, 5), (4, 5), (4, 6), (5, 6),
             (2, 6), (7, 1), (1, 6), (7, 0)]
    problem = ShortestPath.from_edges(8, edges, 0, 6)
    o = problem.compiled_oracle()
    paths = _dag_paths(8, edges, 0, 6)
    rng = np.random.default_rng(3)
    work, iwork = _buffers(o)
    dist = np.zeros((8, DAG_BLOCK))
    out = np.zeros(DAG_BLOCK)
    for rep in range(20):
        if rep % 2:
            cb = rng.normal(size=(len(edges), DAG_BLOCK))
        else:
            cb = rng.integers(-2, 3, size=(len(edges), DAG_BLOCK)).astype(float)
        cb = np.ascontiguousarray(cb)
        dag_min_block(o.ints, cb, dist, out)
        for k in range(DAG_BLOCK):
            c = np.ascontiguousarray(cb[:, k])
            assert out[k] == solve_min(o.kind, o.ints, o.floats, c, np.zeros(0), work, iwork)
            assert out[k] == pytest.approx((paths @ c).min(), abs=1e-12)
        # The split search's right children: top - cb[:, k], formed in the solver.
        top = rng.normal(size=len(edges)) if rep % 2 else np.round(rng.normal(size=len(edges)))
        dag_min_block(o.ints, cb, dist, out, top)
        for k in range(DAG_BLOCK):
            c = top - cb[:, k]
            assert out[k] == solve_min(o.kind, o.ints, o.floats, c, np.zeros(0), work, iwork)
            assert out[k] == pytest.approx((paths @ c).min(), abs=1e-12)
    # Buffers of another width would be read past a row: every value NaN
    # (the split search's "solver gave up") instead.
    for bad_cb, bad_dist in ((np.zeros((len(edges), DAG_BLOCK // 2)), dist),
                             (np.zeros((len(edges), DAG_BLOCK)), np.zeros((8, DAG_BLOCK * 2))),
                             (np.zeros((len(edges), DAG_BLOCK)), np.zeros((7, DAG_BLOCK)))):
        out[:] = 0.0
        dag_min_block(o.ints, bad_cb, bad_dist, out)
        assert np.isnan(out).all()


def _lagrangian_by_hand(c, W, cap, lam):
    """-(lam cap + sum over the items that fit of max(0, -c_j - lam w_j)), one resource."""
    w = W[0]
    fits = w <= cap[0]
    return -(lam * cap[0] + np.maximum(-c[fits] - lam * w[fits], 0.0).sum())


def test_fused_child_bounds_are_the_lagrangian_bounds_and_valid():
    # The split search's fused bounds of two children (one pass, any summation
    # order) against the formula by hand at each multiplier, and below the
    # enumerated optimum; weights of 0 and above the capacity included.
    from spotree.problems._compiled import knapsack_dp_child_bounds, knapsack_dp_cut_bounds

    for rng, W, cap in _cases(5, 60, integer=True):
        o = Knapsack(W, cap).compiled_oracle()
        for _ in range(3):
            bl = rng.normal(size=W.shape[1])
            br = rng.normal(size=W.shape[1])
            lams = rng.uniform(0, 3, size=4)
            ll, lr, margin = knapsack_dp_child_bounds(o.ints, o.floats, bl, br, *lams)
            want_l = max(_lagrangian_by_hand(bl, W, cap, lams[0]),
                         _lagrangian_by_hand(bl, W, cap, lams[1]))
            want_r = max(_lagrangian_by_hand(br, W, cap, lams[2]),
                         _lagrangian_by_hand(br, W, cap, lams[3]))
            assert ll == pytest.approx(want_l, rel=1e-12, abs=1e-12)
            assert lr == pytest.approx(want_r, rel=1e-12, abs=1e-12)
            # The sweep's form: the left sum and the node's total.
            cl, cr, cm = knapsack_dp_cut_bounds(o.ints, o.floats, bl, bl + br, *lams)
            assert cl == pytest.approx(want_l, rel=1e-12, abs=1e-12)
            assert cr == pytest.approx(want_r, rel=1e-9, abs=1e-9)
            assert cm == pytest.approx(np.abs(bl).sum() + np.abs(br).sum(), rel=1e-9)
            assert margin == pytest.approx(np.abs(bl).sum() + np.abs(br).sum(), rel=1e-12)
            assert ll <= _exact_min(bl, W, cap) + 1e-12
            assert lr <= _exact_min(br, W, cap) + 1e-12


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
# Python 3.12+ warns on any fork of a process with threads: that fork is the
# point of this test (the pool's at-fork handler), not a call to change.
@pytest.mark.filterwarnings(
    r"ignore:This process \(pid=\d+\) is multi-threaded, use of fork\(\):DeprecationWarning")
def test_threaded_solves_work_in_a_forked_child(monkeypatch):
    # The parent's pool has threads; a child forked after it has none, and
    # must start its own instead of waiting on the parent's forever.
    import multiprocessing

    import spotree.problems._compiled as comp

    rng = np.random.default_rng(7)
    Wt = rng.integers(300, 800, size=(1, 8)) / 100.0
    o = Knapsack(Wt, 0.4 * Wt.sum(axis=1)).compiled_oracle()
    C = -rng.uniform(0, 10, size=(300, 8))
    monkeypatch.setattr(comp, "MIN_PART_SECONDS", 1e-12)
    monkeypatch.setattr(comp, "_cores", lambda: 2)
    W = np.empty_like(C)
    comp.solve_rows(o, C[:10], W[:10])
    with comp.solve_threads(2):
        z = comp.solve_rows(o, C, W)
    assert comp._POOL is not None
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(_solve_in_child, (o, C)).get(timeout=60)
    np.testing.assert_array_equal(got, z)


def _solve_in_child(o, C):
    import spotree.problems._compiled as comp

    # The monkeypatched values are inherited; kept explicit.
    comp.MIN_PART_SECONDS = 1e-12
    comp._cores = lambda: 2
    with comp.solve_threads(2):
        return comp.solve_rows(o, C, np.empty_like(C))


def test_read_only_costs_are_solved():
    # A read-only cost matrix (np.load(..., mmap_mode="r"), np.broadcast_to)
    # raised numba's "mismatch of argument types: readonly array" in every
    # compiled solve that did not negate it first (min sense); found by hunt6.
    from spotree.problems import LinearProgram

    rng = np.random.default_rng(3)
    edges = [(0, 1), (1, 3), (0, 2), (2, 3), (1, 2), (0, 3), (0, 3)]
    P = _dag_paths(4, edges, 0, 3)
    A = np.zeros((4, len(edges)))
    for e, (a, b) in enumerate(edges):
        A[a, e], A[b, e] = -1.0, 1.0
    Wt, cap = np.array([[2.0, 3.0, 4.0, 1.0]]), np.array([5.0])
    S = np.array(list(itertools.product((0.0, 1.0), repeat=4)))
    S = S[(S @ Wt.T <= cap).all(axis=1)]
    cases = [(ShortestPath.from_edges(4, edges, 0, 3), P),
             (LinearProgram(A_eq=A, b_eq=[-1, 0, 0, 1], bounds=(0, 1)), P),  # a network
             (ShortestPath((2, 3)), ShortestPath((2, 3)).vertices()),
             (Knapsack(Wt, cap, sense="min"), S),
             (Knapsack(Wt, cap, sense="min", method="bb"), S)]
    for problem, V in cases:
        C = rng.normal(size=(6, problem.n_costs))
        C.setflags(write=False)
        for costs in (C, np.broadcast_to(C[0], C.shape)):
            W, z = problem.solve(costs)
            assert_allclose(z, (costs @ V.T).min(axis=1), rtol=1e-12, atol=1e-12)
            assert all((V == w).all(axis=1).any() for w in W)


def test_knapsack_dp_value_at_a_multiplier_is_the_optimum():
    # The split search's exact solve, reduced to a few items by the LP
    # relaxation's multiplier: the optimum by enumeration for any
    # multiplier r >= 0 (the bounds it fixes items with hold for every r),
    # the full table's value otherwise (r NaN or negative falls back).
    from spotree.problems._compiled import _knapsack_dp_value_at

    rng = np.random.default_rng(11)
    for t in range(300):
        n = int(rng.integers(7, 14))  # more items than the core (6)
        W = rng.integers(0, 9, size=(1, n)).astype(float)
        K = int(rng.integers(0, int(W.sum()) + 3))
        o = Knapsack(W, [K]).compiled_oracle()
        work, iwork = _buffers(o)
        if t % 3 == 0:
            c = rng.integers(-5, 3, size=n) * 0.25  # ties
        else:
            c = rng.normal(size=n) - 0.3
        exact = _exact_min(c, W, np.array([K]))
        lam = relaxation_min(o.kind, o.ints, o.floats, c, work, iwork)[1]
        for r in (lam, 0.5 * lam, 2.0 * lam + 0.1, 0.0, 1e6, -1.0, np.nan):
            got = _knapsack_dp_value_at(o.ints, o.floats, c, work, iwork, r)
            assert got == pytest.approx(exact, rel=1e-12, abs=1e-12), (t, r)


def test_knapsack_dp_value_at_keeps_an_item_free_within_the_rounding_margin():
    # The reduction fixes item j only when |d_j| > U - lb (plus a margin for
    # rounding). Here the optimum beats the core's lb by delta = 2**-30, far
    # below the margin, and leaves out the item X of d_X = U - opt: X is fixed
    # (wrongly) as soon as the margin is subtracted instead of added. Every
    # number is exact in binary. r = 1 is the LP relaxation's critical ratio.
    # By hand: K = 6; X weighs 2 for 3 - delta, six items weigh 3 for 3 each.
    # The best subset is two of the 3s (6); X with one 3 gives 6 - delta.
    from spotree.problems._compiled import _knapsack_dp_value_at

    delta = 2.0 ** -30
    W = np.array([[2.0, 3, 3, 3, 3, 3, 3]])
    c = -np.array([3.0 - delta, 3, 3, 3, 3, 3, 3])
    assert _exact_min(c, W, np.array([6.0])) == -6.0
    o = Knapsack(W, [6]).compiled_oracle()
    work, iwork = _buffers(o)
    assert relaxation_min(o.kind, o.ints, o.floats, c, work, iwork)[1] == 1.0
    assert _knapsack_dp_value_at(o.ints, o.floats, c, work, iwork, 1.0) == -6.0


def test_knapsack_dp_value_at_matches_the_full_table_on_large_knapsacks():
    # ICON-sized knapsacks (48 items of weights 3, 5, 7, capacity 120, and
    # others), costs of one sign or mixed, at the relaxation's multiplier:
    # the banded DP's value up to rounding (the sums run in another order).
    from spotree.problems._compiled import _knapsack_dp_value, _knapsack_dp_value_at

    rng = np.random.default_rng(12)
    for t in range(400):
        if t % 2:
            n, K = 48, 120
            W = rng.choice([3.0, 5.0, 7.0], size=(1, n))
        else:
            n = int(rng.integers(7, 70))
            W = rng.integers(0, 15, size=(1, n)).astype(float)
            K = int(rng.integers(0, int(W.sum()) + 3))
        o = Knapsack(W, [K]).compiled_oracle()
        work, iwork = _buffers(o)
        # A smooth profile (as sums of many days' prices) or noise.
        base = np.sin(np.linspace(0, rng.uniform(1, 6), n)) + rng.uniform(1, 3)
        c = -(base + rng.normal(0, [0.01, 0.3, 2.0][t % 3], size=n)) * 10.0 ** rng.integers(-5, 6)
        full = _knapsack_dp_value(o.ints, c, work)
        lam = relaxation_min(o.kind, o.ints, o.floats, c, work, iwork)[1]
        got = _knapsack_dp_value_at(o.ints, o.floats, c, work, iwork, lam)
        assert got == pytest.approx(full, rel=1e-13, abs=1e-300), t
