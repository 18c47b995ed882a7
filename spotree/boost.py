"""SPOBoost: gradient boosting of regression trees on the SPO+ loss.

Each round computes, for every training row, a subgradient of the SPO+
loss at the current predicted costs (one batched oracle call), fits a
multi-output regression tree to the negative subgradients with spotree's own
tree builder, sets every leaf's value by a line search on the SPO+ loss of
the leaf's rows, and adds the tree shrunk by ``learning_rate``. Boosting
stops early when the decisions of the model stop improving on a held-out
validation part, judged by the normalized SPO loss (the regret of the
decisions), not by the surrogate.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np
from sklearn.base import BaseEstimator, MultiOutputMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, has_fit_parameter
from threadpoolctl import threadpool_info, threadpool_limits

from . import _schema
from ._categories import one_hot_names, one_hot_sum, one_hot_width
from ._params import RANDOM_STATE, InstanceOf, Interval, Options, validate_params
from ._ridge import _ridge_gcv, _standardization, _standardized, cost_unit
from ._text import count_noun
from ._validation import (check_costs, check_features, check_fit_inputs, check_same_rows,
                          check_sample_weight, cost_names, restored_on_failure)
from .forest import _tree_importances
from .linear_model import SPOPlusLinear
from .metrics import _spo_plus, zero_optima_hint
from .problems import FiniteDecisions, resolve_problem
from .problems._base import solver_session
from .problems._compiled import solve_threads
from .tree import SPOTree, register_model
from .tree._classes import CATEGORICAL_FEATURES, SPOScoreMixin
from .tree._fit_data import FitData
from .tree._tree import TREE_LEAF

__all__ = ["SPOBoost"]

_MAX_SEED = np.iinfo(np.int32).max
# Line search: stop when the best step found is within this fraction of the
# total decrease of the leaf's SPO+ loss from the proven lower bound.
_LS_RTOL = 5e-2
_LS_MAX_EXPAND = 12
# A change of a leaf's loss or slope counts only beyond this share of the sum
# of its terms' magnitudes (rounding noise; see _leaf_line_search).
_LS_NOISE = 1e-12
_LS_MAX_REFINE = 12


# Index start: knots of each cost's natural cubic spline link, evenly spaced
# over the range of the linear index on the training rows; a light ridge
# penalty, relative to the mean eigenvalue of the basis' Gram matrix, that
# only keeps the system well posed; the bends (not the linear term) smoothed
# by one penalty among _LINK_LAMBDAS (relative to the mean diagonal of each
# cost's Gram block) for all the costs, the one of least total GCV, so that
# a straight link, the ridge start, is the limit (penalizing the linear term
# too smoothed the steep tail that decides and decided worse; a penalty per
# cost bent straight links by chance: see the class Notes). Both penalties
# are on the coefficients of a truncated power basis anchored at one end of
# the index, where a bend costs most; with _LINK_BOTH_ENDS the basis anchored
# at the low end and the one anchored at the high end (that of the negated
# index) are both tried, and the end of least total GCV is kept, so that the
# fit of -C is the negated fit of C (False: the low end only, as before).
_LINK_KNOTS = 9
_LINK_PENALTY = 1e-4
_LINK_LAMBDAS = np.logspace(-8, 2, 11)
_LINK_BOTH_ENDS = True
# Index start, second pass: the variance of each cost modelled as
# proportional to |fitted cost|^k, k in [0, _VAR_POWER_MAX] fitted on the
# residuals, every fitted magnitude floored at _VAR_FLOOR times its cost's
# mean (so that near-zero predictions do not get huge weights); 0.1 decided
# worse at 100 rows (see the class Notes).
_VAR_POWER_MAX = 2.0
_VAR_FLOOR = 0.25
# init="auto": K-fold cross-validated regret over all the rows of these
# starts; the first is kept unless a later one beats it by more than _KEEP_Z
# standard errors (the index start nests ridge, whose straight link it
# reaches by smoothing). The SPO+ start is left out: its noisy fits won
# folds by chance and decided worse (see the class Notes).
_CV_FOLDS = 5
_CV_STARTS = ("index", "ridge")
# Early stopping keeps the best round's trees only when its validation regret
# beats the start's by more than this many standard errors (paired over the
# validation rows); otherwise the start alone (see the class Notes).
_KEEP_Z = 2.0
# Fits whose rows times columns squared are at most this run BLAS on one
# thread (see SPOBoost.fit).
_BLAS_ONE_THREAD_WORK = 1 << 27
# ... and fit the second pass's per-cost ridges on threads when each one's
# Gram matrix (rows times columns squared) is at least this large.
_THREADED_GRAM_WORK = 1 << 20
# init="auto" fits the folds on those threads (False: one after another);
# only starts that draw no random numbers, so that the result is the same.
_CV_THREADS = True
_THREAD_SAFE_STARTS = {"mean", "linear", "ridge", "index"}
# Costs whose largest magnitude lies outside [2^-_UNIT_RANGE, 2^_UNIT_RANGE]
# are fitted in units of a power of two near it (see SPOBoost's Notes, "Scale"):
# the line search's first step is 1 in cost units, and the start's fits square
# the costs. Within, the costs as given (the benchmarks' are: at most ~2^12).
_UNIT_RANGE = 16


def _spline_basis(U, knots):
    """Natural cubic spline bases of every column of ``U`` (without the constant).

    ``U`` is (m, d) and ``knots`` (d, K): column ``j`` of ``U`` gets the basis
    of ``knots[j]``, linear beyond the end knots. Returns (d, m, K - 1): for
    each cost the columns ``v, N_1(v), ..., N_{K-2}(v)`` with ``v`` the index
    mapped so that the knots span [0, 1] and ``N_k = d_k - d_{K-1}``,
    ``d_k(v) = ((v - t_k)_+^3 - (v - t_K)_+^3) / (t_K - t_k)`` (the truncated
    power form of Hastie, Tibshirani and Friedman, eq. 5.4-5.5).
    """
    lo, span = knots[:, :1], knots[:, -1:] - knots[:, :1]
    V = (U.T - lo) / span
    T = (knots - lo) / span
    K = T.shape[1]
    P = V[:, :, None] - T[:, None, :]
    np.maximum(P, 0.0, out=P)
    P3 = P * P
    P3 *= P  # (a power of 3 is a slow general pow)
    P3[:, :, :K - 1] -= P3[:, :, K - 1:]
    P3[:, :, :K - 1] /= (T[:, K - 1:] - T[:, :K - 1])[:, None, :]
    out = np.empty(P3.shape[:2] + (K - 1,))
    out[:, :, 0] = V
    np.subtract(P3[:, :, :K - 2], P3[:, :, K - 2:K - 1], out=out[:, :, 1:])
    return out


# The links are fitted and applied over blocks of costs whose spline bases
# hold about this many numbers (many costs times many rows would not fit).
_LINK_BLOCK = 1 << 21


def _reflection(knots):
    """Change of basis to the link's basis anchored at the high end of the index.

    Returns ``X`` (d, K - 1, K - 1) such that ``_spline_basis(U, knots)[j] @
    X[j]`` equals ``_spline_basis(-U, -knots[:, ::-1])[j]`` up to a constant:
    the natural cubic splines of the two bases are the same functions (the
    knots are the same), so a link of coefficients ``gamma`` in the second
    has ``X @ gamma`` in the first. Found by least squares on 2K - 1 points
    spread over the knots, each basis centred over them.
    """
    K = knots.shape[1]
    Z = np.linspace(0.0, 1.0, 2 * K - 1)
    Uz = knots[:, 0] + Z[:, None] * (knots[:, -1] - knots[:, 0])
    L = _spline_basis(Uz, knots)
    H = _spline_basis(-Uz, -knots[:, ::-1])
    L -= L.mean(axis=1, keepdims=True)
    H -= H.mean(axis=1, keepdims=True)
    Lt = L.transpose(0, 2, 1)
    return np.linalg.solve(Lt @ L, Lt @ H)


def _cost_blocks(m, d):
    step = max(1, _LINK_BLOCK // max(m * _LINK_KNOTS, 1))
    return [slice(s, min(s + step, d)) for s in range(0, d, step)]


def _fit_links(U, C, sw):
    """Each cost's natural cubic spline link ``c_j ~ g_j(u_j)`` by weighted least squares.

    ``sw`` is (m,), or (m, d) to weight each cost's rows differently. A light
    ridge penalty (``_LINK_PENALTY`` times the mean eigenvalue of the Gram
    matrix of the centred basis) only keeps the system well posed; the
    bends are smoothed by one penalty shared by all the costs, the one of
    least total generalized cross-validation error (:func:`_link_gcv`: the
    sum over the costs of each one's GCV; not when ``_LINK_LAMBDAS`` is
    None). Both penalties are on the coefficients of the basis anchored at
    the low end of the index or of the one anchored at its high end (see
    :func:`_reflection`), whichever end has the least total GCV, for all the
    costs (the low end only without ``_LINK_BOTH_ENDS``). Returns ``knots``
    (d, K), ``beta`` (d, K - 1) and ``c0`` (d,), with
    ``g_j(u) = c0_j + _spline_basis(u, knots)[j] @ beta_j``.
    """
    W = np.broadcast_to(sw[:, None] if sw.ndim == 1 else sw, C.shape)
    d = C.shape[1]
    n_lam = (1 if _LINK_LAMBDAS is None else len(_LINK_LAMBDAS)) * (1 + _LINK_BOTH_ENDS)
    knots = np.empty((d, _LINK_KNOTS))
    betas = np.empty((d, n_lam, _LINK_KNOTS - 1))
    gcv = np.empty((d, n_lam))
    mu = np.empty((d, _LINK_KNOTS - 1))
    c0 = np.empty(d)
    # All the costs of a block at once: per cost, the work is small and
    # Python's overhead dominated.
    for b in _cost_blocks(U.shape[0], d):
        knots[b], betas[b], gcv[b], mu[b], c0[b] = _fit_link_block(U[:, b], C[:, b], W[:, b])
    # One smoothing penalty (and end) for all the costs: chosen per cost, the
    # noise of each cost's GCV curve bent straight links by chance (see the
    # class Notes). Costs without a usable GCV curve (a constant index, singular
    # systems: least squares, see _link_gcv) take no part.
    scored = np.isfinite(gcv).any(axis=1)
    total = np.sum(np.where(np.isfinite(gcv[scored]), gcv[scored], np.inf), axis=0)
    if scored.any() and np.isfinite(total).any():
        beta = betas[:, int(np.argmin(total))]
        beta[~scored] = betas[~scored, 0]
    else:
        beta = betas[:, 0]
    return knots, beta, c0 - np.einsum("jk,jk->j", mu, beta)


def _fit_link_block(U, C, W):
    """The links of a few costs for every smoothing penalty (rows of weight 0 left
    out per cost): ``knots``, ``betas`` (d, L, K - 1), ``gcv`` (d, L), the basis
    means ``mu`` and the cost means ``c0`` (see :func:`_fit_links`); L the
    penalties anchored at the low end of the index, then (with
    ``_LINK_BOTH_ENDS``) those anchored at its high end."""
    K = _LINK_KNOTS
    Wt = W.T
    pos = Wt > 0
    total = Wt.sum(axis=1)
    c0 = np.einsum("jm,mj->j", Wt, C) / total
    lo = np.where(pos, U.T, np.inf).min(axis=1)
    hi = np.where(pos, U.T, -np.inf).max(axis=1)
    # A constant index: the link is the mean cost.
    constant = ~(hi - lo > 1e-12 * np.maximum(np.maximum(np.abs(lo), np.abs(hi)), 1e-300))
    knots = np.linspace(lo, hi, K, axis=1)
    knots[constant] = lo[constant, None] + np.arange(K)
    B = _spline_basis(U, knots)
    mu = np.einsum("jm,jmk->jk", Wt, B) / total[:, None]
    r = np.sqrt(Wt)
    Bc = r[:, :, None] * (B - mu[:, None, :])
    y = r * (C.T - c0[:, None])
    Bt = Bc.transpose(0, 2, 1)
    G0 = Bt @ Bc
    b = (Bt @ y[:, :, None])[:, :, 0]
    k = G0.shape[1]
    n_lam = 1 if _LINK_LAMBDAS is None else len(_LINK_LAMBDAS)
    # A constant index has an all-zero system: its link is the mean cost
    # (and it has no GCV curve).
    betas = np.zeros((len(c0), n_lam * (1 + _LINK_BOTH_ENDS), k))
    gcv = np.full(betas.shape[:2], np.nan)
    v = ~constant
    D = np.eye(k)
    D[0, 0] = 0.0
    # The penalties in the basis anchored at the low end (the identity),
    # then at the high end: ridges on the coefficients gamma = X^-1 beta of
    # the reflected basis, relative to the Gram matrix X' G0 X of that basis.
    for e, X in enumerate([None, _reflection(knots[v])] if _LINK_BOTH_ENDS else [None]):
        if X is None:
            ridge = _LINK_PENALTY * np.trace(G0[v], axis1=1, axis2=2) / k
            G = G0[v] + ridge[:, None, None] * np.eye(k)
            P = (np.trace(G[:, 1:, 1:], axis1=1, axis2=2) / max(k - 1, 1))[:, None, None] * D
        else:
            Xt = X.transpose(0, 2, 1)
            Ge = Xt @ G0[v] @ X
            ridge = _LINK_PENALTY * np.trace(Ge, axis1=1, axis2=2) / k
            Xi = np.linalg.inv(X)
            Xit = Xi.transpose(0, 2, 1)
            G = G0[v] + ridge[:, None, None] * (Xit @ Xi)
            bend = (np.trace(Ge[:, 1:, 1:], axis1=1, axis2=2) / max(k - 1, 1) + ridge)
            P = bend[:, None, None] * (Xit @ D @ Xi)
        L = slice(e * n_lam, (e + 1) * n_lam)
        if _LINK_LAMBDAS is None:
            betas[v, L] = _solve_each(G, b[v])[:, None, :]
            gcv[v, L] = 0.0
        else:
            betas[v, L], gcv[v, L] = _link_gcv(G, G0[v], P, b[v], y[v], Bc[v],
                                               pos[v].sum(axis=1))
    return knots, betas, gcv, mu, c0


def _solve_each(G, b):
    """``G[j] x_j = b[j]`` for every j; least squares where ``G[j]`` is singular."""
    try:
        return np.linalg.solve(G, b[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        return np.stack([np.linalg.lstsq(Gj, bj, rcond=None)[0] for Gj, bj in zip(G, b)])


def _link_gcv(G, G0, P, b, y, Bc, m):
    """Penalized least squares of each ``y[j]`` on ``Bc[j]`` for every smoothing penalty, and its GCV.

    The system ``G[j] + lambda P[j]`` for every ``lambda`` in
    ``_LINK_LAMBDAS`` (``P`` penalizes the spline's bends, not its linear
    term: see :func:`_fit_link_block`); generalized
    cross-validation scores each fit by ``rss / (1 - df / m_j)^2`` with
    ``df`` the trace of the hat matrix plus one (the intercept) and ``m_j``
    the cost's rows of positive weight (inf where ``df >= m_j``). ``G0`` and
    ``b``: ``Bc[j].T @ Bc[j]`` and ``Bc[j].T @ y[j]`` for every j; ``G``:
    ``G0`` with the light ridge of ``_LINK_PENALTY``. Returns ``betas``
    (d, L, k) and ``gcv`` (d, L); a cost whose systems are all singular gets
    least squares at every penalty and a GCV of NaN (no curve).
    """
    d, k, _ = G.shape
    lam = _LINK_LAMBDAS
    # Every cost and penalty at once (one batched solve of the systems and
    # of their hat matrices' traces).
    A = G[:, None] + lam[None, :, None, None] * P[:, None]
    rhs = np.concatenate([np.broadcast_to(b[:, None, :, None], (d, len(lam), k, 1)),
                          np.broadcast_to(G0[:, None], A.shape)], axis=3)
    try:
        sol = np.linalg.solve(A, rhs)
    except np.linalg.LinAlgError:
        sol = np.full(rhs.shape, np.nan)
        for j in range(d):
            try:
                sol[j] = np.linalg.solve(A[j], rhs[j])
            except np.linalg.LinAlgError:
                pass  # no penalty scored for this cost: least squares below
    betas = sol[..., 0]
    df = np.trace(sol[..., 1:], axis1=2, axis2=3) + 1.0
    rss = np.sum((y[:, :, None] - Bc @ betas.transpose(0, 2, 1)) ** 2, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        gcv = np.where(df < m[:, None], rss / (1.0 - df / m[:, None]) ** 2, np.inf)
    gcv = np.where(np.isnan(gcv), np.inf, gcv)
    none = ~np.isfinite(sol[..., 0]).all(axis=(1, 2))
    if none.any():
        betas[none] = _solve_each(G[none], b[none])[:, None, :]
        gcv[none] = np.nan
    return betas, gcv


def _variance_power(G, C, sw):
    """Exponent ``k`` in [0, ``_VAR_POWER_MAX``] of ``Var(c_j | x) ~ |g_j|^k``, pooled over the costs.

    The least-squares slope of each row's log squared residual on its log
    fitted magnitude (each centred per cost, weighted by ``sw``), with every
    fitted magnitude floored at ``_VAR_FLOOR`` times its cost's mean. Returns
    ``(k, A)`` with ``A`` the floored magnitudes (0 where ``k`` is 0).
    """
    A = np.abs(G)
    mean = np.average(A, axis=0, weights=sw)
    A = np.where(mean > 0, np.maximum(A, _VAR_FLOOR * mean), 1.0)
    R2 = (C - G) ** 2
    tiny = np.average(R2, axis=0, weights=sw)
    keep = tiny > 0  # a cost fitted exactly says nothing about its variance
    if not keep.any():
        return 0.0, A
    la, lr = np.log(A[:, keep]), np.log(np.maximum(R2[:, keep], 1e-12 * tiny[keep]))
    la -= np.average(la, axis=0, weights=sw)
    lr -= np.average(lr, axis=0, weights=sw)
    den = sw @ (la * la).sum(axis=1)
    if not den > 0:
        return 0.0, A
    k = float(np.clip(sw @ (la * lr).sum(axis=1) / den, 0.0, _VAR_POWER_MAX))
    return k, A


def _fit_index(X, C, sw, ridge, n_threads=1):
    """The index start: ``(coef, intercept, links)`` (see ``init="index"``).

    ``n_threads``: threads for the second pass's per-cost weighted ridges.
    """
    coef, intercept, alpha = ridge
    U = X @ coef.T + intercept
    links = _fit_links(U, C, sw)
    pos = sw > 0
    k, A = _variance_power(_apply_links(U[pos], *links), C[pos], sw[pos])
    if k == 0.0:
        return coef, intercept, links
    # Weighted least squares with the variance function fitted above: the rows
    # with large, noisy costs no longer dominate the index and the link.
    Wt = np.zeros_like(C)
    Wt[pos] = A ** -k
    Wt /= np.average(Wt[pos], axis=0, weights=sw[pos])
    # Each cost's penalty stays the one leave-one-out chose for the unweighted
    # fit (relative to the total weight, on the same standardized features).
    X, C, sw = X[pos], C[pos], sw[pos]
    W = sw[:, None] * Wt[pos]
    _, scale = _standardization(X, sw)
    # Centred once by the rows' mean; each cost's own weighted centring is a
    # rank-one correction of its Gram matrix (the centred columns of every
    # cost were the cost of the loop).
    Z = X / scale
    z_bar = np.average(Z, axis=0, weights=sw)
    Z0 = Z - z_bar
    total = W.sum(axis=0)
    zm = (Z0.T @ W) / total
    cm = np.einsum("mj,mj->j", W, C) / total
    rhs = Z0.T @ (W * (C - cm))

    def ridge_of(j):
        return _weighted_ridge(Z0, W[:, j], zm[:, j], total[j], rhs[:, j], alpha[j] * sw.sum())

    d, (m, p) = C.shape[1], X.shape
    # Whole Gram matrices per thread: the products release the GIL and are
    # large enough to pay for the threads.
    if n_threads > 1 and d > 1 and m * p * p >= _THREADED_GRAM_WORK:
        with ThreadPoolExecutor(min(n_threads, d)) as pool:
            coef = np.array(list(pool.map(ridge_of, range(d))))
    else:
        coef = np.array([ridge_of(j) for j in range(d)])
    coef /= scale
    # The weighted mean of each cost's rows, in the features' own units.
    intercept = cm - np.einsum("jp,pj->j", coef, (zm + z_bar[:, None]) * scale[:, None])
    links = _fit_links(X @ coef.T + intercept, C, W)
    return coef, intercept, links


def _weighted_ridge(Z0, w, zm, total, rhs, penalty):
    """``a`` of least ``sum_i w_i (y_i - ym - a . (z_i - zm))^2 + penalty ||a||^2``.

    ``Z0``: the features centred by some mean, ``zm`` the weighted mean of
    its rows (``total`` their weight), ``rhs = sum_i w_i (z_i - zm) y_i``.
    """
    Zw = Z0 * np.sqrt(w)[:, None]
    # A plain product, not a symmetric rank-k update: on OpenBLAS it was the
    # faster of the two at these sizes (0.57 vs 0.70 ms for 730 x 197 rows).
    G = Zw.T @ Zw
    G -= total * np.outer(zm, zm)
    G[np.diag_indices_from(G)] += penalty
    try:
        return np.linalg.solve(G, rhs)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(G, rhs, rcond=None)[0]


def _apply_links(U, knots, beta, c0):
    out = np.empty_like(U)
    for b in _cost_blocks(U.shape[0], U.shape[1]):
        out[:, b] = c0[b] + np.einsum("jmk,jk->mj", _spline_basis(U[:, b], knots[b]), beta[b])
    return out


class _Regressor:
    """A scikit-learn regressor: an object with ``fit`` and ``predict``."""

    def accepts(self, v):
        # Not a class: ``init=Ridge`` has a callable fit and predict too, and
        # failed later in clone with scikit-learn's message, naming no init.
        return (not isinstance(v, (str, type)) and callable(getattr(v, "fit", None))
                and callable(getattr(v, "predict", None)))

    def __str__(self):
        return "a scikit-learn regressor (with fit and predict; an instance, not a class)"


def _weight_unit(sw):
    """An even power of two with the largest weight in [unit, 4 unit) (1 for unit weights)."""
    e = math.frexp(float(np.max(sw, initial=0.0)))[1] - 1
    return math.ldexp(1.0, e - e % 2) if np.max(sw, initial=0.0) > 0 else 1.0


def _regrets(problem, C, z, W):
    """Each row's regret of decisions W, with the optimal values z of C precomputed."""
    return np.maximum(problem.sign * (np.einsum("ij,ij->i", C, W) - z), 0.0)


