"""LinearProgram's input: argument checks, row-bound form, model files, JSON.

LinearProgram keeps its constraints in two forms: the linprog-style
``A_ub w <= b_ub, A_eq w = b_eq`` its users see, and HiGHS's row-bound
form ``rlo <= A w <= rhi`` (a ranged row is one row) that the solver and
the basis cache use. This module converts between them, validates the
constructor's arguments, and reads MPS/LP files into both forms.
"""

from __future__ import annotations

import numbers
import os
import re

import numpy as np
import scipy.sparse as sp

from .._validation import holds_kind
from . import _highs

def _check_matrix(A, name):
    """``A`` as a finite float64 2-D array or CSR matrix, or None."""
    if A is None:
        return None
    is_complex = A.dtype.kind == "c" if sp.issparse(A) else holds_kind(A, "c")
    if is_complex:
        # numpy and scipy cast it to float with only a ComplexWarning, keeping
        # the real parts: another set of constraints.
        raise ValueError(f"The '{name}' parameter of LinearProgram holds complex numbers; "
                         "constraint coefficients must be real.")
    if not sp.issparse(A) and holds_kind(A, "Mm"):
        raise _dates_error(name)
    if sp.issparse(A):
        if A.ndim != 2:
            raise ValueError(f"The '{name}' parameter of LinearProgram must be a 2-D matrix of "
                             f"shape (n_constraints, n_costs). Got a sparse array of shape "
                             f"{A.shape} instead.")
        try:
            A = A.tocsr().astype(np.float64)  # a copy: the caller's matrix is left alone
        except (TypeError, ValueError):
            raise ValueError(f"The '{name}' parameter of LinearProgram must hold numbers. "
                             f"Got a sparse matrix of dtype {A.dtype} instead.") from None
        A.sum_duplicates()
        A.eliminate_zeros()
        if not np.isfinite(A.data).all():
            raise ValueError(f"The '{name}' parameter of LinearProgram contains NaN or "
                             "infinity; constraint coefficients must be finite.")
        _check_magnitude(abs(A).max() if A.nnz else 0.0, name)
        return A
    try:
        arr = np.array(A, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"The '{name}' parameter of LinearProgram must be a 2-D array of "
                         f"numbers, a scipy.sparse matrix or None. Got {type(A).__name__} "
                         "instead.") from None
    if arr.ndim != 2:
        raise ValueError(f"The '{name}' parameter of LinearProgram must be a 2-D array of "
                         f"shape (n_constraints, n_costs). Got an array of shape "
                         f"{arr.shape} instead; write one constraint as [[...]].")
    if arr.size and not np.isfinite(arr).all():
        raise ValueError(f"The '{name}' parameter of LinearProgram contains NaN or "
                         "infinity; constraint coefficients must be finite.")
    _check_magnitude(np.abs(arr).max(initial=0.0), name)
    return arr


def _dates_error(name, owner="LinearProgram"):
    # numpy casts them to float silently, as counts of their own units
    # (durations in minutes against a capacity in hours).
    return ValueError(f"The '{name}' parameter of {owner} holds dates, times or durations, "
                      "which spotree does not turn into numbers on its own (each array "
                      "would count its own unit): convert them to numbers in one unit.")


def _check_magnitude(peak, name):
    # HiGHS refuses the whole model otherwise, with no word on which entry.
    if peak >= _highs.LARGE_MATRIX_VALUE:
        raise ValueError(f"The '{name}' parameter of LinearProgram has a coefficient of "
                         f"magnitude {peak:g}; HiGHS accepts only those below "
                         f"{_highs.LARGE_MATRIX_VALUE:g}. Rescale the rows or variables.")


