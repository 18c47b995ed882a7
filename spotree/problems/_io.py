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

import re
from typing import Callable, NamedTuple

import numpy as np

from .. import _schema

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
    validate: Callable  # validate(spec) -> None, raises _schema.SchemaError(path, msg)
    build: Callable  # build(spec, check_time_limit) -> DecisionProblem


# -------------------------------------------------------------- helpers
# The type and shape checks are spotree._schema's (the model files' reader):
# one validation layer. A check raises SchemaError(path, message), the path
# starting with the spec's key ("A_ub[0][1]"); validate_problem_spec turns it
# into "problem spec of type ..., key 'A_ub': A_ub[0][1] must be ...".
_fail = _schema.SchemaError


def _cap(key, value, cap, what):
    if value > cap:
        raise _fail(key, f"describes {value:,} {what}; problem specs are limited to {cap:,} "
                         f"{what}.")


def _dense_matrix(key, rows, label=""):
    """Shape of a rectangular list of lists of finite numbers."""
    if (not isinstance(rows, list) or not rows
            or not all(isinstance(r, list) for r in rows)):
        raise _fail(key, f"{label}must be a 2-D array (a non-empty list of equal-length "
                         f"lists of finite numbers, one per row); got "
                         f"{_schema._show(rows)}.")
    width = len(rows[0])
    _cap(key, len(rows), MAX_SPEC_ROWS, "rows")
    _cap(key, width, MAX_SPEC_VARIABLES, "columns")
    _cap(key, len(rows) * width, MAX_SPEC_NONZEROS, "entries")
    if width == 0:
        raise _fail(key, "rows must not be empty.")
    _schema.real_matrix(rows, key, rows=len(rows), cols=width, per="row")
    return len(rows), width


_SPARSE_KEYS = ("shape", "row", "col", "data")


def _sparse_matrix(key, m):
    """Shape of a sparse matrix given as {"shape", "row", "col", "data"} triplets."""
    _schema.check_keys(m, key, required=_SPARSE_KEYS)
    shape = m["shape"]
    if not isinstance(shape, list) or len(shape) != 2:
        raise _fail(_schema.join(key, "shape"), f"must be [n_rows, n_cols]; got "
                                                f"{_schema._show(shape)}.")
    n_rows = _schema.integer(shape[0], _schema.join(key, "shape[0]"), low=0)
    n_cols = _schema.integer(shape[1], _schema.join(key, "shape[1]"), low=1)
    _cap(key, n_rows, MAX_SPEC_ROWS, "rows")
    _cap(key, n_cols, MAX_SPEC_VARIABLES, "columns")
    for part in ("row", "col", "data"):
        if not isinstance(m[part], list):
            raise _fail(_schema.join(key, part), f"must be a list; got "
                                                 f"{_schema._show(m[part])}.")
    _cap(key, len(m["data"]), MAX_SPEC_NONZEROS, "nonzeros")
    if not len(m["row"]) == len(m["col"]) == len(m["data"]):
        raise _fail(key, "'row', 'col' and 'data' must have the same length.")
    _schema.int_array(m["row"], _schema.join(key, "row"), low=0, high=n_rows - 1)
    _schema.int_array(m["col"], _schema.join(key, "col"), low=0, high=n_cols - 1)
    _schema.real_array(m["data"], _schema.join(key, "data"))
    return n_rows, n_cols


def _matrix(key, value):
    if isinstance(value, dict):
        return _sparse_matrix(key, value)
    return _dense_matrix(key, value)


def _to_matrix(value):
    if isinstance(value, dict):
        import scipy.sparse as sp

        return sp.csr_matrix((np.asarray(value["data"], dtype=np.float64),
                              (np.asarray(value["row"], dtype=np.int64),
                               np.asarray(value["col"], dtype=np.int64))),
                             shape=tuple(value["shape"]))
    return np.asarray(value, dtype=np.float64)


def _check_sense_key(spec):
    if "sense" in spec:
        _schema.string(spec["sense"], "sense", choices=("min", "max"))


