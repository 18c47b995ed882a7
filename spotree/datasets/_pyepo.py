"""PyEPO's synthetic benchmarks (shortest path, multi-dimensional knapsack).

The generators of Tang and Khalil's PyEPO library, rewritten from their
formulas so that spotree can be compared with decision-focused learning
methods on the data the field uses, without installing PyEPO.

With an int ``random_state`` the random draws are made in the same order and
from the same ``numpy.random.RandomState`` stream as PyEPO's ``genData``
functions, so the data equal PyEPO's for the same seed (``tests/datasets/
test_pyepo_generators.py`` checks it where PyEPO is installed). Only the
column order of the shortest-path costs differs: see
:func:`pyepo_shortest_path_columns`.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._generators import _as_float_array, _check_bool, _check_int, _check_random_state

__all__ = ["make_pyepo_shortest_path", "make_pyepo_knapsack", "pyepo_shortest_path_columns",
           "expected_ceil_uniform"]

_FORMULAS = ("package", "paper")


def _check_grid(grid):
    try:
        rows, cols = grid
    except (TypeError, ValueError):
        raise ValueError(f"grid must be a pair of ints (rows, cols); got {grid!r}.") from None
    rows = _check_int(rows, "grid[0]", 1)
    cols = _check_int(cols, "grid[1]", 1)
    if rows * cols < 2:
        raise ValueError(f"grid must have at least 2 nodes; got {grid!r}.")
    return rows, cols


def _check_noise(noise):
    if isinstance(noise, bool) or not isinstance(noise, numbers.Real) or not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise must be a float in [0, 1]; got {noise!r}.")
    return float(noise)


def _check_formula(formula):
    if formula not in _FORMULAS:
        raise ValueError(f"formula must be 'package' or 'paper'; got {formula!r}.")
    return formula


def _check_B(B, shape):
    B = _as_float_array(B, "B")
    if B.shape != shape:
        raise ValueError(f"B must have shape (n_costs, n_features) = {shape}; got {B.shape}.")
    if not np.isin(B, (0.0, 1.0)).all():
        raise ValueError("B must be binary: every entry 0 or 1.")
    return B


def _polynomial(X, B, degree, scale, formula):
    """Noise-free costs: ``scale * (((B x)/sqrt(p) + 3)^deg + 1) / 3.5^deg`` (PyEPO's code).

    ``formula="paper"`` moves the ``+ 1`` out of the scaling (neither divided
    nor multiplied), as PyEPO's paper prints it:
    ``scale * ((B x)/sqrt(p) + 3)^deg / 3.5^deg + 1``.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        core = (X @ B.T / np.sqrt(X.shape[1]) + 3.0) ** degree
    try:
        scaling = 3.5 ** degree  # a Python float: OverflowError beyond degree 566
    except OverflowError:
        scaling = np.inf
    # An overflow is no cost: inf (or nan) costs came back unsaid, or a bare OverflowError.
    if not (np.isfinite(scaling) and np.isfinite(core).all()):
        raise ValueError(f"degree={degree} is too large: the costs overflow float64 (a "
                         f"value above 1.8e308); choose a smaller degree.")
    if formula == "package":
        return scale * (core + 1.0) / scaling
    return scale * core / scaling + 1.0


def expected_ceil_uniform(a, noise):
    """``E[ceil(a U)]`` for ``U ~ U[1 - noise, 1 + noise]``, elementwise and exact.

    ``V = a U`` is uniform on ``[lo, hi]`` (the ends of ``a (1 -+ noise)``).
    ``ceil(V)`` falls short of ``ceil(hi)`` by the number of integers ``k``
    in ``[V, hi)``, and ``V <= k`` has probability ``(k - lo) / (hi - lo)``;
    with the ``K`` integers ``m, m + 1, ..., m + K - 1`` inside ``(lo, hi)``,
    the mean is therefore ``ceil(hi) - K ((m - lo) + (K - 1) / 2) / (hi -
    lo)``, a closed form with no cancellation, exact also for a narrow
    interval around an integer (``a = 3``, ``noise = 1e-13``: 3.5). This is
    the conditional mean of the item values of :func:`make_pyepo_knapsack`
    given the noise-free value ``a``.

    Parameters
    ----------
    a : array-like
        Noise-free values, finite.
    noise : float
        Half-width of the multiplicative noise, in [0, 1].

    Returns
    -------
    mean : ndarray of the shape of ``a``

    Examples
    --------
    >>> from spotree.datasets import expected_ceil_uniform
    >>> float(expected_ceil_uniform(2.0, 0.5))  # 2U on [1, 3]: ceil 2 or 3, equally likely
    2.5
    >>> float(expected_ceil_uniform(2.2, 0.0))
    3.0
    """
    noise = _check_noise(noise)
    a = _as_float_array(a, "a")
    if not np.isfinite(a).all():
        # Else nan came back (with RuntimeWarnings), also for a = inf.
        raise ValueError("a must hold finite numbers; got NaN or infinity.")
    lo = np.minimum(a * (1.0 - noise), a * (1.0 + noise))
    hi = np.maximum(a * (1.0 - noise), a * (1.0 + noise))
    # Not (F(hi) - F(lo)) / (hi - lo) with F the antiderivative of ceil: F grows
    # like a^2 / 2, so a narrow interval lost every digit to cancellation (3.00009
    # for a = 2.5, noise = 1e-12, above the largest possible ceiling 3).
    first = np.floor(lo) + 1.0                       # m: the first integer above lo
    count = np.maximum(np.ceil(hi) - first, 0.0)     # K: the integers in (lo, hi)
    width = hi - lo
    per = np.divide(count, width, out=np.zeros_like(width), where=count > 0)
    return np.asarray(np.ceil(hi) - per * (first - lo) - per * (count - 1.0) / 2.0)


def pyepo_shortest_path_columns(grid=(5, 5)):
    """Where each of spotree's grid edges sits in PyEPO's cost vector.

    spotree's :class:`~spotree.problems.ShortestPath` lists all east edges row
    by row from the south-west corner, then all north edges row by row.
    PyEPO interleaves them: the east edges of row 0, the north edges leaving
    row 0, the east edges of row 1, and so on. Both number the nodes row by
    row from the source corner.

    Parameters
    ----------
    grid : tuple of int, default=(5, 5)
        ``(rows, cols)``.

    Returns
    -------
    columns : ndarray of int of shape (n_edges,)
        ``C_spotree = C_pyepo[:, columns]``; the inverse permutation
        (``np.argsort(columns)``) goes the other way.

    Examples
    --------
    >>> from spotree.datasets import pyepo_shortest_path_columns
    >>> pyepo_shortest_path_columns((2, 3)).tolist()
    [0, 1, 5, 6, 2, 3, 4]
    """
    rows, cols = _check_grid(grid)
    east, north = [], []
    k = 0  # position in PyEPO's order
    for r in range(rows):
        for _ in range(cols - 1):
            east.append(k)
            k += 1
        if r < rows - 1:
            for _ in range(cols):
                north.append(k)
                k += 1
    return np.asarray(east + north, dtype=np.intp)


def make_pyepo_shortest_path(n_samples, *, n_features=5, grid=(5, 5), degree=1, noise=0.0,
                             B=None, random_state=None, return_B=False, formula="package",
                             return_mean=False):
    """Features and edge costs of PyEPO's shortest-path benchmark.

    ``x ~ N(0, I_p)``; ``B in {0, 1}^(d x p)`` with Bernoulli(0.5) entries;
    edge ``j`` costs ``c_j = [((B x)_j / sqrt(p) + 3)^deg + 1] / 3.5^deg * eps_j``
    with ``eps_j ~ U[1 - noise, 1 + noise]``, which is what PyEPO's
    ``pyepo.data.shortestpath.genData`` computes. PyEPO's paper prints the
    formula with the ``+ 1`` outside the scaling,
    ``c_j = [((B x)_j / sqrt(p) + 3)^deg / 3.5^deg + 1] * eps_j``;
    ``formula="paper"`` draws that variant (same random draws).

    The columns of ``C`` (and the rows of ``B``) follow the edge order of
    :class:`spotree.problems.ShortestPath`: east edges row by row from the
    south-west corner, then north edges. PyEPO's own order interleaves them;
    see :func:`pyepo_shortest_path_columns`. Use with
    ``ShortestPath(grid)``.

    Parameters
    ----------
    n_samples : int
    n_features : int, default=5
        p, the number of features.
    grid : tuple of int, default=(5, 5)
        ``(rows, cols)`` of the grid.
    degree : int, default=1
        Degree of the polynomial link (nonlinearity); a positive int.
    noise : float, default=0.0
        Half-width of the multiplicative noise, in [0, 1] (PyEPO's
        experiments use 0.5).
    B : array-like of shape (n_edges, n_features), default=None
        The 0/1 coefficient matrix in spotree's edge order; drawn when None.
        Pass the training set's ``B`` to draw a test set from the same
        distribution. (PyEPO draws training and test data in one call; with
        ``B`` given no ``B`` is drawn, so the random stream then differs from
        PyEPO's.)
    random_state : int, RandomState instance or None, default=None
        An int seeds ``numpy.random.RandomState`` exactly as PyEPO's ``seed``.
    return_B : bool, default=False
        Also return ``B``.
    formula : {"package", "paper"}, default="package"
        Where the ``+ 1`` sits, as above.
    return_mean : bool, default=False
        Also return the conditional mean ``E[C | X]``: the noise-free costs,
        since the noise is multiplicative with mean 1. Deciding with it gives
        the *Bayes floor*: no model has lower expected regret, because the
        objective is linear in the costs. Edges whose rows of ``B`` are
        equal have equal means, so the decision with the means can tie;
        tied decisions have the same expected regret, but the regret they
        realize on a finite sample differs (the problem's tie-break picks
        one).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    C : ndarray of shape (n_samples, n_edges)
    B : ndarray of shape (n_edges, n_features), only if ``return_B``
    C_mean : ndarray of shape (n_samples, n_edges), only if ``return_mean``
        ``E[C | X]``, in the columns of ``C``.

    Examples
    --------
    >>> from spotree import ShortestPath
    >>> from spotree.datasets import make_pyepo_shortest_path
    >>> X, C = make_pyepo_shortest_path(100, degree=4, noise=0.5, random_state=0)
    >>> X.shape, C.shape, ShortestPath((5, 5)).n_costs
    ((100, 5), (100, 40), 40)
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    n_features = _check_int(n_features, "n_features", 1)
    rows, cols = _check_grid(grid)
    degree = _check_int(degree, "degree", 1)
    noise = _check_noise(noise)
    formula = _check_formula(formula)
    return_B = _check_bool(return_B, "return_B")
    return_mean = _check_bool(return_mean, "return_mean")
    columns = pyepo_shortest_path_columns((rows, cols))
    d = columns.shape[0]
    rng = _check_random_state(random_state)
    if B is None:
        B_pyepo = rng.binomial(1, 0.5, size=(d, n_features)).astype(np.float64)
    else:
        B_pyepo = np.empty((d, n_features))
        B_pyepo[columns] = _check_B(B, (d, n_features))
    X = rng.normal(0.0, 1.0, size=(n_samples, n_features))
    mean = _polynomial(X, B_pyepo, degree, 1.0, formula)
    C = mean * rng.uniform(1.0 - noise, 1.0 + noise, size=(n_samples, d))
    out = (X, C[:, columns]) + ((B_pyepo[columns],) if return_B else ())
    return out + ((mean[:, columns],) if return_mean else ())


def make_pyepo_knapsack(n_samples, *, n_items=32, n_resources=2, n_features=5, degree=1,
                        noise=0.0, weights=None, B=None, random_state=None, return_B=False,
                        formula="package", return_mean=False):
    """Features, item values and item weights of PyEPO's multi-dimensional knapsack.

    Item weights ``a_kj`` are drawn once, uniformly among 3.00, 3.01, ...,
    7.99 (for every resource ``k`` and item ``j``); ``x ~ N(0, I_p)``;
    ``B in {0, 1}^(m x p)`` with Bernoulli(0.5) entries; item ``j`` is worth
    ``c_j = ceil(5 [((B x)_j / sqrt(p) + 3)^deg + 1] / 3.5^deg * eps_j)``
    with ``eps_j ~ U[1 - noise, 1 + noise]``, which is what PyEPO's
    ``pyepo.data.knapsack.genData`` computes (values are whole numbers).
    ``formula="paper"`` moves the ``+ 1`` outside the scaling, as for the
    shortest path: ``ceil((5 ((B x)_j / sqrt(p) + 3)^deg / 3.5^deg + 1) * eps_j)``.

    The decision problem is ``max c^T w`` subject to ``weights @ w <=
    capacities``, ``w in {0, 1}^m``; PyEPO's experiments use capacity 20 for
    every resource. Columns are the items, in PyEPO's order.

    Parameters
    ----------
    n_samples : int
    n_items : int, default=32
    n_resources : int, default=2
        Number of knapsack constraints (PyEPO's ``dim``).
    n_features : int, default=5
    degree : int, default=1
    noise : float, default=0.0
        Half-width of the multiplicative noise, in [0, 1].
    weights : array-like of shape (n_resources, n_items), default=None
        Item weights; drawn when None. Pass the training set's weights (and
        ``B``) to draw a test set of the same problem.
    B : array-like of shape (n_items, n_features), default=None
        The 0/1 coefficient matrix; drawn when None.
    random_state : int, RandomState instance or None, default=None
        An int seeds ``numpy.random.RandomState`` exactly as PyEPO's ``seed``.
    return_B : bool, default=False
        Also return ``B``.
    formula : {"package", "paper"}, default="package"
    return_mean : bool, default=False
        Also return the conditional mean ``E[C | X]``. The values are rounded
        up after the noise, so it is not the noise-free value ``a`` but
        ``E[ceil(a U)]`` with ``U ~ U[1 - noise, 1 + noise]``, computed
        exactly (:func:`expected_ceil_uniform`). Deciding with it gives the
        *Bayes floor* of the regret. Items whose rows of ``B`` are equal
        (32 items draw from 32 possible rows when ``n_features=5``, so
        repeats are usual) have equal means, and the decision with the
        means often ties: tied decisions have the same expected regret, but
        the regret they realize on a finite sample differs (the knapsack's
        tie-break picks one), so a sample's floor carries that noise too.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    C : ndarray of shape (n_samples, n_items)
        Item values (to be maximized).
    weights : ndarray of shape (n_resources, n_items)
    B : ndarray of shape (n_items, n_features), only if ``return_B``
    C_mean : ndarray of shape (n_samples, n_items), only if ``return_mean``
        ``E[C | X]``.

    Examples
    --------
    >>> from spotree.datasets import make_pyepo_knapsack
    >>> X, C, weights = make_pyepo_knapsack(100, degree=2, noise=0.5, random_state=0)
    >>> X.shape, C.shape, weights.shape
    ((100, 5), (100, 32), (2, 32))
    >>> bool((C == C.round()).all() and (C >= 0).all())
    True
    """
    return_B = _check_bool(return_B, "return_B")
    return_mean = _check_bool(return_mean, "return_mean")
    n_samples = _check_int(n_samples, "n_samples", 1)
    n_items = _check_int(n_items, "n_items", 1)
    n_resources = _check_int(n_resources, "n_resources", 1)
    n_features = _check_int(n_features, "n_features", 1)
    degree = _check_int(degree, "degree", 1)
    noise = _check_noise(noise)
    formula = _check_formula(formula)
    rng = _check_random_state(random_state)
    if weights is None:
        weights = rng.choice(np.arange(300, 800), size=(n_resources, n_items)) / 100.0
    else:
        weights = _as_float_array(weights, "weights")
        if weights.shape != (n_resources, n_items):
            raise ValueError(f"weights must have shape (n_resources, n_items) = "
                             f"({n_resources}, {n_items}); got {weights.shape}.")
        if not np.isfinite(weights).all() or (weights < 0).any():
            raise ValueError("weights must be finite and non-negative.")
    if B is None:
        B = rng.binomial(1, 0.5, size=(n_items, n_features)).astype(np.float64)
    else:
        B = _check_B(B, (n_items, n_features))
    X = rng.normal(0.0, 1.0, size=(n_samples, n_features))
    a = _polynomial(X, B, degree, 5.0, formula)
    C = np.ceil(a * rng.uniform(1.0 - noise, 1.0 + noise, size=(n_samples, n_items)))
    out = (X, C, weights) + ((B,) if return_B else ())
    return out + ((expected_ceil_uniform(a, noise),) if return_mean else ())