def _check_vector(b, name, n, A_name):
    if holds_kind(b, "c"):  # (its real parts were kept, as in _check_matrix)
        raise ValueError(f"The '{name}' parameter of LinearProgram holds complex numbers; "
                         "right-hand sides must be real.")
    if holds_kind(b, "Mm"):
        raise _dates_error(name)
    try:
        arr = np.array(b, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"The '{name}' parameter of LinearProgram must be a 1-D array of "
                         f"numbers. Got {type(b).__name__} instead.") from None
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"The '{name}' parameter of LinearProgram must have shape ({n},) "
                         f"to match the {n} row(s) of '{A_name}'. Got shape {arr.shape} "
                         "instead.")
    if not np.isfinite(arr).all():
        raise ValueError(f"The '{name}' parameter of LinearProgram contains NaN or "
                         "infinity; right-hand sides must be finite.")
    big = np.flatnonzero(np.abs(arr) >= _highs.INFINITE_BOUND)
    if big.size:
        # HiGHS would read it as no bound (or refuse the model), unlike the
        # feasibility and boundedness checks.
        raise ValueError(f"The '{name}' parameter of LinearProgram has the entry "
                         f"{arr[big[0]]:g} (row {big[0]}); HiGHS reads right-hand sides of "
                         f"magnitude {_highs.INFINITE_BOUND:g} or more as infinite. Drop "
                         "that row or rescale it.")
    return arr


def _is_bound_scalar(v):
    return v is None or isinstance(v, (numbers.Real, np.floating, np.integer))


def _parse_bound(v, j, side):
    """One bound as a float (+-inf for None) and its stored form (None for inf)."""
    where = "" if j is None else f" of variable {j}"
    if v is None:
        return (-np.inf if side == "lower" else np.inf), None
    # (numpy's timedelta64 is an np.integer; float() of it failed with no name.)
    if isinstance(v, (bool, np.timedelta64)) or not _is_bound_scalar(v):
        article = "an" if side == "upper" else "a"
        raise ValueError(f"The 'bounds' parameter of LinearProgram has {article} {side} bound"
                         f"{where} that is not a number or None: {v!r}.")
    v = float(v)
    if np.isnan(v):
        raise ValueError(f"The 'bounds' parameter of LinearProgram has a NaN {side} bound"
                         f"{where}; use None for no bound.")
    if (side == "lower" and v == np.inf) or (side == "upper" and v == -np.inf):
        raise ValueError(f"The 'bounds' parameter of LinearProgram has an infinite {side} "
                         f"bound{where} pointing the wrong way ({v}); no w satisfies it.")
    if np.isfinite(v) and abs(v) >= _highs.INFINITE_BOUND:
        # HiGHS would read it as infinite, and the boundedness check would
        # not: the problem would fail when solved.
        raise ValueError(f"The 'bounds' parameter of LinearProgram has the {side} bound "
                         f"{v:g}{where}; HiGHS reads bounds of magnitude "
                         f"{_highs.INFINITE_BOUND:g} or more as infinite. Use None for no "
                         "bound, or rescale the variable.")
    return v, (None if np.isinf(v) else v)


def _parse_pair(pair, j):
    try:
        items = list(pair)
    except TypeError:
        items = None
    if items is None or len(items) != 2 or not all(_is_bound_scalar(x) for x in items):
        where = "" if j is None else f" for variable {j}"
        raise ValueError(f"The 'bounds' parameter of LinearProgram must be a (lo, hi) pair or "
                         f"a sequence of n_costs such pairs (None = unbounded). Got "
                         f"{pair!r}{where} instead.")
    lo, lo_s = _parse_bound(items[0], j, "lower")
    hi, hi_s = _parse_bound(items[1], j, "upper")
    if lo > hi:
        where = "" if j is None else f" of variable {j}"
        raise ValueError(f"The 'bounds' parameter of LinearProgram has lower bound {lo} > "
                         f"upper bound {hi}{where}; the problem is infeasible.")
    return lo, hi, (lo_s, hi_s)


