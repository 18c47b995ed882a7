"""SPO trees: greedy recursive partitioning, pruning, export, persistence."""

from ._classes import BaseSPOTree, SPOTree
from ._export import describe_decision, export_text
from ._persist import load, register_model
from ._tree import Tree

register_model(SPOTree)

__all__ = ["BaseSPOTree", "SPOTree", "Tree", "describe_decision", "export_text", "load",
           "register_model"]
