"""Every compiled kernel of the tree code, in one module.

The greedy growth of a tree is one resumable state machine, :func:`grow_step`.
It serves every split-search path:

- ``MODE_VERTEX``: the problem lists its candidate decisions V; every row
  carries ``G[i] = sign * c_i^T V^T`` and a child's SPO loss is
  ``min_k GL[k] - zL`` from running sums (an O(K) update per row).
- ``MODE_SOLVER``: the problem has an exact solver compiled with numba
  (grid and DAG shortest paths, knapsacks); each candidate child is solved
  from its running cost sum inside the sweep, with no prefix-sum matrix.
- ``MODE_ORACLE``: any other problem. The sweep writes the mean cost of every
  candidate child to a request buffer and returns ``ST_ORACLE``; Python
  calls the problem's batched oracle once per node and calls back in.

The squared-error criterion (CART, and the MSE part of the mixed criterion)
is computed from running cost sums in every mode.

The state machine also returns ``ST_BUDGET`` after a bounded amount of work,
so that the Python driver regains control often (Ctrl-C is honoured within a
fraction of a second, and a forest's worker threads can be told to stop), and
``ST_SPACE`` when the request buffer is too small for a node.

Costs arrive in the minimization sense (``sign * c``) and divided by a power
of two that brings them near 1, so every tolerance here is relative and the
arithmetic is the same for costs of any magnitude.

The machine receives its state as records (named tuples, see
:class:`Rows`, :class:`Categories`, :class:`Criterion`, :class:`Settings`,
:class:`Solver`, :class:`Requests`, :class:`Scratch`, :class:`Nodes`), and
they decide what is compiled: ``Categories`` is None when no feature is
categorical, ``Solver`` is None except on the solver path and ``Requests``
except on the oracle path, and the code reading a None record is not
compiled. The compiled solver arrives as a first-class function
(``Solver.solve``), and the code of one kind of solver alone (the DAG's
block solver, each knapsack's bounds) behind a None test on the record's
``dag``, ``dp`` or ``bb``: so a fit compiles only the solver it uses and
that kind's code, and the machine once per family of kinds (DAG, one-
resource knapsack, several resources, the others). Each variant is cached
on disk like every kernel.

Every candidate split of both sweeps is scored by one function,
:func:`_candidate` (as scikit-learn's splitter calls one criterion); the
numeric sweep keeps two fused loops for the common cases (pure SPO on the
vertex path, pure squared error, nothing missing) that update the running
sums and score the cut in the same pass.
"""

from __future__ import annotations

import numpy as np

from typing import NamedTuple

from .._numba import jit
from ..problems._compiled import (DAG_BLOCK, KIND_DAG, KIND_KNAPSACK_DP, _knapsack_bb_bound,
                                  _knapsack_dp_bound, _knapsack_dp_bound_warm,
                                  _knapsack_dp_value_at, _lagrangian_bb, dag_min_block,
                                  knapsack_dp_child_bounds, knapsack_dp_cut_bounds)

MODE_VERTEX = 0
MODE_SOLVER = 1
MODE_ORACLE = 2

ST_DONE = 0
ST_BUDGET = 1
ST_ORACLE = 2
ST_SPACE = 3
ST_SOLVER_FAILED = 4

PH_POP = 0
PH_SWEEP = 1
PH_SCORE = 2
PH_TIE = 3

# istate slots
I_PHASE = 0
I_COUNT = 1
I_SP = 2
I_NODE = 3
I_CURSOR = 4
I_NFEAT = 5
I_ROUND = 6
I_BEST_F = 7
I_BEST_KIND = 8
I_BEST_CAT = 9
I_BEST_NAN = 10
I_NCAND = 11
I_NEED = 12
I_NPEND = 13
I_NCAT = 14
I_FAILED = 15
I_HINT = 16  # two slots: the sweep's children's critical items (see _bound_multipliers)
I_CENTRED = 18  # 1 where the node's squared-error sweeps read Scratch.cc
N_ISTATE = 19

# fstate slots
F_BEST_CRIT = 0
F_BEST_THR = 1
F_IMP = 2
F_W = 3
F_CNT = 4
F_Z = 5
F_Q = 6
F_MSE = 7
F_SOLVES = 8
F_ABS = 9
F_LAM = 10
F_NB = 11  # five slots: the sweep's lam_nb (see _bound_multipliers)
F_QC = 16  # the node's squared error about its mean, from Scratch.cc
N_FSTATE = 17

#: Fewest features swept at a node for a squared-error tree to centre the
#: node's costs first (one pass over its rows and costs, which the sweeps of
#: fewer features do not repay: see Scratch.cc).
CENTRE_MIN_FEATURES = 8

# kinds of split
SPLIT_NUMERIC = 0
SPLIT_CAT_ONE = 1
SPLIT_CAT_SUBSET = 2
SPLIT_MISSING = 3

# Where missing values go at a split: right, left, or (none seen at fit) the
# heavier child, which the driver fills in.
NAN_RIGHT = 0
NAN_LEFT = 1
NAN_UNSEEN = 2

REL_TOL = 1e-12


# ------------------------------------------------------------ small helpers
@jit(inline="always")
def midpoint(lo, hi):
    """A threshold t with ``lo <= t < hi`` for finite ``lo < hi``, without overflow.

    Halving first keeps ``lo + hi`` from overflowing near the float range;
    where the midpoint rounds up to ``hi`` (neighbouring floats), ``lo``
    itself separates the two values.
    """
    t = 0.5 * lo + 0.5 * hi
    if not (t >= lo and t < hi):
        t = lo
    return t


@jit(inline="always")
def next_u64(rng):
    """splitmix64: the one random stream of a tree (feature draws)."""
    x = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = x
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@jit(inline="always")
def rand_below(rng, k):
    """Uniform int in [0, k) (modulo bias below 2**-50 for any k a tree sees)."""
    return np.int64(next_u64(rng) % np.uint64(k))


@jit(internal=True)
def draw_features(rng, p, k, perm):
    """Shuffle the first k slots of ``perm`` (a partial Fisher-Yates draw)."""
    for i in range(p):
        perm[i] = i
    for i in range(k):
        j = i + rand_below(rng, p - i)
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp


@jit(internal=True)
def ascending(values, p, out):
    """Write the distinct ints of ``values`` (each in [0, p)) to ``out[:k]`` in
    increasing order (``out`` has at least ``p`` slots; the rest is left
    unspecified); returns ``k``.

    A scan over marks instead of a sort: numba compiles its quicksort once per
    call site, seconds of every cold start, for lists this short. The marks
    live in ``out`` itself and are compacted in place (slot ``k`` is written
    only after mark ``k`` was read), so no array is allocated: ``np.zeros``
    alone took a tenth of a second of a cold start to compile.
    """
    for j in range(p):
        out[j] = 0
    for v in values:
        out[v] = 1
    k = 0
    for j in range(p):
        if out[j] != 0:
            out[k] = j
            k += 1
    return k


@jit(internal=True)
def allowed_positions(xs, m, n_quantiles, allowed):
    """Mark the sorted positions p (cut between p and p+1) that quantile thresholds hit.

    ``n_quantiles <= 0`` allows every position. Levels are ``q/(Q+1)`` of the
    range of positions, linearly interpolated as numpy's default quantile.
    """
    for p in range(m):
        allowed[p] = n_quantiles <= 0
    if n_quantiles <= 0 or m < 2:
        return
    for q in range(1, n_quantiles + 1):
        level = q / (n_quantiles + 1.0) * (m - 1)
        lo = int(np.floor(level))
        hi = min(lo + 1, m - 1)
        frac = level - lo
        # A weighted mean of two values cannot overflow, unlike lo + (hi - lo) * frac.
        t = xs[lo] * (1.0 - frac) + xs[hi] * frac if frac > 0.0 else xs[lo]
        # Last position with xs[p] <= t: samples up to p go left (as
        # np.searchsorted(xs[:m], t, side="right") - 1, whose generic
        # compiled code costs about a second of every cold start).
        lo_p = 0
        hi_p = m
        while lo_p < hi_p:
            mid = (lo_p + hi_p) >> 1
            if not xs[mid] > t:
                lo_p = mid + 1
            else:
                hi_p = mid
        p = lo_p - 1
        if 0 <= p < m - 1:
            allowed[p] = True


@jit(inline="always")
def combine(a, spo, mse, spo_scale, mse_scale):
    """The mixed criterion ``a SPO / SPO_root + (1 - a) MSE / MSE_root`` (pure at 0 and 1)."""
    if a == 1.0:
        return spo
    if a == 0.0:
        return mse
    return a * spo / spo_scale + (1.0 - a) * mse / mse_scale


@jit(inline="always")
def _better(crit, best, found, tol):
    """Strictly better beyond rounding: ties keep the candidate found first."""
    return (not found) or crit < best - REL_TOL * abs(best) - tol


@jit(inline="always")
def _keep(istate, fstate, crit, thr, f, kind, code, nan_side):
    """Record a candidate split as the node's best so far."""
    fstate[F_BEST_CRIT] = crit
    fstate[F_BEST_THR] = thr
    istate[I_BEST_F] = f
    istate[I_BEST_KIND] = kind
    istate[I_BEST_CAT] = code
    istate[I_BEST_NAN] = nan_side


