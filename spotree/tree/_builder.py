"""Greedy recursive partitioning (paper section 4.1): the one growth routine.

:func:`grow_tree` drives the compiled state machine
:func:`~spotree.tree._kernels.grow_step` for every split-search path. The
machine returns to this loop after a bounded amount of work, so a Ctrl-C is
honoured within a fraction of a second (and a forest can stop its worker
threads), and whenever it needs the problem's batched oracle (one call per
node on the oracle path). Everything else, including the whole depth-first
growth, runs compiled and without the GIL.
"""

from __future__ import annotations

import threading

import numpy as np

from ..problems._compiled import (DAG_BLOCK, KIND_DAG, KIND_KNAPSACK_BB, KIND_KNAPSACK_DP,
                                  solver_function)
from ._kernels import (CENTRE_MIN_FEATURES, I_COUNT, I_NCAND, I_NEED, I_NODE, I_NPEND,
                       I_PHASE, I_SP, MODE_ORACLE, MODE_SOLVER, MODE_VERTEX, NAN_UNSEEN,
                       N_FSTATE, N_ISTATE, PH_POP, ST_BUDGET, ST_DONE, ST_ORACLE,
                       ST_SOLVER_FAILED, ST_SPACE, Categories, Criterion, Nodes, Requests, Rows,
                       Scratch, Settings, Solver, combine, grow_step)
from ._oracle import make_oracle_handler
from ._tree import TREE_LEAF, TREE_UNDEFINED, Tree

__all__ = ["grow_tree", "AbortFlag", "GrowthInterrupted", "WORK_BUDGET"]

#: Elementary operations between two returns of the compiled machine to Python
#: (about 10 to 50 ms of work).
WORK_BUDGET = 2e7


class GrowthInterrupted(Exception):
    """Raised inside a worker when its forest asked every tree to stop."""


class AbortFlag:
    """A stop request shared by the threads growing one forest.

    It pickles to a flag that is never set: worker processes receive Ctrl-C
    themselves, and a threading.Event cannot cross a process boundary.
    """

    def __init__(self):
        self._event = threading.Event()

    def set(self):
        if self._event is not None:
            self._event.set()

    def is_set(self):
        return self._event is not None and self._event.is_set()

    def __getstate__(self):
        return {"_event": None}


