"""Generators of the paper's synthetic data, in scikit-learn's ``make_*`` style."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["make_illustrative", "make_shortest_path", "make_news"]


def _as_float_array(value, name):
    """``value`` as a float64 array, or a ValueError naming ``name``."""
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers; got {value!r:.80}.") from None


def _check_random_state(random_state):
    """``check_random_state(random_state)``, or a ValueError naming ``random_state``.

    scikit-learn's own message names no argument ("Generator(PCG64) at 0x...
    cannot be used to seed a numpy.random.RandomState instance", or numpy's
    "Seed must be between 0 and 2**32 - 1").
    """
    from .._params import RANDOM_STATE

    if not any(a is None and random_state is None or a is not None and a.accepts(random_state)
               for a in RANDOM_STATE):
        raise ValueError(f"random_state must be an int in [0, 2**32 - 1], a numpy RandomState "
                         f"instance or None; got {random_state!r:.80}.")
    return check_random_state(random_state)


def _check_bool(value, name):
    """``value`` as a bool, or a ValueError naming ``name``.

    (Taken by its truth: the string "no", or "False" read from a config,
    chose the other branch without a word.)
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool (True or False); got {value!r:.80}.")
    return bool(value)


def _check_int(value, name, low):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an int >= {low}; got {value!r}.")
    return int(value)