# ---------------------------------------------------------------- records
class Rows(NamedTuple):
    """The training rows as the growth reads them (see ``FitData``)."""

    XT: np.ndarray  #: (p, n) features, NaN where missing (a feature's values contiguous)
    w: np.ndarray  #: (n,) sample weights
    cnt: np.ndarray  #: (n,) what the minimum leaf size counts
    Cm: np.ndarray  #: (n, d) costs, minimization sense, scaled
    G: np.ndarray  #: (n, K) ``Cm V^T`` on the vertex path, else (n, 0)
    zs: np.ndarray  #: (n,) optimal values z*(c_i), same units
    sq: np.ndarray  #: (n,) squared norms of the rows of Cm
    ab: np.ndarray  #: (n,) sums of the absolute values of the rows of Cm


class Categories(NamedTuple):
    """Categorical features (``None`` in their place when there are none)."""

    codes: np.ndarray  #: (n, p) int codes; missing is ``n_codes[f]``
    is_cat: np.ndarray  #: (p,) bool
    n_codes: np.ndarray  #: (p,) categories per feature
    subsets: bool  #: try every subset (up to ``max_subset`` categories)
    max_subset: int
    mark: np.ndarray  #: bool scratch, one slot per code
    sets: np.ndarray  #: (nodes, max_subset) out: the categories sent left
    n_set: np.ndarray  #: (nodes,) out: how many of ``sets`` are used


class Criterion(NamedTuple):
    """What a sweep minimizes: ``a SPO / spo_scale + (1 - a) MSE / mse_scale``."""

    mode: int  #: ``MODE_*``: how the SPO part is computed
    a: float
    spo_scale: float
    mse_scale: float
    spo_tol: float  #: an SPO loss at most this is zero
    mse_tol: float  #: a squared error at most this is zero
    cmp_tol: float  #: candidates closer than this tie


class Settings(NamedTuple):
    """Stopping rules, admissible splits, and the work between two returns."""

    min_leaf_cnt: float
    min_leaf_w: float
    min_split_cnt: float
    max_depth: int  #: -1: unrestricted
    max_features: int  #: 0: every feature
    n_quantiles: int  #: 0: every threshold
    min_loss_decrease: float
    unit_cost: float  #: work of a candidate per row (budget units)
    solve_cost: float  #: work of one exact solve on the solver path (counted as they run)
    budget: float


class Solver(NamedTuple):
    """A compiled solver (``problems._compiled.solver_function``) and its data."""

    kind: int  #: the ``KIND_*`` code of ``problems._compiled``
    solve: object  #: ``solve(ints, floats, c, w, work, iwork)``, see SOLVER_SIGNATURE
    ints: np.ndarray
    floats: np.ndarray
    work: np.ndarray
    iwork: np.ndarray
    #: For ``KIND_DAG``: the block solver's cost columns, the left children
    #: ``(d, DAG_BLOCK)``, its node scratch ``(n_nodes, DAG_BLOCK)``
    #: and per-column floats ``(4, DAG_BLOCK)`` (left z sums, thresholds, the
    #: children's values); empty for the other kinds.
    blk: np.ndarray
    blk_dist: np.ndarray
    blk_f: np.ndarray
    #: ``ints`` for ``KIND_DAG``, ``KIND_KNAPSACK_DP`` and ``KIND_KNAPSACK_BB``
    #: respectively, None for the other kinds. One kind's own code is written
    #: in a function that takes these as arguments, behind a test ``x is
    #: None`` / ``x is not None`` of its own: numba removes a branch on an
    #: argument that is None before typing it (never one on an argument that
    #: is not), so that code compiles only in fits of that kind. A test on
    #: ``kind``, a number, compiled every kind's code into every fit.
    dag: object
    dp: object
    bb: object


class Requests(NamedTuple):
    """The oracle path's request buffer: row 0 the node, two rows per candidate."""

    req: np.ndarray  #: (rows, d) mean costs to solve
    req_w: np.ndarray  #: (rows,) their weights
    cand_i: np.ndarray  #: (cands, 4) feature, kind, code, missing side
    cand_f: np.ndarray  #: (cands, 3) threshold, children's z sum, MSE part
    resp: np.ndarray  #: (rows,) the optimal values, filled by the driver


class Scratch(NamedTuple):
    """The machine's state between calls, and its work buffers."""

    #: (2, p, m) rows sorted by every feature, per node segment: a node's in
    #: ``order[depth % 2]`` (see partition_segment)
    order: np.ndarray
    go_left: np.ndarray
    #: (2,) uint64: the splitmix64 state, and the state before the node's
    #: feature draw (the oracle path takes a draw back: see PH_SCORE)
    rng: np.ndarray
    perm: np.ndarray
    feats: np.ndarray
    istate: np.ndarray  #: ``I_*`` slots
    fstate: np.ndarray  #: ``F_*`` slots
    cur_S: np.ndarray  #: (d,) the node's cost sum
    cur_G: np.ndarray  #: (K,) the node's G sum
    bufs: np.ndarray  #: (7, max(K, d)) running sums GL, GM, SL, SM, children bl, br, and key
    xs: np.ndarray
    allowed: np.ndarray
    #: (n, d) the costs of the node being swept minus the node's mean, written
    #: per node where a squared-error tree sweeps at least
    #: CENTRE_MIN_FEATURES features there ((0, d) when it never does). On
    #: them a cut costs one sum of squares instead of two (see
    #: sweep_numeric): 21% of a round of SPOBoost on the ICON data (196
    #: features), but 5-13% slower on a 4x4 grid forest sweeping 2 of 5
    #: features per node, where centring is a large share of the work.
    cc: np.ndarray


class Nodes(NamedTuple):
    """The tree being grown, one entry per node."""

    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    nan_left: np.ndarray
    value: np.ndarray
    k_dec: np.ndarray
    decision: np.ndarray
    loss: np.ndarray
    impurity: np.ndarray
    mse_node: np.ndarray
    zsum: np.ndarray
    n_samples: np.ndarray
    wn: np.ndarray
    cn: np.ndarray
    start: np.ndarray
    end: np.ndarray
    depth: np.ndarray
    stack: np.ndarray
    pending: np.ndarray


class Sums(NamedTuple):
    """Weighted sums of a set of rows: weight, count, z, squared norm, G and cost sums."""

    w: float
    c: float
    z: float
    q: float
    G: np.ndarray
    S: np.ndarray


# -------------------------------------------------------------- row sums
@jit(inline="always")
def _add_row(coef, G, S, i, use_G, use_S, G_out, S_out):
    """``G_out += coef * G[i]`` and ``S_out += coef * S[i]``, each where asked."""
    if use_G:
        for k in range(G_out.shape[0]):
            G_out[k] += coef * G[i, k]
    if use_S:
        for j in range(S_out.shape[0]):
            S_out[j] += coef * S[i, j]


@jit(internal=True)
def _sum_rows(idx, lo, hi, rows, use_G, use_S, G_out, S_out):
    """Weighted sums of rows ``idx[lo:hi]``: returns (w, cnt, z, q); G and cost sums into
    ``G_out`` and ``S_out`` (when asked; zeroed otherwise)."""
    # Arrays taken out of the record once: a record field read in a loop
    # costs a reference count update per iteration.
    G, Cm, w, cnt, zs, sq = rows.G, rows.Cm, rows.w, rows.cnt, rows.zs, rows.sq
    for k in range(G_out.shape[0]):
        G_out[k] = 0.0
    for j in range(S_out.shape[0]):
        S_out[j] = 0.0
    wsum = 0.0
    csum = 0.0
    z = 0.0
    q = 0.0
    for a in range(lo, hi):
        i = idx[a]
        wi = w[i]
        wsum += wi
        csum += cnt[i]
        z += wi * zs[i]
        q += wi * sq[i]
        _add_row(wi, G, Cm, i, use_G, use_S, G_out, S_out)
    return wsum, csum, z, q


# ------------------------------------------------------------- candidates
# The functions run per candidate are compiled without reference counting
# (``_nrt=False``): they allocate nothing, and otherwise every read of an
# array field of a record (the node's sums, the solver's data) costs atomic
# reference count updates per candidate, a third of a small solve's time.
@jit(inline="always")
def _big_enough(c, w, st):
    """The minimum leaf size, in count and in weight, of one child.

    A child's weight is a difference of sums (the node's less the left
    child's); where the weights span more than 2**53 it can round to 0 with
    rows in the child, and such a split is not scored (its squared error
    divides by that weight).
    """
    return c >= st.min_leaf_cnt and w >= st.min_leaf_w and w > 0.0


@jit(inline="always", _nrt=False)
def _vertex_spo(T_G, GL, GM, use_m, zl, zr, spo_tol):
    """Children's SPO loss on the vertex path: ``min_k`` of the running sums of G."""
    gl = np.inf
    gr = np.inf
    for k in range(T_G.shape[0]):
        v = GL[k] + GM[k] if use_m else GL[k]
        if v < gl:
            gl = v
        r = T_G[k] - v
        if r < gr:
            gr = r
    spo = (gl - zl) + (gr - zr)
    return spo if spo > spo_tol else 0.0


