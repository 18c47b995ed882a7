"""Decision problems as batch oracles.

Every problem solves ``min`` (or ``max``) of ``c^T w`` over its feasible set for
a whole matrix of cost vectors at once; see :class:`DecisionProblem`.
"""

from ._base import CallableProblem, DecisionProblem, FiniteDecisions
from ._io import problem_from_dict
from ._linear import LinearProgram
from ._news import news_recommendation
from ._shortest_path import ShortestPath
from ._spec import load_problem

__all__ = [
    "CallableProblem",
    "DecisionProblem",
    "FiniteDecisions",
    "LinearProgram",
    "ShortestPath",
    "load_problem",
    "news_recommendation",
    "problem_from_dict",
]
