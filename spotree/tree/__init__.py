"""SPO trees: greedy recursive partitioning, pruning, export, persistence."""

from ._classes import BaseSPOTree, SPOTree
from ._export import describe_decision, export_text
from ._export_graphviz import export_graphviz
from ._optimal import OptimalSPOTree
from ._persist import load, register_model
from ._tree import Tree

register_model(SPOTree)

__all__ = ["BaseSPOTree", "OptimalSPOTree", "SPOTree", "Tree", "describe_decision",
           "export_graphviz", "export_text", "load", "register_model"]
