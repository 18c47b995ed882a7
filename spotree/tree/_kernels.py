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

The depth-2 routine of the exact search (:func:`depth2_prepare`,
:func:`depth2_pair`) lives here too.
"""

from __future__ import annotations

import numpy as np

from .._numba import jit
from ..problems._compiled import solve_min

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
N_ISTATE = 16

# fstate slots
F_BEST_CRIT = 0
F_BEST_THR = 1
F_IMP = 2
F_W = 3
F_CNT = 4
F_Z = 5
F_Q = 6
F_MSE = 7
N_FSTATE = 8

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
@jit
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


@jit
def next_u64(rng):
    """splitmix64: the one random stream of a tree (feature draws)."""
    x = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = x
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@jit
def rand_below(rng, k):
    """Uniform int in [0, k) (modulo bias below 2**-50 for any k a tree sees)."""
    return np.int64(next_u64(rng) % np.uint64(k))


@jit
def draw_features(rng, p, k, perm):
    """Shuffle the first k slots of ``perm`` (a partial Fisher-Yates draw)."""
    for i in range(p):
        perm[i] = i
    for i in range(k):
        j = i + rand_below(rng, p - i)
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp


@jit
def ascending(values, p, out):
    """Write the distinct ints of ``values`` (each in [0, p)) to ``out`` in increasing order.

    A scan over a mark array instead of a sort: numba compiles its quicksort
    once per call site, seconds of every cold start, for lists this short.
    """
    mark = np.zeros(p, dtype=np.bool_)
    for v in values:
        mark[v] = True
    k = 0
    for j in range(p):
        if mark[j]:
            out[k] = j
            k += 1


@jit
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
        # Last position with xs[p] <= t: samples up to p go left.
        p = np.searchsorted(xs[:m], t, side="right") - 1
        if 0 <= p < m - 1:
            allowed[p] = True


@jit
def combine(a, spo, mse, spo_scale, mse_scale):
    """The mixed criterion ``a SPO / SPO_root + (1 - a) MSE / MSE_root`` (pure at 0 and 1)."""
    if a == 1.0:
        return spo
    if a == 0.0:
        return mse
    return a * spo / spo_scale + (1.0 - a) * mse / mse_scale


@jit
def _better(crit, best, found, tol):
    """Strictly better beyond rounding: ties keep the candidate found first."""
    return (not found) or crit < best - REL_TOL * abs(best) - tol


@jit
def _keep(istate, fstate, crit, thr, f, kind, code, nan_side):
    """Record a candidate split as the node's best so far."""
    fstate[F_BEST_CRIT] = crit
    fstate[F_BEST_THR] = thr
    istate[I_BEST_F] = f
    istate[I_BEST_KIND] = kind
    istate[I_BEST_CAT] = code
    istate[I_BEST_NAN] = nan_side


@jit
def _children_spo(mode, K, GL, GM, use_m, T_G, kind, ints, floats, bl, br, nowv, work,
                  iwork, zl, zr, spo_tol):
    """SPO loss of a candidate's two children (NaN: the compiled solver gave up).

    On the vertex path from the running sums ``GL`` (+ ``GM`` with the
    missing rows on the left) against the node's totals ``T_G``; otherwise by
    the compiled solver on the children's mean costs ``bl`` and ``br``.
    """
    if mode == MODE_VERTEX:
        gl = np.inf
        gr = np.inf
        for k in range(K):
            v = GL[k] + GM[k] if use_m else GL[k]
            if v < gl:
                gl = v
            r = T_G[k] - v
            if r < gr:
                gr = r
    else:
        gl = solve_min(kind, ints, floats, bl, nowv, work, iwork)
        gr = solve_min(kind, ints, floats, br, nowv, work, iwork)
        if np.isnan(gl) or np.isnan(gr):
            return np.nan
    spo = (gl - zl) + (gr - zr)
    return spo if spo > spo_tol else 0.0


# -------------------------------------------------------------- node sums
@jit
def node_sums(order0, s, e, w, cnt, Cm, G, zs, sq, use_G, use_S, S, Gs):
    """Weighted sums of a node's rows (``order0[s:e]``); vectors into S and Gs."""
    d = Cm.shape[1]
    K = G.shape[1]
    for j in range(d):
        S[j] = 0.0
    for k in range(K):
        Gs[k] = 0.0
    wsum = 0.0
    csum = 0.0
    z = 0.0
    q = 0.0
    for a in range(s, e):
        i = order0[a]
        wi = w[i]
        wsum += wi
        csum += cnt[i]
        z += wi * zs[i]
        q += wi * sq[i]
        if use_S:
            for j in range(d):
                S[j] += wi * Cm[i, j]
        if use_G:
            for k in range(K):
                Gs[k] += wi * G[i, k]
    return wsum, csum, z, q


# ------------------------------------------------------------- candidates
# The evaluation of a candidate is written out inside each sweep's loop: a
# call to a numba function taking dozens of arrays costs more per threshold
# than the vertex-path arithmetic itself.
@jit
def _queue(req, req_w, cand_i, cand_f, istate, bl, br, lw, rw, zsum, mse_part, f,
           split_kind, code, thr, nan_left):
    """Queue a candidate for the batched oracle: its children's mean costs."""
    j = istate[I_NCAND]
    r = 1 + 2 * j
    for t in range(bl.shape[0]):
        req[r, t] = bl[t] / lw
        req[r + 1, t] = br[t] / rw
    req_w[r] = lw
    req_w[r + 1] = rw
    cand_i[j, 0] = f
    cand_i[j, 1] = split_kind
    cand_i[j, 2] = code
    cand_i[j, 3] = nan_left
    cand_f[j, 0] = thr
    cand_f[j, 1] = zsum
    cand_f[j, 2] = mse_part
    istate[I_NCAND] = j + 1


