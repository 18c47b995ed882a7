"""Plain-JSON descriptions of decision problems: one validation layer for specs and model files.

:func:`problem_from_dict` is the only way spotree turns a dict into a
problem, for model files (``spotree.load``), problem spec files
(:func:`~spotree.problems.load_problem`) and the CLI. Every spec goes
through :func:`validate_problem_spec` first: unknown keys, wrong types,
NaN or infinite numbers, inconsistent shapes and sizes above the caps below
are rejected with a ValueError naming the key. Building a LinearProgram
runs HiGHS, and a spec may come from an untrusted file, so that solver work
is time-limited (``check_time_limit``).

Each problem type is one entry of ``SPEC_TYPES``: its allowed and required
keys, a validator and a builder.
"""

from __future__ import annotations

import numbers
from typing import Callable, NamedTuple

import numpy as np

__all__ = ["DEFAULT_CHECK_TIME_LIMIT", "MAX_SPEC_NONZEROS", "MAX_SPEC_ROWS",
           "MAX_SPEC_VARIABLES", "problem_from_dict", "validate_problem_spec"]

#: Seconds that building a problem from a spec may spend in solver checks
#: (feasibility and boundedness of a LinearProgram) unless told otherwise.
DEFAULT_CHECK_TIME_LIMIT = 5.0
#: Largest number of decision variables (costs) a spec may describe.
MAX_SPEC_VARIABLES = 1_000_000
#: Largest number of constraint rows (or candidate decisions) in a spec.
MAX_SPEC_ROWS = 1_000_000
#: Largest number of matrix entries (dense) or nonzeros (sparse) in a spec.
MAX_SPEC_NONZEROS = 10_000_000

_INFO_KEYS = frozenset({"name", "description"})


class SpecType(NamedTuple):
    """How to check and build one problem type from its spec."""

    keys: frozenset
    required: frozenset
    validate: Callable  # validate(spec, err) -> None, raises through err(key, msg)
    build: Callable  # build(spec, check_time_limit) -> DecisionProblem


# -------------------------------------------------------------- helpers
def _is_number(v):
    return (isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
            and bool(np.isfinite(v)))


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _what(v):
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return repr(v) if isinstance(v, (str, numbers.Number, bool)) or v is None else \
        type(v).__name__


def _cap(err, key, value, cap, what):
    if value > cap:
        err(key, f"describes {value:,} {what}; problem specs are limited to {cap:,} "
                 f"{what}.")


def _dense_matrix(err, key, rows, label=""):
    """Shape of a rectangular list of lists of finite numbers."""
    if (not isinstance(rows, list) or not rows
            or not all(isinstance(r, list) for r in rows)):
        got = "a list of numbers" if isinstance(rows, list) and rows else _what(rows)
        err(key, f"{label}must be a 2-D array (a non-empty list of equal-length lists of "
                 f"finite numbers, one per row); got {got}.")
    width = len(rows[0])
    _cap(err, key, len(rows), MAX_SPEC_ROWS, "rows")
    _cap(err, key, width, MAX_SPEC_VARIABLES, "columns")
    _cap(err, key, len(rows) * width, MAX_SPEC_NONZEROS, "entries")
    if width == 0:
        err(key, "rows must not be empty.")
    for i, r in enumerate(rows):
        if len(r) != width:
            err(key, f"must be rectangular: row 0 has {width} entries but row {i} has "
                     f"{len(r)}.")
        for j, v in enumerate(r):
            if not _is_number(v):
                err(key, f"entry [{i}][{j}] must be a finite number; got {_what(v)}.")
    return len(rows), width


_SPARSE_KEYS = {"shape", "row", "col", "data"}


def _sparse_matrix(err, key, m):
    """Shape of a sparse matrix given as {"shape", "row", "col", "data"} triplets."""
    if set(m) != _SPARSE_KEYS:
        err(key, "a sparse matrix must be an object with exactly the keys 'shape', 'row', "
                 f"'col' and 'data'; got keys {sorted(m)}.")
    shape = m["shape"]
    if (not isinstance(shape, list) or len(shape) != 2
            or not all(_is_int(s) and s >= 0 for s in shape)):
        err(key, f"'shape' must be [n_rows, n_cols], two non-negative ints; got "
                 f"{_what(shape)}.")
    n_rows, n_cols = shape
    _cap(err, key, n_rows, MAX_SPEC_ROWS, "rows")
    _cap(err, key, n_cols, MAX_SPEC_VARIABLES, "columns")
    if n_cols == 0:
        err(key, "'shape' must have at least one column.")
    lens = set()
    for part in ("row", "col", "data"):
        v = m[part]
        if not isinstance(v, list):
            err(key, f"'{part}' must be a list; got {_what(v)}.")
        lens.add(len(v))
    if len(lens) != 1:
        err(key, "'row', 'col' and 'data' must have the same length.")
    _cap(err, key, len(m["data"]), MAX_SPEC_NONZEROS, "nonzeros")
    for part, bound in (("row", n_rows), ("col", n_cols)):
        for t, v in enumerate(m[part]):
            if not (_is_int(v) and 0 <= v < bound):
                err(key, f"'{part}'[{t}] must be an int in [0, {bound}); got {_what(v)}.")
    for t, v in enumerate(m["data"]):
        if not _is_number(v):
            err(key, f"'data'[{t}] must be a finite number; got {_what(v)}.")
    return n_rows, n_cols


