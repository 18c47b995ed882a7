"""spotree._numba: the jit wrapper's options (internal kernels, plain-typed calls)."""

import pathlib

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


# Compiled in this process (off the disk cache), for the tests of an internal
# kernel's own compilation below.
@jit(internal=True, cache=False)
def _internal_checked(x):
    if x < 0:
        # An exception with a run-time value: its code reads the kernel's
        # Environment (see spotree._numba._build_link_only_compiler).
        raise ValueError("negative", x)
    return 2 * x


@jit(cache=False)
def _calls_internal_checked(x):
    return _internal_checked(x) + 1


def test_internal_kernel_leaves_its_machine_code_to_its_callers():
    # numba optimized and compiled an internal kernel's module on its own,
    # for nothing (it has no wrapper to run); its caller linked its IR and
    # optimized and compiled it again. Now the caller alone compiles it.
    import spotree._numba as sn

    if sn._link_only_compiler() is None:
        pytest.skip("this numba's internals do not allow it")
    assert _calls_internal_checked(20) == 41
    (sig,) = _internal_checked.signatures
    callee = _internal_checked.overloads[sig].library
    missing = [a for a in sn._LIBRARY_PARTS if not hasattr(callee, a)]
    if missing:
        # (numba 0.58 has no _reload_init: its kernels compile as numba's own.)
        pytest.skip(f"this numba's code library lacks {missing}: compiled as numba does")
    caller = _calls_internal_checked.overloads[_calls_internal_checked.signatures[0]].library
    assert not callee._compiled  # numba's flag: its module went through the JIT
    assert caller._compiled
    # The Environment the kernel's code reads is in place: the exception
    # carries its run-time value (without it numba raises a RuntimeError).
    with pytest.raises(ValueError) as info:
        _calls_internal_checked(-2)
    assert info.value.args == ("negative", -2)


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


def _index_files(folder):
    return {(p.name, p.stat().st_mtime_ns) for p in folder.rglob("*.nbi")}


def test_cache_false_writes_nothing_to_the_cache_folder():
    # A kernel compiled with cache=False writes no index file into spotree's
    # cache folder; a cached twin does (the control). Compared before and
    # after each first call, so files left by earlier runs do not matter.
    import spotree._numba as sn

    folder = sn.cache_dir()
    if folder is None:
        pytest.skip("the disk cache is off in this environment")

    @jit(cache=False)
    def _uncached_probe(x):
        return x + 3

    @jit
    def _cached_probe(x):
        return x + 2

    before = _index_files(folder)
    assert _uncached_probe(1) == 4
    new = _index_files(folder) - before
    assert not new, new
    assert _uncached_probe.stats.cache_path is None
    # The control: compiled and written on a first run, loaded on the next.
    assert _cached_probe(1) == 3
    stats = _cached_probe.stats
    assert stats.cache_path is not None
    assert pathlib.Path(stats.cache_path).resolve().is_relative_to(pathlib.Path(folder).resolve())
    assert sum(stats.cache_hits.values()) + sum(stats.cache_misses.values()) == 1
    assert any("_cached_probe" in p.name for p in folder.rglob("*.nbi"))



_CACHE_RACE_CHILD = """
import importlib.util, os, sys, time
from numba.core import caching
# spotree/_numba.py alone (importing spotree would cost seconds per process).
spec = importlib.util.spec_from_file_location("sn", sys.argv[1])
sn = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sn)
role, other = sys.argv[2:4]
# An order that the scheduler of a busy machine can produce: both processes
# save at once (each waits for the other's compile); the float one writes its
# index first, the int one then its index and data, the float one its data last.
delays = {"int": (0.3, 0.0), "float": (0.1, 0.4), "check": None}[role]
save_overload = caching.Cache.save_overload
save_index, save_data = caching.IndexDataCacheFile._save_index, caching.IndexDataCacheFile._save_data
def at_once(self, sig, data):
    open(role + ".ready", "w").close()
    end = time.monotonic() + 60
    while not os.path.exists(other + ".ready") and time.monotonic() < end:
        time.sleep(0.01)
    return save_overload(self, sig, data)
def slow_index(self, overloads):
    time.sleep(index_delay)
    return save_index(self, overloads)
def slow_data(self, name, data):
    time.sleep(data_delay)
    return save_data(self, name, data)
if delays is not None:
    index_delay, data_delay = delays
    caching.Cache.save_overload = at_once
    caching.IndexDataCacheFile._save_index = slow_index
    caching.IndexDataCacheFile._save_data = slow_data
def twice_plus_one(x):
    return 2 * x + 1
f = sn.jit(twice_plus_one)
for arg in {"int": [3], "float": [3.25], "check": [3, 3.25]}[role]:
    print(repr(f(arg)))
"""


def test_cache_saves_of_two_processes_at_once_keep_each_signature_apart(tmp_path):
    # Two processes compiling different signatures of one kernel on a cold cache
    # (pytest-xdist workers, spotree reproduce --jobs): numba named both data files
    # <kernel>.1.nbc from the index each had read, and the index left behind
    # named the float64 code for int64 arguments: a third process got 7.0 for
    # f(3). The saves now run under a file lock.
    import os
    import subprocess
    import sys

    import spotree._numba as sn

    pytest.importorskip("fcntl", reason="the cache files are locked with fcntl (POSIX)")

    module = tmp_path / "racing_kernel.py"
    module.write_text(_CACHE_RACE_CHILD)
    env = dict(os.environ, SPOTREE_CACHE_DIR=str(tmp_path / "cache"), SPOTREE_NUMBA_CACHE="1")
    racers = [subprocess.Popen([sys.executable, str(module), sn.__file__, *roles],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env, cwd=tmp_path)
              for roles in (("int", "float"), ("float", "int"))]
    outputs = [p.communicate(timeout=300) for p in racers]
    assert [p.returncode for p in racers] == [0, 0], outputs
    assert [out.split() for out, _ in outputs] == [["7"], ["7.5"]]
    # Another process loads both from the cache: 2 * 3 + 1 is an int.
    check = subprocess.run([sys.executable, str(module), sn.__file__, "check", ""],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert check.returncode == 0, check.stderr
    assert check.stdout.split() == ["7", "7.5"]



def _linked_py(x):
    if x < 0:
        raise ValueError("negative", x)
    return 2 * x


def test_internal_kernel_from_the_disk_cache_links_into_a_new_caller():
    # An internal kernel is cached as IR. A second dispatcher of the same
    # function finds it in the cache folder (as a later process would) and a
    # new caller links it; numba compiles that IR as it loads it.
    import spotree._numba as sn

    if sn.cache_dir() is None:
        pytest.skip("the disk cache is off in this environment")
    first_inner = jit(_linked_py, internal=True)
    second_inner = jit(_linked_py, internal=True)

    @jit(cache=False)
    def first(x):
        return first_inner(x) + 1

    @jit(cache=False)
    def second(x):
        return second_inner(x) + 100

    assert first(3) == 7  # compiles _linked_py, or loads it (an earlier run)
    assert second(3) == 106
    assert sum(second_inner.stats.cache_hits.values()) == 1
    with pytest.raises(ValueError) as info:
        second(-2)
    assert info.value.args == ("negative", -2)
