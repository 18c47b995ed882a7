"""Data generators of the paper's experiments, PyEPO's benchmarks and loaders of real data."""

from ._generators import make_illustrative, make_news, make_shortest_path
from ._pyepo import make_pyepo_knapsack, make_pyepo_shortest_path, pyepo_shortest_path_columns
from ._yahoo import load_yahoo_r6, read_yahoo_r6

__all__ = ["load_yahoo_r6", "make_illustrative", "make_news", "make_pyepo_knapsack",
           "make_pyepo_shortest_path", "make_shortest_path", "pyepo_shortest_path_columns",
           "read_yahoo_r6"]
