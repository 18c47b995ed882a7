"""SPO loss, the paper's normalized extra travel time, and the SPO+ surrogate loss.

For a problem ``min_{w in S} c^T w`` (after flipping the sign of a
maximization problem), the SPO+ loss of Elmachtoub and Grigas of a prediction
``c_hat`` of the true cost ``c`` is

    l(c_hat, c) = max_{w in S} (c - 2 c_hat)^T w + 2 c_hat^T w*(c) - z*(c)
                = (2 c_hat - c)^T (w*(c) - w*(2 c_hat - c)),

a convex, piecewise-linear upper bound of the SPO loss with subgradient
``2 (w*(c) - w*(2 c_hat - c))``. For a maximization problem both carry the
factor ``sign = -1``. One batched oracle call at ``2 c_hat - c`` gives the
loss and the subgradient of every row.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._compat import import_optional
from ._ridge import cost_unit
from ._validation import (_as_real, check_costs, check_same_rows, check_sample_weight,
                          cost_names)
from .problems import DecisionProblem, describe_not_a_problem
from .problems._base import check_problem_attributes

__all__ = ["spo_loss", "normalized_spo_loss", "normalized_decision_loss", "make_spo_scorer",
           "decision_loss", "spo_plus_loss", "spo_plus_subgradient", "compare_decisions",
           "DecisionComparison", "REGRET_RTOL"]

_TIES = ("first", "worst")


def zero_optima_hint(problem):
    """Advice for optimal values that are all zero: check the problem's ``sense``.

    A maximization problem written as a minimization (a knapsack's positive
    values with ``sense="min"``) makes doing nothing optimal, of value 0.
    """
    sense = getattr(problem, "sense", None)
    told = f" (this {type(problem).__name__} has sense={sense!r})" if sense else ""
    return (f"Check the problem's sense{told}: minimizing costs that are all positive (or "
            "maximizing costs that are all negative) makes doing nothing optimal, of value 0.")


def _check_problem(problem):
    if not isinstance(problem, DecisionProblem):
        raise TypeError(describe_not_a_problem(problem))
    return check_problem_attributes(problem)


def _check_pair(C_true, C_pred, problem, second="C_pred"):
    _check_problem(problem)
    # C-ordered: einsum and the oracle sum a column-major array (a
    # DataFrame's) in another order, so the losses of the same numbers
    # differed in the last bits between an array and a DataFrame.
    names = cost_names(problem)
    C_true = np.ascontiguousarray(check_costs(C_true, n_costs=problem.n_costs, name="C_true",
                                              names=names))
    C_pred = np.ascontiguousarray(check_costs(C_pred, n_costs=problem.n_costs, name=second,
                                              names=names))
    check_same_rows(C_true, C_pred, ("C_true", second))
    return C_true, C_pred


#: A negative regret down to ``-REGRET_RTOL * (|c|.|w| + |z*(c)|)`` is rounding (and the
#: solver's optimality tolerance) and counts as 0; below it, the decision is refused.
REGRET_RTOL = 1e-6


def decision_loss(C_true, W_pred, *args, problem=None, z_true=None):
    """SPO loss of given decisions: ``sign * (c^T w - z*(c))``, one value per row.

    A feasible decision cannot do better than the optimum, so its regret is
    non-negative up to rounding. A regret in ``[-tol, 0)``, with ``tol =
    REGRET_RTOL * (|c|.|w| + |z*(c)|)`` (``|c|.|w|`` the dot product of the
    absolute values, which bounds the rounding of ``c^T w``), is reported as 0.
    The tolerance is relative, so scaling the costs by any positive factor
    gives the same result, scaled. A regret below ``-tol`` means that the
    decision is infeasible for the problem or that the optimal value is not
    optimal: it raises instead of being clipped.

    Parameters
    ----------
    C_true : array-like of shape (m, d)
    W_pred : array-like of shape (m, d)
        Decisions taken (feasible for ``problem``).
    problem : DecisionProblem
        Keyword-only, as in the other metrics (passing it, and ``z_true``,
        by position is deprecated: a FutureWarning; an error from 0.3).
    z_true : array-like of shape (m,), optional
        Precomputed optimal values of ``C_true``.

    Returns
    -------
    ndarray of shape (m,)
        Non-negative regrets.

    Raises
    ------
    ValueError
        If a decision is better than the optimum beyond the tolerance, or the
        inputs have the wrong shapes or are not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from spotree.metrics import decision_loss
    >>> from spotree.problems import FiniteDecisions
    >>> roads = FiniteDecisions(np.eye(2))
    >>> decision_loss([[3.0, 2.0], [1.0, 5.0]], [[1.0, 0.0], [1.0, 0.0]], problem=roads)
    array([1., 0.])
    """
    if args:
        if len(args) > 2 or problem is not None or (len(args) == 2 and z_true is not None):
            raise TypeError("decision_loss takes C_true and W_pred by position and problem, "
                            "z_true by keyword: decision_loss(C_true, W_pred, problem=p).")
        warnings.warn("Passing problem (and z_true) to decision_loss by position is "
                      "deprecated since spotree 0.2 and an error from 0.3; write "
                      "decision_loss(C_true, W_pred, problem=problem), as in the other "
                      "metrics.", FutureWarning, stacklevel=2)
        problem = args[0]
        if len(args) == 2:
            z_true = args[1]
    if problem is None:
        raise TypeError("decision_loss needs the keyword argument problem: "
                        "decision_loss(C_true, W_pred, problem=p).")
    C_true, W_pred = _check_pair(C_true, W_pred, problem, "W_pred")
    c_unit = 1.0
    if z_true is None:
        C_true, z_true, c_unit = _optima_in_units(problem, C_true)
    else:
        try:
            # (Not a plain cast: numpy kept the real part of a complex value
            # and turned durations into counts of their unit.)
            z_true = _as_real(z_true, "z_true")
        except (TypeError, ValueError) as exc:
            # numpy's own message ("could not convert string to float: 'a'")
            # names no argument.
            raise ValueError(f"z_true must be a finite array of shape ({C_true.shape[0]},) "
                             f"of numbers; got values that are not numbers ({exc}).") from None
        if z_true.shape != (C_true.shape[0],):
            raise ValueError(f"z_true must be a finite array of shape ({C_true.shape[0]},); "
                             f"got shape {z_true.shape}.")
        if not np.isfinite(z_true).all():
            # (It said "got shape (m,)", the right shape, of an inf optimal value.)
            i = int(np.flatnonzero(~np.isfinite(z_true))[0])
            raise ValueError(f"z_true must be a finite array of shape ({C_true.shape[0]},); "
                             f"z_true[{i}] is {float(z_true[i])!r}.")
    value = np.einsum("ij,ij->i", C_true, W_pred)
    regret = problem.sign * (value - z_true)
    # The tolerance (>= 0) only of the rows of negative regret, which are few:
    # |C_true| and |W_pred| of every row were two more arrays of their size.
    neg = np.flatnonzero(regret < 0)
    # (Each term scaled first: their sum overflowed for costs near the float range.)
    tol = (REGRET_RTOL * np.einsum("ij,ij->i", np.abs(C_true[neg]), np.abs(W_pred[neg]))
           + REGRET_RTOL * np.abs(z_true[neg]))
    bad = neg[regret[neg] < -tol]
    if bad.size:
        i = int(bad[0])
        tol_i = tol[np.searchsorted(neg, i)]
        better = "lower" if problem.sense == "min" else "higher"
        raise ValueError(
            f"The decision in row {i} of W_pred is better than the optimum of C_true[{i}] "
            f"for this {problem.sense!r} problem: c^T w = {value[i]:.10g} is {better} than "
            f"z*(c) = {z_true[i]:.10g} by more than rounding (regret {regret[i]:.3g}, "
            f"tolerance {tol_i:.3g}). The decision is not feasible for "
            f"{type(problem).__name__}, or the optimal value is wrong (z_true, or an oracle "
            f"that does not solve to optimality).")
    regret = np.maximum(regret, 0.0)
    if c_unit != 1.0:
        # Scaled back: inf only where a regret itself passes the float range.
        with np.errstate(over="ignore"):
            regret = regret * c_unit
    return regret


def _optima_in_units(problem, C):
    """``(C, z, unit)``: the costs in units of a power of two, their optimal values
    ``z*(C / unit)`` and the unit (1.0 unless the optimal values of ``C`` overflowed).

    Optimal values c^T w* of finite costs near the float range can sum past it
    (inf); on the costs in units of a power of two at their largest (exact) they
    do not, and every regret, and every ratio of regrets to optimal values, is
    the same in those units. Shared by every loss that solves for the optima.
    """
    # (Only the values kept: the decisions, held by a name, doubled the peak
    # of a score.)
    z = problem.solve(C)[1]
    if not np.isfinite(z).all():
        unit = float(cost_unit(C, axis=None))
        if unit > 1.0:
            C = C / unit
            return C, problem.solve(C)[1], unit
    return C, z, 1.0


def _predicted_decisions(C_true, C_pred, problem, ties):
    """The decisions charged for predictions ``C_pred`` under the tie rule."""
    if ties not in _TIES:
        raise ValueError(f"ties must be 'first' or 'worst'; got {ties!r}.")
    if ties == "first":
        return problem.solve(C_pred)[0]
    V = problem.vertices()
    if V is None:
        raise ValueError("ties='worst' needs a problem with a vertex list "
                         f"(vertices()); {type(problem).__name__} has none.")
    Gp = problem.sign * (C_pred @ V.T)
    best = Gp.min(axis=1, keepdims=True)
    # Ties up to rounding, relative to the row's magnitude (|c|.|v| bounds the
    # rounding of c^T v), so that scaling the costs keeps the same ties.
    tol = 1e-9 * (np.abs(C_pred) @ np.abs(V).T).max(axis=1, keepdims=True)
    tied = Gp <= best + tol
    Gt = problem.sign * (C_true @ V.T)
    return V[np.where(tied, Gt, -np.inf).argmax(axis=1)]


def spo_loss(C_true, C_pred, *, problem, sample_weight=None, ties="first"):
    """Per-sample SPO loss of predicted costs.

    ``l(c_hat, c) = c^T w*(c_hat) - z*(c)`` for a minimization problem and
    ``z*(c) - c^T w*(c_hat)`` for a maximization problem; always >= 0.

    Parameters
    ----------
    C_true : array-like of shape (m, d)
        Realized costs.
    C_pred : array-like of shape (m, d)
        Predicted costs.
    problem : DecisionProblem
    sample_weight : array-like of shape (m,), default=None
        If given, each loss is multiplied by its weight.
    ties : {"first", "worst"}, default="first"
        Which optimal decision of ``C_pred`` is charged when there are
        several. ``"first"`` charges the decision the problem's oracle returns
        (what a deployed model does). ``"worst"`` is the paper's definition,
        the worst decision among the tied optima; it needs ``vertices()``.
        The two differ only on ties, which have probability zero for
        continuous costs.

    Returns
    -------
    loss : ndarray of shape (m,)
    """
    C_true, C_pred = _check_pair(C_true, C_pred, problem)
    sw = check_sample_weight(sample_weight, C_true.shape[0], allow_all_zero=True)
    W_pred = _predicted_decisions(C_true, C_pred, problem, ties)
    if C_true.shape[0] == 0:
        return np.empty(0)
    return sw * decision_loss(C_true, W_pred, problem=problem)


def normalized_decision_loss(C_true, W_pred, *, problem, sample_weight=None):
    """Total SPO loss of given decisions divided by the total ``|z*(c)|``.

    Like :func:`normalized_spo_loss`, for decisions already taken (a
    fitted tree's stored leaf decisions, a forest's averaged-cost decisions).

    Parameters
    ----------
    C_true : array-like of shape (m, d)
    W_pred : array-like of shape (m, d)
    problem : DecisionProblem
    sample_weight : array-like of shape (m,), default=None

    Returns
    -------
    float
    """
    C_true, W_pred = _check_pair(C_true, W_pred, problem, "W_pred")
    sw = check_sample_weight(sample_weight, C_true.shape[0])
    if C_true.shape[0] == 0:
        raise ValueError("C_true is empty: the normalized SPO loss needs at least one row.")
    # (Where the optimal values overflowed, the score was an error about
    # z_true: the ratio is the same in the units.)
    C_true, z, _ = _optima_in_units(problem, C_true)
    loss = decision_loss(C_true, W_pred, problem=problem, z_true=z)
    # The sums in units of powers of two at the largest weight and the largest
    # term (exact, so the ratio is unchanged): weighted sums of values near the
    # float range overflowed to inf, and inf / inf came out as 0.0, a perfect
    # score (50 rows of costs, or weights, of 1e306).
    sw = sw / cost_unit(sw)
    unit = cost_unit(np.concatenate([np.abs(z), loss]))
    denom = np.dot(sw, np.abs(z) / unit)
    if denom == 0:
        raise ValueError("the optimal values z*(C_true) are all zero, so the normalized "
                         "SPO loss is undefined; use spo_loss instead. "
                         + zero_optima_hint(problem))
    return float(np.dot(sw, loss / unit) / denom)


def normalized_spo_loss(C_true, C_pred, *, problem, sample_weight=None, ties="first"):
    """Total SPO loss divided by the total optimal value ``sum |z*(c)|``.

    This is the paper's "normalized extra travel time": the extra cost of the
    decisions taken, as a fraction of the cost of the best decisions.

    Parameters
    ----------
    C_true, C_pred : array-like of shape (m, d)
    problem : DecisionProblem
    sample_weight : array-like of shape (m,), default=None
    ties : {"first", "worst"}, default="first"
        See :func:`spo_loss`.

    Returns
    -------
    float
    """
    C_true, C_pred = _check_pair(C_true, C_pred, problem)
    if C_true.shape[0] == 0:
        raise ValueError("C_true is empty: the normalized SPO loss needs at least one row.")
    W_pred = _predicted_decisions(C_true, C_pred, problem, ties)
    return normalized_decision_loss(C_true, W_pred, problem=problem,
                                    sample_weight=sample_weight)


def make_spo_scorer(problem, *, ties="first"):
    """A scikit-learn scorer: minus the normalized SPO loss (greater is better).

    Use it with ``GridSearchCV(..., scoring=make_spo_scorer(problem))``; the
    estimator's ``predict`` must return predicted costs. With
    ``sklearn.inspection.permutation_importance(model, X, C,
    scoring=make_spo_scorer(problem))`` it tells which features change the
    decisions: the rise of the normalized SPO loss when a column is shuffled.

    A spotree estimator (or a Pipeline ending in one, nested or not, or a
    fitted search such as ``GridSearchCV`` whose ``best_estimator_`` is one)
    fitted on a problem of the other sense than ``problem`` (a maximization
    problem against a minimization one) is refused with a ValueError when
    scored, as
    :func:`compare_decisions` refuses it: its predictions were made for the
    opposite objective. Inside a search such a failure gives NaN scores and
    scikit-learn's warning with this message. Other regressors carry no
    problem and are scored as given.

    Parameters
    ----------
    problem : DecisionProblem
    ties : {"first", "worst"}, default="first"

    Returns
    -------
    callable
        ``scorer(estimator, X, C, sample_weight=None)``, scikit-learn's
        ``make_scorer`` scorer behind the check of the sense; its
        ``set_score_request`` and ``get_metadata_routing`` are the wrapped
        scorer's (for metadata routing).
    """
    from sklearn.metrics import make_scorer

    # Checked now: inside a search, a failing scorer only gives NaN scores
    # and warnings.
    _check_problem(problem)
    if ties not in _TIES:
        raise ValueError(f"ties must be 'first' or 'worst'; got {ties!r}.")
    return _SenseCheckedScorer(make_scorer(normalized_spo_loss, greater_is_better=False,
                                           problem=problem, ties=ties), problem)


class _SenseCheckedScorer:
    """A scorer that first refuses an estimator fitted on a problem of the other sense.

    The score function that ``make_scorer`` wraps sees only the costs and the
    predictions, not the estimator; scikit-learn takes any callable
    ``scorer(estimator, X, y)`` as a scorer, so this one checks the estimator
    and calls the wrapped scorer (no scikit-learn private class subclassed).
    """

    def __init__(self, scorer, problem):
        self._scorer, self._problem = scorer, problem

    def __call__(self, estimator, X, y_true, sample_weight=None, **kwargs):
        p = _fitted_problem(estimator)
        if isinstance(p, DecisionProblem) and p.sense != self._problem.sense:
            raise ValueError(
                f"make_spo_scorer(problem) scores decisions on a {self._problem.sense!r} "
                f"problem ({type(self._problem).__name__}), but the estimator "
                f"({type(estimator).__name__}) was fitted on a {p.sense!r} one "
                f"({type(p).__name__}): its predictions were made for the opposite "
                "objective. Score it with a scorer of its own problem.")
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        return self._scorer(estimator, X, y_true, **kwargs)

    def set_score_request(self, **kwargs):
        self._scorer.set_score_request(**kwargs)
        return self

    def get_metadata_routing(self):
        return self._scorer.get_metadata_routing()

    def __repr__(self):
        return repr(self._scorer)


def _column_text(values, sig, sign=False):
    """The numbers of one table column as text, all alike so that they line up.

    Integers (counts) as integers. Otherwise the same number of decimals for
    all, enough for ``sig`` significant digits of the smallest nonzero one
    (the larger ones get more); scientific notation, ``sig`` digits each,
    where the magnitudes span 6 or more powers of ten, or that would take
    more than 12 decimals, or the largest has 13 or more integer digits.
    NaN as "nan".
    """
    v = np.asarray(values, dtype=float)
    plus = "+" if sign else ""
    finite = v[np.isfinite(v)]
    if np.all(finite == np.round(finite)) and np.all(np.abs(finite) < 2.0 ** 53):
        return [f"{x:{plus}.0f}" if np.isfinite(x) else f"{x:{plus}}" for x in v]
    mag = np.abs(finite[finite != 0])
    top, low = (int(np.floor(np.log10(m))) for m in (mag.max(), mag.min()))
    decimals = max(sig - 1 - low, 0)
    wide = top - low >= 6 or decimals > 12 or top >= 12
    spec = f"{plus}.{sig - 1}e" if wide else f"{plus}.{decimals}f"
    return [f"{x:{spec}}" for x in v]


class DecisionComparison:
    """Several models' decisions on the same rows, side by side: see :func:`compare_decisions`.

    Attributes
    ----------
    names : list of str
        The models, in the order given.
    reference : str
        The model the others are compared with.
    normalized_spo_loss : ndarray of shape (n_models,)
        Each model's normalized SPO loss on the rows.
    difference : ndarray of shape (n_models,)
        Each model's normalized SPO loss minus the reference's (0 for the
        reference): negative means better decisions than the reference's.
    standard_error : ndarray of shape (n_models,)
        The standard error of ``difference``, the rows of positive weight
        being independent draws, the weights fixed (0 for the reference; NaN
        when fewer than 2 rows have positive weight).
    n_better, n_worse : ndarray of shape (n_models,)
        The rows where the model's regret is strictly below (above) the
        reference's, beyond rounding; with ``sample_weight``, their total
        weight. Integers when every weight is (and their total is at most
        2**53, beyond which floats are not exact integers).
    regrets : ndarray of shape (n_models, n_samples)
        Each model's regret (SPO loss) on each row, before weighting.
    optimal_values : ndarray of shape (n_samples,)
        The optimal value ``z*(c)`` of each row's realized costs.
    sample_weight : ndarray of shape (n_samples,)
        The rows' weights (ones when none were given).
    """

    _COLUMNS = ("normalized_spo_loss", "difference", "standard_error", "n_better", "n_worse")

    def __init__(self, names, reference, normalized_spo_loss, difference, standard_error,
                 n_better, n_worse, regrets, optimal_values, sample_weight):
        self.names = list(names)
        self.reference = reference
        self.normalized_spo_loss = normalized_spo_loss
        self.difference = difference
        self.standard_error = standard_error
        self.n_better = n_better
        self.n_worse = n_worse
        self.regrets = regrets
        self.optimal_values = optimal_values
        self.sample_weight = sample_weight

    def to_dict(self):
        """The table as a dict of lists: ``"model"``, then one list per column.

        Returns
        -------
        dict of str -> list
        """
        out = {"model": list(self.names)}
        for col in self._COLUMNS:
            out[col] = getattr(self, col).tolist()
        return out

    def to_frame(self):
        """The table as a pandas DataFrame indexed by the models' names.

        Returns
        -------
        pandas.DataFrame
        """
        pd = import_optional("pandas", purpose="DecisionComparison.to_frame")
        return pd.DataFrame(self.to_dict()).set_index("model")

    def __str__(self):
        ref = self.names.index(self.reference)
        head = ["model", "normalized SPO loss", "difference", "std. error", "rows better",
                "rows worse"]
        others = [i for i in range(len(self.names)) if i != ref]
        loss = _column_text(self.normalized_spo_loss, 4)
        cols = [dict(zip(others, _column_text(getattr(self, col)[others], sig, sign)))
                for col, sig, sign in (("difference", 4, True), ("standard_error", 2, False),
                                       ("n_better", 4, False), ("n_worse", 4, False))]
        rows = []
        for i, name in enumerate(self.names):
            if i == ref:
                rows.append([name, loss[i], "(reference)", "", "", ""])
            else:
                rows.append([name, loss[i]] + [c[i] for c in cols])
        width = [max(len(r[j]) for r in [head] + rows) for j in range(len(head))]

        def line(cells):
            return ("| " + cells[0].ljust(width[0]) + " | "
                    + " | ".join(c.rjust(w) for c, w in zip(cells[1:], width[1:])) + " |")

        rule = "|" + "|".join("-" * (width[0] + 2) if j == 0 else "-" * (w + 1) + ":"
                              for j, w in enumerate(width)) + "|"
        return "\n".join([line(head), rule] + [line(r) for r in rows])

    def __repr__(self):
        return (f"<DecisionComparison of {len(self.names)} models on "
                f"{self.optimal_values.shape[0]} rows, reference {self.reference!r}>")


def _estimator_part(model):
    """The estimator that predicts: a Pipeline's last step, or ``model`` itself."""
    steps = getattr(model, "steps", None)
    if isinstance(steps, list) and steps and isinstance(steps[-1], tuple):
        return steps[-1][1]
    return model