@jit
def sweep_numeric(f, seg, X, w, cnt, Cm, G, zs, sq, mode, a, spo_scale, mse_scale, tols,
                  kind, ints, floats, work, iwork, min_leaf_cnt, min_leaf_w, n_quantiles,
                  T_w, T_c, T_z, T_q, T_S, T_G,
                  GL, GM, SL, SM, bl, br, xs, allowed, nowv,
                  req, req_w, cand_i, cand_f, istate, fstate):
    """All admissible thresholds of numeric feature f on a node (rows ``seg``, sorted).

    Rows whose value is missing (NaN) sit at the end of ``seg``; each
    threshold is tried with them on the right, then on the left, and the
    split "every present value left, missing right" (threshold +inf) is
    tried last. The best candidate goes to ``istate``/``fstate`` (or, on the
    oracle path, every candidate to the request buffer).
    """
    m = seg.shape[0]
    K = G.shape[1]
    d = Cm.shape[1]
    use_G = mode == MODE_VERTEX and a > 0.0
    use_S = a < 1.0 or mode != MODE_VERTEX
    queue = mode == MODE_ORACLE and a > 0.0
    spo_tol = tols[0]
    mse_tol = tols[1]
    cmp_tol = tols[2]
    mn = m
    while mn > 0 and np.isnan(X[seg[mn - 1], f]):
        mn -= 1
    # Sums of the rows missing this feature.
    wM = 0.0
    cM = 0.0
    zM = 0.0
    qM = 0.0
    for k in range(K):
        GM[k] = 0.0
    for j in range(d):
        SM[j] = 0.0
    for t in range(mn, m):
        i = seg[t]
        wi = w[i]
        wM += wi
        cM += cnt[i]
        zM += wi * zs[i]
        qM += wi * sq[i]
        if use_G:
            for k in range(K):
                GM[k] += wi * G[i, k]
        if use_S:
            for j in range(d):
                SM[j] += wi * Cm[i, j]
    has_m = cM > 0.0
    if mn == 0:
        return
    for t in range(mn):
        xs[t] = X[seg[t], f]
    varies = xs[0] != xs[mn - 1]
    if varies:
        allowed_positions(xs, mn, n_quantiles, allowed)
    fast = mode == MODE_VERTEX and a == 1.0 and not has_m
    fast_mse = a == 0.0 and not has_m
    if (fast or fast_mse) and not varies:
        return
    for k in range(K):
        GL[k] = 0.0
    for j in range(d):
        SL[j] = 0.0
    wL = 0.0
    cL = 0.0
    zL = 0.0
    qL = 0.0
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
        if fast and not last:
            # The common case, pure SPO on the vertex path with nothing
            # missing: update the left sums and take both minima in one pass
            # where the cut is admissible (as CART updates its sums).
            if (allowed[p] and xs[p] != xs[p + 1] and cL >= min_leaf_cnt
                    and wL >= min_leaf_w and T_c - cL >= min_leaf_cnt
                    and T_w - wL >= min_leaf_w):
                gl = np.inf
                gr = np.inf
                for k in range(K):
                    v = GL[k] + wi * G[i, k]
                    GL[k] = v
                    if v < gl:
                        gl = v
                    r = T_G[k] - v
                    if r < gr:
                        gr = r
                spo = (gl - zL) + (gr - (T_z - zL))
                if not spo > spo_tol:
                    spo = 0.0
                if _better(spo, fstate[F_BEST_CRIT], istate[I_BEST_F] >= 0, cmp_tol):
                    _keep(istate, fstate, spo, midpoint(xs[p], xs[p + 1]), f, SPLIT_NUMERIC,
                          -1, NAN_UNSEEN)
            else:
                for k in range(K):
                    GL[k] += wi * G[i, k]
                if T_c - cL < min_leaf_cnt or T_w - wL < min_leaf_w:
                    break
            continue
        if fast_mse and not last:
            # Squared error with nothing missing (CART, and the tie-break):
            # the update and both children's squared norms in one pass.
            if (allowed[p] and xs[p] != xs[p + 1] and cL >= min_leaf_cnt
                    and wL >= min_leaf_w and T_c - cL >= min_leaf_cnt
                    and T_w - wL >= min_leaf_w):
                nl = 0.0
                nr = 0.0
                for j in range(d):
                    v = SL[j] + wi * Cm[i, j]
                    SL[j] = v
                    nl += v * v
                    r = T_S[j] - v
                    nr += r * r
                mse = (qL - nl / wL) + (T_q - qL - nr / (T_w - wL))
                if not mse > mse_tol:
                    mse = 0.0
                if _better(mse, fstate[F_BEST_CRIT], istate[I_BEST_F] >= 0, cmp_tol):
                    _keep(istate, fstate, mse, midpoint(xs[p], xs[p + 1]), f, SPLIT_NUMERIC,
                          -1, NAN_UNSEEN)
            else:
                for j in range(d):
                    SL[j] += wi * Cm[i, j]
                if T_c - cL < min_leaf_cnt or T_w - wL < min_leaf_w:
                    break
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
            if T_c - cL < min_leaf_cnt or T_w - wL < min_leaf_w:
                if has_m:
                    # Skip to the present/missing split.
                    continue
                break
            if not allowed[p] or xs[p] == xs[p + 1]:
                continue
            n_opt = 2 if has_m else 1
            thr = midpoint(xs[p], xs[p + 1])
            split_kind = SPLIT_NUMERIC
        for opt in range(n_opt):
            use_m = opt == 1
            lw = wL + wM if use_m else wL
            lc = cL + cM if use_m else cL
            rw = T_w - lw
            rc = T_c - lc
            if lc < min_leaf_cnt or lw < min_leaf_w or rc < min_leaf_cnt or rw < min_leaf_w:
                continue
            zl = zL + zM if use_m else zL
            zr = T_z - zl
            nan_opt = NAN_RIGHT if last else (opt if has_m else NAN_UNSEEN)
            # ---- the candidate's criterion (same block in sweep_categorical)
            mse = 0.0
            if use_S:
                nl = 0.0
                nr = 0.0
                for j in range(d):
                    v = SL[j] + SM[j] if use_m else SL[j]
                    bl[j] = v
                    r = T_S[j] - v
                    br[j] = r
                    nl += v * v
                    nr += r * r
                if a < 1.0:
                    ql = qL + qM if use_m else qL
                    mse = (ql - nl / lw) + (T_q - ql - nr / rw)
                    # Within rounding of zero is zero, so that such candidates tie.
                    if not mse > mse_tol:
                        mse = 0.0
            if queue:
                mse_part = 0.0 if a == 1.0 else (1.0 - a) * mse / mse_scale
                _queue(req, req_w, cand_i, cand_f, istate, bl, br, lw, rw, zl + zr,
                       mse_part, f, split_kind, -1, thr, nan_opt)
                continue
            spo = 0.0
            if a > 0.0:
                spo = _children_spo(mode, K, GL, GM, use_m, T_G, kind, ints, floats, bl, br,
                                    nowv, work, iwork, zl, zr, spo_tol)
                if np.isnan(spo):
                    # The compiled solver gave up (a search limit): the
                    # driver regrows the tree on the oracle path.
                    istate[I_FAILED] = 1
                    return
            crit = combine(a, spo, mse, spo_scale, mse_scale)
            if _better(crit, fstate[F_BEST_CRIT], istate[I_BEST_F] >= 0, cmp_tol):
                _keep(istate, fstate, crit, thr, f, split_kind, -1, nan_opt)


