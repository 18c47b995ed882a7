"""pandas DataFrame columns: numbers, categories, or refused.

A column of dtype ``category`` or ``string``, or of dtype ``object`` holding
text, is a categorical feature: its values are replaced by float codes (the
position of the value in the column's categories), missing values by NaN.
An ``object`` column that holds only numbers and missing values (``None``,
NaN) is numeric. The categories seen at fit are stored on the estimator as
``category_values_`` and the same codes are used at predict time. A category
never seen at fit is treated like a missing value: it follows the
missing-value side of every split (the rule of scikit-learn's
HistGradientBoosting). Numbers given at predict for a column of text labels
are refused, as text for a numeric column. Linear models see a categorical
column as one indicator column per category seen at fit (:func:`one_hot`).

A numeric column can be marked categorical by the estimator's
``categorical_features`` (:func:`categorical_mask`). Trees split its values
as they are; linear models and SPOBoost take its distinct values at fit as
its labels (:func:`value_labels`) and code it by value
(:func:`code_by_value`), so that it becomes indicator columns like a
DataFrame's categorical column.

Date and time columns are refused with a message naming the column: their
numbers (nanoseconds since 1970) would be a silent choice of units.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

__all__ = ["is_dataframe", "column_kind", "categorical_columns", "categorical_mask",
           "code_by_value", "encode_frame", "one_hot", "one_hot_sum", "one_hot_width",
           "unseen_to_missing", "value_labels"]


def is_dataframe(X):
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


# What pandas.api.types.infer_dtype calls an object column of numbers (and
# missing values only: "empty"), and one of dates, times or durations.
_NUMBER_KINDS = {"empty", "floating", "integer", "mixed-integer-float", "boolean", "decimal",
                 "complex"}
_TIME_KINDS = {"datetime", "datetime64", "date", "time", "timedelta", "timedelta64", "period"}


def column_kind(col):
    """``"numeric"``, ``"categorical"`` or ``"time"`` for a pandas Series.

    An ``object`` column is numeric when all its present values are numbers
    (a float column with a ``None`` in it), time when they are all dates,
    times or durations, and categorical otherwise (text, or a mix).
    """
    dtype = col.dtype
    name = str(dtype)
    kind = getattr(dtype, "kind", None)
    if kind in ("M", "m") or name.startswith(("datetime", "timedelta", "period")):
        return "time"
    if name == "category" or name.startswith("string") or name == "str":
        return "categorical"
    if kind == "O":
        # pandas' compiled inference over the present values.
        inferred = pd.api.types.infer_dtype(col, skipna=True)
        if inferred in _NUMBER_KINDS:
            return "numeric"
        return "time" if inferred in _TIME_KINDS else "categorical"
    return "numeric"


def categorical_columns(X):
    """Boolean mask of the DataFrame's categorical columns (see :func:`column_kind`)."""
    return np.array([column_kind(X.iloc[:, j]) == "categorical" for j in range(X.shape[1])],
                    dtype=bool)


def categorical_mask(est, p):
    """Which of the p features are categorical: by dtype at fit, or named by the user.

    ``est.categorical_features`` lists indices, names (of a DataFrame's
    columns) or is a boolean mask; either adds to the columns categorical
    by dtype.
    """
    cats = getattr(est, "category_values_", None)
    mask = (np.zeros(p, dtype=bool) if cats is None
            else np.array([c is not None for c in cats], dtype=bool))
    cf = est.categorical_features
    if cf is None:
        return mask
    shape = np.shape(np.asarray(cf, dtype=object))
    if len(shape) != 1:
        raise ValueError(f"categorical_features must be a 1-D list of feature indices, names "
                         f"or a boolean mask; got an array of shape {shape}.")
    # The entries as given: numpy would turn [True, 2] into the indices 1 and 2
    # (which spotree.load then refuses) and [0, "a"] into two names.
    items = list(cf)
    flags = [isinstance(f, (bool, np.bool_)) for f in items]
    if items and all(flags):
        if len(items) != p:
            raise ValueError(f"categorical_features as a boolean mask must have shape "
                             f"({p},); got ({len(items)},).")
        return np.array(items, dtype=bool) | mask
    if any(flags):
        raise ValueError(f"categorical_features mixes bools with feature indices or names: "
                         f"{items!r}; give a boolean mask of all {p} features or a list of "
                         f"indices or names.")
    for f in items:
        if isinstance(f, str) or (hasattr(f, "dtype") and f.dtype.kind in "US"):
            names = getattr(est, "feature_names_in_", None)
            if names is None or f not in list(names):
                raise ValueError(f"categorical_features names {f!r}, which is not a "
                                 "column of X.")
            mask[list(names).index(f)] = True
        elif isinstance(f, numbers.Integral) and not isinstance(f, (bool, np.bool_)):
            if not 0 <= int(f) < p:
                raise ValueError(f"categorical_features index {f} is out of range for "
                                 f"{p} features.")
            mask[int(f)] = True
        else:
            # int(1.5) is 1: a float index chose a feature silently (and a
            # saved model with float indices could not be loaded).
            raise ValueError(f"categorical_features must hold feature indices (ints), names "
                             f"of columns of X or be a boolean mask; got {f!r}.")
    return mask


