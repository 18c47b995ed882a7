"""Input checks shared by every layer of spotree.

Errors name the offending argument and say what was expected, so that a user
who passes a 1-D cost vector or a NaN learns it from the message alone.
Every estimator's ``fit`` takes its data through :func:`check_fit_inputs`
and its ``predict`` through :func:`check_features`, so that the same bad
input fails the same way everywhere.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from ._categories import (categorical_mask, code_by_value, encode_frame, is_dataframe, one_hot,
                          value_labels)

__all__ = ["check_costs", "cost_names", "check_sample_weight", "check_random_state_seed",
           "check_same_rows", "check_features", "check_realized_costs", "check_fit_inputs",
           "restored_on_failure"]


def check_same_rows(a, b, names=("X", "C")):
    """Raise unless ``a`` and ``b`` (arrays or row counts, named ``names``) have as many rows."""
    n_a = a if isinstance(a, numbers.Integral) else a.shape[0]
    n_b = b if isinstance(b, numbers.Integral) else b.shape[0]
    if n_a != n_b:
        raise ValueError(f"{names[0]} and {names[1]} must have the same number of rows; got "
                         f"{n_a} and {n_b}.")


class _StringsError(ValueError):
    """Strings given as numbers (callers name the argument in their message)."""


def holds_kind(value, kinds):
    """Whether ``value`` converts to a numpy array whose dtype kind is in ``kinds``
    ("c" complex, "Mm" dates and durations): kinds that numpy casts to float
    losing something (the imaginary part; the unit) with at most a warning.
    False for what does not convert (ragged lists): the caller's conversion
    names it."""
    try:
        return np.asarray(value).dtype.kind in kinds
    except (TypeError, ValueError):
        return False


def _as_real(values, name):
    """``values`` as float64; complex numbers are an error, not a warning.

    (numpy casts complex to float with only a ComplexWarning, dropping the
    imaginary part.) An array of strings or bytes is an error naming
    ``name``, as scikit-learn's ``check_array(dtype="numeric")`` refuses
    one; numpy converted numeric strings ("1.5") silently. So is one of
    dates or durations.
    """
    # Checked on the dtype, not by turning the ComplexWarning into an error:
    # catch_warnings resets every module's record of warnings already shown
    # (a user oracle's warning was printed again at every solve, once per
    # tree node) and is not thread-safe.
    arr = np.asarray(values)
    if arr.dtype.kind in "US":
        raise _StringsError(f"it holds strings (dtype {arr.dtype}), not numbers: convert them "
                            f"to numbers explicitly (for example "
                            f"np.asarray({name}, dtype=float))")
    if arr.dtype.kind in "Mm":
        # numpy casts them to float silently, as counts of their unit since
        # 1970 (costs of 1, 2 and 3 days were 1, 2 and 3).
        raise _StringsError(f"it holds dates, times or durations (dtype {arr.dtype}), which "
                            "spotree does not turn into numbers on its own: convert them to "
                            "numbers first")
    if np.iscomplexobj(arr):
        raise TypeError("complex numbers are not real numbers")
    if arr.dtype == object:
        # A numpy complex cell converts with only a ComplexWarning (a Python
        # complex fails in float()): its imaginary part was dropped.
        if np.vectorize(lambda v: isinstance(v, (complex, np.complexfloating)),
                        otypes=[bool])(arr).any():
            raise TypeError("complex numbers are not real numbers")
        # (pandas' nullable columns: their own conversion, as before.)
        try:
            return np.asarray(values, dtype=np.float64)
        except TypeError:
            # pandas' missing value pd.NA (of an Int64 or Float64 column) is not
            # a float, as None is (NaN): NaN too, so that the finiteness checks
            # name the cell instead of "float() argument must be ... 'NAType'".
            missing = np.vectorize(lambda v: v is pd.NA, otypes=[bool])(arr)
            if not missing.any():
                raise
            return np.where(missing, np.nan, arr).astype(np.float64)
    return arr.astype(np.float64, copy=False)


def check_costs(C, *, n_costs=None, name="C", allow_empty=True, names=None):
    """Return ``C`` as a finite float64 array of shape (m, n_costs).

    Parameters
    ----------
    C : array-like of shape (m, d)
        Cost vectors, one per row.
    n_costs : int or None, default=None
        Required number of columns (the problem's ``n_costs``).
    name : str, default="C"
        Name of the argument, used in error messages.
    allow_empty : bool, default=True
        Whether zero rows are accepted.
    names : sequence of str, callable or None, default=None
        The problem's variable names, or :func:`cost_names`'s callable that
        returns them (called only for a DataFrame): a DataFrame whose
        columns are these names in another order is refused. The latter
        also ends the error for costs of the wrong shape with the problem's
        ``cost_shape_hint`` (how to flatten them).

    Returns
    -------
    C : ndarray of shape (m, d), dtype float64
    """
    _check_column_order(C, names, name)
    if sp.issparse(C):
        # (numpy wrapped it in a 0-d object array: "setting an array element
        # with a sequence".)
        raise ValueError(f"{name} must be a dense 2-D array; got a scipy sparse "
                         f"{type(C).__name__}: pass {name}.toarray().")
    try:
        arr = _as_real(C, name)
    except _StringsError as exc:
        raise ValueError(f"{name} must be a numeric 2-D array; {exc}.") from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric 2-D array; got {type(C).__name__} "
                         f"that cannot be converted to float ({exc}).") from None
    # Decisions (W, a vertex list V) go through here too: their messages spoke
    # of cost vectors and samples.
    decisions = name in ("W", "V", "vertices")
    if arr.ndim != 2:
        if arr.ndim != 1:
            hint = ""
        elif decisions:
            hint = " Reshape a single decision with w.reshape(1, -1)."
        else:
            hint = " Reshape a single cost vector with c.reshape(1, -1)."
        rows = "n_decisions" if name in ("V", "vertices") else "n_samples"
        raise ValueError(f"{name} must be a 2-D array of shape ({rows}, n_costs); "
                         f"got an array with {arr.ndim} dimension(s) and shape "
                         f"{arr.shape}.{hint}{_problem_hint(names, arr.shape, name)}")
    if n_costs is not None and arr.shape[1] != n_costs:
        raise ValueError(f"{name} has {arr.shape[1]} columns but the problem has "
                         f"n_costs={n_costs}: each row must hold one cost per decision "
                         f"variable.{_problem_hint(names, arr.shape, name)}")
    if not allow_empty and arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one row is required.")
    if arr.size and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} contains NaN or infinity (first at row {bad[0]}, "
                         f"column {bad[1]}); {'decisions' if decisions else 'costs'} must "
                         f"be finite.")
    return arr


def cost_names(problem):
    """A callable giving ``problem``'s variable names in cost order (``variable_names``)
    or None; :func:`check_costs` calls it only when the costs are a DataFrame, and asks
    it for the problem's hint when the costs have the wrong shape."""
    # Deferred: this runs at every solve and matters only for a DataFrame, and a
    # problem may build its names on first use (Assignment: a million names, 0.5 s).
    return _ProblemCosts(problem)


class _ProblemCosts:
    """What :func:`check_costs` may ask a problem, only when it needs it."""

    __slots__ = ("problem",)

    def __init__(self, problem):
        self.problem = problem

    def __call__(self):
        return getattr(self.problem, "variable_names", None)

    def shape_hint(self, shape, name):
        hint = getattr(self.problem, "cost_shape_hint", None)
        if not callable(hint):
            return None
        try:
            return hint(shape, name)
        except Exception:  # a subclass's faulty hint must not hide the shape error
            return None


def _problem_hint(names, shape, name):
    """The problem's hint for costs ``name`` of ``shape`` (see :func:`cost_names`), or ''."""
    ask = getattr(names, "shape_hint", None)
    hint = ask(shape, name) if ask is not None else None
    return f" {hint}" if hint else ""


def _check_column_order(C, names, name):
    """Refuse a DataFrame whose columns are the variables' names in another order.

    The costs are read by position: such a frame (a model file's variables
    reordered by its tool, a frame built from a dict) would pair every cost
    with another variable, silently.
    """
    columns = getattr(C, "columns", None)
    if columns is None:
        return
    if callable(names):
        names = names()
    if names is None or len(columns) != len(names):
        return
    columns, names = [str(c) for c in columns], [str(n) for n in names]
    if columns != names and sorted(columns) == sorted(names):
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        raise ValueError(f"{name} is a DataFrame whose columns are the problem's "
                         f"variable_names in another order; costs are read by position, so "
                         f"each would be paired with another variable. Put the columns in "
                         f"the problem's order ({shown}): {name}[problem.variable_names].")


def check_sample_weight(sample_weight, n_samples, *, name="sample_weight",
                        allow_all_zero=False):
    """Return validated non-negative float64 weights of shape (n_samples,).

    ``None`` means unit weights.
    """
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    # (Real, not Number: a complex scalar failed in float() with no name.)
    if isinstance(sample_weight, numbers.Real):
        sw = np.full(n_samples, float(sample_weight))
    else:
        # (pandas' tz-aware dtype has no numpy dtype, but a kind.)
        kind = getattr(sample_weight, "dtype", None)
        if kind is None:  # a list of numpy dates
            try:
                kind = np.asarray(sample_weight).dtype
            except (TypeError, ValueError):
                pass
        if getattr(kind, "kind", None) in ("M", "m"):
            # numpy casts them to float as counts of their unit since 1970
            # without a word: dates became weights of about 1.6e18.
            raise ValueError(f"{name} must be a 1-D array of real numbers; it holds dates, "
                             f"times or durations (dtype {kind}), which spotree does not turn "
                             "into numbers on its own: convert them first.")
        try:
            sw = _as_real(sample_weight, name)
        except _StringsError as exc:
            raise ValueError(f"{name} must be a 1-D array of real numbers; {exc}.") from None
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a 1-D array of real numbers.") from None
    if sw.ndim != 1 or sw.shape[0] != n_samples:
        raise ValueError(f"{name} must have shape ({n_samples},) to match the number of "
                         f"samples; got shape {sw.shape}.")
    if sw.size and not np.isfinite(sw).all():
        raise ValueError(f"{name} contains NaN or infinity; weights must be finite.")
    if (sw < 0).any():
        raise ValueError(f"{name} contains negative values (min {sw.min():g}); weights "
                         "must be non-negative.")
    if not allow_all_zero and sw.size and not (sw > 0).any():
        raise ValueError(f"{name} sums to zero: at least one sample needs a positive "
                         "weight.")
    return sw


def check_random_state_seed(random_state):
    """Draw a 31-bit seed from ``random_state`` (None, an int or a numpy RandomState).

    As scikit-learn's ``check_random_state``: a numpy Generator is refused.
    """
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _numeric_array(X):
    """A non-DataFrame ``X`` as floats, or an error naming the first cell of text.

    Arrays of numbers, ragged lists and other odd input go on to
    scikit-learn's checks unchanged, whose messages cover them.
    """
    if sp.issparse(X) or is_dataframe(X):
        return X
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError):
        return X
    if arr.dtype.kind in "Mm":
        raise ValueError(f"X holds dates, times or durations (dtype {arr.dtype}), which "
                         "spotree does not turn into numbers on its own: convert them to "
                         "numbers first (for example days since a reference date).")
    if arr.dtype.kind not in "OUS" or arr.ndim != 2:
        return X
    if arr.dtype.kind == "O":
        # None is a missing value, as in a DataFrame, and so is pandas' pd.NA
        # (the cells of an Int64 frame's to_numpy()). (Tested one by one:
        # np.equal(arr, None) raised "truth value ... ambiguous" on a cell
        # holding an array.)
        kind = np.vectorize(lambda v: 1 if v is None or v is pd.NA else
                            2 if isinstance(v, (complex, np.complexfloating)) else 0,
                            otypes=[np.int8])(arr)
        if (kind == 2).any():
            # (numpy keeps the real part of a numpy complex with only a warning.)
            i, j = np.argwhere(kind == 2)[0]
            raise ValueError(f"X holds a complex number at row {i}, column {j} "
                             f"({arr[i, j]!r}); complex numbers are not real numbers.")
        arr = np.where(kind == 1, np.nan, arr)
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError):  # the first cell that is not a number, below
        pass
    for i, j in np.ndindex(arr.shape):
        v = arr[i, j]
        v = v.item() if isinstance(v, np.generic) else v
        try:
            float(v)
        except ValueError:
            raise ValueError(
                f"X holds text: row {i}, column {j} is {v!r}, not a number. A numpy "
                "array must be numeric; to use text as categories pass a pandas DataFrame "
                "(its text and category columns are categorical features), or encode the "
                "text as numbers.") from None
        except TypeError as exc:  # a dict, an array: numpy's message named no cell
            raise TypeError(f"X holds {type(v).__name__} at row {i}, column {j}, not a "
                            f"number: {exc}") from None
    return X


