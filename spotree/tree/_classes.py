"""SPO tree estimators (scikit-learn compatible)."""

from __future__ import annotations

import copy
import numbers
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, MultiOutputMixin
from sklearn.utils import Bunch, metadata_routing
from sklearn.utils.validation import check_is_fitted

from .._categories import categorical_mask, unseen_to_missing
from .._params import RANDOM_STATE, InstanceOf, Interval, Options, check_bool, validate_params
from .._ridge import cost_unit
from .._validation import (check_costs, check_features, check_fit_inputs,
                           check_random_state_seed, check_realized_costs, check_same_rows,
                           check_sample_weight, cost_names, restored_on_failure)
from ..metrics import REGRET_RTOL, decision_loss, normalized_decision_loss
from ..problems import resolve_problem
from ..problems._base import solver_session
from ._builder import grow_tree, mixed_loss_unit
from ._fit_data import FitData

__all__ = ["BaseSPOTree", "SPOScoreMixin", "SPOTree"]

#: What ``categorical_features`` may be (besides None): an array-like of feature
#: indices, names or a boolean mask, ``df.columns[...]`` and a Series included.
CATEGORICAL_FEATURES = InstanceOf((list, tuple, range, np.ndarray, pd.Index, pd.Series),
                                  "an array-like of feature indices, names or a boolean mask")


def tree_gains(tree):
    """Criterion-loss decrease per split feature, from the tree arrays (not normalized).

    What the builder accumulates while growing, recomputed for a tree that
    was pruned afterwards (its importances must not count the splits pruned
    away); gains below 1e-12 of the root's loss are rounding noise.
    """
    imp = np.zeros(tree.n_features)
    internal = np.flatnonzero(~tree.is_leaf)
    gain = (tree.impurity[internal] - tree.impurity[tree.children_left[internal]]
            - tree.impurity[tree.children_right[internal]])
    keep = gain > 1e-12 * abs(tree.impurity[0])
    np.add.at(imp, tree.feature[internal[keep]], gain[keep])
    return imp


def _resolve_min_count(value, n):
    """min_samples_leaf / min_samples_split: an int counts samples, a float is a fraction.

    As in scikit-learn, a fraction is rounded up: ``ceil(value * n)``.
    """
    if isinstance(value, numbers.Integral):
        # Any count above 2**62 is above every sample count (and an int
        # beyond the float range has no float).
        return float(min(int(value), 2 ** 62))
    return float(np.ceil(value * n))


def _resolve_max_features(max_features, p):
    if max_features is None:
        return None
    if isinstance(max_features, str):
        k = {"sqrt": np.sqrt(p), "log2": np.log2(p)}[max_features]
        return max(1, int(k))
    if isinstance(max_features, numbers.Integral):
        return min(int(max_features), p)
    return max(1, int(max_features * p))


def _categories_seen(fit_data, active):
    """Per feature, the categories of the rows marked ``active`` (None if numeric).

    A row of zero weight is a row removed: a category only such rows hold
    was not seen, and at predict it follows the missing side as any unseen
    category does.
    """
    seen = []
    for f, values in enumerate(fit_data.cat_values):
        if values is None:
            seen.append(None)
            continue
        codes = fit_data.codes[active, f]
        seen.append(values[np.unique(codes[codes < values.size])])
    return seen


def warn_unused_spo_weight(est, stacklevel=3):
    """Warn that ``est.spo_weight`` is unused under ``criterion="mse"`` (as
    scikit-learn warns of an ``l1_ratio`` without ``penalty="elasticnet"``).

    Called by the public ``fit`` only: a forest's trees grow through
    ``_fit_arrays``, so one fit warns once.
    """
    if est.criterion == "mse" and est.spo_weight != 1.0:
        warnings.warn(f"spo_weight={est.spo_weight!r} has no effect with criterion='mse': it "
                      "weighs the SPO loss in criterion='spo' (set spo_weight=1.0, or "
                      "criterion='spo' to mix the two losses).", UserWarning,
                      stacklevel=stacklevel)


