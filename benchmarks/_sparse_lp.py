"""A reproducible sparse LP for the benchmarks: capacitated network flow with shared capacities.

The model is a min-cost flow on a random connected directed network, the
kind of LP that Pyomo or gurobipy users write for routing and supply
planning:

- 500 arcs (the variables), each with a capacity ``0 <= x_a <= u_a``;
- 150 flow-balance rows (equalities): supply or demand at 150 of the 151
  nodes (the last node's row is implied by the others and left out);
- 50 rows on bundles of about ten arcs sharing a resource (a crew, a
  terminal, a budget): 30 "at most" rows, 10 "at least" rows (a minimum
  service level) and 10 ranged rows.

Each column has 2 or 3 nonzeros. Supplies and bundle limits are derived
from a random flow strictly inside the capacities, so the LP is feasible for
every seed, and the capacities bound it, so every cost vector has a finite
optimum. :func:`write_sparse_lp` writes it to an MPS file with highspy.
"""

from __future__ import annotations

import numpy as np

N_ARCS = 500
N_NODES = 151
N_BUNDLES = 50


def sparse_lp_data(seed=0):
    """The LP's data as plain arrays (row-bound form).

    Returns
    -------
    dict
        ``A`` (scipy.sparse CSC, 200 x 500), ``row_lower``, ``row_upper``,
        ``col_lower``, ``col_upper`` and ``x0`` (a feasible point).
    """
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    # A random spanning tree keeps the network connected; the other arcs join
    # random pairs of distinct nodes.
    tail = np.empty(N_ARCS, dtype=np.int64)
    head = np.empty(N_ARCS, dtype=np.int64)
    order = rng.permutation(N_NODES)
    for k in range(1, N_NODES):
        a, b = order[k], order[rng.integers(0, k)]
        tail[k - 1], head[k - 1] = (a, b) if rng.random() < 0.5 else (b, a)
    for k in range(N_NODES - 1, N_ARCS):
        a, b = rng.choice(N_NODES, size=2, replace=False)
        tail[k], head[k] = a, b
    cap = np.round(rng.uniform(1.0, 10.0, N_ARCS), 2)
    x0 = cap * rng.uniform(0.2, 0.8, N_ARCS)

    arcs = np.arange(N_ARCS)
    # Node balance: outflow - inflow = supply (negative for a demand).
    balance = sp.coo_matrix((np.r_[np.ones(N_ARCS), -np.ones(N_ARCS)],
                             (np.r_[tail, head], np.r_[arcs, arcs])),
                            shape=(N_NODES, N_ARCS)).tocsr()
    supply = balance @ x0
    balance, supply = balance[:-1], supply[:-1]

    bundle = rng.permutation(np.arange(N_ARCS) % N_BUNDLES)
    share = sp.coo_matrix((np.ones(N_ARCS), (bundle, arcs)), shape=(N_BUNDLES, N_ARCS)).tocsr()
    load = share @ x0
    lo = np.full(N_BUNDLES, -np.inf)
    hi = np.full(N_BUNDLES, np.inf)
    kind = np.repeat(["le", "ge", "range"], [30, 10, 10])
    hi[kind != "ge"] = np.round(load[kind != "ge"] * rng.uniform(1.05, 1.3, 40), 2)
    lo[kind != "le"] = np.round(load[kind != "le"] * rng.uniform(0.6, 0.9, 20), 2)

    A = sp.vstack([balance, share]).tocsc()
    return dict(A=A, row_lower=np.r_[supply, lo], row_upper=np.r_[supply, hi],
                col_lower=np.zeros(N_ARCS), col_upper=cap, x0=x0)


def write_sparse_lp(path, seed=0):
    """Write the LP to ``path`` (an ``.mps`` file); return the data dict.

    The objective written to the file is a positive transport cost per arc;
    spotree replaces it with the cost vectors it is given.
    """
    import highspy

    from spotree.problems._highs import new_highs

    data = sparse_lp_data(seed)
    A = data["A"]
    m, n = A.shape
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_ = np.round(np.random.default_rng(seed + 1).uniform(1.0, 5.0, n), 2)
    lp.col_lower_ = data["col_lower"]
    lp.col_upper_ = data["col_upper"]
    lp.row_lower_ = np.where(np.isinf(data["row_lower"]), -inf, data["row_lower"])
    lp.row_upper_ = np.where(np.isinf(data["row_upper"]), inf, data["row_upper"])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data
    lp.col_names_ = [f"flow_{k}" for k in range(n)]
    lp.row_names_ = ([f"node_{i}" for i in range(N_NODES - 1)]
                     + [f"bundle_{i}" for i in range(N_BUNDLES)])
    h = new_highs()  # silent, unlike highspy.Highs()
    h.passModel(lp)
    if h.writeModel(str(path)) != highspy.HighsStatus.kOk:
        raise RuntimeError(f"highspy could not write {path}")
    return data
