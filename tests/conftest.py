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


def _deep_chain_model(depth):
    """A fitted SPOTree whose tree is a chain of ``depth`` splits on x0.

    Split k (node 2k) sends x0 <= k + 0.5 to a leaf (node 2k + 1) and the
    rest on (node 2k + 2); the last node is a leaf. Three training rows: the
    nodes below them are empty and copy their parent's prediction.
    """
    from spotree import SPOTree
    from spotree.problems import FiniteDecisions
    from spotree.tree._structure import tree_from_structure

    problem = FiniteDecisions(np.eye(2))
    X = np.array([[0.0], [1.0], [2.0]])
    C = np.array([[1.0, 2.0], [2.0, 1.0], [1.0, 3.0]])
    model = SPOTree(problem, max_depth=1).fit(X, C)
    n = 2 * depth + 1
    left = np.full(n, -1)
    right = np.full(n, -1)
    feat = np.full(n, -2)
    thr = np.full(n, -2.0)
    k = np.arange(depth)
    left[2 * k], right[2 * k], feat[2 * k], thr[2 * k] = 2 * k + 1, 2 * k + 2, 0, k + 0.5
    model.tree_ = tree_from_structure(left, right, feat, thr, X, C, None, problem)
    return model



@pytest.fixture
def deep_chain_model():
    """``deep_chain_model(depth)``: a fitted SPOTree whose tree is a chain of splits."""
    return _deep_chain_model
