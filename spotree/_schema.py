"""Reading untrusted JSON documents: bounded parsing and typed accessors that name the key.

Every check raises :class:`SchemaError`, a ``ValueError`` whose message starts
with the path of the offending value inside the document, written the way
one would index it in Python (``trees[0].children_left[3]``), and says what
was expected: "trees[0].feature[2] must be an int in [-2, 4]; got 1e+20."

JSON parses integers as Python ints of any size, floats as floats (with the
non-standard ``NaN`` and ``Infinity`` literals) and ``true``/``false`` as
bools; the accessors accept exactly the JSON types they name (a bool is not
an int, a string is not a number) and reject non-finite numbers unless told
otherwise.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re

import numpy as np

__all__ = ["SchemaError", "read_json_file", "join", "mapping", "check_keys", "member",
           "integer", "real", "string", "int_array", "real_array", "real_matrix",
           "real_lists", "string_list", "MAX_JSON_DEPTH"]

# Deepest nesting of arrays and objects read_json_file accepts. Model and
# problem spec files nest a few levels; the readers walk documents
# recursively, so a fixed bound well under Python's recursion limit (1000).
MAX_JSON_DEPTH = 100


class SchemaError(ValueError):
    """A value at ``where`` inside a JSON document is not what was expected."""

    def __init__(self, where, message):
        self.where = where
        self.detail = message
        super().__init__(f"{where} {message}" if where else message)


def _show(v):
    """A short description of a JSON value for error messages."""
    if isinstance(v, list):
        return f"a list of {len(v)} entries"
    if isinstance(v, dict):
        return f"an object with {len(v)} keys"
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, int) and abs(v) >= 10 ** 30:
        return f"an int with {len(str(abs(v)))} digits"
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _fail(where, expected, got):
    raise SchemaError(where, f"must be {expected}; got {_show(got)}.")


def join(where, key):
    """The path of ``key`` (str: an object member, int: a list index) below ``where``."""
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if where else key


# ---------------------------------------------------- non-finite numbers
#: The key of the object that stands for a non-finite number in a file
#: spotree writes: ``{"__float__": "NaN"}`` (or ``"Infinity"``, ``"-Infinity"``).
#: JSON has no such numbers; Python wrote ``NaN`` and ``Infinity`` literals,
#: which strict readers (JavaScript's JSON.parse, jq, most other languages)
#: refuse. Files with the literals (older versions) are still read.
FLOAT_TAG = "__float__"
_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _nonfinite_name(x):
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def strict_json(v):
    """``v`` (a document of dicts, lists, str, int, float, bool, None) with every
    non-finite float replaced by its ``{FLOAT_TAG: name}`` object (see FLOAT_TAG);
    ``v`` itself, untouched, where there is none."""
    t = type(v)
    if t is list or t is tuple:
        # One sum in C settles a flat list of finite numbers (most of a file).
        try:
            if v and math.isfinite(sum(v)):
                return v
        except (TypeError, OverflowError):
            pass
        return [strict_json(x) for x in v]
    if t is dict:
        return {k: strict_json(x) for k, x in v.items()}
    if isinstance(v, float):  # (numpy's float64 too)
        return v if math.isfinite(v) else {FLOAT_TAG: _nonfinite_name(v)}
    return v


# ------------------------------------------------------------------ files
def _check_path(path, argument, function):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"The {argument!r} argument of {function} must be a str or "
                        f"os.PathLike file path. Got {type(path).__name__} {path!r} instead.")
    return os.fspath(path)


def _unique_keys(pairs):
    """A JSON object as a dict, refusing a key given twice.

    ``json`` keeps the last of two values for one key without a word, so an
    edited file could hold a key whose first value is the one its author
    reads and the second the one used.
    """
    if len(pairs) == 1 and pairs[0][0] == FLOAT_TAG:
        # A non-finite number (see FLOAT_TAG).
        name = pairs[0][1]
        if not (isinstance(name, str) and name in _NONFINITE):
            raise ValueError(f"an object {{{FLOAT_TAG!r}: ...}} stands for a non-finite "
                             f"number: 'NaN', 'Infinity' or '-Infinity'; got {name!r}")
        return _NONFINITE[name]
    d = dict(pairs)
    if len(d) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"the key {key!r} appears twice in one object")
            seen.add(key)
    return d


def read_json_file(path, *, max_bytes, what, argument="path", function="spotree.load"):
    """Parse the JSON file at ``path``, refusing files over ``max_bytes`` bytes.

    Parameters
    ----------
    path : str or os.PathLike
        The file. File descriptors (ints) and other objects are refused, so
        that a number never opens an inherited descriptor.
    max_bytes : int
        Largest file accepted, in bytes.
    what : str
        What the file should be ("spotree model file"), for error messages.
    argument, function : str
        The caller's argument and function names, for error messages.

    Returns
    -------
    object
        The parsed document.

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like, or ``max_bytes`` not an int.
    ValueError
        If the file is too large, not UTF-8 text, not JSON, has a key twice
        in one object, or nests arrays or objects more than
        ``MAX_JSON_DEPTH`` (100) levels deep.
    OSError
        If the file cannot be opened (missing, a directory, no permission).
    """
    path = _check_path(path, argument, function)
    if not isinstance(max_bytes, (int, np.integer)) or isinstance(max_bytes, bool):
        raise TypeError(f"The 'max_bytes' argument of {function} must be an int. Got "
                        f"{type(max_bytes).__name__} {max_bytes!r} instead.")
    if max_bytes < 1:
        raise ValueError(f"The 'max_bytes' argument of {function} must be an int in the "
                         f"range [1, inf). Got {max_bytes!r} instead.")
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        # The stat size of pipes and special files is 0: read at most one byte
        # past the limit, whatever the file claims. In bounded chunks: read(n)
        # allocates n bytes first, so a generous limit (max_bytes=2**40) was a
        # MemoryError on a small file, and one past 2**63 an OverflowError.
        chunks, left = [], max_bytes + 1 if size <= max_bytes else 0
        while left > 0:
            chunk = fh.read(min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    if size > max_bytes or len(data) > max_bytes:
        shown = size if size > max_bytes else f"more than {max_bytes}"
        raise ValueError(f"{path} is {shown} bytes, larger than the {max_bytes}-byte limit "
                         f"of {function}; if you trust the file, pass a larger "
                         f"max_bytes.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a {what} (not UTF-8 text).") from None
    too_deep = (f"{path} is not a {what} (arrays or objects nested more than "
                f"{MAX_JSON_DEPTH} levels deep).")
    try:
        doc = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not a {what} (invalid JSON at line {exc.lineno}, "
                         f"column {exc.colno}: {exc.msg}).") from None
    except RecursionError:
        # Up to Python 3.12 the C parser stops at the interpreter's recursion
        # limit (1000 by default, beyond MAX_JSON_DEPTH).
        raise ValueError(too_deep) from None
    except ValueError as exc:  # e.g. an integer literal with too many digits
        raise ValueError(f"{path} is not a {what} ({exc}).") from None
    # Python 3.13's parser reads about 9,000 levels: the readers that follow
    # recurse once per level and raised RecursionError (from about 950 levels
    # on 3.11, under the parser's own limit). One bound on every version.
    if _nested_deeper_than(text, MAX_JSON_DEPTH):
        raise ValueError(too_deep)
    return doc


def _nested_deeper_than(text, limit):
    """Whether the JSON ``text`` (already parsed) nests arrays or objects more
    than ``limit`` deep."""
    # On the text, in C and numpy (a tenth of the parse; walking the parsed
    # document in Python took half as long as the parse): strings removed,
    # the brackets left are the structure. Right only on valid JSON, where
    # every string ends (so the pattern cannot backtrack far).
    b = np.frombuffer(_JSON_STRING.sub("", text).encode("utf-8"), dtype=np.uint8)
    b = b[(b == ord("[")) | (b == ord("]")) | (b == ord("{")) | (b == ord("}"))]
    if not b.size:
        return False
    depth = np.cumsum(np.where((b == ord("[")) | (b == ord("{")), 1, -1))
    return int(depth.max()) > limit


_JSON_STRING = re.compile(r'"(?:[^"\\]+|\\.)*"')


# ----------------------------------------------------------- structures
def mapping(v, where):
    """``v`` as a dict (a JSON object)."""
    if not isinstance(v, dict):
        _fail(where, "an object", v)
    return v


def check_keys(d, where, *, required=(), optional=()):
    """Refuse missing required keys and keys outside ``required | optional``."""
    missing = [k for k in required if k not in d]
    if missing:
        raise SchemaError(join(where, missing[0]), "is missing.")
    allowed = set(required) | set(optional)
    unknown = sorted(str(k) for k in d if k not in allowed)
    if unknown:
        raise SchemaError(join(where, unknown[0]),
                          "is not a known key; expected keys: "
                          + ", ".join(sorted(allowed)) + ".")


def member(d, key, where):
    """``d[key]``, naming ``where.key`` when it is missing."""
    if key not in d:
        raise SchemaError(join(where, key), "is missing.")
    return d[key]


# --------------------------------------------------------------- scalars
def _range_text(kind, low, high):
    if low is not None and high is not None:
        return f"{kind} in [{low}, {high}]"
    if low is not None:
        return f"{kind} >= {low}"
    if high is not None:
        return f"{kind} <= {high}"
    return kind


def integer(v, where, *, low=None, high=None):
    """``v`` as an int (a JSON integer, not a bool) in ``[low, high]``."""
    if type(v) is not int or (low is not None and v < low) or (high is not None and v > high):
        _fail(where, _range_text("an int", low, high), v)
    return v


def real(v, where, *, low=None, high=None, allow_nan=False):
    """``v`` as a finite float (a JSON number, not a bool) in ``[low, high]``.

    With ``allow_nan``, NaN is accepted as well.
    """
    expected = _range_text("a finite number", low, high) + (" or NaN" if allow_nan else "")
    if type(v) is int:
        try:
            x = float(v)
        except OverflowError:
            _fail(where, expected, v)
    elif type(v) is float:
        x = v
    else:
        _fail(where, expected, v)
    if math.isnan(x) and allow_nan:
        return x
    if (not math.isfinite(x) or (low is not None and x < low)
            or (high is not None and x > high)):
        _fail(where, expected, v)
    return x


def string(v, where, *, choices=None):
    """``v`` as a str, one of ``choices`` when given."""
    if not isinstance(v, str) or (choices is not None and v not in choices):
        expected = "a str" if choices is None else "one of " + ", ".join(map(repr, choices))
        _fail(where, expected, v)
    return v


# ---------------------------------------------------------------- arrays
def _list(v, where, kind):
    if not isinstance(v, list):
        _fail(where, f"a list of {kind}", v)


def _first(v, bad):
    return next(i for i, x in enumerate(v) if bad(x))


_NUMBER_TYPES = frozenset((int, float))


def _types(items):
    """The set of the exact types in ``items`` (one pass in C: fast on big lists)."""
    return set(map(type, items))


def int_array(v, where, *, length=None, low=None, high=None, per="entry"):
    """``v`` (a list of ints in ``[low, high]``) as an int64 array."""
    _list(v, where, "ints")
    if length is not None and len(v) != length:
        raise SchemaError(where, f"must have {length} entries (one per {per}); got {len(v)}.")
    expected = _range_text("an int", low, high)
    if not _types(v) <= {int}:
        i = _first(v, lambda x: type(x) is not int)
        _fail(join(where, i), expected, v[i])
    if v and ((low is not None and min(v) < low) or (high is not None and max(v) > high)):
        i = _first(v, lambda x: (low is not None and x < low) or (high is not None and x > high))
        _fail(join(where, i), expected, v[i])
    if v and (min(v) < -2 ** 63 or max(v) >= 2 ** 63):
        i = _first(v, lambda x: not -2 ** 63 <= x < 2 ** 63)
        _fail(join(where, i), "an int that fits in 64 bits", v[i])
    return np.array(v, dtype=np.int64).reshape(len(v))


def _is_number(x):
    t = type(x)
    return t is float or t is int


def _overflows(x):
    try:
        float(x)
    except OverflowError:
        return True
    return False


def _to_floats(v, where, expected):
    """float64 array of a flat list already known to hold only ints and floats."""
    try:
        return np.array(v, dtype=np.float64).reshape(len(v))
    except OverflowError:  # an int beyond the float range
        i = _first(v, _overflows)
        _fail(join(where, i), expected, v[i])


def real_array(v, where, *, length=None, low=None, per="entry", allow_inf=False):
    """``v`` (a list of finite numbers >= ``low``) as a float64 array.

    With ``allow_inf``, ``+inf`` is accepted as well.
    """
    _list(v, where, "numbers")
    if length is not None and len(v) != length:
        raise SchemaError(where, f"must have {length} entries (one per {per}); got {len(v)}.")
    expected = _range_text("a finite number", low, None) + (" or inf" if allow_inf else "")
    if not _types(v) <= _NUMBER_TYPES:
        i = _first(v, lambda x: not _is_number(x))
        _fail(join(where, i), expected, v[i])
    a = _to_floats(v, where, expected)
    ok = np.isfinite(a) | (allow_inf & (a == np.inf))
    bad = ~ok if low is None else ~(ok & (a >= low))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        _fail(join(where, i), expected, v[i])
    return a


def real_matrix(v, where, *, rows, cols, per="node"):
    """``v`` (``rows`` lists of ``cols`` finite numbers) as a float64 array."""
    _list(v, where, "lists of numbers")
    if len(v) != rows:
        raise SchemaError(where, f"must have {rows} rows (one per {per}); got {len(v)}.")
    if _types(v) != {list} or set(map(len, v)) != {cols}:
        for i, r in enumerate(v):
            if not isinstance(r, list):
                _fail(join(where, i), f"a list of {cols} finite numbers", r)
            if len(r) != cols:
                raise SchemaError(join(where, i), f"must have {cols} entries; got {len(r)}.")
    if not _types(itertools.chain.from_iterable(v)) <= _NUMBER_TYPES:
        i = _first(v, lambda r: not all(_is_number(x) for x in r))
        j = _first(v[i], lambda x: not _is_number(x))
        _fail(join(join(where, i), j), "a finite number", v[i][j])
    try:
        a = np.array(v, dtype=np.float64).reshape(rows, cols)
    except OverflowError:  # an int beyond the float range
        i = _first(v, lambda r: any(_overflows(x) for x in r))
        j = _first(v[i], _overflows)
        _fail(join(join(where, i), j), "a finite number", v[i][j])
    bad = ~np.isfinite(a)
    if bad.any():
        i, j = (int(k) for k in np.argwhere(bad)[0])
        _fail(join(join(where, i), j), "a finite number", v[i][j])
    return a


def real_lists(v, where, *, length, per="node"):
    """``v`` (``length`` lists of finite numbers, each of any size) as float64 arrays."""
    _list(v, where, "lists of numbers")
    if len(v) != length:
        raise SchemaError(where, f"must have {length} entries (one per {per}); got {len(v)}.")
    empty = np.empty(0)
    out = []
    for i, r in enumerate(v):
        if isinstance(r, list) and not r:
            out.append(empty)  # one shared array: most nodes have no categories
        else:
            out.append(real_array(r, join(where, i)))
    return out


def string_list(v, where, *, length=None):
    """``v`` as a list of ``length`` strings."""
    _list(v, where, "strings")
    if length is not None and len(v) != length:
        raise SchemaError(where, f"must have {length} entries; got {len(v)}.")
    for i, x in enumerate(v):
        string(x, join(where, i))
    return list(v)
