"""spotree: decision trees and forests trained to minimize the SPO loss.

Predict the unknown costs ``c`` of an optimization problem ``min_{w in S} c^T w``
with trees whose splits are chosen for the quality of the decisions they
induce, not for prediction error.
"""

from . import datasets, metrics, problems
from .problems import (CallableProblem, DecisionProblem, FiniteDecisions, Knapsack,
                       LinearProgram, ShortestPath)
from .tree import OptimalSPOTree, SPOTree, export_text, load
from .forest import SPOForest, tune_max_features
from .linear_model import SPOPlusLinear
from .boost import SPOBoost

__version__ = "0.1.0"

__all__ = [
    "CallableProblem",
    "DecisionProblem",
    "FiniteDecisions",
    "Knapsack",
    "LinearProgram",
    "OptimalSPOTree",
    "SPOBoost",
    "SPOForest",
    "SPOPlusLinear",
    "SPOTree",
    "ShortestPath",
    "export_text",
    "load",
    "tune_max_features",
    "datasets",
    "metrics",
    "problems",
]