def _parse_bounds(bounds):
    """Return ``(kind, lo, hi, stored)``; kind is 'pair' or 'list'."""
    if bounds is None or isinstance(bounds, (str, bytes)):
        raise ValueError("The 'bounds' parameter of LinearProgram must be a (lo, hi) pair or a "
                         "sequence of n_costs such pairs (None = unbounded, e.g. (None, None) "
                         f"for free variables). Got {bounds!r} instead.")
    if isinstance(bounds, np.ndarray):
        bounds = bounds.tolist()
    try:
        items = list(bounds)
    except TypeError:
        raise ValueError("The 'bounds' parameter of LinearProgram must be a (lo, hi) pair or a "
                         f"sequence of n_costs such pairs. Got {bounds!r} instead.") from None
    if len(items) == 2 and all(_is_bound_scalar(x) for x in items):
        lo, hi, stored = _parse_pair(items, None)
        return "pair", lo, hi, stored
    if not items:
        raise ValueError("The 'bounds' parameter of LinearProgram is an empty sequence; give "
                         "a (lo, hi) pair or one pair per variable.")
    parsed = [_parse_pair(p, j) for j, p in enumerate(items)]
    lo = np.array([p[0] for p in parsed])
    hi = np.array([p[1] for p in parsed])
    return "list", lo, hi, [p[2] for p in parsed]


def _check_names(names, d):
    if names is None:
        return None
    items = None if isinstance(names, (str, bytes)) else (
        list(names) if hasattr(names, "__iter__") else None)
    if (items is None or len(items) != d or not all(isinstance(s, str) for s in items)):
        raise ValueError(f"The 'variable_names' parameter of LinearProgram must be None or a "
                         f"sequence of {d} strings. Got {names!r} instead.")
    if len(set(items)) != d:
        dup = sorted({s for s in items if items.count(s) > 1})[:3]
        raise ValueError(f"The 'variable_names' parameter of LinearProgram has duplicate "
                         f"names: {', '.join(map(repr, dup))}.")
    return items


def _check_time_limit(limit, owner="LinearProgram"):
    if limit is None:
        return None
    if (isinstance(limit, bool) or not isinstance(limit, numbers.Real)
            or not limit > 0 or np.isnan(limit)):
        raise ValueError(f"The 'check_time_limit' parameter of {owner} must be a positive "
                         f"number of seconds or None. Got {limit!r} instead.")
    return float(limit)


def _rows_from_views(A_ub, b_ub, A_eq, b_eq, d):
    """The row-bound form ``(A, rlo, rhi)`` of the linprog-style constraints."""
    blocks, rlo, rhi = [], [], []
    if A_ub is not None:
        blocks.append(sp.csr_matrix(A_ub))
        rlo.append(np.full(len(b_ub), -np.inf))
        rhi.append(b_ub)
    if A_eq is not None:
        blocks.append(sp.csr_matrix(A_eq))
        rlo.append(b_eq)
        rhi.append(b_eq)
    if not blocks:
        return sp.csr_matrix((0, d)), np.zeros(0), np.zeros(0)
    return sp.vstack(blocks, format="csr"), np.concatenate(rlo), np.concatenate(rhi)


def _views_from_rows(A, rlo, rhi):
    """linprog-style ``A_ub, b_ub, A_eq, b_eq`` (sparse) of the row-bound form.

    An equality row goes to ``A_eq``; an "at most" bound to ``A_ub``, an
    "at least" bound negated to ``A_ub`` (a ranged row gives both).
    """
    eq = rlo == rhi
    up = ~eq & np.isfinite(rhi)
    down = ~eq & np.isfinite(rlo)
    A_ub = sp.vstack([A[up], -A[down]], format="csr")
    b_ub = np.concatenate([rhi[up], -rlo[down]])
    A_eq, b_eq = A[eq], rlo[eq]
    if A_ub.shape[0] == 0:
        A_ub = b_ub = None
    if A_eq.shape[0] == 0:
        A_eq = b_eq = None
    return A_ub, b_ub, A_eq, b_eq


