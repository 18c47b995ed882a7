"""Multi-output ridge regression of the costs, each cost's penalty by leave-one-out.

Shared by SPOBoost's ridge and index starts and SPOForest's ridge features.
"""

from __future__ import annotations

import numpy as np

# Penalties tried by leave-one-out (GCV), relative to the total weight, on
# features standardized to unit weighted variance.
_RIDGE_ALPHAS = np.logspace(-6, 2, 17)
# RidgeFeatures with more costs than columns allowed: the leading principal
# components of the fitted costs that together carry this share of their
# variance (on a 93-edge road network, 10 components instead of 64: a quarter
# of the extra split time, the same decisions on held-out rows).
_COMPONENT_SHARE = 0.99


def _unoverflowed_weights(sw):
    """``sw`` in units of an even power of two near its largest entry where its
    total (times the largest penalty) would pass the float range, or where the
    largest is below 2^-500; else ``sw``.

    Exact, the square roots too; every use of the weights here (means,
    penalties relative to the total) is unchanged by a common factor.
    """
    top = float(sw.max(initial=0.0))
    with np.errstate(over="ignore"):
        near = sw.sum() > np.finfo(np.float64).max / _RIDGE_ALPHAS[-1]
    # (Weights of 5e-324: their products with the squared features vanished
    # and the ridge map came out another, the forest's predictions off by 2.)
    if not (near or 0.0 < top < 2.0 ** -500):
        return sw
    # Weights near the float range (a total of 2^1016): the largest penalty
    # overflowed to inf. At most 2^1022: 2^1024, the unit of a weight of
    # 1e308, is not a float (every weight divided by inf was 0).
    e = int(np.frexp(top)[1])
    return sw / np.ldexp(1.0, min(e - e % 2, 1022))


def _standardization(X, sw):
    """Weighted mean and standard deviation of every column (1 where constant)."""
    # In units of a power of two near each column's largest magnitude: exact,
    # and the squares of features of 1e200 (or 1e-200) neither overflow nor
    # vanish, so rescaling a feature changes nothing at any scale.
    unit = cost_unit(X)
    X = X / unit
    mean = np.average(X, axis=0, weights=sw)
    scale = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=sw))
    # A constant column's deviation is rounding noise: leave it unscaled (it
    # is all zero once centred, so it gets a zero coefficient).
    constant = scale <= 1e-12 * np.abs(mean)
    return mean * unit, np.where(constant, 1.0, scale * unit)


def _standardized(X, mean, scale):
    """``(X - mean) / scale``, the difference taken in units of a power of two
    near each column's largest magnitude: exact (the same numbers), and
    features of +-1.8e308 no longer overflow it (inf, then NaN coefficients)."""
    unit = cost_unit(X)
    return (X / unit - mean / unit) / (scale / unit)


def _loo_ridge(Z, Y, lev0, alphas):
    """Ridge of every column of ``Y`` on ``Z``, each with the penalty of least leave-one-out error.

    ``Z`` and ``Y`` are already weighted (rows times ``sqrt(w)``) and free of
    the unpenalized part of the model (residuals of its weighted projection),
    whose leverages are ``lev0``. The leave-one-out residual of a row is its
    residual over one minus its leverage, exactly, from one SVD (as generalized
    cross-validation computes it). Returns the coefficients (one column per
    column of ``Y``) and the penalties chosen.
    """
    U, S, Vt = np.linalg.svd(Z, full_matrices=False)
    UtY = U.T @ Y
    U2 = U * U
    S2 = S * S
    best_err = np.full(Y.shape[1], np.inf)
    best_alpha = np.full(Y.shape[1], alphas[-1])
    for a in alphas:
        f = S2 / (S2 + a)
        resid = Y - U @ (f[:, None] * UtY)
        lev = U2 @ f + lev0
        with np.errstate(divide="ignore", invalid="ignore"):
            err = np.sum((resid / (1.0 - lev)[:, None]) ** 2, axis=0)
        err = np.where(np.isfinite(err), err, np.inf)
        better = err < best_err
        best_err[better], best_alpha[better] = err[better], a
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = np.where(S[:, None] > 0, S[:, None] / (S2[:, None] + best_alpha[None, :]), 0.0)
    return Vt.T @ (shrink * UtY), best_alpha


