"""Problem spec files: a decision problem described in JSON or YAML.

The schema is the one of :func:`spotree.problems.problem_from_dict` (a
``"type"`` key plus the constructor's arguments), with optional free-text
``"name"`` and ``"description"`` keys, and is validated there
(:func:`validate_problem_spec`, re-exported here). ``examples/README.md``
documents it with one example file per problem type.
"""

from __future__ import annotations

import os

from .. import _schema
from ._io import DEFAULT_CHECK_TIME_LIMIT, problem_from_dict, validate_problem_spec
from ._linear import CheckTimeLimitError

__all__ = ["load_problem", "validate_problem_spec"]


#: Largest spec file read (1 GiB, as for model files); the size caps of
#: problem_from_dict then apply to what it describes.
MAX_SPEC_BYTES = 2 ** 30


def _parse_yaml(path):
    from .._compat import import_optional

    yaml = import_optional("yaml", purpose="reading a YAML problem spec")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (expected JSON or YAML).") from None

    class UniqueKeyLoader(yaml.SafeLoader):
        """PyYAML keeps the last of two values for one key: refuse the key instead."""

        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    hash(key)
                except TypeError:  # PyYAML itself refuses an unhashable key
                    continue
                if key in seen:
                    mark = key_node.start_mark
                    raise ValueError(f"{path}: invalid YAML at line {mark.line + 1}, column "
                                     f"{mark.column + 1}: the key {key!r} appears twice in "
                                     "one mapping.")
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    try:
        doc = yaml.load(text, Loader=UniqueKeyLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid syntax"
        raise ValueError(f"{path}: invalid YAML{where}: {problem}.") from None
    if doc is None:
        raise ValueError(f"{path}: the YAML file holds no problem spec (it is empty).")
    return doc


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
    if os.path.splitext(str(path))[1].lower() in (".yaml", ".yml"):
        doc = _parse_yaml(path)
    else:
        # The model files' reader: size limit, UTF-8, JSON errors with their
        # line; each message starts with the path.
        doc = _schema.read_json_file(path, max_bytes=MAX_SPEC_BYTES, what="problem spec file",
                                     function="load_problem")
    try:
        return problem_from_dict(doc, check_time_limit=check_time_limit)
    except (ValueError, TypeError) as exc:
        msg = " ".join(str(exc).split())  # one line, whatever the constructor said
        # A check that ran out of time keeps its class (the CLI's hint needs it).
        kind = type(exc) if isinstance(exc, CheckTimeLimitError) else ValueError
        raise kind(f"{path}: {msg}") from None