def _matrix_to_json(A):
    if A is None:
        return None
    if sp.issparse(A):
        coo = A.tocoo()
        return {"shape": [int(s) for s in coo.shape], "row": coo.row.tolist(),
                "col": coo.col.tolist(), "data": coo.data.tolist()}
    return A.tolist()


#: MPS sections whose data lines hold numbers, and the bound types whose
#: line ends with one.
_MPS_SECTIONS = frozenset({"NAME", "ROWS", "COLUMNS", "RHS", "RANGES", "BOUNDS", "ENDATA",
                           "OBJSENSE", "OBJSENCE", "OBJNAME", "SOS", "QUADOBJ", "QMATRIX",
                           "QSECTION", "QCMATRIX", "CSECTION", "INDICATORS"})
_MPS_VALUED_BOUNDS = frozenset({"UP", "LO", "FX", "LI", "UI"})


def _is_mps_number(token):
    try:
        float(token)
    except ValueError:
        return False
    return True


def _check_bound_column(path, lineno, line, name, columns_known, columns):
    if columns_known and name not in columns:
        raise ValueError(
            f"{path}: malformed MPS file: line {lineno}: the BOUNDS section names column "
            f"{name!r}, which is not in the COLUMNS section ({line.strip()!r}).")


_MPS_SENSES = {"MAX": "max", "MAXIMIZE": "max", "MAXIMISE": "max",
               "MIN": "min", "MINIMIZE": "min", "MINIMISE": "min"}


def check_mps_numbers(path):
    """Refuse an MPS file whose value fields are not numbers, naming the line.

    HiGHS reads a value field that is not a number (``abc``) as 0 without a
    word, so a typo becomes a different model (one that may then be reported
    unbounded). The fields checked: the values of COLUMNS lines (``column row
    value [row value]``), of RHS and RANGES lines (``[set] row value [row
    value]``) and of the bounds that carry one (UP, LO, FX, LI, UI). Lines
    whose fields cannot be told apart (names with spaces in fixed format)
    are left to HiGHS.

    Also refuses a BOUNDS line for a column that COLUMNS does not define
    (HiGHS would add it as a new, unconstrained variable), when every
    COLUMNS line could be split into its fields.

    Returns
    -------
    str or None
        The objective sense the file states (``"max"`` or ``"min"``), or
        None: in its OBJSENSE section, else in PuLP's comment line
        ``*SENSE:Maximize`` (PuLP's ``writeMPS`` writes no OBJSENSE section
        by default, and keeps the objective of a maximization as it is).
        HiGHS reads such a file, and ``OBJSENSE MAXIMIZE`` written on one
        line (1.16), as a minimization without a word, so the caller prefers
        the stated sense.

    Raises
    ------
    ValueError
        ``"<path>: malformed MPS file: line <n>: ..."``.
    """
    import gzip

    opener = gzip.open if path.lower().endswith(".gz") else open
    section = stated = commented = None
    columns, columns_known = set(), True
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            tokens = line.split()
            if line.startswith("*"):
                # PuLP states the sense only in a comment ("*SENSE:Maximize"),
                # with the objective as written: other readers take it as min.
                m = re.fullmatch(r"\*SENSE:(MAXIMIZE|MINIMIZE)", line.strip().upper())
                if m:
                    commented = "max" if m.group(1) == "MAXIMIZE" else "min"
                continue
            if not tokens:
                continue
            if not line[0].isspace() and tokens[0].upper() in _MPS_SECTIONS:
                section = tokens[0].upper()
                if section in ("OBJSENSE", "OBJSENCE") and len(tokens) > 1:
                    stated = _MPS_SENSES.get(tokens[1].upper(), stated)
                continue
            if section in ("OBJSENSE", "OBJSENCE"):
                stated = _MPS_SENSES.get(tokens[0].upper(), stated)
                continue
            if section == "COLUMNS":
                if any("MARKER" in t.upper() for t in tokens):
                    continue
                fields = {3: (2,), 5: (2, 4)}.get(len(tokens), ())
                if fields:
                    columns.add(tokens[0])
                else:
                    columns_known = False
            elif section in ("RHS", "RANGES"):
                fields = {2: (1,), 3: (2,), 4: (1, 3), 5: (2, 4)}.get(len(tokens), ())
            elif section == "BOUNDS" and tokens[0].upper() in _MPS_VALUED_BOUNDS:
                fields = (len(tokens) - 1,) if len(tokens) in (3, 4) else ()
                if fields:
                    _check_bound_column(path, lineno, line, tokens[-2], columns_known, columns)
            elif section == "BOUNDS" and tokens[0].upper() in ("FR", "MI", "PL"):
                if len(tokens) in (2, 3):
                    _check_bound_column(path, lineno, line, tokens[-1], columns_known, columns)
                continue
            else:
                continue
            for k in fields:
                if not _is_mps_number(tokens[k]):
                    raise ValueError(
                        f"{path}: malformed MPS file: line {lineno}: {tokens[k]!r} in the "
                        f"{section} section is not a number ({line.strip()!r}).")
    return stated or commented