@jit(_nrt=False, internal=True)
def _knapsack_value(dp, solver, b, nowv, r):
    """A knapsack kind's optimal value at ``b``: the one-resource DP
    (``dp``, see :class:`Solver`) called directly (through the function
    pointer it cost 2.4 us, 1.6 us here), reduced to a few items by the
    relaxation's multiplier ``r`` at ``b`` (``_knapsack_dp_value_at``)."""
    if dp is not None:
        return _knapsack_dp_value_at(dp, solver.floats, b, solver.work, solver.iwork, r)
    return solver.solve(solver.ints, solver.floats, b, nowv, solver.work, solver.iwork)


@jit(internal=True)
def _relaxation(dp, bb, solver, c, hint, key):
    """``(bound, multiplier)`` of the knapsacks' LP relaxation at ``c``: the
    one-resource one warm-started from ``hint`` (``relaxation_min_warm``),
    that of several resources (``relaxation_min``); ``(-inf, 0)`` for the
    other kinds, which have no bound. The kind is told by ``dp`` and ``bb``
    (see :class:`Solver`), so a fit compiles its own kind's bound alone."""
    if dp is not None:
        return _knapsack_dp_bound_warm(dp, solver.floats, c, hint, key)
    if bb is not None:
        return _knapsack_bb_bound(bb, solver.floats, c, solver.work, solver.iwork)
    return -np.inf, 0.0


@jit(internal=True)
def _node_multiplier(dp, bb, solver, c):
    """The multiplier of ``relaxation_min`` at the node's cost sum ``c`` (0
    for kinds without bounds), compiled for the fit's kind alone."""
    if dp is not None:
        return _knapsack_dp_bound(dp, c, solver.work, solver.iwork)[1]
    if bb is not None:
        return _knapsack_bb_bound(bb, solver.floats, c, solver.work, solver.iwork)[1]
    return 0.0


@jit(_nrt=False, internal=True)
def _solver_spo(solver, dp, bb, bl, br, zl, zr, spo_tol, cutoff, lam_l, lam_r, lam_nb, warm,
                mono, fstate, margin0, lw, rw):
    """Children's SPO loss from the compiled solver on their cost sums ``bl`` and ``br``.

    A candidate whose SPO loss is at least ``cutoff`` cannot become the
    node's best split, so a bound proving that stands in for the exact
    value: the contract is "the exact loss, or any value >= cutoff, or NaN
    when the solver gave up". Here such a candidate gets +inf.

    Lower bounds on each child's optimal value are tried before the exact
    solves, cheapest first, with a margin for rounding, so the split chosen
    is the one exhaustive search chooses: the Lagrangian bound (O(d)) at the
    multipliers ``lam_l``, ``lam_r`` (the node's, scaled to each child) and
    ``lam_nb[:2]`` (those of the last children whose relaxation was solved,
    updated here, scaled from their weights, kept in ``lam_nb[3:5]``, to
    these children's ``lw``, ``rw``: a child's costs, and so its critical
    ratio, grow about as its weight, and unscaled they left twice as many
    candidates to the relaxations on ICON); then the
    LP relaxation (each child's from its critical item at the previous
    candidate, kept in ``warm``: see ``relaxation_min_warm``); then the left
    child exactly with the right child's bound. Each exact solve is counted
    in ``fstate[F_SOLVES]`` (the work budget's account). The path kinds have
    no bounds (a solve costs about what a bound would) and are solved exactly.

    ``mono``: the left child holds the rows of every earlier ``mono``
    candidate of this sweep (a numeric threshold, the missing rows right). A
    child's SPO loss never decreases when rows are added (for minimization
    ``z*(a + b) >= z*(a) + z*(b)`` and ``z*(w c) = w z*(c)``), so the largest
    lower bound (or exact value) found for such a left child's loss, kept in
    ``lam_nb[2]``, bounds this left child's loss from below, and the loss of
    every later candidate of the sweep (their left children hold its rows):
    the sweep stops once it reaches the best criterion (see sweep_numeric).

    ``margin0 >= 0``: the caller already tried the Lagrangian bounds at these
    multipliers against this cutoff (they failed, and ``lam_nb[2]`` holds
    their left floor); ``margin0`` is their sum of ``|bl| + |br|``.

    ``dp`` and ``bb`` are ``solver.dp`` and ``solver.bb`` (see
    :class:`Solver`): the bounds are compiled for the knapsack kinds alone,
    each kind's own.
    """
    nowv = bl[:0]
    ints, floats = solver.ints, solver.floats
    work, iwork = solver.work, solver.iwork
    if cutoff <= 0.0:
        # Losses are never negative: this candidate can only tie.
        return np.inf
    if cutoff < np.inf and (dp is not None or bb is not None):
        # Each child's loss z*(b) - z is at least its bound's excess (and 0).
        if margin0 >= 0.0:
            # Computed and failed in the caller: the same test again would fail.
            margin = margin0
            ll = -np.inf
            lr = -np.inf
        elif dp is not None:
            ll, lr, margin = knapsack_dp_child_bounds(dp, floats, bl, br, lam_l,
                                                      _scaled(lam_nb, 0, lw), lam_r,
                                                      _scaled(lam_nb, 1, rw))
        elif bb is not None:
            margin = 0.0
            for j in range(bl.shape[0]):
                margin += abs(bl[j]) + abs(br[j])
            ll = max(_lagrangian_bb(bb, floats, bl, lam_l),
                     _lagrangian_bb(bb, floats, bl, _scaled(lam_nb, 0, lw)))
            lr = max(_lagrangian_bb(bb, floats, br, lam_r),
                     _lagrangian_bb(bb, floats, br, _scaled(lam_nb, 1, rw)))
        else:
            # Never (one of dp, bb holds an array here); numba prunes a
            # branch on an argument that is None only, so each kind's code
            # is behind its own test.
            margin = 0.0
            ll = lr = -np.inf
        need = cutoff + 1e-9 * margin + spo_tol
        floor_l = lam_nb[2] if mono else 0.0
        ll -= zl
        lr -= zr
        if mono and ll > floor_l:
            lam_nb[2] = ll
        if margin0 < 0.0 and max(ll, floor_l) + max(lr, 0.0) >= need:
            return np.inf
        hint, key = warm
        lr, lam_nb[1] = _relaxation(dp, bb, solver, br, hint[1:], key)
        lam_nb[4] = rw
        lr = max(lr - zr, 0.0)
        if floor_l + lr >= need:
            return np.inf
        ll, lam_nb[0] = _relaxation(dp, bb, solver, bl, hint[:1], key)
        lam_nb[3] = lw
        ll = max(ll - zl, floor_l)
        if mono:
            lam_nb[2] = ll
        if ll + lr >= need:
            return np.inf
        fstate[F_SOLVES] += 1.0
        gl = _knapsack_value(dp, solver, bl, nowv, lam_nb[0])
        if np.isnan(gl):
            return np.nan
        if mono:
            lam_nb[2] = gl - zl
        if (gl - zl) + lr >= need:
            return np.inf
        fstate[F_SOLVES] += 1.0
        gr = _knapsack_value(dp, solver, br, nowv, lam_nb[1])
        if np.isnan(gr):
            return np.nan
        spo = (gl - zl) + (gr - zr)
        return spo if spo > spo_tol else 0.0
    fstate[F_SOLVES] += 2.0
    gl = solver.solve(ints, floats, bl, nowv, work, iwork)
    gr = solver.solve(ints, floats, br, nowv, work, iwork)
    if np.isnan(gl) or np.isnan(gr):
        return np.nan
    if mono:
        lam_nb[2] = gl - zl
    spo = (gl - zl) + (gr - zr)
    return spo if spo > spo_tol else 0.0


@jit(inline="always", _nrt=False)
def _scaled(lam_nb, k, w):
    """The last relaxed child's multiplier ``lam_nb[k]`` scaled to a child of
    weight ``w`` (its weight in ``lam_nb[3 + k]``; 0: none yet)."""
    wk = lam_nb[3 + k]
    return lam_nb[k] * (w / wk) if wk > 0.0 else lam_nb[k]


@jit(_nrt=False, internal=True)
def _queue(reqs, istate, bl, br, lw, rw, zsum, mse_part, f, split_kind, code, thr,
           nan_left):
    """Queue a candidate for the batched oracle: its children's mean costs."""
    j = istate[I_NCAND]
    r = 1 + 2 * j
    req = reqs.req
    for t in range(bl.shape[0]):
        req[r, t] = bl[t] / lw
        req[r + 1, t] = br[t] / rw
    reqs.req_w[r] = lw
    reqs.req_w[r + 1] = rw
    reqs.cand_i[j, 0] = f
    reqs.cand_i[j, 1] = split_kind
    reqs.cand_i[j, 2] = code
    reqs.cand_i[j, 3] = nan_left
    reqs.cand_f[j, 0] = thr
    reqs.cand_f[j, 1] = zsum
    reqs.cand_f[j, 2] = mse_part
    istate[I_NCAND] = j + 1