# ---------------------------------------------------------------- types
def _validate_shortest_path(spec):
    _check_sense_key(spec)
    if "grid" in spec:
        r, c = _schema.int_array(spec["grid"], "grid", length=2, low=1, per="dimension")
        if r * c < 2:
            raise _fail("grid", f"must have at least 2 nodes; got {[int(r), int(c)]}.")
        _cap("grid", int(r * (c - 1) + c * (r - 1)), MAX_SPEC_VARIABLES, "edges")


def _build_shortest_path(spec, check_time_limit):
    from ._shortest_path import ShortestPath

    args = dict(spec)
    if "grid" in args:
        args["grid"] = tuple(args["grid"])
    return ShortestPath(**args)


def _validate_finite(spec):
    _check_sense_key(spec)
    _dense_matrix("decisions", spec["decisions"], "the candidate decisions V ")


def _build_finite(spec, check_time_limit):
    from ._base import FiniteDecisions

    args = dict(spec)
    return FiniteDecisions(np.asarray(args.pop("decisions"), dtype=np.float64), **args)


def _bound_pair(p, where):
    """A [lower, upper] pair of finite numbers or nulls."""
    if not isinstance(p, list) or len(p) != 2:
        raise _fail(where, f"must be a [lower, upper] pair (finite numbers or null for no "
                           f"bound); got {_schema._show(p)}.")
    for i, x in enumerate(p):
        if x is not None:
            _schema.real(x, _schema.join(where, i))


def _validate_linear_program(spec):
    _check_sense_key(spec)
    present = {k for k in ("A_ub", "b_ub", "A_eq", "b_eq") if spec.get(k) is not None}
    bounds = spec.get("bounds", [0, None])
    per_var = (isinstance(bounds, list) and bool(bounds)
               and all(isinstance(p, list) for p in bounds))
    if not ({"A_ub", "A_eq"} & present) and not per_var:
        for a, b in (("A_ub", "b_ub"), ("A_eq", "b_eq")):
            if b in present:
                raise _fail(b, f"is given without '{a}'; a 'linear_program' needs 'A_ub' "
                               "and/or 'A_eq' (the constraint matrices, one row per "
                               "constraint).")
        raise ValueError("problem spec of type 'linear_program' needs 'A_ub' and/or 'A_eq' "
                         "(the constraint matrices, one row per constraint), or one "
                         "[lower, upper] pair per variable in 'bounds'.")
    width = None
    for a, b in (("A_ub", "b_ub"), ("A_eq", "b_eq")):
        if a in present:
            m, n = _matrix(a, spec[a])
            if b not in present:
                raise _fail(a, f"is given but '{b}' (its right-hand side) is missing.")
            v = _schema.real_array(spec[b], b)
            if len(v) != m:
                raise _fail(b, f"has {len(v)} entries but '{a}' has {m} rows.")
            if width is not None and n != width:
                raise _fail(a, f"'A_ub' has {width} columns but 'A_eq' has {n}: both need "
                               "one column per decision variable.")
            width = n
        elif b in present:
            raise _fail(b, f"is given without '{a}'.")
    if per_var:
        _cap("bounds", len(bounds), MAX_SPEC_VARIABLES, "variables")
        for j, p in enumerate(bounds):
            _bound_pair(p, _schema.join("bounds", j))
        if width is not None and len(bounds) != width:
            raise _fail("bounds", f"has {len(bounds)} pairs but the constraint matrices have "
                                  f"{width} columns.")
        width = len(bounds)
    else:
        _bound_pair(bounds, "bounds")
    for key in ("integrality", "variable_names"):
        v = spec.get(key)
        if v is None:
            continue
        if not isinstance(v, list) or len(v) != width:
            raise _fail(key, f"must be null or a list of {width} entries (one per "
                             f"variable); got {_schema._show(v)}.")
        if key == "integrality":
            _schema.int_array(v, key, low=0, high=1)  # 0: continuous, 1: integer
        else:
            _schema.string_list(v, key)
    if "basis_cache" in spec and not isinstance(spec["basis_cache"], bool):
        raise _fail("basis_cache", f"must be true or false; got "
                                   f"{_schema._show(spec['basis_cache'])}.")


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