# A row whose left-hand side starts with a constant and a sense: a ranged
# row ("-3 <= x - y <= 0.5") or a reversed one ("3 >= x"), which HiGHS's LP
# reader refuses with "expected a number, found `x`".
_LP_CONSTANT_FIRST = re.compile(
    r"^\s*(?:[^:]*:)?\s*[+-]?\s*(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*(?:<=|>=|=<|=>|<|>|=)")
# A sense followed by a variable: terms on the right-hand side.
_LP_VARIABLE_RIGHT = re.compile(r"(?:<=|>=|=<|=>|<|>|=).*?(?<![\d.])[A-Za-z_]")
_LP_INFINITY = re.compile(r"[+-]?\s*inf(?:inity)?\b", re.IGNORECASE)


def _lp_line_hint(path, line, misparsed=True):
    """The LP file's line ``line`` and, for forms HiGHS refuses, how to write them.

    ``misparsed``: HiGHS's error is a parse failure ("expected a number"),
    not a named feature it does not support (indicator constraints, say),
    whose line alone is shown.
    """
    import gzip

    opener = gzip.open if path.lower().endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            for k, text in enumerate(fh, 1):
                if k == line:
                    break
            else:
                return ""
    except OSError:  # pragma: no cover - HiGHS has just read it
        return ""
    text = text.split("\\", 1)[0].strip()  # "\" starts a comment
    if not text or len(text) > 200:
        return ""
    hint = f" The line reads {text!r}."
    if not misparsed:
        return hint
    if _LP_CONSTANT_FIRST.match(text):
        hint += (" HiGHS's LP reader takes a constraint as 'terms sense constant': write a "
                 "double-sided (ranged) row such as '-3 <= x - y <= 0.5' as two rows "
                 "('x - y >= -3' and 'x - y <= 0.5'), or use an MPS file, whose RANGES "
                 "section LinearProgram.from_file reads.")
    elif _LP_VARIABLE_RIGHT.search(_LP_INFINITY.sub("", text)):
        hint += (" HiGHS's LP reader takes a constraint as 'terms sense constant': move the "
                 "variables to the left-hand side.")
    return hint