@jit(_nrt=False, internal=True)
def _candidate(cr, st, solver, reqs, T, M, wL, cL, zL, qL, GL, SL, use_m, f, split_kind,
               code, thr, nan_opt, bl, br, istate, fstate, lam, lam_nb, warm, margin0):
    """Score one candidate split; keep it in ``istate``/``fstate`` if it is the best so far.

    The left child holds the rows summed in ``wL, cL, zL, qL, GL, SL``
    (weight, count, z, squared norms, G and costs), plus those in ``M`` (the
    rows missing the feature) when ``use_m``; the right child the rest of
    the node ``T``. On the oracle path the candidate is queued instead.
    Returns False when the compiled solver gave up (the driver then regrows
    the tree on the oracle path). ``lam`` and ``lam_nb`` are the node's
    multiplier and the last children's, ``warm`` the children's critical items,
    for the solver path's bounds (see ``_solver_spo``, and there ``margin0``:
    -1 unless the caller tried the first bounds).
    """
    lw = wL + M.w if use_m else wL
    lc = cL + M.c if use_m else cL
    rw = T.w - lw
    rc = T.c - lc
    if not (_big_enough(lc, lw, st) and _big_enough(rc, rw, st)):
        return True
    zl = zL + M.z if use_m else zL
    zr = T.z - zl
    a = cr.a
    mse = 0.0
    if a < 1.0 or cr.mode != MODE_VERTEX:
        # The children's cost sums, and their squared errors.
        TS, SM = T.S, M.S
        for j in range(bl.shape[0]):
            v = SL[j] + SM[j] if use_m else SL[j]
            bl[j] = v
            br[j] = TS[j] - v
        if a < 1.0:
            # Their squared norms in a loop of their own: the sums' order
            # keeps the loop above from vectorizing (a fifth of a pure-SPO
            # candidate's time past the first bounds, on ICON).
            nl = 0.0
            nr = 0.0
            for j in range(bl.shape[0]):
                nl += bl[j] * bl[j]
                nr += br[j] * br[j]
            ql = qL + M.q if use_m else qL
            mse = (ql - nl / lw) + (T.q - ql - nr / rw)
            # Within rounding of zero is zero, so that such candidates tie.
            if not mse > cr.mse_tol:
                mse = 0.0
    if reqs is not None and a > 0.0:
        mse_part = 0.0 if a == 1.0 else (1.0 - a) * mse / cr.mse_scale
        _queue(reqs, istate, bl, br, lw, rw, zl + zr, mse_part, f, split_kind, code, thr,
               nan_opt)
        return True
    found = istate[I_BEST_F] >= 0
    best = fstate[F_BEST_CRIT]
    spo = 0.0
    if a > 0.0:
        if solver is None:
            spo = _vertex_spo(T.G, GL, M.G, use_m, zl, zr, cr.spo_tol)
        else:
            cutoff = np.inf
            if found:
                cutoff = best if a == 1.0 else (
                    (best - (1.0 - a) * mse / cr.mse_scale) * cr.spo_scale / a)
            mono = split_kind == SPLIT_NUMERIC and not use_m
            spo = _solver_spo(solver, solver.dp, solver.bb, bl, br, zl, zr, cr.spo_tol, cutoff,
                              lam * lw / T.w, lam * rw / T.w, lam_nb, warm, mono, fstate,
                              margin0, lw, rw)
            if np.isnan(spo):
                return False
    crit = combine(a, spo, mse, cr.spo_scale, cr.mse_scale)
    if _better(crit, best, found, cr.cmp_tol):
        _keep(istate, fstate, crit, thr, f, split_kind, code, nan_opt)
    return True


@jit(_nrt=False, internal=True)
def _both_sides(n_opt, last, has_m, cr, st, solver, reqs, T, M, wL, cL, zL, qL, GL, SL, f,
                split_kind, code, thr, bl, br, istate, fstate, lam, lam_nb, warm, margin0):
    """:func:`_candidate` with the missing rows right, then (``n_opt = 2``) left.

    The present/missing split (``last``) sends them right. Returns False,
    and flags ``I_FAILED``, when the compiled solver gave up.
    """
    for opt in range(n_opt):
        nan_opt = NAN_RIGHT if last else (opt if has_m else NAN_UNSEEN)
        if not _candidate(cr, st, solver, reqs, T, M, wL, cL, zL, qL, GL, SL, opt == 1, f,
                          split_kind, code, thr, nan_opt, bl, br, istate, fstate, lam, lam_nb,
                          warm, margin0 if opt == 0 else -1.0):
            istate[I_FAILED] = 1
            return False
    return True


@jit(internal=True)
def _bound_multipliers(solver, cr, T, istate, fstate, bufs):
    """The node's multiplier for its children's Lagrangian bounds (the LP
    relaxation's at the node's cost sum, ``fstate[F_LAM]``, computed when the
    node is popped; 0 without bounds), and the slots of
    the last children's multipliers, and the children's critical items for
    the warm-started relaxation (see ``_solver_spo``)."""
    # Views of the machine's state, not new arrays: three allocations per
    # sweep were a tenth of a sweep's time on the Uber network.
    # The last children's multipliers, the last "mono" left child's loss (0
    # bounds every loss), the weights of those children (0: none yet; see
    # _solver_spo).
    lam_nb = fstate[F_NB:F_NB + 5]
    lam_nb[:] = 0.0
    lam = 0.0
    # Each child's critical item at its last relaxation (-1: none yet).
    hint = istate[I_HINT:I_HINT + 2]
    hint[:] = -1
    key = bufs[6, :T.S.shape[0]]
    if solver is not None and cr.a > 0.0:
        lam = fstate[F_LAM]
    return lam, lam_nb, (hint, key)


@jit(internal=True)
def _sweep_setup(rows, cr, bufs):
    """A sweep's flags and zeroed running sums.

    Returns ``use_G`` (the SPO part from running sums of G), ``use_S`` (the
    children's cost sums are needed), the running sums of G and of the costs
    left of the cut (``GL``, ``SL``) and of the missing rows (``GM``,
    ``SM``), and the children's cost sums ``bl``, ``br``.
    """
    K = rows.G.shape[1]
    d = rows.Cm.shape[1]
    bufs[:4] = 0.0
    use_G = cr.mode == MODE_VERTEX and cr.a > 0.0
    use_S = cr.a < 1.0 or cr.mode != MODE_VERTEX
    return (use_G, use_S, bufs[0, :K], bufs[1, :K], bufs[2, :d], bufs[3, :d], bufs[4, :d],
            bufs[5, :d])


@jit(_nrt=False, internal=True)
def _dp_cut_bounds(dp, wf, SL, TS, lam_l, lam_l2, lam_r, lam_r2):
    """``knapsack_dp_cut_bounds`` on the one-resource knapsack ``dp``
    (``solver.dp``, its weights as floats ``wf``); with ``dp`` None (never called then) nothing is
    compiled, and no bound. numba prunes a branch on an argument that is
    None, never on one that is not: the code of each kind stands behind a
    test of its own argument."""
    if dp is None:
        return -np.inf, -np.inf, 0.0
    return knapsack_dp_cut_bounds(dp, wf, SL, TS, lam_l, lam_l2, lam_r, lam_r2)


@jit(_nrt=False, internal=True)
def _past_best(lam_nb, margin, istate, fstate):
    """The sweep's left-child loss bound ``lam_nb[2]`` is beyond the best criterion."""
    return istate[I_BEST_F] >= 0 and lam_nb[2] >= fstate[F_BEST_CRIT] + margin


@jit(_nrt=False, internal=True)
def _flush_dag(dag, solver, nblk, T, spo_tol, cmp_tol, f, lam_nb, istate, fstate):
    """Score the ``nblk`` thresholds queued in ``solver.blk`` (pure SPO, DAG kind).

    Both children of up to ``DAG_BLOCK`` consecutive thresholds are solved by
    the block solver, then scored in sweep order exactly as :func:`_candidate`
    scores them one by one (same values to the last bit, same ties). Returns
    False, and flags ``I_FAILED``, when a value is NaN (the scalar path's
    "solver gave up"). ``dag`` is ``solver.dag``: None for the other kinds,
    which never queue (and then the block solver is not compiled).
    """
    if dag is None:
        return True
    bf = solver.blk_f
    dag_min_block(dag, solver.blk, solver.blk_dist, bf[2])
    # The right children: T.S minus the left ones, formed in the solver (one
    # subtraction per lane, the same as writing them out first).
    dag_min_block(dag, solver.blk, solver.blk_dist, bf[3], T.S)
    # The work budget's account: a vector solved in a block costs about a
    # quarter of a scalar solve.
    fstate[F_SOLVES] += 0.5 * nblk
    for k in range(nblk):
        gl = bf[2, k]
        gr = bf[3, k]
        if np.isnan(gl) or np.isnan(gr):
            istate[I_FAILED] = 1
            return False
        zl = bf[0, k]
        spo = (gl - zl) + (gr - (T.z - zl))
        crit = spo if spo > spo_tol else 0.0
        if _better(crit, fstate[F_BEST_CRIT], istate[I_BEST_F] >= 0, cmp_tol):
            _keep(istate, fstate, crit, bf[1, k], f, np.int64(SPLIT_NUMERIC), np.int64(-1),
                  np.int64(NAN_UNSEEN))
    # The last left child's loss bounds every later candidate's (see _solver_spo).
    lam_nb[2] = bf[2, nblk - 1] - bf[0, nblk - 1]
    return True