#: Largest share of n_costs that a difference basis may have for the trees to
#: grow in its coordinates (with little to gain, the costs' own coordinates).
_BASIS_MAX_SHARE = 0.8


def _normalized_regret(problem, C, z, W, sw):
    """Normalized SPO loss of decisions W, with the optimal values z of C precomputed."""
    return float(np.dot(sw, _regrets(problem, C, z, W)) / np.dot(sw, np.abs(z)))


def _significant_gain(r0, r1, w):
    """Whether regrets ``r1`` beat ``r0`` on the same rows by more than ``_KEEP_Z`` standard errors.

    The gain is the weighted mean of the paired differences ``r0 - r1``; its
    standard error ``sqrt(sum w_i^2 (d_i - mean)^2) / sum w_i`` (the rows as
    independent draws, the weights fixed).
    """
    d = r0 - r1
    total = w.sum()
    mean = np.dot(w, d) / total
    se = math.sqrt(np.dot(w * w, (d - mean) ** 2)) / total
    return bool(mean > _KEEP_Z * se)


def _leaf_line_search(problem, F, C, W_true, w, leaf, V, f0, g0, gamma_init):
    """Step ``gamma_j`` along each leaf's direction ``V[j]`` minimizing the leaf's SPO+ loss.

    ``f_j(gamma) = sum_{i in leaf j} w_i l(F_i + gamma V_j, C_i)`` is convex and
    piecewise linear, so every evaluation (one batched oracle call over the
    rows of the leaves still searching) gives its value and a slope, and the
    two tangents at the ends of a bracket bound it from below. The bracket
    ``[lo, hi]`` (slope < 0 at ``lo``, >= 0 at ``hi``) is found by expanding
    ``hi`` geometrically, then narrowed at the intersection of the two
    tangents (Kelley's cutting planes in one dimension, exact after finitely
    many steps on a piecewise-linear function), with bisection as a
    safeguard. A leaf stops when its best value is within ``_LS_RTOL`` of the
    achieved decrease from the lower bound.

    Parameters
    ----------
    F, C, W_true : ndarray of shape (m, d)
        Current predictions, true costs and their optimal decisions of the
        rows (positive weight only).
    w : ndarray of shape (m,)
    leaf : ndarray of int of shape (m,)
        Leaf of each row, in ``0 .. L-1``.
    V : ndarray of shape (L, d)
        Direction of each leaf.
    f0, g0 : ndarray of shape (L,)
        Loss and slope of each leaf at ``gamma = 0``.
    gamma_init : float
        First trial step.

    Returns
    -------
    gamma : ndarray of shape (L,)
    n_calls : int
        Oracle calls made.
    """
    L = V.shape[0]
    s = problem.sign
    calls = 0

    def evaluate(gam, leaves):
        nonlocal calls
        wanted = np.zeros(L, dtype=bool)
        wanted[leaves] = True
        rows = np.flatnonzero(wanted[leaf])
        lf = leaf[rows]
        Vr = V[lf]
        # T = 2 (F + gamma V) - C, computed in place (the same operations in
        # the same order: a + b is b + a exactly): each (m, d) temporary is
        # an (n, d) array on the first evaluations, and peaked the fit.
        T = gam[lf, None] * Vr
        T += F[rows]
        T *= 2.0
        T -= C[rows]
        W2 = problem.solve(T)[0]
        calls += 1
        D = W_true[rows]
        D -= W2
        del W2
        loss = np.maximum(s * np.einsum("ij,ij->i", T, D), 0.0)
        slope = 2.0 * s * np.einsum("ij,ij->i", D, Vr)
        f = np.bincount(lf, weights=w[rows] * loss, minlength=L)
        g = np.bincount(lf, weights=w[rows] * slope, minlength=L)
        # The rounding noise of f and g: a share of the sums of the terms'
        # magnitudes. Along a direction on which the loss is flat (V . D = 0
        # in exact arithmetic), f and g are that noise, and taking its "descent"
        # expanded the step to 4^11 times the first (predictions of 1e5 for
        # costs of 5). (T, D and Vr are not needed signed any more.)
        np.abs(T, out=T)
        np.abs(D, out=D)
        np.abs(Vr, out=Vr)
        af = np.bincount(lf, weights=w[rows] * np.einsum("ij,ij->i", T, D), minlength=L)
        ag = np.bincount(lf, weights=w[rows] * np.einsum("ij,ij->i", D, Vr), minlength=L)
        # A slope below this share of the leaf's slope at 0 is flat too: a
        # direction with a rounding-noise component (7e-16 where the exact
        # value is 0) descends by 1e-15 per unit step, forever.
        ng = np.maximum(2.0 * _LS_NOISE * ag[leaves], _LS_NOISE * np.abs(g0[leaves]))
        return f[leaves], g[leaves], _LS_NOISE * af[leaves], ng

    gamma = np.zeros(L)
    best_f = f0.astype(np.float64).copy()
    lo = np.zeros(L)
    f_lo, g_lo = f0.astype(np.float64).copy(), g0.astype(np.float64).copy()
    hi = np.full(L, float(gamma_init))
    f_hi, g_hi = np.zeros(L), np.zeros(L)
    scale = np.maximum(np.abs(f0), 1e-300)
    # A leaf whose slope at 0 is not negative cannot descend along its direction.
    searching = np.flatnonzero(g0 < -1e-12 * scale)
    bracketed = np.zeros(L, dtype=bool)
    for _ in range(_LS_MAX_EXPAND):
        todo = searching[~bracketed[searching]]
        if not todo.size:
            break
        f, g, nf, ng = evaluate(hi, todo)
        f_hi[todo], g_hi[todo] = f, g
        better = f < best_f[todo] - nf
        best_f[todo[better]] = f[better]
        gamma[todo[better]] = hi[todo[better]]
        up = g >= -ng
        bracketed[todo[up]] = True
        grow = todo[~up]
        lo[grow], f_lo[grow], g_lo[grow] = hi[grow], f_hi[grow], g_hi[grow]
        hi[grow] *= 4.0
    active = searching[bracketed[searching]]
    for _ in range(_LS_MAX_REFINE):
        if not active.size:
            break
        a = active
        # Tangents at lo and hi meet at gamma_t, where their maximum (a lower
        # bound of the convex function on the bracket) is smallest.
        denom = g_lo[a] - g_hi[a]
        gt = (f_hi[a] - f_lo[a] + g_lo[a] * lo[a] - g_hi[a] * hi[a]) / denom
        bound = f_lo[a] + g_lo[a] * (gt - lo[a])
        done = best_f[a] - bound <= _LS_RTOL * (f0[a] - best_f[a]) + 1e-12 * scale[a]
        a, gt = a[~done], gt[~done]
        if not a.size:
            break
        width = hi[a] - lo[a]
        outside = ~((gt > lo[a] + 1e-3 * width) & (gt < hi[a] - 1e-3 * width))
        gt[outside] = 0.5 * (lo[a][outside] + hi[a][outside])
        trial = np.zeros(L)
        trial[a] = gt
        f, g, nf, ng = evaluate(trial, a)
        better = f < best_f[a] - nf
        best_f[a[better]] = f[better]
        gamma[a[better]] = gt[better]
        left = g < -ng
        right = g > ng
        lo[a[left]], f_lo[a[left]], g_lo[a[left]] = gt[left], f[left], g[left]
        hi[a[right]], f_hi[a[right]], g_hi[a[right]] = gt[right], f[right], g[right]
        # A zero slope proves a minimum.
        active = a[left | right]
    return gamma, calls


