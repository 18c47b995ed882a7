"""Compiled test of cost vectors against explicit basis certificates.

Kept apart from :mod:`._basis_cache` so that edits there do not change the
fingerprint of spotree's kernel cache (see :mod:`spotree._numba`).
"""

from __future__ import annotations

import numpy as np

from .._numba import jit

__all__ = ["first_certifying"]


@jit
def first_certifying(C, scale, G, gtol, starts, stops, entries):
    """For each row ``c`` of C, the first ``k`` of ``entries`` whose certificate holds.

    Entry ``k`` owns the rows ``starts[k]:stops[k]`` of ``G``; it certifies
    ``c`` when ``G[r] @ c + scale * gtol[r] >= 0`` for all of them. The test
    of an entry stops at its first failing row, so a batch costs far less
    than the full product ``C @ G.T``. Returns -1 where no entry holds.

    A plain loop rather than BLAS: the products are small (a few dozen
    columns), and BLAS thread limits are global to the process, so limiting
    them per call breaks under threads.
    """
    n, d = C.shape
    out = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        for t in range(entries.shape[0]):
            k = entries[t]
            ok = True
            for r in range(starts[k], stops[k]):
                s = scale[i] * gtol[r]
                for j in range(d):
                    s += G[r, j] * C[i, j]
                if s < 0.0:
                    ok = False
                    break
            if ok:
                out[i] = k
                break
    return out
