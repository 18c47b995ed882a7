"""Files of the ``spotree`` command: CSV tables, problem specs and models.

Everything here fails with a :class:`CLIError` whose one-line message names
the user's file (and, for table cells, the column and line), never a temp
file or an internal argument name. Output paths are checked before any work
is done, and outputs are written to a temporary file and renamed into place,
so a failed command leaves nothing behind.
"""

from __future__ import annotations

import csv
import errno
import fnmatch
import json
import os
import re
import tempfile
import warnings

import numpy as np
import pandas as pd

# Before pandas 3.1, read_csv's default float parser is not correctly rounded:
# "2.2517997595648356e+16" came back one unit in the last place off
# (2.251799759564836e+16, pandas 1.5.3 to 3.0.6), so a table written with
# repr() was not read back bit for bit. "round_trip" parses with Python's
# own float(); pandas 3.1 makes its default exact and deprecates the option.
_PANDAS_VERSION = tuple(int(v) for v in re.findall(r"\d+", pd.__version__)[:2])
_EXACT_FLOATS = {} if _PANDAS_VERSION >= (3, 1) else {"float_precision": "round_trip"}

__all__ = ["CLIError", "check_input_file", "check_output_file", "check_output_dir",
           "check_not_an_input",
           "read_table", "select_columns", "numeric_matrix", "feature_frame",
           "check_summable",
           "load_problem", "load_model", "save_model", "write_output"]


class CLIError(Exception):
    """A user-facing error: printed as one line, exit code 1."""


