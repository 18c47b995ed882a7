"""Multi-output ridge regression of the costs, each cost's penalty by leave-one-out.

Shared by SPOBoost's ridge and index starts and SPOForest's ridge features.
"""

from __future__ import annotations

import numpy as np

# Penalties tried by leave-one-out (GCV), relative to the total weight, on
# features standardized to unit weighted variance.
_RIDGE_ALPHAS = np.logspace(-6, 2, 17)


def _standardization(X, sw):
    """Weighted mean and standard deviation of every column (1 where constant)."""
    mean = np.average(X, axis=0, weights=sw)
    scale = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=sw))
    # A constant column's deviation is rounding noise: leave it unscaled (it
    # is all zero once centred, so it gets a zero coefficient).
    constant = scale <= 1e-12 * np.abs(mean)
    return mean, np.where(constant, 1.0, scale)


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
    X, C, sw = X[pos], C[pos], sw[pos]
    mean, scale = _standardization(X, sw)
    c_mean = np.average(C, axis=0, weights=sw)
    r = np.sqrt(sw)[:, None]
    total = sw.sum()
    coef_z, alpha = _loo_ridge(r * ((X - mean) / scale), r * (C - c_mean), sw / total,
                               _RIDGE_ALPHAS * total)
    coef = coef_z.T / scale
    return coef, c_mean - coef @ mean, alpha / total

