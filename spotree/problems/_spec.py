"""Problem spec files: a decision problem described in JSON or YAML.

The schema is the one of :func:`spotree.problems.problem_from_dict` (a
``"type"`` key plus the constructor's arguments), with optional free-text
``"name"`` and ``"description"`` keys. ``examples/README.md`` documents it
with one example file per problem type.
"""

from __future__ import annotations

import json
import numbers
import os

import numpy as np

from ._io import problem_from_dict

__all__ = ["load_problem", "validate_problem_spec"]

_TYPES = {
    "shortest_path": {"grid", "sense"},
    "finite": {"decisions", "sense"},
    "linear_program": {"A_ub", "b_ub", "A_eq", "b_eq", "bounds", "integrality", "sense"},
}
_REQUIRED = {"shortest_path": set(), "finite": {"decisions"}, "linear_program": set()}
_INFO_KEYS = {"name", "description"}


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and np.isfinite(v)


def _matrix(spec, key):
    """Check that ``spec[key]`` is a non-empty rectangular list of finite numbers."""
    rows = spec[key]
    if (not isinstance(rows, list) or not rows
            or not all(isinstance(r, list) and r for r in rows)):
        raise ValueError(f"'{key}' must be a non-empty list of non-empty lists of numbers.")
    width = len(rows[0])
    for i, r in enumerate(rows):
        if len(r) != width:
            raise ValueError(f"'{key}' must be rectangular: row 0 has {width} entries but "
                             f"row {i} has {len(r)}.")
        for j, v in enumerate(r):
            if not _is_number(v):
                raise ValueError(f"'{key}'[{i}][{j}] must be a finite number; got {v!r}.")
    return len(rows), width


def _vector(spec, key, length):
    v = spec[key]
    if not isinstance(v, list) or not all(_is_number(x) for x in v):
        raise ValueError(f"'{key}' must be a list of finite numbers.")
    if len(v) != length:
        raise ValueError(f"'{key}' has {len(v)} entries but the constraint matrix has "
                         f"{length} rows.")


def validate_problem_spec(spec):
    """Check a problem spec dict and return it without its informational keys.

    Parameters
    ----------
    spec : dict

    Returns
    -------
    dict
        The spec with ``"name"`` and ``"description"`` removed, ready for
        :func:`problem_from_dict`.

    Raises
    ------
    ValueError
        With a one-line message naming the offending key.
    """
    if not isinstance(spec, dict):
        raise ValueError(f"a problem spec must be a mapping (JSON object); got "
                         f"{type(spec).__name__}.")
    kind = spec.get("type")
    if kind not in _TYPES:
        raise ValueError("'type' must be one of " + ", ".join(repr(t) for t in _TYPES)
                         + f"; got {kind!r}.")
    unknown = set(spec) - _TYPES[kind] - _INFO_KEYS - {"type"}
    if unknown:
        raise ValueError(f"unknown key(s) for a {kind!r} problem: "
                         + ", ".join(sorted(map(repr, unknown)))
                         + "; allowed: " + ", ".join(sorted(_TYPES[kind] | _INFO_KEYS)) + ".")
    missing = _REQUIRED[kind] - set(spec)
    if missing:
        raise ValueError(f"a {kind!r} problem needs the key(s) "
                         + ", ".join(sorted(map(repr, missing))) + ".")
    if "sense" in spec and spec["sense"] not in ("min", "max"):
        raise ValueError(f"'sense' must be 'min' or 'max'; got {spec['sense']!r}.")
    if kind == "shortest_path" and "grid" in spec:
        g = spec["grid"]
        if (not isinstance(g, list) or len(g) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in g)
                or g[0] * g[1] < 2):
            raise ValueError(f"'grid' must be [rows, cols], two positive ints with at least "
                             f"2 nodes; got {g!r}.")
    elif kind == "finite":
        _matrix(spec, "decisions")
    elif kind == "linear_program":
        if "A_ub" not in spec and "A_eq" not in spec:
            raise ValueError("a 'linear_program' needs 'A_ub' and/or 'A_eq' (the constraint "
                             "matrices, one row per constraint).")
        width = None
        for a, b in (("A_ub", "b_ub"), ("A_eq", "b_eq")):
            if a in spec:
                m, n = _matrix(spec, a)
                if b not in spec:
                    raise ValueError(f"'{a}' is given but '{b}' (its right-hand side) is "
                                     "missing.")
                _vector(spec, b, m)
                if width is not None and n != width:
                    raise ValueError(f"'A_ub' has {width} columns but 'A_eq' has {n}: both "
                                     "need one column per decision variable.")
                width = n
            elif b in spec:
                raise ValueError(f"'{b}' is given without '{a}'.")
    return {k: v for k, v in spec.items() if k not in _INFO_KEYS}


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


def load_problem(path):
    """Read a decision problem from a JSON (``.json``) or YAML (``.yaml``) spec file.

    Parameters
    ----------
    path : str or path-like
        The spec file. YAML needs the ``spotree[yaml]`` extra (pyyaml).

    Returns
    -------
    DecisionProblem

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the file is not valid JSON/YAML or does not describe a problem;
        the one-line message starts with the path.

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
        spec = validate_problem_spec(_parse_text(text, path))
        return problem_from_dict(spec)
    except (ValueError, TypeError) as exc:
        msg = " ".join(str(exc).split())  # one line, whatever the constructor said
        raise ValueError(f"{path}: {msg}") from None