@jit(internal=True)
def sweep_numeric(f, seg, rows, cr, st, solver, reqs, T, bufs, xs, allowed, cc, istate, fstate):
    """All admissible thresholds of numeric feature f on a node (rows ``seg``, sorted).

    Rows whose value is missing (NaN) sit at the end of ``seg``; each
    threshold is tried with them on the right, then on the left, and the
    split "every present value left, missing right" (threshold +inf) is
    tried last. The best candidate goes to ``istate``/``fstate`` (or, on the
    oracle path, every candidate to the request buffer).
    """
    m = seg.shape[0]
    # Arrays out of the records once (a field read in a loop costs a
    # reference count update per iteration).
    G, Cm, w, cnt, zs, sq = rows.G, rows.Cm, rows.w, rows.cnt, rows.zs, rows.sq
    # The feature's values in one row of XT: the sweep reads them in the
    # node's sorted order, and a feature of X (a column) had a cache line
    # per row (X of ICON or the Uber data is about 1 MB).
    x = rows.XT[f]
    TG, TS = T.G, T.S
    K = G.shape[1]
    d = Cm.shape[1]
    a = cr.a
    use_G, use_S, GL, GM, SL, SM, bl, br = _sweep_setup(rows, cr, bufs)
    lam, lam_nb, warm = _bound_multipliers(solver, cr, T, istate, fstate, bufs)
    mn = m
    while mn > 0 and np.isnan(x[seg[mn - 1]]):
        mn -= 1
    # Sums of the rows missing this feature (GM and SM are zeroed above;
    # with none missing, a call passing the records cost a tenth of the
    # set-up on the Uber network).
    wM = cM = zM = qM = 0.0
    if mn < m:
        wM, cM, zM, qM = _sum_rows(seg, mn, m, rows, use_G, use_S, GM, SM)
    M = Sums(wM, cM, zM, qM, GM, SM)
    has_m = cM > 0.0
    if mn == 0:
        return
    for t in range(mn):
        xs[t] = x[seg[t]]
    varies = xs[0] != xs[mn - 1]
    if varies:
        allowed_positions(xs, mn, st.n_quantiles, allowed)
    # Typed int64, not as constants (numba compiles a callee again for a
    # constant argument).
    numeric, no_code, unseen = np.int64(SPLIT_NUMERIC), np.int64(-1), np.int64(NAN_UNSEEN)
    fast = cr.mode == MODE_VERTEX and a == 1.0 and not has_m
    fast_mse = a == 0.0 and not has_m
    centred = fast_mse and istate[I_CENTRED] == 1
    # Pure SPO on a DAG, nothing missing: no bound applies (a bound costs
    # what a solve does), so every admissible threshold is solved; they are
    # queued and solved DAG_BLOCK at a time (see _flush_dag).
    blocked = False
    if solver is not None:
        blocked = solver.kind == KIND_DAG and a == 1.0 and not has_m and reqs is None
    # Pure SPO on the one-resource knapsack, nothing missing: the first
    # bounds of _solver_spo inline (see below).
    knap = False
    # The solver's arrays out of the record once (a field read per candidate
    # costs reference count updates); placeholders of the same types without
    # a solver, never read then.
    blk = blk_f = bufs
    wf = xs
    if solver is not None:
        wf = solver.floats
        knap = (solver.kind == KIND_KNAPSACK_DP and a == 1.0 and not has_m
                and reqs is None)
        blk = solver.blk
        blk_f = solver.blk_f
    if (fast or fast_mse or blocked or knap) and not varies:
        return
    nblk = 0
    # Pure SPO on the solver path: the sweep stops once a lower bound on the
    # left child's loss reaches the best criterion (every later candidate's
    # left child holds those rows), with a margin for rounding: 1e-9 of a
    # bound on the children's sums of |costs| (as _solver_spo's).
    stop = solver is not None and a == 1.0 and reqs is None
    stop_margin = 2e-9 * fstate[F_ABS] + cr.spo_tol
    wL = cL = zL = qL = 0.0
    qcT = fstate[F_QC]
    # Positions 0..mn-2 cut between present values; position mn-1 (with
    # missing rows only) is the present/missing split.
    for p in range(mn):
        last = p == mn - 1
        if last and not has_m:
            break
        i = seg[p]
        wi = w[i]
        wL += wi
        cL += cnt[i]
        zL += wi * zs[i]
        qL += wi * sq[i]
        right_ok = _big_enough(T.c - cL, T.w - wL, st)
        if blocked and not last:
            for j in range(d):
                SL[j] += wi * Cm[i, j]
            if solver is None:  # never: blocked needs a solver (numba prunes this)
                pass
            elif (allowed[p] and xs[p] != xs[p + 1] and right_ok
                    and _big_enough(cL, wL, st)):
                # The left child's sums only: the block solver forms the
                # right child's as TS - SL itself (see _flush_dag).
                for j in range(d):
                    blk[j, nblk] = SL[j]
                blk_f[0, nblk] = zL
                blk_f[1, nblk] = midpoint(xs[p], xs[p + 1])
                nblk += 1
                if nblk == DAG_BLOCK:
                    if not _flush_dag(solver.dag, solver, nblk, T, cr.spo_tol, cr.cmp_tol, f,
                                      lam_nb, istate, fstate):
                        return
                    nblk = 0
                    if _past_best(lam_nb, stop_margin, istate, fstate):
                        return
            elif not right_ok:
                break
            continue
        if knap and not last:
            # As _candidate, with the first bounds inline: most candidates
            # stop there, and a call per candidate cost as much as the bounds.
            for j in range(d):
                SL[j] += wi * Cm[i, j]
            if solver is None:  # never: knap needs a solver (numba prunes this)
                pass
            elif (allowed[p] and xs[p] != xs[p + 1] and right_ok
                    and _big_enough(cL, wL, st)):
                pruned = False
                # The bounds' sum of |costs| once tried (_solver_spo then
                # skips them), -1 before.
                margin = -1.0
                if istate[I_BEST_F] >= 0:
                    best = fstate[F_BEST_CRIT]
                    pruned = best <= 0.0
                    if not pruned:
                        # Read from the running sums: the children's sums
                        # are written (by _candidate) only past these bounds.
                        ll, lr, margin = _dp_cut_bounds(
                            solver.dp, wf, SL, TS, lam * wL / T.w, _scaled(lam_nb, 0, wL),
                            lam * (T.w - wL) / T.w, _scaled(lam_nb, 1, T.w - wL))
                        ll -= zL
                        lr -= T.z - zL
                        floor_l = lam_nb[2]
                        if ll > floor_l:
                            lam_nb[2] = ll
                        pruned = (max(ll, floor_l) + max(lr, 0.0)
                                  >= best + 1e-9 * margin + cr.spo_tol)
                if not pruned:
                    # Typed arguments, not constants (last and has_m are False
                    # here): literals would compile a second _both_sides.
                    if not _both_sides(np.int64(1), last, has_m, cr, st, solver, reqs, T, M,
                                       wL, cL, zL, qL, GL, SL, f, numeric, no_code,
                                       midpoint(xs[p], xs[p + 1]), bl, br, istate, fstate,
                                       lam, lam_nb, warm, margin):
                        return
                if _past_best(lam_nb, stop_margin, istate, fstate):
                    return
            elif not right_ok:
                break
            continue
        if (fast or fast_mse) and not last:
            # The common cases, nothing missing and a pure criterion (SPO on
            # the vertex path, or squared error): the sums are updated and
            # the cut scored in one pass where it is admissible, as CART
            # updates its sums. Same result as _candidate.
            score = (allowed[p] and xs[p] != xs[p + 1] and right_ok
                     and _big_enough(cL, wL, st))
            if fast and score:
                gl = np.inf
                gr = np.inf
                for k in range(K):
                    v = GL[k] + wi * G[i, k]
                    GL[k] = v
                    if v < gl:
                        gl = v
                    r = TG[k] - v
                    if r < gr:
                        gr = r
                crit = (gl - zL) + (gr - (T.z - zL))
                if not crit > cr.spo_tol:
                    crit = 0.0
            elif score and centred:
                # On the node's centred costs (cc) the children's sums are
                # opposite, so the two children's squared errors are the
                # node's less |SL|^2 (1/wL + 1/wR): one sum of squares per
                # cost instead of two, and no difference of the costs' own
                # squares (which cancel where costs sit far from zero).
                nl = 0.0
                for j in range(d):
                    v = SL[j] + wi * cc[i, j]
                    SL[j] = v
                    nl += v * v
                crit = qcT - nl * (1.0 / wL + 1.0 / (T.w - wL))
                if not crit > cr.mse_tol:
                    crit = 0.0
            elif score:
                nl = 0.0
                nr = 0.0
                for j in range(d):
                    v = SL[j] + wi * Cm[i, j]
                    SL[j] = v
                    nl += v * v
                    r = TS[j] - v
                    nr += r * r
                crit = (qL - nl / wL) + (T.q - qL - nr / (T.w - wL))
                if not crit > cr.mse_tol:
                    crit = 0.0
            else:
                crit = np.inf
                if fast:
                    for k in range(K):
                        GL[k] += wi * G[i, k]
                elif centred:
                    for j in range(d):
                        SL[j] += wi * cc[i, j]
                else:
                    for j in range(d):
                        SL[j] += wi * Cm[i, j]
                if not right_ok:
                    break
            if score and _better(crit, fstate[F_BEST_CRIT], istate[I_BEST_F] >= 0,
                                 cr.cmp_tol):
                _keep(istate, fstate, crit, midpoint(xs[p], xs[p + 1]), f, numeric, no_code,
                      unseen)
            continue
        if use_G:
            for k in range(K):
                GL[k] += wi * G[i, k]
        if use_S:
            for j in range(d):
                SL[j] += wi * Cm[i, j]
        if last:
            n_opt = 1
            thr = np.inf
            split_kind = SPLIT_MISSING
        elif not varies:
            continue
        else:
            # The right child is largest with the missing rows on it.
            if not right_ok:
                if has_m:
                    # Skip to the present/missing split.
                    continue
                break
            if not allowed[p] or xs[p] == xs[p + 1]:
                continue
            n_opt = 2 if has_m else 1
            thr = midpoint(xs[p], xs[p + 1])
            split_kind = SPLIT_NUMERIC
        if not _both_sides(n_opt, last, has_m, cr, st, solver, reqs, T, M, wL, cL, zL, qL, GL,
                           SL, f, split_kind, no_code, thr, bl, br, istate, fstate, lam, lam_nb,
                           warm, -1.0):
            return
        if stop and _past_best(lam_nb, stop_margin, istate, fstate):
            return
    if solver is not None:
        if nblk > 0:
            _flush_dag(solver.dag, solver, nblk, T, cr.spo_tol, cr.cmp_tol, f, lam_nb, istate,
                       fstate)