def _ridge_gcv(X, C, sw):
    """Multi-output ridge on standardized features, each cost's penalty by leave-one-out.

    Minimizes ``sum_i w_i (c_ij - b_j - a_j . z_i)^2 + alpha_j ||a_j||^2``
    on ``z = (x - mean) / scale`` (weighted mean and deviation), for every
    ``alpha_j / sum(w)`` in ``_RIDGE_ALPHAS``, keeping for each cost the one
    with the lowest leave-one-out error. Rescaling a feature by
    ``x -> s x + t`` gives the same predictions. Returns
    ``(coef, intercept, alpha)`` in the original units.
    """
    pos = sw > 0
    X, C, sw = X[pos], C[pos], _unoverflowed_weights(sw[pos])
    mean, scale = _standardization(X, sw)
    # Each cost in units of a power of two near its largest magnitude: exact
    # (the same penalties and coefficients, times the unit), and the squared
    # leave-one-out residuals neither overflow (costs of 1e160) nor vanish
    # (1e-170) where the costs' own squares would.
    unit = cost_unit(C)
    C = C / unit
    c_mean = np.average(C, axis=0, weights=sw)
    r = np.sqrt(sw)[:, None]
    total = sw.sum()
    coef_z, alpha = _loo_ridge(r * _standardized(X, mean, scale), r * (C - c_mean), sw / total,
                               _RIDGE_ALPHAS * total)
    coef = coef_z.T / scale * unit[:, None]
    return coef, (c_mean - coef_z.T / scale @ mean) * unit, alpha / total


def cost_unit(C, axis=0):
    """The power of two at or just above the largest magnitude of ``C`` along ``axis`` (1 where 0).

    Dividing by it is exact and brings the magnitudes into [0, 1); from
    2**1023 on (the power above is not a float), it is 2**1023 and the
    magnitudes come into [0, 2).
    """
    _, e = np.frexp(np.max(np.abs(C), axis=axis, initial=0.0))
    # (2**1024 overflowed to inf: every value divided by it was 0.)
    return np.ldexp(1.0, np.minimum(e, 1023))


