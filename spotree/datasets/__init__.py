"""Data generators of the paper's experiments and loaders of real data."""

from ._generators import make_illustrative, make_news, make_shortest_path

__all__ = ["make_illustrative", "make_news", "make_shortest_path"]
