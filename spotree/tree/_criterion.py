"""What a node and a candidate split are worth.

A node's sufficient statistics are sums over its samples: the weight, the
weighted cost sum S, the weighted optimal values, and (for the MSE part) the
weighted squared norms. Where the problem lists its vertices V, the weighted
sums of G = C V^T (in the minimization sense) replace S for the SPO part, and
the SPO loss of a set of samples is ``min_k G_sum[k] - z_sum``; otherwise it is
``sign * z*(S) - z_sum`` from one batched oracle call (z* is positively
homogeneous, so the mean is not needed).
"""

from __future__ import annotations

import copy

import numpy as np
from numba import njit

__all__ = ["Criterion", "VERTEX_PATH_MAX_ENTRIES"]


@njit(cache=True, nogil=True)
def _weighted_sums(idx, w, C, G, zs, sq):
    """A node's sufficient statistics in one pass, without gathering row copies."""
    S = np.zeros(C.shape[1])
    Gs = np.zeros(G.shape[1])
    wsum = 0.0
    z = 0.0
    q = 0.0
    for i in idx:
        wi = w[i]
        wsum += wi
        z += wi * zs[i]
        q += wi * sq[i]
        for j in range(C.shape[1]):
            S[j] += wi * C[i, j]
        for k in range(G.shape[1]):
            Gs[k] += wi * G[i, k]
    return wsum, S, Gs, z, q

#: Largest n_samples * n_vertices for which G = C V^T is precomputed.
VERTEX_PATH_MAX_ENTRIES = 50_000_000


class Criterion:
    """Per-fit statistics and the loss of sets of samples.

    Parameters
    ----------
    problem : DecisionProblem
    C : ndarray of shape (n, d)
    w : ndarray of shape (n,)
        Positive sample weights.
    spo_weight : float in [0, 1]
        1 for the SPO criterion, 0 for MSE (CART); in between, the mix
        ``a * SPO / SPO_root + (1 - a) * MSE / MSE_root``.

    The vertex fast path is used when the problem lists its vertices and
    ``n * K`` stays below ``VERTEX_PATH_MAX_ENTRIES``.
    """

    def __init__(self, problem, C, w, spo_weight=1.0):
        self.problem = problem
        self.sign = problem.sign
        self.C = C
        self.w = w
        self.a = float(spo_weight)
        n, d = C.shape
        V = problem.vertices()
        self.use_vertices = V is not None and n * V.shape[0] <= VERTEX_PATH_MAX_ENTRIES
        self.n_oracle_calls = 0
        self.n_oracle_rows = 0
        if self.use_vertices:
            self.V = V
            self.G = self.sign * (C @ V.T)
            # With a complete vertex list the optimum is the best vertex; this
            # keeps node losses exactly consistent with the split sweep.
            self.zs = self.G.min(axis=1)
        else:
            self.V = None
            self.G = np.empty((n, 0))
            self.zs = self.sign * self.solve(C)[1]
        self.sq = np.einsum("ij,ij->i", C, C)
        self._set_weight_state()

    def _set_weight_state(self):
        """Everything derived from the weights (kept in one place for with_weights)."""
        self.spo_scale = 1.0
        self.mse_scale = 1.0
        # Losses below these are rounding noise of sums of this magnitude.
        self.spo_tol = 1e-12 * (self.w @ np.abs(self.zs)) + 1e-300
        self.mse_tol = 1e-12 * (self.w @ self.sq) + 1e-300

    def with_weights(self, w):
        """The same precomputed statistics (C, G, z*) under other sample weights.

        A forest builds one Criterion and derives each tree's from it, so the
        oracle is called once per forest, not once per tree.
        """
        other = copy.copy(self)
        other.w = w
        other.n_oracle_calls = 0
        other.n_oracle_rows = 0
        other._set_weight_state()
        return other

    def with_spo_weight(self, a):
        """A view of the same statistics under another criterion mix (no copies)."""
        other = copy.copy(self)
        other.a = float(a)
        return other

    # ------------------------------------------------------------ oracle
    def solve(self, S):
        """Batched oracle call on sums/means (counts calls for benchmarks)."""
        self.n_oracle_calls += 1
        self.n_oracle_rows += S.shape[0]
        return self.problem.solve(S)

    def decide_sums(self, S, G_sum=None):
        """Decisions and minimization-sense optimal values for weighted cost sums."""
        if self.use_vertices:
            if G_sum is None:
                G_sum = self.sign * (S @ self.V.T)
            k = np.argmin(G_sum, axis=1)
            return self.V[k], G_sum[np.arange(k.size), k]
        W, z = self.solve(S)
        return W, self.sign * z

    # ------------------------------------------------------------- nodes
    def node_sums(self, idx):
        wsum, S, G, z, sq = _weighted_sums(idx, self.w, self.C, self.G, self.zs, self.sq)
        return {"w": wsum, "S": S, "G": G, "z": z, "sq": sq}

    def set_scales(self, sums):
        """Normalize the two parts of a mixed criterion by the root's losses."""
        if 0.0 < self.a < 1.0:
            spo, mse = self.node_losses(sums)[2:]
            self.spo_scale = spo if spo > self.spo_tol else 1.0
            self.mse_scale = mse if mse > self.mse_tol else 1.0

    @property
    def tol(self):
        """Noise level of the combined criterion."""
        return self.combine(self.spo_tol, self.mse_tol)

    def combine(self, spo, mse):
        if self.a == 1.0:
            return spo
        if self.a == 0.0:
            return mse
        return self.a * spo / self.spo_scale + (1.0 - self.a) * mse / self.mse_scale

    def node_losses(self, sums):
        """(value, decision, spo_loss, mse_loss) of a node given its sums."""
        value = sums["S"] / sums["w"]
        if self.use_vertices:
            k = int(np.argmin(sums["G"]))
            decision, opt = self.V[k], sums["G"][k]
        else:
            W, zmin = self.decide_sums(value[None, :])
            decision, opt = W[0], zmin[0] * sums["w"]
        spo = opt - sums["z"]
        mse = sums["sq"] - sums["S"] @ sums["S"] / sums["w"]
        # Exact zeros where the loss is rounding noise, so that zero-loss
        # nodes stop splitting and zero-gain splits count for nothing.
        spo = spo if spo > self.spo_tol else 0.0
        mse = mse if mse > self.mse_tol else 0.0
        return value, decision, spo, mse

    # ------------------------------------------------------- candidates
    def partition_losses(self, wL, SL, GL, zL, sqL, total):
        """Criterion loss of many candidate partitions at once.

        Each row describes the left child by its sums; the right child is the
        node total minus the left. Returns the summed criterion of both
        children for every candidate.
        """
        wR = total["w"] - wL
        spo = 0.0
        mse = 0.0
        if self.a > 0.0:
            SR = total["S"][None, :] - SL
            zR = total["z"] - zL
            if self.use_vertices:
                GR = total["G"][None, :] - GL
                spo = (GL.min(axis=1) - zL) + (GR.min(axis=1) - zR)
            else:
                _, zz = self.decide_sums(np.vstack([SL, SR]))
                m = SL.shape[0]
                spo = (zz[:m] - zL) + (zz[m:] - zR)
            spo = np.maximum(spo, 0.0)
        if self.a < 1.0:
            SR = total["S"][None, :] - SL
            sqR = total["sq"] - sqL
            mse = (sqL - np.einsum("ij,ij->i", SL, SL) / wL
                   + sqR - np.einsum("ij,ij->i", SR, SR) / wR)
        return self.combine(spo, mse)