def _fitted_problem(model):
    """The ``problem_`` of the spotree estimator inside ``model``, or None.

    Through Pipelines, nested ones too, and fitted searches (``GridSearchCV``
    and the like: their ``best_estimator_``). Only the last step was looked
    at, so a nested cross-validation scored a search fitted on a "max"
    problem with a "min" scorer without a word.
    """
    for _ in range(100):  # (a bound against a wrapper that wraps itself)
        part = _estimator_part(model)
        if part is model:
            part = getattr(model, "best_estimator_", None)
            if part is None:
                break
        model = part
    return getattr(model, "problem_", None)


def _call_naming(what, method, func, *args):
    """``func(*args)``; an exception it raises is raised again naming the model.

    With several models, "X has 2 features, but ... expecting 1" does not say
    whose predict failed. The new exception has the original's type where that
    type takes the message (a ValueError stays one), else RuntimeError; the
    original is its ``__cause__``.
    """
    try:
        return func(*args)
    except Exception as exc:
        msg = f"{what}.{method} raised {type(exc).__name__}: {exc}"
        try:
            new = type(exc)(msg)
        except Exception:  # a type that takes other arguments
            new = None
        if new is None or msg not in str(new):
            new = RuntimeError(msg)
        raise new from exc


def _model_decisions(name, model, X, n, problem):
    """Decisions of one model (or of its precomputed predicted costs) on the ``n`` rows."""
    what = f"models[{name!r}]"
    if callable(getattr(model, "predict", None)):
        if X is None:
            raise ValueError(f"X is None, but {what} ({type(model).__name__}) predicts from "
                             "features: pass X, or its predicted costs in place of the model.")
        final = _estimator_part(model)
        # A spotree estimator's own decisions (a tree's stored leaf decisions),
        # the ones its score charges; other regressors decide by solving their
        # predicted costs.
        if callable(getattr(final, "predict_decision", None)):
            Xt = (_call_naming(what, "transform", model[:-1].transform, X)
                  if final is not model else X)
            W = np.asarray(_call_naming(what, "predict_decision", final.predict_decision, Xt))
            out = f"the decisions of {what}"
        else:
            W = None
            C_pred = _call_naming(what, "predict", model.predict, X)
            out = f"the predicted costs of {what}"
    elif isinstance(model, (str, bytes)) or not (
            isinstance(model, (list, tuple, np.ndarray)) or hasattr(model, "__array__")):
        raise TypeError(f"{what} ({type(model).__name__}) has no predict method and is no "
                        "array: pass a fitted estimator that predicts costs, or its predicted "
                        f"costs (an array of shape ({n}, {problem.n_costs})).")
    else:
        W, C_pred, out = None, model, f"{what} (predicted costs)"
    arr = W if W is not None else C_pred
    if np.ndim(arr) == 2 and np.shape(arr)[0] != n:
        raise ValueError(f"{out} has {np.shape(arr)[0]} rows, but C has {n}: each model "
                         "predicts the rows of C.")
    arr = np.ascontiguousarray(check_costs(arr, n_costs=problem.n_costs, name=out,
                                           names=cost_names(problem)))
    return arr if W is not None else problem.solve(arr)[0]


