"""spotree: decision trees and forests trained to minimize the SPO loss.

Predict the unknown costs ``c`` of an optimization problem ``min_{w in S} c^T w``
with trees whose splits are chosen for the quality of the decisions they
induce, not for prediction error.
"""

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

__all__ = [
    "Assignment",
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

# The public names load on first use (PEP 562): the estimators pull in
# scikit-learn, numba and scipy (~1.5 s), which `import spotree` and
# `spotree --help` should not pay for. Each name -> the submodule defining it.
_LAZY = {
    "Assignment": "problems",
    "CallableProblem": "problems",
    "DecisionProblem": "problems",
    "FiniteDecisions": "problems",
    "Knapsack": "problems",
    "LinearProgram": "problems",
    "ShortestPath": "problems",
    "OptimalSPOTree": "tree",
    "SPOTree": "tree",
    "export_text": "tree",
    "load": "tree",
    "SPOForest": "forest",
    "tune_max_features": "forest",
    "SPOPlusLinear": "linear_model",
    "SPOBoost": "boost",
}

# Submodules that `import spotree` used to bind as attributes; they load on first use too.
_SUBMODULES = ("boost", "datasets", "forest", "linear_model", "metrics", "problems", "tree")

if TYPE_CHECKING:  # what type checkers and IDEs see; tests/test_init.py keeps it in step
    from . import boost, datasets, forest, linear_model, metrics, problems, tree
    from .boost import SPOBoost
    from .forest import SPOForest, tune_max_features
    from .linear_model import SPOPlusLinear
    from .problems import (Assignment, CallableProblem, DecisionProblem, FiniteDecisions,
                           Knapsack, LinearProgram, ShortestPath)
    from .tree import OptimalSPOTree, SPOTree, export_text, load


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__():
    # The public names and submodules, loaded or not (and those loaded since,
    # e.g. spotree.experiments), and the module's dunders; not this file's
    # imports and helpers (importlib, TYPE_CHECKING, _LAZY) nor private modules.
    loaded = {n for n, v in globals().items()
              if not n.startswith("_") and getattr(v, "__name__", None) == f"{__name__}.{n}"}
    dunders = {n for n in globals() if n.startswith("__") and n.endswith("__")}
    return sorted(set(__all__) | set(_LAZY) | set(_SUBMODULES) | loaded | dunders)