def _multi_output(est):
    """Whether scikit-learn's tags say ``est`` fits a 2-D target (True when unknown)."""
    try:
        from sklearn.utils import get_tags

        return bool(get_tags(est).target_tags.multi_output)
    except Exception:  # an estimator without tags: no claim either way
        return True


class _Start:
    """A fitted start ``F_0``: ``g(X @ coef.T + intercept)`` with ``g`` the
    identity or each cost's spline link, or a fitted scikit-learn regressor."""

    def __init__(self, choice, coef, intercept, links=None, estimator=None, unit=1.0):
        self.choice, self.coef, self.intercept = choice, coef, intercept
        self.links, self.estimator = links, estimator
        # A regressor is fitted to the costs as given; its predictions are
        # divided by the unit the boosting fits in (see _UNIT_RANGE).
        self.unit = unit

    @classmethod
    def from_estimator(cls, init, X, C, sw, d, unit=1.0):
        est = clone(init)
        C = C * unit
        pos = sw > 0
        if not (has_fit_parameter(est, "sample_weight") or np.all(sw[pos] == sw[pos][0])):
            raise ValueError(f"init={type(init).__name__}(...) does not accept sample_weight in "
                             "fit; use equal positive weights (0 leaves a row out) or a "
                             "regressor that accepts them.")
        # One cost and a single-output regressor: its target as the 1-d array it
        # expects (the (n, 1) column drew a DataConversionWarning from every fit).
        y = C[:, 0] if C.shape[1] == 1 and not _multi_output(est) else C
        try:
            if np.all(sw == 1.0):
                # Unit weights (fit given none) are no weights: handed over, a
                # meta-estimator under metadata routing (MultiOutputRegressor,
                # as suggested for a single-output regressor) refused them,
                # as its inner regressor had not requested sample_weight.
                est.fit(X, y)
            elif has_fit_parameter(est, "sample_weight"):
                est.fit(X, y, sample_weight=sw)
            else:
                # A row of weight 0 is a row removed (as for the built-in starts):
                # only the rows of positive weight, equal, reach the regressor.
                est.fit(X[pos], y[pos])
        except ValueError as exc:
            # A single-output regressor (HistGradientBoostingRegressor, SVR) said
            # only "y should be a 1d array", naming neither init nor the costs.
            hint = ""
            if C.shape[1] > 1 and not _multi_output(est):
                hint = (f" {type(init).__name__} predicts one output: wrap it as "
                        f"init=MultiOutputRegressor({type(init).__name__}(...)) "
                        "(sklearn.multioutput), one regressor per cost.")
            raise ValueError(f"init={type(init).__name__}(...) could not be fitted to the costs "
                             f"(an array of shape {C.shape}, one column per cost): "
                             f"{str(exc).rstrip('.')}.{hint}") from exc
        start = cls(init, None, None, estimator=est, unit=unit)
        P = start.predict(X[:1])
        if P.shape != (1, d):
            raise ValueError(f"init={type(init).__name__}(...) predicts {P.shape[1:]} values "
                             f"per row; the problem has n_costs={d}.")
        return start

    def predict(self, X):
        if self.estimator is not None:
            P = np.asarray(self.estimator.predict(X), dtype=np.float64) / self.unit
            return P.reshape(X.shape[0], -1) if P.ndim < 2 else P
        U = X @ self.coef.T + self.intercept
        return U if self.links is None else _apply_links(U, *self.links)

    def times(self, unit):
        """This start, fitted on the costs divided by ``unit``, as a start of the costs."""
        if self.estimator is not None:
            return _Start(self.choice, None, None, estimator=self.estimator)
        # The links' knots, coefficients and intercepts all scale with the costs.
        links = None if self.links is None else tuple(a * unit for a in self.links)
        return _Start(self.choice, self.coef * unit, self.intercept * unit, links)


class _StartOutOfRange(ValueError):
    """A linear start whose coefficients pass the float range (see
    :func:`_check_start_in_range`): ``init="auto"`` then leaves that candidate out."""


def _check_start_in_range(start, unit, X, C, sw):
    """Refuse a linear start whose coefficients (in the costs' own units) are not floats.

    A cost per unit of feature is the costs' scale over the features': costs
    of 2^1020 over features of 2^-10, or any costs over subnormal features,
    pass the float range, and the model predicted inf or NaN (or the fit
    failed later, blaming C).
    """
    if start.estimator is not None:
        return
    parts = [start.coef, start.intercept] + list(start.links or ())
    with np.errstate(over="ignore", invalid="ignore"):
        if all(np.isfinite(np.asarray(a) * unit).all() for a in parts):
            return
    pos = sw > 0
    top = float(np.max(np.abs(C[pos]), initial=0.0)) * unit
    mag = np.max(np.abs(X[pos]), axis=0, initial=0.0)
    nonzero = np.flatnonzero(mag > 0)
    where = ""
    if nonzero.size:
        j = int(nonzero[np.argmin(mag[nonzero])])
        where = f", features as small as {mag[j]:.3g} in magnitude (column {j} of the start's X)"
    # (Its coefficients, or the "index" start's link coefficients, are costs per
    # unit of feature, or of the index: they scale with the costs.)
    raise _StartOutOfRange(
        f"SPOBoost's init={start.choice!r} start has coefficients beyond the float range in "
        f"the costs' units (costs up to {top:.3g}{where}). Rescale those columns of X or "
        "the costs C (a power of two rescales exactly), or use init='mean'.")


