"""Data builders and measurements shared by the tests (boosting, forests, linear models, memory)."""

import tracemalloc

import numpy as np


def weekday_data(n, seed, costs, noise):
    """X with weekday codes 0..4 in column 1 (numbers), its DataFrame twin with
    that column as a pandas category, X with the column one-hot by hand, and
    costs.

    Parameters
    ----------
    n, seed : int
        Rows, and the seed of the one generator that draws the days, the
        features ``a`` and ``b`` and then the noise.
    costs : callable
        ``costs(day, a, b)``: the noiseless cost matrix.
    noise : float
        Standard deviation of the Gaussian noise added to the costs.

    Returns
    -------
    X : ndarray of shape (n, 3)
    frame : pandas.DataFrame
    hand : ndarray of shape (n, 7)
    C : ndarray
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    day = rng.integers(0, 5, n)
    a, b = rng.normal(size=n), rng.normal(size=n)
    X = np.column_stack([a, day, b]).astype(float)
    frame = pd.DataFrame({"a": a, "day": pd.Categorical(day, categories=range(5)), "b": b})
    hand = np.column_stack([a, day[:, None] == np.arange(5), b]).astype(float)
    C = costs(day, a, b)
    return X, frame, hand, C + rng.normal(scale=noise, size=C.shape)


def tied_lp_data():
    """A LinearProgram with integer data and integer costs (many tied optima).

    Returns
    -------
    A : ndarray of shape (6, 12)
    b_ub : ndarray of shape (6,)
        The constraints ``A w <= b_ub``, with ``0 <= w <= 1``.
    problem : LinearProgram
    X : ndarray of shape (80, 3)
    C : ndarray of shape (80, 12)
    """
    from spotree.problems import LinearProgram

    rng = np.random.default_rng(0)
    A = rng.integers(0, 3, size=(6, 12)).astype(float)
    b_ub = np.full(6, 4.0)
    problem = LinearProgram(A_ub=A, b_ub=b_ub, bounds=(0, 1))
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 3))
    C = np.round(X @ rng.integers(-2, 3, size=(3, 12)) + rng.normal(size=(80, 12))) - 1.0
    return A, b_ub, problem, X, C


def traced_peak(func):
    """``func()``, the bytes Python allocations still hold after it and their peak during it
    (tracemalloc; numpy's arrays are traced)."""
    tracemalloc.start()
    try:
        out = func()
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, kept, peak