def time_column_error(name, dtype):
    """The message for a date, time or duration column ``name`` of X."""
    if "timedelta" in str(dtype) or getattr(dtype, "kind", None) == "m":
        how = f"for example X[{name!r}].dt.total_seconds()"
    else:
        how = f"for example days since a reference date t0, (X[{name!r}] - t0).dt.days"
    return (f"Column {name!r} of X holds dates, times or durations (dtype {dtype}), which "
            f"spotree does not turn into numbers on its own. Convert it to numbers first "
            f"({how}), or to a category with .astype('category').")


def _labels(col):
    """The categories of a column, in a stable order, missing values left out."""
    dtype = col.dtype
    if str(dtype) == "category":
        return list(dtype.categories)
    values = col[col.notna()].unique().tolist()
    try:
        return sorted(values)
    except TypeError:  # mixed types: order by their text
        return sorted(values, key=lambda v: (type(v).__name__, str(v)))


def encode_frame(X, categories=None):
    """Replace the categorical columns of DataFrame ``X`` by float codes.

    Numeric ``object`` columns become float columns (``None`` as NaN).

    Parameters
    ----------
    X : pandas.DataFrame
    categories : list or None
        Per column, the labels seen at fit (None for numeric columns); None
        learns them from ``X``.

    Returns
    -------
    X_encoded : pandas.DataFrame
        Same columns; categorical ones hold codes 0, 1, ... and NaN for
        missing or (at predict) unseen values.
    categories : list
        Per column, the labels (a list) or None.

    Raises
    ------
    ValueError
        For a date or time column, a categorical column that was numeric
        at fit, or a numeric one whose labels at fit were all text; the
        message names the column.
    """
    kinds = [column_kind(X.iloc[:, j]) for j in range(X.shape[1])]
    for name, kind, dtype in zip(X.columns, kinds, X.dtypes):
        if kind == "time":
            raise ValueError(time_column_error(name, dtype))
    if categories is None:
        categories = [_labels(X.iloc[:, j]) if kind == "categorical" else None
                      for j, kind in enumerate(kinds)]
    elif len(categories) != X.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but the model was fitted on "
                         f"{len(categories)}.")
    if not any(c is not None for c in categories) and "categorical" not in kinds and not any(
            dt.kind == "O" for dt in X.dtypes):
        return X, categories
    out = {}
    for j, name in enumerate(X.columns):
        col = X.iloc[:, j]
        labels = categories[j]
        if labels is None:
            if kinds[j] == "categorical":
                raise ValueError(f"Column {name!r} of X holds text or categories (dtype "
                                 f"{col.dtype}) but was numeric when the model was fitted.")
            if col.dtype.kind == "O":
                # Numbers and missing markers (None, NaN, pd.NA) only: see column_kind.
                col = pd.Series(np.where(col.isna().to_numpy(), np.nan, col.to_numpy())
                                .astype(np.float64), index=X.index)
            out[name] = col
            continue
        if (kinds[j] == "numeric" and col.notna().any()
                and not any(isinstance(v, (numbers.Number, np.bool_)) for v in labels)):
            # No number equals a label of text: every row would be an unseen
            # category, routed as missing without a word (the category's
            # codes given for its labels, say).
            shown = list(labels)[:6] + (["..."] if len(labels) > 6 else [])
            raise ValueError(f"Column {name!r} of X holds numbers (dtype {col.dtype}) but held "
                             f"categories or text when the model was fitted ({shown}): every "
                             "value would be an unseen category. Pass the labels themselves "
                             "(not their codes), as at fit.")
        codes = pd.Index(labels, dtype=object).get_indexer(col.astype(object))
        codes = codes.astype(np.float64)
        # Unseen labels (-1) become NaN: they follow the missing-value side.
        codes[(codes < 0) | col.isna().to_numpy()] = np.nan
        out[name] = pd.Series(codes, index=X.index)
    return pd.DataFrame(out, index=X.index, columns=X.columns), categories


