"""SPO Forests (paper section 4.3): bagged SPO Trees whose predicted costs are averaged.

Every tree is an :class:`~spotree.SPOTree` grown on a bootstrap sample with
feature bagging at each split. The sample is never copied: a tree sees all
rows, weighted by how often the bootstrap drew them (times the user's
weights), and rows drawn zero times drop out of its split search. The
per-fit statistics that need the decision oracle (the optimal values
``z*(c_i)``, or ``G = C V^T`` on the vertex path) are computed once for the
whole forest and shared by all trees, which only differ in their weights.
"""

from __future__ import annotations

import copy
import hashlib
import math
import numbers
import pickle
import threading
import warnings
from typing import NamedTuple

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, MultiOutputMixin, clone
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.validation import check_is_fitted

from ._categories import is_dataframe, unseen_to_missing
from ._params import RANDOM_STATE, InstanceOf, Interval, Options, check_bool, validate_params
from ._ridge import RidgeFeatures, cost_unit
from ._validation import (check_costs, check_features, check_fit_inputs, check_realized_costs,
                          check_same_rows, check_sample_weight, cost_names,
                          restored_on_failure)
from .metrics import normalized_spo_loss, zero_optima_hint
from .problems import resolve_problem
from .problems._base import check_picklable, solve_is_thread_safe, solver_session
from .tree import SPOTree, register_model
from .tree._classes import (CATEGORICAL_FEATURES, SPOScoreMixin, _categories_seen,
                            categorical_mask, warn_unused_spo_weight)
from .tree._builder import AbortFlag
from .tree._fit_data import FitData
from .tree._kernels import MODE_ORACLE, add_rows
from .tree._tree import TREE_LEAF

__all__ = ["SPOForest", "tune_max_features"]

_MAX_SEED = np.iinfo(np.int32).max
# Held by the calls that threads growing trees make to a shared problem.
_SHARED_PROBLEM_LOCK = threading.Lock()
# Redraws allowed when a bootstrap sample holds only zero-weight rows.
_MAX_REDRAWS = 100
# ridge_features=True adds one column per cost up to this many costs, and at
# most this many principal components of the predicted costs beyond.
_RIDGE_MAX_COLUMNS = 64
# criterion="auto" chooses on the first fifth of the trees (at least 20) of
# each criterion (paired: the same seeds and bootstrap samples), then grows
# the rest of the forest with the criterion chosen. On the design data (ICON
# shuffles 100-104, Uber seeds 100-105) 20 of 100 trees chose about as well as
# 100 did; more would cost more than issue 17's ICON forest target allows.
# Fewer lean to squared error: the out-of-bag predictions of a few trees are
# noisier for SPO trees (10 trees chose it wrongly in the forests guide's example).
_AUTO_PILOT_SHARE = 0.2
_AUTO_PILOT_MIN = 20


def _auto_pilot_trees(n_estimators):
    """How many trees of each criterion ``criterion="auto"`` chooses on."""
    return min(n_estimators, max(_AUTO_PILOT_MIN, math.ceil(_AUTO_PILOT_SHARE * n_estimators)))


def _n_bootstrap_draws(n, max_samples):
    if max_samples is None:
        return n
    if isinstance(max_samples, numbers.Integral):
        if max_samples > n:
            raise ValueError(f"The 'max_samples' parameter of SPOForest must be at most the "
                             f"number of samples ({n}) when it is an int. Got {max_samples} "
                             "instead.")
        return int(max_samples)
    return max(int(round(n * max_samples)), 1)


def _bootstrap_counts(seed, sw, n_draws):
    """How often each row is drawn in the bootstrap sample of the tree seeded by ``seed``.

    Rows are drawn uniformly with replacement (the user's weights multiply
    the counts afterwards, as in scikit-learn). A draw in which every drawn
    row has zero weight cannot grow a tree, so it is redrawn.
    """
    n = sw.shape[0]
    # PCG64 here, MT19937 (the tree's RandomState) for the feature draws:
    # one seed, two independent streams.
    rng = np.random.default_rng(seed)
    for _ in range(_MAX_REDRAWS):
        counts = np.bincount(rng.integers(0, n, n_draws), minlength=n)
        if (sw[counts > 0] > 0).any():
            return counts
    raise ValueError(f"{_MAX_REDRAWS} bootstrap samples in a row drew only rows with zero "
                     "sample_weight; give more rows a positive weight or raise max_samples.")


def _fit_tree(tree_params, seed, X, C, sw, problem, data, n_draws, abort, oob=False):
    """Grow one tree of the forest (runs in a joblib worker).

    ``oob=True`` (with bootstrap) returns ``(tree, rows, leaves)``: the rows
    out of the tree's bootstrap sample and the leaf each reaches, which the
    out-of-bag scores sum (routed here, in parallel, not after all trees).
    """
    w_scale = 1.0
    if n_draws is None:
        w, cnt = sw, (sw > 0).astype(np.float64)
    else:
        drawn = _bootstrap_counts(seed, sw, n_draws)
        counts = drawn.astype(np.float64)
        # min_samples_leaf counts draws, duplicates included (the paper's
        # bootstrap: as if the sample had been copied); draws of rows of zero
        # weight drop out of the tree, and out of the count that a fractional
        # min_samples_leaf or min_samples_split is a fraction of.
        cnt = counts * (sw > 0)
        with np.errstate(over="ignore"):
            w = counts * sw
        if not np.isfinite(w).all():
            # A weight near the float range times its draws is not a float:
            # the tree takes the weights in units of a power of two at least
            # the most draws (exact), and keeps its sums in the user's units.
            w_scale = math.ldexp(1.0, math.frexp(counts.max())[1])
            w = counts * (sw / w_scale)
    if data.mode == MODE_ORACLE:
        # On the oracle path the tree calls the problem at every node, and a
        # solver handle must not be shared between threads.
        problem = copy.deepcopy(problem)
        data = copy.copy(data)
        data.problem = problem
        if getattr(problem, "_model_shares_state", False):
            # The copy shares what could not be copied (a user's lock or
            # solver handle): on threads, the trees' calls take turns.
            data.solve_lock = _SHARED_PROBLEM_LOCK
    else:
        # Threads share the problem here, which a squared-error tree still
        # calls once, for its leaves' decisions: a user's oracle need not be
        # thread-safe, so the calls take turns, unless the problem is a
        # built-in one whose solve keeps no state (their own copy: their count).
        data = copy.copy(data)
        if not solve_is_thread_safe(problem):
            data.solve_lock = _SHARED_PROBLEM_LOCK
    tree = SPOTree(problem, random_state=seed, **tree_params)
    # Each tree's solves start afresh, whichever thread (and earlier tree) ran
    # on it: the forest does not depend on n_jobs.
    with solver_session():
        tree._fit_arrays(X, C, w, problem, fit_data=data, cnt=cnt, seed=seed, abort=abort,
                         w_scale=w_scale)
    if not oob or n_draws is None:
        return tree
    rows = np.flatnonzero(drawn == 0)
    # Kept until every tree of the forest (both pilot forests of
    # criterion="auto") has grown: int32 where the ids fit, half the memory.
    leaves = _oob_leaves(tree, X, rows)
    small = np.int32 if max(X.shape[0], tree.tree_.node_count) < 2 ** 31 else np.int64
    return tree, rows.astype(small), leaves.astype(small)


class _CategoryCodes(NamedTuple):
    """What :func:`_categories_seen` reads of a FitData (see ``_fit_auto``)."""

    cat_values: list
    codes: np.ndarray