@jit
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


@jit
def sweep_categorical(f, seg, codes, n_codes, w, cnt, Cm, G, zs, sq, mode, a, spo_scale,
                      mse_scale, tols, kind, ints, floats, work, iwork, min_leaf_cnt,
                      min_leaf_w, subsets, max_subset, T_w, T_c, T_z, T_q, T_S, T_G,
                      GL, GM, SL, SM, bl, br, nowv,
                      req, req_w, cand_i, cand_f, istate, fstate):
    """Category splits of feature f: one category left, or every subset (Gray-code order).

    With ``subsets`` and at most ``max_subset`` categories present, every
    split up to swapping sides is tried (the last present category stays
    right), each subset reached from the previous one by moving one
    category. Otherwise each category in turn goes left alone. Missing rows
    (code ``n_codes[f]``) are tried on either side, and "every category
    left, missing right" last.
    """
    m = seg.shape[0]
    K = G.shape[1]
    d = Cm.shape[1]
    use_G = mode == MODE_VERTEX and a > 0.0
    use_S = a < 1.0 or mode != MODE_VERTEX
    queue = mode == MODE_ORACLE and a > 0.0
    spo_tol = tols[0]
    mse_tol = tols[1]
    cmp_tol = tols[2]
    codes_f = codes[:, f]
    miss = n_codes[f]
    starts, nb = _category_blocks(seg, codes_f, miss)
    has_m = codes_f[seg[m - 1]] == miss
    r_cat = nb - 1 if has_m else nb  # present categories
    bw = np.zeros(nb)
    bc = np.zeros(nb)
    bz = np.zeros(nb)
    bq = np.zeros(nb)
    bG = np.zeros((nb, K if use_G else 0))
    bS = np.zeros((nb, d if use_S else 0))
    for b in range(nb):
        for t in range(starts[b], starts[b + 1]):
            i = seg[t]
            wi = w[i]
            bw[b] += wi
            bc[b] += cnt[i]
            bz[b] += wi * zs[i]
            bq[b] += wi * sq[i]
            if use_G:
                for k in range(K):
                    bG[b, k] += wi * G[i, k]
            if use_S:
                for j in range(d):
                    bS[b, j] += wi * Cm[i, j]
    wM = 0.0
    cM = 0.0
    zM = 0.0
    qM = 0.0
    for k in range(K):
        GM[k] = 0.0
    for j in range(d):
        SM[j] = 0.0
    if has_m:
        b = nb - 1
        wM = bw[b]
        cM = bc[b]
        zM = bz[b]
        qM = bq[b]
        if use_G:
            for k in range(K):
                GM[k] = bG[b, k]
        if use_S:
            for j in range(d):
                SM[j] = bS[b, j]
    use_subsets = subsets and r_cat <= max_subset
    if r_cat >= 2:
        n_iter = (1 << (r_cat - 1)) - 1 if use_subsets else r_cat
    else:
        n_iter = 0
    for k in range(K):
        GL[k] = 0.0
    for j in range(d):
        SL[j] = 0.0
    wL = 0.0
    cL = 0.0
    zL = 0.0
    qL = 0.0
    gray_prev = 0
    # Iterations 0..n_iter-1 are the category splits; the last one, with
    # every present category left, is the present/missing split.
    for it in range(n_iter + 1):
        last = it == n_iter
        if last:
            if not (has_m and r_cat >= 1):
                break
            wL = T_w - wM
            cL = T_c - cM
            zL = T_z - zM
            qL = T_q - qM
            for k in range(K):
                GL[k] = T_G[k] - GM[k]
            for j in range(d):
                SL[j] = T_S[j] - SM[j]
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
                    bp = it - 1
                    wL -= bw[bp]
                    cL -= bc[bp]
                    zL -= bz[bp]
                    qL -= bq[bp]
                    if use_G:
                        for k in range(K):
                            GL[k] -= bG[bp, k]
                    if use_S:
                        for j in range(d):
                            SL[j] -= bS[bp, j]
                b = it
                sgn = 1.0
                code = codes_f[seg[starts[b]]]
                split_kind = SPLIT_CAT_ONE
            wL += sgn * bw[b]
            cL += sgn * bc[b]
            zL += sgn * bz[b]
            qL += sgn * bq[b]
            if use_G:
                for k in range(K):
                    GL[k] += sgn * bG[b, k]
            if use_S:
                for j in range(d):
                    SL[j] += sgn * bS[b, j]
            n_opt = 2 if has_m else 1
            thr = np.nan
        for opt in range(n_opt):
            use_m = opt == 1
            lw = wL + wM if use_m else wL
            lc = cL + cM if use_m else cL
            rw = T_w - lw
            rc = T_c - lc
            if lc < min_leaf_cnt or lw < min_leaf_w or rc < min_leaf_cnt or rw < min_leaf_w:
                continue
            zl = zL + zM if use_m else zL
            zr = T_z - zl
            nan_opt = NAN_RIGHT if last else (opt if has_m else NAN_UNSEEN)
            # ---- the candidate's criterion (same block in sweep_numeric)
            mse = 0.0
            if use_S:
                nl = 0.0
                nr = 0.0
                for j in range(d):
                    v = SL[j] + SM[j] if use_m else SL[j]
                    bl[j] = v
                    r = T_S[j] - v
                    br[j] = r
                    nl += v * v
                    nr += r * r
                if a < 1.0:
                    ql = qL + qM if use_m else qL
                    mse = (ql - nl / lw) + (T_q - ql - nr / rw)
                    if not mse > mse_tol:
                        mse = 0.0
            if queue:
                mse_part = 0.0 if a == 1.0 else (1.0 - a) * mse / mse_scale
                _queue(req, req_w, cand_i, cand_f, istate, bl, br, lw, rw, zl + zr,
                       mse_part, f, split_kind, code, thr, nan_opt)
                continue
            spo = 0.0
            if a > 0.0:
                spo = _children_spo(mode, K, GL, GM, use_m, T_G, kind, ints, floats, bl, br,
                                    nowv, work, iwork, zl, zr, spo_tol)
                if np.isnan(spo):
                    # The compiled solver gave up (a search limit): the
                    # driver regrows the tree on the oracle path.
                    istate[I_FAILED] = 1
                    return
            crit = combine(a, spo, mse, spo_scale, mse_scale)
            if _better(crit, fstate[F_BEST_CRIT], istate[I_BEST_F] >= 0, cmp_tol):
                _keep(istate, fstate, crit, thr, f, split_kind, code, nan_opt)