def _matrix(err, key, value):
    if isinstance(value, dict):
        return _sparse_matrix(err, key, value)
    return _dense_matrix(err, key, value)


def _to_matrix(value):
    if isinstance(value, dict):
        import scipy.sparse as sp

        return sp.csr_matrix((np.asarray(value["data"], dtype=np.float64),
                              (np.asarray(value["row"], dtype=np.int64),
                               np.asarray(value["col"], dtype=np.int64))),
                             shape=tuple(value["shape"]))
    return np.asarray(value, dtype=np.float64)


def _check_sense_key(spec, err):
    if "sense" in spec and spec["sense"] not in ("min", "max"):
        err("sense", f"sense must be 'min' or 'max'; got {_what(spec['sense'])}.")


# ---------------------------------------------------------------- types
def _validate_shortest_path(spec, err):
    _check_sense_key(spec, err)
    if "grid" in spec:
        g = spec["grid"]
        if (not isinstance(g, list) or len(g) != 2
                or not all(_is_int(x) and x >= 1 for x in g) or g[0] * g[1] < 2):
            err("grid", f"grid must be [rows, cols], two positive ints with at least 2 "
                        f"nodes; got {_what(g) if not isinstance(g, list) else g}.")
        r, c = g
        _cap(err, "grid", r * (c - 1) + c * (r - 1), MAX_SPEC_VARIABLES, "edges")


def _build_shortest_path(spec, check_time_limit):
    from ._shortest_path import ShortestPath

    args = dict(spec)
    if "grid" in args:
        args["grid"] = tuple(args["grid"])
    return ShortestPath(**args)


def _validate_finite(spec, err):
    _check_sense_key(spec, err)
    _dense_matrix(err, "decisions", spec["decisions"], "the candidate decisions V ")


def _build_finite(spec, check_time_limit):
    from ._base import FiniteDecisions

    args = dict(spec)
    return FiniteDecisions(np.asarray(args.pop("decisions"), dtype=np.float64), **args)


def _bound_ok(v):
    return v is None or _is_number(v)


def _validate_linear_program(spec, err):
    _check_sense_key(spec, err)
    present = {k for k in ("A_ub", "b_ub", "A_eq", "b_eq") if spec.get(k) is not None}
    bounds = spec.get("bounds", [0, None])
    per_var = (isinstance(bounds, list) and bool(bounds)
               and all(isinstance(p, list) for p in bounds))
    if not ({"A_ub", "A_eq"} & present) and not per_var:
        for a, b in (("A_ub", "b_ub"), ("A_eq", "b_eq")):
            if b in present:
                err(b, f"is given without '{a}'; a 'linear_program' needs 'A_ub' and/or "
                       "'A_eq' (the constraint matrices, one row per constraint).")
        raise ValueError("problem spec of type 'linear_program' needs 'A_ub' and/or 'A_eq' "
                         "(the constraint matrices, one row per constraint), or one "
                         "[lower, upper] pair per variable in 'bounds'.")
    width = None
    for a, b in (("A_ub", "b_ub"), ("A_eq", "b_eq")):
        if a in present:
            m, n = _matrix(err, a, spec[a])
            if b not in present:
                err(a, f"is given but '{b}' (its right-hand side) is missing.")
            v = spec[b]
            if not isinstance(v, list):
                err(b, f"must be a list of finite numbers; got {_what(v)}.")
            for t, x in enumerate(v):
                if not _is_number(x):
                    err(b, f"entry [{t}] must be a finite number; got {_what(x)}.")
            if len(v) != m:
                err(b, f"has {len(v)} entries but '{a}' has {m} rows.")
            if width is not None and n != width:
                err(a, f"'A_ub' has {width} columns but 'A_eq' has {n}: both need one "
                       "column per decision variable.")
            width = n
        elif b in present:
            err(b, f"is given without '{a}'.")
    if not isinstance(bounds, list):
        err("bounds", f"must be a [lower, upper] pair or a list of such pairs (null for no "
                      f"bound); got {_what(bounds)}.")
    if per_var:
        _cap(err, "bounds", len(bounds), MAX_SPEC_VARIABLES, "variables")
        for j, p in enumerate(bounds):
            if len(p) != 2 or not all(_bound_ok(x) for x in p):
                err("bounds", f"entry [{j}] must be [lower, upper] with finite numbers or "
                              f"null; got {p!r}.")
        if width is not None and len(bounds) != width:
            err("bounds", f"has {len(bounds)} pairs but the constraint matrices have "
                          f"{width} columns.")
        width = len(bounds)
    elif len(bounds) != 2 or not all(_bound_ok(x) for x in bounds):
        err("bounds", f"must be a [lower, upper] pair (finite numbers or null) or a list of "
                      f"such pairs; got {bounds!r}.")
    for key in ("integrality", "variable_names"):
        v = spec.get(key)
        if v is None:
            continue
        if not isinstance(v, list) or len(v) != width:
            err(key, f"must be null or a list of {width} entries (one per variable); got "
                     f"{_what(v) if not isinstance(v, list) else f'{len(v)} entries'}.")
        if key == "integrality" and not all(_is_int(x) and x in (0, 1) for x in v):
            err(key, "entries must be 0 (continuous) or 1 (integer).")
        if key == "variable_names" and not all(isinstance(x, str) for x in v):
            err(key, "entries must be strings.")
    if "basis_cache" in spec and not isinstance(spec["basis_cache"], bool):
        err("basis_cache", f"must be true or false; got {_what(spec['basis_cache'])}.")


