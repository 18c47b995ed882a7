"""Compiled decision oracles: exact solvers that run inside numba code.

A problem with a compiled solver describes it by a :class:`CompiledOracle`
(plain arrays plus a kind code), returned by its ``compiled_oracle()``
method. The tree's split sweep then solves each candidate child from its
running cost sums without leaving compiled code, and without materialising a
matrix of prefix sums; the problem's own batched ``solve`` uses the same
kernels through :func:`solve_batch`.

Contract of every kind (see :func:`solve_min`):

- the cost vector ``c`` is given **in the minimization sense** (a maximization
  problem's costs arrive multiplied by -1), and the return value is
  ``min_{w in S} c^T w``;
- when ``w`` has length d the minimizer is written to it (``w.shape[0] == 0``
  asks for the value only, which is what the split sweep needs);
- ``work`` and ``iwork`` are scratch buffers of at least ``work_size`` floats
  and ``iwork_size`` ints, so that a solve allocates nothing;
- ties are broken deterministically (documented per kind);
- a kind may give up on a cost vector (the knapsack branch and bound past its
  node limit): it then returns NaN, writes nothing to ``w``, and the caller
  must solve that cost vector another way (the problem's own ``solve`` does,
  with HiGHS). Every other return value is exact.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .._numba import cfunc, jit

__all__ = ["CompiledOracle", "KIND_ASSIGNMENT", "KIND_DAG", "KIND_GRID", "KIND_KNAPSACK_DP",
           "KIND_KNAPSACK_BB",
           "KIND_LABEL_SETTING", "solve_min", "solve_batch", "solve_rows", "solve_threads",
           "solver_function",
           "solve_batch_with", "SOLVER_SIGNATURE", "dag_oracle", "grid_oracle",
           "knapsack_dp_oracle", "knapsack_bb_oracle", "label_setting_oracle",
           "assignment_oracle",
           "relaxation_min", "lagrangian_bound_min", "DAG_BLOCK",
           "dag_min_block", "knapsack_dp_child_bounds", "knapsack_dp_cut_bounds"]

#: Shortest path on a directed acyclic graph (``ShortestPath``, grids and
#: ``ShortestPath.from_edges``).
KIND_DAG = 1
#: 0/1 knapsack with one resource and integer weights, by dynamic programming
#: over the capacity (``Knapsack``).
KIND_KNAPSACK_DP = 2
#: Multi-dimensional 0/1 knapsack with real weights, by branch and bound
#: (``Knapsack``).
KIND_KNAPSACK_BB = 3
#: Shortest path on a ``rows x cols`` grid with east and north edges
#: (``ShortestPath(grid)``): the DAG dynamic program without index arrays.
KIND_GRID = 4
#: Shortest path on a directed graph that may have cycles, for non-negative
#: costs (Dijkstra's label-setting method); gives up on a negative cost
#: (``LinearProgram`` recognized as a network).
KIND_LABEL_SETTING = 5
#: Linear assignment, square or rectangular, with forbidden pairs
#: (``Assignment``), by shortest augmenting paths (the Hungarian method).
KIND_ASSIGNMENT = 6


class CompiledOracle(NamedTuple):
    """Plain-data description of a compiled solver.

    Attributes
    ----------
    kind : int
        One of the ``KIND_*`` codes of this module.
    ints : ndarray of int64, 1-D
    floats : ndarray of float64, 1-D
        The problem's data, laid out as the kind's solver reads it.
    work_size, iwork_size : int
        Scratch sizes one solve needs.
    cost : float
        Rough number of elementary operations of one solve; the tree compares
        it with the number of vertices to choose its split-search path.
    """

    kind: int
    ints: np.ndarray
    floats: np.ndarray
    work_size: int
    iwork_size: int
    cost: float


# ------------------------------------------------------------------- DAG
def dag_oracle(n_nodes, tail, head, source, target, order):
    """Encode a DAG shortest-path problem for :func:`solve_min`.

    Parameters
    ----------
    n_nodes : int
    tail, head : ndarray of int64 of shape (n_edges,)
        Edge ``e`` goes from ``tail[e]`` to ``head[e]``; the cost vector's
        entry ``e`` is that edge's cost.
    source, target : int
    order : ndarray of int64 of shape (n_nodes,)
        A topological order of the nodes.

    Ties: at every node the path arrives through the in-edge of lowest
    index among the best ones.

    Layout of ``ints``: ``[n_nodes, n_edges, source, target, tail (E),
    order (N), in_ptr (N + 1), in_edges (E)]``, the in-edges of each node in
    increasing edge index.
    """
    tail = np.asarray(tail, dtype=np.int64)
    head = np.asarray(head, dtype=np.int64)
    order = np.asarray(order, dtype=np.int64)
    E = tail.shape[0]
    in_edges = np.argsort(head, kind="stable").astype(np.int64)
    in_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.add.at(in_ptr, head + 1, 1)
    in_ptr = np.cumsum(in_ptr)
    ints = np.concatenate([[n_nodes, E, source, target], tail, order, in_ptr,
                           in_edges]).astype(np.int64)
    return CompiledOracle(KIND_DAG, ints, np.zeros(0), n_nodes, n_nodes,
                          float(2 * E + n_nodes))


@jit(_nrt=False)
def _dag_layout(ints):
    """The DAG record's header: ``(n_nodes, n_edges, source, target)`` and the
    offsets in ``ints`` of the edges' tails, the topological order, the
    in-edge pointers and the in-edge lists (the layout :func:`dag_oracle`
    writes)."""
    n = ints[0]
    E = ints[1]
    o_tail = 4
    o_order = o_tail + E
    o_ptr = o_order + n
    return n, E, ints[2], ints[3], o_tail, o_order, o_ptr, o_ptr + n + 1


@jit
def _dag_min(ints, c, w, work, iwork):
    n, E, source, target, o_tail, o_order, o_ptr, o_in = _dag_layout(ints)
    dist = work
    pred = iwork
    for v in range(n):
        dist[v] = np.inf
        pred[v] = -1
    dist[source] = 0.0
    for t in range(n):
        v = ints[o_order + t]
        if v == source:
            continue
        best = np.inf
        arg = -1
        for a in range(ints[o_ptr + v], ints[o_ptr + v + 1]):
            e = ints[o_in + a]
            val = dist[ints[o_tail + e]] + c[e]
            if val < best:
                best = val
                arg = e
        dist[v] = best
        pred[v] = arg
    if w.shape[0] > 0:
        for e in range(E):
            w[e] = 0.0
        v = target
        # pred is -1 only where no in-edge had a finite cost (NaN input):
        # stop rather than walk off the graph.
        while v != source and pred[v] >= 0:
            e = pred[v]
            w[e] = 1.0
            v = ints[o_tail + e]
    return dist[target]


#: Cost vectors the block DAG solver takes at once (one AVX-512 pair of registers
#: per node: 16 lanes measured 3.7x faster per vector than the scalar solve on a
#: 45-node, 93-edge DAG; 8 lanes did not vectorize as well).
DAG_BLOCK = 16


def _lane_row(context, builder, arr_type, arr, row, vec):
    """Pointer to ``arr[row, 0]`` of a C-contiguous 2-d array, as a pointer to ``vec``."""
    a = context.make_array(arr_type)(context, builder, arr)
    stride = builder.extract_value(a.strides, 0)
    base = builder.ptrtoint(a.data, ir.IntType(64))
    addr = builder.add(base, builder.mul(row, stride))
    return builder.inttoptr(addr, vec.as_pointer())


@intrinsic
def _relax_lanes(typingctx, dist, v, u, cb, e, top, rest):
    """``dist[v, k] = min(dist[v, k], dist[u, k] + c[k])`` for the DAG_BLOCK lanes k at once,
    where ``c = cb[e]``, or ``top - cb[e]`` when ``rest``.

    numba compiles the loop over the lanes to scalar code (it cannot tell
    that ``dist[v]`` and ``dist[u]``, ``cb[e]`` do not overlap); this is that
    loop as one vector operation: the same IEEE additions, subtractions and
    ordered comparisons per lane, so the same values to the bit. Both arrays
    must be C-contiguous with DAG_BLOCK columns (checked by the caller).
    """
    ok = (isinstance(dist, types.Array) and isinstance(cb, types.Array) and dist.ndim == 2
          and cb.ndim == 2 and dist.layout == "C" and cb.layout == "C"
          and dist.dtype == types.float64 and cb.dtype == types.float64)
    if not ok:
        return None
    sig = types.void(dist, types.int64, types.int64, cb, types.int64, types.float64,
                     types.boolean)

    def codegen(context, builder, signature, args):
        d_arr, v_, u_, c_arr, e_, top_, rest_ = args
        vec = ir.VectorType(ir.DoubleType(), DAG_BLOCK)
        pv = _lane_row(context, builder, signature.args[0], d_arr, v_, vec)
        pu = _lane_row(context, builder, signature.args[0], d_arr, u_, vec)
        pe = _lane_row(context, builder, signature.args[3], c_arr, e_, vec)
        c = builder.load(pe, align=8)
        splat = builder.insert_element(ir.Constant(vec, ir.Undefined), top_,
                                       ir.Constant(ir.IntType(32), 0))
        splat = builder.shuffle_vector(splat, ir.Constant(vec, ir.Undefined),
                                       ir.Constant(ir.VectorType(ir.IntType(32), DAG_BLOCK),
                                                   [0] * DAG_BLOCK))
        c = builder.select(builder.trunc(rest_, ir.IntType(1)), builder.fsub(splat, c), c)
        x = builder.fadd(builder.load(pu, align=8), c)
        y = builder.load(pv, align=8)
        builder.store(builder.select(builder.fcmp_ordered("<", x, y), x, y), pv, align=8)
        return context.get_dummy_value()

    return sig, codegen


@jit(_nrt=False)
def dag_min_block(ints, cb, dist, out, top=None):
    """:func:`_dag_min`'s value for ``DAG_BLOCK`` cost vectors at once.

    ``cb`` (n_edges, DAG_BLOCK) holds one cost vector per column (with
    ``top`` (n_edges,) given: the cost vectors are ``top - cb[:, k]``, the
    split search's right children), ``dist`` (n_nodes, DAG_BLOCK) is
    scratch, ``out`` (DAG_BLOCK,) receives the values; all C-contiguous. The
    same additions and comparisons as the scalar solve in the same order, so
    every value is the same to the last bit; the lanes make the dynamic
    program's inner loop a vector operation (the split search solves the
    children of consecutive thresholds together).
    """
    n, E, source, target, o_tail, o_order, o_ptr, o_in = _dag_layout(ints)
    if cb.shape[1] != DAG_BLOCK or dist.shape[1] != DAG_BLOCK or dist.shape[0] < n:
        # The vector update would read or write past a row.
        for k in range(out.shape[0]):
            out[k] = np.nan
        return
    rest = top is not None
    for v in range(n):
        for k in range(DAG_BLOCK):
            dist[v, k] = np.inf
    for k in range(DAG_BLOCK):
        dist[source, k] = 0.0
    for t in range(n):
        v = ints[o_order + t]
        if v == source:
            continue
        for a in range(ints[o_ptr + v], ints[o_ptr + v + 1]):
            e = ints[o_in + a]
            _relax_lanes(dist, v, ints[o_tail + e], cb, e, top[e] if rest else 0.0, rest)
    for k in range(DAG_BLOCK):
        out[k] = dist[target, k]


# --------------------------------------------------------- label setting
def label_setting_oracle(n_nodes, tail, head, source, target, relevant):
    """Encode a shortest path on a graph with cycles for :func:`solve_min`.

    Dijkstra's label-setting method with a binary heap, ``O(E log E)`` per
    solve. It is exact only for non-negative costs: when an edge marked
    ``relevant`` has a negative cost, the solve gives up (returns NaN) and
    the caller solves that cost vector another way. With a negative cost on
    a cycle the linear program ``min c.w, A w = b, 0 <= w <= 1`` is a
    min-cost flow that may send flow around the cycle, which no path
    solver answers.

    Parameters
    ----------
    n_nodes : int
    tail, head : ndarray of int64 of shape (n_edges,)
    source, target : int
    relevant : ndarray of bool of shape (n_edges,)
        The edges whose cost matters: those on a cycle or on some
        source-target path. The others carry no flow in any feasible
        solution, so their costs, of any sign, change nothing.

    Ties: when every cost is positive, at every node the path arrives
    through the in-edge of lowest index among the best ones (the DAG
    solver's rule); with zero costs, the first such edge met.

    Layout of ``ints``: ``[n_nodes, n_edges, source, target, tail (E),
    head (E), out_ptr (N + 1), out_edges (E), relevant (E)]``. ``work``
    holds the labels (N) and the heap's keys (E + 1); ``iwork`` the
    predecessor edges (N), the settled flags (N) and the heap's nodes
    (E + 1).
    """
    tail = np.asarray(tail, dtype=np.int64)
    head = np.asarray(head, dtype=np.int64)
    E = tail.shape[0]
    out_edges = np.argsort(tail, kind="stable").astype(np.int64)
    out_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.add.at(out_ptr, tail + 1, 1)
    out_ptr = np.cumsum(out_ptr)
    ints = np.concatenate([[n_nodes, E, source, target], tail, head, out_ptr, out_edges,
                           np.asarray(relevant, dtype=np.int64)]).astype(np.int64)
    return CompiledOracle(KIND_LABEL_SETTING, ints, np.zeros(0), n_nodes + E + 1,
                          2 * n_nodes + E + 1,
                          float(3 * E + n_nodes) * max(1.0, np.log2(E + 1)))


@jit
def _label_setting_min(ints, c, w, work, iwork):
    n = ints[0]
    E = ints[1]
    source = ints[2]
    target = ints[3]
    o_tail = 4
    o_head = o_tail + E
    o_ptr = o_head + E
    o_out = o_ptr + n + 1
    o_rel = o_out + E
    for e in range(E):
        if ints[o_rel + e] != 0 and c[e] < 0.0:
            return np.nan
    dist = work
    keys = work[n:]
    pred = iwork
    done = iwork[n:]
    heap = iwork[2 * n:]
    for v in range(n):
        dist[v] = np.inf
        pred[v] = -1
        done[v] = 0
    dist[source] = 0.0
    # A binary min-heap of (label, node) pairs with stale entries left in
    # place (skipped when popped): at most one push per improvement.
    size = 1
    keys[0] = 0.0
    heap[0] = source
    while size > 0:
        u = heap[0]
        du = keys[0]
        size -= 1
        if size > 0:
            # Move the last entry to the root and sift it down.
            kl = keys[size]
            nl = heap[size]
            i = 0
            while True:
                ch = 2 * i + 1
                if ch >= size:
                    break
                if ch + 1 < size and (keys[ch + 1] < keys[ch] or (
                        keys[ch + 1] == keys[ch] and heap[ch + 1] < heap[ch])):
                    ch += 1
                if keys[ch] < kl or (keys[ch] == kl and heap[ch] < nl):
                    keys[i] = keys[ch]
                    heap[i] = heap[ch]
                    i = ch
                else:
                    break
            keys[i] = kl
            heap[i] = nl
        if done[u] == 1 or du > dist[u]:
            continue
        done[u] = 1
        if u == target:
            break
        for a in range(ints[o_ptr + u], ints[o_ptr + u + 1]):
            e = ints[o_out + a]
            v = ints[o_head + e]
            if done[v] == 1:
                continue
            val = du + c[e]
            if val < dist[v]:
                dist[v] = val
                pred[v] = e
                # Push (val, v) and sift it up.
                i = size
                size += 1
                while i > 0:
                    par = (i - 1) // 2
                    if keys[par] < val or (keys[par] == val and heap[par] <= v):
                        break
                    keys[i] = keys[par]
                    heap[i] = heap[par]
                    i = par
                keys[i] = val
                heap[i] = v
            elif val == dist[v] and e < pred[v]:
                pred[v] = e
    if w.shape[0] > 0:
        for e in range(E):
            w[e] = 0.0
        v = target
        while v != source and pred[v] >= 0:
            e = pred[v]
            w[e] = 1.0
            v = ints[o_tail + e]
    return dist[target]


# ------------------------------------------------------------------ grid
def grid_oracle(rows, cols):
    """Encode the grid shortest path of :class:`ShortestPath` for :func:`solve_min`.

    Edge order as ``ShortestPath``: east edges row by row from the south-west
    corner, then north edges. Ties arrive from the west. ``ints = [rows,
    cols]``; ``work`` holds one distance per column, ``iwork`` one "from the
    west" flag per node.
    """
    n_edges = rows * (cols - 1) + (rows - 1) * cols
    return CompiledOracle(KIND_GRID, np.array([rows, cols], dtype=np.int64), np.zeros(0),
                          cols, rows * cols, float(n_edges + rows * cols) * 0.5)


@jit
def _grid_min(ints, c, w, work, iwork):
    rows = ints[0]
    cols = ints[1]
    n_east = rows * (cols - 1)
    dist = work
    want_w = w.shape[0] > 0
    # Row 0: only from the west.
    dist[0] = 0.0
    for col in range(1, cols):
        dist[col] = dist[col - 1] + c[col - 1]
        if want_w:
            iwork[col] = 1
    for r in range(1, rows):
        north = n_east + (r - 1) * cols
        east = r * (cols - 1)
        dist[0] = dist[0] + c[north]
        if want_w:
            iwork[r * cols] = 0
        for col in range(1, cols):
            west = dist[col - 1] + c[east + col - 1]
            south = dist[col] + c[north + col]
            if west <= south:
                dist[col] = west
                if want_w:
                    iwork[r * cols + col] = 1
            else:
                dist[col] = south
                if want_w:
                    iwork[r * cols + col] = 0
    if want_w:
        for e in range(w.shape[0]):
            w[e] = 0.0
        r = rows - 1
        col = cols - 1
        while r > 0 or col > 0:
            if iwork[r * cols + col] == 1:
                w[r * (cols - 1) + col - 1] = 1.0
                col -= 1
            else:
                w[n_east + (r - 1) * cols + col] = 1.0
                r -= 1
    return dist[cols - 1]


# -------------------------------------------------------------- knapsack
def knapsack_dp_oracle(weights, capacity):
    """Encode a one-resource 0/1 knapsack with integer weights for :func:`solve_min`.

    Parameters
    ----------
    weights : ndarray of int64 of shape (n_items,)
        Non-negative integer weights.
    capacity : int
        Non-negative integer capacity.

    The minimization-sense solver takes item ``j`` for value ``-c[j]``; items
    of value ``<= 0`` are never taken. Dynamic programming over the capacity,
    ``O(n_items * capacity)`` per solve.

    Ties: among the optimal subsets of positive-value items, the one whose
    vector read from the last item to the first, ``(w[n-1], ..., w[0])``, is
    lexicographically smallest: a later item is taken only when no optimal
    subset leaves it out (given the choices for the items after it).

    Layout of ``ints``: ``[n_items, capacity, weights (n_items)]``; ``floats``
    holds the weights again as floats, for the bounds' loops (without
    AVX-512 a conversion from int64 does not vectorize: a fifth to a quarter
    of the Lagrangian bounds' time on the ICON knapsack). ``work``
    holds the value table (capacity + 1; twice that for the value alone, see
    :func:`_knapsack_dp_value`); ``iwork`` the take flags
    (``n_items * (capacity + 1)``), used only when a decision is asked for.
    """
    weights = np.asarray(weights, dtype=np.int64)
    n = weights.shape[0]
    K = int(capacity)
    ints = np.concatenate([[n, K], weights]).astype(np.int64)
    # Scratch for _knapsack_dp_value_at too: |d_j| and its core's keys after
    # the two tables, its item list (n) and core (_CORE) in iwork.
    return CompiledOracle(KIND_KNAPSACK_DP, ints, weights.astype(np.float64),
                          2 * (K + 1) + n + _CORE,
                          max(n * (K + 1), n + _CORE),
                          float(n * (K + 1)))


@jit
def _knapsack_dp_min(ints, c, w, work, iwork):
    n = ints[0]
    K = ints[1]
    stride = K + 1
    if w.shape[0] == 0:
        return _knapsack_dp_value(ints, c, work)
    # The table alternates between the two halves of ``work`` as in
    # _knapsack_dp_value (the update vectorizes); an item's take flag at k is
    # the comparison the in-place descending table makes there, so the same
    # flags, value and decision to the last bit.
    a = work[:stride]
    b = work[stride:2 * stride]
    for k in range(stride):
        a[k] = 0.0
    cur = 0
    for j in range(n):
        v = -c[j]
        wj = ints[2 + j]
        flags = iwork[j * stride:(j + 1) * stride]
        if v <= 0.0 or wj > K:
            for k in range(stride):
                flags[k] = 0
            continue
        if cur == 0:
            _knapsack_dp_item_flags(a, b, v, wj, K, flags)
        else:
            _knapsack_dp_item_flags(b, a, v, wj, K, flags)
        cur ^= 1
    k = K
    for j in range(n - 1, -1, -1):
        if iwork[j * stride + k] == 1:
            w[j] = 1.0
            k -= ints[2 + j]
        else:
            w[j] = 0.0
    return -(b[K] if cur == 1 else a[K])


@jit
def _knapsack_dp_item_flags(a, b, v, wj, K, flags):
    """One item of the full table, ``b[k] = max(a[k], a[k - wj] + v)`` (``a``: before
    it), recording whether the item is taken at each k.

    Two buffers instead of the in-place descending update, written so that
    the loop has no dependence between iterations (numba vectorizes it):
    the same comparisons on the same numbers.
    """
    for k in range(wj):
        b[k] = a[k]
        flags[k] = 0
    aw = a[wj:]
    bw = b[wj:]
    fw = flags[wj:]
    for i in range(K + 1 - wj):
        x = a[i] + v
        y = aw[i]
        take = x > y
        bw[i] = x if take else y
        fw[i] = np.int64(take)


@jit
def _knapsack_dp_value(ints, c, work):
    """The value of :func:`_knapsack_dp_min` alone (the split search's case).

    The same table ``best[k]`` (the best value of weight at most k), each
    item reading the table before it from one half of ``work`` and writing
    the other (the update vectorizes), over the band of capacities that the
    value at K depends on: after the items taken so far (of positive value,
    fitting alone) weighing W and before the rest weighing R, only
    ``min(K, W + R) - R <= k <= min(K, W)``; every cell above W holds the same number
    (the sum of those items: all fit), so cells past ``min(K, W)`` are
    filled with it when an item reaches them. Each cell is computed as the
    full table computes it, so the same value to the last bit (tested
    against the table :func:`_knapsack_dp_min` fills), in about half the
    work on the ICON knapsack (48 items weighing twice the capacity 120).
    ``work`` holds ``2 (capacity + 1)`` floats.
    """
    n = ints[0]
    K = ints[1]
    total = 0
    for j in range(n):
        wj = ints[2 + j]
        total += wj if (-c[j] > 0.0) & (wj <= K) else 0
    # The cell read at the end: K, or the weight of all the items when less
    # (every cell above it holds the same number).
    top = min(K, total)
    a = work[:K + 1]
    b = work[K + 1:2 * K + 2]
    a[0] = 0.0
    hi = 0  # cells [lo, hi] of the current table hold its values
    done = 0  # weight of the items processed
    cur = 0
    for j in range(n):
        v = -c[j]
        wj = ints[2 + j]
        if not v > 0.0 or wj > K:
            continue
        done += wj
        lo_new = max(0, top - (total - done))
        hi_new = min(K, done)
        if cur == 0:
            _knapsack_dp_band(a, b, v, wj, hi, lo_new, hi_new)
        else:
            _knapsack_dp_band(b, a, v, wj, hi, lo_new, hi_new)
        hi = hi_new
        cur ^= 1
    return -(b[hi] if cur == 1 else a[hi])


@jit
def _knapsack_dp_band(a, b, v, wj, hi, lo_new, hi_new):
    """One item of :func:`_knapsack_dp_value`: ``b[k] = max(a[k], a[k - wj] + v)`` for
    ``lo_new <= k <= hi_new``, where ``a`` holds the table before the item on
    ``[., hi]`` and the same number as at ``hi`` above it."""
    top = a[hi]
    for k in range(hi + 1, hi_new + 1):
        a[k] = top
    for k in range(lo_new, min(wj, hi_new + 1)):
        b[k] = a[k]
    start = max(lo_new, wj)
    aw = a[start:hi_new + 1]
    ar = a[start - wj:hi_new + 1 - wj]
    bw = b[start:hi_new + 1]
    for i in range(hi_new + 1 - start):
        x = ar[i] + v
        y = aw[i]
        bw[i] = x if x > y else y


#: Items in the core of :func:`_knapsack_dp_value_at` (those of reduced value
#: nearest zero). On sums of ICON days (48 items) a core of 8 gave the
#: optimum as its lower bound in 498 of 500 cases, and 12 no more; with 6,
#: that bound fixed every item outside the core in 1,961 of 2,000 (the rest
#: run a second small DP), and cores of 4, 6 and 8 took about the same time.
_CORE = 6


@jit(_nrt=False, error_model="numpy")
def _knapsack_dp_value_at(ints, wf, c, work, iwork, r):
    """:func:`_knapsack_dp_value` given a multiplier ``r >= 0`` of the capacity
    row (the split search has the LP relaxation's, its critical ratio), by
    reduction to a few items.

    With reduced values ``d_j = v_j - r w_j`` (over the items of positive
    value that fit), ``U = r K + sum_j max(0, d_j)`` bounds the optimal value
    from above, for any ``r >= 0`` (Lagrangian relaxation), and ``U - |d_j|``
    bounds every solution that sets item j against the sign of ``d_j``.
    Given a feasible value ``lb``, an item with ``|d_j| > U - lb`` is so set
    in no optimal solution: it is fixed (taken when ``d_j > 0``), and the DP
    runs over the other items alone (the reduction of Dembo and Hammer, as
    in Martello and Toth's core algorithms). ``lb``: the best subset of the
    ``_CORE`` items of smallest ``|d_j|``, the others at their sign; when
    the bound fixes every item outside them, that is the optimum. On the
    ICON knapsack's children, at the critical ratio, it is in about 98% of
    cases, and the call takes about half the time of the banded DP over all
    48 items.

    The value is exact, summed in another order than the full DP's (it may
    differ in the last bits); a margin of 1e-9 of the magnitudes keeps the
    fixing safe from rounding. Falls back to :func:`_knapsack_dp_value` for
    ``r`` negative or NaN, few items, and when the fixed items do not fit
    (never at the critical ratio). ``wf``: the weights as floats (the
    oracle's ``floats``). ``work`` holds ``2 (K + 1) + n + _CORE`` floats,
    ``iwork`` ``n + _CORE`` ints.
    """
    n = ints[0]
    K = ints[1]
    if not r >= 0.0 or K <= 0 or n <= _CORE:
        return _knapsack_dp_value(ints, c, work)
    base = 2 * (K + 1)
    dabs = work[base:base + n]
    ckey = work[base + n:base + n + _CORE]
    cidx = iwork[n:n + _CORE]
    mark = iwork[:n]
    # Branch-free (it vectorizes): |d_j| (+inf for items never taken), U,
    # the items of positive d_j, the scale of the numbers.
    U = r * K
    mag = r * K
    W1 = 0
    V1 = 0.0
    for j in range(n):
        v = -c[j]
        wj = ints[2 + j]
        ok = (v > 0.0) & (wj <= K)
        d = v - r * wf[j]
        dabs[j] = abs(d) if ok else np.inf
        pos = ok & (d > 0.0)
        U += d if pos else 0.0
        V1 += v if pos else 0.0
        W1 += wj if pos else 0
        mag += (v + r * wf[j]) if ok else 0.0
        mark[j] = 0
    # The core: the _CORE smallest |d_j|, in ascending order.
    nc = 0
    lim = np.inf
    for j in range(n):
        a = dabs[j]
        if a < lim:
            k = nc if nc < _CORE else _CORE - 1
            while k > 0 and ckey[k - 1] > a:
                ckey[k] = ckey[k - 1]
                cidx[k] = cidx[k - 1]
                k -= 1
            ckey[k] = a
            cidx[k] = j
            if nc < _CORE:
                nc += 1
            if nc == _CORE:
                lim = ckey[_CORE - 1]
    # The lower bound: the core's best subset, the other items at their sign.
    Wc = 0
    cap = K - W1
    lb = V1
    for t in range(nc):
        j = cidx[t]
        mark[j] = 1
        wj = ints[2 + j]
        Wc += wj
        if -c[j] - r * wj > 0.0:
            cap += wj
            lb -= -c[j]
    if cap < 0:
        return _knapsack_dp_value(ints, c, work)
    lb += _small_dp(ints, c, cidx, nc, min(cap, Wc), work)
    # Items with |d_j| above the gap (less a margin for rounding) are fixed.
    gap = U - lb + 1e-9 * mag
    outside = 0
    for j in range(n):
        outside += 1 if (dabs[j] <= gap) & (mark[j] == 0) else 0
    if outside == 0:
        return -lb
    # Some item outside the core is free: the DP over every free item, the
    # fixed ones taken at their sign (free ones go to mark[:nf], each
    # written at or before the slot read).
    nf = 0
    cap = K
    val = 0.0
    Wf = 0
    for j in range(n):
        a = dabs[j]
        if a == np.inf:
            continue
        wj = ints[2 + j]
        if a > gap:
            if -c[j] - r * wj > 0.0:
                cap -= wj
                val += -c[j]
        else:
            mark[nf] = j
            nf += 1
            Wf += wj
    if cap < 0:
        return _knapsack_dp_value(ints, c, work)
    val += _small_dp(ints, c, mark, nf, min(cap, Wf), work)
    return -max(val, lb)


@jit(_nrt=False)
def _small_dp(ints, c, items, m, cap, work):
    """The best value of the items ``items[:m]`` within capacity ``cap``
    (in-place table in ``work[:cap + 1]``)."""
    tbl = work[:cap + 1]
    for k in range(cap + 1):
        tbl[k] = 0.0
    for t in range(m):
        j = items[t]
        v = -c[j]
        wj = ints[2 + j]
        for k in range(cap, wj - 1, -1):
            x = tbl[k - wj] + v
            if x > tbl[k]:
                tbl[k] = x
    return tbl[cap]


def knapsack_bb_oracle(weights, capacities, max_nodes):
    """Encode a multi-dimensional 0/1 knapsack for :func:`solve_min`.

    Parameters
    ----------
    weights : ndarray of float64 of shape (n_resources, n_items)
        Non-negative weights.
    capacities : ndarray of float64 of shape (n_resources,)
        Non-negative capacities.
    max_nodes : int
        Node limit of one solve; past it the solver returns NaN (the caller
        falls back to another solver).

    Depth-first branch and bound over the items of positive value (items of
    value ``<= 0`` are never taken), in decreasing order of value per unit of
    surrogate weight ``sum_r w[r, j] / capacities[r]``. The bound of a node is
    the LP relaxation (Dantzig bound) of the surrogate knapsack that adds up
    all resources so weighted, over the remaining items that fit every
    resource on their own; when every positive value is an integer the bound
    is rounded down. The first incumbent is the greedy solution in that
    order. Values are exact up to the rounding of floating-point sums.

    Ties: the first optimal subset met by the search (the greedy solution
    first, then depth-first with items taken before left out); deterministic
    for given data.

    Layout: ``ints = [n_items, n_resources, max_nodes]``; ``floats =
    [weights (row-major, n_resources * n_items), capacities, multipliers]``.
    """
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    capacities = np.asarray(capacities, dtype=np.float64)
    m, n = weights.shape
    mu = np.zeros(m)
    pos = capacities > 0
    mu[pos] = 1.0 / capacities[pos]
    ints = np.array([n, m, int(max_nodes)], dtype=np.int64)
    floats = np.concatenate([weights.ravel(), capacities, mu])
    work = 4 * n + (n + 1) * (m + 1) + 2
    iwork = 4 * n + 2
    # A rough count of the work of one solve, nodes times n * (m + 1). At 32
    # items and 2 resources (PyEPO's data), rows of PyEPO's integer values
    # take ~100 nodes, but the means of many rows (the children of a split:
    # near-equal values) take thousands, about 0.1 ms.
    return CompiledOracle(KIND_KNAPSACK_BB, ints, floats, work, iwork,
                          float(40 * n * n * (m + 1)))


@jit(inline="always")
def _surrogate_weight(floats, j, n, m, o_cap, o_mu):
    """``(fits, s)`` of item ``j`` of a multi-dimensional knapsack: whether it
    fits every capacity alone, and its weight in the surrogate constraint
    (the weights summed with the multipliers ``floats[o_mu:]``; 0 when it
    does not fit)."""
    s = 0.0
    for r in range(m):
        wr = floats[r * n + j]
        if wr > floats[o_cap + r]:
            return False, 0.0
        s += floats[o_mu + r] * wr
    return True, s


@jit
def _knapsack_bb_min(ints, floats, c, w, work, iwork):
    n = ints[0]
    m = ints[1]
    max_nodes = ints[2]
    o_cap = m * n
    o_mu = o_cap + m
    # work: vals (n) | surrogate weights (n) | ratios (n) | scratch (n) |
    #       value per depth (n + 1) | residuals per depth ((n + 1) * m)
    vals = work[0:n]
    sw = work[n:2 * n]
    ratio = work[2 * n:3 * n]
    o_V = 4 * n
    o_R = o_V + n + 1
    # iwork: order (n) | x per depth (n) | best set (n) | free items (n)
    order = iwork[0:n]
    x = iwork[n:2 * n]
    bestx = iwork[2 * n:3 * n]
    free = iwork[3 * n:4 * n]

    base = 0.0
    n_free = 0
    nc = 0
    integral = True
    for j in range(n):
        v = -c[j]
        if not v > 0.0:
            continue
        ok, s = _surrogate_weight(floats, j, n, m, o_cap, o_mu)
        if not ok:
            continue
        if integral and v != np.floor(v):
            integral = False
        if s == 0.0:
            # Weighs nothing on every resource it could use: always taken.
            free[n_free] = j
            n_free += 1
            base += v
            continue
        vals[j] = v
        sw[j] = s
        ratio[j] = v / s
        # Insertion sort: ratio decreasing, then index increasing.
        t = nc
        while t > 0:
            i = order[t - 1]
            if ratio[i] > ratio[j] or (ratio[i] == ratio[j] and i < j):
                break
            order[t] = i
            t -= 1
        order[t] = j
        nc += 1

    # Greedy incumbent in ratio order.
    for r in range(m):
        work[o_R + r] = floats[o_cap + r]
    best = 0.0
    for t in range(nc):
        j = order[t]
        ok = True
        for r in range(m):
            if floats[r * n + j] > work[o_R + r]:
                ok = False
                break
        bestx[t] = 1 if ok else 0
        if ok:
            best += vals[j]
            for r in range(m):
                work[o_R + r] -= floats[r * n + j]

    # Depth-first search. Level k decides item order[k]; x[k] is 1 while its
    # take branch is open and -1 once only the leave-out branch remains.
    work[o_V] = 0.0
    for r in range(m):
        work[o_R + r] = floats[o_cap + r]
    k = 0
    down = True
    nodes = 0
    while True:
        if down:
            nodes += 1
            if nodes > max_nodes:
                return np.nan
            V = work[o_V + k]
            oR = o_R + k * m
            if V > best:
                # The items taken so far are a feasible subset.
                best = V
                for t in range(nc):
                    bestx[t] = 1 if t < k and x[t] == 1 else 0
            if k == nc:
                down = False
                continue
            # Dantzig bound of the surrogate knapsack over items k.. that fit.
            # It only grows along the loop, which stops as soon as the node
            # cannot be pruned. With integer values every subset has an
            # integer value: the bound is rounded down, with a margin for the
            # rounding of its own sums.
            S = 0.0
            for r in range(m):
                S += floats[o_mu + r] * work[oR + r]
            ub = V
            prune = True
            for t in range(k, nc):
                j = order[t]
                ok = True
                for r in range(m):
                    if floats[r * n + j] > work[oR + r]:
                        ok = False
                        break
                if not ok:
                    continue
                last = sw[j] > S
                if last:
                    ub += vals[j] * (S / sw[j])
                else:
                    S -= sw[j]
                    ub += vals[j]
                if integral:
                    beats = np.floor(ub + 1e-12 * ub + 1e-9) > best
                else:
                    beats = ub > best
                if beats:
                    prune = False
                    break
                if last:
                    break
            if prune:
                down = False
                continue
            j = order[k]
            ok = True
            for r in range(m):
                if floats[r * n + j] > work[oR + r]:
                    ok = False
                    break
            nR = oR + m
            if ok:
                x[k] = 1
                work[o_V + k + 1] = V + vals[j]
                for r in range(m):
                    work[nR + r] = work[oR + r] - floats[r * n + j]
            else:
                x[k] = -1
                work[o_V + k + 1] = V
                for r in range(m):
                    work[nR + r] = work[oR + r]
            k += 1
        else:
            k -= 1
            if k < 0:
                break
            if x[k] == 1:
                # Take branch done: now leave item order[k] out.
                x[k] = -1
                oR = o_R + k * m
                work[o_V + k + 1] = work[o_V + k]
                for r in range(m):
                    work[oR + m + r] = work[oR + r]
                k += 1
                down = True
    if w.shape[0] > 0:
        for j in range(n):
            w[j] = 0.0
        for t in range(n_free):
            w[free[t]] = 1.0
        for t in range(nc):
            if bestx[t] == 1:
                w[order[t]] = 1.0
    return -(base + best)


# ------------------------------------------------------------ assignment
def assignment_oracle(n_agents, n_tasks, allowed=None):
    """Encode a linear assignment problem (:class:`Assignment`) for :func:`solve_min`.

    Cost ``i * n_tasks + j`` is agent ``i`` doing task ``j``. The smaller
    side (the agents when ``n_agents <= n_tasks``, else the tasks) is the
    side every member of which is matched; ``allowed`` (bool, shape
    ``(n_agents, n_tasks)``, or None) marks the pairs that may be chosen and
    must leave a feasible assignment (``Assignment`` checks it).

    Shortest augmenting paths with potentials (the Hungarian method in
    Jonker and Volgenant's form, as Crouse's variant that scipy's
    ``linear_sum_assignment`` runs), ``O(k^2 K)`` for ``k <= K`` the two
    sides.

    Ties: the lexicographically first optimal assignment, reading the
    columns of rows 0, 1, ... (rows: the side matched in full), which is
    the first optimal one in :meth:`Assignment.vertices`'s order. When a
    decision is asked for, the optimum found is moved to it along cycles of
    pairs of zero reduced cost (:func:`_assignment_lex_first`), another
    ``O(k^2 K)`` at most, little when few pairs are tight. Exact when the
    costs' sums are exact in floating point (integers, or multiples of one
    power of two, of moderate size); otherwise rounding decides near-ties.

    Layout of ``ints``: ``[n_agents, n_tasks, has_mask, mask (n_agents *
    n_tasks, 0/1, only with has_mask)]``. ``work`` holds the potentials and
    the path lengths, ``iwork`` the matching, the path, the visited flags
    and the columns left to scan (then the tie-break's search).
    """
    mask = np.zeros(0, dtype=np.int64) if allowed is None else (
        np.asarray(allowed, dtype=bool).reshape(-1).astype(np.int64))
    ints = np.concatenate([[n_agents, n_tasks, int(allowed is not None)], mask]).astype(
        np.int64)
    k, big = sorted((n_agents, n_tasks))
    # Cost: k * k * big steps of a few operations each. A tree fit of 2000
    # rows took the vertex path 31 ms and this solver 87 ms at 3x7 (210
    # assignments), 108 vs 88 ms at 6x6 (720), 244 vs 83 ms at 4x8 (1680):
    # the factor 4 keeps the vertex path wherever it was clearly faster.
    return CompiledOracle(KIND_ASSIGNMENT, ints, np.zeros(0), k + 2 * big, 4 * big + 2 * k,
                          float(4 * k * k * big + n_agents * n_tasks))


@jit
def _assignment_min(ints, c, w, work, iwork):
    n = ints[0]
    m = ints[1]
    masked = ints[2] == 1
    # Rows are the side matched in full; columns the other. Cost (r, col) is
    # c[r * rs + col * cs]: c[r * m + col], or c[col * m + r] when the tasks
    # are the rows.
    if n > m:
        k, big, rs, cs = m, n, 1, m
    else:
        k, big, rs, cs = n, m, m, 1
    u = work[:k]
    v = work[k:k + big]
    dist = work[k + big:k + 2 * big]
    row_of = iwork[:big]                     # row matched to each column, -1 for none
    col_of = iwork[big:big + k]              # column matched to each row
    pred = iwork[big + k:2 * big + k]        # row the path reaches each column from
    seen_col = iwork[2 * big + k:3 * big + k]
    todo = iwork[3 * big + k:4 * big + k]
    seen_row = iwork[4 * big + k:4 * big + 2 * k]
    for r in range(k):
        u[r] = 0.0
        col_of[r] = -1
    for j in range(big):
        v[j] = 0.0
        row_of[j] = -1
    inf = np.inf
    # Shortest augmenting paths (Crouse's form of Jonker and Volgenant, as in
    # scipy): a Dijkstra search from each new row over the reduced costs,
    # scanning only the columns not reached yet.
    for cur in range(k):
        for r in range(k):
            seen_row[r] = 0
        for j in range(big):
            seen_col[j] = 0
            dist[j] = inf
            todo[j] = j
        left = big
        reached = 0.0
        i = cur
        sink = -1
        while sink < 0:
            seen_row[i] = 1
            lowest = inf
            pick = -1
            ui = u[i]
            for t in range(left):
                j = todo[t]
                e = i * rs + j * cs
                if not masked or ints[3 + e] == 1:
                    d = reached + c[e] - ui - v[j]
                    if d < dist[j]:
                        pred[j] = i
                        dist[j] = d
                # On a tie, an unmatched column ends the path now: with many
                # ties (integer costs) several times fewer steps.
                if dist[j] < lowest or (dist[j] == lowest and row_of[j] < 0):
                    lowest = dist[j]
                    pick = t
            if lowest == inf:
                # No augmenting path: the mask leaves no feasible assignment
                # (Assignment refuses such a mask; a defence, not a path).
                return np.nan
            reached = lowest
            j = todo[pick]
            seen_col[j] = 1
            left -= 1
            todo[pick] = todo[left]
            if row_of[j] < 0:
                sink = j
            else:
                i = row_of[j]
        u[cur] += reached
        for r in range(k):
            if seen_row[r] == 1 and r != cur:
                u[r] += reached - dist[col_of[r]]
        for j in range(big):
            if seen_col[j] == 1:
                v[j] -= reached - dist[j]
        j = sink
        while True:
            r = pred[j]
            row_of[j] = r
            nj = col_of[r]
            col_of[r] = j
            if r == cur:
                break
            j = nj
    want_w = w.shape[0] > 0
    if want_w:
        # The value does not depend on which optimum; the decision does, and
        # it must not depend on the method (the vertex list's order).
        _assignment_lex_first(ints, c, u, v, iwork, k, big, rs, cs, masked)
        for q in range(w.shape[0]):
            w[q] = 0.0
    total = 0.0
    for r in range(k):
        e = r * rs + col_of[r] * cs
        total += c[e]
        if want_w:
            w[e] = 1.0
    return total


@jit
def _assignment_lex_first(ints, c, u, v, iwork, k, big, rs, cs, masked):
    """Move an optimal matching to the lexicographically first optimal one.

    ``u``, ``v`` are optimal potentials: ``c - u - v >= 0`` on every allowed
    pair, 0 on the matched ones, ``v <= 0``, and ``v = 0`` on the unmatched
    columns. A matching is optimal exactly when it uses pairs of zero
    reduced cost ("tight") and leaves only columns with ``v = 0`` unmatched.
    Phantom rows, one per unmatched column and tight to every column with
    ``v = 0``, make the matching perfect; two optimal matchings then differ
    by cycles of tight pairs. Row by row, with the rows before it fixed, row
    ``i`` takes its smallest tight column from which a chain of tight moves
    (the owner of a column moves to another column) ends at ``i``'s own
    column; a breadth-first search backwards from that column finds them.

    ``iwork`` is :func:`_assignment_min`'s: the matching (``row_of``,
    ``col_of``), then scratch.
    """
    row_of = iwork[:big]
    col_of = iwork[big:big + k]
    nxt = iwork[big + k:2 * big + k]         # the column a column's owner moves to
    good = iwork[2 * big + k:3 * big + k]    # 1: a chain from this column ends at ci
    queue = iwork[3 * big + k:4 * big + k]
    for i in range(k):
        ci = col_of[i]
        # The smallest tight column below ci that no earlier (fixed) row holds.
        first = -1
        for j in range(ci):
            e = i * rs + j * cs
            if ((row_of[j] < 0 or row_of[j] > i) and (not masked or ints[3 + e] == 1)
                    and c[e] - u[i] - v[j] <= 0.0):
                first = j
                break
        if first < 0:
            continue
        for j in range(big):
            good[j] = 0
        good[ci] = 1
        queue[0] = ci
        head = 0
        tail = 1
        best = ci
        phantoms = False
        while head < tail and best != first:
            g = queue[head]
            head += 1
            # Columns whose owner may move to g: when g may be left
            # unmatched (v = 0), every unmatched one (its phantom moves);
            # a later row's, if tight to g. Each is a candidate for row i.
            if not phantoms and v[g] >= 0.0:
                phantoms = True
                for j in range(big):
                    if row_of[j] < 0 and good[j] == 0:
                        good[j] = 1
                        nxt[j] = g
                        queue[tail] = j
                        tail += 1
                        e = i * rs + j * cs
                        if (j < best and (not masked or ints[3 + e] == 1)
                                and c[e] - u[i] - v[j] <= 0.0):
                            best = j
            for r in range(i + 1, k):
                j = col_of[r]
                e = r * rs + g * cs
                if (good[j] == 0 and (not masked or ints[3 + e] == 1)
                        and c[e] - u[r] - v[g] <= 0.0):
                    good[j] = 1
                    nxt[j] = g
                    queue[tail] = j
                    tail += 1
                    e = i * rs + j * cs
                    if (j < best and (not masked or ints[3 + e] == 1)
                            and c[e] - u[i] - v[j] <= 0.0):
                        best = j
        if best == ci:
            continue
        # Row i takes best; each displaced owner moves on to nxt[] until one
        # takes ci (a phantom's move leaves its target unmatched).
        mover = i
        j = best
        while True:
            old = row_of[j]
            row_of[j] = mover
            if mover >= 0:
                col_of[mover] = j
            if j == ci:
                break
            mover = old
            j = nxt[j]


# ------------------------------------------------------------- dispatch
@jit
def solve_min(kind, ints, floats, c, w, work, iwork):
    """``min_{w in S} c^T w`` for one cost vector ``c`` (minimization sense).

    Writes the minimizer to ``w`` unless ``w.shape[0] == 0``.
    """
    if kind == KIND_GRID:
        return _grid_min(ints, c, w, work, iwork)
    if kind == KIND_DAG:
        return _dag_min(ints, c, w, work, iwork)
    if kind == KIND_KNAPSACK_DP:
        return _knapsack_dp_min(ints, c, w, work, iwork)
    if kind == KIND_KNAPSACK_BB:
        return _knapsack_bb_min(ints, floats, c, w, work, iwork)
    if kind == KIND_LABEL_SETTING:
        return _label_setting_min(ints, c, w, work, iwork)
    if kind == KIND_ASSIGNMENT:
        return _assignment_min(ints, c, w, work, iwork)
    return np.nan


@jit
def solve_batch(kind, ints, floats, C, W, work, iwork):
    """Solve every row of ``C`` (minimization sense) into ``W``; returns the values."""
    m = C.shape[0]
    z = np.empty(m)
    for i in range(m):
        z[i] = solve_min(kind, ints, floats, C[i], W[i], work, iwork)
    return z


# ------------------------------------------------ solvers as functions
#: Type of every kind's solver as a first-class function:
#: ``solve(ints, floats, c, w, work, iwork) -> min_{w in S} c^T w``, the
#: contract of :func:`solve_min`. Kernels that receive a solver this way are
#: compiled once for all kinds (:func:`solve_batch_with`; the tree's growth
#: machine once per family of kinds, see ``tree._kernels.Solver``), and only
#: the kinds a process uses compile.
SOLVER_SIGNATURE = types.float64(types.int64[::1], types.float64[::1], types.float64[::1],
                                 types.float64[::1], types.float64[::1], types.int64[::1])


def _grid_solver(ints, floats, c, w, work, iwork):
    return _grid_min(ints, c, w, work, iwork)


def _dag_solver(ints, floats, c, w, work, iwork):
    return _dag_min(ints, c, w, work, iwork)


def _knapsack_dp_solver(ints, floats, c, w, work, iwork):
    return _knapsack_dp_min(ints, c, w, work, iwork)


def _knapsack_bb_solver(ints, floats, c, w, work, iwork):
    return _knapsack_bb_min(ints, floats, c, w, work, iwork)


def _label_setting_solver(ints, floats, c, w, work, iwork):
    return _label_setting_min(ints, c, w, work, iwork)


def _assignment_solver(ints, floats, c, w, work, iwork):
    return _assignment_min(ints, c, w, work, iwork)


# A new kind is listed here as well as in solve_min.
_SOLVERS = {KIND_GRID: _grid_solver, KIND_DAG: _dag_solver,
            KIND_KNAPSACK_DP: _knapsack_dp_solver, KIND_KNAPSACK_BB: _knapsack_bb_solver,
            KIND_LABEL_SETTING: _label_setting_solver, KIND_ASSIGNMENT: _assignment_solver}
_FUNCTIONS = {}
_FUNCTIONS_LOCK = threading.Lock()


def solver_function(kind):
    """The solver of ``kind`` as a compiled first-class function (``SOLVER_SIGNATURE``).

    Compiled (or read from the kernel cache) on first request, once per
    process.
    """
    if kind not in _SOLVERS:
        raise ValueError(f"no compiled solver of kind {kind!r}")
    with _FUNCTIONS_LOCK:
        fn = _FUNCTIONS.get(kind)
        if fn is None:
            fn = cfunc(SOLVER_SIGNATURE, _SOLVERS[kind])
            _FUNCTIONS[kind] = fn
        return fn


@jit
def solve_batch_with(solve, ints, floats, C, W, work, iwork):
    """:func:`solve_batch` with the solver given as a function (:func:`solver_function`)."""
    m = C.shape[0]
    z = np.empty(m)
    for i in range(m):
        z[i] = solve(ints, floats, C[i], W[i], work, iwork)
    return z


#: (solver kind, number of costs) -> the chunk size (rows) the last
#: :func:`solve_rows` call measured as taking about its ``seconds``.
_FIRST_STEP = {}


#: Threads that :func:`solve_rows` may split a batch over, set for a block of
#: code by :func:`solve_threads` (a context variable: threads started inside
#: that block, such as a forest's workers, see the default of 1).
_SOLVE_THREADS = contextvars.ContextVar("spotree_solve_threads", default=1)

#: Least expected solve time (s) per part: handing a part to a thread costs
#: ~0.1-0.2 ms (most of it numba typing the call's arguments, under the GIL).
#: On 2 cores the ICON knapsack's 650 rows (1.6 ms on one thread) took 1.0 ms
#: on two, and SPOBoost's fit there 10-13% less time; the LA network's 1000
#: rows (0.5 ms) split in two made its fit 9% slower, and stay whole here.
MIN_PART_SECONDS = 2.5e-4

#: (solver kind, number of costs) -> the last measured time per row (s).
_PER_ROW = {}

_POOL = None
_POOL_LOCK = threading.Lock()


@contextmanager
def solve_threads(n):
    """Let :func:`solve_rows` split batches over up to ``n`` threads in this block.

    The compiled solvers release the GIL, and every row is solved on its
    own, so the results do not depend on ``n``. SPOBoost uses it around its
    fit, whose oracle calls (subgradients, line searches, scores) run one
    after another on the calling thread.
    """
    token = _SOLVE_THREADS.set(max(1, int(n)))
    try:
        yield
    finally:
        _SOLVE_THREADS.reset(token)


def _cores():
    """The cores this process may run on (its affinity where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _pool():
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=max(1, _cores() - 1),
                                       thread_name_prefix="spotree-solve")
        return _POOL


def _forget_pool():
    # A forked child has the pool's object but none of its threads: work
    # given to it would wait forever. The child starts its own when needed.
    global _POOL, _POOL_LOCK
    _POOL = None
    _POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def solve_rows(oracle, Cm, W, seconds=0.05):
    """:func:`solve_batch` over the rows of ``Cm`` in chunks of about ``seconds`` each.

    Between chunks control returns to Python, so that Ctrl-C is seen quickly
    whatever the time of one solve; the chunk size adapts to the measured
    time per row, starting from the size the last call on a problem of the
    same kind and size measured. Inside :func:`solve_threads`, a batch of
    enough rows is split into contiguous parts solved on that many threads
    (the calling one included). Returns the values (NaN where the solver
    gave up).
    """
    m = Cm.shape[0]
    z = np.empty(m)
    solve = solver_function(oracle.kind)
    # The function type takes contiguous, writable rows (numba types a
    # read-only array apart: a cost matrix loaded with mmap_mode="r" or made
    # by np.broadcast_to raised a typing error).
    Cm = np.ascontiguousarray(Cm, dtype=np.float64)
    if not Cm.flags.writeable:
        Cm = Cm.copy()
    out = W
    if not (W.flags.c_contiguous and W.dtype == np.float64):
        out = np.array(W, dtype=np.float64, order="C")
    parts = _SOLVE_THREADS.get()
    if parts > 1:
        # As many parts as the expected time allows (none before a first
        # measurement on a problem of this kind and size), and no more than
        # the cores the process may use (BLAS may count every core of the
        # machine where taskset allows two).
        key = (oracle.kind, Cm.shape[1], oracle.work_size, oracle.iwork_size)
        parts = min(parts, _cores(), int(m * _PER_ROW.get(key, 0.0) / MIN_PART_SECONDS))
    if parts > 1:
        bounds = np.linspace(0, m, parts + 1).astype(np.int64)
        stop = threading.Event()
        futures = [_pool().submit(_solve_part, solve, oracle, Cm, out, z, int(bounds[k]),
                                  int(bounds[k + 1]), seconds, stop)
                   for k in range(1, parts)]
        try:
            _solve_part(solve, oracle, Cm, out, z, 0, int(bounds[1]), seconds, stop)
            for f in futures:
                f.result()
        except BaseException:
            # Ctrl-C here or an error in any part: the other parts stop at
            # their next chunk, and nothing writes to the arrays after this
            # returns.
            stop.set()
            for f in futures:
                f.exception()
            raise
    else:
        _solve_part(solve, oracle, Cm, out, z, 0, m, seconds, None)
    if out is not W:
        W[...] = out
    return z


def _solve_part(solve, oracle, Cm, out, z, s, m, seconds, stop):
    """Rows ``s:m`` of :func:`solve_rows`, in chunks timed as described there."""
    work = np.empty(oracle.work_size)
    iwork = np.empty(oracle.iwork_size, dtype=np.int64)
    # The first chunk's size comes from the last call on a problem of this
    # kind and size: each call of solve_batch_with costs ~0.1 ms in numba's
    # typing of the function argument, which a cold start (1 row, then
    # doubling) paid ~6 times per call; SPOBoost's SPO+ start and line
    # searches call this hundreds of times per fit.
    key = (oracle.kind, Cm.shape[1], oracle.work_size, oracle.iwork_size)
    step = _FIRST_STEP.get(key, 1)
    while s < m:
        if stop is not None and stop.is_set():
            return
        t0 = time.perf_counter()
        e = min(m, s + step)
        z[s:e] = solve_batch_with(solve, oracle.ints, oracle.floats, Cm[s:e], out[s:e],
                                  work, iwork)
        per_row = (time.perf_counter() - t0) / (e - s)
        _PER_ROW[key] = per_row
        fit = int(min(max(1, seconds / max(per_row, 1e-9)), 1 << 16))
        # A chunk grows at most 2x + 1 over the last one (a first timing can
        # be an outlier), but the remembered size is the one the time allows.
        _FIRST_STEP[key] = fit
        step = min(fit, 2 * step + 1)
        s = e


# ---------------------------------------------------------- lower bounds
# A lower bound on ``min_{w in S} c^T w`` (minimization sense) that costs far
# less than a solve. The split search uses it to rule out candidate splits
# that cannot beat the best one found so far without solving them. Knapsacks
# have one (the LP relaxation's value by Dantzig's greedy rule); for the
# path kinds a solve is already about as cheap as a bound, and the bound is
# -inf (no information).
@jit
def _ratio_before(c, sw, i, j):
    """Item i before item j: larger value per unit of weight, then lower index."""
    lhs = -c[i] * sw[j]
    rhs = -c[j] * sw[i]
    return lhs > rhs or (lhs == rhs and i < j)


@jit
def _dantzig(c, sw, cap, heap, n_heap, base):
    """The fractional knapsack over the items in ``heap[:n_heap]``: ``(bound, lam)``.

    Items of positive value and positive weight ``sw``; taken in decreasing
    order of value per weight (a binary heap built in place, popped until the
    capacity is used up, ``O(n + k log n)`` for k items taken), the last one
    fractionally. Returns the minimization-sense bound ``-(base + value)`` and
    the value per weight ``lam`` of the item taken fractionally (0 when all
    fit): the optimal multiplier of the capacity row.
    """
    # Heapify (sift down from the last parent).
    for start in range(n_heap // 2 - 1, -1, -1):
        i = start
        item = heap[i]
        while True:
            ch = 2 * i + 1
            if ch >= n_heap:
                break
            if ch + 1 < n_heap and _ratio_before(c, sw, heap[ch + 1], heap[ch]):
                ch += 1
            if _ratio_before(c, sw, heap[ch], item):
                heap[i] = heap[ch]
                i = ch
            else:
                break
        heap[i] = item
    value = base
    left = cap
    lam = 0.0
    while n_heap > 0:
        j = heap[0]
        if sw[j] >= left:
            value += -c[j] * (left / sw[j])
            lam = -c[j] / sw[j]
            break
        value += -c[j]
        left -= sw[j]
        n_heap -= 1
        if n_heap == 0:
            break
        item = heap[n_heap]
        i = 0
        while True:
            ch = 2 * i + 1
            if ch >= n_heap:
                break
            if ch + 1 < n_heap and _ratio_before(c, sw, heap[ch + 1], heap[ch]):
                ch += 1
            if _ratio_before(c, sw, heap[ch], item):
                heap[i] = heap[ch]
                i = ch
            else:
                break
        heap[i] = item
    return -value, lam


@jit
def _knapsack_dp_bound(ints, c, work, iwork):
    """LP-relaxation bound of the one-resource knapsack (items that fit, positive value)."""
    n = ints[0]
    K = ints[1]
    sw = ints[2:2 + n]
    heap = iwork
    n_heap = 0
    base = 0.0
    for j in range(n):
        v = -c[j]
        wj = ints[2 + j]
        if not v > 0.0 or wj > K:
            continue
        if wj == 0:
            base += v
            continue
        heap[n_heap] = j
        n_heap += 1
    return _dantzig(c, sw, float(K), heap, n_heap, base)


@jit
def _knapsack_bb_bound(ints, floats, c, work, iwork):
    """LP-relaxation bound of the surrogate knapsack that the branch and bound uses."""
    n = ints[0]
    m = ints[1]
    o_cap = m * n
    o_mu = o_cap + m
    sw = work[:n]
    heap = iwork
    cap = 0.0
    for r in range(m):
        cap += floats[o_mu + r] * floats[o_cap + r]
    n_heap = 0
    base = 0.0
    for j in range(n):
        v = -c[j]
        if not v > 0.0:
            continue
        ok, s = _surrogate_weight(floats, j, n, m, o_cap, o_mu)
        if not ok:
            continue
        if s == 0.0:
            base += v
            continue
        sw[j] = s
        heap[n_heap] = j
        n_heap += 1
    return _dantzig(c, sw, cap, heap, n_heap, base)


@jit
def relaxation_min(kind, ints, floats, c, work, iwork):
    """``(bound, lam)``: a lower bound on :func:`solve_min`'s value for ``c``
    (``-inf``: none) and the multiplier of the capacity row (0: none).

    Valid up to the rounding of floating-point sums (callers leave a margin):
    for the knapsack kinds the LP relaxation's value (of the surrogate
    knapsack for several resources), ``O(n)`` plus ``O(log n)`` per item
    taken, and its optimal multiplier, with which
    :func:`lagrangian_bound_min` is exact at ``c``; ``-inf`` for the path
    kinds. Uses the same scratch buffers as the solve.
    """
    if kind == KIND_KNAPSACK_DP:
        return _knapsack_dp_bound(ints, c, work, iwork)
    if kind == KIND_KNAPSACK_BB:
        return _knapsack_bb_bound(ints, floats, c, work, iwork)
    return -np.inf, 0.0


@jit(_nrt=False, error_model="numpy")
def _knapsack_dp_bound_warm(ints, wf, c, hint, key):
    """:func:`_knapsack_dp_bound` from the critical item of a previous call.

    The LP relaxation's value is ``L(r)`` with ``L(lam) = lam K + sum_j
    max(0, v_j - lam w_j)`` (over the items of positive value that fit) at
    the critical ratio ``r``: the largest value per weight ``r_j`` such that
    the items of ratio at least ``r_j`` weigh at least the capacity ``K``
    (``r = 0`` when all of them fit); ``L`` is convex with its minimum
    there, and ``r`` is Dantzig's multiplier. So no order of the items is
    needed, only that ratio: the split search asks for the relaxation of one
    child after another whose costs differ by a few rows, and the critical
    item mostly stays the same, so the ratio of the item in ``hint[0]`` (the
    last call's, updated here) is tried first, with one pass of integer sums
    (the loops here have no branches and vectorize: on ICON's 48 items a
    third of the time of sorting them for Dantzig's rule). Otherwise the
    ratio is bracketed and bisected, a pass per step. Ratios are compared as
    quotients (``key``, n slots of scratch; +inf for an item of zero weight),
    the value summed in another order than Dantzig's: callers leave a
    margin for rounding anyway. ``wf``: the weights as floats (the oracle's
    ``floats``).
    """
    n = ints[0]
    K = ints[1]
    W = 0
    for j in range(n):
        v = -c[j]
        wj = ints[2 + j]
        ok = (v > 0.0) & (wj <= K)
        # error_model="numpy": v / 0 is inf (the zero-weight items) or NaN
        # (not taken), without a branch.
        key[j] = v / wf[j] if ok else -np.inf
        W += wj if ok else 0
    if W < K or W == 0:
        # Every item fits: all taken, multiplier 0.
        r = 0.0
    else:
        r = _critical_ratio(ints, key, hint, n, K) if K > 0 else _max_finite(key, n)
    value = r * K
    for j in range(n):
        k = key[j]
        x = -c[j] - r * wf[j]
        value += x if k > r else 0.0
        hint[0] = j if k == r else hint[0]
    return -value, r


@jit(_nrt=False)
def _max_finite(key, n):
    """The largest finite entry of ``key[:n]`` (the critical ratio at capacity 0)."""
    r = -np.inf
    for j in range(n):
        k = key[j]
        if k < np.inf and k > r:
            r = k
    return r


@jit(_nrt=False)
def _critical_ratio(ints, key, hint, n, K):
    """The largest finite ``key[j]`` such that the items of key at least it weigh at
    least ``K > 0`` (see :func:`_knapsack_dp_bound_warm`; they weigh at least K
    together)."""
    j = hint[0]
    if 0 <= j < n and -np.inf < key[j] < np.inf:
        # Walk from the hint's ratio to the neighbouring ratios, a few steps.
        g = key[j]
        for _ in range(_WALK):
            above = 0
            at_least = 0
            for i in range(n):
                k = key[i]
                wi = ints[2 + i]
                above += wi if k > g else 0
                at_least += wi if k >= g else 0
            if at_least >= K and above < K:
                return g  # a ratio: at_least > above
            if at_least < K:
                nxt = -np.inf  # r < g: the largest ratio below g
                for i in range(n):
                    k = key[i]
                    nxt = k if (k < g) & (k > nxt) else nxt
            else:
                nxt = np.inf  # r > g: the smallest ratio above it
                for i in range(n):
                    k = key[i]
                    nxt = k if (k > g) & (k < nxt) else nxt
            g = nxt
    # Every ratio tested, the largest first (one vectorized pass each).
    best = -np.inf
    for j in range(n):
        kj = key[j]
        if not (best < kj < np.inf):
            continue
        at_least = 0
        for i in range(n):
            at_least += ints[2 + i] if key[i] >= kj else 0
        if at_least >= K:
            best = kj
    return best


#: Steps from the last critical ratio before every ratio is tested.
_WALK = 4


@jit
def relaxation_min_warm(kind, ints, floats, c, work, iwork, hint, key):
    """:func:`relaxation_min`, warm-started from ``hint[0]`` (an item index;
    any value is valid) for the one-resource knapsack (see
    :func:`_knapsack_dp_bound_warm`; ``key`` n slots of scratch); the other
    kinds ignore them."""
    if kind == KIND_KNAPSACK_DP:
        return _knapsack_dp_bound_warm(ints, floats, c, hint, key)
    return relaxation_min(kind, ints, floats, c, work, iwork)


@jit(_nrt=False, fastmath={"reassoc"})
def _dp_bounds(ints, wf, X, Y, cut, lam_l, lam_l2, lam_r, lam_r2):
    """The four bounds of the children ``bl = X`` and ``br = Y - X`` (``cut``) or
    ``br = Y``: see :func:`knapsack_dp_child_bounds`. ``cut`` is the same for
    every item, so the branch on it leaves the loop branch-free."""
    n = ints[0]
    K = ints[1]
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    s4 = 0.0
    margin = 0.0
    for j in range(n):
        fits = ints[2 + j] <= K
        w = wf[j]
        v = X[j]
        a = -v
        b = -(Y[j] - v) if cut else -Y[j]
        margin += abs(a) + abs(b)
        x1 = a - lam_l * w
        x2 = a - lam_l2 * w
        x3 = b - lam_r * w
        x4 = b - lam_r2 * w
        s1 += x1 if (fits and x1 > 0.0) else 0.0
        s2 += x2 if (fits and x2 > 0.0) else 0.0
        s3 += x3 if (fits and x3 > 0.0) else 0.0
        s4 += x4 if (fits and x4 > 0.0) else 0.0
    ll = max(-(lam_l * K + s1), -(lam_l2 * K + s2))
    lr = max(-(lam_r * K + s3), -(lam_r2 * K + s4))
    return ll, lr, margin


@jit(_nrt=False)
def knapsack_dp_child_bounds(ints, wf, bl, br, lam_l, lam_l2, lam_r, lam_r2):
    """:func:`lagrangian_bound_min` of two children of the one-resource knapsack, fused.

    Returns ``(max of the bounds of bl at lam_l and lam_l2, max of those of
    br at lam_r and lam_r2, sum of |bl| + |br|)`` from one pass over the
    items, written without branches so that it vectorizes: the split search
    asks for these four bounds at every candidate (five times faster than
    four calls on the ICON knapsack). The sums may be added in any order
    (``reassoc``): the same bounds up to rounding, which the caller's
    margin covers. ``wf``: the weights as floats (the oracle's ``floats``).
    """
    return _dp_bounds(ints, wf, bl, br, False, lam_l, lam_l2, lam_r, lam_r2)


@jit(_nrt=False)
def knapsack_dp_cut_bounds(ints, wf, SL, TS, lam_l, lam_l2, lam_r, lam_r2):
    """:func:`knapsack_dp_child_bounds` of the children ``bl = SL`` and ``br = TS - SL``.

    The split search's case: the right child's sum is formed item by item
    here instead of being written out first (most candidates stop at these
    bounds, and never need the children's sums).
    """
    return _dp_bounds(ints, wf, SL, TS, True, lam_l, lam_l2, lam_r, lam_r2)


@jit(inline="always")
def _lagrangian_dp(ints, c, lam):
    """:func:`lagrangian_bound_min` of the one-resource knapsack."""
    n = ints[0]
    K = ints[1]
    s = lam * K
    for j in range(n):
        wj = ints[2 + j]
        if wj > K:
            continue
        v = -c[j] - lam * wj
        if v > 0.0:
            s += v
    return -s


@jit(inline="always")
def _lagrangian_bb(ints, floats, c, lam):
    """:func:`lagrangian_bound_min` of the multi-dimensional knapsack (of its
    surrogate knapsack)."""
    n = ints[0]
    m = ints[1]
    o_cap = m * n
    o_mu = o_cap + m
    cap = 0.0
    for r in range(m):
        cap += floats[o_mu + r] * floats[o_cap + r]
    s = lam * cap
    for j in range(n):
        ok, sw = _surrogate_weight(floats, j, n, m, o_cap, o_mu)
        if not ok:
            continue
        v = -c[j] - lam * sw
        if v > 0.0:
            s += v
    return -s


@jit
def lagrangian_bound_min(kind, ints, floats, c, lam):
    """``-(lam * cap + sum_j max(0, v_j - lam * w_j))`` over the items that fit: a
    lower bound on :func:`solve_min`'s value for any ``lam >= 0`` (weak
    duality), in O(n); -inf for kinds without one. For several resources,
    of the surrogate knapsack (weights and capacity added up with the
    branch and bound's multipliers)."""
    if kind == KIND_KNAPSACK_DP:
        return _lagrangian_dp(ints, c, lam)
    if kind == KIND_KNAPSACK_BB:
        return _lagrangian_bb(ints, floats, c, lam)
    return -np.inf