def check_features(est, X, *, reset, allow_nan=True, one_hot_categories=False, arg="X"):
    """Validate the features ``X`` of estimator ``est`` at fit (``reset``) or predict.

    DataFrame columns of categories or text are coded as numbers (see
    :mod:`spotree._categories`); at fit their labels are stored in
    ``est.category_values_`` (None without such columns), and
    ``n_features_in_`` / ``feature_names_in_`` are set as scikit-learn does.
    With ``one_hot_categories``, the other columns that
    ``est.categorical_features`` marks are categorical too: their distinct
    values at fit are their labels (``est._numeric_categories`` records
    which columns these are, so that an array is accepted at predict).

    Parameters
    ----------
    est : estimator
    X : array-like or DataFrame of shape (n_samples, n_features)
    reset : bool
        True in ``fit`` (learn the columns), False in ``predict`` (check them).
    allow_nan : bool, default=True
        Whether NaN (a missing value) may stay in the result.
    one_hot_categories : bool, default=False
        Return categorical columns as one indicator column per category seen
        at fit (for linear models) instead of their codes (for trees). A
        missing or unseen category is then all zeros, not NaN.
    arg : str, default="X"
        The argument ``X`` was given as; another name (``"X_val"``) starts
        every error message, which speak of ``X``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_columns), dtype float64
    """
    if arg != "X":
        try:
            return check_features(est, X, reset=reset, allow_nan=allow_nan,
                                  one_hot_categories=one_hot_categories)
        except ValueError as exc:
            raise ValueError(f"{arg}: {exc}") from None
    name = type(est).__name__
    if reset:
        est.category_values_ = None
        est.__dict__.pop("_numeric_categories", None)
    cats = getattr(est, "category_values_", None)
    # Columns numeric in X that categorical_features made categorical: coded
    # by value below, after the dtype's categories (see _categories).
    by_value = getattr(est, "_numeric_categories", None)
    if is_dataframe(X):
        if reset:
            X, learned = encode_frame(X)
            est.category_values_ = cats = (learned if any(c is not None for c in learned)
                                           else None)
        else:
            # Column names first (scikit-learn's messages name the missing,
            # unexpected or reordered columns): the codes go by position.
            if hasattr(est, "feature_names_in_"):
                validate_data(est, X, reset=False, skip_check_array=True)
            frame_cats = [None] * X.shape[1] if cats is None else list(cats)
            if by_value is not None:
                frame_cats = [None if v else c for c, v in zip(frame_cats, by_value)]
            X, _ = encode_frame(X, frame_cats)
    elif cats is not None and not (by_value is not None and all(
            v or c is None for c, v in zip(cats, by_value))):
        names = getattr(est, "feature_names_in_", None)
        columns = (f" with the columns {list(names)}" if names is not None else "")
        text = [str(names[j]) if names is not None else j
                for j, c in enumerate(cats) if c is not None
                and not (by_value is not None and by_value[j])]
        raise ValueError(f"X must be a pandas DataFrame{columns}: this {name} was fitted on a "
                         f"DataFrame whose columns {text} hold categories or text, and an "
                         "array does not say which category a value is.")
    else:
        X = _numeric_array(X)
    X = validate_data(est, X, reset=reset, dtype=np.float64,
                      ensure_all_finite="allow-nan" if (allow_nan or one_hot_categories)
                      else True)
    if one_hot_categories:
        if reset and getattr(est, "categorical_features", None) is not None:
            # Marked columns that are not categorical already (by dtype).
            marked = categorical_mask(est, X.shape[1])
            by_value = [bool(m) and (cats is None or cats[j] is None)
                        for j, m in enumerate(marked)]
            if any(by_value):
                cats = [None] * X.shape[1] if cats is None else list(cats)
                for j in np.flatnonzero(by_value):
                    cats[j] = value_labels(X[:, j])
                est.category_values_ = cats
                est._numeric_categories = by_value
            else:
                by_value = None
        if by_value is not None:
            X = np.array(X, dtype=np.float64, copy=True)
            for j in np.flatnonzero(by_value):
                X[:, j] = code_by_value(X[:, j], cats[j])
        X = one_hot(X, cats)
        if not allow_nan and not np.isfinite(X).all():
            raise ValueError(f"Input X contains NaN or infinity; {name} does not support "
                             "missing values in numeric columns (impute them, or use "
                             "SPOTree/SPOForest, whose splits route them).")
    return X