def _sum_unit(trees):
    """1, or a power of two at the trees' largest leaf value where their sum could
    pass the float range (costs near it: the forest predicted inf and NaN).

    Dividing by it is exact, so the averages are the same numbers.
    """
    top = max((float(np.max(np.abs(est.tree_.value), initial=0.0)) for est in trees),
              default=0.0)
    if top * len(trees) < np.finfo(np.float64).max:
        return 1.0
    return float(cost_unit(np.array([top])))


def _oob_leaves(tree, X, rows):
    """The leaf of ``tree`` that each of ``rows`` (of ``X``) reaches."""
    return tree.tree_.apply(X[rows]) if rows.size else np.empty(0, dtype=np.int64)


def _data_key(X, C, sw):
    """A fingerprint of the training data, by which a warm start knows it is the same."""
    h = hashlib.blake2b(digest_size=16)
    for a in (X, C, sw):
        a = np.ascontiguousarray(a, dtype=np.float64)
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _tree_importances(tree):
    """Criterion-loss decrease per feature, recomputed from the tree arrays.

    The quantity the builder accumulates while growing, for trees loaded from
    JSON. The builder drops gains below the rounding-noise level of its
    training sums, which the file does not hold; gains below 1e-12 of the
    root's loss are dropped here instead, so the two agree up to noise.
    """
    imp = np.zeros(tree.n_features)
    internal = np.flatnonzero(tree.children_left != TREE_LEAF)
    gain = (tree.impurity[internal] - tree.impurity[tree.children_left[internal]]
            - tree.impurity[tree.children_right[internal]])
    keep = gain > 1e-12 * abs(tree.impurity[0])
    np.add.at(imp, tree.feature[internal[keep]], gain[keep])
    return imp