@jit
def max_candidates(order, s, e, feats, nfeat, is_cat, codes, n_codes, n_quantiles, subsets,
                   max_subset):
    """Upper bound on the candidates a node's sweep can queue (oracle mode)."""
    m = e - s
    total = 0
    for t in range(nfeat):
        f = feats[t]
        if is_cat[f]:
            seg = order[f, s:e]
            _, nb = _category_blocks(seg, codes[:, f], n_codes[f])
            if subsets and nb <= max_subset + 1:
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
def partition_segment(order, s, e, go_left, tmp):
    """Stable in-place partition of every feature's segment ``order[f, s:e]``."""
    p = order.shape[0]
    n_left = 0
    for t in range(s, e):
        if go_left[order[0, t]]:
            n_left += 1
    for f in range(p):
        a = s
        b = 0
        for t in range(s, e):
            i = order[f, t]
            if go_left[i]:
                order[f, a] = i
                a += 1
            else:
                tmp[b] = i
                b += 1
        for t in range(b):
            order[f, a + t] = tmp[t]
    return n_left


@jit
def _mark_split(order0, s, e, X, codes, f, split_kind, thr, nan_left, cat_mark, miss,
                go_left):
    for t in range(s, e):
        i = order0[t]
        if split_kind == SPLIT_NUMERIC or split_kind == SPLIT_MISSING:
            # The missing split of a categorical feature is "x <= inf" too:
            # every present category left.
            x = X[i, f]
            if np.isnan(x):
                go_left[i] = nan_left == 1
            else:
                go_left[i] = x <= thr
        else:
            c = codes[i, f]
            if c == miss:
                go_left[i] = nan_left == 1
            else:
                go_left[i] = cat_mark[c]


