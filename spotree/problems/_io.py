"""Plain-JSON descriptions of decision problems (model files, CLI problem specs)."""

from __future__ import annotations

__all__ = ["problem_from_dict"]


def problem_from_dict(spec):
    """Build a decision problem from a JSON-ready dict.

    The schema has a ``"type"`` key and the constructor's arguments:

    - ``{"type": "shortest_path", "grid": [4, 4], "sense": "min"}``
    - ``{"type": "finite", "decisions": [[1, 0], [0, 1]], "sense": "min"}``
    - ``{"type": "linear_program", "A_ub": [[...]], "b_ub": [...], "A_eq": ...,
      "b_eq": ..., "bounds": [0, null], "integrality": null, "sense": "max"}``

    Parameters
    ----------
    spec : dict

    Returns
    -------
    DecisionProblem
    """
    from ._base import FiniteDecisions
    from ._shortest_path import ShortestPath

    if not isinstance(spec, dict):
        raise ValueError(f"a problem spec must be a JSON object; got {type(spec).__name__}.")
    kind = spec.get("type")
    args = {k: v for k, v in spec.items() if k != "type"}
    try:
        if kind == "shortest_path":
            return ShortestPath(**args)
        if kind == "finite":
            return FiniteDecisions(args.pop("decisions"), **args)
        if kind == "linear_program":
            from ._linear import LinearProgram

            return LinearProgram(**args)
    except KeyError as exc:
        raise ValueError(f"problem spec of type {kind!r} is missing the key {exc}.") from None
    except TypeError as exc:
        raise ValueError(f"problem spec of type {kind!r} has unexpected keys: {exc}.") from None
    raise ValueError(f"problem spec 'type' must be one of 'shortest_path', 'finite', "
                     f"'linear_program'; got {kind!r}.")