@register_model
class SPOForest(SPOScoreMixin, MultiOutputMixin, BaseEstimator):
    """A forest of SPO Trees: bagged trees whose predicted costs are averaged.

    Each tree is a greedy :class:`~spotree.SPOTree` with no depth limit by
    default, grown on a bootstrap sample of the training set with a random
    subset of the features considered at every split (feature bagging). For
    a new ``x``, the forest averages the trees' predicted cost vectors and
    decides the optimal decision for that average (paper section 4.3).
    By default (``criterion="auto"``) the trees split on the SPO loss, or on
    squared error where that makes better out-of-bag decisions.
    ``criterion="spo"`` is the paper's SPO forest; ``criterion="mse"`` grows
    CART trees, and with ``ridge_features=False`` as well that is the paper's
    random forest baseline, through the same code.

    Parameters
    ----------
    problem : DecisionProblem or None, default=None
        The optimization problem whose costs are predicted. None means "pick
        the cheapest of the d options" (``FiniteDecisions(np.eye(d))``, d
        taken from ``C`` at fit time).
    n_estimators : int, default=100
        Number of trees.
    criterion : {"auto", "spo", "mse"}, default="auto"
        ``"spo"`` grows SPO Trees (splits minimize decision regret);
        ``"mse"`` grows CART trees (splits minimize squared error);
        ``"auto"`` grows the first fifth of the trees (at least 20; 20 of
        the default 100) with both criteria (the same seeds, bootstrap
        samples and ridge features), compares the regret of the two small
        forests' out-of-bag decisions, and grows the other trees with the
        better criterion, SPO on ties: the forest is the one that criterion
        grows alone, for the price of a fifth more trees (with
        ``n_estimators`` <= 20, both whole forests). Neither criterion wins
        everywhere: on the ICON energy knapsack the SPO trees decide better,
        on the Uber travel times the squared-error ones (see the user
        guide's "Choosing a model"). Without bootstrap no row is out of bag
        and "auto" grows SPO trees.
    max_features : int, float, {"sqrt", "log2"} or None, default="sqrt"
        Number of features drawn at random at each split: an int, a fraction
        of the features, ``sqrt(p)``, ``log2(p)`` or all of them (None). The
        paper tunes it on a validation set, see :func:`tune_max_features`.
    bootstrap : bool, default=True
        Whether each tree sees a bootstrap sample. Without it every tree sees
        the whole training set and only feature bagging differs.
    max_samples : int, float or None, default=None
        Rows drawn (with replacement) per bootstrap sample: None for
        ``n_samples``, an int, or a fraction of ``n_samples`` (not None only
        with ``bootstrap=True``).
    max_depth : int or None, default=None
        Maximum depth of each tree.
    min_samples_leaf : int or float, default=1
        Minimum number of drawn rows in a leaf, whatever their weights, as
        in SPOTree: a bootstrap sample counts a row as often as it was drawn
        (as if the sample had been copied), and rows of zero
        ``sample_weight`` do not count. A float in (0, 1) is a fraction of
        the tree's drawn rows, rounded up.
    min_samples_split : int or float, default=2
        Minimum number of drawn rows in a node for it to be split, counted
        as ``min_samples_leaf``: an int at least 2, or a float in (0, 1], a
        fraction rounded up.
    min_weight_fraction_leaf : float in [0, 0.5], default=0.0
        Minimum fraction of the tree's total weight (bootstrap counts times
        sample weights) in a leaf.
    thresholds : "all" or int, default="all"
        Candidate thresholds per feature per node, as in SPOTree.
    categorical_features : array-like of int or str, array of bool, or None
        Features split by category, as in SPOTree (DataFrame columns of dtype
        ``category`` or ``string``, or ``object`` holding text, are
        categorical in any case).
    categorical_splits : {"equal", "subset"}, default="equal"
        As in SPOTree: one category left, or any subset of categories.
    spo_weight : float in [0, 1], default=1.0
        With ``criterion="spo"``, the weight of the SPO loss in each tree's
        mixed criterion, as in SPOTree (each tree normalizes by its own root
        losses). Unused with ``criterion="mse"`` (``fit`` warns when it is not
        1.0); with ``"auto"``, the SPO trees use it, the squared-error ones
        do not.
    min_loss_decrease : float, default=0.0
        A split is made only if it lowers the node's criterion loss by at
        least this much, as in SPOTree.
    ccp_alpha : float, default=0.0
        Cost-complexity pruning of each tree after growing, as in SPOTree
        (on the tree's own training criterion loss, bootstrap weights
        included).
    ridge_features : bool, default=True
        Whether the trees may also split on the costs predicted by a ridge
        regression fitted on the training set: one extra column per cost
        (each cost's penalty by leave-one-out error on standardized
        features), or, where there are more than 64 costs, the leading
        principal components of the predicted costs (as many as carry 99% of
        their variance, at most 64). A split on such a column is
        an oblique split, along the direction that predicts a cost; the
        drawn ``max_features`` counts them. Only numeric features enter the
        regression (a missing value as its column's mean); categorical ones
        are left to the trees. False grows the paper's forest, on the
        features alone. See Notes.
    oob_score : bool, default=False
        Whether to score the forest on the out-of-bag samples (needs
        ``bootstrap=True``, and training rows whose optimal values are not
        all zero: the normalized SPO loss divides by them).
    n_jobs : int or None, default=None
        Number of trees grown in parallel by joblib (None: 1 unless inside a
        ``joblib.parallel_config`` context; -1: all cores).
    random_state : int, RandomState instance or None, default=None
        Draws one seed per tree up front; each seed fixes its tree's
        bootstrap sample and feature draws. The fitted forest therefore does
        not depend on ``n_jobs`` or on the joblib backend, up to what the
        problem's own solves reproduce: a :class:`~spotree.LinearProgram`
        reproduces its decisions bit for bit, since each of its solves and
        each tree's fit starts from a clean state (see its Notes), unless
        its own ``n_jobs`` is set.
    verbose : int, default=0
        Progress of the fit, printed by joblib (0 is silent; higher values
        report more often).
    warm_start : bool, default=False
        When True and the forest is fitted, ``fit`` keeps its trees and grows
        only ``n_estimators - len(estimators_)`` new ones, as scikit-learn's
        forests do: fewer ``n_estimators`` than trees is an error, as many
        warns and grows none. The new trees' seeds continue the draws of
        ``random_state``, so with an int ``random_state`` a forest grown in
        steps on the same data is the forest one fit of ``n_estimators``
        trees grows (trees, predictions, ``oob_score_``). Kept from the
        first fit: ``problem_``, ``category_values_``, the ridge map
        ``ridge_features_`` (not refitted) and, with ``criterion="auto"``,
        ``criterion_`` and ``criterion_oob_scores_``: the criterion is chosen
        on the first fit's trees, where one fit of the larger forest chooses
        on more of them (and may choose otherwise). ``oob_score_`` and
        ``feature_importances_`` are recomputed over all the trees. ``X``
        must have the same columns and ``C`` the same costs; ``problem``,
        ``criterion``, ``spo_weight`` (unless the trees are squared-error
        ones), ``bootstrap``, ``max_samples``, ``ridge_features`` and
        ``categorical_features`` must not change (the others apply to the
        new trees only). Other training rows or weights are accepted, as
        in scikit-learn, but not with ``oob_score=True`` (the earlier trees'
        out-of-bag rows are rows of their own data), and
        ``estimators_samples_`` is then unknown. A pickled forest can be
        grown further; one read by :func:`spotree.load` cannot (the file
        holds neither the trees' seeds nor a fingerprint of the data).

    Attributes
    ----------
    estimators_ : list of SPOTree
        The fitted trees. They share the forest's ``problem_`` object. Tree
        ``k``'s ``random_state`` is the seed the forest drew for it (see
        ``random_state``), which fixes it within the forest; refitting that
        tree alone, ``clone(forest.estimators_[k]).fit(X, C)``, does not in
        general grow it again, even with ``bootstrap=False`` and ``ridge_features=False``:
        the forest gives the seed to the split search as it is (``SPOTree.fit``
        draws a seed from its ``random_state``), grows the tree on its
        bootstrap draws as weights (``min_samples_leaf`` counting draws) and,
        with ridge features, on ``X`` with the ridge columns added. The forest
        is what reproduces: the same ``random_state``, data and parameters
        grow the same trees.
    problem_ : DecisionProblem
        The problem used (``problem`` or the default one).
    feature_importances_ : ndarray of shape (n_features,)
        Mean over the trees of their normalized criterion-loss decrease per
        feature (trees that are a single leaf left out), normalized to sum
        to 1. The decrease of a split on a ridge feature column is shared
        among the features it reads in proportion to the magnitudes of its
        standardized coefficients. For the features that change the
        decisions, use permutation importance with
        :func:`~spotree.metrics.make_spo_scorer` (user guide: trees).
    ridge_features_ : RidgeFeatures or None
        With ``ridge_features=True``, the fitted map from the features to the
        extra columns (``transform(X)`` computes them, ``names()`` names
        them); None without, or when no feature is numeric. The trees hold
        it too and add the columns themselves: ``forest.estimators_[k]``
        predicts from the features as the forest does.
    oob_score_ : float
        Only with ``oob_score=True``: minus the normalized SPO loss of the
        out-of-bag decisions, greater is better (the same sign convention as
        :meth:`score` and scikit-learn's ``oob_score_``). Each row is judged
        by the decision for the average cost predicted by the trees whose
        bootstrap sample left it out; rows left out by no tree are skipped
        (with a warning); NaN, with a warning, when no sample of positive
        weight was out of bag. With ridge features, the ridge regression was fitted
        on every row, out-of-bag ones included, so the estimate leans a little
        optimistic.
    criterion_ : {"spo", "mse"}
        Only with ``criterion="auto"``: the criterion of the trees.
    criterion_oob_scores_ : ndarray of shape (2,)
        Only with ``criterion="auto"``: the out-of-bag scores (as
        ``oob_score_``, greater is better) of the first SPO trees and of the
        first squared-error trees (see ``criterion``), in that order (NaN
        without bootstrap).
    oob_prediction_ : ndarray of shape (n_samples, n_costs)
        Only with ``oob_score=True``: the averaged out-of-bag predicted costs
        of the training rows (NaN for rows that no tree left out).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only for DataFrame input with string column names.
    category_values_ : list or None
        Per column of X, its categories in the order of their codes: a
        ``category`` dtype's own (listed even when no row holds them),
        otherwise the labels of the training rows, sorted; None for a
        numeric column, including one marked in ``categorical_features``
        (its values are the codes); None when X has no category or text
        column.

    See Also
    --------
    SPOTree : a single SPO tree.
    tune_max_features : choose ``max_features`` on a validation set.

    Notes
    -----
    **Ridge features.** Axis-aligned splits approximate a cost that varies
    along a linear combination of many features poorly; with the ridge
    predictions as candidate split columns the trees can cut along those
    directions. On the ICON energy knapsack (196 day features, 48 prices;
    design shuffles 100-104 of ``spotree reproduce energy``) they lowered the
    forest's relative regret from 8.97 / 4.71 / 1.95 % to 8.60 / 4.55 /
    1.94 % at capacities 60 / 120 / 180, below scikit-learn's random forest
    (8.80 / 4.83 / 1.97 %); on PyEPO's 5x5 shortest path (1000 rows, noise
    0.5, design draws) the normalized regret fell by 0.009, 0.013 and 0.017
    at degrees 4, 6 and 8 and stayed level at degree 1. The map is fitted
    once per fit on all the training rows (the trees' bootstrap samples
    share it); it added 10-20% to the fit time on the ICON data. See
    ``benchmarks/results/energy_icon_forest_design.md``.

    The ridge columns are predicted costs, so they change sign with the
    costs: the forests of a ``"max"`` problem on ``C`` and of the ``"min"``
    problem on ``-C`` (the same decision problem) split the same columns
    negated. The SPO loss is a step function, so several thresholds of a
    column often tie, and the trees' rule for ties (the lowest threshold,
    see :class:`SPOTree`) then picks another of them: the two forests differ
    by that choice. Without ridge features they mirror each other
    (predictions negated, the same decisions). Fitting ``-C`` with the other
    sense instead (design draws 100-109, noise 0.5, 50 trees, 1000 test
    rows; paired change of the mean test regret in 1e-4 and its standard
    error, degrees 1 and 6): PyEPO's knapsack at 100 rows -14(10) -16(39);
    its 5x5 shortest path (as a list of its 70 paths) +3(12) +37(32) at 100
    rows and -2(11) -3(17) at 1000: no direction of the ties decided
    better.

    **Shared statistics.** What a tree needs from the oracle does not depend
    on its weights: the optimal value ``z*(c_i)`` of every training row (one
    batched oracle call over all rows) or, for problems that list their
    vertices, ``G = C V^T``. The forest computes them once and every tree
    reuses them; a 100-tree forest costs one such call, not 100.

    **Parallelism.** Trees are grown by joblib. When the problem lists its
    vertices (shortest paths, finite decision sets, small LPs), growing a
    tree calls no oracle at its nodes and the forest asks joblib for
    threads: they share the data with no pickling and no worker start-up,
    and the compiled split sweeps and node sums (about 40% of a tree's time)
    release the GIL. (A squared-error tree solves its leaves' costs in one
    batch at the end; the threads share the problem, so these calls take
    turns, and an oracle need not be thread-safe. The built-in shortest
    paths, assignments and finite decision sets, whose solves keep no
    state, are called at once.)
    Processes (loky) would also run the per-node Python work in parallel,
    but pay for worker start-up and for pickling every fitted tree back; on
    a two-core machine they were slower than threads
    (``benchmarks/bench_forest.py --backend loky``).
    Otherwise every tree calls the oracle at every node (Python and solver
    code holding the GIL, solver handles that must not be shared between
    threads), so the forest asks for processes and gives every tree a
    private copy of the problem; the first parallel fit of a session waits
    for the worker processes to start (seconds), later fits reuse them. Both
    are only preferences: a backend chosen with ``joblib.parallel_config``
    wins.

    **Dask.** With the ``spotree[dask]`` extra the same fit runs on a
    dask.distributed cluster, one task per tree, through joblib's dask
    backend. The result is identical to a local fit with the same
    ``random_state``::

        from dask.distributed import Client, LocalCluster
        from joblib import parallel_config

        client = Client(LocalCluster(n_workers=4))  # or Client("scheduler:8786")
        with parallel_config(backend="dask"):
            forest = SPOForest(ShortestPath((4, 4)), n_estimators=500).fit(X, C)

    Examples
    --------
    >>> from spotree import SPOForest, ShortestPath
    >>> from spotree.datasets import make_shortest_path
    >>> X, C, B = make_shortest_path(300, degree=4, noise=0.25, random_state=0,
    ...                              return_B=True)
    >>> X_test, C_test = make_shortest_path(500, degree=4, noise=0.25, B=B,
    ...                                     random_state=1)
    >>> forest = SPOForest(ShortestPath((4, 4)), n_estimators=20, min_samples_leaf=20,
    ...                    max_features=3, random_state=0).fit(X, C)
    >>> forest.predict(X_test).shape
    (500, 24)
    >>> decisions = forest.predict_decision(X_test)  # one shortest path per row
    >>> bool(decisions.sum(axis=1).max() == 6)         # 6 edges per path on a 4x4 grid
    True
    """

    _parameter_constraints = {
        "n_estimators": [Interval(int, 1, None)],
        "criterion": [Options("spo", "mse", "auto")],
        "max_features": [Interval(int, 1, None), Interval(float, 0.0, 1.0, "right"),
                         Options("sqrt", "log2"), None],
        "bootstrap": [InstanceOf((bool, np.bool_), "a bool")],
        "max_samples": [Interval(int, 1, None), Interval(float, 0.0, 1.0, "right"), None],
        "max_depth": [Interval(int, 1, None), None],
        "min_samples_leaf": [Interval(int, 1, None), Interval(float, 0.0, 1.0, "neither")],
        "min_samples_split": [Interval(int, 2, None),
                              Interval(float, 0.0, 1.0, "right", ints=False)],
        "min_weight_fraction_leaf": [Interval(float, 0.0, 0.5)],
        "thresholds": [Options("all"), Interval(int, 1, None)],
        "categorical_features": [CATEGORICAL_FEATURES, None],
        "categorical_splits": [Options("equal", "subset")],
        "spo_weight": [Interval(float, 0.0, 1.0)],
        "min_loss_decrease": [Interval(float, 0.0, None)],
        "ccp_alpha": [Interval(float, 0.0, None)],
        "ridge_features": [InstanceOf((bool, np.bool_), "a bool")],
        "oob_score": [InstanceOf((bool, np.bool_), "a bool")],
        "n_jobs": [Interval(int, None, -1), Interval(int, 1, None), None],
        "verbose": [Interval(int, 0, None), InstanceOf((bool, np.bool_), "a bool")],
        "random_state": RANDOM_STATE,
        "warm_start": [InstanceOf((bool, np.bool_), "a bool")],
    }

    # Fitted attributes written to and read from JSON besides the trees.
    _persist_extra = ("oob_score_", "category_values_", "categories_seen_", "_trees_loss_scales",
                      "ridge_features_", "criterion_", "criterion_oob_scores_")

    def __init__(self, problem=None, *, n_estimators=100, criterion="auto", max_features="sqrt",
                 bootstrap=True, max_samples=None, max_depth=None, min_samples_leaf=1,
                 min_samples_split=2, min_weight_fraction_leaf=0.0, thresholds="all",
                 categorical_features=None, categorical_splits="equal", spo_weight=1.0,
                 min_loss_decrease=0.0, ccp_alpha=0.0, ridge_features=True, oob_score=False,
                 n_jobs=None, random_state=None, verbose=0, warm_start=False):
        self.problem = problem
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_samples_split = min_samples_split
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.thresholds = thresholds
        self.categorical_features = categorical_features
        self.categorical_splits = categorical_splits
        self.spo_weight = spo_weight
        self.min_loss_decrease = min_loss_decrease
        self.ccp_alpha = ccp_alpha
        self.ridge_features = ridge_features
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    # ---------------------------------------------------------------- fit
    def _grow_criterion(self):
        """The trees' criterion: ``criterion``, or for "auto" the one being grown or kept."""
        return self.criterion_ if self.criterion == "auto" else self.criterion

    def _tree_params(self):
        # Every parameter of SPOTree but problem and random_state (one seed per tree).
        return {"criterion": self._grow_criterion(), "max_depth": self.max_depth,
                "min_samples_leaf": self.min_samples_leaf,
                "min_samples_split": self.min_samples_split,
                "min_weight_fraction_leaf": self.min_weight_fraction_leaf,
                "max_features": self.max_features, "thresholds": self.thresholds,
                "categorical_features": self.categorical_features,
                "categorical_splits": self.categorical_splits, "spo_weight": self.spo_weight,
                "min_loss_decrease": self.min_loss_decrease, "ccp_alpha": self.ccp_alpha}

    def _ridge_map(self, X, C, sw):
        """The fitted ridge features (or None) and the columns the trees split on."""
        fmap = None
        if self.ridge_features:
            numeric = ~categorical_mask(self, X.shape[1])
            fmap = RidgeFeatures.fit(X, C, sw, numeric, _RIDGE_MAX_COLUMNS)
        return fmap, (X if fmap is None else fmap.augment(X))

    def _fit_data(self, X, C, problem, fmap=None):
        """The per-fit statistics shared by all trees (the only full oracle call).

        ``X`` holds the extra columns of ``fmap`` (numeric) after the features.
        """
        p = X.shape[1] - (0 if fmap is None else fmap.n_out)
        mask = np.concatenate([categorical_mask(self, p), np.zeros(X.shape[1] - p, bool)])
        need_spo = self._grow_criterion() == "spo" and self.spo_weight > 0.0
        return FitData(problem, X, C, mask, need_spo=need_spo)

    def fit(self, X, C, sample_weight=None):
        """Grow the forest on features X and realized costs C.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features, as in :meth:`SPOTree.fit`: NaN (or None in an
            ``object`` column of numbers) marks a missing value, routed by
            the trees (and replaced by its column's mean in the ridge
            regression of ``ridge_features``); DataFrame columns of dtype
            ``category`` or ``string``, or ``object`` holding text, are
            categorical features.
        C : array-like of shape (n_samples, n_costs)
            Realized cost vectors; ``n_costs`` must match the problem.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, not all zero. With ``bootstrap=True`` they
            multiply the bootstrap counts: as in scikit-learn's forests the
            rows are drawn uniformly from all the rows, so a row of weight 0
            still takes draws (it weighs nothing in any tree, but the other
            rows' draws change with it), and a row of weight ``k`` is not
            ``k`` copies (which would be drawn independently). Without
            bootstrap a row of weight 0 is a row removed, and with
            ``ridge_features=False`` one of integer weight ``k`` is ``k``
            copies except for the rules that count rows (as in
            :meth:`SPOTree.fit`); the ridge regression of ``ridge_features``
            chooses its penalties by leave-one-out error, which leaves out a
            row with all its weight but only one of ``k`` copies. Scaling
            every weight by one factor changes nothing either way, up to the
            exceptions of :meth:`SPOTree.fit`.

        Returns
        -------
        self : SPOForest
        """
        with restored_on_failure(self):
            validate_params(self)
            warn_unused_spo_weight(self)
            if self.warm_start and hasattr(self, "estimators_"):
                return self._fit_warm(X, C, sample_weight)
            X, C, sw = check_fit_inputs(self, X, C, sample_weight)
            problem = resolve_problem(self.problem, C)
            fmap, X = self._ridge_map(X, C, sw)
            if self.criterion == "auto":
                return self._fit_auto(X, C, sw, problem, fmap)
            for name in ("criterion_", "criterion_oob_scores_"):
                if hasattr(self, name):
                    delattr(self, name)
            return self._fit_validated(X, C, sw, problem, self._fit_data(X, C, problem, fmap), fmap)

    def _fit_auto(self, X, C, sw, problem, fmap, base=None, oob_stacklevel=5):
        """``criterion="auto"``: the first trees of both criteria (the same seeds,
        bootstrap samples and ridge map), the rest with the one whose
        out-of-bag decisions are better. ``base``: the fit statistics when
        already computed (they serve both criteria)."""
        self.criterion_ = "spo"
        own_base = base is None
        if base is None:
            # Built for the SPO trees, they serve the squared-error ones too:
            # one oracle pass and one presort for both criteria.
            base = self._fit_data(X, C, problem, fmap)
        if not self.bootstrap:
            # No row is out of bag to choose by: the SPO forest, as documented.
            self._fit_validated(X, C, sw, problem, base, fmap, oob_stacklevel=oob_stacklevel + 1)
            self.criterion_oob_scores_ = np.array([np.nan, np.nan])
            return self
        if self.oob_score:
            self._check_oob_scorable(sw, base)
        n_draws = _n_bootstrap_draws(X.shape[0], self.max_samples)
        seeds = self._draw_seeds()
        k = _auto_pilot_trees(len(seeds))
        # Both pilots in one parallel call: one wait for the last tree, not two.
        # The workers route their trees' out-of-bag rows too: what is left
        # between the two parallel calls is the sums and the two scores.
        both, parts = self._grow(X, C, sw, problem, base, fmap,
                                 np.concatenate([seeds[:k], seeds[:k]]), n_draws,
                                 criteria=["spo"] * k + ["mse"] * k, oob=True)
        pilots = {"spo": (both[:k], parts[:k]), "mse": (both[k:], parts[k:])}
        zs = base.zs
        if own_base and k == len(seeds):
            # No tree grows after the pilots: of the fit statistics (Cm, G, the
            # presorted rows: 44 MB at 100,000 rows of 24 costs) the rest of the
            # fit needs only the optimal values and the categories, and both
            # pilot forests are held while they are scored.
            base = _CategoryCodes(base.cat_values, base.codes)
        # Rows that no pilot tree left out take no part in the choice (no
        # warning: the user asked for no out-of-bag score).
        scores = [self._oob(X, C, sw, pilots[crit][0], seeds[:k], n_draws, problem,
                            z_rows=zs, parts=pilots[crit][1], prediction=False)[2]
                  for crit in ("spo", "mse")]
        # SPO unless the squared-error trees are strictly better (a NaN
        # score, no row out of bag, keeps SPO).
        self.criterion_ = "mse" if scores[1] > scores[0] else "spo"
        trees, parts = pilots[self.criterion_]
        # The other pilot forest, and the routed rows unless scored again, are
        # not needed any more: freed before the rest of the trees grow.
        del both, pilots
        if not self.oob_score:
            parts = None
        if k < len(seeds):
            more, more_parts = self._grow(X, C, sw, problem, base, fmap, seeds[k:], n_draws,
                                          oob=self.oob_score)
            trees = trees + more
            parts = parts + more_parts if self.oob_score else None
        self._set_forest(trees, seeds, n_draws, X, C, sw, problem, base, fmap, self.oob_score,
                         oob_stacklevel, parts=parts)
        self.criterion_oob_scores_ = np.array(scores)
        return self

    # Parameters that all the trees of one forest share: a warm start may not change them.
    # spo_weight is part of the SPO trees' criterion: a saved forest holds one value, by
    # which its loaded trees prune (older trees pruned on the newer criterion's weight).
    _WARM_FIXED = ("problem", "criterion", "spo_weight", "bootstrap", "max_samples",
                   "ridge_features", "categorical_features")

    def _fixed_params(self):
        cf = self.categorical_features
        return {"problem": self.problem, "criterion": self.criterion,
                "spo_weight": float(self.spo_weight),
                "bootstrap": bool(self.bootstrap), "max_samples": self.max_samples,
                "ridge_features": bool(self.ridge_features),
                "categorical_features": None if cf is None else np.asarray(cf).tolist()}

    def _fit_warm(self, X, C, sample_weight):
        """``fit`` of a fitted forest with ``warm_start=True``: grow only the new trees,
        seeded as one fit of ``n_estimators`` trees would seed them."""
        fixed = getattr(self, "_warm_fixed", None)
        if fixed is None or getattr(self, "_fit_key", None) is None:
            raise ValueError("warm_start=True cannot grow this SPOForest further: it was read by "
                             "spotree.load (or pickled by a spotree without warm_start), and "
                             "neither keeps the trees' seeds nor a fingerprint of their "
                             "training data. Set warm_start=False to fit a new forest; keep a "
                             "forest to be grown later with pickle or joblib.")
        # As at predict: the columns (and category codes) of the first fit.
        X = check_features(self, X, reset=False)
        problem = self.problem_
        C = check_realized_costs(self, C, X.shape[0], n_costs=problem.n_costs,
                                 names=cost_names(problem))
        sw = check_sample_weight(sample_weight, X.shape[0])
        now = self._fixed_params()
        fixed = dict(fixed)
        # (A forest pickled before spo_weight was kept here: its trees' own.)
        fixed.setdefault("spo_weight", float(self.estimators_[-1].spo_weight))
        if self._grow_criterion() == "mse":
            fixed["spo_weight"] = now["spo_weight"]  # unused by squared-error trees
        changed = [f"{k}={now[k]!r} (it was {fixed[k]!r})" for k in self._WARM_FIXED
                   if (now[k] is not fixed[k] if k == "problem" else now[k] != fixed[k])]
        if changed:
            raise ValueError(f"warm_start=True grows more trees of the fitted forest, which all "
                             f"share these parameters, now changed: {'; '.join(changed)}. Set "
                             "them back, or set warm_start=False to fit a new forest.")
        n_old = len(self.estimators_)
        if self.n_estimators < n_old:
            raise ValueError(f"n_estimators={self.n_estimators} must be larger or equal to "
                             f"len(estimators_)={n_old} when warm_start==True")
        if self.n_estimators == n_old:
            warnings.warn("Warm-start fitting without increasing n_estimators does not fit "
                          "new trees.", UserWarning, stacklevel=3)
            # (As scikit-learn: oob_score switched on since computes it.)
            if not self.oob_score or hasattr(self, "oob_score_"):
                return self
        fmap = self.ridge_features_  # fitted on the first fit's rows, not refitted
        Xa = X if fmap is None else fmap.augment(X)
        if self.oob_score:
            if not self.bootstrap:
                raise ValueError("Out-of-bag estimation (oob_score=True) needs bootstrap=True: "
                                 "without bootstrap no sample is out of bag.")
            if _data_key(Xa, C, sw) != self._fit_key:
                raise ValueError("oob_score=True with warm_start=True needs the training data "
                                 "of the earlier fits (the same X, C and sample_weight): the "
                                 "earlier trees' out-of-bag rows are rows of that data. Pass it "
                                 "again, or set oob_score=False.")
        # (With criterion="auto", criterion_ of the first fit.)
        base = self._fit_data(Xa, C, problem, fmap)
        if self.oob_score:
            self._check_oob_scorable(sw, base)
        n_draws = _n_bootstrap_draws(X.shape[0], self.max_samples) if self.bootstrap else None
        # The draws go on where the earlier fits stopped (a RandomState
        # instance: skipping as many draws as there are trees, as scikit-learn).
        new_seeds = self._draw_seeds()[n_old:]
        trees, parts = self._grow(Xa, C, sw, problem, base, fmap, new_seeds, n_draws,
                                  oob=self.oob_score)
        if parts is not None:
            # The earlier trees' rows are routed again (None: not known).
            parts = [None] * n_old + parts
        return self._set_forest(self.estimators_ + trees, np.concatenate([self._seeds, new_seeds]),
                                n_draws, Xa, C, sw, problem, base, fmap, self.oob_score, 5,
                                previous=(self._fit_key, self.categories_seen_), parts=parts)

    def _fit_validated(self, X, C, sw, problem, base, fmap, oob=None, oob_stacklevel=5):
        """Grow the trees on ``X``: the features, then the columns of ``fmap``.

        ``oob``: whether to set the out-of-bag score (default ``oob_score``);
        ``oob_stacklevel``: of its warning on rows never out of bag (None: no
        warning).
        """
        oob = self.oob_score if oob is None else oob
        if oob and not self.bootstrap:
            raise ValueError("Out-of-bag estimation (oob_score=True) needs bootstrap=True: "
                             "without bootstrap no sample is out of bag.")
        if self.max_samples is not None and not self.bootstrap:
            # (It was ignored: every tree saw all the rows.)
            raise ValueError(f"max_samples={self.max_samples!r} sets the size of each bootstrap "
                             "sample and needs bootstrap=True; without bootstrap every tree "
                             "sees all the rows (leave max_samples=None).")
        if oob:
            self._check_oob_scorable(sw, base)
        n_draws = _n_bootstrap_draws(X.shape[0], self.max_samples) if self.bootstrap else None
        seeds = self._draw_seeds()
        trees, parts = self._grow(X, C, sw, problem, base, fmap, seeds, n_draws, oob=oob)
        return self._set_forest(trees, seeds, n_draws, X, C, sw, problem, base, fmap, oob,
                                oob_stacklevel, parts=parts)

    @staticmethod
    def _check_oob_scorable(sw, base):
        """Refuse ``oob_score=True`` before any tree grows when no out-of-bag
        score can exist: the training rows' optimal values are all zero."""
        # (The normalized SPO loss raised this once every tree had grown, in
        # words that named no argument.)
        if not ((sw > 0) & (base.zs != 0)).any():  # (a dot product overflowed at 1e308)
            raise ValueError("oob_score=True: the optimal values z*(C_true) are all zero on the "
                             "training rows of positive weight, so their normalized SPO loss "
                             "(oob_score_) is undefined; set oob_score=False and score the "
                             "forest with spotree.metrics.spo_loss instead. "
                             + zero_optima_hint(base.problem))

    def _draw_seeds(self):
        # All seeds drawn before any tree is grown: tree k's randomness is
        # fixed by random_state and k alone, whatever runs it.
        return check_random_state(self.random_state).randint(_MAX_SEED, size=self.n_estimators)

    def _grow(self, X, C, sw, problem, base, fmap, seeds, n_draws, criteria=None, oob=False):
        """One tree per seed (in parallel), with the current criterion or, given,
        ``criteria[k]`` for tree k: ``(trees, parts)``.

        ``parts``: with ``oob`` (and bootstrap), per tree its out-of-bag rows
        and the leaves they reach (see :meth:`_oob`); None otherwise.
        """
        oob = bool(oob) and n_draws is not None
        # Compiled growth releases the GIL: threads share the data for free.
        prefer = "processes" if base.mode == MODE_ORACLE else "threads"
        params = self._tree_params()
        if criteria is None:
            criteria = [params["criterion"]] * len(seeds)
        abort = AbortFlag()
        try:
            # Worker processes map the shared arrays copy-on-write ("c"), not
            # read-only: the compiled growth takes writable arrays only (a
            # read-only one is another type, compiled again), so each tree
            # copied the fit statistics (~40 MB per tree at 100,000 rows).
            trees = Parallel(n_jobs=self.n_jobs, verbose=self.verbose, prefer=prefer,
                             mmap_mode="c")(
                delayed(_fit_tree)(dict(params, criterion=c), int(s), X, C, sw, problem, base,
                                   n_draws, abort, oob)
                for c, s in zip(criteria, seeds))
        except BaseException as exc:
            # Ctrl-C or a tree's error: the threads still growing trees stop
            # at their next chunk of compiled work (they went on to the end).
            abort.set()
            if isinstance(exc, pickle.PicklingError):
                # joblib's message ("could not pickle the task") hides why; a
                # problem that cannot travel to the worker processes says so
                # itself (a CallableProblem names its oracle and the fix; any
                # other problem its unpicklable attributes).
                check_picklable(problem)
            raise
        parts = None
        if oob:
            parts = [(rows, leaves) for _, rows, leaves in trees]
            trees = [tree for tree, _, _ in trees]
        if fmap is not None:
            # Importances of the features, the ridge columns' shares folded in.
            for tree in trees:
                imp = fmap.fold_importances(tree.feature_importances_, self.n_features_in_)
                total = imp.sum()
                tree.feature_importances_ = imp / total if total > 0 else imp
        return trees, parts

    def _set_forest(self, trees, seeds, n_draws, X, C, sw, problem, base, fmap, oob,
                    oob_stacklevel, previous=None, parts=None):
        """Make ``trees`` (grown from ``seeds``) the fitted forest.

        ``previous``: on a warm start, the data fingerprint and the
        ``categories_seen_`` of the earlier trees; ``parts``: the trees'
        out-of-bag rows and leaves where known (see :meth:`_oob`).
        """
        p = self.n_features_in_
        # A row of zero weight is a row removed: its categories are not seen.
        seen = _categories_seen(base, sw > 0)[:p]
        key = _data_key(X, C, sw)
        if previous is not None and previous[0] != key:
            # Warm start on other rows: a category is seen if some tree saw it,
            # and no single data set holds the rows of all the trees.
            old = previous[1] if previous[1] is not None else [None] * p
            seen = [b if a is None else a if b is None else np.union1d(a, b)
                    for a, b in zip(old, seen)]
            key = "mixed"
        self._fit_key = key
        self._warm_fixed = self._fixed_params()
        # Saved in place of values set after fit: a file of n_estimators=5
        # holding 3 trees (set_params before a warm start), or of criterion
        # 'auto' without criterion_, was refused by load as malformed.
        self._fit_params = {"n_estimators": len(trees), "criterion": self.criterion,
                            "spo_weight": self.spo_weight}
        self.categories_seen_ = seen if any(v is not None for v in seen) else None
        self.ridge_features_ = fmap
        for tree in trees:
            # One problem object for the whole forest (workers return copies).
            tree.problem = tree.problem_ = problem
            tree.n_features_in_ = self.n_features_in_
            tree.category_values_ = self.category_values_
            tree.categories_seen_ = self.categories_seen_
            tree.ridge_features_ = fmap
            if hasattr(self, "feature_names_in_"):
                tree.feature_names_in_ = self.feature_names_in_
        self.problem_ = problem
        self.estimators_ = trees
        # [s_spo, s_mse], and the unit of the two where it is not 1 (costs whose
        # squares are not floats: see SPOTree.loss_unit_), so that files of
        # ordinary costs read as before.
        self._trees_loss_scales = [[float(x) for x in t.loss_scales_]
                                   + ([t._loss_unit()] if t._loss_unit() != 1.0 else [])
                                   for t in trees]
        self._seeds = seeds
        self._bootstrap_draws = n_draws
        self._sw_fit = sw
        self.feature_importances_ = self._mean_importances(
            [t.feature_importances_ for t in trees], [t.tree_.node_count for t in trees])
        if oob:
            self._set_oob_score(X, C, sw, seeds, n_draws, oob_stacklevel, parts=parts)
        elif hasattr(self, "oob_score_"):
            del self.oob_score_, self.oob_prediction_
        return self

    @staticmethod
    def _mean_importances(per_tree, node_counts):
        used = [imp for imp, k in zip(per_tree, node_counts) if k > 1]
        if not used:
            return np.zeros_like(per_tree[0])
        mean = np.mean(used, axis=0)
        s = mean.sum()
        return mean / s if s > 0 else mean

    def _oob(self, X, C, sw, trees, seeds, n_draws, problem, z_rows=None, parts=None,
             prediction=True):
        """Out-of-bag predictions of ``trees`` (grown from ``seeds``), the rows that
        have one, and their score (``oob_score_``). ``z_rows``: the rows'
        optimal values, or a multiple of them; given, a score the normalized
        SPO loss cannot define (those of the out-of-bag rows all zero) is NaN
        instead of an error. ``parts``: per tree, its out-of-bag rows and
        their leaves as the workers found them, or None where not known.
        ``prediction=False`` returns None for the predictions (the choice of
        ``criterion="auto"`` needs only the score)."""
        n, d = C.shape
        n_pred = np.zeros(n, dtype=np.int64)
        if parts is None:
            parts = [None] * len(trees)

        def add_trees(unit, total):
            # The trees' values are added in the order of the trees, whoever
            # routed the rows: the same sums (bit for bit) for any n_jobs.
            total[:] = 0.0
            n_pred[:] = 0
            for seed, est, part in zip(seeds, trees, parts):
                if part is None:
                    oob = np.flatnonzero(_bootstrap_counts(int(seed), sw, n_draws) == 0)
                    part = oob, _oob_leaves(est, X, oob)
                oob, leaves = (np.asarray(a, dtype=np.int64) for a in part)
                if oob.size:
                    value = est.tree_.value
                    add_rows(value if unit == 1.0 else value / unit, leaves, oob, total)
                    n_pred[oob] += 1
            return total

        total = add_trees(1.0, np.zeros((n, d)))
        # Checked on the sums, not on every leaf value first (a scan of all the
        # trees' values was most of a one-row predict's time): leaf values near
        # the float range summed past it are added again in units of a power of
        # two (exact, so the same averages).
        unit = 1.0 if np.isfinite(total).all() else _sum_unit(trees)
        if unit != 1.0:
            add_trees(unit, total)
        has = n_pred > 0
        # The averages of the rows that have one, in place: each n x d array
        # held at once here (the sums, the predictions, both of the rows with
        # one, C of those rows) was 18 MB at 100,000 rows of 24 costs, next to
        # the two pilot forests of criterion="auto".
        every = bool(has.all())
        mean = total if every else total[has]
        del total
        mean /= n_pred[has, None] if not every else n_pred[:, None]
        if unit != 1.0:
            mean *= unit
        pred = None
        if prediction:
            if every:
                pred = mean
            else:
                pred = np.full((n, d), np.nan)
                pred[has] = mean
        if not (sw[has] > 0).any() or (
                z_rows is not None and not ((sw[has] > 0) & (z_rows[has] != 0)).any()):
            return pred, has, np.nan
        return pred, has, -normalized_spo_loss(C if every else C[has], mean, problem=problem,
                                               sample_weight=sw if every else sw[has])

    def _set_oob_score(self, X, C, sw, seeds, n_draws, stacklevel=4, parts=None):
        """``oob_score_`` and ``oob_prediction_`` of the fitted trees, with a
        warning (at ``stacklevel``; None: none) of rows that have no out-of-bag
        prediction. ``parts``: see :meth:`_oob`."""
        self.oob_prediction_, has, self.oob_score_ = self._oob(
            X, C, sw, self.estimators_, seeds, n_draws, self.problem_, parts=parts)
        n = has.size
        if not has.all() and stacklevel is not None:
            warnings.warn(f"{int((~has).sum())} of {n} training samples were in every "
                          "bootstrap sample and have no out-of-bag prediction; oob_score_ "
                          "is computed without them (more trees make this rarer).",
                          UserWarning, stacklevel=stacklevel)
        if np.isnan(self.oob_score_) and stacklevel is not None:
            warnings.warn("oob_score_ is NaN: no sample of positive weight was out of bag.",
                          UserWarning, stacklevel=stacklevel)

    @property
    def estimators_samples_(self):
        """The rows each tree was grown on: its bootstrap draw, with repeats.

        A list of sorted int arrays, one per tree (``arange(n_samples)`` for
        every tree without bootstrap). Only after ``fit`` (not for a forest
        loaded from a file, whose seeds are not stored).
        """
        check_is_fitted(self, "estimators_")
        if getattr(self, "_seeds", None) is None:
            raise AttributeError("estimators_samples_ is only known after fit (a loaded "
                                 "forest does not store its bootstrap draws).")
        if getattr(self, "_fit_key", None) == "mixed":
            raise AttributeError("estimators_samples_ is unknown: warm_start grew trees on "
                                 "other training rows than the earlier trees'.")
        n = self._sw_fit.shape[0]
        if self._bootstrap_draws is None:
            return [np.arange(n) for _ in self._seeds]
        return [np.repeat(np.arange(n), _bootstrap_counts(int(s), self._sw_fit,
                                                          self._bootstrap_draws))
                for s in self._seeds]

    # ---------------------------------------------------------- predict
    def _validate_X_predict(self, X):
        check_is_fitted(self, "estimators_")
        X = check_features(self, X, reset=False)
        X = unseen_to_missing(X, getattr(self, "categories_seen_", None))
        fmap = getattr(self, "ridge_features_", None)
        return X if fmap is None else fmap.augment(X)

    def apply(self, X):
        """Leaf index of every sample in every tree.

        Returns
        -------
        ndarray of shape (n_samples, n_estimators)
        """
        X = self._validate_X_predict(X)
        return np.column_stack([est.tree_.apply(X) for est in self.estimators_])

    def predict(self, X):
        """Predicted costs: the average of the trees' predicted costs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_costs)
        """
        X = self._validate_X_predict(X)
        out = np.zeros((X.shape[0], self.problem_.n_costs))
        rows = np.arange(X.shape[0])

        def add_trees(unit):
            out[:] = 0.0
            for est in self.estimators_:
                tree = est.tree_
                add_rows(tree.value if unit == 1.0 else tree.value / unit, tree.apply(X), rows,
                         out)

        add_trees(1.0)
        # As in _oob: checked on the sums, then again in units where they overflowed.
        unit = 1.0 if np.isfinite(out).all() else _sum_unit(self.estimators_)
        if unit != 1.0:
            add_trees(unit)
        out /= len(self.estimators_)
        return out if unit == 1.0 else out * unit

    def predict_decision(self, X):
        """Decisions: the optimal decision for each sample's averaged predicted costs.

        All rows are solved in one batched oracle call.

        Returns
        -------
        ndarray of shape (n_samples, n_costs)
        """
        P = self.predict(X)
        W, _ = self.problem_.solve(P)
        return W

    # ------------------------------------------------------ persistence
    def _set_trees_from_load(self, trees):
        """Rebuild ``estimators_`` from the tree arrays of a saved forest."""
        if len(trees) != self.n_estimators:
            raise ValueError(f"a SPOForest file with n_estimators={self.n_estimators} holds "
                             f"{len(trees)} trees.")
        if self.criterion == "auto" and not hasattr(self, "criterion_"):
            raise ValueError("a malformed SPOForest model: with criterion 'auto', "
                             "fitted.criterion_ must say which forest was kept ('spo' or "
                             "'mse'); it is missing.")
        names = getattr(self, "feature_names_in_", None)
        fmap = getattr(self, "ridge_features_", None)
        # Each tree's root losses, the normalizers of a mixed criterion
        # (spo_weight < 1); (1, 1) for a pure one.
        scales = getattr(self, "_trees_loss_scales", None)
        if scales is None and not (self._grow_criterion() == "spo" and 0.0 < self.spo_weight < 1.0):
            scales = [(1.0, 1.0)] * len(trees)
        elif not (isinstance(scales, list) and len(scales) == len(trees) and all(
                isinstance(v, list) and len(v) in (2, 3)
                and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                        and np.isfinite(x) and x > 0 for x in v)
                and (len(v) == 2 or np.frexp(v[2])[0] == 0.5) for v in scales)):
            raise ValueError(f"a malformed SPOForest model: fitted._trees_loss_scales must "
                             f"list {len(trees)} pairs of positive numbers (each followed, "
                             "where it is not 1, by their unit, a power of two).")
        ests = []
        for t, scale in zip(trees, scales):
            est = SPOTree(self.problem_, **self._tree_params())
            est.problem_ = self.problem_
            est.tree_ = t
            est.n_features_in_ = self.n_features_in_
            est.category_values_ = getattr(self, "category_values_", None)
            est.categories_seen_ = getattr(self, "categories_seen_", None)
            est.ridge_features_ = fmap
            if names is not None:
                est.feature_names_in_ = names
            imp = _tree_importances(t)
            if fmap is not None:
                imp = fmap.fold_importances(imp, self.n_features_in_)
            s = imp.sum()
            est.feature_importances_ = imp / s if s > 0 else imp
            est.loss_scales_ = tuple(float(x) for x in scale[:2])
            est.loss_unit_ = float(scale[2]) if len(scale) == 3 else 1.0
            ests.append(est)
        self.estimators_ = ests

    def save(self, path):
        """Write the fitted forest as JSON (see :func:`spotree.load`); no pickle involved."""
        from .tree._persist import save_model

        save_model(self, path)

    def __getitem__(self, k):
        check_is_fitted(self, "estimators_")
        return self.estimators_[k]

    def __iter__(self):
        check_is_fitted(self, "estimators_")
        return iter(self.estimators_)

    def __len__(self):
        check_is_fitted(self, "estimators_")
        return len(self.estimators_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.single_output = False
        tags.target_tags.multi_output = True
        tags.regressor_tags = None
        # NaN in X is a missing value, routed by the trees.
        tags.input_tags.allow_nan = True
        return tags


def tune_max_features(forest, X_train, C_train, X_val, C_val, candidates=(2, 3, 4, 5),
                      sample_weight=None, sample_weight_val=None, refit=False):
    """Choose a forest's ``max_features`` by its normalized SPO loss on a validation set.

    The paper's protocol for SPO and CART forests: grow one forest per
    candidate number of features ``f`` on the training set and keep the one
    whose decisions are best on held-out data. The oracle statistics of the
    training set are computed once for all candidates.

    Parameters
    ----------
    forest : SPOForest
        Template; its other parameters are kept (it is not modified).
    X_train : array-like of shape (n_train, n_features)
    C_train : array-like of shape (n_train, n_costs)
    X_val : array-like of shape (n_val, n_features)
    C_val : array-like of shape (n_val, n_costs)
    candidates : sequence of int, float, str or None, default=(2, 3, 4, 5)
        Values of ``max_features`` to try (the paper's f in {2, 3, 4, 5}).
    sample_weight : array-like of shape (n_train,), default=None
    sample_weight_val : array-like of shape (n_val,), default=None
    refit : bool, default=False
        False returns the best candidate as grown on the training set (the
        paper's protocol). True fits a clone of ``forest`` with the chosen
        ``max_features`` on the training and validation sets together, as
        scikit-learn's ``GridSearchCV`` refits (a RandomState given as
        ``random_state`` is used from its state as given, as for every
        candidate).

    Returns
    -------
    best : SPOForest
        The fitted forest with the chosen ``max_features``.
    results : Bunch
        ``max_features`` (the candidates, in order), ``val_loss`` (their
        validation normalized SPO loss, lower is better), ``best_index`` and
        ``best_max_features``. Ties go to the candidate listed first.
        ``pandas.DataFrame({k: results[k] for k in ("max_features",
        "val_loss")})`` shows it as a table.
    """
    if not isinstance(forest, SPOForest):
        raise TypeError(f"forest must be an SPOForest; got {type(forest).__name__}.")
    refit = check_bool(refit, "refit", "tune_max_features")
    candidates = list(candidates)
    if not candidates:
        raise ValueError("candidates must hold at least one value of max_features.")
    base = X_fit = None
    fitted, losses = [], []
    for f in candidates:
        est = clone(forest).set_params(max_features=f)
        validate_params(est)
        X, C, sw = check_fit_inputs(est, X_train, C_train, sample_weight)
        problem = resolve_problem(est.problem, C)
        if X_fit is None:
            # The validation set is checked (and named) before any forest is grown
            # (its warnings, such as scikit-learn's on feature names, come from
            # the scoring below).
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                Xv = check_features(est, X_val, reset=False, arg="X_val")
            C_va = np.ascontiguousarray(check_costs(C_val, n_costs=problem.n_costs,
                                                    name="C_val", names=cost_names(problem)))
            check_same_rows(Xv, C_va, ("X_val", "C_val"))
            sw_va = check_sample_weight(sample_weight_val, Xv.shape[0],
                                        name="sample_weight_val")
            # The validation loss divides by the validation rows' optimal values:
            # all zero, no candidate could be scored (the error came after the
            # first forest grew, naming no argument).
            if not ((sw_va > 0) & (problem.solve(C_va)[1] != 0)).any():
                raise ValueError("The optimal values of C_val are all zero on the rows of "
                                 "positive sample_weight_val, so the validation normalized SPO "
                                 "loss that chooses max_features is undefined; give other "
                                 "validation rows. " + zero_optima_hint(problem))
            # Candidates differ in feature draws only: one oracle pass (and
            # one ridge map) for all.
            fmap, X_fit = est._ridge_map(X, C, sw)
            if est.criterion == "auto":
                est.criterion_ = "spo"  # statistics for both criteria (see _fit_auto)
            base = est._fit_data(X_fit, C, problem, fmap)
        if est.criterion == "auto":
            est._fit_auto(X_fit, C, sw, problem, fmap, base)
        else:
            est._fit_validated(X_fit, C, sw, problem, base, fmap)
        losses.append(-est.score(X_val, C_val, sample_weight=sample_weight_val))
        fitted.append(est)
    losses = np.asarray(losses, dtype=np.float64)
    k = int(np.argmin(losses))
    best = fitted[k]
    if refit:
        # The raw inputs, stacked: fit checks them (and codes a DataFrame's categories).
        if is_dataframe(X_train):
            # An array of validation rows takes the training frame's columns
            # (stacked as arrays, the refit lost feature_names_in_, which the
            # forest fitted on X_train has).
            X_va = X_val if is_dataframe(X_val) else pd.DataFrame(
                np.asarray(X_val), columns=X_train.columns)
            X_all = pd.concat([X_train, X_va], ignore_index=True)
        else:
            X_all = np.vstack([np.asarray(X_train), np.asarray(X_val)])
        # A clone of the template, as GridSearchCV refits: a RandomState given
        # as random_state starts where every candidate's did (clone(best) took
        # the state the chosen candidate's fit had consumed: other seeds).
        best = clone(forest).set_params(max_features=candidates[k]).fit(
            X_all, np.vstack([C, C_va]), sample_weight=np.concatenate([sw, sw_va]))
    results = Bunch(max_features=candidates, val_loss=losses, best_index=k,
                    best_max_features=candidates[k])
    return best, results
