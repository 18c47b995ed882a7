"""Shortest path on a grid with edges directed east and north (paper section 5.1)."""

from __future__ import annotations

from math import comb

import numpy as np

from ._base import DecisionProblem, _check_sense

__all__ = ["ShortestPath"]


class ShortestPath(DecisionProblem):
    """Shortest south-west to north-east path on a ``rows x cols`` grid.

    Edges point east and north only, so every path has ``rows + cols - 2``
    edges and there are ``comb(rows + cols - 2, rows - 1)`` paths (20 on the
    paper's 4x4 grid, which has 24 edges).

    **Edge order.** Nodes are numbered 1..rows*cols row by row, starting at the
    south-west corner. The cost vector lists first all east edges ``(i, i+1)``
    in increasing ``i``, then all north edges ``(i, i+cols)`` in increasing
    ``i``; this matches the paper's experiments.

    A batch is solved by one dynamic program vectorized over all rows (no
    per-row solver call). Ties: at each node the path arrives from the west
    whenever that is no worse than arriving from the south.

    Parameters
    ----------
    grid : tuple of int, default=(4, 4)
        ``(rows, cols)``, each at least 1 and not both 1.
    sense : {"min", "max"}, default="min"
        ``"max"`` finds the longest path (costs as rewards).

    Examples
    --------
    >>> import numpy as np
    >>> from spotree.problems import ShortestPath
    >>> sp = ShortestPath((4, 4))
    >>> sp.n_costs, len(sp.vertices())
    (24, 20)
    >>> W, z = sp.solve(np.ones((2, 24)))
    >>> z
    array([6., 6.])
    """

    def __init__(self, grid=(4, 4), sense="min"):
        try:
            rows, cols = grid
        except (TypeError, ValueError):
            raise ValueError(f"grid must be a pair of ints (rows, cols); got {grid!r}.") from None
        if not all(isinstance(g, (int, np.integer)) and not isinstance(g, bool)
                   for g in (rows, cols)):
            raise ValueError(f"grid must be a pair of ints (rows, cols); got {grid!r}.")
        rows, cols = int(rows), int(cols)
        if rows < 1 or cols < 1 or rows * cols < 2:
            raise ValueError(f"grid must have at least 1 row, 1 column and 2 nodes; got "
                             f"{grid!r}.")
        self.grid = (rows, cols)
        self.sense = _check_sense(sense)
        self.n_east = rows * (cols - 1)
        self.n_costs = self.n_east + (rows - 1) * cols

    # East edge leaving node (r, c) eastwards, north edge leaving it northwards,
    # with 0-based row r from the south and column c from the west.
    def _east(self, r, c):
        return r * (self.grid[1] - 1) + c

    def _north(self, r, c):
        return self.n_east + r * self.grid[1] + c

    def edges(self):
        """The edges as 1-based node pairs ``(i, j)``, in cost-vector order."""
        rows, cols = self.grid
        out = []
        for r in range(rows):
            for c in range(cols - 1):
                i = r * cols + c + 1
                out.append((i, i + 1))
        for r in range(rows - 1):
            for c in range(cols):
                i = r * cols + c + 1
                out.append((i, i + cols))
        return out

    def n_paths(self):
        """Number of monotone paths, ``comb(rows + cols - 2, rows - 1)``."""
        rows, cols = self.grid
        return comb(rows + cols - 2, rows - 1)

    def _solve(self, C):
        rows, cols = self.grid
        m = C.shape[0]
        # Work in the minimization sense; a longest path is a shortest path on -C.
        Cm = C if self.sense == "min" else -C
        dist = np.empty((rows, cols, m))
        from_west = np.zeros((rows, cols, m), dtype=bool)
        dist[0, 0] = 0.0
        for c in range(1, cols):
            dist[0, c] = dist[0, c - 1] + Cm[:, self._east(0, c - 1)]
            from_west[0, c] = True
        for r in range(1, rows):
            dist[r, 0] = dist[r - 1, 0] + Cm[:, self._north(r - 1, 0)]
            for c in range(1, cols):
                west = dist[r, c - 1] + Cm[:, self._east(r, c - 1)]
                south = dist[r - 1, c] + Cm[:, self._north(r - 1, c)]
                from_west[r, c] = west <= south
                dist[r, c] = np.where(from_west[r, c], west, south)
        # Walk back from the north-east corner, all rows of the batch at once.
        W = np.zeros((m, self.n_costs))
        rr = np.full(m, rows - 1)
        cc = np.full(m, cols - 1)
        ar = np.arange(m)
        for _ in range(rows + cols - 2):
            west = from_west[rr, cc, ar]
            edge = np.where(west, rr * (cols - 1) + cc - 1,
                            self.n_east + (rr - 1) * cols + cc)
            W[ar, edge] = 1.0
            cc = cc - west
            rr = rr - ~west
        z = dist[rows - 1, cols - 1]
        return W, (z if self.sense == "min" else -z)

    def _vertices(self):
        if self.n_paths() > self.max_vertices:
            return None
        rows, cols = self.grid
        paths = []

        def walk(r, c, used):
            if r == rows - 1 and c == cols - 1:
                paths.append(list(used))
                return
            if c < cols - 1:
                used.append(self._east(r, c))
                walk(r, c + 1, used)
                used.pop()
            if r < rows - 1:
                used.append(self._north(r, c))
                walk(r + 1, c, used)
                used.pop()

        walk(0, 0, [])
        V = np.zeros((len(paths), self.n_costs))
        for k, p in enumerate(paths):
            V[k, p] = 1.0
        return V

    def compiled_oracle(self):
        """The grid's dynamic program for the compiled split search.

        See :func:`spotree.problems._compiled.grid_oracle` (same edge order and
        tie rule as :meth:`solve`).
        """
        from ._compiled import grid_oracle

        return grid_oracle(*self.grid)

    def describe_decision(self, w):
        """Human-readable path, e.g. ``"1->2->6->..."`` for a decision vector."""
        edges = self.edges()
        used = [edges[k] for k in np.flatnonzero(np.asarray(w) > 0.5)]
        nxt = dict(used)
        node, seq = 1, [1]
        while node in nxt:
            node = nxt[node]
            seq.append(node)
        return "->".join(str(s) for s in seq)

    def to_dict(self):
        return {"type": "shortest_path", "grid": list(self.grid), "sense": self.sense}

    def __repr__(self):
        return f"ShortestPath(grid={self.grid}, sense={self.sense!r})"
