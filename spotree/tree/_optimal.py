"""OptimalSPOTree: SPO trees trained to optimality (MILP or exact search)."""

from __future__ import annotations

import itertools
import time
import warnings

import numpy as np

from .._compat import GUROBI_INSTALLED
from .._validation import check_fit_inputs, check_random_state_seed, restored_on_failure
from .._params import RANDOM_STATE, InstanceOf, Interval, Options, validate_params
from .._text import count_noun
from ._classes import BaseSPOTree, SPOTree, _resolve_min_count, tree_gains
from ..problems import resolve_problem
from ..problems._base import solver_session
from ._builder import _weight_scale
from ._fit_data import power_of_two_scale
from ._optimal_milp import (MILP_MAX_BINARIES, MilpModel, milp_can_encode,
                            milp_n_binaries)
from ._optimal_search import (OptimalSearch, bin_features, candidate_thresholds,
                              nested_to_structure)
from ._persist import register_model
from ._structure import tree_from_structure
from ._tree import TREE_LEAF

__all__ = ["OptimalSPOTree"]

# Old parameter names and their new ones: "alpha" meant a L2 penalty in
# SPOPlusLinear, and "thresholds" quantiles per node in SPOTree.
_RENAMED = {"alpha": "split_penalty", "thresholds": "global_thresholds"}


def _feature_importances(tree):
    """Total SPO-loss decrease brought by each feature, normalized to sum to 1.

    As SPOTree's (and this estimator's after :meth:`prune`): gains below
    1e-12 of the root's loss are rounding noise and count for nothing (a
    split that changes no decision, which the MILP may return when it
    costs nothing, gave its feature an importance of 1).
    """
    imp = tree_gains(tree)
    s = imp.sum()
    return imp / s if s > 0 else imp


def _leaf_loss(tree):
    return float(tree.loss[tree.children_left == TREE_LEAF].sum())


