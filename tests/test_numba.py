"""spotree._numba: the jit wrapper's options (internal kernels, plain-typed calls)."""

import numba
import pytest
from numba.core import types

from spotree._numba import jit


@jit(internal=True)
def _internal_twice(x):
    return 2 * x


@jit
def _calls_internal(x):
    return _internal_twice(x) + 1


# Off the disk cache: loaded from it, the caller would compile none of its
# callees and the check below would see no signature at all (the second run
# of this file in one cache folder failed so).
@jit(cache=False)
def _callee(x, k):
    return x + k


@jit(cache=False)
def _calls_with_constants(x):
    # A literal 0 and a literal 5: numba alone would type them Literal[int].
    return _callee(x, 0) + _callee(x, 5)


@numba.njit
def _plain_callee(x, k):
    return x + k


@numba.njit
def _plain_calls_with_constants(x):
    return _plain_callee(x, 0) + _plain_callee(x, 5)


def test_internal_kernel_runs_from_compiled_code_without_wrappers():
    # From compiled code it is called as usual; numba is told to build no
    # Python and no C wrapper for it (calling it from Python would crash
    # the interpreter, so the test does not).
    assert _calls_internal(20) == 41
    opts = _internal_twice.targetoptions
    assert opts.get("no_cpython_wrapper") and opts.get("no_cfunc_wrapper")
    assert not _callee.targetoptions.get("no_cpython_wrapper")


def _literal(sig):
    return any(isinstance(t, types.Literal) for t in sig)


def test_constant_arguments_compile_the_callee_once_for_plain_types():
    assert _calls_with_constants(10) == 25
    sigs = _callee.signatures
    assert len(sigs) == 1 and not _literal(sigs[0])
    assert sigs[0][1] == types.int64 or isinstance(sigs[0][1], types.Integer)
    # numba itself (the plain njit twin) specializes on the literals: what
    # the wrapper avoids. Where numba no longer does, the check above says
    # nothing new and this documents it.
    assert _plain_calls_with_constants(10) == 25
    if not any(_literal(s) for s in _plain_callee.signatures):
        pytest.skip("this numba does not compile literal versions of a callee")
    assert len(_plain_callee.signatures) > 1


def test_cache_false_writes_nothing_to_the_cache_folder(tmp_path):
    # The kernels above, compiled with cache=False, leave no index file in
    # spotree's cache folder; a cached twin does (the control).
    import spotree._numba as sn

    folder = sn.cache_dir()
    if folder is None:
        pytest.skip("the disk cache is off in this environment")
    assert _calls_with_constants(1) == 7
    names = {p.name for p in folder.rglob("*.nbi")}
    assert not any("_calls_with_constants" in n or "._callee-" in n for n in names)

    @jit
    def _cached_twin(x):
        return x + 1

    assert _cached_twin(1) == 2
    names = {p.name for p in folder.rglob("*.nbi")}
    assert any("_cached_twin" in n for n in names)