@register_model
class SPOBoost(SPOScoreMixin, MultiOutputMixin, BaseEstimator):
    """Gradient boosting of regression trees on the SPO+ loss (decision-focused).

    The model predicts costs ``F(x) = F_0(x) + learning_rate * sum_t h_t(x)``,
    where ``F_0`` is the starting model (``init``) and every ``h_t`` is a
    multi-output regression tree. Round ``t``:

    1. a subgradient of the SPO+ loss of every training row at the current
       predictions ``c_hat``, ``2 (w*(c) - w*(2 c_hat - c))`` in the
       minimization sense, from one batched oracle call (``w*(c)`` of the
       training rows is computed once per fit);
    2. a regression tree (spotree's builder, squared error) fitted to the
       negative subgradients (the features are validated and sorted once per
       fit; each round only brings new targets). The subgradients are
       differences of decisions, so where the problem knows a smaller
       subspace holding those (:meth:`~spotree.problems.DecisionProblem.difference_basis`:
       the circulations of a shortest path, the null space of an LP's
       ``A_eq``), the tree is grown on their coordinates in it: the same
       squared errors, hence the same tree up to rounding, at a fraction of
       the cost (36 coordinates instead of 93 on a 45-node road network);
    3. in every leaf, a line search along the leaf's mean negative
       subgradient for the step that minimizes the SPO+ loss of the leaf's
       rows;
    4. the tree, with these leaf values, is added shrunk by ``learning_rate``.

    ``loss="mse"`` is ordinary least-squares gradient boosting (leaf value =
    mean residual) through the same code: the two-stage baseline.

    With early stopping (the default), ``validation_fraction`` of the rows
    are held out; after every round the decisions of the model on them are
    scored by the normalized SPO loss, boosting stops after
    ``n_iter_no_change`` rounds without improvement, and the best round is
    the one with the lowest validation loss (the earliest one on ties). Its
    trees are kept only if they beat the start on the validation rows by
    more than two standard errors (of the weighted mean of the row-wise
    regret differences, the rows as independent draws); otherwise the model
    is the start alone: the minimum of a noisy validation curve flatters the
    trees it picks (see Notes).
    The start and that many trees are then trained again on all the rows,
    the held-out ones included (the refit; not done when ``fit`` is given
    ``X_val``, whose rows are not training rows).

    Parameters
    ----------
    problem : DecisionProblem or None, default=None
        The optimization problem; None means "pick the cheapest of the d
        options" (``FiniteDecisions(np.eye(d))``).
    loss : {"spo+", "mse"}, default="spo+"
    n_estimators : int, default=300
        Maximum number of boosting rounds.
    learning_rate : float, default=0.1
        Shrinkage of every tree, in (0, inf).
    max_depth : int or None, default=3
    min_samples_leaf : int or float, default=20
        Minimum number of training rows in a leaf, as in :class:`SPOTree`
        (rows of zero weight, such as those left out by ``subsample``, do not
        count); a float in (0, 1) is a fraction of the rows each tree is
        grown on (those of positive weight: with ``subsample``, of the
        subsample), rounded up.
    subsample : float, default=1.0
        Fraction of the training rows drawn (without replacement) for each
        round's tree and line search (stochastic gradient boosting), in
        (0, 1]; drawn from the rows of positive weight, as every random
        draw of the fit (see ``sample_weight`` in :meth:`fit`).
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Features drawn at random at each split of each tree.
    init : {"auto", "ridge", "index", "spo+", "linear", "mean"} or regressor, default="auto"
        The starting model ``F_0``:

        - ``"ridge"``: multi-output ridge regression on standardized
          features, each cost's penalty chosen by exact leave-one-out error;
        - ``"index"``: each cost a smooth function of a linear index,
          ``c_j = g_j(a_j . x + b_j)`` with ``g_j`` a natural cubic spline
          (9 knots evenly spread over the range of the index, linear beyond):
          a single-index model per cost, which bends where the costs are a
          nonlinear function of a linear combination of the features. The
          splines' bends (not their slopes) are penalized by one penalty
          shared by all the costs, the one of least total generalized
          cross-validation error (the sum of every cost's), so the links
          stay straight (the ridge start) unless the data bend them. First
          the ridge index
          and its spline by least squares; then, when the
          squared residuals grow with the fitted costs as ``|g_j|^k``
          (``k`` in [0, 2], the least-squares slope of log squared residual
          on log fitted magnitude over all costs, each magnitude floored at
          a quarter of its cost's mean), each cost's index (ridge, same
          penalty) and spline again by weighted least squares with weights
          ``|g_j|^-k``, so that the largest, noisiest costs do not dominate
          the fit (as multiplicative noise makes them). The penalties act
          on the coefficients of a truncated power basis anchored at one end
          of the index, where a bend costs most; the basis anchored at the
          low end and the one anchored at the high end are both tried, and
          the end of least total GCV is kept for all the costs, so that a
          ``"max"`` problem on ``C`` and the ``"min"`` problem on ``-C`` give
          the same model, negated (see Notes, "Sign of the costs");
        - ``"spo+"``: a linear model trained on the SPO+ loss (as
          :class:`SPOPlusLinear`: minibatches of 32, Adam with learning rate
          0.01, 20 epochs) on standardized features, started from the ridge
          fit, ending with the mean of the iterates of the last 10 epochs;
        - ``"linear"``: weighted least squares; ``"mean"``: the weighted
          mean cost vector;
        - a scikit-learn regressor (an object with ``fit`` and ``predict``):
          a clone of it is fitted to the costs, all of them at once (a
          single-output one, such as ``HistGradientBoostingRegressor``,
          goes in ``sklearn.multioutput.MultiOutputRegressor``; with one cost it
          is fitted to the costs as a 1-d array), with
          ``sample_weight`` when its ``fit`` accepts one, otherwise only
          with equal weights, rows of weight 0 left out. It sees ``X`` as the numeric array the
          trees see, never a DataFrame (no column names; a categorical
          column as its indicator columns), so a pipeline that selects
          columns by name cannot be the start: select them by position;
        - ``"auto"``: scores the decisions of ``"index"`` and ``"ridge"`` by
          5-fold cross-validation over all the rows of ``X`` of positive
          weight (see ``init_cv_regret_``) and keeps ``"index"`` unless ``"ridge"`` has
          lower regret by more than two standard errors (of the weighted
          mean of the row-wise differences), at every size and whether the
          validation part is held out, given as ``X_val`` or absent; the
          validation part only chooses the number of trees. Where the
          ``"index"`` start's coefficients would pass the float range (its
          link on costs near the float range; see below) on a fold or on
          the rows fitted, it keeps ``"ridge"`` (its regret NaN).

        Every built-in start gives the same model after rescaling a feature
        by ``x -> s x + t``. See Notes. The linear starts (all but ``"mean"``)
        refuse data whose coefficients would pass the float range (costs of
        1e307 over features of 1e-3, subnormal features, or costs near the
        float range for the ``"index"`` start's link).
    validation_fraction : float, default=0.2
        Fraction of the rows held out for early stopping, in (0, 1), to
        choose the number of trees (of the rows of positive weight: those
        of weight 0 stay in the training part, where they change nothing);
        the final model is refitted on all the rows, so a larger part costs
        the model no training rows, only a less exact count of trees (see
        Notes). Ignored when
        ``n_iter_no_change`` is None or when ``fit`` is given ``X_val``.
    n_iter_no_change : int or None, default=10
        Stop after this many rounds without a lower validation loss. None
        turns early stopping off: all rows are used for training and all
        ``n_estimators`` trees kept.
    random_state : int, RandomState instance or None, default=None
        Seeds the validation split, the subsamples, the trees' feature draws
        and the ``"spo+"`` start (not ``init`` given as a regressor).
    verbose : int, default=0
        1 prints the training and validation regret every 10 rounds, 2 every
        round (the validation regret where there is a validation part:
        ``n_iter_no_change`` set or ``X_val`` given).
    categorical_features : array-like of int or str, array of bool, or None, default=None
        Numeric columns to treat as categories (weekday codes 0..6, say),
        given as in :class:`SPOTree`: feature indices, names of a DataFrame's
        columns, or a boolean mask of all the features. Each becomes one
        indicator column per distinct value of the training rows (its labels
        in ``category_values_``), for the start and the trees alike, as a
        DataFrame's categorical column does; a missing value (NaN) or a
        value not seen at fit is all zeros. A DataFrame column of dtype
        ``category`` or ``string``, or ``object`` holding text, is
        categorical in any case (listing it changes nothing). X at predict
        may then be an array, unless some column is categorical by its
        dtype.

    Attributes
    ----------
    estimators_ : list of SPOTree
        The kept trees (squared-error regression trees on the negative
        subgradients). Each leaf's ``tree_.value`` holds the step found by
        the line search, before shrinkage; their ``decision`` and ``loss``
        arrays are unused (zeros). :func:`~spotree.export_text`,
        :func:`~spotree.tree.export_graphviz` and
        :func:`~spotree.plotting.plot_tree` show a tree's leaf steps (and no
        decision or SPO loss).
    init_coef_ : ndarray of shape (n_costs, n_columns) or None
    init_intercept_ : ndarray of shape (n_costs,) or None
        The linear part of the start: ``F_0(x) = init_coef_ @ x +
        init_intercept_`` for the linear starts, the index of each cost for
        ``"index"`` (after the refit, trained on all the rows); None when
        ``init`` is a regressor. One column per feature, or per category of
        a categorical column (see :class:`SPOPlusLinear`'s ``coef_``; the
        trees split these indicator columns too).
    init_link_knots_ : ndarray of shape (n_costs, 9)
    init_link_coef_ : ndarray of shape (n_costs, 8)
    init_link_intercept_ : ndarray of shape (n_costs,)
        Only for the ``"index"`` start: each cost's spline link (knots, and
        coefficients of the basis of :func:`_spline_basis`).
    init_estimator_ : estimator
        Only when ``init`` is a regressor: the fitted clone (given the
        columns above).
    init_choice_ : str
        The start used (``init`` itself unless it is ``"auto"``;
        ``"estimator"`` for a regressor).
    init_cv_regret_ : dict or None
        When ``init="auto"``: each candidate's cross-validated normalized
        SPO loss (the regret of its decisions on the rows of every fold,
        fitted on the other folds, pooled over the folds); NaN for
        ``"index"`` where its coefficients passed the float range; None
        otherwise (and when no row's optimal value is nonzero, or one row
        has a positive weight: no fold to score). Not saved in the JSON file.
    n_estimators_ : int
        Number of kept trees (``best_iteration_`` with early stopping).
    n_iter_ : int
        Number of boosting rounds run (before the refit).
    best_iteration_ : int
        The round whose model was kept: the one of lowest validation loss,
        or 0 (the starting model alone) when its gain over the start is not
        significant; the refit trains this many trees.
    train_score_ : ndarray of shape (``n_iter_ + 1``,)
        Minus the normalized SPO loss of the model's decisions on the
        training rows after each round (entry 0: the starting model); greater
        is better, as :meth:`score`. With ``validation_fraction``, these are
        the rounds that chose ``best_iteration_`` (training part only), not
        the refitted model's.
    validation_score_ : ndarray of shape (``n_iter_ + 1``,)
        The same on the validation rows; empty without a validation part.
    feature_importances_ : ndarray of shape (n_features,)
        Mean over the kept trees of their normalized squared-error decrease
        per feature, normalized to sum to 1; all zeros when no kept tree
        splits (for example ``best_iteration_ == 0``: the start alone was
        kept). The start's use of the features is not counted: permutation
        importance with :func:`~spotree.metrics.make_spo_scorer` counts it,
        by the decisions (user guide: trees).
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
    **The start.** The SPO+ subgradients take only a few values, so boosting
    from a constant needs many rounds to fit a trend that a model of the
    costs captures at once, and early stopping on a noisy validation part
    often fires before that. On PyEPO's problems the start does nearly all
    the work. Depth-3 trees on the raw features approximate a smooth
    function of a linear combination of the features poorly; the
    ``"index"`` start represents exactly that (PyEPO's costs are such
    functions; real costs often nearly are); smoothed by generalized
    cross-validation, it stays straight where the costs are linear, so it is
    the default unless cross-validation finds ridge clearly better. Mean
    test regret of the starts alone (PyEPO's generators, noise 0.5, 1000
    test rows; design draws 100-104 at 1000 training rows and 100-109 at
    100, disjoint from the benchmark's draws 0-4; the Bayes floor is the
    regret of deciding with the true conditional mean; "index, plain": one
    unsmoothed pass, the previous version; "+ reweighting": with the
    second pass, unsmoothed):

    ======================  =================================  =================================
    1000 rows               shortest path 5x5, degree 1/2/4/6  knapsack 32x2, degree 1/2/4/6
    ======================  =================================  =================================
    Bayes floor             0.1592 0.1073 0.0668 0.0522        0.1747 0.1230 0.0828 0.0649
    least squares           0.1596 0.1082 0.0849 0.1129        0.1763 0.1254 0.0997 0.1293
    ``"ridge"``             0.1595 0.1083 0.0849 0.1129        0.1760 0.1253 0.0999 0.1293
    ``"index"``, plain      0.1602 0.1076 0.0670 0.0533        0.1777 0.1252 0.0849 0.0697
    + reweighting           0.1603 0.1073 0.0676 0.0526        0.1782 0.1250 0.0839 0.0679
    ``"index"``             0.1588 0.1076 0.0670 0.0526        0.1763 0.1247 0.0841 0.0679
    **100 rows**
    Bayes floor             0.1592 0.1086 0.0705 0.0580        0.1575 0.1191 0.0855 0.0684
    least squares           0.1721 0.1183 0.1041 0.1558        0.1688 0.1309 0.1202 0.1610
    ``"ridge"``             0.1729 0.1181 0.1043 0.1566        0.1706 0.1315 0.1208 0.1626
    ``"index"``, plain      0.1773 0.1206 0.0859 0.0936        0.1726 0.1344 0.1011 0.0983
    + reweighting           0.1770 0.1187 0.0795 0.0794        0.1731 0.1328 0.0984 0.0913
    ``"index"``             0.1737 0.1180 0.0788 0.0795        0.1689 0.1306 0.0970 0.0912
    ======================  =================================  =================================

    The reweighting matters where the costs grow steeply (PyEPO's noise is
    multiplicative, so the largest costs are the noisiest); ``k`` is fitted,
    so costs with constant noise keep the one-pass fit. The smoothing
    matters where they are linear. With the defaults (trees kept only for a
    significant gain): 0.1590 0.1076 0.0670 0.0526 and 0.1763 0.1248 0.0841
    0.0679 at 1000 rows (0.2% to 4.6% above the floor); 0.1737 0.1182
    0.0788 0.0795 and 0.1690 0.1306 0.0970 0.0912 at 100 rows; the previous
    defaults (the start chosen among ridge, plain index and SPO+ on the
    validation part at 1000 rows): 0.1595 0.1076 0.0719 0.0537 and 0.1773
    0.1256 0.0865 0.0717. The SPO+ start is no longer a candidate of
    ``"auto"``: it was never the best start on these draws (the SPO+ linear
    model alone: 0.0813 at shortest path degree 6, 1000 rows), and cross-validating it
    with the others chose it by chance at degree 1. Also tried on the
    design draws and left out: keeping the start of least cross-validated
    regret without the significance rule (0.1596 0.1083 0.0670 0.0526 and
    0.1765 0.1248 0.0841 0.0679 at 1000 rows, 0.1738 0.1181 0.0788 0.0795 and
    0.1701 0.1307 0.0970 0.0912 at 100); with the plain index, a mix
    ``(1 - l) ridge + l index`` with ``l`` in {0, 1/4, 1/2, 3/4, 1} chosen by
    the same folds (no better at 1000 rows, worse at 100: 0.0973 against
    0.0886 at shortest path degree 6); a fitted-magnitude floor of 0.1 (the
    reweighted index alone 0.0943 against 0.0794 there); 6 or 13 knots
    (within the spread); in earlier work, the spline's penalty on all its
    coefficients chosen by leave-one-out error (it smoothed the steep tail
    that decides), trees splitting on the start's predicted costs, knots at
    quantiles and a Gauss-Newton refinement of each index.

    **Selection noise.** Choosing among ridge, index and SPO+ starts on one
    validation part of 200 rows picked a worse start by chance (at knapsack
    degree 6 the SPO+ start on one draw of five, though alone it averaged
    0.0776 against the plain index's 0.0697), so ``"auto"`` scores every row
    by 5-fold cross-validation at every size. The number of trees is still
    chosen on the validation part, and the minimum of its noisy curve
    flatters the trees: on the design draws at 1000 rows, with the start by
    cross-validation, the kept trees raised the mean test regret in 7 of the
    8 cells (e.g. 0.0670 to 0.0680 at shortest path degree 4, plain index).
    Requiring a gain of two standard errors keeps the start alone in nearly
    all these cells, and keeps trees where they help clearly (on the ICON
    energy data, on one shuffle of three). One standard error instead (index
    reweighted, unsmoothed): 0.1603 0.1081 0.0677 0.0529 and 0.1771 0.1258 0.0843
    0.0682 against 0.1601 0.1081 0.0676 0.0526 and 0.1768 0.1250 0.0839
    0.0679 at 1000 rows; at 100 rows better at degree 6, worse at degree 2.
    With few validation rows the test is strict: 60 rows with a few large
    regrets may not show a halving of the regret as significant.
    Two-stage least squares is the true model class at degree 1 and stays
    hard to beat there with 100 rows (0.1721 and 0.1688).
    Least squares instead of ridge as the alternative, kept when better by
    half a standard error, was tried and reverted: on more design draws
    (100-139 at 100 rows, 100-119 at 1000 and 5000) it lowered shortest
    path degree 1 at 100 rows from 0.1714 to 0.1707 (least squares 0.1699)
    and moved no other cell by more than 1.2 standard errors of the paired
    difference, but on the benchmark's draws 0-4 it cost at 1000 and 5000
    rows, where 7 of its 11 switches raised the regret (knapsack degree 1:
    0.1480 to 0.1484 at 1000 rows, 0.1436 to 0.1440 at 5000); a margin of
    0 or one standard error toward least squares lost at degrees 4 and 6
    on the design draws.

    **One smoothing penalty for all the costs.** Chosen per cost, the links'
    smoothing followed the noise of each cost's GCV curve: with 100 rows
    some straight links bent by chance, and the index lost to least squares
    at degree 1 (links forced straight, it beat it: 0.1692 and 0.1542, but
    0.1283 and 0.1436 at degree 6). One penalty for all the
    costs, of least total GCV, decides better. Design draws (full model,
    noise 0.5; seeds 100-139 at 100 rows, 100-119 at 1000; mean test regret,
    then the paired change in 1e-4 and its standard error):

    =============  ===============================  ===============================
    100 rows       shortest path, degree 1/2/4/6    knapsack, degree 1/2/4/6
    =============  ===============================  ===============================
    per cost       0.1714 0.1160 0.0762 0.0741      0.1556 0.1260 0.1008 0.0941
    shared         0.1693 0.1147 0.0760 0.0721      0.1543 0.1248 0.0993 0.0922
    change         -21(4) -13(3) -2(3) -20(9)       -14(3) -13(4) -15(3) -20(6)
    least squares  0.1699 0.1161 0.1023 0.1565      0.1553 0.1261 0.1223 0.1700
    **1000 rows**
    per cost       0.1564 0.1061 0.0675 0.0543      0.1500 0.1174 0.0859 0.0695
    shared         0.1559 0.1063 0.0675 0.0542      0.1495 0.1174 0.0859 0.0694
    change         -5(4) +2(2) 0(2) -1(1)           -5(2) 0(2) +1(1) -1(1)
    least squares  0.1559 0.1071 0.0874 0.1239      0.1497 0.1181 0.1050 0.1372
    =============  ===============================  ===============================

    At 5000 rows (the starts alone, seeds 100-119) no cell moved by more
    than 1.9 standard errors (at most +1.6e-4, knapsack degree 2), all still
    below least squares; on the ICON energy data (shuffles 5-9, not the
    reported ones) the relative regret moved +0.03, +0.04 and +0.01 points
    at capacities 60, 120 and 180 (standard errors 0.08, 0.02, 0.02). Tried on
    the same draws at 100 rows and left out (paired change, shortest path
    then knapsack, degrees 1/2/4/6, in 1e-4): the index on the
    least-squares direction (-2 +1 +5 -31, 0 +7 +5 -18: better at degree
    6, worse at 4) or on ridge with a tenth of the penalty (alike); one
    ridge penalty for all the costs, for both starts or the index only
    (within 1.4 standard errors everywhere); per-cost GCV with each
    degree of freedom counted 1.4 times (Kim and Gu, 2004: -17 -4
    -2 -4, -5 +1 -11 -11); the shared penalty by the sum of log GCV
    (within 2e-4 of the sum); no reweighting (worse everywhere, +9 to
    +128).

    Also tried and left out: the largest penalty within one standard error
    of the least total GCV (the one-standard-error rule, on the paired
    row-wise terms). Without noise, PyEPO's knapsack costs are rounded up
    to integers (4 to 11 distinct values per cost in 100 rows) and at
    degree 1 the links of least GCV follow that staircase on a few draws,
    deciding worse than least squares (0.0025 against 0.0023, seeds
    100-139). The rule helped there (-1.2(0.4) in 1e-4, still 0.0024) and
    at 100 rows with noise 0.5 on the knapsack (degrees 2/4/6: -5(2) -6(2)
    -16(5)); it moved the shortest path and every cell at 1000 and 5000
    rows by less than 1.6 standard errors, and the benchmark's draws 0-4
    by about as much either way. But its smoother starts kept the
    validation loss falling for longer before early stopping (ICON energy:
    69 rounds against 24, the trees then not kept), doubling the fit time
    on the ICON data and raising it 1.5 times on the Uber road network.

    **Sign of the costs.** A ``"max"`` problem on costs ``C`` and the
    ``"min"`` problem on ``-C`` are the same decision problem, and every
    start gives two fits that mirror each other (predictions negated, the
    same decisions). For ``"index"`` (and so ``"auto"``) this needs care:
    its penalties are on the link's coefficients in a truncated power
    basis, whose terms start at one end of the index, so a bend near that
    end costs more than the same bend near the other. Anchored at the low
    end only (before issue 16) the start was not symmetric: costs that
    steepen as they grow (PyEPO's, and positive costs with multiplicative
    noise generally) bend at the high end of their index, where that
    penalty is light, and fitting ``exp(6 u)`` on 400 rows with ``u``
    uniform in [0, 1] and the index reflected raised the root-mean-square
    error of the link 4.1 times (2.6 to 10.7 at the smallest penalty). The
    start now tries the same penalties in the basis anchored at the low end
    and in the one anchored at the high end (that of the negated index,
    expressed in the first by :func:`_reflection`), and keeps the end and
    the lambda of least total GCV for all the costs; fitting ``-C`` swaps
    the two ends, so the fit is the exact mirror image. Design draws
    (seeds 100-199, noise 0.5, 1000 test rows; paired change of the mean
    test regret in 1e-4 and its standard error; see
    ``benchmarks/results/bench_pyepo_symmetric_link_issue16.md``): on
    PyEPO's costs GCV keeps the low end at degrees 4 and 6 (change exactly
    0) and no cell moved by more than one standard error; on the negated
    costs it recovers what the low end lost, knapsack -12(4) and -36(14)
    at 100 rows, degrees 4 and 6, knapsack -56(10) and shortest path -34(8)
    at 1000 rows, degree 6. It costs 0.4(0.1) (regret 0.0026 against
    0.0025) on the negated knapsack at 100 rows, noise 0, degree 1, where
    the high end suits the staircase costs better but GCV, a squared-error
    criterion, mostly keeps the low end. Tried and left out: a roughness
    penalty (the integral of the squared second derivative, dominated by
    the steep tail: +16(4) and +35(15) on the knapsack at 100 rows, degrees
    4 and 6), squared jumps of the third derivative at all the knots (worse
    at degrees 1, 2 and 4) and the end chosen per cost (noisy: +28(6) on
    the knapsack at 100 rows, degree 4).

    **Refit.** The validation part only chooses the number of trees; the
    start and the trees are then trained again on all the rows,
    so holding out 20% costs the model no training rows. (Measured when the
    start was ``"spo+"``: with or without refit and with 10%, 20% or 30%
    held out, the differences were within the spread over draws; 20% with
    the refit had the lowest mean.)

    **Cost.** A round makes one oracle call for the subgradients, a few
    (typically 3 to 8) for the line searches of all leaves together, and one
    each to score the training and validation decisions. The refit trains
    the start again and ``best_iteration_`` rounds without scoring. ``"auto"``
    fits its two starts on every fold (one oracle call per fold and start),
    then the chosen one on the training part and on all the rows. The
    ``"index"`` start's second pass solves one weighted ridge system per
    cost. The SPO+ start makes one oracle call per minibatch of 32 rows.

    **Scale.** The line search's first trial step is 1 in the units of the
    costs, and it expands or narrows from there a bounded number of times;
    the starts square the costs. Costs whose largest magnitude is outside
    [2^-16, 2^16] are therefore fitted in units of a power of two near it,
    and the model is scaled back: exact, so the model of costs times any
    power of two beyond that range is the same, with its predictions times
    that factor, and the same decisions. (Short of the float limit: costs
    reaching 2^1023 are fitted in units of 2^1023, not of the next power of
    two, which is not a float; their model can differ a little from that of
    the costs halved.) Within the range the costs are fitted as given, so rescaling them there can
    change the model a little (through the line searches' steps).

    **Threads.** When the rows times the columns squared are at most
    2^27, the fit runs BLAS on one thread (there, threads contended more
    than they helped: on the Uber road network, 912 x 197 features, the fit
    took 26-30 s with two BLAS threads on a busy 2-core machine and 3-4 s
    with one) and uses the threads BLAS was allowed for coarser work
    instead: ``"auto"``'s folds, and the index start's per-cost ridges.
    The oracle's batches (subgradients, line searches, scores) are split
    over as many threads where the problem has a compiled solver (a
    shortest path, a knapsack) and a batch takes long enough to repay it
    (on 2 cores, 10-13% less time for the ICON knapsack's rounds). A
    process limited to one BLAS thread (``threadpoolctl``, a joblib worker,
    ``OMP_NUM_THREADS=1``) fits on one thread. Up to that size the result
    does not depend on the threads; above it, BLAS's own threads can change
    the start's sums in the last digits (predicted costs 4e-14 apart on
    14,000 x 100 features, two BLAS threads against one).

    Examples
    --------
    >>> from spotree import ShortestPath, SPOBoost
    >>> from spotree.datasets import make_pyepo_shortest_path
    >>> from spotree.metrics import normalized_spo_loss
    >>> X, C, B = make_pyepo_shortest_path(400, degree=4, noise=0.5, random_state=0,
    ...                                    return_B=True)
    >>> X_test, C_test = make_pyepo_shortest_path(500, degree=4, noise=0.5, B=B,
    ...                                           random_state=1)
    >>> sp = ShortestPath((5, 5))
    >>> model = SPOBoost(sp, n_estimators=50, random_state=0).fit(X, C)
    >>> model.predict(X_test).shape
    (500, 40)
    >>> regret = normalized_spo_loss(C_test, model.predict(X_test), problem=sp)
    >>> bool(0.0 <= regret < 0.2)
    True
    """

    _parameter_constraints = {
        "loss": [Options("spo+", "mse")],
        "n_estimators": [Interval(int, 1, None)],
        "learning_rate": [Interval(float, 0.0, None, "neither")],
        "max_depth": [Interval(int, 1, None), None],
        "min_samples_leaf": [Interval(int, 1, None), Interval(float, 0.0, 1.0, "neither")],
        "subsample": [Interval(float, 0.0, 1.0, "right")],
        "max_features": [Interval(int, 1, None), Interval(float, 0.0, 1.0, "right"),
                         Options("sqrt", "log2"), None],
        "init": [Options("auto", "ridge", "index", "spo+", "linear", "mean"), _Regressor()],
        "validation_fraction": [Interval(float, 0.0, 1.0, "neither")],
        "n_iter_no_change": [Interval(int, 1, None), None],
        "verbose": [Interval(int, 0, None), InstanceOf((bool, np.bool_), "a bool")],
        "random_state": RANDOM_STATE,
        "categorical_features": [CATEGORICAL_FEATURES, None],
    }

    # The trees' decision arrays are unused (zeros): spotree.load does not
    # check them against the problem.
    _tree_decisions_used = False
    # Its trees split the indicator columns of categorical features (see
    # check_features(one_hot_categories=True)); spotree.load checks their width.
    _trees_split_one_hot = True
    # Fitted attributes written to and read from JSON besides the trees.
    _persist_extra = ("init_coef_", "init_intercept_", "init_choice_", "n_iter_",
                      "best_iteration_", "train_score_", "validation_score_",
                      "init_link_knots_", "init_link_coef_", "init_link_intercept_",
                      "category_values_", "_numeric_categories")

    def __init__(self, problem=None, *, loss="spo+", n_estimators=300, learning_rate=0.1,
                 max_depth=3, min_samples_leaf=20, subsample=1.0, max_features=None,
                 init="auto", validation_fraction=0.2, n_iter_no_change=10,
                 random_state=None, verbose=0, categorical_features=None):
        self.problem = problem
        self.loss = loss
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.subsample = subsample
        self.max_features = max_features
        self.init = init
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state
        self.verbose = verbose
        self.categorical_features = categorical_features

    # ---------------------------------------------------------------- fit
    def _tree_params(self):
        return {"criterion": "mse", "max_depth": self.max_depth,
                "min_samples_leaf": self.min_samples_leaf, "max_features": self.max_features}

    def _split(self, X, C, sw, problem, rng, X_val, C_val, sample_weight_val):
        """Training and validation parts (validation None without early stopping), how
        the validation part was given, and the indices of the two parts in the rows
        (None when the training part is all the rows)."""
        if X_val is not None or C_val is not None:
            if X_val is None or C_val is None:
                raise ValueError("X_val and C_val must be given together.")
            Xv = self._validate_X(X_val, arg="X_val")
            Cv = np.ascontiguousarray(check_costs(C_val, n_costs=problem.n_costs,
                                                  name="C_val", names=cost_names(problem)))
            check_same_rows(Xv, Cv, ("X_val", "C_val"))
            swv = check_sample_weight(sample_weight_val, Xv.shape[0],
                                      name="sample_weight_val")
            return (X, C, sw), (Xv, Cv, swv), "X_val", None
        if sample_weight_val is not None:
            # The rows held out by validation_fraction keep their sample_weight.
            raise ValueError("sample_weight_val weighs the rows of X_val and C_val; give "
                             "those too, or weigh the held-out rows with sample_weight.")
        if self.n_iter_no_change is None:
            return (X, C, sw), None, None, None
        # The part is drawn from the rows of positive weight only; the rows of
        # weight 0 go to the training part, where they change nothing. Drawn
        # from all the rows (as scikit-learn's HistGradientBoosting does), a
        # row of weight 0 moved the split, and with most rows at weight 0 the
        # held-out part could weigh nothing and the fit failed. With every
        # weight positive the draws are those of all the rows.
        pos = np.flatnonzero(sw > 0)
        n = pos.shape[0]
        n_val = math.ceil(self.validation_fraction * n)
        if n < 2 or n_val >= n:
            of = (f"the n_samples={n}" if n == X.shape[0] else
                  f"the {n} of n_samples={X.shape[0]} that have a positive sample_weight")
            raise ValueError(
                f"validation_fraction={self.validation_fraction} leaves no training rows: "
                f"early stopping holds out ceil(validation_fraction * n) = {n_val} of {of} "
                f"({n} sample{'s' if n != 1 else ''}). Give more samples, lower "
                "validation_fraction or set n_iter_no_change=None.")
        perm = pos[rng.permutation(n)]
        va = np.sort(perm[:n_val])
        tr = np.ones(X.shape[0], dtype=bool)
        tr[va] = False
        tr = np.flatnonzero(tr)
        return ((X[tr], C[tr], sw[tr]), (X[va], C[va], sw[va]), "validation_fraction",
                (tr, va))

    def _init_model(self, init, X, C, sw, W_true, problem, rng, ridge=None):
        """The start fitted on (X, C, sw): a ``_Start``. ``ridge``: the ridge
        fit of these rows when already computed (``init="auto"`` shares it)."""
        start = self._fit_start(init, X, C, sw, W_true, problem, rng, ridge)
        _check_start_in_range(start, getattr(self, "_unit", 1.0), X, C, sw)
        return start

    def _fit_start(self, init, X, C, sw, W_true, problem, rng, ridge=None):
        d = C.shape[1]
        unit = getattr(self, "_unit", 1.0)
        if not isinstance(init, str):
            # A regressor is fitted to the costs and weights as given.
            return _Start.from_estimator(init, X, C, sw * getattr(self, "_sw_unit", 1.0), d,
                                         unit)
        if init == "mean":
            return _Start(init, np.zeros((d, X.shape[1])), np.average(C, axis=0, weights=sw))
        if init == "linear":
            # Weighted least squares with an unpenalized intercept (min-norm
            # solution when X is rank deficient).
            # Columns far from 1 in units of a power of two near their largest
            # magnitude (exact): LAPACK's sums of squares of features of 2^600
            # overflowed ("SVD did not converge").
            xu = cost_unit(X)
            xu = np.where((xu > 2.0 ** 256) | (xu < 2.0 ** -256), xu, 1.0)
            Xs = X / xu
            mean_x = np.average(Xs, axis=0, weights=sw)
            r = np.sqrt(sw)[:, None]
            mean_c = np.average(C, axis=0, weights=sw)
            coef = np.linalg.lstsq(r * (Xs - mean_x), r * (C - mean_c), rcond=None)[0].T
            intercept = mean_c - coef @ mean_x
            return _Start(init, coef / xu, intercept)
        if ridge is None:
            ridge = _ridge_gcv(X, C, sw)
        coef, intercept, _ = ridge
        # (The index and SPO+ starts begin from it: NaN there failed later, blaming C.)
        _check_start_in_range(_Start(init, coef, intercept), getattr(self, "_unit", 1.0),
                              X, C, sw)
        if init == "ridge":
            return _Start(init, coef, intercept)
        if init == "index":
            coef, intercept, links = _fit_index(X, C, sw, ridge,
                                                getattr(self, "_start_threads", 1))
            return _Start(init, coef, intercept, links)
        # "spo+": Adam on the SPO+ loss from the ridge fit (which has the
        # scale of the costs), on standardized features (so that rescaling a
        # feature changes nothing), the mean of the iterates of the second half.
        pos = sw > 0
        mean, scale = _standardization(X[pos], sw[pos])
        lin = SPOPlusLinear(problem, warm_start=True, random_state=rng.randint(_MAX_SEED))
        lin.problem_ = problem
        lin.coef_, lin.intercept_ = coef * scale, intercept + coef @ mean
        # Only the rows of positive weight: the minibatches are drawn from the
        # rows, so a row of weight 0 would still move the others' batches.
        lin._fit_arrays(_standardized(X[pos], mean, scale), C[pos], sw[pos], W_true[pos],
                        check_random_state(lin.random_state),
                        average_from=lin.max_iter // 2)
        coef = lin.coef_ / scale
        return _Start(init, coef, lin.intercept_ - coef @ mean)

    def fit(self, X, C, sample_weight=None, *, X_val=None, C_val=None, sample_weight_val=None):
        """Boost trees on features X and realized costs C.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Finite features; a DataFrame's category and text columns, and
            those marked by ``categorical_features``, are categorical (one
            indicator column per category) and may hold missing values.
        C : array-like of shape (n_samples, n_costs)
            Realized cost vectors; ``n_costs`` must match the problem.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, not all zero. A row of weight 0 is a row
            removed: the validation part, the start's cross-validation folds
            and the subsamples are drawn from the rows of positive weight
            (scikit-learn's gradient boosting draws them from all the rows),
            so the fit is the one without it, up to rounding (a regressor
            given as ``init`` excepted, which sees the rows as given).
        X_val : array-like of shape (n_val, n_features), default=None
            A validation set for early stopping (and ``validation_score_``)
            instead of holding out ``validation_fraction`` of ``X``. In a
            Pipeline, ``fit(X, C, spoboost__X_val=...)`` hands it over as
            given, not through the pipeline's transformers; with metadata
            routing on, ``Pipeline(steps, transform_input=["X_val"])`` and
            ``set_fit_request(X_val=True, C_val=True)`` transform it. Given
            through ``cross_validate(..., params=...)`` or a search's ``fit``,
            scikit-learn cuts every argument with as many rows as ``X`` to the
            training fold's rows: an ``X_val`` and ``C_val`` of ``len(X)``
            rows then arrive as their rows of each fold (give them another
            number of rows).
        C_val : array-like of shape (n_val, n_costs), default=None
        sample_weight_val : array-like of shape (n_val,), default=None

        Returns
        -------
        self : SPOBoost

        Raises
        ------
        ValueError
            For invalid parameters or input, or a validation part that cannot
            be scored (no rows, zero total weight, or all optimal values zero).
        """
        with restored_on_failure(self):
            validate_params(self)
            # A category or text column becomes one indicator column per category
            # (for the linear start and, as they are, for the trees).
            X, C, sw = check_fit_inputs(self, X, C, sample_weight, allow_nan=False,
                                        one_hot_categories=True)
            # The start's products are mid-sized (a Gram matrix per cost): there,
            # extra BLAS threads cost more than they save, badly so when the cores
            # are busy (an SVD of 730 x 197 rows: 13 ms on one thread, 24 ms on
            # two of a 2-core machine at load 1).
            # The threads BLAS may use are given to the start's per-cost fits
            # instead (a process limited to one thread, as a joblib worker is,
            # stays on one).
            small = X.shape[0] * X.shape[1] ** 2 <= _BLAS_ONE_THREAD_WORK
            # The threads BLAS was given: where the process may use one core (a
            # joblib worker), so do the start's folds and the oracle's batches.
            threads = max((i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"),
                          default=1)
            self._start_threads = threads if small else 1
            # The oracle calls run one after another; a compiled solver's batch
            # is split over the threads (the same decisions, see solve_threads).
            n_solve = threads if self._solve_threads is None else self._solve_threads
            try:
                with threadpool_limits(limits=1, user_api="blas") if small else nullcontext(), \
                        solve_threads(n_solve), solver_session():
                    return self._fit_checked(X, C, sw, X_val, C_val, sample_weight_val)
            except _StartOutOfRange as exc:
                # A plain ValueError for the user: the private class (which
                # init="auto" catches to leave a candidate out) showed by name.
                raise ValueError(*exc.args) from None
            finally:
                del self._start_threads
                self.__dict__.pop("_unit", None)
                self.__dict__.pop("_sw_unit", None)

    def _fit_checked(self, X, C, sw, X_val, C_val, sample_weight_val):
        self.problem_ = problem = resolve_problem(self.problem, C)
        rng = check_random_state(self.random_state)
        # Costs far from 1 are fitted in units of a power of two near their
        # largest magnitude (exact: the decisions do not change), and the
        # model is scaled back at the end (see _UNIT_RANGE).
        top = float(np.max(np.abs(C), initial=0.0))
        unit = (1.0 if top == 0.0 or 2.0 ** -_UNIT_RANGE <= top <= 2.0 ** _UNIT_RANGE
                else float(cost_unit(C, axis=None)))
        self._unit = unit
        C = C / unit
        # The weights in units of an even power of two near the largest (exact,
        # square roots included; 1 for unit weights): the fit squares and sums
        # them, which overflowed at 2^900 and vanished at 2^-900.
        self._sw_unit = _weight_unit(sw)
        sw = sw / self._sw_unit
        X_all, C_all, sw_all = X, C, sw
        (X, C, sw), val, val_arg, parts = self._split(X, C, sw, problem, rng, X_val, C_val,
                                                      sample_weight_val)
        if val_arg == "X_val":
            val = (val[0], val[1] / unit, val[2] / _weight_unit(val[2]))
        # The optimal decisions and values of all the rows, solved once.
        solved_all = problem.solve(C_all)
        solved = solved_all if parts is None else tuple(a[parts[0]] for a in solved_all)
        if not (sw > 0).any():
            raise ValueError("The training part has zero total sample_weight: give more rows "
                             "a positive weight or lower validation_fraction.")
        if val is not None:
            Xv, Cv, swv = val
            zv = problem.solve(Cv)[1] if parts is None else solved_all[1][parts[1]]
            if not (swv > 0).any() or np.dot(swv, np.abs(zv)) == 0:
                what = ("the rows held out by validation_fraction="
                        f"{self.validation_fraction}" if val_arg == "validation_fraction"
                        else "X_val, C_val")
                fix = (f"Use more validation rows ({val_arg}) or set n_iter_no_change=None."
                       if self.n_iter_no_change is not None else
                       "Use other validation rows, or leave out X_val and C_val (without "
                       "early stopping they only give validation_score_).")
                raise ValueError(
                    f"The validation part ({what}: {count_noun(Xv.shape[0], 'row')}) "
                    "cannot be scored: "
                    "the normalized SPO loss needs a positive total weight and optimal "
                    f"values that are not all zero. {fix}"
                    + (" " + zero_optima_hint(problem) if (swv > 0).any() else ""))
            val = (Xv, Cv, swv, zv)
        start = time.perf_counter()
        early = self.n_iter_no_change is not None and val is not None
        init = self.init
        self.init_cv_regret_ = None
        if isinstance(init, str) and init == "auto":
            # The start by cross-validation over all the rows (the part held
            # out for early stopping included: the folds score every row).
            init, self.init_cv_regret_ = self._cv_start(X_all, C_all, sw_all, problem, rng,
                                                        solved_all)
        refitted = self._refit and val_arg == "validation_fraction"
        choice = init
        while True:
            try:
                init, trees, train_scores, val_scores, best_iter = self._boost(
                    X, C, sw, problem, rng, val, choice, self.n_estimators, early, start,
                    solved)
                n_iter = len(trees)
                best_iter = best_iter if early else n_iter
                trees = trees[:best_iter]
                if refitted:
                    # The number of rounds is chosen; train the chosen start and that
                    # many trees again on all the rows.
                    init, trees, _, _, _ = self._boost(X_all, C_all, sw_all, problem, rng,
                                                       None, choice, best_iter, False, start,
                                                       solved_all, score_train=False)
                break
            except _StartOutOfRange:
                # init="auto" chose "index", in range on the folds but not on
                # these rows: the ridge start, as where it is out on a fold.
                if not (self.init_cv_regret_ is not None and choice == "index"):
                    raise
                choice = "ridge"
                self.init_cv_regret_["index"] = float("nan")
        if unit != 1.0:
            init = init.times(unit)
            for tree in trees:
                # (The trees' impurities stay those of the targets they were
                # grown on: squares of costs of 1e160 would be inf, which a
                # saved model may not hold.)
                tree.tree_.value = tree.tree_.value * unit
        self._set_start(init)
        self.n_iter_ = n_iter
        self.best_iteration_ = best_iter
        # The trees as spotree.load rebuilds them: they read the columns the
        # start reads (indicators for categories), named as X's when it had names.
        names = (getattr(self, "feature_names_in_", None)
                 if getattr(self, "category_values_", None) is None else None)
        columns = self._tree_column_names()
        for tree in trees:
            tree.n_features_in_ = X_all.shape[1]
            if names is not None:
                tree.feature_names_in_ = names
            if columns is not None:
                tree._column_names = columns
        self.estimators_ = trees
        # predict shrinks the trees by the fit's learning_rate, not by one set
        # since (set_params after fit changed the predictions); saved as such.
        self._fit_params = {"learning_rate": self.learning_rate}
        self.train_score_ = np.asarray(train_scores)
        self.validation_score_ = (np.asarray(val_scores) if val is not None
                                  else np.empty(0))
        self.feature_importances_ = self._mean_importances()
        if self.verbose:
            refit = " (refitted on all the rows)" if refitted else ""
            print(f"SPOBoost: {count_noun(self.n_iter_, 'round')} in {time.perf_counter() - start:.2f} s, "
                  f"kept {self.best_iteration_}{refit}.")
        return self

    # Refit the chosen start and best_iteration_ trees on all the rows after
    # early stopping on a held-out part (validation_fraction).
    _refit = True
    # Grow the rounds' trees on data prepared once per fit (False: through
    # the public SPOTree.fit every round, as before; kept for the benchmark).
    _reuse_fit_data = True
    #: Threads for the oracle's batches during fit (None: those BLAS may use).
    _solve_threads = None


    def _cv_start(self, X, C, sw, problem, rng, solved):
        """The start of least K-fold cross-validated regret, and every start's regret.

        The rows of positive weight go to ``_CV_FOLDS`` folds by a random
        permutation of them (row ``perm[i]`` to fold ``i % K``), those of
        weight 0 to none (always fitted on, with no weight); every start of ``_CV_STARTS`` is fitted
        on the other folds and decides the fold's rows; a start's regret is
        the normalized SPO loss of these decisions over all the rows (pooled,
        not a mean of the folds' ratios). Returns ``(name, {name: regret})``,
        the first of ``_CV_STARTS`` on ties; ``("ridge", None)`` when the rows
        cannot be scored (all optimal values zero), and the first of
        ``_CV_STARTS`` with None when one row has a positive weight (no fold
        can be fitted). ``solved``: the optimal
        decisions and values of the rows.
        """
        # The folds divide the rows of positive weight (those of weight 0
        # are in no fold, so always on the training side, where they change
        # nothing): a row of weight 0 moved the folds, and so the choice of start.
        # With every weight positive the draws are those of all the rows.
        pos = np.flatnonzero(sw > 0)
        n = X.shape[0]
        k = min(_CV_FOLDS, pos.shape[0])
        fold = np.full(n, -1, dtype=np.intp)
        fold[pos[rng.permutation(pos.shape[0])]] = np.arange(pos.shape[0]) % k
        W_true, z = solved
        denom = np.dot(sw, np.abs(z))
        if not denom > 0:
            return "ridge", None
        if k < 2:
            # One row of positive weight: one fold, nothing to fit it on, so no
            # row is scored (its regrets read 0, reported as a regret of 0).
            return _CV_STARTS[0], None
        names = _CV_STARTS
        regret = np.zeros((len(names), n))

        def fold_predictions(f):
            te, tr = fold == f, fold != f
            if not (sw[tr] > 0).any() or not (sw[te] > 0).any():
                return None  # no weight to fit or to score: the fold adds nothing
            ridge = _ridge_gcv(X[tr], C[tr], sw[tr])
            out = []
            for name in names:
                try:
                    out.append(self._init_model(name, X[tr], C[tr], sw[tr], W_true[tr],
                                                problem, rng, ridge=ridge).predict(X[te]))
                except _StartOutOfRange:
                    # (It raised, naming init='index', for init='auto', which
                    # the ridge start would have served.)
                    if name == "ridge":
                        raise
                    out.append(None)  # left out: see below
            return out

        threads = self._start_threads if _CV_THREADS else 1
        if threads > 1 and set(names) <= _THREAD_SAFE_STARTS:
            # The folds on threads (the starts fitted there are numpy work
            # that draws no random numbers; each fold's ridges then run on
            # one thread). The problem is solved here, after: its solvers
            # may keep state.
            self._start_threads = 1
            try:
                with ThreadPoolExecutor(min(threads, k)) as pool:
                    predictions = list(pool.map(fold_predictions, range(k)))
            finally:
                self._start_threads = threads
        else:
            predictions = [fold_predictions(f) for f in range(k)]
        out = np.zeros(len(names), dtype=bool)  # a start out of range on some fold
        for f, P in enumerate(predictions):
            if P is not None:
                te = fold == f
                for i in range(len(names)):
                    if P[i] is None:
                        out[i] = True
                    else:
                        regret[i, te] = _regrets(problem, C[te], z[te], problem.solve(P[i])[0])
        loss = np.where(out, np.nan, regret @ sw / denom)
        best = int(np.argmin(out))  # the first one in range ("ridge" always is)
        for i in range(best + 1, len(names)):
            if not out[i] and _significant_gain(regret[best], regret[i], sw):
                best = i
        return names[best], dict(zip(names, loss.tolist()))

    def _boost(self, X, C, sw, problem, rng, val, init, n_rounds, early, start, solved,
               score_train=True):
        """The start and up to ``n_rounds`` trees on (X, C, sw).

        ``val`` is None or ``(Xv, Cv, swv, zv)``: the validation part, scored
        after every round; with ``early``, stop ``n_iter_no_change`` rounds
        after the best one. Returns ``(coef, intercept, choice)``, the trees
        (all rounds run), the training and validation scores and the best
        round. ``solved``: the optimal decisions and values of the rows.
        ``score_train=False`` skips the training scores (NaN).
        """
        W_true, z = solved
        if val is not None:
            Xv, Cv, swv, zv = val
        chosen = self._init_model(init, X, C, sw, W_true, problem, rng)
        F = chosen.predict(X)
        Fv = chosen.predict(Xv) if val is not None else None
        if chosen.estimator is not None:
            # (The built-in starts are checked by _check_start_in_range.) NaN
            # or infinity failed in the first oracle call, blaming C.
            for P, rows in ((F, "rows it was fitted on"), (Fv, "validation rows")):
                bad = None if P is None else ~np.isfinite(P).all(axis=1)
                if bad is not None and bad.any():
                    raise ValueError(f"init={type(init).__name__}(...) predicts NaN or infinity "
                                     f"for {int(bad.sum())} of the {bad.shape[0]} {rows}; the "
                                     "start must predict finite costs.")
        has_z = np.dot(sw, np.abs(z)) > 0

        def scores():
            """Training and validation scores, and the validation rows' regrets."""
            tr = (-_normalized_regret(problem, C, z, problem.solve(F)[0], sw)
                  if has_z and score_train else np.nan)
            if val is None:
                return tr, np.nan, None
            r = _regrets(problem, Cv, zv, problem.solve(Fv)[0])
            return tr, -float(np.dot(swv, r) / np.dot(swv, np.abs(zv))), r


        train_scores, val_scores = [], []
        t_score, v_score, start_rows = scores()
        best_rows = start_rows
        train_scores.append(t_score)
        val_scores.append(v_score)
        stumps_problem = FiniteDecisions(np.eye(problem.n_costs))
        # SPO+ subgradients are differences of decisions: the trees grow on
        # their coordinates in a basis of the decisions' differences (the
        # same squared errors, fewer of them: 36 instead of 93 on a road
        # network) and their leaf values are mapped back.
        basis = problem.difference_basis() if self.loss == "spo+" else None
        if basis is not None and not 0 < basis.shape[1] <= _BASIS_MAX_SHARE * problem.n_costs:
            basis = None
        tree_problem = (stumps_problem if basis is None
                        else FiniteDecisions(np.eye(basis.shape[1])))
        # The subsamples are drawn from the rows of positive weight (drawn
        # from all the rows, a row of weight 0 moved them); with every weight
        # positive the draws are those of all the rows.
        weighed = np.flatnonzero(sw > 0)
        n = weighed.shape[0]
        n_bag = max(1, int(self.subsample * n))
        trees = []
        best_iter, best_loss = 0, -v_score
        gamma_init = 1.0
        fit_data = None
        show = self.verbose and score_train
        # Without a validation part there is no validation regret to show (it
        # printed "nan" every round): that column is left out.
        val_col = val is not None
        if show and n_rounds:
            print(f"{'round':>6} {'train regret':>13}" + (f" {'val regret':>11}" if val_col else "")
                  + f" {'time (s)':>9}")
        for t in range(1, n_rounds + 1):
            seed = int(rng.randint(_MAX_SEED))
            if n_bag < n:
                bag = np.zeros(X.shape[0], dtype=bool)
                bag[weighed[rng.choice(n, n_bag, replace=False)]] = True
                w = np.where(bag, sw, 0.0)
            else:
                w = sw
            if self.loss == "spo+":
                loss0, grad = _spo_plus(problem, C, F, W_true)
                target = -grad
            else:
                target = C - F
            tree = SPOTree(**self._tree_params(), random_state=seed)
            Y = target if basis is None else target @ basis
            # (An (n, d) array that the rest of the round, its peak, does not read.)
            del target
            if self._reuse_fit_data:
                # The features were validated and sorted once per fit; each
                # round only brings new targets, and no node decisions.
                fit_data = (FitData(tree_problem, X, Y, np.zeros(X.shape[1], bool),
                                    need_spo=False) if fit_data is None
                            else fit_data.with_costs(Y))
                tree._fit_arrays(X, Y, w, tree_problem, fit_data=fit_data,
                                 decisions=False)
            else:
                tree.fit(X, Y, sample_weight=w)
            tree.problem_ = stumps_problem
            # Its exports show the leaves' steps, not the unused decisions (the mark
            # is on the Tree, which export_graphviz and plot_tree also take bare).
            tree.tree_._spo_boost_step = True
            t_ = tree.tree_
            if basis is not None:
                t_.value = t_.value @ basis.T
                t_.n_outputs = basis.shape[0]
            node = t_.apply(X)
            leaves = np.flatnonzero(t_.children_left == TREE_LEAF)
            step = np.zeros_like(t_.value)
            if self.loss == "spo+":
                pos = np.flatnonzero(w > 0)
                leaf_of = np.searchsorted(leaves, node[pos])
                V = t_.value[leaves]
                f0 = np.bincount(leaf_of, weights=w[pos] * loss0[pos], minlength=leaves.size)
                g0 = np.bincount(leaf_of, weights=w[pos] * np.einsum("ij,ij->i", grad[pos],
                                                                     V[leaf_of]),
                                 minlength=leaves.size)
                # Every row weighs (the usual case): the arrays themselves, not
                # three (n, d) copies of them (the search reads them, by rows).
                every = pos.shape[0] == w.shape[0]
                gamma, _ = _leaf_line_search(
                    problem, *((F, C, W_true, w) if every
                               else (F[pos], C[pos], W_true[pos], w[pos])),
                    leaf_of, V, f0, g0, gamma_init)
                step[leaves] = gamma[:, None] * V
                moved = gamma[gamma > 0]
                if moved.size:
                    gamma_init = float(np.median(moved))
            else:
                step[leaves] = t_.value[leaves]
            t_.value = step
            t_.decision = np.zeros_like(step)
            F += self.learning_rate * step[node]
            if val is not None:
                Fv += self.learning_rate * step[t_.apply(Xv)]
            trees.append(tree)
            t_score, v_score, v_rows = scores()
            train_scores.append(t_score)
            val_scores.append(v_score)
            if show and (self.verbose > 1 or t % 10 == 0):
                # (The normalized regret of costs whose optima are all 0 is undefined.)
                train = f"{-t_score:>13.6f}" if np.isfinite(t_score) else f"{'n/a':>13}"
                print(f"{t:>6} {train}" + (f" {-v_score:>11.6f}" if val_col else "")
                      + f" {time.perf_counter() - start:>9.2f}")
            if early:
                if -v_score < best_loss:
                    best_iter, best_loss, best_rows = t, -v_score, v_rows
                elif t - best_iter >= self.n_iter_no_change:
                    break
        if early and best_iter and not _significant_gain(start_rows, best_rows, swv):
            # The best round beats the start on the validation rows by less
            # than the noise of that comparison: keep the start alone.
            best_iter = 0
        return chosen, trees, train_scores, val_scores, best_iter

    _LINK_ATTRS = ("init_link_knots_", "init_link_coef_", "init_link_intercept_")

    def _set_start(self, start):
        """The fitted start as attributes (arrays, for the JSON file, where possible)."""
        for name in self._LINK_ATTRS + ("init_estimator_",):
            self.__dict__.pop(name, None)
        self.init_choice_ = start.choice if isinstance(start.choice, str) else "estimator"
        self.init_coef_, self.init_intercept_ = start.coef, start.intercept
        if start.links is not None:
            for name, value in zip(self._LINK_ATTRS, start.links):
                setattr(self, name, value)
        if start.estimator is not None:
            self.init_estimator_ = start.estimator

    def _start(self):
        links = (tuple(getattr(self, name) for name in self._LINK_ATTRS)
                 if hasattr(self, "init_link_knots_") else None)
        return _Start(self.init_choice_, self.init_coef_, self.init_intercept_, links,
                      getattr(self, "init_estimator_", None))

    def _mean_importances(self):
        p = self.n_features_in_
        used = [est.feature_importances_ for est in self.estimators_
                if est.tree_.node_count > 1]
        if not used:
            return np.zeros(p)
        # A categorical feature's importance: that of its indicator columns.
        mean = one_hot_sum(np.mean(used, axis=0), getattr(self, "category_values_", None))
        s = mean.sum()
        return mean / s if s > 0 else mean

    @property
    def n_estimators_(self):
        check_is_fitted(self, "estimators_")
        return len(self.estimators_)

    # ---------------------------------------------------------- predict
    def _validate_X(self, X, arg="X"):
        return check_features(self, X, reset=False, allow_nan=False, one_hot_categories=True,
                              arg=arg)

    def _validate_X_predict(self, X):
        check_is_fitted(self, "estimators_")
        return self._validate_X(X)

    def _start_predict(self, X):
        with np.errstate(over="ignore", invalid="ignore"):
            F = self._start().predict(X)
            bad = ~np.isfinite(F).all(axis=1)
        if bad.any():
            # Finite features far beyond the training rows': the linear start's
            # index passed the float range (inf - inf: NaN), and predict returned
            # NaN without a word while predict_decision blamed C.
            i = int(np.flatnonzero(bad)[0])
            how = ("its init regressor predicted NaN or infinity"
                   if self.init_choice_ == "estimator" else
                   f"its {self.init_choice_!r} start extrapolates linearly in the features")
            raise ValueError(f"SPOBoost's start predicts costs beyond the float range for row "
                             f"{i} of X (features up to {np.max(np.abs(X[i])):.3g} in "
                             f"magnitude): {how}.")
        return F

    def _shrinkage(self):
        """The fit's ``learning_rate`` (a model read by load(): its file's)."""
        return self.__dict__.get("_fit_params", {}).get("learning_rate", self.learning_rate)

    def _staged(self, X):
        F = self._start_predict(X)
        rate = self._shrinkage()
        for est in self.estimators_:
            tree = est.tree_
            F = F + rate * tree.value[tree.apply(X)]
            yield F

    def predict(self, X):
        """Predicted costs of the kept model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_costs)
        """
        X = self._validate_X_predict(X)
        F = self._start_predict(X)
        rate = self._shrinkage()
        for est in self.estimators_:
            F += rate * est.tree_.value[est.tree_.apply(X)]
        return F

    def staged_predict(self, X):
        """Predicted costs after each kept tree (1, 2, ..., ``n_estimators_`` trees).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        ndarray of shape (n_samples, n_costs)
        """
        X = self._validate_X_predict(X)
        for F in self._staged(X):
            yield F.copy()

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

    def apply(self, X):
        """Leaf index of every sample in every kept tree.

        Returns
        -------
        ndarray of shape (n_samples, ``n_estimators_``)
        """
        X = self._validate_X_predict(X)
        if not self.estimators_:
            return np.zeros((X.shape[0], 0), dtype=np.int64)
        return np.column_stack([est.tree_.apply(X) for est in self.estimators_])

    def _tree_column_names(self):
        """Names of the columns the trees split on when categories widened X, else None.

        The trees read one indicator column per category: exports named them
        by position (``x7``), which is not X's column 7. These read
        ``"color=red"``, and a numeric column keeps its name.
        """
        cats = getattr(self, "category_values_", None)
        if cats is None:
            return None
        names = getattr(self, "feature_names_in_", None)
        names = [f"x{j}" for j in range(len(cats))] if names is None else list(names)
        return one_hot_names(names, cats)

    # ------------------------------------------------------ persistence
    def _set_trees_from_load(self, trees):
        """Rebuild the fitted state from the arrays of a saved model."""
        d = self.problem_.n_costs
        cats = self.category_values_ = getattr(self, "category_values_", None)
        # The columns the start and the trees see (indicators for categories).
        p = self.n_features_in_ if cats is None else one_hot_width(cats)
        cols = np.shape(getattr(self, "init_coef_", None))[1:]
        if cols and cols[0] != p:
            why = ("" if cats is None else
                   " (one per numeric feature and one per category of category_values_)")
            raise _schema.SchemaError("fitted.init_coef_", f"has {cols[0]} columns but the "
                                                           f"model has {p}{why}.")
        # A missing key, or links that do not fit together, failed as "trees do
        # not fit the estimator: a malformed SPOBoost model: AttributeError(...)",
        # naming no key of the file: each is named now.
        for key in ("init_coef_", "init_intercept_", "n_iter_", "best_iteration_",
                    "train_score_", "validation_score_"):
            if not hasattr(self, key):
                raise _schema.SchemaError(f"fitted.{key}", "is missing.")
        present = [hasattr(self, name) for name in self._LINK_ATTRS]
        if any(present) and not all(present):
            missing = self._LINK_ATTRS[present.index(False)]
            raise _schema.SchemaError(f"fitted.{missing}", "is missing: an index start needs "
                                      "all of " + ", ".join(self._LINK_ATTRS) + ".")
        try:
            self.init_coef_ = np.asarray(self.init_coef_, dtype=np.float64).reshape(d, p)
            self.init_intercept_ = np.asarray(self.init_intercept_,
                                              dtype=np.float64).reshape(d)
            self.init_choice_ = str(getattr(self, "init_choice_", self.init))
            self.n_iter_ = int(self.n_iter_)
            self.best_iteration_ = int(self.best_iteration_)
            self.train_score_ = np.asarray(self.train_score_, dtype=np.float64)
            self.validation_score_ = np.asarray(self.validation_score_, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"a malformed SPOBoost model: {exc!r}") from None
        if all(present):
            knots = np.asarray(self.init_link_knots_, dtype=np.float64)
            if knots.ndim != 2 or knots.shape[0] != d or knots.shape[1] < 3:
                raise _schema.SchemaError("fitted.init_link_knots_",
                                          f"must have {d} rows (one per cost) of at least 3 "
                                          f"knots; got shape {knots.shape}.")
            if not (np.diff(knots, axis=1) > 0).all():
                raise _schema.SchemaError("fitted.init_link_knots_",
                                          "must increase along every row.")
            k = knots.shape[1] - 1
            coef = np.asarray(self.init_link_coef_, dtype=np.float64)
            if coef.shape != (d, k):
                raise _schema.SchemaError("fitted.init_link_coef_",
                                          f"must have {k} columns, one per interval between "
                                          f"the {k + 1} init_link_knots_ of a row; got shape "
                                          f"{coef.shape}.")
            self.init_link_knots_ = knots
            self.init_link_coef_ = coef
            self.init_link_intercept_ = np.asarray(self.init_link_intercept_,
                                                   dtype=np.float64).reshape(d)
        # One score per round and one for the start: 'spotree show' and
        # plot_boosting index them by round.
        rounds = self.n_iter_ + 1
        if self.train_score_.shape != (rounds,):
            raise _schema.SchemaError("fitted.train_score_", f"must have n_iter_ + 1 = {rounds} "
                                                             "entries (round 0 is the start); "
                                                             f"got {self.train_score_.size}.")
        if self.validation_score_.shape not in ((rounds,), (0,)):
            raise _schema.SchemaError("fitted.validation_score_",
                                      f"must have n_iter_ + 1 = {rounds} entries (round 0 is "
                                      f"the start) or none; got {self.validation_score_.size}.")
        if len(trees) != self.best_iteration_ or self.best_iteration_ > self.n_iter_:
            raise ValueError(f"a SPOBoost file with best_iteration_={self.best_iteration_} "
                             f"holds {len(trees)} trees.")
        # The trees' features are the columns of X unless categories widened them.
        names = getattr(self, "feature_names_in_", None) if cats is None else None
        columns = self._tree_column_names()
        stumps_problem = FiniteDecisions(np.eye(d))
        ests = []
        for t in trees:
            est = SPOTree(**self._tree_params())
            est.problem_ = stumps_problem
            t._spo_boost_step = True
            est.tree_ = t
            est.n_features_in_ = p
            if names is not None:
                est.feature_names_in_ = names
            if columns is not None:
                est._column_names = columns
            # Recomputed from the stored impurities, as a fitted tree's (the
            # file does not hold them).
            imp = _tree_importances(t)
            total = imp.sum()
            est.feature_importances_ = imp / total if total > 0 else imp
            ests.append(est)
        self.estimators_ = ests

    def save(self, path):
        """Write the fitted model as JSON (see :func:`spotree.load`); no pickle involved."""
        from .tree._persist import save_model

        if hasattr(self, "init_estimator_"):
            raise TypeError("a SPOBoost whose init is a scikit-learn regressor cannot be saved "
                            "as JSON (the regressor is not a spotree model); use pickle or "
                            "joblib instead.")
        save_model(self, path)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.single_output = False
        tags.target_tags.multi_output = True
        tags.regressor_tags = None
        return tags