@jit(internal=True)
def _category_blocks(seg, codes_f, n_codes_f):
    """Start of every block of equal codes in ``seg`` (sorted by code, missing last)."""
    m = seg.shape[0]
    starts = np.empty(m + 1, dtype=np.int64)
    nb = 0
    prev = -1
    for t in range(m):
        c = codes_f[seg[t]]
        if c != prev:
            starts[nb] = t
            nb += 1
            prev = c
    starts[nb] = m
    return starts, nb


@jit(internal=True)
def _move_block(sgn, b, bs, bG, bS, use_G, use_S, wL, cL, zL, qL, GL, SL):
    """Add (``sgn = 1``) or remove (``-1``) category block ``b`` to the left sums."""
    _add_row(sgn, bG, bS, b, use_G, use_S, GL, SL)
    return wL + sgn * bs[b, 0], cL + sgn * bs[b, 1], zL + sgn * bs[b, 2], qL + sgn * bs[b, 3]


@jit(internal=True)
def sweep_categorical(f, seg, rows, cats, cr, st, solver, reqs, T, bufs, istate, fstate):
    """Category splits of feature f: one category left, or every subset (Gray-code order).

    With ``subsets`` and at most ``max_subset`` categories present, every
    split up to swapping sides is tried (the last present category stays
    right), each subset reached from the previous one by moving one
    category. Otherwise each category in turn goes left alone. Missing rows
    (code ``n_codes[f]``) are tried on either side, and "every category
    left, missing right" last.
    """
    m = seg.shape[0]
    K = rows.G.shape[1]
    d = rows.Cm.shape[1]
    use_G, use_S, GL, GM, SL, SM, bl, br = _sweep_setup(rows, cr, bufs)
    lam, lam_nb, warm = _bound_multipliers(solver, cr, T, istate, fstate, bufs)
    codes_f = cats.codes[:, f]
    miss = cats.n_codes[f]
    starts, nb = _category_blocks(seg, codes_f, miss)
    has_m = codes_f[seg[m - 1]] == miss
    r_cat = nb - 1 if has_m else nb  # present categories
    # Sums of every block (w, count, z, q; G; costs).
    bs = np.zeros((nb, 4))
    bG = np.zeros((nb, K if use_G else 0))
    bS = np.zeros((nb, d if use_S else 0))
    for b in range(nb):
        bs[b, 0], bs[b, 1], bs[b, 2], bs[b, 3] = _sum_rows(seg, starts[b], starts[b + 1], rows,
                                                           use_G, use_S, bG[b], bS[b])
    wM = cM = zM = qM = 0.0
    if has_m:
        wM, cM, zM, qM = _move_block(1.0, nb - 1, bs, bG, bS, use_G, use_S, wM, cM, zM, qM,
                                     GM, SM)
    M = Sums(wM, cM, zM, qM, GM, SM)
    use_subsets = cats.subsets and r_cat <= cats.max_subset
    if r_cat >= 2:
        n_iter = (1 << (r_cat - 1)) - 1 if use_subsets else r_cat
    else:
        n_iter = 0
    wL = cL = zL = qL = 0.0
    gray_prev = 0
    # Iterations 0..n_iter-1 are the category splits; the last one, with
    # every present category left, is the present/missing split.
    for it in range(n_iter + 1):
        last = it == n_iter
        if last:
            if not (has_m and r_cat >= 1):
                break
            wL = T.w - wM
            cL = T.c - cM
            zL = T.z - zM
            qL = T.q - qM
            TG, TS = T.G, T.S
            for k in range(K):
                GL[k] = TG[k] - GM[k]
            for j in range(d):
                SL[j] = TS[j] - SM[j]
            n_opt = 1
            split_kind = SPLIT_MISSING
            code = -1
            thr = np.inf
        else:
            if use_subsets:
                g = (it + 1) ^ ((it + 1) >> 1)
                diff = g ^ gray_prev
                b = 0
                while (diff >> b) & 1 == 0:
                    b += 1
                sgn = 1.0 if (g >> b) & 1 else -1.0
                gray_prev = g
                code = g
                split_kind = SPLIT_CAT_SUBSET
            else:
                # One category alone: take the previous block out first.
                if it > 0:
                    wL, cL, zL, qL = _move_block(-1.0, it - 1, bs, bG, bS, use_G, use_S,
                                                 wL, cL, zL, qL, GL, SL)
                b = it
                sgn = 1.0
                code = codes_f[seg[starts[b]]]
                split_kind = SPLIT_CAT_ONE
            wL, cL, zL, qL = _move_block(sgn, b, bs, bG, bS, use_G, use_S, wL, cL, zL, qL,
                                         GL, SL)
            n_opt = 2 if has_m else 1
            thr = np.nan
        if not _both_sides(n_opt, last, has_m, cr, st, solver, reqs, T, M, wL, cL, zL, qL, GL,
                           SL, f, split_kind, code, thr, bl, br, istate, fstate, lam, lam_nb,
                           warm, -1.0):
            return


@jit(internal=True)
def max_candidates(order, s, e, feats, nfeat, cats, n_quantiles):
    """Upper bound on the candidates a node's sweep can queue (oracle mode)."""
    m = e - s
    total = 0
    for t in range(nfeat):
        f = feats[t]
        if cats is not None and cats.is_cat[f]:
            seg = order[f, s:e]
            _, nb = _category_blocks(seg, cats.codes[:, f], cats.n_codes[f])
            if cats.subsets and nb <= cats.max_subset + 1:
                n = (1 << nb) if nb < 62 else m
            else:
                n = nb
            total += 2 * n + 1
        else:
            n = m - 1 if n_quantiles <= 0 else min(m - 1, n_quantiles)
            total += 2 * max(n, 0) + 1
    return total


# ------------------------------------------------------------ partition
@jit
def filter_order(order, active, m):
    """``order`` (p, n) with only the rows marked ``active`` kept, in order, in
    ``out[0]`` of a new ``out`` (2, p, m); ``out[1]`` is scratch (see
    :func:`partition_segment`)."""
    p, n = order.shape
    # Branch-free, as partition_segment: every row is written and the cursor
    # moved by its flag. A row written past feature f's m kept ones lands on
    # feature f + 1's first slot, written again later (the last feature's on
    # out[1], scratch).
    flat = np.empty(2 * p * m + 1, dtype=order.dtype)
    for f in range(p):
        k = f * m
        for t in range(n):
            i = order[f, t]
            flat[k] = i
            k += np.int64(active[i])
    return flat[:2 * p * m].reshape((2, p, m))


