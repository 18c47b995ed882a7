"""A linear cost model trained on the SPO+ loss (Elmachtoub and Grigas).

The loss and its subgradient are :func:`spotree.metrics.spo_plus_loss` and
:func:`spotree.metrics.spo_plus_subgradient` (also importable from here, where
they were first defined).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, MultiOutputMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._params import RANDOM_STATE, InstanceOf, Interval, validate_params
from ._ridge import cost_unit
from ._validation import check_features, check_fit_inputs, restored_on_failure
from .metrics import _spo_plus, spo_plus_loss, spo_plus_subgradient  # noqa: F401 (old home)
from .problems import resolve_problem
from .problems._base import solver_session
from .tree import register_model
from .tree._classes import CATEGORICAL_FEATURES, SPOScoreMixin

__all__ = ["SPOPlusLinear"]


class _Adam:
    """Adam (Kingma and Ba) with PyTorch's default constants, on a list of arrays."""

    def __init__(self, params, lr, beta1=0.9, beta2=0.999, eps=1e-8):
        self.params, self.lr = params, lr
        self.beta1, self.beta2, self.eps = beta1, beta2, eps
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads):
        self.t += 1
        b1, b2 = self.beta1, self.beta2
        c1, c2 = 1.0 - b1 ** self.t, 1.0 - b2 ** self.t
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= b1
            m += (1.0 - b1) * g
            v *= b2
            v += (1.0 - b2) * g * g
            p -= self.lr * (m / c1) / (np.sqrt(v / c2) + self.eps)


#: The fitted attributes that checking X at fit sets (check_features).
_RESET_BY_CHECK = ("n_features_in_", "feature_names_in_", "category_values_",
                   "_numeric_categories")


def _unseen_indicators(X, sw, categories):
    """Mask of the one-hot columns of ``X`` whose category no row of positive weight holds."""
    out = np.zeros(X.shape[1], dtype=bool)
    if categories is None:
        return out
    held = (X[sw > 0] != 0).any(axis=0)
    k = 0
    for labels in categories:
        width = 1 if labels is None else len(labels)
        if labels is not None:
            out[k:k + width] = ~held[k:k + width]
        k += width
    return out


def _overflow_error(X, what):
    """The error for a fit whose numbers left the float range through large features."""
    top = float(np.max(np.abs(X), initial=0.0))
    return ValueError(f"SPOPlusLinear: {what} passed the float range during the fit, with "
                      f"features up to {top:.3g} in magnitude: it fits a plain linear model "
                      "on X as given (as PyEPO does). Standardize X first (e.g. "
                      "sklearn.preprocessing.StandardScaler in a Pipeline).")