def make_illustrative(n_samples=10000, *, random_state=None):
    """The paper's two-road example (section 3.1).

    ``x ~ U(0, 1)``, ``c1 = 5x + 1.9`` and ``c2 = (5x + 0.4)^2``, no noise. The
    two costs cross at ``x = 0.28``: road 2 is cheaper below it, road 1 above.
    Use with ``FiniteDecisions(np.eye(2))``.

    Parameters
    ----------
    n_samples : int, default=10000
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, 1)
    C : ndarray of shape (n_samples, 2)
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    rng = _check_random_state(random_state)
    x = rng.uniform(0.0, 1.0, size=n_samples)
    C = np.column_stack([5 * x + 1.9, (5 * x + 0.4) ** 2])
    return x.reshape(-1, 1), C


def make_shortest_path(n_samples, *, n_features=5, grid=(4, 4), degree=2, noise=0.0,
                       B=None, random_state=None, return_B=False):
    """Features and edge costs of the paper's noisy shortest path (section 5.1).

    ``x ~ U(0, 1)^p``; ``B in {0, 1}^(d x p)`` with Bernoulli(0.5) entries;
    ``c_k = ((B x)_k / sqrt(p) + 1)^degree * eps_k`` with
    ``eps_k ~ U[1 - noise, 1 + noise]``. Costs follow the edge order of
    :class:`spotree.problems.ShortestPath`.

    Parameters
    ----------
    n_samples : int
    n_features : int, default=5
        p, the number of features.
    grid : tuple of int, default=(4, 4)
    degree : int, default=2
        Degree of the polynomial link (nonlinearity); a positive int.
    noise : float, default=0.0
        Half-width of the multiplicative noise, in [0, 1].
    B : array-like of shape (d, p), default=None
        The 0/1 coefficient matrix; drawn when None. Pass the training set's
        ``B`` to draw a test set from the same distribution.
    random_state : int, RandomState instance or None, default=None
    return_B : bool, default=False
        Also return ``B``.

    Returns
    -------
    X : ndarray of shape (n_samples, p)
    C : ndarray of shape (n_samples, d)
    B : ndarray of shape (d, p), only if ``return_B``
    """
    from ..problems import ShortestPath

    n_samples = _check_int(n_samples, "n_samples", 1)
    n_features = _check_int(n_features, "n_features", 1)
    degree = _check_int(degree, "degree", 1)
    if (isinstance(noise, bool) or not isinstance(noise, numbers.Real)
            or not 0.0 <= noise <= 1.0):
        raise ValueError(f"noise must be a float in [0, 1]; got {noise!r}.")
    return_B = _check_bool(return_B, "return_B")
    d = ShortestPath(grid).n_costs
    rng = _check_random_state(random_state)
    if B is None:
        B = rng.binomial(1, 0.5, size=(d, n_features)).astype(np.float64)
    else:
        B = _as_float_array(B, "B")
        if B.shape != (d, n_features):
            raise ValueError(f"B must have shape (n_costs, n_features) = ({d}, "
                             f"{n_features}); got {B.shape}.")
        if not np.isin(B, (0.0, 1.0)).all():
            raise ValueError("B must be binary: every entry 0 or 1.")
    X = rng.uniform(0.0, 1.0, size=(n_samples, n_features))
    with np.errstate(over="ignore"):
        C = (X @ B.T / np.sqrt(n_features) + 1.0) ** degree
    if not np.isfinite(C).all():  # an overflow, not a cost: say so instead of returning inf
        raise ValueError(f"degree={degree} is too large for n_features={n_features}: the "
                         f"costs overflow float64 (a value above 1.8e308); choose a smaller "
                         f"degree.")
    eps = rng.uniform(1.0 - noise, 1.0 + noise, size=C.shape)
    C = C * eps
    return (X, C, B) if return_B else (X, C)


def make_news(n_samples, *, n_articles=6, n_features=5, random_state=None):
    """Synthetic stand-in for the paper's Yahoo! news click data (section 5.2).

    It is shaped like the real feature-cost pairs but is not derived from them:

    - ``X`` holds ``n_features`` user features drawn from a Dirichlet(1)
      distribution (like the Yahoo! conjoint features, non-negative and
      summing to one);
    - each article type ``k`` has a hidden Dirichlet feature vector ``a_k``;
      the true click probability is
      ``p_k = 0.02 + 0.18 * sigmoid(1.5 * s_k - 1)`` where ``s_k`` is the
      score ``x^T M a_k`` (``M`` a random mixing matrix) standardized over the
      data set, so probabilities lie in (0.02, 0.2);
    - each user cluster has a log-normal number of interactions (at least
      50 per article type), rounded down to a multiple of ``n_articles`` and
      shared evenly by the article types; the cost ``C[i, k]`` is the
      observed click rate, a binomial proportion around ``p_k``, and the
      sample weight is the number of interactions.

    Use with :func:`spotree.problems.news_recommendation` (a maximization LP).

    Parameters
    ----------
    n_samples : int
        Number of user clusters.
    n_articles : int, default=6
    n_features : int, default=5
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    C : ndarray of shape (n_samples, n_articles)
        Observed click rates in [0, 1].
    sample_weight : ndarray of shape (n_samples,)
        Number of interactions behind each row (a multiple of
        ``n_articles``: ``sample_weight / n_articles`` per article type).
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    n_articles = _check_int(n_articles, "n_articles", 1)
    n_features = _check_int(n_features, "n_features", 1)
    rng = _check_random_state(random_state)
    X = rng.dirichlet(np.ones(n_features), size=n_samples)
    A = rng.dirichlet(np.ones(n_features), size=n_articles)
    M = rng.normal(size=(n_features, n_features)) * 2.0 + np.eye(n_features) * 2.0
    score = X @ M @ A.T
    score = (score - score.mean()) / (score.std() + 1e-12)
    P = 0.02 + 0.18 / (1.0 + np.exp(-(1.5 * score - 1.0)))
    counts = np.maximum(np.round(rng.lognormal(mean=6.0, sigma=0.8, size=n_samples)),
                        50 * n_articles)
    per_article = np.maximum(np.floor(counts / n_articles), 1).astype(np.int64)
    clicks = rng.binomial(per_article[:, None], P)
    C = clicks / per_article[:, None]
    # The weight is the interactions the clicks were drawn from: the count
    # rounded down to a multiple of n_articles (it was the count itself, up to
    # n_articles - 1 more than the trials behind the row).
    return X, C.astype(np.float64), (per_article * n_articles).astype(np.float64)
