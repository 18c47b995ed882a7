"""Input checks shared by every layer of spotree.

Errors name the offending argument and say what was expected, so that a user
who passes a 1-D cost vector or a NaN learns it from the message alone.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_costs", "check_sample_weight", "check_random_state_seed"]


def check_costs(C, *, n_costs=None, name="C", allow_empty=True):
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

    Returns
    -------
    C : ndarray of shape (m, d), dtype float64
    """
    try:
        arr = np.asarray(C, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric 2-D array; got {type(C).__name__} "
                         f"that cannot be converted to float ({exc}).") from None
    if arr.ndim != 2:
        hint = (" Reshape a single cost vector with c.reshape(1, -1)."
                if arr.ndim == 1 else "")
        raise ValueError(f"{name} must be a 2-D array of shape (n_samples, n_costs); "
                         f"got an array with {arr.ndim} dimension(s) and shape "
                         f"{arr.shape}.{hint}")
    if n_costs is not None and arr.shape[1] != n_costs:
        raise ValueError(f"{name} has {arr.shape[1]} columns but the problem has "
                         f"n_costs={n_costs}: each row must hold one cost per decision "
                         "variable.")
    if not allow_empty and arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one row is required.")
    if arr.size and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} contains NaN or infinity (first at row {bad[0]}, "
                         f"column {bad[1]}); costs must be finite.")
    return arr


def check_sample_weight(sample_weight, n_samples, *, name="sample_weight",
                        allow_all_zero=False):
    """Return validated non-negative float64 weights of shape (n_samples,).

    ``None`` means unit weights.
    """
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    if isinstance(sample_weight, numbers.Number):
        sw = np.full(n_samples, float(sample_weight))
    else:
        try:
            sw = np.asarray(sample_weight, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a 1-D array of numbers.") from None
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
    """Draw a 32-bit seed from ``random_state`` (None, int or Generator/RandomState)."""
    from sklearn.utils import check_random_state

    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