# ------------------------------------------------------------------ paths
def check_input_file(path, what):
    """Fail unless ``path`` is a readable regular file; ``what`` names it ("data file")."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise CLIError(f"{what} {path} is a directory, not a file")
    if not os.path.exists(path):
        raise CLIError(f"{what} not found: {path}")
    if not os.access(path, os.R_OK):
        raise CLIError(f"{what} {path} is not readable (permission denied)")
    return path


def _existing_ancestor(folder):
    while folder and not os.path.exists(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return folder


def _check_creatable(folder, option, path):
    """Fail unless files can be created in ``folder`` (or in the folders it will need)."""
    base = _existing_ancestor(folder)
    if not os.path.isdir(base):
        raise CLIError(f"{option} {path}: {base} is not a directory")
    if base != folder:  # folders to create: the first existing one must take them
        if not os.access(base, os.W_OK | os.X_OK):
            raise CLIError(f"{option} {path}: cannot create folders in {base} "
                           "(permission denied)")
    # Only creating a file tells for sure (read-only mounts, /proc, ACLs, and
    # root, for whom os.access says yes to all); the probe is removed at once.
    try:
        with tempfile.NamedTemporaryFile(dir=base, prefix=".spotree-probe-"):
            pass
    except OSError as exc:
        what = "folders" if base != folder else "files"
        raise CLIError(f"{option} {path}: cannot create {what} in {base} "
                       f"({_reason(exc, base)})") from None


def _reason(exc, folder=None):
    if exc.errno == errno.ENOENT and folder is not None and os.path.isdir(folder):
        return "this folder does not accept new files"
    return exc.strerror or type(exc).__name__


def check_output_file(path, option):
    """Fail early when ``path`` cannot be written (a directory, no permission...)."""
    path = os.fspath(path)
    if not path or path.endswith(os.sep):
        raise CLIError(f"{option} {path!r} must be a file path")
    if os.path.isdir(path):
        raise CLIError(f"{option} {path} is a directory, not a file")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise CLIError(f"{option} {path} is not writable (permission denied)")
    if os.path.exists(path) and not os.path.isfile(path):
        return path  # a pipe or a device (/dev/stdout): written in place, no file made
    # A link is written through: its target's folder takes the new file.
    _check_creatable(os.path.dirname(os.path.realpath(path)), option, path)
    return path


def check_not_an_input(path, option, inputs):
    """Fail when the output ``path`` is one of the command's input files.

    ``inputs`` maps each input's option ("--data") to its path. Writing the
    output would replace the input (a model written over the training CSV).
    """
    if not os.path.exists(path):
        return
    for other, src in inputs.items():
        if src is None or not os.path.exists(src):
            continue
        try:
            same = os.path.samefile(path, src)
        except OSError:
            same = os.path.realpath(path) == os.path.realpath(src)
        if same:
            raise CLIError(f"{option} {path} is also the {other} input: writing it would "
                           f"replace that file; choose another {option} path")


def check_output_dir(path, option):
    """Fail early when the folder ``path`` cannot be created or written."""
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise CLIError(f"{option} {path} exists and is not a directory")
    _check_creatable(os.path.abspath(path), option, path)
    return path


def write_output(path, writer, option, mode="w"):
    """``writer(fh)`` into ``path`` atomically; OS errors name ``path`` and the reason."""
    from .._atomic import atomic_write

    try:
        atomic_write(path, writer, mode=mode)
    except OSError as exc:
        folder = os.path.dirname(os.path.abspath(path))
        raise CLIError(f"{option} {path}: cannot write the file "
                       f"({_reason(exc, folder)})") from None


# ----------------------------------------------------------------- tables
def _records(path):
    """(line number, fields) of each non-blank record, as pandas counts them.

    pandas skips a line that is empty or all blanks, but a line of bare
    commas is a row (of empty cells).
    """
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        for fields in reader:
            if len(fields) > 1 or (fields and fields[0].strip()):
                yield reader.line_num, fields


def _separator_hint(columns, commas_in_rows=False):
    """A hint when the header is one column holding ';' or a tab: another separator.

    ``commas_in_rows``: the data rows hold commas that the header does not, decimal
    commas (why files use ';'): the conversion then reads them as decimal points,
    or it wrote text cells ('1,0') that the numbers columns refuse.
    """
    columns = [str(c) for c in columns]
    if len(columns) == 1:
        for sep, name in ((";", "semicolons"), ("\t", "tabs")):
            if sep in columns[0]:
                decimal = ", decimal=','" if commas_in_rows else ""
                return (f" (the header is a single column {columns[0][:40]!r}: the file "
                        f"seems separated by {name}; spotree reads comma-separated files, "
                        f"e.g. convert it with pandas: pd.read_csv(path, sep={sep!r}{decimal})"
                        ".to_csv(new_path, index=False))")
    return ""


def _header(path):
    try:
        for _, fields in _records(path):
            return [f.strip() for f in fields]
    except UnicodeDecodeError:
        raise CLIError(f"{path} is not a text CSV file (not UTF-8)") from None
    except csv.Error as exc:
        raise CLIError(f"{path} is not a valid CSV file: {exc}") from None
    raise CLIError(f"{path} is empty: expected a header line and data rows")


def read_table(path, option="--data"):
    """Read a CSV file with pandas; returns a DataFrame.

    The header must name every column once; there must be data rows; rows
    with more fields than the header are refused with their line number.
    Cell values are checked later, per selected column, by
    :func:`numeric_matrix`.
    """
    check_input_file(path, "data file")
    header = _header(path)
    seen, dup = set(), []
    for h in header:
        if h in seen and h not in dup:
            dup.append(h)
        seen.add(h)
    if dup:
        raise CLIError(f"{path} has duplicate column names: {', '.join(map(repr, dup))}")
    try:
        # names= keeps the header as written (pandas would rename a repeat "x.1");
        # index_col=False never takes a column as the index. Rows longer than the
        # header would then lose their extra fields with a mere ParserWarning:
        # made an error here.
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            # Only an empty cell is a missing value: the text "nan", "NA" or
            # "null" is text (pandas would read it as missing without a word).
            df = pd.read_csv(path, header=0, names=header, encoding="utf-8-sig",
                             skipinitialspace=True, index_col=False,
                             keep_default_na=False, na_values=[""], **_EXACT_FLOATS)
    except pd.errors.ParserWarning:
        raise _long_row(path, header) from None
    except pd.errors.EmptyDataError:
        raise CLIError(f"{path} is empty: expected a header line and data rows") from None
    except pd.errors.ParserError as exc:
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if m:
            raise CLIError(f"{path}, line {m.group(2)}: {m.group(3)} fields but the header "
                           f"has {m.group(1)}{_separator_hint(header, True)}") from None
        raise CLIError(f"{path} is not a valid CSV file: {' '.join(str(exc).split())}") \
            from None
    except UnicodeDecodeError:
        raise CLIError(f"{path} is not a text CSV file (not UTF-8)") from None
    if df.shape[0] == 0:
        raise CLIError(f"{path} has a header but no data rows")
    return df


def _long_row(path, header):
    n_header, hint = len(header), _separator_hint(header, commas_in_rows=True)
    for line, fields in _records(path):
        while fields and not fields[-1].strip():  # a trailing comma adds no value
            fields = fields[:-1]
        if len(fields) > n_header:
            return CLIError(f"{path}, line {line}: {len(fields)} fields but the header "
                            f"has {n_header}{hint}")
    return CLIError(f"{path}: some rows have more fields than the header ({n_header}){hint}")


def select_columns(spec, columns, option, path):
    """Column names matching a comma-separated list of names / shell patterns.

    Each item must add a column: a name given twice is an error, not dropped.
    """
    columns = [str(c) for c in columns]
    out = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item in columns:  # a name first: "cost[0]" names that column, not "cost0"
            hits = [item]
        elif any(ch in item for ch in "*?["):
            hits = [h for h in columns if fnmatch.fnmatchcase(h, item)]
        else:
            hits = []
        if not hits:
            shown = ", ".join(columns[:12]) + (", ..." if len(columns) > 12 else "")
            raise CLIError(f"{option}: no column {item!r} in {path} (columns: {shown})"
                           f"{_separator_hint(columns)}")
        new = [h for h in hits if h not in out]
        if not new:
            # A repeated name (x2,x2), or a pattern that adds nothing: a typo for
            # another column, most likely, so say so rather than drop it.
            raise CLIError(f"{option}: {item!r} selects only column(s) already selected "
                           f"({', '.join(hits)}); give each column once")
        out += new
    if not out:
        raise CLIError(f"{option} names no columns")
    return out


def _bad_cell(path, df, col, row, feature=False, note="", what=None):
    """The one-line error for cell (row, col) of ``df``, read back from the file.

    ``feature``: a feature column, where an empty cell is a missing value, so
    the text "nan" gets that hint. ``note`` ends the message. ``what`` says
    what is wrong with a cell that holds a valid number (its text is ``{}``).
    """
    j = list(df.columns).index(col)
    line, text, n_fields = None, "", None
    try:
        for k, (ln, fields) in enumerate(_records(path)):
            if k == row + 1:  # record 0 is the header
                line, n_fields = ln, len(fields)
                text = fields[j].strip() if j < len(fields) else ""
                break
    except (OSError, UnicodeDecodeError, csv.Error):
        pass
    where = f"{path}, line {line}" if line is not None else f"{path}, row {row + 1}"
    if what is not None:
        what = what.format(text or df[col].iloc[row])
    elif n_fields is not None and n_fields <= j:
        what = f"missing (the line has {n_fields} fields, the header {df.shape[1]})"
    elif not text:
        what = "empty cell"
    else:
        try:
            value = float(text)
            if feature and np.isnan(value):
                what = (f"the text {text!r} is not a number; leave the cell empty for a "
                        "missing value")
            else:
                what = f"{text} is not a finite number (NaN and infinity are not allowed)"
        except ValueError:
            what = f"{text!r} is not a number"
    return CLIError(f"{where}, column {col!r}: {what}{note}")


def numeric_matrix(df, cols, path):
    """The columns ``cols`` of ``df`` as a finite float64 array of shape (n, len(cols))."""
    out = np.empty((df.shape[0], len(cols)), dtype=np.float64, order="F")
    for j, col in enumerate(cols):
        s = df[col]
        # pandas reads the text True/False as booleans, which would pass as 1/0.
        if pd.api.types.is_bool_dtype(s.dtype):
            raise _bad_cell(path, df, col, 0)
        if pd.api.types.is_numeric_dtype(s.dtype):
            v = s.to_numpy(dtype=np.float64, na_value=np.nan)
        else:  # text somewhere in the column: the non-numbers become NaN
            v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64,
                                                           na_value=np.nan)
            boolean = s.map(lambda x: isinstance(x, (bool, np.bool_))).to_numpy(dtype=bool)
            v = np.where(boolean, np.nan, v)
        finite = np.isfinite(v)
        if not finite.all():
            raise _bad_cell(path, df, col, int(np.argmin(finite)))
        out[:, j] = v
    return np.ascontiguousarray(out)


def feature_frame(df, cols, path, categories=None, *, fitted=False):
    """The feature columns as a DataFrame the estimators take.

    A column of numbers keeps them, with empty cells as missing values (NaN),
    which the trees route; only an empty cell is missing (the text "nan" is
    text). A column whose every non-empty cell is text is a categorical
    feature (its labels are kept as strings, as the file writes them: the
    text True / False too, which pandas reads as booleans). A column that mixes numbers
    and text, or holds an infinity, is an error naming the cell.

    With ``fitted`` (prediction), ``categories`` is the model's
    ``category_values_`` (None: every column numeric): a column that was
    numeric at fit must hold numbers (text is an error naming the cell), and
    a label never seen at fit is an error naming its line.
    """
    out = {}
    for j, col in enumerate(cols):
        s = df[col]
        labels_at_fit = None if categories is None else categories[j]
        numeric_at_fit = fitted and labels_at_fit is None
        if labels_at_fit is not None and s.isna().all():
            # Every cell empty: pandas reads numbers (NaN), but these are missing
            # labels of a categorical column, which the trees route.
            out[col] = pd.Series(None, index=df.index, dtype=object)
            continue
        if labels_at_fit is not None and not _holds_text(s):
            # Labels that look like numbers (store ids '10', '20' of a model fitted in
            # Python) or booleans: pandas read them as such, so they are read again
            # as the file writes them.
            s = _column_text(path, df, col)
        elif not fitted and _holds_booleans(s):
            # The text True / False (any case): pandas reads booleans, which would
            # pass as the numbers 1 / 0; it is text, so the column is categorical.
            s = _column_text(path, df, col)
        if pd.api.types.is_numeric_dtype(s.dtype):
            v = s.to_numpy(dtype=np.float64, na_value=np.nan)
            text = None
        else:
            num = pd.to_numeric(s, errors="coerce")
            text = s.notna() & num.isna()
            if text.any() and numeric_at_fit:
                raise _bad_cell(path, df, col, int(np.argmax(text.to_numpy())), feature=True,
                                note=" (the model was fitted with numbers in this column)")
            # A column of labels at fit takes every cell as a label ("3" too: an
            # unseen one), not as a column of numbers with a text cell.
            if labels_at_fit is not None or (text | s.isna()).all():
                labels = s.astype("string").str.strip()
                if labels_at_fit is not None:
                    seen = set(map(str, labels_at_fit))
                    unseen = labels.notna() & ~labels.isin(seen)
                    if unseen.any():
                        row = int(np.argmax(unseen.to_numpy()))
                        raise _unseen_category(path, df, col, row, labels.iloc[row], seen)
                out[col] = labels.astype(object).where(labels.notna(), None)
                continue
            if text.any():
                raise _bad_cell(path, df, col, int(np.argmax(text.to_numpy())), feature=True)
            v = num.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = np.isinf(v) | (np.isnan(v) & s.notna().to_numpy())
        if bad.any():
            raise _bad_cell(path, df, col, int(np.argmax(bad)), feature=True)
        if labels_at_fit is not None:
            raise CLIError(f"{path}, column {col!r}: the model was fitted with text "
                           "(categories) in this column; here it holds numbers")
        out[col] = v
    return pd.DataFrame(out, index=df.index, columns=list(cols))


def _holds_text(s):
    """Whether pandas kept the cells of ``s`` as text (not numbers nor booleans)."""
    if pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
        return False
    return bool((s.isna() | s.map(lambda v: isinstance(v, str))).all())


def _holds_booleans(s):
    """Whether pandas read cells of ``s`` as booleans (the file's text True / False)."""
    if pd.api.types.is_bool_dtype(s.dtype):
        return True
    return s.dtype == object and bool(s.map(lambda v: isinstance(v, (bool, np.bool_))).any())


def _column_text(path, df, col):
    """Column ``col`` of the file as written: a string per row, None for an empty cell."""
    j = list(df.columns).index(col)
    cells = []
    for k, (_, fields) in enumerate(_records(path)):
        if k:  # record 0 is the header
            cells.append(fields[j].strip() if j < len(fields) else "")
    if len(cells) != df.shape[0]:  # not the rows pandas read: keep pandas' values
        return df[col]
    return pd.Series([c or None for c in cells], index=df.index, dtype=object)


def _unseen_category(path, df, col, row, label, seen):
    line = None
    try:
        for k, (ln, _) in enumerate(_records(path)):
            if k == row + 1:
                line = ln
                break
    except (OSError, UnicodeDecodeError, csv.Error):
        pass
    where = f"{path}, line {line}" if line is not None else f"{path}, row {row + 1}"
    known = ", ".join(sorted(seen)[:8]) + (", ..." if len(seen) > 8 else "")
    return CLIError(f"{where}, column {col!r}: category {label!r} was never seen when the "
                    f"model was fitted (known: {known})")


def check_summable(C, cols, path, sample_weight=None):
    """Fail when a cost column's (weighted) sum overflows float64.

    A tree predicts the mean cost of the rows in each leaf, so a column whose
    sum is not finite (values near 1e308) cannot be averaged; it is reported
    by name instead of failing later inside the library.
    """
    from .._ridge import cost_unit

    with np.errstate(over="ignore", invalid="ignore"):
        # The weights in units of a power of two at the largest (a weighted mean
        # does not change): weights of 1e308 on costs of 5 were refused as "costs
        # too large to average", though the library fits them.
        A = (np.abs(C) if sample_weight is None
             else np.abs(C) * (sample_weight / cost_unit(sample_weight))[:, None])
        totals = A.sum(axis=0)
    bad = np.flatnonzero(~np.isfinite(totals))
    if bad.size:
        j = int(bad[0])
        raise CLIError(f"{path}, column {cols[j]!r}: the costs are too large to average "
                       f"(values up to {np.abs(C[:, j]).max():.3g}; their sum over "
                       f"{C.shape[0]} rows overflows float64); rescale the costs")


# ------------------------------------------------------- problems, models
def _is_model_file(path):
    stem = path[:-3] if path.lower().endswith(".gz") else path
    return os.path.splitext(stem)[1].lower() in (".mps", ".lp")


def load_problem(path):
    """The problem of a spec file (.json, .yaml) or of an MPS or LP model file."""
    from ..problems._linear import CheckTimeLimitError
    from ..problems._spec import load_problem as _load

    path = os.fspath(path)
    if _is_model_file(path):
        from ..problems import LinearProgram
        from ..problems._io import DEFAULT_CHECK_TIME_LIMIT

        check_input_file(path, "model file")
        try:
            # The spec files' time limit: a model file may be untrusted too.
            return LinearProgram.from_file(path, check_time_limit=DEFAULT_CHECK_TIME_LIMIT)
        except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
            raise CLIError(f"model file {path}: {exc.strerror or exc}") from None
        except CheckTimeLimitError as exc:
            raise CLIError(_slow_checks(exc)) from None
        except ValueError as exc:
            raise CLIError(" ".join(str(exc).split())) from None
    check_input_file(path, "problem spec file")
    try:
        return _load(path)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        raise CLIError(f"problem spec file {path}: {exc.strerror or exc}") from None
    except CheckTimeLimitError as exc:
        raise CLIError(_slow_checks(exc)) from None


def _slow_checks(exc):
    """The message of checks that ran out of time, with the way out the command has."""
    from ..problems._io import DEFAULT_CHECK_TIME_LIMIT

    msg = " ".join(str(exc).split()).split(" Building a LinearProgram")[0]
    return (f"{msg} The spotree command allows these checks of a problem "
            f"{DEFAULT_CHECK_TIME_LIMIT:g} s, since a file may be untrusted; for a problem "
            "you trust, fit in Python: spotree.problems.load_problem(path, "
            "check_time_limit=None) or LinearProgram.from_file(path, check_time_limit=None).")


def load_model(path):
    """The model saved at ``path`` and the CSV column names stored with it."""
    from .. import load
    from ..tree import _persist

    check_input_file(path, "model file")
    # load's own message says to pass a larger max_bytes, which no command takes.
    limit = _persist.MAX_BYTES
    size = os.path.getsize(path)
    if size > limit:
        raise CLIError(f"{path} is {size} bytes, larger than the {limit}-byte limit of the "
                       "spotree commands; if you trust the file, load it in Python: "
                       "spotree.load(path, max_bytes=...)")
    try:
        model = load(path, max_bytes=limit)
    except (ValueError, KeyError, TypeError) as exc:
        msg = " ".join(str(exc).split())
        raise CLIError(msg if str(path) in msg else f"{path}: {msg}") from None
    try:
        # Decoded as load decodes it: UTF-8, with or without a byte order mark
        # (the locale's encoding and a BOM lost the columns without a word).
        with open(path, encoding="utf-8-sig") as fh:
            columns = json.load(fh).get("columns")
    except (OSError, ValueError, AttributeError):
        columns = None
    return model, _check_columns(columns, model, path)


def _check_columns(columns, model, path):
    """The ``"columns"`` entry of a model file (CSV names, written by ``spotree fit``),
    checked against the model: ``predict`` labels its output and selects the
    features by these names, so a list of the wrong length or type would
    otherwise fail in pandas or scikit-learn with no word of the file."""
    if columns is None:
        return {}
    if not isinstance(columns, dict):
        raise CLIError(f"{path}: 'columns' must be an object with the keys 'features', "
                       f"'costs' and 'weights'; got {type(columns).__name__}")
    problem = getattr(model, "problem_", None)
    sizes = {"features": getattr(model, "n_features_in_", None),
             "costs": getattr(problem, "n_costs", None)}
    for key, size in sizes.items():
        names = columns.get(key)
        if names is None:
            continue
        what = f"a list of {size} column names" if size is not None else "a list of names"
        if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            raise CLIError(f"{path}: columns.{key} must be {what}; got {names!r:.80}")
        if size is not None and len(names) != size:
            raise CLIError(f"{path}: columns.{key} must be {what} (the model has {size} "
                           f"{key}); got {len(names)}")
        if len(set(names)) != len(names):
            raise CLIError(f"{path}: columns.{key} names a column twice: {names!r:.80}")
    fitted = getattr(model, "feature_names_in_", None)
    names = columns.get("features")
    if names is not None and fitted is not None and list(names) != [str(n) for n in fitted]:
        raise CLIError(f"{path}: columns.features {names!r:.80} are not the features the "
                       f"model was fitted with ({[str(n) for n in fitted]!r:.80})")
    weights = columns.get("weights")
    if weights is not None and not isinstance(weights, str):
        raise CLIError(f"{path}: columns.weights must be a column name or null; got "
                       f"{weights!r:.80}")
    return columns


def save_model(model, path, columns, option="--model"):
    """model.save, plus the CSV column names the CLI needs to predict later."""
    from ..tree._persist import save_model as _save

    try:
        _save(model, path, extra={"columns": columns})
    except OSError as exc:
        folder = os.path.dirname(os.path.abspath(path))
        raise CLIError(f"{option} {path}: cannot write the file "
                       f"({_reason(exc, folder)})") from None