def _find_problem(models):
    for model in models.values():
        for p in (_fitted_problem(model), getattr(_estimator_part(model), "problem", None)):
            if isinstance(p, DecisionProblem):
                return p
    raise TypeError("compare_decisions needs problem=...: none of the models is a spotree "
                    "estimator that carries its problem (problem_).")


def _check_same_sense(models, problem):
    """Refuse a spotree model fitted on a problem of the other sense than ``problem``.

    Its decisions were optimized for the opposite objective: scored on
    ``problem`` they give numbers that depend on which model came first.
    """
    for name, model in models.items():
        p = _fitted_problem(model)
        if isinstance(p, DecisionProblem) and p.sense != problem.sense:
            raise ValueError(
                f"models[{name!r}] was fitted on a {p.sense!r} problem ({type(p).__name__}), "
                f"but the decisions are scored on a {problem.sense!r} one "
                f"({type(problem).__name__}): its decisions were chosen for the opposite "
                "objective. Compare models of the same problem.")


def compare_decisions(models, X, C, *, problem=None, sample_weight=None, reference=None):
    """Compare the decisions of several models on the same rows, paired row by row.

    Answers "are this model's decisions better than that one's here, or is
    it noise?". Each model's decisions are charged their regret (SPO loss)
    on every row of ``C``; a model's normalized SPO loss is its total regret
    over ``sum |z*(c)|``, as in :func:`normalized_spo_loss`. All models share
    that denominator, so the difference of two models' normalized losses is
    one ratio, ``sum w_i (r_i - r0_i) / sum w_i |z*_i|``, of the paired
    differences of their regrets on the same rows ``r_i - r0_i``. Pairing
    removes what the rows have in common (some rows are hard for every
    model), so the standard error is usually much smaller than the two
    losses' spread would suggest.

    The standard error treats the rows as independent draws of
    ``(r_i - r0_i, |z*_i|)``, the weights fixed, and the difference as a
    ratio estimator (linearized, the delta method): with ``D`` the
    difference, ``e_i = (r_i - r0_i) - D |z*_i|`` and ``n`` the number of
    rows of positive weight,
    ``SE = sqrt(n / (n - 1) * sum w_i^2 e_i^2) / sum w_i |z*_i|``. It does not
    change when all the weights are multiplied by one factor (normalized
    weights are fine). With equal weights and equal ``|z*_i|`` it is the
    usual standard error (``ddof=1``) of the mean paired difference, divided
    by that ``|z*|``. It is NaN when fewer than 2 rows have positive weight.
    A difference within about two standard errors of 0 is not evidence that
    either model decides better on such rows.

    Parameters
    ----------
    models : dict of str -> estimator or array-like
        The models by name. A value is a fitted estimator with ``predict``
        (any scikit-learn regressor predicting the costs, a spotree
        estimator, or a Pipeline ending in either), or its predicted costs on
        the rows, an array of shape (n_samples, n_costs). A spotree
        estimator is charged its own decisions (``predict_decision``, as its
        ``score``); the others, the optimal decisions of their predicted
        costs (``problem.solve``).
    X : array-like of shape (n_samples, n_features) or None
        The features the estimators predict from (None when every model is
        given as predicted costs).
    C : array-like of shape (n_samples, n_costs)
        The realized costs.
    problem : DecisionProblem, default=None
        By default the problem of the first spotree estimator among the
        models (``problem_``).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the rows in the losses, the differences and ``n_better``
        / ``n_worse``: there a row of integer weight 2 counts as two copies
        of it. Not so in the standard errors, where each row of positive
        weight is one draw, its weight fixed: a duplicated row is two draws,
        a row of weight 2 one draw counted twice, so integer weights do not
        give the standard errors of duplicated rows.
    reference : str, default=None
        The model the others are compared with; by default the first.

    Returns
    -------
    DecisionComparison
        Prints as a table; ``to_frame()`` and ``to_dict()`` give it as a
        DataFrame or a dict of lists; per-row regrets in ``regrets``.

    Raises
    ------
    ValueError
        If a model's predictions (or decisions) have the wrong shape or are
        not finite (the message names the model), ``X`` and ``C`` differ in
        rows, ``C`` or ``sample_weight`` are not valid, the optimal values
        are all zero (the normalized loss is undefined), or a spotree model
        was fitted on a problem of the other sense (``"min"``/``"max"``).
    TypeError
        If a model has no ``predict`` and is no array, or no problem is given
        or carried by a model.
    Exception
        An exception raised inside a model's own ``predict`` (or
        ``predict_decision``, or a Pipeline's ``transform``) is raised again
        as ``models['name'].predict raised ValueError: ...``, of the same type
        where that type takes a message (else ``RuntimeError``), with the
        original as its ``__cause__``.

    See Also
    --------
    normalized_spo_loss : one model's normalized SPO loss.
    spotree.plotting.plot_decision_comparison : the per-row regrets, drawn.

    Examples
    --------
    Two roads, three rows. Model ``"a"`` picks the cheaper road on every row;
    ``"b"`` is wrong on the second (regret ``5 - 1 = 4``), where the optimal
    values add up to ``2 + 1 + 4 = 7``:

    >>> import numpy as np
    >>> from spotree.metrics import compare_decisions
    >>> from spotree.problems import FiniteDecisions
    >>> roads = FiniteDecisions(np.eye(2))
    >>> C = np.array([[3.0, 2.0], [1.0, 5.0], [4.0, 6.0]])
    >>> a = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])  # predicted costs
    >>> b = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> result = compare_decisions({"a": a, "b": b}, None, C, problem=roads)
    >>> print(result)
    | model | normalized SPO loss |  difference | std. error | rows better | rows worse |
    |-------|--------------------:|------------:|-----------:|------------:|-----------:|
    | a     |              0.0000 | (reference) |            |             |            |
    | b     |              0.5714 |     +0.5714 |       0.75 |           0 |          1 |
    >>> result.to_frame()["standard_error"].round(4).tolist()
    [0.0, 0.7482]
    """
    if not isinstance(models, dict) or not models:
        raise TypeError("models must be a non-empty dict of name -> fitted estimator (or "
                        f"predicted costs); got {type(models).__name__}"
                        f"{' (empty)' if isinstance(models, dict) else ''}.")
    bad = [k for k in models if not isinstance(k, str)]
    if bad:
        raise TypeError(f"models' keys must be str names; got {bad[0]!r}.")
    names = list(models)
    if reference is None:
        reference = names[0]
    elif reference not in models:
        raise ValueError(f"reference={reference!r} is not one of the models: "
                         f"{', '.join(map(repr, names))}.")
    problem = _find_problem(models) if problem is None else _check_problem(problem)
    _check_same_sense(models, problem)
    C = np.ascontiguousarray(check_costs(C, n_costs=problem.n_costs, name="C",
                                         names=cost_names(problem)))
    n = C.shape[0]
    if n == 0:
        raise ValueError("C is empty: comparing decisions needs at least one row.")
    if X is not None:
        n_x = X.shape[0] if hasattr(X, "shape") and len(X.shape) else len(X)
        check_same_rows(n_x, n, ("X", "C"))
    sw = check_sample_weight(sample_weight, n)
    # The regrets in the units (the ratios unchanged), scaled back at the end.
    C, z, c_unit = _optima_in_units(problem, C)
    W = {}
    R = np.empty((len(names), n))
    for k, name in enumerate(names):
        W[name] = _model_decisions(name, models[name], X, n, problem)
        try:
            R[k] = decision_loss(C, W[name], problem=problem, z_true=z)
        except ValueError as exc:
            raise ValueError(f"models[{name!r}]: {exc}") from None
    a = np.abs(z)
    # Powers of two, so the ratios are those of normalized_decision_loss:
    # the sums neither overflow nor lose their last bits.
    p = sw / cost_unit(sw)
    unit = cost_unit(np.concatenate([a, R.ravel()]))
    denom = np.dot(p, a / unit)
    if denom == 0:
        raise ValueError("the optimal values z*(C) are all zero (on the rows of positive "
                         "weight), so the normalized SPO loss is undefined. "
                         + zero_optima_hint(problem))
    losses = (R / unit) @ p / denom
    ref = names.index(reference)
    D = (R - R[ref]) / unit
    diff = D @ p / denom
    E = D - diff[:, None] * (a / unit)
    n_pos = np.count_nonzero(sw)
    if n_pos > 1:
        # sqrt(n/(n-1) sum w_i^2 e_i^2) / sum w_i |z*_i|: the linearized ratio
        # estimator, invariant to rescaling the weights (as _significant_gain
        # in boost.py), with n/(n-1) so that equal weights give the ddof=1 value.
        se = np.sqrt(n_pos / (n_pos - 1) * ((E * E) @ (p * p))) / denom
    else:
        se = np.full(len(names), np.nan)
    se[ref] = 0.0
    # Strictly better or worse beyond rounding: the tolerance of decision_loss,
    # for the larger of the two decisions' values.
    tol = np.stack([REGRET_RTOL * (np.einsum("ij,ij->i", np.abs(C), np.abs(W[name])) + a)
                    for name in names])
    tol = np.maximum(tol, tol[ref])
    better = (R < R[ref] - tol) @ sw
    worse = (R > R[ref] + tol) @ sw
    # Counts as ints only where the float totals are exact integers: integral
    # weights of 1e20 (every float above 2^53 is whole) overflowed int64, and
    # the counts came out as -9223372036854775808.
    if np.all(sw == np.round(sw)) and sw.sum() <= 2.0 ** 53:
        better, worse = better.astype(np.int64), worse.astype(np.int64)
    if c_unit != 1.0:
        with np.errstate(over="ignore"):  # (a regret or value past the float range is inf)
            R, z = R * c_unit, z * c_unit
    return DecisionComparison(names, reference, losses, diff, se, better, worse, R, z, sw)