# ------------------------------------------------------------- the machine
@jit
def grow_step(X, codes, is_cat, n_codes, w, cnt, Cm, G, zs, sq,
              mode, a, spo_scale, mse_scale, spo_tol, mse_tol, tol,
              kind, ints, floats, work, iwork,
              min_leaf_cnt, min_leaf_w, min_split_cnt, max_depth, max_features, n_quantiles,
              min_loss_decrease, subsets, max_subset,
              order, tmp, go_left, rng, perm, feats, cat_mark,
              istate, fstate, cur_S, cur_G, bufs, xs, allowed,
              req, req_w, cand_i, cand_f, resp,
              left, right, feature, threshold, nan_left, value, k_dec, decision, loss,
              impurity, mse_node, zsum, n_samples, wn, cn, start, end, depth, stack, pending,
              cat_sets, cat_len, unit_cost, budget):
    """Grow the tree until it is done, the work budget is spent, or the oracle is needed.

    Returns one of ``ST_DONE``, ``ST_BUDGET``, ``ST_ORACLE``, ``ST_SPACE``;
    all progress lives in the arrays, so calling again resumes.
    """
    p = X.shape[1]
    d = Cm.shape[1]
    K = G.shape[1]
    GL = bufs[0, :K]
    GM = bufs[1, :K]
    SL = bufs[2, :d]
    SM = bufs[3, :d]
    bl = bufs[4, :d]
    br = bufs[5, :d]
    nowv = np.empty(0)
    # Rounding levels: of the SPO part, of the squared error, and of the
    # criterion that ranks candidates (the squared error alone in a tie-break).
    tols = np.array([spo_tol, mse_tol, tol])
    tols_mse = np.array([spo_tol, mse_tol, mse_tol])
    use_G = mode == MODE_VERTEX and a > 0.0
    use_S = True
    work_done = 0.0
    while True:
        phase = istate[I_PHASE]
        if phase == PH_POP:
            if work_done >= budget:
                return ST_BUDGET
            sp = istate[I_SP]
            if sp == 0:
                return ST_DONE
            t = stack[sp - 1]
            istate[I_SP] = sp - 1
            istate[I_NODE] = t
            s = start[t]
            e = end[t]
            wsum, csum, z, q = node_sums(order[0], s, e, w, cnt, Cm, G, zs, sq, use_G,
                                         use_S, cur_S, cur_G)
            work_done += (e - s) * (d + K)
            fstate[F_W] = wsum
            fstate[F_CNT] = csum
            fstate[F_Z] = z
            fstate[F_Q] = q
            for j in range(d):
                value[t, j] = cur_S[j] / wsum
            zsum[t] = z
            n_samples[t] = e - s
            wn[t] = wsum
            cn[t] = csum
            mse = q
            for j in range(d):
                mse -= cur_S[j] * cur_S[j] / wsum
            if not mse > mse_tol:
                mse = 0.0
            mse_node[t] = mse
            fstate[F_MSE] = mse
            can_split = not ((max_depth >= 0 and depth[t] >= max_depth)
                             or csum < min_split_cnt or csum < 2.0 * min_leaf_cnt
                             or wsum < 2.0 * min_leaf_w or e - s < 2)
            if mode == MODE_ORACLE or a == 0.0:
                # Decisions of these nodes are computed by the driver in one
                # batch (squared error alone needs none to grow the tree).
                if a == 0.0:
                    # Squared error alone: the decision is needed for storage only.
                    loss[t] = np.nan
                    impurity[t] = mse
                    fstate[F_IMP] = mse
                    pending[istate[I_NPEND]] = t
                    istate[I_NPEND] += 1
                    if not can_split or mse <= tol:
                        continue
                elif not can_split:
                    pending[istate[I_NPEND]] = t
                    istate[I_NPEND] += 1
                    loss[t] = np.nan
                    impurity[t] = np.nan
                    continue
            else:
                if mode == MODE_VERTEX:
                    kb = 0
                    for k in range(1, K):
                        if cur_G[k] < cur_G[kb]:
                            kb = k
                    k_dec[t] = kb
                    opt = cur_G[kb]
                else:
                    opt = solve_min(kind, ints, floats, cur_S, decision[t], work, iwork)
                    if np.isnan(opt):
                        istate[I_FAILED] = 1
                        return ST_SOLVER_FAILED
                spo = opt - z
                if not spo > spo_tol:
                    spo = 0.0
                loss[t] = spo
                imp = combine(a, spo, mse, spo_scale, mse_scale)
                impurity[t] = imp
                fstate[F_IMP] = imp
                if not can_split or imp <= tol:
                    continue
            # Features to search: all, or a random draw of max_features.
            if max_features > 0 and max_features < p:
                draw_features(rng, p, max_features, perm)
                nf = max_features
                ascending(perm[:nf], p, feats)
            else:
                nf = p
                for i in range(p):
                    feats[i] = i
            istate[I_NFEAT] = nf
            istate[I_ROUND] = 0
            istate[I_CURSOR] = 0
            istate[I_BEST_F] = -1
            istate[I_NCAND] = 0
            fstate[F_BEST_CRIT] = np.inf
            istate[I_PHASE] = PH_SWEEP
            if mode == MODE_ORACLE and a > 0.0:
                need = 1 + 2 * max_candidates(order, s, e, feats, nf, is_cat, codes,
                                              n_codes, n_quantiles, subsets, max_subset)
                if need > req.shape[0]:
                    istate[I_NEED] = need
                    # Push the node back: it is popped again after the resize.
                    stack[istate[I_SP]] = t
                    istate[I_SP] += 1
                    istate[I_PHASE] = PH_POP
                    return ST_SPACE
        elif phase == PH_SWEEP or phase == PH_TIE:
            t = istate[I_NODE]
            s = start[t]
            e = end[t]
            aa = a if phase == PH_SWEEP else 0.0
            md = mode if phase == PH_SWEEP else MODE_VERTEX
            tl = tols if phase == PH_SWEEP else tols_mse
            nf = istate[I_NFEAT]
            T_w = fstate[F_W]
            T_c = fstate[F_CNT]
            T_z = fstate[F_Z]
            T_q = fstate[F_Q]
            while istate[I_CURSOR] < nf:
                if work_done >= budget:
                    return ST_BUDGET
                f = feats[istate[I_CURSOR]]
                seg = order[f, s:e]
                if is_cat[f]:
                    sweep_categorical(f, seg, codes, n_codes, w, cnt, Cm, G, zs, sq, md, aa,
                                      spo_scale, mse_scale, tl, kind, ints, floats, work, iwork,
                                      min_leaf_cnt, min_leaf_w, subsets, max_subset,
                                      T_w, T_c, T_z, T_q, cur_S, cur_G, GL, GM, SL, SM, bl, br,
                                      nowv, req, req_w, cand_i, cand_f, istate, fstate)
                else:
                    sweep_numeric(f, seg, X, w, cnt, Cm, G, zs, sq, md, aa, spo_scale,
                                  mse_scale, tl, kind, ints, floats, work, iwork, min_leaf_cnt,
                                  min_leaf_w, n_quantiles, T_w, T_c, T_z, T_q, cur_S, cur_G,
                                  GL, GM, SL, SM, bl, br, xs, allowed, nowv,
                                  req, req_w, cand_i, cand_f, istate, fstate)
                if istate[I_FAILED]:
                    return ST_SOLVER_FAILED
                work_done += (e - s) * unit_cost
                istate[I_CURSOR] += 1
            if phase == PH_SWEEP and mode == MODE_ORACLE and a > 0.0:
                # The node's own mean first, then two rows per candidate.
                for j in range(d):
                    req[0, j] = cur_S[j] / T_w
                req_w[0] = T_w
                istate[I_PHASE] = PH_SCORE
                return ST_ORACLE
            istate[I_PHASE] = PH_SCORE if phase == PH_SWEEP else PH_POP
            if phase == PH_TIE:
                _apply_split(X, codes, n_codes, istate, fstate, order, tmp, go_left,
                             cat_mark, left, right, feature, threshold, nan_left, wn,
                             start, end, depth, stack, cat_sets, cat_len, fstate[F_IMP],
                             tol, min_loss_decrease)
        elif phase == PH_SCORE:
            t = istate[I_NODE]
            imp = fstate[F_IMP]
            if mode == MODE_ORACLE and a > 0.0:
                # resp holds the optimal values (min sense) of the requested means.
                spo = req_w[0] * resp[0] - fstate[F_Z]
                if not spo > spo_tol:
                    spo = 0.0
                loss[t] = spo
                imp = combine(a, spo, fstate[F_MSE], spo_scale, mse_scale)
                impurity[t] = imp
                fstate[F_IMP] = imp
                if imp <= tol:
                    istate[I_PHASE] = PH_POP
                    continue
                for j in range(istate[I_NCAND]):
                    r = 1 + 2 * j
                    spo_c = req_w[r] * resp[r] + req_w[r + 1] * resp[r + 1] - cand_f[j, 1]
                    if not spo_c > spo_tol:
                        spo_c = 0.0
                    crit = (spo_c if a == 1.0 else a * spo_c / spo_scale) + cand_f[j, 2]
                    if _better(crit, fstate[F_BEST_CRIT], istate[I_BEST_F] >= 0, tol):
                        _keep(istate, fstate, crit, cand_f[j, 0], cand_i[j, 0], cand_i[j, 1],
                              cand_i[j, 2], cand_i[j, 3])
            if istate[I_BEST_F] < 0:
                if istate[I_ROUND] == 0 and istate[I_NFEAT] < p:
                    # Like CART: no admissible split among the drawn features,
                    # so the others are searched too.
                    nf = istate[I_NFEAT]
                    ascending(perm[nf:], p, feats)
                    istate[I_NFEAT] = p - nf
                    istate[I_ROUND] = 1
                    istate[I_CURSOR] = 0
                    istate[I_NCAND] = 0
                    istate[I_PHASE] = PH_SWEEP
                    continue
                istate[I_PHASE] = PH_POP
                continue
            crit = fstate[F_BEST_CRIT]
            if a == 1.0 and imp - crit <= max(1e-9 * imp, tol):
                # No split lowers the SPO loss: all tie on it, and squared
                # error (the CART split) breaks the tie, not the position.
                istate[I_BEST_F] = -1
                fstate[F_BEST_CRIT] = np.inf
                istate[I_CURSOR] = 0
                istate[I_PHASE] = PH_TIE
                continue
            _apply_split(X, codes, n_codes, istate, fstate, order, tmp, go_left, cat_mark,
                         left, right, feature, threshold, nan_left, wn, start, end, depth,
                         stack, cat_sets, cat_len, crit, tol, min_loss_decrease)
            istate[I_PHASE] = PH_POP


