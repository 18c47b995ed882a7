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
- ties are broken deterministically (documented per kind).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._numba import jit

__all__ = ["CompiledOracle", "KIND_DAG", "KIND_GRID", "solve_min", "solve_batch", "dag_oracle",
           "grid_oracle"]

#: Shortest path on a directed acyclic graph (``ShortestPath``, grids and
#: ``ShortestPath.from_edges``).
KIND_DAG = 1
#: Reserved for 0/1 knapsack kinds (``Knapsack``).
KIND_KNAPSACK_DP = 2
KIND_KNAPSACK_BB = 3
#: Shortest path on a ``rows x cols`` grid with east and north edges
#: (``ShortestPath(grid)``): the DAG dynamic program without index arrays.
KIND_GRID = 4


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


@jit
def _dag_min(ints, c, w, work, iwork):
    n = ints[0]
    E = ints[1]
    source = ints[2]
    target = ints[3]
    o_tail = 4
    o_order = o_tail + E
    o_ptr = o_order + n
    o_in = o_ptr + n + 1
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
    return np.nan


@jit
def solve_batch(kind, ints, floats, C, W, work, iwork):
    """Solve every row of ``C`` (minimization sense) into ``W``; returns the values."""
    m = C.shape[0]
    z = np.empty(m)
    for i in range(m):
        z[i] = solve_min(kind, ints, floats, C[i], W[i], work, iwork)
    return z