class RidgeFeatures:
    """Fitted linear map from the features to ridge-predicted costs, extra split columns.

    A forest grown on ``[X, F(X)]`` can split on each cost's ridge prediction:
    an oblique split along the direction that predicts that cost. Only
    numeric columns enter (categorical ones are left to the trees); a missing
    value is replaced by its column's weighted training mean. With more costs
    than ``max_columns``, the columns are the leading principal components of
    the predicted costs instead (a linear map of the same kind): as many as
    carry 99% of their variance, at most ``max_columns``.

    Attributes
    ----------
    columns : ndarray of int
        The feature columns the map reads.
    fill : ndarray
        Value put in place of a missing value, per read column.
    coef : ndarray of shape (n_out, n_read)
        Output ``j`` is ``coef[j] . x[columns] + intercept[j]``.
    intercept : ndarray of shape (n_out,)
    fold : ndarray of shape (n_out, n_read)
        Share of output ``j``'s feature importance given to each read column
        (rows sum to 1): its standardized coefficients' magnitudes.
    kind : {"cost", "component"}
        Outputs are predicted costs or principal components of them.
    """

    def __init__(self, columns, fill, coef, intercept, fold, kind):
        self.columns = np.asarray(columns, dtype=np.intp)
        self.fill = np.asarray(fill, dtype=np.float64)
        self.coef = np.asarray(coef, dtype=np.float64)
        self.intercept = np.asarray(intercept, dtype=np.float64)
        self.fold = np.asarray(fold, dtype=np.float64)
        self.kind = kind

    @property
    def n_out(self):
        return self.coef.shape[0]

    @classmethod
    def fit(cls, X, C, sw, numeric, max_columns):
        """The map fitted on validated ``X`` (NaN = missing), ``C`` and weights ``sw``.

        ``numeric``: boolean mask of the columns to read. Returns None when
        there is none, or no row of positive weight.
        """
        columns = np.flatnonzero(numeric)
        pos = sw > 0
        if columns.size == 0 or not pos.any():
            return None
        # (A total of weights beyond the float range made the fill NaN.)
        sw = _unoverflowed_weights(sw)
        Xn = X[:, columns]
        present = ~np.isnan(Xn[pos])
        w = sw[pos][:, None] * present
        total = w.sum(axis=0)
        # A column with no value among the weighted rows is filled with 0. (The
        # sums in units of a power of two, exact: features near the float range
        # overflowed them.)
        unit = cost_unit(np.where(present, Xn[pos], 0.0))
        fill = np.divide((np.where(present, Xn[pos], 0.0) / unit * w).sum(axis=0), total,
                         out=np.zeros(columns.size), where=total > 0) * unit
        Xf = np.where(np.isnan(Xn), fill, Xn)
        coef, intercept, _ = _ridge_gcv(Xf, C, sw)
        kind = "cost"
        if coef.shape[0] > max_columns:
            # Principal directions of the fitted costs, weighted as the rows.
            # The centred fit is Z coef^T with Z = QR (n x p): its directions
            # are those of R coef^T, without an n x n_costs SVD, and there are
            # at most rank(Z) of them (the others would be rounding noise).
            Z = Xf[pos] - np.average(Xf[pos], axis=0, weights=sw[pos])
            R = np.linalg.qr(np.sqrt(sw[pos])[:, None] * Z, mode="r")
            # (In units of a power of two near its largest entry: exact, and
            # the variances of costs of 1e160 do not overflow.)
            M = R @ coef.T
            _, sv, Vt = np.linalg.svd(M / cost_unit(M, axis=None), full_matrices=False)
            # The fewest components that carry _COMPONENT_SHARE of the fitted
            # costs' variance (each extra column costs split time).
            var = sv * sv
            total = var.sum()
            keep = 1
            if total > 0:
                keep = int(np.searchsorted(np.cumsum(var), _COMPONENT_SHARE * total)) + 1
            keep = min(max_columns, keep)
            V = Vt[:keep]
            coef, intercept, kind = V @ coef, V @ intercept, "component"
        _, scale = _standardization(Xf[pos], sw[pos])
        mag = np.abs(coef * scale)
        s = mag.sum(axis=1, keepdims=True)
        fold = np.divide(mag, s, out=np.full_like(mag, 1.0 / columns.size), where=s > 0)
        return cls(columns, fill, coef, intercept, fold, kind)

    def transform(self, X):
        """The extra columns of ``X``: (n_samples, n_out)."""
        Xn = X[:, self.columns]
        Xn = np.where(np.isnan(Xn), self.fill, Xn)
        return Xn @ self.coef.T + self.intercept

    def augment(self, X):
        """``X`` with the extra columns appended."""
        return np.hstack([X, self.transform(X)])

    def fold_importances(self, imp, p):
        """Importances over ``p`` features from importances over the ``p + n_out`` columns."""
        out = np.array(imp[:p], dtype=np.float64)
        np.add.at(out, self.columns, imp[p:] @ self.fold)
        return out

    def names(self):
        """Names of the extra columns."""
        if self.kind == "cost":
            return [f"ridge_cost[{j}]" for j in range(self.n_out)]
        return [f"ridge_component[{j}]" for j in range(self.n_out)]

    def to_dict(self):
        return {"kind": self.kind, "columns": self.columns.tolist(),
                "fill": self.fill.tolist(), "coef": self.coef.tolist(),
                "intercept": self.intercept.tolist(), "fold": self.fold.tolist()}