@jit
def _apply_split(X, codes, n_codes, istate, fstate, order, tmp, go_left, cat_mark,
                 left, right, feature, threshold, nan_left, wn, start, end, depth, stack,
                 cat_sets, cat_len, crit, tol, min_loss_decrease):
    """Split the current node by the best split found (if it lowers the loss enough)."""
    t = istate[I_NODE]
    f = istate[I_BEST_F]
    if f < 0:
        return
    imp = fstate[F_IMP]
    if imp - crit < min_loss_decrease - tol:
        return
    s = start[t]
    e = end[t]
    kind = istate[I_BEST_KIND]
    thr = fstate[F_BEST_THR]
    nl = istate[I_BEST_NAN]
    miss = n_codes[f]
    ncat = 0
    if kind == SPLIT_CAT_ONE:
        cat_mark[istate[I_BEST_CAT]] = True
        cat_sets[t, 0] = istate[I_BEST_CAT]
        ncat = 1
    elif kind == SPLIT_CAT_SUBSET:
        # Bit b of the mask is the b-th category present in the node.
        seg = order[f, s:e]
        starts, nb = _category_blocks(seg, codes[:, f], miss)
        mask = istate[I_BEST_CAT]
        for b in range(nb):
            c = codes[seg[starts[b]], f]
            if c != miss and (mask >> b) & 1:
                cat_mark[c] = True
                cat_sets[t, ncat] = c
                ncat += 1
    cat_len[t] = ncat
    _mark_split(order[0], s, e, X, codes, f, kind, thr, nl, cat_mark, miss, go_left)
    for c in range(ncat):
        cat_mark[cat_sets[t, c]] = False
    n_left = partition_segment(order, s, e, go_left, tmp)
    count = istate[I_COUNT]
    lid = count
    rid = count + 1
    istate[I_COUNT] = count + 2
    start[lid] = s
    end[lid] = s + n_left
    start[rid] = s + n_left
    end[rid] = e
    depth[lid] = depth[t] + 1
    depth[rid] = depth[t] + 1
    left[t] = lid
    right[t] = rid
    feature[t] = f
    threshold[t] = thr if (kind == SPLIT_NUMERIC or kind == SPLIT_MISSING) else np.nan
    nan_left[t] = nl
    sp = istate[I_SP]
    # Right pushed first so the left subtree is grown (and numbered) first.
    stack[sp] = rid
    stack[sp + 1] = lid
    istate[I_SP] = sp + 2