def check_realized_costs(est, C, n_samples, n_costs=None, names=None):
    """The realized costs ``C`` given to ``est.fit`` or ``score``: finite, (n_samples, n_costs).

    ``names``: the problem's variable names (see :func:`check_costs`).
    """
    if C is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is "
                         "None: pass the realized costs C of shape (n_samples, n_costs).")
    if sp.issparse(C):
        raise ValueError(f"C must be a dense 2-D array of shape (n_samples, n_costs); got a "
                         f"scipy sparse {type(C).__name__}: pass C.toarray().")
    if not hasattr(C, "ndim"):
        # A ragged list of rows: numpy's "inhomogeneous shape" message named
        # no argument.
        given = type(C).__name__
        try:
            with warnings.catch_warnings():
                # numpy < 1.24 makes a ragged list a 1-D array of lists (with a
                # VisibleDeprecationWarning) instead of raising.
                warnings.simplefilter("ignore")
                C = np.asarray(C)
            if C.dtype == object and C.ndim == 1 and any(np.ndim(row) for row in C):
                raise ValueError("its rows have different lengths")
        except (TypeError, ValueError) as exc:
            raise ValueError(f"C must be a numeric 2-D array of shape (n_samples, n_costs); "
                             f"got {given} that is not one ({exc}).") from None
    # (A DataFrame goes to check_costs as it is, so that its errors name its type.)
    if C.ndim == 1:
        # (A pandas Series has no reshape: the hint that fits it.)
        column = "C.to_frame()" if hasattr(C, "to_frame") else "C.reshape(-1, 1)"
        raise ValueError(
            f"C must be a 2-D array of shape (n_samples, n_costs), one row of costs per "
            f"sample; got a 1-D array of shape {C.shape}. A single column would be a "
            "problem with one option (a constant decision); if that is meant, pass "
            f"{column}.")
    # C-ordered: a DataFrame's to_numpy() is column-major, and BLAS sums in
    # another order on it, so SPOBoost fitted on a frame of costs differed in
    # the last bits from the same costs as an array.
    C = np.ascontiguousarray(check_costs(C, name="C", n_costs=n_costs, names=names))
    check_same_rows(n_samples, C)
    return C