@jit
def partition_segment(src, dst, s, e, go_left):
    """Stable partition of every feature's segment ``src[f, s:e]`` into ``dst[f, s:e]``:
    the rows with ``go_left`` first. Returns their number.

    The growth keeps two copies of the sorted rows and a node's children in
    the other copy than the node (by the parity of the depth: the segment
    there belonged to the node's parent, done with), so that every row is
    written once, at its place: in place, the right rows went through a
    buffer and were copied back (a quarter more time on the Uber data).
    """
    p = src.shape[0]
    n_left = 0
    for t in range(s, e):
        n_left += np.int64(go_left[src[0, t]])
    for f in range(p):
        a = s
        b = s + n_left
        # Branch-free (the destination picked by arithmetic, the cursors
        # moved by the row's side): the side of a row is unpredictable, and
        # a mispredicted branch per row was most of this loop's time.
        for t in range(s, e):
            i = src[f, t]
            g = np.int64(go_left[i])
            dst[f, b + g * (a - b)] = i
            a += g
            b += 1 - g
    return n_left


@jit(internal=True)
def _mark_split(order0, s, e, XT, cats, f, split_kind, thr, nan_left, go_left):
    if cats is not None and (split_kind == SPLIT_CAT_ONE or split_kind == SPLIT_CAT_SUBSET):
        miss = cats.n_codes[f]
        codes, mark = cats.codes, cats.mark
        for t in range(s, e):
            i = order0[t]
            c = codes[i, f]
            go_left[i] = nan_left == 1 if c == miss else mark[c]
        return
    # The missing split of a categorical feature is "x <= inf" too: every
    # present category left.
    xf = XT[f]
    for t in range(s, e):
        i = order0[t]
        x = xf[i]
        go_left[i] = nan_left == 1 if np.isnan(x) else x <= thr


# ------------------------------------------------------------- the machine
@jit
def grow_step(rows, cats, crit, st, solver, reqs, sc, nodes):
    """Grow the tree until it is done, the work budget is spent, or the oracle is needed.

    Returns one of ``ST_DONE``, ``ST_BUDGET``, ``ST_ORACLE``, ``ST_SPACE``,
    ``ST_SOLVER_FAILED``; all progress lives in the arrays, so calling again
    resumes.

    Three records are None where a fit does not use them, and the code that
    reads them is then not compiled (numba prunes ``x is None`` branches on
    the argument's type): ``cats`` when no feature is categorical,
    ``solver`` except on the compiled-solver path, ``reqs`` except on the
    oracle path with an SPO part. So a fit compiles only its own path.
    """
    p = rows.XT.shape[0]
    d = rows.Cm.shape[1]
    K = rows.G.shape[1]
    istate = sc.istate
    fstate = sc.fstate
    cur_S = sc.cur_S
    cur_G = sc.cur_G
    mode = crit.mode
    a = crit.a
    tol = crit.cmp_tol
    # The tie-break sweep: squared error alone, ranked at its own rounding level.
    tie = Criterion(np.int64(MODE_VERTEX), 0.0, crit.spo_scale, crit.mse_scale, crit.spo_tol,
                    crit.mse_tol, crit.mse_tol)
    use_G = mode == MODE_VERTEX and a > 0.0
    # Every node's cost sum is needed (its value). A variable, not the
    # constant True: numba compiles a function again for a constant argument.
    all_S = d >= 0
    work_done = 0.0
    while True:
        phase = istate[I_PHASE]
        if phase == PH_POP:
            if work_done >= st.budget:
                return ST_BUDGET
            sp = istate[I_SP]
            if sp == 0:
                return ST_DONE
            t = nodes.stack[sp - 1]
            istate[I_SP] = sp - 1
            istate[I_NODE] = t
            s = nodes.start[t]
            e = nodes.end[t]
            ob = sc.order[nodes.depth[t] & 1]
            wsum, csum, z, q = _sum_rows(ob[0], s, e, rows, use_G, all_S, cur_G, cur_S)
            work_done += (e - s) * (d + K)
            fstate[F_W] = wsum
            fstate[F_CNT] = csum
            fstate[F_Z] = z
            fstate[F_Q] = q
            if solver is not None:
                # Bounds every child's sum of |costs| (see sweep_numeric's early stop).
                ab = 0.0
                for r in range(s, e):
                    i = ob[0, r]
                    ab += rows.w[i] * rows.ab[i]
                fstate[F_ABS] = ab
                # The node's multiplier for its children's Lagrangian bounds,
                # once per node rather than once per feature swept.
                fstate[F_LAM] = 0.0
                if a > 0.0:
                    fstate[F_LAM] = _node_multiplier(solver.dp, solver.bb, solver, cur_S)
            for j in range(d):
                nodes.value[t, j] = cur_S[j] / wsum
            nodes.zsum[t] = z
            nodes.n_samples[t] = e - s
            nodes.wn[t] = wsum
            nodes.cn[t] = csum
            mse = q
            for j in range(d):
                mse -= cur_S[j] * cur_S[j] / wsum
            if not mse > crit.mse_tol:
                mse = 0.0
            nodes.mse_node[t] = mse
            fstate[F_MSE] = mse
            can_split = not ((st.max_depth >= 0 and nodes.depth[t] >= st.max_depth)
                             or csum < st.min_split_cnt or csum < 2.0 * st.min_leaf_cnt
                             or wsum < 2.0 * st.min_leaf_w or e - s < 2)
            if mode == MODE_ORACLE or a == 0.0:
                # Decisions of these nodes are computed by the driver in one
                # batch (squared error alone needs none to grow the tree).
                if a == 0.0:
                    # Squared error alone: the decision is needed for storage only.
                    nodes.loss[t] = np.nan
                    nodes.impurity[t] = mse
                    fstate[F_IMP] = mse
                    nodes.pending[istate[I_NPEND]] = t
                    istate[I_NPEND] += 1
                    if not can_split or mse <= tol:
                        continue
                elif not can_split:
                    nodes.pending[istate[I_NPEND]] = t
                    istate[I_NPEND] += 1
                    nodes.loss[t] = np.nan
                    nodes.impurity[t] = np.nan
                    continue
            else:
                if solver is None:
                    kb = 0
                    for k in range(1, K):
                        if cur_G[k] < cur_G[kb]:
                            kb = k
                    nodes.k_dec[t] = kb
                    opt = cur_G[kb]
                else:
                    opt = solver.solve(solver.ints, solver.floats, cur_S, nodes.decision[t],
                                       solver.work, solver.iwork)
                    if np.isnan(opt):
                        istate[I_FAILED] = 1
                        return ST_SOLVER_FAILED
                spo = opt - z
                if not spo > crit.spo_tol:
                    spo = 0.0
                nodes.loss[t] = spo
                imp = combine(a, spo, mse, crit.spo_scale, crit.mse_scale)
                nodes.impurity[t] = imp
                fstate[F_IMP] = imp
                if not can_split or imp <= tol:
                    continue
            # Features to search: all, or a random draw of max_features.
            if st.max_features > 0 and st.max_features < p:
                sc.rng[1] = sc.rng[0]
                draw_features(sc.rng, p, st.max_features, sc.perm)
                nf = st.max_features
                ascending(sc.perm[:nf], p, sc.feats)
            else:
                nf = p
                for i in range(p):
                    sc.feats[i] = i
            istate[I_NFEAT] = nf
            istate[I_ROUND] = 0
            istate[I_CURSOR] = 0
            istate[I_BEST_F] = -1
            istate[I_NCAND] = 0
            fstate[F_BEST_CRIT] = np.inf
            istate[I_PHASE] = PH_SWEEP
            if reqs is not None and a > 0.0:
                need = 1 + 2 * max_candidates(ob, s, e, sc.feats, nf, cats, st.n_quantiles)
                if need > reqs.req.shape[0]:
                    istate[I_NEED] = need
                    # Push the node back: it is popped again after the resize,
                    # and draws its features again from the same state.
                    _undo_draw(sc, st, p)
                    nodes.stack[istate[I_SP]] = t
                    istate[I_SP] += 1
                    istate[I_PHASE] = PH_POP
                    return ST_SPACE
        elif phase == PH_SWEEP or phase == PH_TIE:
            t = istate[I_NODE]
            s = nodes.start[t]
            e = nodes.end[t]
            cr = crit if phase == PH_SWEEP else tie
            nf = istate[I_NFEAT]
            T = Sums(fstate[F_W], fstate[F_CNT], fstate[F_Z], fstate[F_Q], cur_G, cur_S)
            if istate[I_CURSOR] == 0:
                istate[I_CENTRED] = 0
            if (istate[I_CURSOR] == 0 and cr.a == 0.0 and phase == PH_SWEEP
                    and nf >= CENTRE_MIN_FEATURES):
                # The node's costs centred once for all its features' squared-
                # error sweeps (see Scratch.cc); a sweep resumed after the work
                # budget returned to Python keeps them.
                istate[I_CENTRED] = 1
                inv = 1.0 / fstate[F_W]
                Cm, w_rows, cc = rows.Cm, rows.w, sc.cc
                qc = 0.0
                for i in sc.order[nodes.depth[t] & 1, 0, s:e]:
                    qi = 0.0
                    for j in range(d):
                        v = Cm[i, j] - cur_S[j] * inv
                        cc[i, j] = v
                        qi += v * v
                    qc += w_rows[i] * qi
                fstate[F_QC] = qc
            while istate[I_CURSOR] < nf:
                if work_done >= st.budget:
                    return ST_BUDGET
                f = sc.feats[istate[I_CURSOR]]
                seg = sc.order[nodes.depth[t] & 1, f, s:e]
                if cats is not None and cats.is_cat[f]:
                    sweep_categorical(f, seg, rows, cats, cr, st, solver, reqs, T, sc.bufs,
                                      istate, fstate)
                else:
                    sweep_numeric(f, seg, rows, cr, st, solver, reqs, T, sc.bufs, sc.xs,
                                  sc.allowed, sc.cc, istate, fstate)
                if istate[I_FAILED]:
                    return ST_SOLVER_FAILED
                # Exact solves are counted as they run: the bounds settle
                # most candidates on the solver path.
                work_done += (e - s) * st.unit_cost + fstate[F_SOLVES] * st.solve_cost
                fstate[F_SOLVES] = 0.0
                istate[I_CURSOR] += 1
            if reqs is not None and phase == PH_SWEEP and a > 0.0:
                # The node's own mean first, then two rows per candidate.
                for j in range(d):
                    reqs.req[0, j] = cur_S[j] / fstate[F_W]
                reqs.req_w[0] = fstate[F_W]
                istate[I_PHASE] = PH_SCORE
                return ST_ORACLE
            istate[I_PHASE] = PH_SCORE if phase == PH_SWEEP else PH_POP
            if phase == PH_TIE:
                _apply_split(rows.XT, cats, sc, nodes, fstate[F_IMP], tol, st.min_loss_decrease)
        elif phase == PH_SCORE:
            t = istate[I_NODE]
            imp = fstate[F_IMP]
            if reqs is not None and a > 0.0:
                # resp holds the optimal values (min sense) of the requested means.
                req_w = reqs.req_w
                resp = reqs.resp
                spo = req_w[0] * resp[0] - fstate[F_Z]
                if not spo > crit.spo_tol:
                    spo = 0.0
                nodes.loss[t] = spo
                imp = combine(a, spo, fstate[F_MSE], crit.spo_scale, crit.mse_scale)
                nodes.impurity[t] = imp
                fstate[F_IMP] = imp
                if imp <= tol:
                    # The other paths know this loss before the draw and draw
                    # nothing at such a node: the same stream, the same tree.
                    _undo_draw(sc, st, p)
                    istate[I_PHASE] = PH_POP
                    continue
                for j in range(istate[I_NCAND]):
                    r = 1 + 2 * j
                    spo_c = (req_w[r] * resp[r] + req_w[r + 1] * resp[r + 1]
                             - reqs.cand_f[j, 1])
                    if not spo_c > crit.spo_tol:
                        spo_c = 0.0
                    c = (spo_c if a == 1.0 else a * spo_c / crit.spo_scale) + reqs.cand_f[j, 2]
                    if _better(c, fstate[F_BEST_CRIT], istate[I_BEST_F] >= 0, tol):
                        _keep(istate, fstate, c, reqs.cand_f[j, 0], reqs.cand_i[j, 0],
                              reqs.cand_i[j, 1], reqs.cand_i[j, 2], reqs.cand_i[j, 3])
            if istate[I_BEST_F] < 0:
                if istate[I_ROUND] == 0 and istate[I_NFEAT] < p:
                    # Like CART: no admissible split among the drawn features,
                    # so the others are searched too.
                    nf = istate[I_NFEAT]
                    ascending(sc.perm[nf:], p, sc.feats)
                    istate[I_NFEAT] = p - nf
                    istate[I_ROUND] = 1
                    istate[I_CURSOR] = 0
                    istate[I_NCAND] = 0
                    istate[I_PHASE] = PH_SWEEP
                    continue
                istate[I_PHASE] = PH_POP
                continue
            best = fstate[F_BEST_CRIT]
            if a == 1.0 and imp - best <= max(1e-9 * imp, tol):
                # No split lowers the SPO loss: all tie on it, and squared
                # error (the CART split) breaks the tie, not the position.
                istate[I_BEST_F] = -1
                fstate[F_BEST_CRIT] = np.inf
                istate[I_CURSOR] = 0
                istate[I_PHASE] = PH_TIE
                continue
            _apply_split(rows.XT, cats, sc, nodes, best, tol, st.min_loss_decrease)
            istate[I_PHASE] = PH_POP