def read_model_file(path):
    """Read an MPS or LP file into LinearProgram's parts (see ``LinearProgram.from_file``).

    Returns the keyword arguments of ``LinearProgram._set`` (without
    ``basis_cache``) plus ``path``, as a str. Raises FileNotFoundError or a
    ValueError whose message starts with the path.
    """
    path = os.fspath(path)
    if not isinstance(path, str):
        path = os.fsdecode(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"model file not found: {path}")
    if not os.path.isfile(path):
        raise ValueError(f"{path}: not a file (expected an .mps or .lp model file).")
    stem = path[:-3] if path.lower().endswith(".gz") else path
    if os.path.splitext(stem)[1].lower() not in (".mps", ".lp"):
        raise ValueError(f"{path}: unknown model file type; LinearProgram.from_file reads "
                         "'.mps' and '.lp' files (optionally gzipped).")
    stated = None
    if os.path.splitext(stem)[1].lower() == ".mps":
        stated = check_mps_numbers(path)
    try:
        data = _highs.read_model(path)
    except ValueError as exc:
        message = " ".join(str(exc).split())
        line = getattr(exc, "line", None)
        if line is not None and os.path.splitext(stem)[1].lower() == ".lp":
            message += _lp_line_hint(path, line, "expected a number" in message)
        raise ValueError(message) from None
    tiny = [w for w in data["ignored"] if "at/below tolerance" in w]
    if tiny:
        raise ValueError(f"{path}: coefficients of magnitude below "
                         f"{_highs.READ_SMALL_MATRIX_VALUE:g}, which HiGHS's reader drops "
                         f"({tiny[0]}); rescale the rows or columns of the model.")
    if data["ignored"]:
        # A typo in a row name, or a repeated entry: HiGHS would read another
        # model than the one written, with only a log warning.
        shown = "; ".join(data["ignored"][:3])
        more = len(data["ignored"]) - 3
        kind = "MPS" if os.path.splitext(stem)[1].lower() == ".mps" else "LP"
        raise ValueError(f"{path}: malformed {kind} file: {shown}"
                         + (f" (and {more} more)" if more > 0 else "")
                         + "; HiGHS would ignore such entries.")
    A, n = data["A"].tocsr(), data["A"].shape[1]
    if n == 0:
        raise ValueError(f"{path}: the model has no variables.")
    integ = data["integrality"]
    if (integ > 1).any():
        j = int(np.flatnonzero(integ > 1)[0])
        raise ValueError(f"{path}: column {data['col_names'][j]!r} is semi-continuous or "
                         "semi-integer; LinearProgram supports continuous and integer "
                         "columns only.")
    lo, hi = data["col_lower"], data["col_upper"]
    if (lo > hi).any() or np.isnan(lo).any() or np.isnan(hi).any():
        j = int(np.flatnonzero(~(lo <= hi))[0])
        hint = ""
        if stated is not None or os.path.splitext(stem)[1].lower() == ".mps":
            if lo[j] == 0 and hi[j] < 0:
                # An old MPS convention, which some writers rely on and HiGHS
                # does not follow.
                hint = (" (an UP bound below 0 with no LO bound: some MPS readers then take "
                        "the lower bound as -infinity, HiGHS keeps 0; write it with an MI or "
                        "LO bound)")
        raise ValueError(f"{path}: column {data['col_names'][j]!r} has lower bound {lo[j]} "
                         f"> upper bound {hi[j]}{hint}; the problem is infeasible.")
    rlo, rhi = data["row_lower"], data["row_upper"]
    bad = ~(rlo <= rhi)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{path}: row {i} has lower bound {rlo[i]} > upper bound "
                         f"{rhi[i]}; the problem is infeasible.")
    if not np.isfinite(A.data).all():
        raise ValueError(f"{path}: the constraint matrix contains NaN or infinity.")
    # Free rows (both sides infinite) constrain nothing.
    keep = np.isfinite(rlo) | np.isfinite(rhi)
    A, rlo, rhi = A[keep], rlo[keep], rhi[keep]
    stored = [(None if np.isinf(a) else float(a), None if np.isinf(b) else float(b))
              for a, b in zip(lo, hi)]
    A_ub, b_ub, A_eq, b_eq = _views_from_rows(A, rlo, rhi)
    return dict(path=path, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, stored_bounds=stored,
                lo=lo.copy(), hi=hi.copy(), A=A, rlo=rlo.copy(), rhi=rhi.copy(),
                integrality=integ.astype(np.int8) if integ.any() else None,
                sense=stated or data["sense"], names=list(data["col_names"]))