def _build_linear_program(spec, check_time_limit):
    from ._linear import LinearProgram

    args = dict(spec)
    for key in ("A_ub", "A_eq"):
        if args.get(key) is not None:
            args[key] = _to_matrix(args[key])
    bounds = args.get("bounds")
    if isinstance(bounds, list) and bounds and isinstance(bounds[0], list):
        args["bounds"] = [tuple(p) for p in bounds]
    elif isinstance(bounds, list):
        args["bounds"] = tuple(bounds)
    return LinearProgram(**args, check_time_limit=check_time_limit)


def _validate_knapsack(spec, err):
    _check_sense_key(spec, err)
    w = spec["weights"]
    if isinstance(w, list) and w and all(_is_number(x) for x in w):
        n_res, n_items = 1, len(w)  # one resource, as a flat list
        _cap(err, "weights", n_items, MAX_SPEC_VARIABLES, "items")
    else:
        n_res, n_items = _dense_matrix(err, "weights", w, "the item weights ")
    cap = spec["capacities"]
    cap = [cap] if _is_number(cap) else cap
    if not isinstance(cap, list) or not all(_is_number(x) for x in cap):
        err("capacities", f"must be a list of finite numbers; got {_what(spec['capacities'])}.")
    if len(cap) != n_res:
        err("capacities", f"has {len(cap)} entries but 'weights' has {n_res} resource rows.")
    if "method" in spec and not isinstance(spec["method"], str):
        err("method", f"must be a string; got {_what(spec['method'])}.")
    if "max_nodes" in spec and not (_is_int(spec["max_nodes"]) and spec["max_nodes"] >= 1):
        err("max_nodes", f"must be a positive int; got {_what(spec['max_nodes'])}.")


def _build_knapsack(spec, check_time_limit):
    from ._knapsack import Knapsack

    args = dict(spec)
    return Knapsack(np.asarray(args.pop("weights"), dtype=np.float64),
                    np.asarray(args.pop("capacities"), dtype=np.float64), **args)


def _validate_dag_shortest_path(spec, err):
    _check_sense_key(spec, err)
    n = spec["n_nodes"]
    if not (_is_int(n) and n >= 2):
        err("n_nodes", f"must be an int >= 2; got {_what(n)}.")
    _cap(err, "n_nodes", n, MAX_SPEC_ROWS, "nodes")
    edges = spec["edges"]
    if not isinstance(edges, list) or not edges:
        err("edges", f"must be a non-empty list of [tail, head] pairs; got {_what(edges)}.")
    _cap(err, "edges", len(edges), MAX_SPEC_VARIABLES, "edges")
    for k, e in enumerate(edges):
        if not (isinstance(e, list) and len(e) == 2 and all(_is_int(v) for v in e)):
            err("edges", f"entry [{k}] must be a [tail, head] pair of int node ids; got "
                         f"{_what(e) if not isinstance(e, list) else e}.")
    for key in ("source", "target"):
        if not _is_int(spec[key]):
            err(key, f"must be an int node id; got {_what(spec[key])}.")


def _build_dag_shortest_path(spec, check_time_limit):
    from ._shortest_path import ShortestPath

    args = dict(spec)
    return ShortestPath.from_edges(args.pop("n_nodes"), np.asarray(args.pop("edges")),
                                   args.pop("source"), args.pop("target"), **args)


