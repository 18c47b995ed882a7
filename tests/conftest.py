"""Helpers shared by test modules in different folders."""

import itertools

import numpy as np
import pytest


def _grid_paths(rows, cols):
    """Every south-west to north-east path of a grid as 0/1 edge vectors, listed here
    from scratch: east edges row by row from the south-west corner, then north edges
    (the edge order of ShortestPath and make_pyepo_shortest_path)."""
    n_east, out = (cols - 1) * rows, []
    for moves in set(itertools.permutations("E" * (cols - 1) + "N" * (rows - 1))):
        w, r, c = np.zeros(n_east + (rows - 1) * cols), 0, 0
        for m in moves:
            if m == "E":
                w[r * (cols - 1) + c], c = 1.0, c + 1
            else:
                w[n_east + r * cols + c], r = 1.0, r + 1
        out.append(w)
    return np.array(out)


@pytest.fixture
def grid_paths():
    """``grid_paths(rows, cols)``: the grid's paths, enumerated independently of spotree."""
    return _grid_paths