@register_model
class SPOPlusLinear(SPOScoreMixin, MultiOutputMixin, BaseEstimator):
    """A linear cost model trained on the SPO+ loss, in plain numpy.

    Predicts ``c_hat = coef_ @ x + intercept_`` and minimizes the mean
    SPO+ loss over the training set (plus ``alpha / 2 * ||coef_||^2``) by
    minibatch Adam, one batched oracle call per minibatch. This is the
    standard baseline of decision-focused learning (PyEPO's SPO+ with a
    ``torch.nn.Linear`` model); with the defaults it follows PyEPO's usual
    protocol: batches of 32, Adam with learning rate 0.01, 20 epochs,
    weights initialized uniformly in ``[-1/sqrt(p), 1/sqrt(p)]``.

    Parameters
    ----------
    problem : DecisionProblem or None, default=None
        The optimization problem; None means "pick the cheapest of the d
        options" (``FiniteDecisions(np.eye(d))``).
    alpha : float, default=0.0
        L2 penalty on ``coef_`` (not on the intercept).
    fit_intercept : bool, default=True
    max_iter : int, default=20
        Number of epochs (passes over the training set).
    learning_rate : float, default=0.01
        Adam's step size.
    batch_size : int, default=32
        Rows per minibatch (the last batch of an epoch may be smaller); a
        value at least the number of rows gives full-batch Adam.
    random_state : int, RandomState instance or None, default=None
        Seeds the initial weights and the shuffling of every epoch.
    warm_start : bool, default=False
        Start from the ``coef_`` and ``intercept_`` of the previous fit (or
        ones set by hand) instead of random weights; Adam's moments start
        afresh. They must have this data's shape, and a previous fit's
        categories must be this data's (``category_values_``): otherwise
        ``fit`` raises a ValueError.
    verbose : int, default=0
        Print the mean training loss after every epoch when positive (the
        ``loss_curve_`` entry: with ``alpha``, plus the penalty, as it says).
    categorical_features : array-like of int or str, array of bool, or None, default=None
        Numeric columns to treat as categories (weekday codes 0..6, say),
        given as in :class:`~spotree.SPOTree`: feature indices, names of a
        DataFrame's columns, or a boolean mask of all the features. Each
        becomes one indicator column per distinct value of the training rows
        (its labels in ``category_values_``), as a DataFrame's categorical
        column does; a missing value (NaN) or a value not seen at fit is
        all zeros. A DataFrame column of dtype ``category`` or ``string``, or
        ``object`` holding text, is categorical in any case (listing it
        changes nothing). X at predict may then be an array, unless some
        column is categorical by its dtype.

    Attributes
    ----------
    coef_ : ndarray of shape (n_costs, n_columns)
        One column per feature, except that a categorical column (of a
        DataFrame: dtype ``category`` or ``string``, or ``object`` holding
        text; or one marked by ``categorical_features``) has one column per
        category of ``category_values_``, in that order: the model sees it
        as indicator columns, all zero for a missing or unseen category (a
        listed category that no row of positive weight holds keeps a
        coefficient of 0).
    intercept_ : ndarray of shape (n_costs,)
    loss_curve_ : ndarray of shape (``n_iter_``,)
        Mean SPO+ loss (weighted, plus the penalty) over the minibatches of
        each epoch, as they were seen during that epoch.
    n_iter_ : int
        Epochs run.
    problem_ : DecisionProblem
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only for DataFrame input with string column names.
    category_values_ : list or None
        Per column of X, its categories in the order of their codes: a
        ``category`` dtype's own (listed even when no row holds them),
        otherwise the labels of the training rows, sorted (for a column
        marked by ``categorical_features``, its distinct values: ints when
        they are whole numbers); None for a numeric column; None when X has
        no categorical column.

    Notes
    -----
    Sample weights scale each row's loss; the objective is
    ``sum_i w_i l_i / sum_i w_i``. Weighted minibatch gradients are
    normalized by the mean weight of the whole training set, so unit weights
    give exactly PyEPO's per-batch mean. A row of zero weight is a row
    removed: the minibatches are drawn from the rows of positive weight.

    A ``"max"`` problem on costs ``C`` and the ``"min"`` problem on ``-C``
    are the same decision problem. Started from negated weights
    (``warm_start=True``), their fits mirror each other exactly (negated
    coefficients, the same decisions); started by ``random_state``, both
    draw the same start weights, not negated ones, so the two fits are two
    draws of one distribution (the uniform start is symmetric), not mirror
    images.

    Examples
    --------
    >>> from spotree import ShortestPath, SPOPlusLinear
    >>> from spotree.datasets import make_pyepo_shortest_path
    >>> X, C, B = make_pyepo_shortest_path(500, degree=2, noise=0.5, random_state=0,
    ...                                    return_B=True)
    >>> X_test, C_test = make_pyepo_shortest_path(500, degree=2, noise=0.5, B=B,
    ...                                           random_state=1)
    >>> model = SPOPlusLinear(ShortestPath((5, 5)), random_state=0).fit(X, C)
    >>> model.coef_.shape
    (40, 5)
    >>> bool(model.loss_curve_[-1] < model.loss_curve_[0])
    True
    """

    _parameter_constraints = {
        "alpha": [Interval(float, 0.0, None)],
        "fit_intercept": [InstanceOf((bool, np.bool_), "a bool")],
        "max_iter": [Interval(int, 1, None)],
        "learning_rate": [Interval(float, 0.0, None, "neither")],
        "batch_size": [Interval(int, 1, None)],
        "warm_start": [InstanceOf((bool, np.bool_), "a bool")],
        "verbose": [Interval(int, 0, None), InstanceOf((bool, np.bool_), "a bool")],
        "random_state": RANDOM_STATE,
        "categorical_features": [CATEGORICAL_FEATURES, None],
    }

    # Saved by save() (see spotree.tree._persist); no trees, no importances.
    _persist_extra = ("category_values_", "_numeric_categories", "coef_", "intercept_",
                      "loss_curve_", "n_iter_")
    _persist_importances = False

    def __init__(self, problem=None, *, alpha=0.0, fit_intercept=True, max_iter=20,
                 learning_rate=0.01, batch_size=32, random_state=None, warm_start=False,
                 verbose=0, categorical_features=None):
        self.problem = problem
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.categorical_features = categorical_features

    def fit(self, X, C, sample_weight=None):
        """Train on features X and realized costs C.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Finite features; a DataFrame's category and text columns, and
            those marked by ``categorical_features``, are categorical (see
            ``coef_``), and may hold missing values (NaN: all indicators 0).
        C : array-like of shape (n_samples, n_costs)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : SPOPlusLinear
        """
        with restored_on_failure(self):
            validate_params(self)
            # What checking X resets, kept so that a refused warm start leaves the
            # fitted model as it was.
            kept = {k: v for k, v in vars(self).items()
                    if k in _RESET_BY_CHECK}
            X, C, sw = check_fit_inputs(self, X, C, sample_weight, allow_nan=False,
                                        one_hot_categories=True)
            if self.warm_start and getattr(self, "coef_", None) is not None:
                try:
                    self._check_warm_start(X.shape[1], C.shape[1],
                                           kept.get("category_values_"))
                except ValueError:
                    for k in _RESET_BY_CHECK:
                        self.__dict__.pop(k, None)
                    self.__dict__.update(kept)
                    raise
            self.problem_ = problem = resolve_problem(self.problem, C)
            # Only the rows of positive weight: the minibatches are drawn from the
            # rows, so a row of weight 0 moved the others' batches (and the mean
            # weight that scales the steps): 25 such rows changed the predictions
            # by 7%. SPOBoost's "spo+" start drops them alike.
            pos = sw > 0
            if not pos.all():
                X, C, sw = X[pos], C[pos], sw[pos]
            with solver_session():  # warm starts within the fit only
                W_true = problem.solve(C)[0]
                self._fit_arrays(X, C, sw, W_true, check_random_state(self.random_state))
            return self

    def _check_warm_start(self, p, d, categories_before):
        """The ``coef_`` and ``intercept_`` a warm start continues from must fit this data.

        A start of another shape was silently replaced by random weights, and
        coefficients of another set of categories (a listed category that the
        new data lacks or relabels) would have been read as this one's.
        """
        if np.shape(self.coef_) != (d, p):
            raise ValueError(f"warm_start=True continues from coef_, which has shape "
                             f"{np.shape(self.coef_)}, but this data needs ({d}, {p}) (n_costs, "
                             "columns, a categorical column counting one per category); fit "
                             "with warm_start=False, or set coef_ to that shape.")
        if self.fit_intercept and np.shape(getattr(self, "intercept_", None)) != (d,):
            raise ValueError(f"warm_start=True continues from intercept_, which has shape "
                             f"{np.shape(getattr(self, 'intercept_', None))}, but this data "
                             f"needs ({d},); fit with warm_start=False, or set intercept_.")
        after = getattr(self, "category_values_", None)
        if categories_before is not None and after != categories_before:
            raise ValueError(f"warm_start=True continues from coefficients of the categories "
                             f"{categories_before} (category_values_ of the previous fit), but "
                             f"this data has {after}; give the columns the same categories "
                             "(a category dtype lists them all), or fit with warm_start=False.")

    def _fit_arrays(self, X, C, sw, W_true, rng, average_from=None):
        """Adam on validated arrays (SPOBoost reuses it for its ``init="spo+"``).

        ``average_from`` (an epoch index, None for off) ends with the mean of
        the parameters after every Adam step from that epoch on (Polyak-Ruppert
        averaging; SPOBoost's start) instead of the last iterate; the loss
        curve is the same.
        """
        n, p = X.shape
        d = C.shape[1]
        if (self.warm_start and getattr(self, "coef_", None) is not None
                and np.shape(self.coef_) == (d, p)
                and np.shape(getattr(self, "intercept_", None)) == (d,)):
            coef = np.array(self.coef_, dtype=np.float64)
            intercept = (np.array(self.intercept_, dtype=np.float64) if self.fit_intercept
                         else np.zeros(d))
        else:
            # torch.nn.Linear's default initialization, over the columns a row
            # of positive weight can move. The indicator of a category that no
            # such row holds (listed by the dtype, or held by rows of weight 0)
            # gets no gradient: a random start would stay in coef_ and shift
            # that category's predictions, which should be all zeros as for
            # any unseen category. Drawn this way, such a category changes
            # nothing else either.
            live = ~_unseen_indicators(X, sw, getattr(self, "category_values_", None))
            # No column that can move (every category missing or unseen on the
            # rows of positive weight): torch's rule for a fan-in of 0, a bound
            # of 0 (1 / sqrt(0) overflowed the uniform draw).
            n_live = int(live.sum())
            bound = 1.0 / np.sqrt(n_live) if n_live else 0.0
            coef = np.zeros((d, p))
            coef[:, live] = rng.uniform(-bound, bound, size=(d, live.sum()))
            intercept = (rng.uniform(-bound, bound, size=d) if self.fit_intercept
                         else np.zeros(d))
        params = [coef, intercept] if self.fit_intercept else [coef]
        opt = _Adam(params, float(self.learning_rate))
        # Unit weights: exactly the per-batch mean. (The weights first in units
        # of a power of two at the largest, exact: the mean of weights near the
        # float range overflowed to inf, and every step was 0.)
        sw = sw / cost_unit(sw)
        w = sw / sw.mean()
        bs = int(min(self.batch_size, n))
        problem = self.problem_
        curve = []
        avg = [np.zeros_like(q) for q in params]
        n_avg = 0
        for epoch in range(self.max_iter):
            order = rng.permutation(n)
            total, count = 0.0, 0
            for start in range(0, n, bs):
                rows = order[start:start + bs]
                Xb = X[rows]
                C_hat = Xb @ coef.T + intercept
                # (The SPO+ loss solves for 2 C_hat - C.)
                with np.errstate(over="ignore", invalid="ignore"):
                    if not np.isfinite(2.0 * C_hat - C[rows]).all():
                        raise _overflow_error(X, "the predicted costs")
                loss, grad = _spo_plus(problem, C[rows], C_hat, W_true[rows])
                # The penalty at the coefficients of this loss (the step below
                # moves them in place).
                penalty = 0.5 * self.alpha * float((coef ** 2).sum())
                wb = w[rows]
                m = rows.shape[0]
                G = (wb[:, None] * grad) / m
                g_coef = G.T @ Xb + self.alpha * coef
                grads = [g_coef, G.sum(axis=0)] if self.fit_intercept else [g_coef]
                opt.step(grads)
                # Squares of gradients beyond 1e154 are inf: every later step
                # was 0, and the start came back as the model without a word.
                if not all(np.isfinite(v).all() for v in opt.v):
                    raise _overflow_error(X, "the squared gradients")
                if average_from is not None and epoch >= average_from:
                    for a, q in zip(avg, params):
                        a += q
                    n_avg += 1
                total += float(wb @ loss) / m + penalty
                count += 1
            curve.append(total / count)
            if self.verbose:
                # The curve holds the penalty too: say so where it is not 0.
                what = ("mean SPO+ loss + L2 penalty" if self.alpha else "mean SPO+ loss")
                print(f"SPOPlusLinear epoch {epoch + 1}/{self.max_iter}: "
                      f"{what} {curve[-1]:.6g}")
        if n_avg:
            coef = avg[0] / n_avg
            if self.fit_intercept:
                intercept = avg[1] / n_avg
        self.coef_ = coef
        self.intercept_ = intercept
        self.loss_curve_ = np.asarray(curve)
        self.n_iter_ = len(curve)
        # Saved as fitted: fit_intercept=False set after fit wrote a file that
        # load refused (its intercept_ is not zero).
        self._fit_params = {"fit_intercept": self.fit_intercept}
        return self

    def predict(self, X):
        """Predicted costs ``X @ coef_.T + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_costs)
        """
        check_is_fitted(self, "coef_")
        X = check_features(self, X, reset=False, allow_nan=False, one_hot_categories=True)
        with np.errstate(over="ignore", invalid="ignore"):
            P = X @ self.coef_.T + self.intercept_
            bad = ~np.isfinite(P).all(axis=1)
        if bad.any():
            # (NaN from inf - inf came back without a word; predict_decision blamed C.)
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"SPOPlusLinear predicts costs beyond the float range for row {i} "
                             f"of X (features up to {np.max(np.abs(X[i])):.3g} in magnitude): "
                             "the linear model extrapolates them.")
        return P

    def predict_decision(self, X):
        """Decisions: the optimal decision for each row's predicted costs (one oracle call).

        Returns
        -------
        ndarray of shape (n_samples, n_costs)
        """
        # predict first: it raises NotFittedError on an unfitted model, where
        # problem_ (set by fit) would raise a bare AttributeError.
        C_hat = self.predict(X)
        return self.problem_.solve(C_hat)[0]

    def save(self, path):
        """Write the fitted model as JSON (see :func:`spotree.load`); no pickle involved.

        The file holds the parameters, ``coef_``, ``intercept_``, the loss
        curve, the categories of categorical columns and the problem (or its
        class, size and sense when it cannot be written to JSON: pass it
        back to ``spotree.load(path, problem=...)``).
        """
        from .tree._persist import save_model

        save_model(self, path)

    def _set_trees_from_load(self, trees):
        """Check what :func:`spotree.load` read: no trees, coefficients of matching shape."""
        from . import _schema

        if trees:
            raise _schema.SchemaError("trees", f"must be empty for an SPOPlusLinear (a linear "
                                               f"model); got {len(trees)} trees.")
        for key in ("coef_", "intercept_", "loss_curve_", "n_iter_"):
            if not hasattr(self, key):
                raise _schema.SchemaError(f"fitted.{key}", "is missing.")
        cats = self.category_values_ = getattr(self, "category_values_", None)
        cols = (self.n_features_in_ if cats is None
                else sum(1 if c is None else len(c) for c in cats))
        if self.coef_.shape[1] != cols:
            why = ("" if cats is None else
                   " (one per numeric feature and one per category of category_values_)")
            raise _schema.SchemaError("fitted.coef_", f"has {self.coef_.shape[1]} columns but "
                                                      f"the model has {cols}{why}.")
        if not self.fit_intercept and (self.intercept_ != 0).any():
            raise _schema.SchemaError("fitted.intercept_", "must be all zero when "
                                                           "params.fit_intercept is false.")
        if self.loss_curve_.shape[0] != self.n_iter_:
            raise _schema.SchemaError("fitted.loss_curve_", f"has {self.loss_curve_.shape[0]} "
                                                            f"entries but fitted.n_iter_ is "
                                                            f"{self.n_iter_}.")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.single_output = False
        tags.target_tags.multi_output = True
        tags.regressor_tags = None
        return tags