class SPOScoreMixin:
    """``score`` shared by trees and forests: minus the normalized SPO loss."""

    # The target is named C, not y: scikit-learn's metadata routing takes
    # every other argument of fit and score for metadata, so C got a routing
    # entry and set_fit_request(C=...) as if it could be routed like
    # sample_weight. (Every estimator of spotree has this mixin.)
    __metadata_request__fit = {"C": metadata_routing.UNUSED}
    __metadata_request__score = {"C": metadata_routing.UNUSED}

    def score(self, X, C, sample_weight=None):
        """Minus the normalized SPO loss of the model's decisions (greater is better).

        The decisions are those of :meth:`predict_decision`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        C : array-like of shape (n_samples, n_costs)
            Realized costs.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        W = self.predict_decision(X)
        C = check_realized_costs(self, C, W.shape[0], self.problem_.n_costs,
                                 names=cost_names(self.problem_))
        return -normalized_decision_loss(C, W, problem=self.problem_,
                                         sample_weight=sample_weight)


class BaseSPOTree(SPOScoreMixin, MultiOutputMixin, BaseEstimator):
    """Everything a fitted SPO tree can do once ``tree_`` exists.

    Subclasses set ``tree_`` (a :class:`~spotree.tree.Tree`), ``problem_``,
    ``n_features_in_`` (and ``feature_names_in_`` for DataFrame input) and
    ``feature_importances_`` in ``fit``.
    """

    # ----------------------------------------------------------- helpers
    def _forget_outside_state(self):
        """Drop fitted attributes that ``fit`` does not set itself.

        A forest gives its trees its ridge map (they split on its extra
        columns) and :meth:`prune` records its choice; refitting such a tree
        on its own must not keep them.
        """
        for attr in ("ridge_features_", "pruning_alpha_", "pruning_path_"):
            self.__dict__.pop(attr, None)

    def _validate_X_predict(self, X, arg="X"):
        check_is_fitted(self, "tree_")
        # prune's errors name its argument X_val (see check_features).
        X = check_features(self, X, reset=False, arg=arg)
        X = unseen_to_missing(X, getattr(self, "categories_seen_", None))
        # A tree of a forest with ridge features splits on extra columns too.
        fmap = getattr(self, "ridge_features_", None)
        return X if fmap is None else fmap.augment(X)

    # -------------------------------------------------------- prediction
    def apply(self, X):
        """Index of the leaf each sample ends in."""
        X = self._validate_X_predict(X)
        return self.tree_.apply(X)

    def decision_path(self, X):
        """Sparse indicator matrix (n_samples, n_nodes) of the nodes each sample visits."""
        X = self._validate_X_predict(X)
        return self.tree_.decision_path(X)

    def predict(self, X):
        """Predicted costs: the weighted mean cost of each sample's leaf.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_costs)
        """
        leaves = self.apply(X)
        return self.tree_.value[leaves]

    def predict_decision(self, X):
        """Decisions: the optimal decision for each sample's leaf mean (stored, no oracle call).

        Returns
        -------
        ndarray of shape (n_samples, n_costs)
        """
        leaves = self.apply(X)
        return self.tree_.decision[leaves]

    def get_depth(self):
        """Depth of the tree (a single leaf has depth 0)."""
        check_is_fitted(self, "tree_")
        return self.tree_.max_depth

    def get_n_leaves(self):
        """Number of leaves."""
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves

    # ----------------------------------------------------------- pruning
    def _node_losses_on(self, X, C, sample_weight, loss):
        """Loss of every node of the fitted tree as a leaf, on the given data.

        Returns the losses, the weights, X, C, the magnitude of the terms
        summed into a node's loss (largest over the nodes): differences far
        below it are rounding; and the weights' unit: the weights, losses and
        magnitude are in units of that power of two (the largest weight's).
        """
        # Named as prune's arguments, X_val and C_val.
        X = self._validate_X_predict(X, arg="X_val")
        # C-ordered as the training costs are (see check_realized_costs): a
        # DataFrame of validation costs summed in another order.
        C = np.ascontiguousarray(check_costs(C, n_costs=self.problem_.n_costs, name="C_val",
                                             names=cost_names(self.problem_)))
        check_same_rows(X, C, ("X_val", "C_val"))
        sw = check_sample_weight(sample_weight, X.shape[0])
        # Exact, and the sums of weights near the float range no longer
        # overflow (prune raised an IndexError on the NaN losses).
        w_unit = float(cost_unit(sw))
        sw = sw / w_unit
        t = self.tree_
        C_given = C
        # The criterion's losses in the unit of its scales (exact; see
        # _loss_unit); the others in the problem's units.
        u = self._loss_unit() if loss == "criterion" else 1.0
        C, value = (C, t.value) if u == 1.0 else (C / u, t.value / u)
        P = t.decision_path(X).T.tocsr().astype(np.float64)  # nodes x samples
        Pw = P.multiply(sw[None, :]).tocsr()
        S = np.asarray(Pw @ C)
        wn = np.asarray(Pw.sum(axis=1)).ravel()
        _, z = self.problem_.solve(C)
        spo = self.problem_.sign * (np.einsum("ij,ij->i", S, t.decision) - Pw @ z)
        # A node's regret is a sum of regrets of its stored (feasible) decision:
        # negative only by rounding; beyond it the decision or oracle is wrong.
        tol = REGRET_RTOL * (np.einsum("ij,ij->i", np.asarray(Pw @ np.abs(C)),
                                       np.abs(t.decision)) + Pw @ np.abs(z))
        if (spo < -tol).any():
            k = int(np.argmax(-spo - tol))
            raise ValueError(f"node {k}'s stored decision beats the optimum on these costs "
                             f"(regret {spo[k]:.6g}): the decision is infeasible for the "
                             "problem, or the problem's oracle is not optimal.")
        spo = np.maximum(spo, 0.0)
        spo_mag = float(tol.max(initial=0.0)) / REGRET_RTOL
        if loss == "spo":
            return spo, sw, X, C_given, spo_mag, w_unit
        sq = Pw @ np.einsum("ij,ij->i", C, C)
        mse = sq - 2 * np.einsum("ij,ij->i", S, value) + wn * np.einsum(
            "ij,ij->i", value, value)
        mse_mag = float((sq + 2 * np.einsum("ij,ij->i", np.abs(S), np.abs(value))
                         + wn * np.einsum("ij,ij->i", value, value)).max(initial=0.0))
        if loss == "mse":
            return np.maximum(mse, 0.0), sw, X, C_given, mse_mag, w_unit
        crit = self._criterion_scales
        return crit(spo, mse), sw, X, C_given, crit(spo_mag, mse_mag), w_unit

    def _spo_share(self):
        """The weight of the SPO loss in the training criterion (1: SPO, 0: squared error)."""
        # The criterion the tree was grown with, not the parameters as set
        # since: set_params(criterion=...) after fit made prune() order the
        # training losses of one criterion and score the validation rows on
        # another. (A tree read by load() has no record: its parameters are
        # the fit's.)
        fit = self.__dict__.get("_fit_params", {})
        criterion = fit.get("criterion", getattr(self, "criterion", "spo"))
        return float(fit.get("spo_weight", getattr(self, "spo_weight", 1.0))) \
            if criterion == "spo" else 0.0

    def _loss_unit(self):
        """The power of two in whose units ``loss_scales_`` are (1.0 but for a mixed
        criterion on costs whose squares are not floats; 1.0 in older files)."""
        return getattr(self, "loss_unit_", 1.0)

    def _criterion_scales(self, spo, mse):
        """The mixed criterion of SPO losses and squared errors given in units of
        ``_loss_unit()`` (and its square)."""
        a = self._spo_share()
        if a == 1.0:
            return spo
        if a == 0.0:
            return mse
        s_spo, s_mse = self.loss_scales_
        tiny = np.finfo(np.float64).tiny
        if not all(np.isfinite(v) and v >= tiny for v in (s_spo, s_mse)):
            # In the training weights' units: beyond the float range (weights
            # of 1.7e308) they were inf, every validation loss 0, and pruning
            # kept the smallest subtree without a word.
            raise ValueError(
                f"the mixed criterion's scales loss_scales_=({s_spo!r}, {s_mse!r}) (the root's "
                "training SPO loss and squared error) are beyond the float range or "
                "subnormal: the training sample_weight is that large or small, and "
                "validation losses cannot be put on the criterion's scale. Refit with "
                "sample_weight scaled by a constant, which grows the same tree.")
        return a * spo / s_spo + (1 - a) * mse / s_mse

    def _pruning_loss_name(self, loss):
        if loss not in ("criterion", "spo", "mse"):
            raise ValueError(f"loss must be 'criterion', 'spo' or 'mse'; got {loss!r}.")
        return loss

    def prune(self, X_val, C_val, sample_weight=None, one_se_rule=False, loss="criterion"):
        """Cost-complexity pruning with the alpha chosen on validation data.

        Computes Breiman's weakest-link sequence of subtrees from the training
        losses stored in the tree, scores each subtree on ``(X_val, C_val)``
        and keeps the best one (the paper holds out 20% of the training set).
        Ties go to the smaller tree.

        Parameters
        ----------
        X_val : array-like of shape (n_val, n_features)
        C_val : array-like of shape (n_val, n_costs)
        sample_weight : array-like of shape (n_val,), default=None
            Weights of the validation rows: a row of weight 0 is a row
            removed, and scaling every weight changes nothing.
        one_se_rule : bool, default=False
            Keep the smallest subtree whose validation loss is within one
            standard error of the best. The standard error takes each row
            of positive weight as one draw, its weight fixed
            (``sqrt(var_w / (n - 1)) * sum(w)``, with ``var_w`` the weighted
            variance of the best subtree's per-row losses and ``n`` the rows
            of positive weight): a row of integer weight 2 is not two
            copies there, though it is in the validation losses.
        loss : {"criterion", "spo", "mse"}, default="criterion"
            The loss that orders the subtrees and scores them on validation
            data: the training criterion's (SPO for SPOT, squared error for
            CART) or a given one.

        Returns
        -------
        pruned : estimator
            A pruned copy; ``pruning_path_`` holds the alphas, the number of
            leaves and the validation loss of every candidate subtree, and
            (with ``one_se_rule``) the standard error of the best subtree's
            total validation loss, NaN otherwise; ``pruning_alpha_`` is the
            chosen alpha.
        """
        # Unfitted, the first use of tree_ raised AttributeError, not
        # scikit-learn's NotFittedError (that predict and apply raise).
        check_is_fitted(self, "tree_")
        one_se_rule = check_bool(one_se_rule, "one_se_rule", f"{type(self).__name__}.prune")
        loss = self._pruning_loss_name(loss)
        t = self.tree_
        train = {"criterion": t.impurity, "spo": t.loss}.get(loss)
        if train is None:  # "mse" for a tree grown on another criterion
            train = self._train_mse()
        node_val, sw, X, C, magnitude, w_unit = self._node_losses_on(X_val, C_val,
                                                                      sample_weight, loss)
        alphas, masks, _ = t.pruning_sequence(train)
        val = np.array([node_val[mk].sum() for mk in masks])
        n_leaves = np.array([mk.sum() for mk in masks])
        # Ties up to rounding, relative to the size of the summed terms (not to
        # the best loss, which is often 0 up to rounding: then 1e-16 of noise
        # decided, and a larger tree won a tie).
        tie = 1e-12 * max(abs(val.min()), magnitude, 1e-300)
        best = np.flatnonzero(val <= val.min() + tie)[-1]
        se = np.nan
        if one_se_rule:
            # Standard error of the best subtree's total validation loss; rows
            # of zero weight are rows removed, so they do not count in n.
            per = self._per_sample_loss(t.pruned(masks[best]), X, C, loss)
            mean = np.average(per, weights=sw)
            var = np.average((per - mean) ** 2, weights=sw)
            n_rows = int((sw > 0).sum())
            se = np.sqrt(var / max(n_rows - 1, 1)) * sw.sum()
            best = np.flatnonzero(val <= val[best] + se + tie)[-1]
        pruned = copy.deepcopy(self)
        pruned.tree_ = t.pruned(masks[best])
        pruned.feature_importances_ = pruned._importances_of_pruned()
        pruned.pruning_alpha_ = float(alphas[best])
        # The validation losses in the weights' own units (exact).
        pruned.pruning_path_ = Bunch(ccp_alphas=alphas, n_leaves=n_leaves,
                                     val_losses=val * w_unit,
                                     standard_error=float(se * w_unit))
        self._after_prune(pruned)
        return pruned

    def _after_prune(self, pruned):
        """Bring a subclass's own fitted attributes of ``pruned`` (a copy of
        this estimator with a pruned ``tree_``) up to date; none here."""

    def _per_sample_loss(self, tree, X, C, loss):
        node_of = tree.apply(X)
        # As in _node_losses_on: the criterion's losses in its scales' unit.
        u = self._loss_unit() if loss == "criterion" else 1.0
        spo = decision_loss(C / u, tree.decision[node_of], problem=self.problem_)
        diff = C / u - tree.value[node_of] / u
        mse = np.einsum("ij,ij->i", diff, diff)
        if loss == "spo":
            return spo
        if loss == "mse":
            return mse
        return self._criterion_scales(spo, mse)

    def _train_mse(self):
        raise ValueError("loss='mse' pruning needs the training squared error of every "
                         "node, which a tree grown on the SPO loss alone does not keep; "
                         "grow it with criterion='mse' or spo_weight < 1, or prune with "
                         "loss='criterion' or 'spo'.")

    def cost_complexity_pruning_path(self, X, C, sample_weight=None):
        """Effective alphas and total leaf losses of the weakest-link pruning sequence.

        Grows a full tree on ``(X, C)`` with this estimator's parameters
        (``ccp_alpha`` ignored), as scikit-learn does.

        Returns
        -------
        Bunch with ``ccp_alphas`` and ``impurities`` (increasing alphas; the
        total training criterion loss of the subtree kept at each).
        """
        est = copy.deepcopy(self)
        if hasattr(est, "ccp_alpha"):
            est.ccp_alpha = 0.0
        est.fit(X, C, sample_weight=sample_weight)
        alphas, _, losses = est.tree_.pruning_sequence()
        return Bunch(ccp_alphas=alphas, impurities=losses)

    def _apply_ccp_alpha(self, alpha):
        """Prune ``tree_`` at ``alpha``; whether any split was removed."""
        if alpha <= 0:
            return False
        alphas, masks, _ = self.tree_.pruning_sequence()
        k = int(np.searchsorted(alphas, alpha, side="right")) - 1
        if k == 0:
            return False
        self.tree_ = self.tree_.pruned(masks[k])
        return True

    def _importances_of_pruned(self):
        """Normalized ``feature_importances_`` of the current (pruned) ``tree_``.

        A forest's tree folds its ridge feature columns back onto the features.
        """
        imp = tree_gains(self.tree_)
        fmap = getattr(self, "ridge_features_", None)
        if fmap is not None:
            imp = fmap.fold_importances(imp, self.n_features_in_)
        s = imp.sum()
        return imp / s if s > 0 else imp

    # ------------------------------------------------------- persistence
    _persist_extra = ("loss_scales_", "loss_unit_", "pruning_alpha_", "pruning_path_",
                      "category_values_", "categories_seen_")

    def _set_trees_from_load(self, trees):
        if len(trees) != 1:
            raise ValueError(f"a {type(self).__name__} file holds one tree; got {len(trees)}.")
        self.tree_ = trees[0]
        path = getattr(self, "pruning_path_", None)
        if path is not None:
            self._check_pruning_path(path)
        if hasattr(self, "loss_scales_"):
            self.loss_scales_ = tuple(self.loss_scales_)
            if not hasattr(self, "loss_unit_"):
                # A file of an older version: its scales in the problem's units.
                self.loss_unit_ = 1.0
        elif 0.0 < self._spo_share() < 1.0:
            # A mixed criterion's pruning divides by them: without them the
            # file loaded and prune() raised AttributeError.
            from .._schema import SchemaError

            raise SchemaError("fitted.loss_scales_", "is missing; a tree grown on the mixed "
                                                     "criterion (0 < spo_weight < 1) needs "
                                                     "its SPO and squared-error scales.")

    def _check_pruning_path(self, path):
        """A loaded pruning path holds the tree kept: prune() keeps one of its
        subtrees, which plot_pruning_path finds by its number of leaves."""
        from .._schema import SchemaError

        n = self.tree_.n_leaves
        kept = np.flatnonzero(path.n_leaves == n)
        if kept.size != 1:
            raise SchemaError("fitted.pruning_path_.n_leaves",
                              f"must list the {n} leaves of the tree kept (trees[0]) once; "
                              f"got {path.n_leaves.tolist()!r:.80}.")
        k = int(kept[0])
        alpha = getattr(self, "pruning_alpha_", None)
        if alpha is not None and alpha != path.ccp_alphas[k]:
            raise SchemaError("fitted.pruning_alpha_",
                              f"is {alpha!r} but fitted.pruning_path_.ccp_alphas[{k}], the "
                              f"alpha of the tree kept, is {float(path.ccp_alphas[k])!r}.")

    def save(self, path):
        """Write the fitted model as JSON (see :func:`spotree.load`); no pickle involved."""
        from ._persist import save_model

        save_model(self, path)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.single_output = False
        tags.target_tags.multi_output = True
        tags.regressor_tags = None
        # NaN in X is a missing value, routed by the trees.
        tags.input_tags.allow_nan = True
        return tags


class SPOTree(BaseSPOTree):
    """A greedy SPO Tree: a decision tree whose splits minimize decision regret.

    Each leaf predicts the weighted mean cost of its training samples and
    decides the optimal decision for that mean, which minimizes the leaf's
    SPO loss (the paper's Theorem 1). Splits are chosen greedily to minimize
    the children's total SPO loss (``criterion="spo"``) or squared error
    (``criterion="mse"``, CART through the same code).

    Parameters
    ----------
    problem : DecisionProblem or None
        The optimization problem whose costs are predicted. None means "pick
        the cheapest of the d options" (``FiniteDecisions(np.eye(d))``, d
        taken from ``C`` at fit time).
    criterion : {"spo", "mse"}, default="spo"
    max_depth : int or None, default=None
        Maximum depth; None grows until another stopping rule fires.
    min_samples_leaf : int or float, default=1
        Minimum number of training samples in a leaf (a leaf may have exactly
        that many), whatever their weights, as in scikit-learn, except that
        a sample of weight 0 does not count: it is a sample removed. A float
        in (0, 1) is a fraction of the samples of positive weight, rounded
        up (scikit-learn's is a fraction of all the samples, so there a
        sample of weight 0 still raises the count). The paper's minimum
        leaf size is this count.
    min_samples_split : int or float, default=2
        Minimum number of samples (of positive weight, as for
        ``min_samples_leaf``) in a node for it to be split: an int at least
        2, or a float in (0, 1], a fraction of the samples of positive
        weight rounded up.
    min_weight_fraction_leaf : float in [0, 0.5], default=0.0
        Minimum fraction of the total sample weight in a leaf; the way to
        constrain leaves by weight.
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Number of features drawn at random at each node (feature bagging): an
        int, a fraction of the features (``max(1, int(max_features * p))``),
        ``int(sqrt(p))`` or ``int(log2(p))`` (at least 1), or all of them
        (None). A node where none of the drawn features has an admissible
        split searches the other features too, as scikit-learn's trees do.
    thresholds : "all" or int, default="all"
        ``"all"`` scores every boundary between distinct values; an int ``q``
        scores ``q`` quantile thresholds per feature per node (the paper used
        99, i.e. quantiles at 1%, 2%, ..., 99%).
    categorical_features : array-like of int or str, array of bool, or None
        Features split by category (``x == s``) instead of by threshold,
        given as numeric codes. Columns of a DataFrame with dtype
        ``category`` or ``string``, or ``object`` holding text, are
        categorical in any case (their labels are coded as listed in ``category_values_``). At
        predict time a category never seen at fit is treated as missing: it
        follows each split's missing-value side.
    categorical_splits : {"equal", "subset"}, default="equal"
        ``"equal"`` sends one category left (the paper's rule); ``"subset"``
        searches every subset of categories (up to 10 categories per node,
        one-vs-rest beyond).
    spo_weight : float in [0, 1], default=1.0
        With ``criterion="spo"``, the weight ``a`` of the mixed criterion
        ``a * SPO / SPO_root + (1 - a) * MSE / MSE_root`` (root losses as
        normalizers); 1.0 is pure SPO loss. Unused with ``criterion="mse"``
        (``fit`` warns when it is not 1.0).
    min_loss_decrease : float, default=0.0
        A split is made only if it lowers the node's criterion loss by at
        least this much. At 0, zero-decrease splits are made (as in the
        paper) and left for pruning to remove.
    ccp_alpha : float, default=0.0
        Complexity parameter of minimal cost-complexity pruning applied after
        growing (on the training criterion loss). It is in units of the total
        training loss (summed over the weighted rows; for ``criterion="mse"``
        the squared errors summed over the costs too; the mixed criterion,
        ``0 < spo_weight < 1``, has no unit: its losses are divided by the
        root's), not of scikit-learn's
        mean impurity: ``DecisionTreeRegressor(ccp_alpha=a)`` prunes as
        ``SPOTree(criterion="mse", ccp_alpha=a * sample_weight.sum() *
        n_costs)`` does. :meth:`cost_complexity_pruning_path` gives the
        alphas in these units.
    random_state : int, RandomState instance or None, default=None
        Seeds the feature draws of ``max_features``.

    Attributes
    ----------
    tree_ : Tree
        The fitted tree as flat arrays.
    problem_ : DecisionProblem
        The problem used (``problem`` or the default one).
    feature_importances_ : ndarray of shape (n_features,)
        Total criterion-loss decrease brought by each feature, normalized to
        sum to 1 (all zero for a single leaf). For the features that change
        the decisions on new rows, use permutation importance with
        :func:`~spotree.metrics.make_spo_scorer` (user guide: trees).
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
    n_oracle_calls_ : int
        Batched oracle calls made during fit (0 on the vertex path but the
        initial ones).

    Notes
    -----
    Ties between equally good splits go to the lowest feature index, then to
    the lowest threshold. A node whose criterion loss is already zero is not
    split (no split can lower it).

    **Missing values.** ``X`` may contain NaN. At each split, the samples
    missing the split feature are tried on both sides and go where the
    criterion is lower; the split "present values left, missing right" is a
    candidate too. At prediction, missing values follow that choice, or, at
    a split where no training sample was missing the feature, go to the
    child with more training weight.

    **Split search.** When the problem lists its vertices V (and K is not
    larger than the cost of its compiled solver), every threshold is scored
    from running sums of ``G = C V^T``; when it has a compiled solver
    (shortest paths, knapsacks), each candidate child is solved inside the
    compiled sweep; otherwise the mean costs of every candidate child go to
    the problem's oracle in one batched call per node. All three give the
    same tree, except where several decisions are exactly optimal for a
    node's mean cost (integer costs): the vertex path stores the first of
    them in the vertex list, the other two the oracle's pick, so on a tie
    ``predict_decision`` may differ from ``problem_.solve(predict(X))``
    (both optimal for the leaf). Costs are divided by a power of two near
    their largest magnitude before growing, so scaling the costs by any
    positive factor gives the same tree, except that with a pure criterion
    ``min_loss_decrease`` and ``ccp_alpha`` are in units of the loss: scale
    them by that factor too (by its square for ``criterion="mse"``).

    Examples
    --------
    >>> import numpy as np
    >>> from spotree import SPOTree, FiniteDecisions
    >>> from spotree.datasets import make_illustrative
    >>> X, C = make_illustrative(2000, random_state=0)
    >>> tree = SPOTree(FiniteDecisions(np.eye(2)), max_depth=1).fit(X, C)
    >>> round(float(tree.tree_.threshold[0]), 2)
    0.28
    """

    _parameter_constraints = {
        "criterion": [Options("spo", "mse")],
        "max_depth": [Interval(int, 1, None), None],
        "min_samples_leaf": [Interval(int, 1, None), Interval(float, 0.0, 1.0, "neither")],
        "min_samples_split": [Interval(int, 2, None),
                              Interval(float, 0.0, 1.0, "right", ints=False)],
        "min_weight_fraction_leaf": [Interval(float, 0.0, 0.5)],
        "max_features": [Interval(int, 1, None), Interval(float, 0.0, 1.0, "right"),
                         Options("sqrt", "log2"), None],
        "thresholds": [Options("all"), Interval(int, 1, None)],
        "categorical_features": [CATEGORICAL_FEATURES, None],
        "categorical_splits": [Options("equal", "subset")],
        "spo_weight": [Interval(float, 0.0, 1.0)],
        "min_loss_decrease": [Interval(float, 0.0, None)],
        "ccp_alpha": [Interval(float, 0.0, None)],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, problem=None, *, criterion="spo", max_depth=None, min_samples_leaf=1,
                 min_samples_split=2, min_weight_fraction_leaf=0.0, max_features=None,
                 thresholds="all", categorical_features=None, categorical_splits="equal",
                 spo_weight=1.0, min_loss_decrease=0.0, ccp_alpha=0.0, random_state=None):
        self.problem = problem
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_samples_split = min_samples_split
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.thresholds = thresholds
        self.categorical_features = categorical_features
        self.categorical_splits = categorical_splits
        self.spo_weight = spo_weight
        self.min_loss_decrease = min_loss_decrease
        self.ccp_alpha = ccp_alpha
        self.random_state = random_state

    def _categorical_mask(self, p):
        return categorical_mask(self, p)

    def fit(self, X, C, sample_weight=None):
        """Grow the tree on features X and realized costs C.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features; NaN (or None in an ``object`` column of numbers) marks a
            missing value. DataFrame columns of dtype ``category`` or
            ``string``, or ``object`` holding text, are categorical features;
            date and time columns are refused (convert them to numbers).
        C : array-like of shape (n_samples, n_costs)
            Realized cost vectors; ``n_costs`` must match the problem.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, not all zero. A row of weight 0 is a row
            removed (its values add no threshold and no category). A row of
            integer weight ``k`` grows the tree of ``k`` copies of it, except
            for the rules that count rows (``min_samples_leaf``,
            ``min_samples_split``, the quantiles of an int ``thresholds``),
            which count it once. Scaling every weight by one factor grows
            the same tree, except that with a pure criterion
            ``min_loss_decrease`` and ``ccp_alpha`` are in units of the
            weighted loss: scale them by that factor too (the mixed
            criterion, ``0 < spo_weight < 1``, is a fraction of the root's:
            leave them). (A factor other than a power of
            two rounds the sums of weights otherwise: a leaf holding exactly
            ``min_weight_fraction_leaf`` of the weight may then fall on
            either side of it, as in scikit-learn.)

        Returns
        -------
        self : SPOTree
        """
        with restored_on_failure(self):
            validate_params(self)
            warn_unused_spo_weight(self)
            self._forget_outside_state()
            X, C, sw = check_fit_inputs(self, X, C, sample_weight)
            # The fit's batches warm-start each other, from a clean start: the
            # tree depends on the data, not on what the problem solved before.
            with solver_session():
                return self._fit_arrays(X, C, sw, resolve_problem(self.problem, C))

    def _fit_arrays(self, X, C, sw, problem, fit_data=None, cnt=None, seed=None,
                    abort=None, decisions=True, w_scale=1.0):
        """Fit on validated arrays.

        A forest passes a shared :class:`FitData`, the bootstrap counts as
        ``cnt`` (what ``min_samples_leaf`` counts there) and its tree's seed;
        SPOBoost one whose costs are the round's targets, and
        ``decisions=False`` (see :func:`grow_tree`).
        """
        self.problem_ = problem
        # A Python float: compiled code takes no numpy float16 (or other odd scalar).
        a = float(self.spo_weight) if self.criterion == "spo" else 0.0
        if fit_data is None:
            fit_data = FitData(problem, X, C, self._categorical_mask(X.shape[1]),
                               need_spo=a > 0.0)
        if cnt is None:
            cnt = (sw > 0).astype(np.float64)
        n_counted = float(cnt.sum())
        if seed is None:
            seed = check_random_state_seed(self.random_state)
        tree, imp, scales = grow_tree(
            fit_data, sw, cnt, a=a, max_depth=self.max_depth,
            min_leaf_cnt=_resolve_min_count(self.min_samples_leaf, n_counted),
            # (As a fraction: the total of weights near the float range overflowed,
            # and 0 * inf made the least leaf weight NaN, which refused every split.)
            min_leaf_w=0.0, min_weight_fraction=float(self.min_weight_fraction_leaf),
            min_split_cnt=_resolve_min_count(self.min_samples_split, n_counted),
            max_features=_resolve_max_features(self.max_features, X.shape[1]),
            # q >= rows - 1 quantiles already hit every gap of a node: min
            # with the row count changes nothing but keeps the compiled loop
            # over quantiles (and its int64) small.
            n_quantiles=(0 if self.thresholds == "all"
                         else min(int(self.thresholds), X.shape[0])),
            min_loss_decrease=float(self.min_loss_decrease),
            seed=seed, categorical_subsets=self.categorical_splits == "subset",
            abort=abort, decisions=decisions, w_scale=w_scale)
        self.tree_ = tree
        self.categories_seen_ = _categories_seen(fit_data, sw > 0)
        if not any(v is not None for v in self.categories_seen_):
            self.categories_seen_ = None
        self.loss_scales_ = scales
        # Read after fit (prune), and saved, as they were here.
        self._fit_params = {"criterion": self.criterion, "spo_weight": self.spo_weight}
        # The unit of loss_scales_ (see mixed_loss_unit): a power of two.
        self.loss_unit_ = mixed_loss_unit(fit_data.scale) if 0.0 < a < 1.0 else 1.0
        self.n_oracle_calls_ = fit_data.n_oracle_calls
        if self._apply_ccp_alpha(self.ccp_alpha):
            # Only the splits that survived pruning count.
            imp = tree_gains(self.tree_)
        s = imp.sum()
        self.feature_importances_ = imp / s if s > 0 else imp
        return self

    def _train_mse(self):
        # The tree stores the training SSE as impurity for criterion="mse"; a
        # mixed criterion stores a SPO / s_spo + (1 - a) SSE / s_mse next to
        # the SPO loss, from which the SSE follows.
        t = self.tree_
        a = float(self._spo_share())
        if a == 0.0:
            return t.impurity
        if a < 1.0:
            s_spo, s_mse = self.loss_scales_
            u = self._loss_unit()
            if u != 1.0:
                # (Squared errors of 0 or inf: pruning on them kept the
                # smallest tree without a word.)
                raise ValueError(f"loss='mse' pruning needs squared errors in the problem's "
                                 f"units, and the training costs (of about {u:.3g}) have "
                                 "squares beyond the float range or subnormal; prune with "
                                 "loss='criterion' or 'spo', or rescale the costs.")
            return np.maximum((t.impurity - a * t.loss / s_spo) * s_mse / (1.0 - a), 0.0)
        return super()._train_mse()
