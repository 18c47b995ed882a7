"""Tests of the declarative parameter checks (spotree._params)."""

import math
from fractions import Fraction

import numpy as np

from spotree._params import Interval, Options


def test_an_int_beyond_the_float_range_is_checked_not_an_overflow():
    # math.isfinite(10**400) raises OverflowError: validation crashed instead
    # of accepting a valid int or giving its one-shape message.
    big = 10 ** 400
    assert Interval(int, 1, None).accepts(big)
    assert not Interval(int, 1, 10).accepts(big)
    assert not Interval(int, 0, None).accepts(-big) and Interval(int, None, 0).accepts(-big)
    # A float parameter cannot hold it.
    assert not Interval(float, 0.0, None).accepts(big)
    assert Interval(float, 0.0, None).accepts(2 ** 70)


def test_interval_ends_and_odd_numbers():
    closed = Interval(float, 0.0, 1.0)
    open_ = Interval(float, 0.0, 1.0, "neither")
    assert closed.accepts(0.0) and closed.accepts(1) and not open_.accepts(0.0)
    assert not open_.accepts(1.0) and open_.accepts(np.float16(0.5))
    assert not closed.accepts(math.nan) and not Interval(float, 0.0, None).accepts(math.inf)
    assert not Interval(int, 1, None).accepts(True) and Interval(int, 1, None).accepts(np.int8(3))
    assert not Interval(int, 1, None).accepts(2.0)
    assert Interval(float, 0.0, 1.0).accepts(Fraction(1, 3))
    assert Options("a", "b").accepts(np.str_("a")) and not Options("a").accepts(1)


def _estimators():
    from spotree import OptimalSPOTree, SPOBoost, SPOForest, SPOTree
    from spotree.linear_model import SPOPlusLinear

    return [SPOTree, SPOForest, SPOBoost, SPOPlusLinear, OptimalSPOTree]


def test_a_bad_random_state_is_named_in_the_error():
    # scikit-learn's check_random_state said "Generator(PCG64) at 0x... cannot
    # be used to seed a numpy.random.RandomState instance" (or numpy's "Seed
    # must be between 0 and 2**32 - 1"), naming no parameter; OptimalSPOTree's
    # exact search never read it and took anything.
    import pytest

    from spotree.problems import ShortestPath

    sp = ShortestPath((2, 2))
    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(30, 2)), rng.uniform(1, 2, size=(30, sp.n_costs))
    for cls in _estimators():
        for bad in (np.random.default_rng(0), -1, 2**32, 1.5, "0"):
            with pytest.raises(ValueError, match=rf"The 'random_state' parameter of "
                                                 rf"{cls.__name__} must be an int in the "
                                                 rf"range \[0, 4294967295\], a numpy "
                                                 rf"RandomState instance or None\. Got"):
                cls(sp, random_state=bad).fit(X, C)
        for good in (0, np.int64(2**32 - 1), np.random.RandomState(0), None):
            kw = {"max_depth": 1} if cls.__name__ == "OptimalSPOTree" else {}
            cls(sp, random_state=good, **kw).fit(X, C)


def test_half_open_intervals_and_their_descriptions():
    # max_features' fraction is (0, 1]: 0 is no feature, 1 all of them.
    right, left = Interval(float, 0.0, 1.0, "right"), Interval(float, 0.0, 1.0, "left")
    assert not right.accepts(0.0) and right.accepts(1.0) and right.accepts(1e-300)
    assert left.accepts(0.0) and not left.accepts(1.0)
    # An infinite end is never closed, whatever ``closed`` says.
    assert str(Interval(int, 1, None)) == "an int in the range [1, inf)"
    assert str(Interval(int, None, -1)) == "an int in the range (-inf, -1]"
    assert str(right) == "a float in the range (0.0, 1.0]"
    assert str(left) == "a float in the range [0.0, 1.0)"


def test_min_samples_split_one_is_refused_as_scikit_learn_does():
    """min_samples_split=1 was taken: the int 1 passed as the fraction 1.0 (floats accept
    ints), and was then used as the count 1, below the count's range [2, inf)."""
    import pytest
    from sklearn.tree import DecisionTreeRegressor

    from spotree import SPOForest, SPOTree
    from spotree.problems import FiniteDecisions

    assert not Interval(float, 0.0, 1.0, "right", ints=False).accepts(np.int64(1))
    assert Interval(float, 0.0, 1.0, "right", ints=False).accepts(1.0)
    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(12, 1)), rng.uniform(size=(12, 2))
    with pytest.raises(ValueError) as sk:
        DecisionTreeRegressor(min_samples_split=1).fit(X, C[:, 0])
    for cls, kw in ((SPOTree, {}), (SPOForest, {"n_estimators": 2})):
        with pytest.raises(ValueError) as ours:
            cls(FiniteDecisions(np.eye(2)), min_samples_split=1, **kw).fit(X, C)
        # The same message as scikit-learn's, but for the estimator's name.
        assert str(ours.value) == str(sk.value).replace("DecisionTreeRegressor", cls.__name__)
        # The fraction 1.0 (every row) is still a fraction.
        cls(FiniteDecisions(np.eye(2)), min_samples_split=1.0, **kw).fit(X, C)
