"""The oracle path's node evaluation: one batched call, or bounds first for slow oracles.

On the oracle path the growth machine hands over, per node, the mean cost of
the node and of both children of every candidate split, and needs the
optimal values back. :class:`BatchedOracle` solves them all in one call.
:class:`BoundedOracle` is for problems whose exact oracle is slow but which
have a cheap relaxation (a mixed-integer program and its LP relaxation):

- an upper bound on every ``z*(r)`` from the best of the decisions seen so
  far (feasible decisions, so ``min_v r.v`` over them is attainable);
- a lower bound from the relaxation (``z*_relax(r) <= z*(r)``);
- exact solves only for the candidates whose lower bound does not already
  exceed the best exact candidate value found, in increasing order of
  their lower bound.

The candidates left unsolved get their upper bound, which is above the best
candidate's exact value, so the machine picks the same split as with every
value exact (candidates that could tie are solved exactly, so ties are broken
the same way too).
"""

from __future__ import annotations

import numpy as np

__all__ = ["BatchedOracle", "BoundedOracle", "make_oracle_handler", "sweep_order"]


def sweep_order(m):
    """An order of the ``m`` request rows in which neighbours have similar costs.

    Row 0 is the node, rows ``2j + 1`` and ``2j + 2`` the left and right
    children of candidate ``j``; a feature's candidates come in increasing
    threshold order, so its left children grow from a few rows to nearly
    the node and its right children shrink. The node first, then every left
    child from the last candidate to the first (from nearly the node down to
    a few rows, feature after feature), then every right child from the
    first to the last: each row then differs from the one before by the
    rows between two thresholds, except at a feature's boundary. A solver
    that starts from its last solution (an LP's basis) needs a few simplex
    iterations per row in this order instead of hundreds when the two
    children alternate (see HighsModel.solve).
    """
    n_cand = (m - 1) // 2
    j = np.arange(n_cand)
    return np.concatenate([[0], 2 * j[::-1] + 1, 2 * j + 2]).astype(np.int64)


class BatchedOracle:
    """Every requested row solved exactly, in one batched call (in :func:`sweep_order`)."""

    def __init__(self, data):
        self.data = data

    def __call__(self, R, weights, const, a, spo_scale, mse_part, tol):
        order = sweep_order(R.shape[0])
        W, z_sorted = self.data.solve_scaled(R[order])
        z = np.empty(R.shape[0])
        z[order] = z_sorted
        return W[0], z


class BoundedOracle:
    """Exact values where they can matter, bounds elsewhere (see module docstring).

    Parameters
    ----------
    data : FitData
    relaxation : DecisionProblem
        A problem over a superset of the feasible set (the LP relaxation).
    max_pool : int, default=256
        Most recent distinct decisions kept for the upper bounds.
    """

    def __init__(self, data, relaxation, max_pool=256):
        self.data = data
        self.relaxation = relaxation
        self.max_pool = int(max_pool)
        self.pool = np.zeros((0, data.Cm.shape[1]))

    def _add(self, W):
        pool = np.unique(np.vstack([W, self.pool]), axis=0)
        self.pool = pool[-self.max_pool:]

    def _exact(self, R):
        W, z = self.data.solve_scaled(R)
        self._add(W)
        return W, z

    def __call__(self, R, weights, const, a, spo_scale, mse_part, tol):
        m = R.shape[0]
        W0, z0 = self._exact(R[:1])
        z = np.empty(m)
        z[0] = z0[0]
        n_cand = (m - 1) // 2
        if n_cand == 0:
            return W0[0], z
        rows = R[1:]
        d = self.data
        # Upper bounds: the best known decision of each row (minimization sense).
        upper = (rows @ self.pool.T).min(axis=1)
        # Lower bounds: the relaxation, solved in the problem's units.
        _, zr = self.relaxation.solve(d.sign * d.scale * rows)
        lower = np.minimum(d.sign * zr / d.scale, upper)
        w = weights[1:]

        def crit(vals):
            pair = vals.reshape(n_cand, 2)
            spo = (w.reshape(n_cand, 2) * pair).sum(axis=1) - const
            return a * spo / spo_scale + mse_part if a < 1.0 else spo

        c_lo = crit(lower)
        c_up = crit(upper)
        vals = upper.copy()
        solved = np.zeros(n_cand, dtype=bool)
        # Solvers meet their bounds to about 1e-9 relative: a lower bound may
        # exceed the exact value by that much, so candidates within a margin
        # of the best are solved too.
        scale = max(np.abs(c_up).max(), np.abs(c_lo).max(), 1e-300)
        margin = 1e-7 * scale + 2.0 * tol
        best = c_up.min()
        # Candidates that could be best (or tie with the best), by lower bound.
        order = np.argsort(c_lo, kind="stable")
        k = 0
        while k < n_cand and c_lo[order[k]] <= best + margin:
            chunk = []
            while (k < n_cand and c_lo[order[k]] <= best + margin
                   and len(chunk) < max(8, n_cand // 16)):
                chunk.append(order[k])
                k += 1
            chunk = np.array(chunk)
            idx = np.concatenate([2 * chunk, 2 * chunk + 1])
            _, ze = self._exact(rows[idx])
            vals[idx] = ze
            solved[chunk] = True
            best = min(best, crit(vals)[chunk].min())
        z[1:] = vals
        return W0[0], z


def make_oracle_handler(data, bounded="auto"):
    """The handler for ``data``'s problem: bounded when it has a relaxation."""
    if bounded is False or bounded == "never":
        return BatchedOracle(data)
    relax = data.problem.relaxation()
    if relax is None:
        return BatchedOracle(data)
    return BoundedOracle(data, relax)