def check_fit_inputs(est, X, C, sample_weight, *, allow_nan=True, one_hot_categories=False):
    """The checks every estimator's ``fit`` runs on ``X``, ``C`` and ``sample_weight``.

    See :func:`check_features` for ``X`` and the keywords. The problem is
    checked against ``C`` by :func:`spotree.problems.resolve_problem`.

    Returns
    -------
    X : ndarray of shape (n_samples, n_columns)
    C : ndarray of shape (n_samples, n_costs)
    sample_weight : ndarray of shape (n_samples,)
    """
    X = check_features(est, X, reset=True, allow_nan=allow_nan,
                       one_hot_categories=one_hot_categories)
    # (est.problem is not resolved yet; a non-problem has no variable_names.)
    C = check_realized_costs(est, C, X.shape[0], names=cost_names(getattr(est, "problem", None)))
    return X, C, check_sample_weight(sample_weight, X.shape[0])


class restored_on_failure:
    """``with restored_on_failure(est):`` leaves ``est`` as it was if the block raises.

    Every ``fit`` runs in one. Checking ``X`` sets ``n_features_in_``,
    ``feature_names_in_`` and ``category_values_`` before ``C`` is checked,
    and a fit can fail later still (``C`` of another width than the
    problem's): a fitted model whose refit failed kept its old trees but read
    rows with the refused data's columns and category codes, and decided
    wrongly without a word (scikit-learn checks ``y`` before it sets
    ``n_features_in_``). The instance's attributes are restored from a
    shallow copy: ``fit`` replaces its fitted attributes, never changes them
    in place. (A block, not a decorator: a wrapper's frame would move every
    warning's ``stacklevel`` off the caller's line.)
    """

    def __init__(self, est):
        self.est = est

    def __enter__(self):
        self.saved = dict(self.est.__dict__)
        return self.est

    def __exit__(self, kind, value, tb):
        if kind is not None:  # Ctrl-C too: an interrupted refit is a failed one
            self.est.__dict__.clear()
            self.est.__dict__.update(self.saved)
        return False
