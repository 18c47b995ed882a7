"""The SPO+ surrogate loss and a linear model trained on it (Elmachtoub and Grigas).

For a problem ``min_{w in S} c^T w`` (after flipping the sign of a
maximization problem), the SPO+ loss of a prediction ``c_hat`` of the true
cost ``c`` is

    l(c_hat, c) = max_{w in S} (c - 2 c_hat)^T w + 2 c_hat^T w*(c) - z*(c)
                = (2 c_hat - c)^T (w*(c) - w*(2 c_hat - c)),

a convex, piecewise-linear upper bound of the SPO loss with subgradient
``2 (w*(c) - w*(2 c_hat - c))``. For a maximization problem both carry the
factor ``sign = -1``. One batched oracle call at ``2 c_hat - c`` gives the
loss and the subgradient of every row.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, MultiOutputMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ._params import InstanceOf, Interval, validate_params
from ._validation import check_costs, check_sample_weight
from .problems import DecisionProblem
from .tree._classes import BaseSPOTree, SPOScoreMixin

__all__ = ["SPOPlusLinear", "spo_plus_loss", "spo_plus_subgradient"]


def _check_fit_data(est, X, C, sample_weight):
    """The checks of the trees' ``fit``, without the missing values trees can route."""
    X, C, sw, problem = BaseSPOTree._check_fit_inputs(est, X, C, sample_weight)
    if not np.isfinite(X).all():
        raise ValueError(f"Input X contains NaN or infinity; {type(est).__name__} does not "
                         "support missing values (impute them, or use SPOTree/SPOForest, "
                         "whose splits route them).")
    return X, C, sw, problem


def _spo_plus(problem, C, C_hat, W_true):
    """Per-row SPO+ loss and subgradient (one batched oracle call)."""
    W2, _ = problem.solve(2.0 * C_hat - C)
    D = W_true - W2
    s = problem.sign
    loss = s * np.einsum("ij,ij->i", 2.0 * C_hat - C, D)
    # Exact arithmetic gives loss >= 0 (W2 is optimal for 2 c_hat - c).
    return np.maximum(loss, 0.0), (2.0 * s) * D


def _check_pair(C_true, C_pred, problem, W_true):
    if not isinstance(problem, DecisionProblem):
        raise TypeError(f"problem must be a spotree DecisionProblem; got "
                        f"{type(problem).__name__}.")
    C_true = check_costs(C_true, n_costs=problem.n_costs, name="C_true")
    C_pred = check_costs(C_pred, n_costs=problem.n_costs, name="C_pred")
    if C_true.shape[0] != C_pred.shape[0]:
        raise ValueError(f"C_true and C_pred must have the same number of rows; got "
                         f"{C_true.shape[0]} and {C_pred.shape[0]}.")
    if W_true is None:
        W_true = problem.solve(C_true)[0]
    else:
        W_true = check_costs(W_true, n_costs=problem.n_costs, name="W_true")
        if W_true.shape[0] != C_true.shape[0]:
            raise ValueError(f"W_true must have one row per row of C_true ({C_true.shape[0]}); "
                             f"got {W_true.shape[0]}.")
    return C_true, C_pred, W_true


def spo_plus_loss(C_true, C_pred, *, problem, sample_weight=None, W_true=None):
    """Per-sample SPO+ loss of predicted costs.

    ``l(c_hat, c) = sign * (2 c_hat - c)^T (w*(c) - w*(2 c_hat - c))``, the
    convex surrogate of the SPO loss of Elmachtoub and Grigas; always
    ``>= spo_loss`` and ``>= 0``.

    Parameters
    ----------
    C_true : array-like of shape (m, d)
    C_pred : array-like of shape (m, d)
    problem : DecisionProblem
    sample_weight : array-like of shape (m,), default=None
        If given, each loss is multiplied by its weight.
    W_true : array-like of shape (m, d), default=None
        Optimal decisions of ``C_true`` when already known (saves one oracle
        call).

    Returns
    -------
    ndarray of shape (m,)

    Examples
    --------
    >>> import numpy as np
    >>> from spotree.problems import FiniteDecisions
    >>> from spotree.linear_model import spo_plus_loss
    >>> roads = FiniteDecisions(np.eye(2))
    >>> spo_plus_loss([[1.0, 3.0]], [[2.0, 1.0]], problem=roads).tolist()
    [4.0]
    """
    C_true, C_pred, W_true = _check_pair(C_true, C_pred, problem, W_true)
    sw = check_sample_weight(sample_weight, C_true.shape[0], allow_all_zero=True)
    if C_true.shape[0] == 0:
        return np.empty(0)
    return sw * _spo_plus(problem, C_true, C_pred, W_true)[0]