def _validate_knapsack(spec):
    _check_sense_key(spec)
    w = spec["weights"]
    if isinstance(w, list) and w and not isinstance(w[0], list):
        n_res = 1  # one resource, as a flat list
        _cap("weights", len(w), MAX_SPEC_VARIABLES, "items")
        _schema.real_array(w, "weights")
    else:
        n_res, _ = _dense_matrix("weights", w, "the item weights ")
    cap = spec["capacities"]
    cap = ([_schema.real(cap, "capacities")] if not isinstance(cap, list)
           else _schema.real_array(cap, "capacities"))
    if len(cap) != n_res:
        raise _fail("capacities", f"has {len(cap)} entries but 'weights' has {n_res} "
                                  "resource rows.")
    if "method" in spec:
        _schema.string(spec["method"], "method")
    if "max_nodes" in spec:
        _schema.integer(spec["max_nodes"], "max_nodes", low=1)


def _build_knapsack(spec, check_time_limit):
    from ._knapsack import Knapsack

    args = dict(spec)
    return Knapsack(np.asarray(args.pop("weights"), dtype=np.float64),
                    np.asarray(args.pop("capacities"), dtype=np.float64), **args)


def _validate_dag_shortest_path(spec):
    _check_sense_key(spec)
    n = _schema.integer(spec["n_nodes"], "n_nodes", low=2)
    _cap("n_nodes", n, MAX_SPEC_ROWS, "nodes")
    edges = spec["edges"]
    if not isinstance(edges, list) or not edges:
        raise _fail("edges", f"must be a non-empty list of [tail, head] pairs; got "
                             f"{_schema._show(edges)}.")
    _cap("edges", len(edges), MAX_SPEC_VARIABLES, "edges")
    for k, e in enumerate(edges):
        _schema.int_array(e, _schema.join("edges", k), length=2, per="end of the edge")
    for key in ("source", "target"):
        _schema.integer(spec[key], key)
    # The labels of a problem built by ShortestPath.from_networkx (optional:
    # files written before they were kept have none).
    if spec.get("variable_names") is not None:
        names = _schema.string_list(spec["variable_names"], "variable_names",
                                    length=len(edges))
        _distinct("variable_names", names, "cost column names")
    if spec.get("node_labels") is not None:
        labels = _labels("node_labels", spec["node_labels"], n)
        _distinct("node_labels", labels, "node labels")
    if spec.get("edge_keys") is not None:
        if spec.get("node_labels") is None:
            raise _fail("edge_keys", "is given without 'node_labels'.")
        keys = _labels("edge_keys", spec["edge_keys"], len(edges))
        if all(0 <= a < n and 0 <= b < n for a, b in edges):  # else the build names the edge
            _distinct("edge_keys", [(labels[a], labels[b], key)
                                    for (a, b), key in zip(edges, keys)],
                      "keys for the parallel edges between two nodes")


def _labels(key, values, length):
    """The labels a spec lists (JSON scalars or {"tuple": [...]}), as Python values."""
    from ._shortest_path import _label_from_json

    if not isinstance(values, list) or len(values) != length:
        raise _fail(key, f"must be null or a list of {length} labels; got "
                         f"{_schema._show(values)}.")

    def check(v, where):
        if isinstance(v, dict) and set(v) == {"tuple"}:
            if not isinstance(v["tuple"], list):
                raise _fail(_schema.join(where, "tuple"), f"must be a list of labels; got "
                                                          f"{_schema._show(v['tuple'])}.")
            for i, x in enumerate(v["tuple"]):
                check(x, _schema.join(_schema.join(where, "tuple"), i))
        elif isinstance(v, float):
            _schema.real(v, where)
        elif v is not None and not isinstance(v, (str, bool, int)):
            raise _fail(where, f"must be a string, number, boolean, null or "
                               f'{{"tuple": [...]}}; got {_schema._show(v)}.')

    for i, v in enumerate(values):
        check(v, _schema.join(key, i))
    return [_label_from_json(v) for v in values]