@jit
def midpoints(lo, hi):
    """:func:`midpoint` of every pair ``(lo[k], hi[k])``."""
    out = np.empty(lo.shape[0])
    for k in range(lo.shape[0]):
        out[k] = midpoint(lo[k], hi[k])
    return out


# ----------------------------------------------- exact search: depth <= 2
# The best tree of depth at most 2 on a sample subset, with a vertex list:
# leaf costs are min_k of summed rows of G (already weighted and signed), and
# every leaf must hold min_leaf of ``cnt``. The work is cut into calls that
# each take a bounded time (one root feature against one child feature and a
# range of root cuts), so that the Python driver stays responsive.
@jit
def _min_row(a, K):
    m = a[0]
    for k in range(1, K):
        if a[k] < m:
            m = a[k]
    return m


@jit
def _min_diff(a, b, K):
    m = a[0] - b[0]
    for k in range(1, K):
        v = a[k] - b[k]
        if v < m:
            m = v
    return m


@jit
def depth2_prepare(idx, B, n_bins, G, cnt):
    """Per-feature bin compression and per-bin sums of a subset.

    Returns ``CB`` (compressed bin of every subset row and feature), ``occ``
    (original bin of every compressed bin), ``nc`` (bins per feature), ``H``
    and ``HW`` (per-bin sums of G and of cnt), ``tot`` (sum of G) and ``W``.
    """
    n_s = idx.shape[0]
    p = B.shape[1]
    K = G.shape[1]
    tot = np.zeros(K)
    W = 0.0
    for a in range(n_s):
        i = idx[a]
        W += cnt[i]
        for k in range(K):
            tot[k] += G[i, k]
    max_bins = 1
    for j in range(p):
        if n_bins[j] > max_bins:
            max_bins = n_bins[j]
    maxc = max(min(max_bins, n_s), 1)
    CB = np.empty((n_s, p), dtype=np.int64)
    occ = np.zeros((p, maxc), dtype=np.int64)
    nc = np.zeros(p, dtype=np.int64)
    cmap = np.empty(max_bins, dtype=np.int64)
    seen = np.zeros(max_bins, dtype=np.bool_)
    H = np.zeros((p, maxc, K))
    HW = np.zeros((p, maxc))
    for j in range(p):
        for a in range(n_s):
            seen[B[idx[a], j]] = True
        c = 0
        for b in range(n_bins[j]):
            if seen[b]:
                cmap[b] = c
                occ[j, c] = b
                c += 1
                seen[b] = False
        nc[j] = c
        for a in range(n_s):
            i = idx[a]
            cb = cmap[B[i, j]]
            CB[a, j] = cb
            HW[j, cb] += cnt[i]
            for k in range(K):
                H[j, cb, k] += G[i, k]
    return CB, occ, nc, H, HW, tot, W