SPEC_TYPES = {
    "shortest_path": SpecType(frozenset({"grid", "sense"}), frozenset(),
                              _validate_shortest_path, _build_shortest_path),
    "finite": SpecType(frozenset({"decisions", "sense"}), frozenset({"decisions"}),
                       _validate_finite, _build_finite),
    "linear_program": SpecType(
        frozenset({"A_ub", "b_ub", "A_eq", "b_eq", "bounds", "integrality", "sense",
                   "basis_cache", "variable_names"}), frozenset(),
        _validate_linear_program, _build_linear_program),
    "knapsack": SpecType(frozenset({"weights", "capacities", "sense", "method", "max_nodes"}),
                         frozenset({"weights", "capacities"}), _validate_knapsack,
                         _build_knapsack),
    "dag_shortest_path": SpecType(frozenset({"n_nodes", "edges", "source", "target", "sense"}),
                                  frozenset({"n_nodes", "edges", "source", "target"}),
                                  _validate_dag_shortest_path, _build_dag_shortest_path),
}


# ------------------------------------------------------------------ API
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
        raise ValueError(f"a problem spec must be a JSON object; got {type(spec).__name__}.")
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in SPEC_TYPES:
        raise ValueError("problem spec 'type' must be one of "
                         + ", ".join(repr(t) for t in SPEC_TYPES) + f"; got {kind!r}.")
    entry = SPEC_TYPES[kind]
    unknown = set(spec) - entry.keys - _INFO_KEYS - {"type"}
    if unknown:
        raise ValueError(f"problem spec of type {kind!r} has unexpected keys: "
                         + ", ".join(sorted(map(repr, map(str, unknown))))
                         + "; allowed: " + ", ".join(sorted(entry.keys | _INFO_KEYS)) + ".")
    missing = entry.required - set(spec)
    if missing:
        raise ValueError(f"problem spec of type {kind!r} is missing the key "
                         + ", ".join(sorted(map(repr, missing))) + ".")

    def err(key, msg):
        raise ValueError(f"problem spec of type {kind!r}, key {key!r}: {msg}")

    entry.validate(spec, err)
    return {k: v for k, v in spec.items() if k not in _INFO_KEYS}


def problem_from_dict(spec, *, check_time_limit=DEFAULT_CHECK_TIME_LIMIT):
    """Build a decision problem from a JSON-ready dict.

    The schema has a ``"type"`` key and the constructor's arguments:

    - ``{"type": "shortest_path", "grid": [4, 4], "sense": "min"}``
    - ``{"type": "finite", "decisions": [[1, 0], [0, 1]], "sense": "min"}``
    - ``{"type": "linear_program", "A_ub": [[...]], "b_ub": [...], "A_eq": ...,
      "b_eq": ..., "bounds": [0, null], "integrality": null, "sense": "max",
      "basis_cache": true, "variable_names": null}``; a matrix may also be
      sparse, as ``{"shape": [m, n], "row": [...], "col": [...], "data": [...]}``
      (what :meth:`LinearProgram.to_dict` writes for a sparse matrix).
    - ``{"type": "knapsack", "weights": [[...], ...], "capacities": [...],
      "sense": "max", "method": "auto", "max_nodes": 1000000}``
    - ``{"type": "dag_shortest_path", "n_nodes": 4, "edges": [[0, 1], ...],
      "source": 0, "target": 3, "sense": "min"}``

    ``"name"`` and ``"description"`` are allowed as free text. Every
    problem's ``to_dict()`` round-trips through this function.

    Parameters
    ----------
    spec : dict
    check_time_limit : float or None, default=5.0
        Seconds allowed for solver checks while building the problem (the
        feasibility and boundedness checks of a LinearProgram); None for no
        limit. The default keeps a small but hard MILP in an untrusted file
        from keeping a load busy for minutes; raise it for a hard problem
        from a source you trust.

    Returns
    -------
    DecisionProblem

    Raises
    ------
    ValueError
        For an invalid spec, with a message naming the key; for specs above
        the size caps (``MAX_SPEC_VARIABLES``, ``MAX_SPEC_ROWS``: 1,000,000;
        ``MAX_SPEC_NONZEROS``: 10,000,000); and for problems that are
        infeasible, unbounded, or whose checks exceed ``check_time_limit``.

    Examples
    --------
    >>> from spotree.problems import problem_from_dict
    >>> roads = problem_from_dict({"type": "finite", "decisions": [[1, 0], [0, 1]]})
    >>> roads.solve([[3.0, 2.0]])[0]
    array([[0., 1.]])
    """
    from ._lp_data import _check_time_limit

    limit = _check_time_limit(check_time_limit, "problem_from_dict")
    spec = validate_problem_spec(spec)
    args = {k: v for k, v in spec.items() if k != "type"}
    return SPEC_TYPES[spec["type"]].build(args, limit)