def _distinct(key, values, what):
    seen = {}
    for i, v in enumerate(values):
        if v in seen:
            raise _fail(key, f"must hold distinct {what}; entries {seen[v]} and {i} are both "
                             f"{v!r}.")
        seen[v] = i


def _build_dag_shortest_path(spec, check_time_limit):
    from ._shortest_path import ShortestPath, _set_labels

    args = dict(spec)
    labels = {k: args.pop(k) for k in ("node_labels", "edge_keys", "variable_names")
              if k in args}
    problem = ShortestPath.from_edges(args.pop("n_nodes"), np.asarray(args.pop("edges")),
                                      args.pop("source"), args.pop("target"), **args)
    return _set_labels(problem, **labels)


def _validate_assignment(spec):
    _check_sense_key(spec)
    n = _schema.integer(spec["n_agents"], "n_agents", low=1)
    m = spec.get("n_tasks")
    m = n if m is None else _schema.integer(m, "n_tasks", low=1)
    _cap("n_agents", n * m, MAX_SPEC_VARIABLES, "variables (n_agents * n_tasks)")
    for key, count in (("agent_names", n), ("task_names", m)):
        if spec.get(key) is not None:
            _schema.string_list(spec[key], key, length=count)
    allowed = spec.get("allowed")
    if allowed is None:
        return
    what = f"a list of {n} lists (one per agent) of {m} booleans (one per task)"
    if not isinstance(allowed, list) or len(allowed) != n:
        raise _fail("allowed", f"must be null or {what}; got {_schema._show(allowed)}.")
    for i, row in enumerate(allowed):
        if not isinstance(row, list) or len(row) != m:
            raise _fail(_schema.join("allowed", i), f"must be a list of {m} booleans (one "
                                                    f"per task); got {_schema._show(row)}.")
        for j, x in enumerate(row):
            # true/false, or 0/1 as a table tool may write them.
            if not (isinstance(x, bool) or (type(x) is int and x in (0, 1))):
                raise _fail(_schema.join(_schema.join("allowed", i), j),
                            f"must be true or false; got {_schema._show(x)}.")


def _build_assignment(spec, check_time_limit):
    from ._assignment import Assignment

    args = dict(spec)
    return Assignment(args.pop("n_agents"), args.pop("n_tasks", None), **args)


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
    "dag_shortest_path": SpecType(frozenset({"n_nodes", "edges", "source", "target", "sense",
                                             "node_labels", "edge_keys", "variable_names"}),
                                  frozenset({"n_nodes", "edges", "source", "target"}),
                                  _validate_dag_shortest_path, _build_dag_shortest_path),
    "assignment": SpecType(frozenset({"n_agents", "n_tasks", "sense", "allowed", "agent_names",
                                      "task_names"}),
                           frozenset({"n_agents"}), _validate_assignment, _build_assignment),
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

    try:
        entry.validate(spec)
    except _schema.SchemaError as exc:
        # "key 'A_ub': A_ub[0][1] must be ..."; a message about the key itself
        # does not repeat it.
        root = re.split(r"[.\[]", exc.where, maxsplit=1)[0]
        detail = exc.detail if exc.where == root else str(exc)
        raise ValueError(f"problem spec of type {kind!r}, key {root!r}: {detail}") from None
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
      "source": 0, "target": 3, "sense": "min"}``; a problem built by
      :meth:`~spotree.problems.ShortestPath.from_networkx` adds
      ``"variable_names"`` (one distinct string per edge), ``"node_labels"``
      (one distinct label per node: a string, number, boolean, null or
      ``{"tuple": [labels]}``) and, for a MultiDiGraph, ``"edge_keys"`` (one
      label per edge), all optional.
    - ``{"type": "assignment", "n_agents": 3, "n_tasks": 4, "sense": "min",
      "allowed": null}``; ``"allowed"`` may be one list of ``n_tasks``
      booleans per agent (false: the pair is forbidden); ``"agent_names"``
      and ``"task_names"`` optional lists of distinct strings.

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