@jit
def depth2_depth1(occ, nc, H, HW, tot, W, min_leaf, penalty, tol, out):
    """Best tree of depth <= 1; writes the split to ``out[0:2]`` (-1: a leaf)."""
    p = H.shape[0]
    K = H.shape[2]
    best = _min_row(tot, K)
    out[:] = -1
    if W < 2.0 * min_leaf:
        return best
    pl = np.empty(K)
    for j in range(p):
        pl[:] = 0.0
        wl = 0.0
        for c in range(nc[j] - 1):
            wl += HW[j, c]
            for k in range(K):
                pl[k] += H[j, c, k]
            if wl < min_leaf:
                continue
            if W - wl < min_leaf:
                break
            cost = _min_row(pl, K) + _min_diff(tot, pl, K) + penalty
            if cost < best - tol:
                best = cost
                out[:] = -1
                out[0] = j
                out[1] = occ[j, c]
    return best


@jit
def depth2_root_start(j1, CB, nc, H, HW, tot, order, start, wLc, PL, bestL, bestR, splL,
                      splR):
    """Set up root feature j1: rows sorted by its bin, leaf costs of every root cut."""
    n_s = CB.shape[0]
    K = H.shape[2]
    m1 = nc[j1]
    start[: m1 + 1] = 0
    for a in range(n_s):
        start[CB[a, j1] + 1] += 1
    for c in range(m1):
        start[c + 1] += start[c]
    fill = start[:m1].copy()
    for a in range(n_s):
        c = CB[a, j1]
        order[fill[c]] = a
        fill[c] += 1
    PL[:] = 0.0
    wl = 0.0
    for c in range(m1 - 1):
        wl += HW[j1, c]
        wLc[c] = wl
        for k in range(K):
            PL[k] += H[j1, c, k]
        bestL[c] = _min_row(PL, K)
        bestR[c] = _min_diff(tot, PL, K)
        splL[c, 0] = -1
        splR[c, 0] = -1


@jit
def depth2_pair(j1, j2, c1_lo, c1_hi, idx, CB, occ, nc, H, HW, G, cnt, tot, W, min_leaf,
                penalty, order, start, wLc, HL, HLW, PL, bestL, bestR, splL, splR, tol):
    """Best child splits on feature j2 for the root cuts c1 in [c1_lo, c1_hi) of j1.

    ``HL``/``HLW``/``PL`` carry the per-bin sums of the rows left of the root
    cut from one call to the next (start with ``c1_lo = 0`` on zeroed
    arrays, then continue where the last call stopped).
    """
    K = G.shape[1]
    m2 = nc[j2]
    m1 = nc[j1]
    pl = np.empty(K)
    pr = np.empty(K)
    PR = np.empty(K)
    for c1 in range(c1_lo, min(c1_hi, m1 - 1)):
        for s in range(start[c1], start[c1 + 1]):
            a = order[s]
            i = idx[a]
            c2 = CB[a, j2]
            HLW[c2] += cnt[i]
            for k in range(K):
                HL[c2, k] += G[i, k]
                PL[k] += G[i, k]
        wL = wLc[c1]
        wR = W - wL
        if wR < min_leaf:
            return c1 + 1, True
        if wL < min_leaf:
            continue
        if wL >= 2.0 * min_leaf:
            pl[:] = 0.0
            wl = 0.0
            for c2 in range(m2 - 1):
                wl += HLW[c2]
                for k in range(K):
                    pl[k] += HL[c2, k]
                if wl < min_leaf:
                    continue
                if wL - wl < min_leaf:
                    break
                cost = _min_row(pl, K) + _min_diff(PL, pl, K) + penalty
                if cost < bestL[c1] - tol:
                    bestL[c1] = cost
                    splL[c1, 0] = j2
                    splL[c1, 1] = occ[j2, c2]
        if wR >= 2.0 * min_leaf:
            for k in range(K):
                PR[k] = tot[k] - PL[k]
            pr[:] = 0.0
            wl = 0.0
            for c2 in range(m2 - 1):
                wl += HW[j2, c2] - HLW[c2]
                for k in range(K):
                    pr[k] += H[j2, c2, k] - HL[c2, k]
                if wl < min_leaf:
                    continue
                if wR - wl < min_leaf:
                    break
                cost = _min_row(pr, K) + _min_diff(PR, pr, K) + penalty
                if cost < bestR[c1] - tol:
                    bestR[c1] = cost
                    splR[c1, 0] = j2
                    splR[c1, 1] = occ[j2, c2]
    return min(c1_hi, m1 - 1), min(c1_hi, m1 - 1) >= m1 - 1


@jit
def depth2_root_finish(j1, occ, nc, W, min_leaf, penalty, wLc, bestL, bestR, splL, splR,
                       best, tol, out):
    """Combine the children of every root cut of j1; improves ``best``/``out``."""
    for c1 in range(nc[j1] - 1):
        wL = wLc[c1]
        if wL < min_leaf or W - wL < min_leaf:
            continue
        # bestL/bestR already include the penalty of a child split.
        cost = bestL[c1] + bestR[c1] + penalty
        if cost < best - tol:
            best = cost
            out[0] = j1
            out[1] = occ[j1, c1]
            out[2] = splL[c1, 0]
            out[3] = splL[c1, 1] if splL[c1, 0] >= 0 else -1
            out[4] = splR[c1, 0]
            out[5] = splR[c1, 1] if splR[c1, 0] >= 0 else -1
    return best
