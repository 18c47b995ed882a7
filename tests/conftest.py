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


def _realdata_dir():
    """``../shared/realdata`` beside the repository (as CI places it), or the folder
    named by SPOTREE_REALDATA (a worktree elsewhere); None when absent."""
    import os
    import pathlib

    env = os.environ.get("SPOTREE_REALDATA")
    path = (pathlib.Path(env) if env else
            pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "realdata")
    return path if path.is_dir() else None


@pytest.fixture
def icon_energy_file():
    """Path of the ICON energy knapsack's Data.npz; the test skips where it is absent."""
    root = _realdata_dir()
    path = None if root is None else root / "icon_energy_knapsack" / "Data.npz"
    if path is None or not path.is_file():
        pytest.skip("the ICON energy data (../shared/realdata/icon_energy_knapsack) is absent")
    return path
