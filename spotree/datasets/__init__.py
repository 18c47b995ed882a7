"""Data generators of the paper's experiments, PyEPO's benchmarks and loaders of real data."""

from ._generators import make_illustrative, make_news, make_shortest_path
from ._icon_energy import ICON_ENERGY_CAPACITIES, load_icon_energy
from ._pyepo import (expected_ceil_uniform, make_pyepo_knapsack, make_pyepo_shortest_path,
                     pyepo_shortest_path_columns)
from ._yahoo import load_yahoo_r6, read_yahoo_r6

__all__ = ["ICON_ENERGY_CAPACITIES", "expected_ceil_uniform", "load_icon_energy",
           "load_yahoo_r6", "make_illustrative", "make_news", "make_pyepo_knapsack",
           "make_pyepo_shortest_path", "make_shortest_path", "pyepo_shortest_path_columns",
           "read_yahoo_r6"]
