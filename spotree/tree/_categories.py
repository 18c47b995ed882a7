"""Category and string columns of pandas DataFrames as categorical features.

A column of dtype ``category``, ``object`` or ``string`` is a categorical
feature: its values are replaced by float codes (the position of the value
in the column's categories), missing values by NaN. The categories seen at
fit are stored on the estimator as ``category_values_`` and the same codes are
used at predict time. A category never seen at fit is treated like a missing
value: it follows the missing-value side of every split (the rule of
scikit-learn's HistGradientBoosting).
"""

from __future__ import annotations

import numpy as np

__all__ = ["is_dataframe", "categorical_columns", "encode_frame", "unseen_to_missing"]


def is_dataframe(X):
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _is_categorical_dtype(dtype):
    kind = getattr(dtype, "kind", None)
    name = str(dtype)
    return name == "category" or kind == "O" or name.startswith("string") or name == "str"


def categorical_columns(X):
    """Boolean mask of the DataFrame's category / object / string columns."""
    return np.array([_is_categorical_dtype(dt) for dt in X.dtypes], dtype=bool)


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
    """Replace categorical columns of DataFrame ``X`` by float codes.

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
    """
    import pandas as pd

    mask = categorical_columns(X)
    if categories is None:
        categories = [_labels(X.iloc[:, j]) if mask[j] else None for j in range(X.shape[1])]
    elif len(categories) != X.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but the model was fitted on "
                         f"{len(categories)}.")
    if not any(c is not None for c in categories):
        return X, categories
    out = {}
    for j, name in enumerate(X.columns):
        col = X.iloc[:, j]
        labels = categories[j]
        if labels is None:
            if mask[j]:
                raise ValueError(f"Column {name!r} holds categories (dtype {col.dtype}) but "
                                 "was numeric when the model was fitted.")
            out[name] = col
            continue
        lookup = {v: float(k) for k, v in enumerate(labels)}
        na = col.isna().to_numpy()
        # Unseen labels become NaN: they follow the missing-value side.
        out[name] = pd.Series([np.nan if miss else lookup.get(v, np.nan)
                               for v, miss in zip(col.tolist(), na)],
                              index=X.index, dtype=np.float64)
    return pd.DataFrame(out, index=X.index, columns=X.columns), categories


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
