"""The news article recommendation LP of the paper (section 5.2)."""

from __future__ import annotations

import numbers

import numpy as np

from ._linear import LinearProgram, _InfeasibleError

__all__ = ["news_recommendation"]


def news_recommendation(n_articles=6, n_constraints=5, random_state=None):
    """The news article recommendation problem of the paper (section 5.2).

    ``max p^T w`` subject to ``w >= 0``, ``sum(w) = 1`` and ``a_m^T w <= 1``
    for ``m = 1..n_constraints``, with the entries of each ``a_m`` drawn
    i.i.d. from Exponential(1). ``w`` is the probability of recommending each
    article type and ``p`` the user's click probabilities.

    A drawn constraint set can be infeasible (for instance when every entry
    of some ``a_m`` exceeds 1). Then the whole matrix is drawn again from the
    same generator, so the result is still a deterministic function of
    ``random_state``; after 1,000 infeasible draws a ValueError is raised.

    Parameters
    ----------
    n_articles : int, default=6
        Number of article types d.
    n_constraints : int, default=5
        Number of constraints M.
    random_state : int, RandomState instance or None, default=None
        Seed of the constraint draw.

    Returns
    -------
    LinearProgram
        A maximization problem with ``n_costs = n_articles``.

    Examples
    --------
    >>> from spotree.problems import news_recommendation
    >>> problem = news_recommendation(random_state=0)
    >>> problem.n_costs, problem.sense, problem.A_ub.shape
    (6, 'max', (5, 6))
    """
    from sklearn.utils import check_random_state

    for name, value, low in (("n_articles", n_articles, 1), ("n_constraints", n_constraints, 0)):
        if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                or value < low):
            raise ValueError(f"The '{name}' parameter of news_recommendation must be an int in "
                             f"the range [{low}, inf). Got {value!r} instead.")
    rng = check_random_state(random_state)
    d, M = int(n_articles), int(n_constraints)
    for _ in range(1000):
        A = rng.exponential(1.0, size=(M, d))
        try:
            return LinearProgram(A_ub=A if M else None, b_ub=np.ones(M) if M else None,
                                 A_eq=np.ones((1, d)), b_eq=[1.0], bounds=(0, None),
                                 sense="max")
        except _InfeasibleError:
            pass
    raise ValueError(f"news_recommendation drew 1000 infeasible constraint sets with "
                     f"n_articles={d} and n_constraints={M}; use fewer constraints.")