def _spo_plus(problem, C, C_hat, W_true):
    """Per-row SPO+ loss and subgradient of checked arrays (one batched oracle call).

    The fitting loops of :class:`~spotree.SPOPlusLinear` and
    :class:`~spotree.SPOBoost` call it once per minibatch or round, without
    the checks of the public functions.
    """
    W2, _ = problem.solve(2.0 * C_hat - C)
    D = W_true - W2
    s = problem.sign
    loss = s * np.einsum("ij,ij->i", 2.0 * C_hat - C, D)
    # Exact arithmetic gives loss >= 0 (W2 is optimal for 2 c_hat - c).
    return np.maximum(loss, 0.0), (2.0 * s) * D


def _check_spo_plus(C_true, C_pred, problem, W_true):
    C_true, C_pred = _check_pair(C_true, C_pred, problem)
    if W_true is None:
        W_true = problem.solve(C_true)[0]
    else:
        W_true = np.ascontiguousarray(check_costs(W_true, n_costs=problem.n_costs,
                                                   name="W_true", names=cost_names(problem)))
        check_same_rows(C_true, W_true, ("C_true", "W_true"))
    return C_true, C_pred, W_true


def spo_plus_loss(C_true, C_pred, *, problem, sample_weight=None, W_true=None):
    """Per-sample SPO+ loss of predicted costs (the convex surrogate of the SPO loss).

    ``l(c_hat, c) = sign * (2 c_hat - c)^T (w*(c) - w*(2 c_hat - c))``, with
    ``sign`` -1 for a maximization problem: the surrogate of Elmachtoub and
    Grigas, convex in ``c_hat``, always ``>= 0`` and ``>=`` the SPO loss
    (:func:`spo_loss`), and 0 when ``c_hat == c``. One batched oracle call at
    ``2 c_hat - c`` (and one at ``c`` unless ``W_true`` is given).

    Parameters
    ----------
    C_true : array-like of shape (m, d)
        Realized costs.
    C_pred : array-like of shape (m, d)
        Predicted costs.
    problem : DecisionProblem
    sample_weight : array-like of shape (m,), default=None
        If given, each loss is multiplied by its weight.
    W_true : array-like of shape (m, d), default=None
        Optimal decisions of ``C_true`` when already known (saves one oracle
        call).

    Returns
    -------
    ndarray of shape (m,)

    See Also
    --------
    spo_plus_subgradient : a subgradient of this loss in ``C_pred``.
    spotree.SPOPlusLinear : a linear model trained on it.

    Examples
    --------
    Two roads; the first is cheaper (cost 1 against 3), but the prediction
    ranks it second. ``w*(c)`` is road 0, ``2 c_hat - c = (3, -1)`` is best
    at road 1, so the loss is ``(3, -1) . ((1, 0) - (0, 1)) = 4``, above the
    SPO loss of 2:

    >>> import numpy as np
    >>> from spotree.metrics import spo_loss, spo_plus_loss
    >>> from spotree.problems import FiniteDecisions
    >>> roads = FiniteDecisions(np.eye(2))
    >>> spo_plus_loss([[1.0, 3.0]], [[2.0, 1.0]], problem=roads)
    array([4.])
    >>> spo_loss([[1.0, 3.0]], [[2.0, 1.0]], problem=roads)
    array([2.])
    """
    C_true, C_pred, W_true = _check_spo_plus(C_true, C_pred, problem, W_true)
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
    C_true : array-like of shape (m, d)
        Realized costs.
    C_pred : array-like of shape (m, d)
        Predicted costs.
    problem : DecisionProblem
    W_true : array-like of shape (m, d), default=None
        Optimal decisions of ``C_true`` when already known.

    Returns
    -------
    ndarray of shape (m, d)

    See Also
    --------
    spo_plus_loss : the loss.

    Examples
    --------
    The two roads of :func:`spo_plus_loss`: ``2 * ((1, 0) - (0, 1))``. Lowering
    the predicted cost of road 0 (the better one) lowers the loss.

    >>> import numpy as np
    >>> from spotree.metrics import spo_plus_subgradient
    >>> from spotree.problems import FiniteDecisions
    >>> roads = FiniteDecisions(np.eye(2))
    >>> spo_plus_subgradient([[1.0, 3.0]], [[2.0, 1.0]], problem=roads)
    array([[ 2., -2.]])
    """
    C_true, C_pred, W_true = _check_spo_plus(C_true, C_pred, problem, W_true)
    if C_true.shape[0] == 0:
        return np.empty((0, problem.n_costs))
    return _spo_plus(problem, C_true, C_pred, W_true)[1]