@jit(internal=True)
def _undo_draw(sc, st, p):
    """Take back the feature draw of the node being searched."""
    if st.max_features > 0 and st.max_features < p:
        sc.rng[0] = sc.rng[1]


@jit(internal=True)
def _apply_split(XT, cats, sc, nodes, crit, tol, min_loss_decrease):
    """Split the current node by the best split found (if it lowers the loss enough)."""
    istate = sc.istate
    fstate = sc.fstate
    t = istate[I_NODE]
    f = istate[I_BEST_F]
    if f < 0:
        return
    imp = fstate[F_IMP]
    if imp - crit < min_loss_decrease - tol:
        return
    s = nodes.start[t]
    e = nodes.end[t]
    # The node's rows, and where its children's go.
    ob = sc.order[nodes.depth[t] & 1]
    to = sc.order[1 - (nodes.depth[t] & 1)]
    kind = istate[I_BEST_KIND]
    thr = fstate[F_BEST_THR]
    nl = istate[I_BEST_NAN]
    if cats is not None:
        miss = cats.n_codes[f]
        ncat = 0
        if kind == SPLIT_CAT_ONE:
            cats.mark[istate[I_BEST_CAT]] = True
            cats.sets[t, 0] = istate[I_BEST_CAT]
            ncat = 1
        elif kind == SPLIT_CAT_SUBSET:
            # Bit b of the mask is the b-th category present in the node.
            seg = ob[f, s:e]
            starts, nb = _category_blocks(seg, cats.codes[:, f], miss)
            mask = istate[I_BEST_CAT]
            for b in range(nb):
                c = cats.codes[seg[starts[b]], f]
                if c != miss and (mask >> b) & 1:
                    cats.mark[c] = True
                    cats.sets[t, ncat] = c
                    ncat += 1
        cats.n_set[t] = ncat
        _mark_split(ob[0], s, e, XT, cats, f, kind, thr, nl, sc.go_left)
        for c in range(ncat):
            cats.mark[cats.sets[t, c]] = False
    else:
        _mark_split(ob[0], s, e, XT, cats, f, kind, thr, nl, sc.go_left)
    n_left = partition_segment(ob, to, s, e, sc.go_left)
    count = istate[I_COUNT]
    lid = count
    rid = count + 1
    istate[I_COUNT] = count + 2
    nodes.start[lid] = s
    nodes.end[lid] = s + n_left
    nodes.start[rid] = s + n_left
    nodes.end[rid] = e
    nodes.depth[lid] = nodes.depth[t] + 1
    nodes.depth[rid] = nodes.depth[t] + 1
    nodes.left[t] = lid
    nodes.right[t] = rid
    nodes.feature[t] = f
    nodes.threshold[t] = thr if (kind == SPLIT_NUMERIC or kind == SPLIT_MISSING) else np.nan
    nodes.nan_left[t] = nl
    sp = istate[I_SP]
    # Right pushed first so the left subtree is grown (and numbered) first.
    nodes.stack[sp] = rid
    nodes.stack[sp + 1] = lid
    istate[I_SP] = sp + 2


# ------------------------------------------------------------ routing
@jit
def route_rows(left, right, feature, threshold, nan_left, cat_ptr, cat_vals, X, out):
    """Leaf reached by every row of ``X``: ``out[i]`` (what ``Tree.apply`` returns).

    A numeric node sends ``x <= threshold`` left; a categorical node (a
    non-empty ``cat_vals[cat_ptr[t]:cat_ptr[t + 1]]``) sends the listed
    values left; a missing value (NaN) goes where ``nan_left`` says. Leaves
    have ``left == -1``. Compiled and GIL-free: a forest's trees route
    rows in parallel threads, and one tree routes a row in a few
    comparisons instead of a NumPy pass per level.
    """
    for i in range(X.shape[0]):
        t = 0
        while left[t] != -1:
            x = X[i, feature[t]]
            if x != x:
                go_left = nan_left[t] != 0
            elif cat_ptr[t + 1] > cat_ptr[t]:
                go_left = False
                for k in range(cat_ptr[t], cat_ptr[t + 1]):
                    if cat_vals[k] == x:
                        go_left = True
                        break
            else:
                go_left = x <= threshold[t]
            t = left[t] if go_left else right[t]
        out[i] = t


@jit
def add_rows(src, idx, dest, out):
    """``out[dest[i]] += src[idx[i]]`` for every i (a forest's sum of its trees'
    leaf values, without temporary arrays per tree; for distinct ``dest``
    the same additions in the same order as NumPy's ``out[dest] += src[idx]``)."""
    for i in range(idx.shape[0]):
        r = idx[i]
        o = dest[i]
        for j in range(src.shape[1]):
            out[o, j] += src[r, j]