def value_labels(x):
    """The categories of a numeric column marked categorical: its distinct values, sorted.

    Missing values (NaN) are left out. Whole numbers are given as ints (the
    labels of ``pandas.Categorical([0, 2, 5])``, and names such as ``day=3``
    in exports), other values as floats.
    """
    values = np.unique(x[~np.isnan(x)])
    if values.size and (values == np.round(values)).all() and np.abs(values).max() < 2.0 ** 53:
        return [int(v) for v in values]
    return [float(v) for v in values]


def code_by_value(x, labels):
    """Float codes of the numbers ``x``: the position of each in ``labels``.

    A missing value, or one that ``labels`` does not hold (a category
    unseen at fit), is NaN, as :func:`encode_frame` codes them.
    """
    ref = np.asarray(labels, dtype=np.float64)
    if ref.size == 0:
        return np.full(np.shape(x), np.nan)
    pos = np.minimum(np.searchsorted(ref, x), ref.size - 1)
    # (NaN sorts last and equals nothing.)
    return np.where(ref[pos] == x, pos, np.nan).astype(np.float64)


def one_hot_width(categories):
    """Number of columns of :func:`one_hot`'s output for per-column ``categories``."""
    return sum(1 if c is None else len(c) for c in categories)


def one_hot(X, categories):
    """Expand coded categorical columns into one indicator column per category.

    A missing or unseen category (NaN code) is all zeros. Numeric columns
    are kept in place, so the output's columns follow the input's order.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Codes as returned by :func:`encode_frame`.
    categories : list or None
        Per column, the labels seen at fit or None (numeric).

    Returns
    -------
    ndarray of shape (n, :func:`one_hot_width`)
    """
    if categories is None or all(c is None for c in categories):
        return X
    blocks = []
    for j, labels in enumerate(categories):
        x = X[:, j]
        if labels is None:
            blocks.append(x[:, None])
        else:
            # NaN compares unequal to every code: all zeros.
            blocks.append((x[:, None] == np.arange(len(labels))[None, :]).astype(np.float64))
    return np.hstack(blocks) if blocks else X


def one_hot_names(names, categories):
    """Names of :func:`one_hot`'s columns: a numeric column keeps its name, a
    categorical one gives ``"name=label"`` per category, in the columns' order."""
    out = []
    for name, labels in zip(names, categories):
        if labels is None:
            out.append(str(name))
        else:
            out.extend(f"{name}={label}" for label in labels)
    return out


def one_hot_sum(v, categories):
    """Sum the entries of ``v`` (one per :func:`one_hot` column) back per original feature."""
    if categories is None or all(c is None for c in categories):
        return v
    out, k = [], 0
    for c in categories:
        size = 1 if c is None else len(c)
        out.append(v[k:k + size].sum())
        k += size
    return np.asarray(out)


def unseen_to_missing(X, seen):
    """Replace categories not seen at fit by NaN (``seen``: per feature, codes or None)."""
    if seen is None:
        return X
    out = None
    for j, values in enumerate(seen):
        if values is None:
            continue
        x = X[:, j]
        bad = ~np.isnan(x) & ~np.isin(x, values)
        if bad.any():
            if out is None:
                out = np.array(X, dtype=np.float64, copy=True)
            out[bad, j] = np.nan
    return X if out is None else out
