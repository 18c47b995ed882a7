"""Decision problems as batch oracles.

Every problem solves ``min`` (or ``max``) of ``c^T w`` over its feasible set for
a whole matrix of cost vectors at once; see :class:`DecisionProblem`.
"""

from ._assignment import Assignment
from ._base import (CallableProblem, DecisionProblem, FiniteDecisions, describe_not_a_problem,
                    resolve_problem)
from ._cvxpy import CVXPYProblem, from_cvxpy
from ._io import problem_from_dict
from ._knapsack import Knapsack
from ._linear import LinearProgram
from ._news import news_recommendation
from ._pyepo import PyEPOProblem, from_pyepo
from ._shortest_path import DAGShortestPath, ShortestPath
from ._spec import load_problem

__all__ = [
    "Assignment",
    "CVXPYProblem",
    "CallableProblem",
    "DAGShortestPath",
    "DecisionProblem",
    "FiniteDecisions",
    "Knapsack",
    "LinearProgram",
    "PyEPOProblem",
    "ShortestPath",
    "describe_not_a_problem",
    "from_cvxpy",
    "from_pyepo",
    "load_problem",
    "news_recommendation",
    "problem_from_dict",
]