def spo_plus_subgradient(C_true, C_pred, *, problem, W_true=None):
    """A subgradient of the SPO+ loss with respect to the predicted costs, per sample.

    ``2 * sign * (w*(c) - w*(2 c_hat - c))``; it is the gradient wherever the
    oracle's answer at ``2 c_hat - c`` is unique.

    Parameters
    ----------
    C_true, C_pred : array-like of shape (m, d)
    problem : DecisionProblem
    W_true : array-like of shape (m, d), default=None

    Returns
    -------
    ndarray of shape (m, d)
    """
    C_true, C_pred, W_true = _check_pair(C_true, C_pred, problem, W_true)
    if C_true.shape[0] == 0:
        return np.empty((0, problem.n_costs))
    return _spo_plus(problem, C_true, C_pred, W_true)[1]


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
        afresh.
    verbose : int, default=0
        Print the mean training loss after every epoch when positive.

    Attributes
    ----------
    coef_ : ndarray of shape (n_costs, n_features)
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

    Notes
    -----
    Sample weights scale each row's loss; the objective is
    ``sum_i w_i l_i / sum_i w_i``. Weighted minibatch gradients are
    normalized by the mean weight of the whole training set, so unit weights
    give exactly PyEPO's per-batch mean.

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
    }

    def __init__(self, problem=None, *, alpha=0.0, fit_intercept=True, max_iter=20,
                 learning_rate=0.01, batch_size=32, random_state=None, warm_start=False,
                 verbose=0):
        self.problem = problem
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose

    def fit(self, X, C, sample_weight=None):
        """Train on features X and realized costs C.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        C : array-like of shape (n_samples, n_costs)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : SPOPlusLinear
        """
        validate_params(self)
        X, C, sw, problem = _check_fit_data(self, X, C, sample_weight)
        self.problem_ = problem
        W_true = problem.solve(C)[0]
        self._fit_arrays(X, C, sw, W_true, check_random_state(self.random_state))
        return self

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
            # torch.nn.Linear's default initialization.
            bound = 1.0 / np.sqrt(p)
            coef = rng.uniform(-bound, bound, size=(d, p))
            intercept = (rng.uniform(-bound, bound, size=d) if self.fit_intercept
                         else np.zeros(d))
        params = [coef, intercept] if self.fit_intercept else [coef]
        opt = _Adam(params, float(self.learning_rate))
        w = sw / sw.mean()  # unit weights: exactly the per-batch mean
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
                loss, grad = _spo_plus(problem, C[rows], C_hat, W_true[rows])
                wb = w[rows]
                m = rows.shape[0]
                G = (wb[:, None] * grad) / m
                g_coef = G.T @ Xb + self.alpha * coef
                grads = [g_coef, G.sum(axis=0)] if self.fit_intercept else [g_coef]
                opt.step(grads)
                if average_from is not None and epoch >= average_from:
                    for a, q in zip(avg, params):
                        a += q
                    n_avg += 1
                total += float(wb @ loss) / m + 0.5 * self.alpha * float((coef ** 2).sum())
                count += 1
            curve.append(total / count)
            if self.verbose:
                print(f"SPOPlusLinear epoch {epoch + 1}/{self.max_iter}: "
                      f"mean SPO+ loss {curve[-1]:.6g}")
        if n_avg:
            coef = avg[0] / n_avg
            if self.fit_intercept:
                intercept = avg[1] / n_avg
        self.coef_ = coef
        self.intercept_ = intercept
        self.loss_curve_ = np.asarray(curve)
        self.n_iter_ = len(curve)
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
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=True)
        return X @ self.coef_.T + self.intercept_

    def predict_decision(self, X):
        """Decisions: the optimal decision for each row's predicted costs (one oracle call).

        Returns
        -------
        ndarray of shape (n_samples, n_costs)
        """
        return self.problem_.solve(self.predict(X))[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.single_output = False
        tags.target_tags.multi_output = True
        tags.regressor_tags = None
        return tags
