"""Data generators of the paper's experiments and loaders of real data."""

from ._generators import make_illustrative, make_news, make_shortest_path
from ._yahoo import load_yahoo_r6, read_yahoo_r6

__all__ = ["load_yahoo_r6", "make_illustrative", "make_news", "make_shortest_path",
           "read_yahoo_r6"]