@register_model
class OptimalSPOTree(BaseSPOTree):
    """An SPO Tree of bounded depth trained to optimality.

    Two training methods minimize the same objective, the tree's weighted
    training SPO loss (divided by the total weight) plus ``split_penalty`` per
    split:

    - ``method="search"`` (default): exact dynamic programming over the
      candidate thresholds (the MurTree / STreeD family of algorithms: a
      specialised depth-2 routine plus caching and bounds for deeper trees).
      With a vertex list it works on the cost matrix ``G = C V^T`` as a
      cost-sensitive classification tree over the vertices; without one it
      scores leaves with batched oracle calls. The result is certified
      optimal over the candidate splits unless the time limit stops it.
    - ``method="milp"``: the paper's mixed-integer program (Theorem 2 with the
      Bertsimas-Dunn tree encoding of appendix A, its b_t = 1 correction,
      per-feature epsilons, N_min per leaf, the split penalty and the
      appendix-B cut), solved by HiGHS (or Gurobi) from a warm start given by
      the greedy :class:`SPOTree` of the same depth. Each feature enters the
      MILP as the ranks of its distinct training values (scaled to [0, 1]),
      so that neighbouring values are as far apart as the solver can tell
      whatever their own gap; a threshold may fall between any two
      neighbouring values and is stored, as :class:`SPOTree`'s, as their
      midpoint in the feature's own units.

    Both store the same ``tree_`` arrays as :class:`SPOTree`, so prediction,
    pruning, export and persistence are shared.

    Parameters
    ----------
    problem : DecisionProblem or None
        The optimization problem whose costs are predicted. None means
        ``FiniteDecisions(np.eye(d))``.
    max_depth : int, default=2
        Depth of the tree (leaves may be shallower when that is no worse).
    min_samples_leaf : int or float, default=1
        Minimum number of samples (of positive weight) in a leaf, the paper's
        N_min, whatever the weights. A float in (0, 1) is a fraction of the
        samples of positive weight, rounded up (a sample of weight 0 is a
        sample removed; scikit-learn's trees take the fraction of all the
        samples).
    method : {"search", "milp"}, default="search"
    time_limit : float, default=60
        Seconds. The search returns the best tree found when it runs out
        (its bound is then weak); the MILP solver stops and returns its
        incumbent. Either way the tree is never worse than the greedy
        :class:`SPOTree` of the same depth (the MILP's warm start; the
        search fits it once the time is up, so it may run a little over),
        save with ``feature_precision`` (see there).
    split_penalty : float, default=0.0
        Penalty per split, in units of mean SPO loss (the paper's alpha).
        Unlike :class:`SPOTree`'s ``ccp_alpha``, it is part of the objective
        the tree is trained on, and it is divided by no total weight.
    feature_precision : float or None, default=None
        MILP only: round the features, scaled to [0, 1] by their minimum and
        maximum, to this precision before solving (the paper suggests 1e-2):
        training samples whose rounded values tie cannot be separated, so
        there are fewer thresholds to choose from. (The paper rounds to
        enlarge the epsilons of the split constraints; this MILP is built on
        the ranks of the distinct values, whose epsilons need no rounding.)
        The warm start is then the greedy tree with every group of tied
        values that one of its thresholds splits sent to one side, left or
        right: of the choices of sides (all of them for up to 8 such splits,
        else all right or all left), the best that leaves no leaf below
        ``min_samples_leaf`` (none when there is none), so the tree may be
        worse than the greedy one, which separates ties.
    warm_start : bool, default=True
        MILP only: start from the greedy tree of the same depth. Not
        scikit-learn's ``warm_start``: every ``fit`` starts afresh, never
        from the previous fit's tree.
    solver : {"highs", "gurobi"}, default="highs"
        MILP solver; gurobi needs the ``spotree[gurobi]`` extra and a license.
    global_thresholds : "all" or int, default="all"
        Search only: candidate thresholds, chosen once on the whole training
        set. ``"all"``: every midpoint between consecutive distinct values of
        a feature; an int ``q``: the ``q`` quantiles ``1/(q+1), ..., q/(q+1)``
        of each feature over the whole training set (the binarization of
        STreeD-like solvers; the paper used 99). :class:`SPOTree`'s
        ``thresholds`` draws its quantiles per node instead.
    alpha : float, optional
        Deprecated: the old name of ``split_penalty`` (a FutureWarning at
        ``fit``, an error if ``split_penalty`` is set too; removed in 0.3).
    thresholds : "all" or int, optional
        Deprecated: the old name of ``global_thresholds`` (a FutureWarning at
        ``fit``, an error if ``global_thresholds`` is set too; removed in 0.3).
    random_state : int, RandomState instance or None, default=None
        Seed of the MILP solver: an int, or one seed drawn from a RandomState
        instance or, for None, from numpy's global random state, as in
        scikit-learn (a solve stopped by ``time_limit`` may then end at
        another tree, and ties between optimal trees may go another way).
        Gurobi, whose seeds stop at 2e9, takes it modulo 2e9 + 1. The search
        does not use it.
    verbose : bool or int, default=False
        When true (or a positive int), print the solver log (MILP), or the
        search's incumbent after each root feature (depth >= 3) and a
        summary line.

    Attributes
    ----------
    tree_ : Tree
    problem_ : DecisionProblem
    result_ : dict
        ``method``, ``status`` (``"optimal"``, ``"time_limit"``, or for the
        MILP ``"solver_tolerance"`` when the solver's optimum routed training
        rows as no threshold can, within its tolerances, and no tree attains
        it (a safeguard: the rank encoding keeps neighbouring values 1 /
        (number of distinct values - 1) apart, far above those tolerances),
        or another status of the solver, whose own wording is in
        ``solver_status``; ``"Inconsistent solver result"`` when the solver
        (HiGHS or Gurobi) reported an objective other than its solution's,
        even on a retry without the warm start: its bound is then no proof,
        ``bound`` is 0, and ``solver_status`` still holds what the solver
        said, ``"Optimal"`` say), ``objective`` (the training objective of ``tree_``: mean SPO loss
        plus split_penalty per split), ``bound`` (a proven lower bound on the objective of every
        tree of ``max_depth`` whose splits the method considers: with an
        int ``global_thresholds`` those quantiles only, with
        ``feature_precision`` none that separates rounded ties, so that a
        tree with other splits may be better than the bound; ``status``
        ``"optimal"`` is meant in the same sense),
        ``gap`` (``(objective - bound) / objective``, 0 when both are 0),
        ``runtime`` (seconds), ``n_nodes_explored`` (search subproblems or
        branch-and-bound nodes); for the MILP also ``solver``,
        ``solver_status`` (the solver's own wording of its status),
        ``solver_objective`` (the objective it reported),
        ``warm_start_objective`` and ``n_binaries``; for the search also ``search_objective`` (its
        incumbent's) and ``used_greedy_tree`` (True when, at the time limit,
        the greedy tree was better and was kept instead). After
        :meth:`prune` removed splits, the pruned copy's ``objective``,
        ``train_loss`` and ``gap`` are the pruned tree's (to the same
        ``bound``, which holds for every tree of ``max_depth``) and
        ``pruned`` is True; the rest describes the fit.
        :meth:`save` writes it with the model.
    feature_importances_ : ndarray of shape (n_features,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only for DataFrame input with string column names.
    category_values_ : None
        Always None: categorical columns are refused (as SPOTree's attribute,
        for the exports).

    Notes
    -----
    The MILP has ``n 2^H + 2^H + (p + 1) (2^H - 1)`` binaries; models with
    more than ``max_milp_binaries`` (100,000) are refused. Its LP relaxation
    is weak (the bound stays near 0), so within a time limit it mostly
    improves the warm start; the search certifies depth 2 in well under a
    second on a few thousand samples, and depth 3 in seconds on a few
    hundred. Depth 4 is much harder (about 80 s on 160 samples with 99
    thresholds and a minimum leaf of 20 on the paper's shortest path data);
    at the time limit the search returns its incumbent (or the greedy tree
    when that is better: the incumbent may be the best depth-2 tree), but
    its bound is then only the trivial one (every sample's own optimum), so
    the gap is not informative.

    The MILP is solved to a zero relative gap, but its status ``"optimal"``
    and its ``bound`` hold only to the solver's tolerances (an absolute gap
    and feasibility tolerances near 1e-6, on the objective in units of the
    largest cost): trees whose objectives differ by less than about 1e-6
    times ``max |C|`` are not told apart (a depth-1 tree 3e-6 above the
    optimum, costs near 3, was returned as optimal with that objective as
    its bound).

    The search's depth-2 routine costs ``O(p^2 m^2 K)`` for ``m`` candidate
    thresholds per feature and K vertices, and runs uninterrupted: the time
    limit is checked between its calls. With ``global_thresholds="all"`` on many
    thousands of samples, prefer an int (e.g. 99). Candidate thresholds are
    computed once on the whole training set, so with an int the search is
    exact over those thresholds only; the greedy :class:`SPOTree` draws its
    quantiles per node and may find splits the search does not consider.

    Examples
    --------
    >>> import numpy as np
    >>> from spotree import OptimalSPOTree, ShortestPath
    >>> from spotree.datasets import make_shortest_path
    >>> X, C = make_shortest_path(200, grid=(3, 3), random_state=0)
    >>> tree = OptimalSPOTree(ShortestPath((3, 3)), max_depth=2,
    ...                       min_samples_leaf=20).fit(X, C)
    >>> tree.result_["status"]
    'optimal'
    """

    #: Largest MILP accepted, in binary variables.
    max_milp_binaries = MILP_MAX_BINARIES

    _parameter_constraints = {
        "max_depth": [Interval(int, 1, None)],
        "min_samples_leaf": [Interval(int, 1, None), Interval(float, 0.0, 1.0, "neither")],
        "method": [Options("search", "milp")],
        "time_limit": [Interval(float, 0.0, None, "neither")],
        "split_penalty": [Interval(float, 0.0, None)],
        "feature_precision": [Interval(float, 0.0, 1.0, "right"), None],
        "warm_start": [InstanceOf((bool, np.bool_), "a bool")],
        "solver": [Options("highs", "gurobi")],
        "global_thresholds": [Options("all"), Interval(int, 1, None)],
        "alpha": [Interval(float, 0.0, None), Options("deprecated")],
        "thresholds": [Options("all", "deprecated"), Interval(int, 1, None)],
        # As the other estimators: -1 (printing, by its truth) is refused.
        "verbose": [Interval(int, 0, None), InstanceOf((bool, np.bool_), "a bool")],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, problem=None, *, max_depth=2, min_samples_leaf=1, method="search",
                 time_limit=60, split_penalty=0.0, feature_precision=None, warm_start=True,
                 solver="highs", global_thresholds="all", random_state=None, verbose=False,
                 alpha="deprecated", thresholds="deprecated"):
        self.problem = problem
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.method = method
        self.time_limit = time_limit
        self.split_penalty = split_penalty
        self.feature_precision = feature_precision
        self.warm_start = warm_start
        self.solver = solver
        self.global_thresholds = global_thresholds
        self.random_state = random_state
        self.verbose = verbose
        self.alpha = alpha
        self.thresholds = thresholds

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # The MILP refuses NaN in X (only the search routes missing values);
        # the inherited allow_nan=True made scikit-learn's estimator checks
        # feed it NaN (check_estimators_pickle failed on the refusal).
        tags.input_tags.allow_nan = self.method != "milp"
        return tags

    def fit(self, X, C, sample_weight=None):
        """Train the optimal tree on features X and realized costs C.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        C : array-like of shape (n_samples, n_costs)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, not all zero. A row of weight 0 is a row
            removed; a row of integer weight ``k`` is ``k`` copies of it,
            except that ``min_samples_leaf`` counts it once; scaling every
            weight by one factor changes nothing (``split_penalty`` is in
            units of the mean loss).

        Returns
        -------
        self : OptimalSPOTree
        """
        with restored_on_failure(self):
            validate_params(self)
            self._forget_outside_state()
            for old in _RENAMED:
                self._renamed(old, warn=True)
            # The split penalty the fitted objective carries, read again by
            # prune() (and saved as such): a split_penalty set after fit gave
            # pruned copies an objective the fit's bound does not bound.
            unset = isinstance(self.alpha, str) and self.alpha == "deprecated"
            self._fit_params = ({"split_penalty": self.split_penalty} if unset
                                else {"alpha": self.alpha})
            if self.method == "milp" and self.solver == "gurobi" and not GUROBI_INSTALLED:
                raise ImportError("OptimalSPOTree(method='milp', solver='gurobi') requires "
                                  "gurobipy, which is not installed: pip install spotree[gurobi] "
                                  "(or use solver='highs').")
            X, C, sw = check_fit_inputs(self, X, C, sample_weight)
            problem = resolve_problem(self.problem, C)
            if self.category_values_ is not None:
                text = [str(self.feature_names_in_[j]) for j, c in enumerate(self.category_values_)
                        if c is not None]
                raise ValueError(f"OptimalSPOTree splits features by thresholds only and the "
                                 f"columns {text} of X are categorical (category, string, or "
                                 "object holding text); encode them as numbers, or use SPOTree "
                                 "for categorical splits.")
            self.problem_ = problem
            # The fit works on weights in units of a power of two near the largest
            # (exact: the same tree, objective and bound): the total of weights
            # near the float range was inf, which made the search's split penalty
            # inf (a lone leaf) and the objective NaN. The tree's weighted sums
            # are brought back to the user's units at the end.
            w_unit = _weight_scale(sw)
            sw = sw / w_unit
            W = sw.sum()
            min_leaf = _resolve_min_count(self.min_samples_leaf, float((sw > 0).sum()))
            # A row of zero weight is a row removed: it must not add candidate
            # thresholds (midpoints, quantiles), move the stored ones, constrain
            # the MILP's thresholds nor count in n_node_samples.
            active = sw > 0
            if not active.all():
                X, C, sw = X[active], C[active], sw[active]
            if self.method == "milp" and np.isnan(X).any():
                raise ValueError("OptimalSPOTree(method='milp') does not support missing values "
                                 "(NaN) in X; use method='search', which routes them, or impute "
                                 "them first.")
            if self.method == "milp":
                n_bin = milp_n_binaries(X.shape[0], X.shape[1], self.max_depth)
                if n_bin > self.max_milp_binaries:
                    raise ValueError(
                        f"The MILP of OptimalSPOTree with max_depth={self.max_depth} on "
                        f"{X.shape[0]} samples and {X.shape[1]} features would have {n_bin:,} "
                        f"binary variables, more than the limit of {self.max_milp_binaries:,}. "
                        "Use method='search', a smaller max_depth or fewer samples.")
                if not milp_can_encode(problem):
                    raise ValueError(
                        f"method='milp' needs the feasible set as linear constraints (a "
                        f"LinearProgram) or a vertex list; {type(problem).__name__} has neither. "
                        "Use method='search', which only needs the oracle.")
            t0 = time.perf_counter()
            with solver_session():  # warm starts within the fit only
                _, z = problem.solve(C)
                if not np.isfinite(z).all():
                    # Costs near the float range whose optimal values c^T w* are
                    # not floats: the MILP's objective constant was inf (HiGHS
                    # crashed the process with a segmentation fault), the search
                    # failed blaming C.
                    i = int(np.flatnonzero(~np.isfinite(z))[0])
                    raise ValueError(
                        f"the optimal value c^T w* of row {i} of C is beyond the float range "
                        f"(its costs reach {np.max(np.abs(C[i])):.3g}); OptimalSPOTree fits "
                        "costs in their own units: divide C by a power of two (2**-8, say), "
                        "which changes no decision.")
                if self.method == "search":
                    tree, result = self._fit_search(X, C, sw, z, problem, min_leaf, W)
                else:
                    tree, result = self._fit_milp(X, C, sw, z, problem, min_leaf, W)
            result["runtime"] = time.perf_counter() - t0
            result["train_loss"] = _leaf_loss(tree) / W
            self.feature_importances_ = _feature_importances(tree)
            if w_unit != 1.0:
                # (Beyond the float range they are inf, as SPOTree's are.)
                with np.errstate(over="ignore"):
                    for name in ("loss", "impurity", "weighted_n_node_samples"):
                        setattr(tree, name, getattr(tree, name) * w_unit)
            self.tree_ = tree
            self.result_ = {k: float(v) if isinstance(v, np.floating) else v
                            for k, v in result.items()}
            result = self.result_
            if self.verbose and self.method == "search":
                print(f"OptimalSPOTree(search): {result['status']}, objective "
                      f"{result['objective']:.6g}, bound {result['bound']:.6g}, "
                      f"{result['runtime']:.2f} s, "
                      f"{count_noun(result['n_nodes_explored'], 'subproblem')}")
            return self

    def _renamed(self, old, warn=False):
        """The value of a renamed parameter: the new one, unless the old one was set."""
        new = _RENAMED[old]
        value = getattr(self, old)
        if isinstance(value, str) and value == "deprecated":
            return getattr(self, new)
        default = {"split_penalty": 0.0, "global_thresholds": "all"}[new]
        current = getattr(self, new)
        unset = isinstance(current, str) == isinstance(default, str) and current == default
        if warn and not unset:
            # Both names set: the old one won, and the new one was dropped
            # without a word.
            raise ValueError(f"OptimalSPOTree got both {old}={value!r} (the old name) and "
                             f"{new}={current!r}; set {new} only.")
        if warn:
            warnings.warn(f"OptimalSPOTree's {old!r} parameter was renamed {new!r} in spotree "
                          f"0.2 and will be removed in 0.3; use {new}={value!r}.",
                          FutureWarning, stacklevel=3)
        return value

    # The solve's diagnostics travel with the model file.
    _persist_extra = BaseSPOTree._persist_extra + ("result_",)

    def _train_mse(self):
        raise ValueError("loss='mse' pruning needs the training squared error of every "
                         "node, which OptimalSPOTree (trained on the SPO loss) does not "
                         "keep; prune with loss='criterion' or 'spo'.")

    def _after_prune(self, pruned):
        """``result_`` described the unpruned tree: the pruned copy's holds its
        own objective, training loss and gap (the bound, a lower bound on
        every tree of max_depth, still holds for it) and ``pruned=True``."""
        result = getattr(pruned, "result_", None)
        if result is None or pruned.tree_.node_count == self.tree_.node_count:
            return
        result = dict(result)
        W = float(pruned.tree_.weighted_n_node_samples[0])
        result["objective"] = self._objective(pruned.tree_, W)
        result["train_loss"] = _leaf_loss(pruned.tree_) / W
        result["gap"] = self._gap(result["objective"], result["bound"])
        result["pruned"] = True
        pruned.result_ = result


    # ------------------------------------------------------------ search
    def _objective(self, tree, W):
        n_splits = int((tree.children_left != TREE_LEAF).sum())
        fit = self.__dict__.get("_fit_params")  # (a model read by load(): its file's)
        penalty = (self._renamed("alpha") if fit is None
                   else fit.get("split_penalty", fit.get("alpha")))
        return _leaf_loss(tree) / W + penalty * n_splits

    def _fit_search(self, X, C, sw, z, problem, min_leaf, W):
        thresholds = self._renamed("thresholds")
        thr = candidate_thresholds(X, thresholds)
        B, n_bins, columns = bin_features(X, thr)
        s = problem.sign
        V = problem.vertices()
        # The search works on costs divided by a power of two near their
        # magnitude (exact), so it finds the same tree at any cost scale; and
        # on weights divided alike (sums over the rows of weights near the
        # float range overflowed: at 1e306 on 100 rows, another tree and an
        # objective of NaN). Its values below are in those weights' unit.
        unit = power_of_two_scale(C)
        Cs = C / unit
        w_unit = power_of_two_scale(sw)
        sws, W_s = sw / w_unit, W / w_unit
        penalty = self._renamed("alpha") * W_s / unit
        cnt = (sw > 0).astype(np.float64)
        if V is not None:
            G = s * (Cs @ V.T) * sws[:, None]
            search = OptimalSearch(B, n_bins, cnt, min_leaf, penalty, G.min(axis=1), G=G,
                                   time_limit=float(self.time_limit),
                                   verbose=bool(self.verbose), report_unit=unit / W_s)
        else:
            search = OptimalSearch(B, n_bins, cnt, min_leaf, penalty, s * sws * z / unit, C=Cs,
                                   sign=s, solve=problem.solve, sample_weight=sws,
                                   time_limit=float(self.time_limit),
                                   verbose=bool(self.verbose), report_unit=unit / W_s)
        cost, nested, status, bound = search.run(self.max_depth)
        cost, bound = cost * unit, bound * unit
        *structure, mgl = nested_to_structure(nested, X, B, thr, thresholds == "all",
                                              columns)
        tree = tree_from_structure(*structure, X, C, sw, problem, z=z,
                                   missing_go_to_left=mgl)
        objective = self._objective(tree, W)
        used_greedy = False
        if status == "time_limit":
            # The incumbent at the time limit may be no deeper than 2 (the
            # best depth-2 tree seeds deeper searches): a depth-4 search
            # stopped after 5 s returned a tree 9% worse than the greedy
            # tree of depth 4. As the MILP never does worse than its warm
            # start, the greedy tree replaces an incumbent it beats.
            greedy = SPOTree(problem, max_depth=self.max_depth,
                             min_samples_leaf=self.min_samples_leaf,
                             random_state=0).fit(X, C, sw).tree_
            greedy_objective = self._objective(greedy, W)
            if greedy_objective < objective:
                tree, objective, used_greedy = greedy, greedy_objective, True
        base = search.row_bound.sum() * unit
        # The search's own value and the tree's recomputed loss agree up to
        # rounding; the bound is converted to the same units.
        bound = min((bound - base) / W_s, objective)
        return tree, dict(method="search", status=status, objective=objective,
                          bound=max(bound, 0.0), gap=self._gap(objective, max(bound, 0.0)),
                          n_nodes_explored=int(search.n_nodes_explored),
                          search_objective=(cost - base) / W_s, used_greedy_tree=used_greedy)

    @staticmethod
    def _gap(objective, bound):
        if objective <= 0:
            return 0.0
        return max(objective - bound, 0.0) / abs(objective)

    # -------------------------------------------------------------- MILP
    #: Most split nodes cutting tied groups whose sides are all tried (2^k
    #: starts); beyond, only "all right" and "all left".
    _MAX_TIED_SPLITS = 8

    @classmethod
    def _tied_warm_start(cls, model, tree):
        """The feasible start of least objective among the choices of side
        (left or right) for the tied groups that the tree's splits cut, or
        None when no choice is feasible."""
        tied = model.tied_splits(tree)
        if len(tied) <= cls._MAX_TIED_SPLITS:
            choices = [[v for v, bit in zip(tied, bits) if bit]
                       for bits in itertools.product((False, True), repeat=len(tied))]
        else:
            choices = [[], tied]
        best, best_obj = None, np.inf
        for left in choices:
            x = model.assignment_from_tree(tree, ties_left=set(left))
            if x is not None and model.is_feasible(x) and model.objective_of(x) < best_obj:
                best, best_obj = x, model.objective_of(x)
        return best

    def _fit_milp(self, X, C, sw, z, problem, min_leaf, W):
        # The MILP is built on costs divided by a power of two near their
        # magnitude (exact), as the search is: its big-M coefficients would
        # otherwise pass HiGHS's limits (costs of 1e18 were rejected), and the
        # solver's absolute tolerances would not scale with the costs.
        unit = power_of_two_scale(C)
        # A lone leaf is always a tree (SPOTree and the search return it when
        # min_samples_leaf exceeds the rows); the MILP's N_min row binds every
        # used leaf, root included, and made that case "Infeasible". Capped at
        # the row count, it still forbids every split.
        min_leaf = min(min_leaf, float(X.shape[0]))
        model = MilpModel(X, C / unit, sw, z / unit, problem, self.max_depth, min_leaf,
                          alpha=self._renamed("alpha") / unit,
                          feature_precision=self.feature_precision).build()
        warm, warm_tree, warm_obj = None, None, None
        if self.warm_start:
            # (A fixed random_state: the greedy tree searches every feature and
            # draws nothing, and None drew a seed from numpy's global state.)
            greedy = SPOTree(problem, max_depth=self.max_depth,
                             min_samples_leaf=self.min_samples_leaf,
                             random_state=0).fit(X, C, sw)
            warm_tree = greedy.tree_
            warm = model.assignment_from_tree(warm_tree)
            if self.feature_precision is not None:
                # The greedy thresholds may separate values that round alike:
                # the start sends each such group to one side (HiGHS dropped
                # the greedy routing as infeasible), and the tree kept when the
                # solver finds nothing better is that one, which separates no
                # ties. Every group right may leave a leaf below
                # min_samples_leaf where sending some left does not (the start
                # was then dropped): the best legal choice of sides is kept.
                warm = self._tied_warm_start(model, warm_tree)
                if warm is not None:
                    warm_tree = tree_from_structure(*model.structure_from_solution(warm), X, C,
                                                    sw, problem, z=z)
                else:
                    warm_tree = None
        if warm is not None:
            warm_obj = model.objective_of(warm) * unit
        # None draws from numpy's global random state, as scikit-learn (it
        # fixed the seed at 0: np.random.seed had no effect, and no fit differed).
        seed = check_random_state_seed(self.random_state)
        solve = model.solve_highs if self.solver == "highs" else model.solve_gurobi
        res = solve(warm=warm, time_limit=float(self.time_limit), verbose=bool(self.verbose),
                    random_state=seed)
        tree = None
        if res["x"] is not None:
            structure = model.structure_from_solution(res["x"])
            tree = tree_from_structure(*structure, X, C, sw, problem, z=z)
        used_warm = False
        if warm_tree is not None and (tree is None or self._objective(tree, W) > (
                self._objective(warm_tree, W) + 1e-9 * abs(self._objective(warm_tree, W)))):
            # Only when the solver returned nothing better, or its thresholds
            # route a training sample differently at the solver's tolerances.
            tree, used_warm = warm_tree, True
        if tree is None:
            tree = tree_from_structure([TREE_LEAF], [TREE_LEAF], [-2], [-2.0], X, C, sw,
                                       problem, z=z)
        objective = self._objective(tree, W)
        bound = res["bound"] * unit if np.isfinite(res["bound"]) else 0.0
        bound = min(max(bound, 0.0), objective)
        status = {"Optimal": "optimal", "Time limit reached": "time_limit"}.get(
            res["status"], res["status"])
        if not res["consistent"]:
            # (solver_status keeps the solver's own word, "Optimal" say: the
            # status says that its result was not to be believed.)
            status = "Inconsistent solver result"
        elif status == "optimal" and (objective / unit - res["objective"]
                                    > 1e-6 * max(1.0, abs(res["objective"]))):
            # The solver's "optimal" solution routed rows as no threshold can
            # (within its tolerances; before the rank encoding, values of a
            # feature closer than 1e-7 of its range did), and the tree (each
            # row routed by its value) does worse. The solver's bound stands;
            # optimality does not.
            status = "solver_tolerance"
        return tree, dict(method="milp", solver=res["solver"], status=status,
                          solver_status=res["status"],
                          objective=objective, bound=bound, gap=self._gap(objective, bound),
                          solver_objective=res["objective"] * unit, solver_gap=res["gap"],
                          warm_start_objective=warm_obj, used_warm_start_tree=used_warm,
                          n_nodes_explored=res["n_nodes_explored"],
                          n_binaries=milp_n_binaries(X.shape[0], X.shape[1], self.max_depth))
