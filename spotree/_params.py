"""Declarative parameter validation, run once at the start of ``fit``.

Each estimator lists ``_parameter_constraints``: for every parameter, the
alternatives it may take. The error has one shape for all of them:
"The 'max_depth' parameter of SPOTree must be an int in the range [1, inf)
or None. Got -1 instead."
"""

from __future__ import annotations

import math
import numbers
import sys

import numpy as np

__all__ = ["Interval", "Options", "InstanceOf", "RANDOM_STATE", "validate_params"]


class Interval:
    """Numbers of ``kind`` (``int`` or ``float``) in a range; floats accept ints
    unless ``ints=False``.

    ``ints=False`` is scikit-learn's ``RealNotInt``, for a fraction beside a count:
    ``min_samples_split=1`` is no fraction 1.0 but a count below the count's
    range [2, inf).
    """

    def __init__(self, kind, low, high, closed="both", *, ints=True):
        self.kind, self.low, self.high, self.closed = kind, low, high, closed
        self.ints = ints

    def accepts(self, v):
        if isinstance(v, bool):
            return False
        if not self.ints and isinstance(v, numbers.Integral):
            return False
        if self.kind is int and not isinstance(v, numbers.Integral):
            return False
        if self.kind is float and not isinstance(v, numbers.Real):
            return False
        if isinstance(v, numbers.Integral):
            # Ints are finite, but one beyond the float range is no float
            # (and math.isfinite would raise OverflowError on it).
            if self.kind is float and abs(int(v)) > sys.float_info.max:
                return False
        elif not math.isfinite(v):
            # An open end of the range is no licence for infinity or NaN.
            return False
        lo_ok = (self.low is None or v > self.low
                 or (v == self.low and self.closed in ("both", "left")))
        hi_ok = (self.high is None or v < self.high
                 or (v == self.high and self.closed in ("both", "right")))
        return lo_ok and hi_ok

    def __str__(self):
        lo = "-inf" if self.low is None else self.low
        hi = "inf" if self.high is None else self.high
        lb = "[" if self.closed in ("both", "left") and self.low is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        name = "an int" if self.kind is int else "a float"
        return f"{name} in the range {lb}{lo}, {hi}{rb}"


class Options:
    """One of a fixed set of values (strings, usually)."""

    def __init__(self, *values):
        self.values = values

    def accepts(self, v):
        return isinstance(v, str) and v in self.values

    def __str__(self):
        return "a str among {" + ", ".join(repr(x) for x in self.values) + "}"


class InstanceOf:
    def __init__(self, kind, description):
        self.kind, self.description = kind, description

    def accepts(self, v):
        return isinstance(v, self.kind)

    def __str__(self):
        return self.description


#: What ``random_state`` may be, as scikit-learn's ``check_random_state``
#: takes it (its own message names no parameter: "Generator(PCG64) at 0x...
#: cannot be used to seed a numpy.random.RandomState instance").
RANDOM_STATE = [Interval(int, 0, 2**32 - 1),
                InstanceOf(np.random.RandomState, "a numpy RandomState instance"), None]


def check_bool(value, param, owner):
    """``value`` as a bool, or scikit-learn's message naming ``param`` of ``owner``.

    (A flag taken by its truth: the string "no", or "False" read from a
    config, switched it on without a word.)
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"The {param!r} parameter of {owner} must be a bool. Got {value!r} "
                         "instead.")
    return bool(value)


def _describe(alternatives):
    parts = ["None" if a is None else str(a) for a in alternatives]
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def validate_params(estimator):
    """Check every parameter of ``estimator`` against its ``_parameter_constraints``."""
    name = type(estimator).__name__
    for param, alternatives in estimator._parameter_constraints.items():
        value = getattr(estimator, param)
        ok = any((a is None and value is None) or (a is not None and a.accepts(value))
                 for a in alternatives)
        if not ok:
            raise ValueError(f"The {param!r} parameter of {name} must be "
                             f"{_describe(alternatives)}. Got {value!r} instead.")