def _node_capacity(m, total_cnt, min_leaf_cnt, total_w, min_leaf_w, max_depth):
    """An upper bound on the number of nodes (every leaf holds min_leaf of each kind)."""
    leaves = m
    if min_leaf_cnt > 0:
        leaves = min(leaves, int(total_cnt // min_leaf_cnt) + 1)
    if min_leaf_w > 0:
        leaves = min(leaves, int(total_w // min_leaf_w) + 1)
    if max_depth is not None and max_depth < 62:
        leaves = min(leaves, 2 ** max_depth)
    return 2 * max(leaves, 1) - 1


def grow_tree(data, w, cnt, *, a, max_depth, min_leaf_cnt, min_leaf_w, min_split_cnt,
              max_features, n_quantiles, min_loss_decrease, seed,
              categorical_subsets=False, max_subset_categories=10, abort=None,
              oracle_handler=None, decisions=True, min_weight_fraction=0.0, w_scale=1.0):
    """Grow a tree greedily until a stopping rule fires.

    A node becomes a leaf when it is at ``max_depth``, when it holds fewer
    than ``min_split_cnt`` or ``2 * min_leaf_cnt`` samples (counted by
    ``cnt``) or less than ``2 * min_leaf_w`` weight, when its criterion loss
    is zero (no split can lower it), when no admissible split exists, or when
    the best split lowers the loss by less than ``min_loss_decrease``. Splits
    with zero decrease are made otherwise, as in the paper, leaving their
    removal to pruning; when no split lowers a pure SPO loss, squared error
    chooses among them.

    Parameters
    ----------
    data : FitData
    w : ndarray of shape (n,)
        Sample weights (zero drops a row).
    cnt : ndarray of shape (n,)
        What ``min_leaf_cnt`` counts per row: 1, or a bootstrap count.
    a : float
        Weight of the SPO part of the criterion (1: SPO, 0: squared error).
    seed : int
        Seeds the feature draws (one splitmix64 stream per tree).
    abort : AbortFlag, optional
        Checked between chunks of compiled work; when set,
        :class:`GrowthInterrupted` is raised.
    oracle_handler : callable, optional
        For the oracle path: ``handler(R, weights, const, a, spo_scale,
        mse_part, tol) -> (w0, z)`` (see :mod:`spotree.tree._oracle`).
        Defaults to :func:`~spotree.tree._oracle.make_oracle_handler`: one
        batched call, or bounds first when the problem has a relaxation.
    decisions : bool, default=True
        False leaves a squared-error tree's (``a == 0``) decisions and SPO
        losses at zero instead of solving every node (SPOBoost's gradient
        trees use neither).
    min_weight_fraction : float, default=0.0
        A leaf's least weight as a fraction of the total weight of ``w``, on
        top of ``min_leaf_w`` (taken in units of the weights' power of two:
        the total of weights near the float range is not a float).
    w_scale : float, default=1.0
        A power of two: ``w`` holds the weights divided by it (a forest's
        bootstrap counts times weights near the float range are not floats).
        The tree's weighted sums, ``min_leaf_w`` and ``min_loss_decrease``
        are in units of the weights times it.

    Returns
    -------
    tree : Tree
        In the problem's units.
    importances : ndarray of shape (n_features,)
        Criterion-loss decrease per feature, up to a positive factor (only
        their ratios are meaningful).
    loss_scales : tuple of float
        The mixed criterion's normalizers (the root's SPO and squared-error
        losses) in units of ``mixed_loss_unit(data.scale)`` (the problem's
        own units but for costs whose squares are beyond the float range);
        ``(1.0, 1.0)`` for a pure criterion.
    """
    # Read-only arrays (joblib's memory maps in worker processes) would make
    # numba compile the whole machine again for that type: copy them instead.
    XT, Cm, G, zs, sq, codes = (_writable(v) for v in (data.XT, data.Cm, data.G, data.zs,
                                                       data.sq, data.codes))
    p, n = XT.shape
    d = Cm.shape[1]
    K = G.shape[1]
    mode = data.mode
    w_given, min_leaf_w_given, min_loss_decrease_given = w, min_leaf_w, min_loss_decrease
    w = np.ascontiguousarray(w, dtype=np.float64)
    # The weights are divided by a power of two near their largest (exact), as
    # the costs are: the squared-error sums hold the square of the total
    # weight, which under- or overflowed for weights beyond about 1e+-160, so
    # scaling every weight by a constant grew another tree. Not where a
    # positive weight would underflow to 0 (weights spanning the float range).
    w_unit = _weight_scale(w)
    if w_unit != 1.0:
        w = w / w_unit
    # (w_scale applied apart, after w_unit: their product can pass the float
    # range, and 0 * inf made a pure node's stored loss NaN.)
    if w_unit != 1.0 or w_scale != 1.0:
        min_leaf_w = min_leaf_w / w_unit / w_scale
    w = _writable(w)
    cnt = _writable(np.ascontiguousarray(cnt, dtype=np.float64))
    active = w > 0
    order = _writable(data.active_order(active))
    m = order.shape[2]
    total_w = float(w.sum())
    if min_weight_fraction > 0.0:
        min_leaf_w = max(min_leaf_w, min_weight_fraction * total_w)
    total_cnt = float(cnt[active].sum())

    # Tolerances relative to the magnitude of this tree's sums.
    spo_tol = 1e-12 * float(w @ data.tol_rows)
    mse_tol = 1e-12 * float(w @ sq)
    spo_scale = mse_scale = 1.0
    if 0.0 < a < 1.0:
        spo_root, mse_root = _root_losses(data, w)
        spo_scale = spo_root if spo_root > spo_tol else 1.0
        mse_scale = mse_root if mse_root > mse_tol else 1.0
    tol = combine(a, spo_tol, mse_tol, spo_scale, mse_scale)
    s = data.scale
    # min_loss_decrease is in the problem's units; the kernel works in scaled ones.
    # (Divided by s twice, not by s * s: s * s underflows to 0 for costs below 1e-154.)
    # It is a weighted sum too (the mixed criterion has no unit).
    if a == 1.0:
        min_loss_decrease = min_loss_decrease / s / w_unit / w_scale
    elif a == 0.0:
        min_loss_decrease = min_loss_decrease / s / s / w_unit / w_scale

    cap = _node_capacity(m, total_cnt, min_leaf_cnt, total_w, min_leaf_w, max_depth)
    i64 = np.int64
    nodes = Nodes(
        left=np.full(cap, TREE_LEAF, dtype=i64), right=np.full(cap, TREE_LEAF, dtype=i64),
        feature=np.full(cap, TREE_UNDEFINED, dtype=i64),
        threshold=np.full(cap, float(TREE_UNDEFINED)), nan_left=np.zeros(cap, dtype=i64),
        value=np.zeros((cap, d)), k_dec=np.zeros(cap, dtype=i64),
        decision=np.zeros((cap if mode != MODE_VERTEX else 1, d)), loss=np.zeros(cap),
        impurity=np.zeros(cap), mse_node=np.zeros(cap), zsum=np.zeros(cap),
        n_samples=np.zeros(cap, dtype=i64), wn=np.zeros(cap), cn=np.zeros(cap),
        start=np.zeros(cap, dtype=i64), end=np.zeros(cap, dtype=i64),
        depth=np.zeros(cap, dtype=i64), stack=np.zeros(cap + 1, dtype=i64),
        pending=np.zeros(cap, dtype=i64))
    nodes.end[0] = m
    nodes.stack[0] = 0
    istate = np.zeros(N_ISTATE, dtype=i64)
    istate[I_PHASE] = PH_POP
    istate[I_COUNT] = 1
    istate[I_SP] = 1

    cats = None
    if data.is_categorical.any():
        max_sub = max(int(max_subset_categories), 1)
        cats = Categories(codes=codes, is_cat=_writable(data.is_categorical),
                          n_codes=_writable(data.n_codes), subsets=bool(categorical_subsets),
                          max_subset=max_sub,
                          mark=np.zeros(int(data.n_codes.max(initial=0)) + 2, dtype=np.bool_),
                          sets=np.zeros((cap, max_sub), dtype=i64),
                          n_set=np.zeros(cap, dtype=i64))
    if mode == MODE_SOLVER:
        oracle = data.oracle
        # The block DAG solver's scratch (zeros: unused columns of a last,
        # partial block are solved too and must hold finite numbers).
        blocked = oracle.kind == KIND_DAG
        ints = _writable(oracle.ints)
        solver = Solver(kind=int(oracle.kind), solve=solver_function(oracle.kind),
                        ints=ints, floats=_writable(oracle.floats),
                        work=np.empty(max(oracle.work_size, 1)),
                        iwork=np.empty(max(oracle.iwork_size, 1), dtype=i64),
                        blk=np.zeros((d, DAG_BLOCK) if blocked else (0, 0)),
                        blk_dist=np.zeros((int(oracle.ints[0]), DAG_BLOCK) if blocked
                                          else (0, 0)),
                        blk_f=np.zeros((4, DAG_BLOCK)),
                        # One kind's own code is compiled only where these
                        # hold an array (see Solver).
                        dag=ints if blocked else None,
                        dp=ints if oracle.kind == KIND_KNAPSACK_DP else None,
                        bb=ints if oracle.kind == KIND_KNAPSACK_BB else None)
        # Per row and feature: the sums and, for the knapsacks, the bounds (a
        # few O(d) passes); the exact solves, which the bounds mostly spare,
        # are counted as they run (a DAG's in blocks, at a quarter of a solve:
        # see _flush_dag). Charging two solves per candidate instead returned
        # to Python every few ms, and each return costs some argument typing.
        unit_cost = (8.0 if oracle.kind in (KIND_KNAPSACK_DP, KIND_KNAPSACK_BB) else 2.0) * d
        solve_cost = float(oracle.cost)
    else:
        solver = None
        unit_cost = d + 2.0 * K + 2.0
        solve_cost = 0.0

    # The oracle path's request buffer (None elsewhere: see grow_step).
    reqs = None
    if mode == MODE_ORACLE and a > 0.0:
        reqs = _requests(min(1 + 4 * (m + 1) * p, 4097), d)
    sc = Scratch(order=order, go_left=np.zeros(n, dtype=np.bool_),
                 rng=np.array([np.uint64(seed & 0xFFFFFFFFFFFFFFFF), 0], dtype=np.uint64),
                 perm=np.zeros(p, dtype=i64), feats=np.zeros(p, dtype=i64), istate=istate,
                 fstate=np.zeros(N_FSTATE), cur_S=np.zeros(d), cur_G=np.zeros(K),
                 bufs=np.zeros((7, max(K, d, 1))), xs=np.zeros(max(m, 1)),
                 allowed=np.zeros(max(m, 1), dtype=np.bool_),
                 cc=np.zeros((n if a == 0.0 and p >= CENTRE_MIN_FEATURES else 0, d)))
    rows_ = Rows(XT=XT, w=w, cnt=cnt, Cm=Cm, G=G, zs=zs, sq=sq,
                 ab=_writable(data.abs_rows) if mode == MODE_SOLVER else np.zeros(n))
    crit = Criterion(mode=int(mode), a=float(a), spo_scale=float(spo_scale),
                     mse_scale=float(mse_scale), spo_tol=float(spo_tol),
                     mse_tol=float(mse_tol), cmp_tol=float(tol))
    st = Settings(min_leaf_cnt=float(min_leaf_cnt), min_leaf_w=float(min_leaf_w),
                  min_split_cnt=float(min_split_cnt),
                  # Deeper than 2^62 is unlimited (and would overflow int64).
                  max_depth=-1 if max_depth is None or max_depth >= 2 ** 62
                  else int(max_depth),
                  max_features=0 if max_features is None else int(max_features),
                  n_quantiles=int(n_quantiles), min_loss_decrease=float(min_loss_decrease),
                  unit_cost=float(unit_cost), solve_cost=solve_cost,
                  budget=float(WORK_BUDGET))
    handler = oracle_handler
    if handler is None and reqs is not None:
        # Only the oracle path calls it (building one solves the problem's
        # relaxation: ~7 ms, a forest tree's worth of work on the solver path).
        handler = make_oracle_handler(data)

    # The entry point found on the first call serves the tree's later calls
    # (the same records, so the same types): ~0.1 ms of typing per call saved.
    entry = None
    while True:
        args = (rows_, cats, crit, st, solver, reqs, sc, nodes)
        if entry is None:
            status, entry = _step(*args)
        else:
            status = entry(*args)
        if status == ST_DONE:
            break
        if abort is not None and abort.is_set():
            raise GrowthInterrupted
        if status == ST_ORACLE:
            n_c = int(istate[I_NCAND])
            r = 1 + 2 * n_c
            w0, z = handler(reqs.req[:r], reqs.req_w[:r], reqs.cand_f[:n_c, 1], float(a),
                            float(spo_scale), reqs.cand_f[:n_c, 2], float(tol))
            reqs.resp[:r] = z
            nodes.decision[istate[I_NODE]] = w0
        elif status == ST_SPACE:
            reqs = _requests(int(istate[I_NEED]), d)
            entry = None
        elif status == ST_SOLVER_FAILED:
            # A compiled solver gave up on some candidate (a search limit):
            # grow the same tree from scratch through the problem's own solve,
            # which has an exact fallback.
            return grow_tree(data.on_oracle_path(), w_given, cnt, a=a, max_depth=max_depth,
                             min_leaf_cnt=min_leaf_cnt, min_leaf_w=min_leaf_w_given,
                             min_split_cnt=min_split_cnt, max_features=max_features,
                             n_quantiles=n_quantiles,
                             min_loss_decrease=min_loss_decrease_given,
                             seed=seed, categorical_subsets=categorical_subsets,
                             max_subset_categories=max_subset_categories, abort=abort,
                             oracle_handler=oracle_handler, decisions=decisions,
                             min_weight_fraction=min_weight_fraction, w_scale=w_scale)
        elif status != ST_BUDGET:  # pragma: no cover - the kernel returns only these
            raise RuntimeError(f"unexpected status {status} from the growth kernel")

    left, right, feature, threshold, nan_left = (nodes.left, nodes.right, nodes.feature,
                                                 nodes.threshold, nodes.nan_left)
    loss, impurity, mse_node, zsum, wn = (nodes.loss, nodes.impurity, nodes.mse_node,
                                          nodes.zsum, nodes.wn)
    value, pending = nodes.value, nodes.pending
    count = int(istate[I_COUNT])
    sl = slice(0, count)
    value = value[sl]
    loss, impurity = loss[sl], impurity[sl]
    if mode == MODE_VERTEX:
        dec = data.V[nodes.k_dec[sl]] if a > 0.0 else None
    else:
        dec = nodes.decision[sl].copy()  # (not a view: see left, right below)
    n_pend = int(istate[I_NPEND])
    if dec is None and not decisions:
        dec = np.zeros((count, d))
        loss = np.zeros(count)
    elif n_pend or dec is None:
        # Nodes whose decision was left to one batch: leaves the oracle path
        # never swept, or every node of a squared-error tree.
        todo = pending[:n_pend] if dec is not None else np.arange(count)
        if dec is None:
            dec = np.zeros((count, d))
        if todo.size:
            W, zmin = data.solve_scaled(value[todo])
            dec[todo] = W
            spo = np.maximum(wn[todo] * zmin - zsum[todo], 0.0)
            spo[spo <= spo_tol] = 0.0
            loss[todo] = spo
            if a > 0.0:
                impurity[todo] = [combine(a, s_, m_, spo_scale, mse_scale)
                                  for s_, m_ in zip(spo, mse_node[todo])]
    # Importances from the scaled losses: only their ratios matter, and these
    # cannot overflow where the problem's units would (squared errors of huge
    # costs).
    internal = np.flatnonzero(left[sl] != TREE_LEAF)
    gain = (impurity[internal] - impurity[left[internal]] - impurity[right[internal]])
    keep = gain > tol
    importances = np.zeros(p)
    np.add.at(importances, feature[internal[keep]], gain[keep])
    # Back to the problem's units: value and losses scale with the costs,
    # squared errors with their square; the mixed criterion has no unit.
    # Weighted sums also scale with the weights.
    value = data.sign * s * value
    # Weighted sums beyond the float range (weights of 1e308) are inf, as they
    # should be: no warning.
    with np.errstate(over="ignore"):
        loss = loss * s * w_unit * w_scale
        wn_out = wn[sl] * w_unit * w_scale
    if a == 1.0:
        with np.errstate(over="ignore"):
            impurity = impurity * s * w_unit * w_scale
    elif a == 0.0:
        # Times s twice: a pure node's 0 * (s * s) is NaN where s * s overflows.
        # A squared error beyond the float range is inf, as it should be: no warning.
        with np.errstate(over="ignore"):
            impurity = impurity * s * s * w_unit * w_scale
    thr = threshold[sl].copy()
    # Copies, not views: a view keeps the whole node buffer (sized for the
    # most nodes the rules allow, often several times the nodes grown) alive
    # as long as the tree.
    left, right, feature = left[sl].copy(), right[sl].copy(), feature[sl].copy()
    if 0.0 < a < 1.0:  # (otherwise scaled above: a new array)
        impurity = impurity.copy()
    internal = left != TREE_LEAF
    # Category splits carry a NaN threshold; the "present vs missing" split of
    # a categorical feature is a threshold split at +inf.
    cat_nodes = np.flatnonzero(internal & np.isnan(thr))
    categories = [np.empty(0)] * count if cat_nodes.size else None
    for t in cat_nodes:
        categories[t] = data.cat_values[feature[t]][cats.sets[t, :cats.n_set[t]]]
        thr[t] = float(TREE_UNDEFINED)
    nan_left = nan_left[sl]
    unseen = np.flatnonzero(internal & (nan_left == NAN_UNSEEN))
    # No missing value reached this split at fit: send them to the heavier child.
    nan_left[unseen] = wn[left[unseen]] >= wn[right[unseen]]
    nan_left[~internal] = 0
    tree = Tree(n_features=p, n_outputs=d, children_left=left, children_right=right,
                feature=feature, threshold=thr, value=value, decision=dec, loss=loss,
                impurity=impurity, n_node_samples=nodes.n_samples[sl].copy(),
                weighted_n_node_samples=wn_out, categories=categories,
                missing_go_to_left=nan_left.astype(np.uint8),
                missing_features=data.missing_features(active))
    # In units of a power of two where the costs' squares are beyond the
    # float range: the squared-error scale of costs of 1e-160 was 0 (of 1e160,
    # inf), and prune refused the tree.
    su = s / mixed_loss_unit(s)
    with np.errstate(over="ignore"):  # (inf: prune then names sample_weight)
        scales = ((spo_scale * su * w_unit * w_scale, mse_scale * su * su * w_unit * w_scale)
                  if 0.0 < a < 1.0 else (1.0, 1.0))
    return tree, importances, scales


def mixed_loss_unit(scale):
    """The power of two in whose units a mixed criterion's scales are kept, for
    costs of ``scale`` (a power of two near their largest magnitude).

    1.0 (the problem's units) unless the costs' squares, and so the squared
    error, are beyond the float range or subnormal: then ``scale`` itself.
    """
    return 1.0 if 2.0 ** -256 <= scale <= 2.0 ** 256 else float(scale)


# grow_step's compiled entry points by a key of its arguments' types (see _step).
_ENTRY_POINTS = {}


def _type_key(v):
    """What numba's typing of ``v`` depends on, for the values grow_step receives."""
    if isinstance(v, np.ndarray):
        f = v.flags
        return (v.dtype.str, v.ndim, f.c_contiguous, f.f_contiguous, f.writeable, f.aligned)
    if isinstance(v, tuple):
        return (type(v),) + tuple(_type_key(x) for x in v)
    if isinstance(v, int) and not isinstance(v, bool):
        return (int, -2 ** 63 <= v < 2 ** 63)
    if v is None or isinstance(v, (bool, float)):
        return type(v)
    # A compiled solver function: its own type.
    return (type(v), id(v))


def _step(*args):
    """``grow_step(*args)`` through its compiled entry point once known: ``(status, entry)``.

    The dispatcher types every argument on every call (~0.3-1 ms for these
    records, each time the machine returns: several times per tree, holding
    the GIL that a forest's other threads wait for). A key of the arguments'
    array dtypes, shapes' ranks, layouts and flags and scalar types (all that
    numba's typing of them reads) finds the entry point it chose before;
    ``entry`` (None when not found) may be called directly with arguments of
    the same types.
    """
    key = tuple(_type_key(a) for a in args)
    entry = _ENTRY_POINTS.get(key)
    if entry is not None:
        return entry(*args), entry
    status = grow_step(*args)
    try:
        overload = grow_step.overloads.get(tuple(grow_step.typeof_pyval(a) for a in args))
        entry = None if overload is None else overload.entry_point
    except AttributeError:
        # numba internals of another version: every call goes through the
        # dispatcher, as before (slower, same result).
        entry = None
    if entry is not None:
        _ENTRY_POINTS[key] = entry
    return status, entry


def _requests(rows, d):
    """The oracle path's request buffer for ``rows`` requests (the node and its candidates)."""
    n_cand = (rows - 1) // 2 + 1
    return Requests(req=np.zeros((rows, d)), req_w=np.zeros(rows), cand_i=np.zeros(
        (n_cand, 4), dtype=np.int64), cand_f=np.zeros((n_cand, 3)), resp=np.zeros(rows))


def _writable(a):
    return a if a.flags.writeable and a.flags.c_contiguous else np.array(a, order="C")


def _weight_scale(w):
    """A power of two near the largest weight, or 1 where dividing by it would
    turn a positive weight into 0."""
    from ._fit_data import power_of_two_scale

    unit = power_of_two_scale(w)
    pos = w[w > 0]
    if unit == 1.0 or pos.size == 0 or pos.min() / unit < np.finfo(np.float64).tiny:
        return 1.0
    return unit


def _root_losses(data, w):
    """SPO and squared-error loss of the root (the mixed criterion's normalizers)."""
    W = float(w.sum())
    S = w @ data.Cm
    zsum = float(w @ data.zs)
    if data.mode == MODE_VERTEX:
        opt = float((w @ data.G).min())
    elif data.mode == MODE_SOLVER:
        from ..problems._compiled import solve_rows

        opt = float(solve_rows(data.oracle, S[None, :], np.empty((1, S.size)))[0])
        if np.isnan(opt):  # the compiled solver gave up: the problem's own solve
            opt = float(data.solve_scaled((S / W)[None, :])[1][0]) * W
    else:
        opt = float(data.solve_scaled((S / W)[None, :])[1][0]) * W
    spo = max(opt - zsum, 0.0)
    mse = max(float(w @ data.sq) - float(S @ S) / W, 0.0)
    return spo, mse
