"""Problem spec files: a decision problem described in JSON or YAML.

The schema is the one of :func:`spotree.problems.problem_from_dict` (a
``"type"`` key plus the constructor's arguments), with optional free-text
``"name"`` and ``"description"`` keys, and is validated there
(:func:`validate_problem_spec`, re-exported here). ``examples/README.md``
documents it with one example file per problem type.
"""

from __future__ import annotations

import json
import os

from ._io import DEFAULT_CHECK_TIME_LIMIT, problem_from_dict, validate_problem_spec

__all__ = ["load_problem", "validate_problem_spec"]


def _parse_text(text, path):
    ext = os.path.splitext(str(path))[1].lower()
    if ext in (".yaml", ".yml"):
        from .._compat import import_optional

        yaml = import_optional("yaml", purpose="reading a YAML problem spec")
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = getattr(exc, "problem", None) or "invalid syntax"
            raise ValueError(f"invalid YAML{where}: {problem}.") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: "
                         f"{exc.msg}.") from None
    except RecursionError:
        raise ValueError("invalid JSON: arrays or objects are nested too deeply.") from None


def load_problem(path, *, check_time_limit=DEFAULT_CHECK_TIME_LIMIT):
    """Read a decision problem from a JSON (``.json``) or YAML (``.yaml``) spec file.

    Parameters
    ----------
    path : str or path-like
        The spec file. YAML needs the ``spotree[yaml]`` extra (pyyaml).
    check_time_limit : float or None, default=5.0
        Seconds allowed for solver checks while building the problem (see
        :func:`~spotree.problems.problem_from_dict`); None for no limit.

    Returns
    -------
    DecisionProblem

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the file is not valid JSON/YAML or does not describe a feasible,
        bounded problem (or its checks exceed ``check_time_limit``); the
        one-line message starts with the path.

    Examples
    --------
    A spec file ``roads.json`` holding
    ``{"type": "finite", "decisions": [[1, 0], [0, 1]]}`` describes the
    paper's two-road problem::

        problem = load_problem("roads.json")
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"problem spec file not found: {path}")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (expected JSON or YAML).") from None
    try:
        return problem_from_dict(_parse_text(text, path), check_time_limit=check_time_limit)
    except (ValueError, TypeError) as exc:
        msg = " ".join(str(exc).split())  # one line, whatever the constructor said
        raise ValueError(f"{path}: {msg}") from None
