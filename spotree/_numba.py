"""One place that compiles spotree's kernels with numba, and where their cache lives.

Every compiled function in spotree is decorated with :func:`jit`. It is
``numba.njit(nogil=True, cache=...)`` with the on-disk cache moved out of the
installed package and keyed by the source of *every* kernel module:

- numba invalidates a cached function only when its own source file changes,
  so a kernel that calls a kernel of another file would keep running the old
  callee after an edit. The cache folder is named by a hash of all kernel
  sources (and the numba and Python versions): any edit anywhere starts a
  fresh folder, and stale machine code is never loaded.
- The folder is in the user's cache directory (``$SPOTREE_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/spotree`` or ``~/.cache/spotree``), never inside
  ``site-packages``: a reinstall cannot leave numba files behind that shadow
  an editable install, and a read-only install still caches.
- ``SPOTREE_NUMBA_CACHE=0`` turns the disk cache off (every process compiles).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pathlib
import sys
import threading

import numba
from numba.core import caching, types

__all__ = ["jit", "cfunc", "cache_dir", "KERNEL_MODULES"]

_PKG = pathlib.Path(__file__).resolve().parent

#: Source files (relative to the package) holding compiled kernels; their
#: content keys the cache folder. A new kernel module must be listed here.
KERNEL_MODULES = (
    "tree/_kernels.py",
    "tree/_optimal_kernels.py",
    "problems/_compiled.py",
    "problems/_certificate_kernels.py",
)

_LOCK = threading.Lock()
_CACHE_DIR = []


def _fingerprint():
    h = hashlib.sha256()
    h.update(numba.__version__.encode())
    h.update(sys.version.encode())
    for rel in KERNEL_MODULES:
        path = _PKG / rel
        h.update(rel.encode())
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"<missing>")
    return h.hexdigest()[:16]


def _user_cache_root():
    env = os.environ.get("SPOTREE_CACHE_DIR")
    if env:
        return pathlib.Path(env)
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or pathlib.Path.home() / "AppData" / "Local"
        return pathlib.Path(base) / "spotree" / "cache"
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "spotree"


def cache_dir():
    """The folder numba caches spotree's kernels in, or None when caching is off.

    None when ``SPOTREE_NUMBA_CACHE=0`` or when no writable folder exists.
    """
    with _LOCK:
        if not _CACHE_DIR:
            path = None
            if os.environ.get("SPOTREE_NUMBA_CACHE", "1") != "0":
                try:
                    path = _user_cache_root() / "numba" / _fingerprint()
                    path.mkdir(parents=True, exist_ok=True)
                    probe = path / f".probe-{os.getpid()}"
                    probe.write_bytes(b"")
                    probe.unlink()
                except OSError:
                    path = None
            _CACHE_DIR.append(path)
        return _CACHE_DIR[0]


@contextlib.contextmanager
def _file_lock(path):
    """An exclusive lock on the file ``path`` (made if absent) between processes.

    Where no lock can be taken (no ``fcntl``, a read-only folder), the block runs
    unlocked, as numba's own cache does.
    """
    try:
        import fcntl

        fh = open(path, "a+b")
    except (ImportError, OSError):
        fh = None
    if fh is None:
        yield
        return
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        except OSError:
            pass
        yield  # closing the file releases the lock


class _LockedIndexDataCacheFile(caching.IndexDataCacheFile):
    """numba's cache files of one function, read and written under a file lock.

    numba saves a new signature by reading the function's index, naming a data
    file not yet in it, writing the index back, then the data. Two processes
    saving different signatures of one kernel at once (pytest-xdist workers, the
    processes of ``spotree reproduce --jobs``, on a cold cache) both read the
    same index, both named ``<kernel>.1.nbc``, and the last index written could
    name the other signature's data: a later process then loaded the float64
    machine code for int64 arguments (tests/test_numba.py). Loads take the lock
    too, so that an index and its data are read as one save left them.
    """

    def _lock_path(self):
        return self._index_path + ".lock"

    def save(self, key, data):
        with _file_lock(self._lock_path()):
            super().save(key, data)

    def load(self, key):
        with _file_lock(self._lock_path()):
            return super().load(key)


def _decorate(decorator, fn, cache=True, **options):
    folder = cache_dir() if cache else None
    if folder is None:
        return decorator(cache=False, **options)(fn)
    # numba picks a function's cache locator when the function is decorated,
    # reading config.CACHE_DIR at that moment; set it only for the decoration
    # so that other libraries' numba caches stay where they are. The cache
    # object is made then too (a cfunc also compiles then): the locked cache
    # files are swapped in for the decoration only, for the same reason.
    with _LOCK:
        saved = numba.config.CACHE_DIR, caching.IndexDataCacheFile
        numba.config.CACHE_DIR = str(folder)
        caching.IndexDataCacheFile = _LockedIndexDataCacheFile
        try:
            return decorator(cache=True, **options)(fn)
        finally:
            numba.config.CACHE_DIR, caching.IndexDataCacheFile = saved


def _link_only_compiler():
    """numba's compiler for ``jit(internal=True)`` kernels, or None where unavailable.

    It differs from numba's own in one step: the kernel's LLVM module is
    neither optimized nor compiled to machine code on its own (see
    ``_LinkOnlyLibrary``). Built on first use from numba's pipeline classes
    (the ``pipeline_class`` option); under a numba whose internals differ it
    is None, and internal kernels compile as numba compiles them (more LLVM
    work, the same results).
    """
    with _LOCK:
        if not _LINK_ONLY:
            try:
                compiler = _build_link_only_compiler()
            except Exception:  # pragma: no cover - numba internals of another version
                compiler = None
            _LINK_ONLY.append(compiler)
        return _LINK_ONLY[0]


_LINK_ONLY = []

#: What ``_LinkOnlyLibrary.finalize`` uses of numba's code library; where one
#: is missing (another numba version) the library is finalized as numba does.
_LIBRARY_PARTS = ("_linking_libraries", "_reload_init", "_final_module", "_codegen",
                  "_get_module_for_linking", "_finalize_dynamic_globals",
                  "_verify_declare_only_symbols", "serialize_using_bitcode")


def _build_link_only_compiler():
    import llvmlite.binding as ll
    import llvmlite.ir as llvmir
    from numba.core import codegen
    from numba.core.compiler import Compiler, DefaultPassBuilder
    from numba.core.compiler_machinery import PassManager, register_pass
    from numba.core.typed_passes import NativeLowering

    class _EnvOnlyCodegen:
        """The codegen, whose ``set_env`` first gives the engine the global it fills.

        A kernel's Environment (what its code reads to build, for instance,
        an exception with run-time values) is found through a global of its
        module, filled in the JIT engine. The kernel's module is not compiled
        here, so a module holding that global alone is: the callers' machine
        code resolves to it, as it resolved to the kernel's own compiled
        module before (the engine keeps a common global's first definition).
        """

        def __init__(self, cg):
            self._cg = cg

        def __getattr__(self, name):
            return getattr(self._cg, name)

        def set_env(self, env_name, env):
            module = self._cg._create_empty_module(env_name)
            gv = llvmir.GlobalVariable(module, llvmir.IntType(8).as_pointer(), name=env_name)
            gv.linkage = "common"
            gv.initializer = llvmir.Constant(gv.type.pointee, None)
            self._cg._add_module(ll.parse_assembly(str(module)))
            self._cg._engine.finalize_object()
            self._cg.set_env(env_name, env)

    class _LinkOnlyLibrary(codegen.JITCodeLibrary):
        """The code library of an internal kernel: its IR, for its callers to link.

        numba finalizes every function's library by linking in its callees'
        IR, optimizing the result and compiling it to machine code; a caller
        then links that IR again, optimizes it again in its own module and
        compiles it again. An internal kernel's own machine code is never run
        (it has no wrapper), so here its library is only linked: its callers
        optimize and compile its code, once, in the root kernel's module.
        On a cold knapsack fit, nested seven levels deep, that LLVM work was
        a fifth of the first fit's time. The disk cache keeps the IR too.
        """

        _link_only = False

        def finalize(self):
            if not all(hasattr(self, a) for a in _LIBRARY_PARTS):
                return super().finalize()  # pragma: no cover - another numba
            self._raise_if_finalized()
            seen = set()
            for library in self._linking_libraries:
                if library not in seen:
                    seen.add(library)
                    self._reload_init.update(library._reload_init)
                    self._final_module.link_in(library._get_module_for_linking(), preserve=True)
            self._final_module.verify()
            self._finalize_dynamic_globals()
            self._verify_declare_only_symbols()
            self._link_only = self._finalized = True

        def get_pointer_to_function(self, name):
            self._ensure_finalized()
            if self._link_only:
                return 0  # no machine code (and an internal kernel has no wrapper)
            return super().get_pointer_to_function(name)  # pragma: no cover

        @property
        def codegen(self):
            return _EnvOnlyCodegen(self._codegen) if self._link_only else self._codegen

        def serialize_using_object_code(self):
            # Loaded from the cache, numba makes a bitcode library ready (and
            # compiles it) as it does its own.
            self._ensure_finalized()
            if self._link_only:
                return self.serialize_using_bitcode()
            return super().serialize_using_object_code()  # pragma: no cover

    @register_pass(mutates_CFG=True, analysis_only=False)
    class _LinkOnlyLowering(NativeLowering):
        # A name of its own per class (a module imported twice registers twice).
        _name = f"spotree_link_only_lowering_{id(_LINK_ONLY):x}"

        def run_pass(self, state):
            if state.library is None:
                state.library = _LinkOnlyLibrary(state.targetctx.codegen(),
                                                 state.func_id.func_qualname)
                # As numba's lowering does, so that the library can be cached.
                state.library.enable_object_caching()
            return super().run_pass(state)

    class _LinkOnlyCompiler(Compiler):
        def define_pipelines(self):
            # numba's nopython pipeline (DefaultPassBuilder.define_nopython_pipeline)
            # with the lowering pass above.
            flags = self.state.flags
            if flags.force_pyobject or flags.auto_parallel.enabled:  # pragma: no cover
                return super().define_pipelines()
            dpb = DefaultPassBuilder
            pm = PassManager("nopython")
            pm.passes.extend(dpb.define_untyped_pipeline(self.state).passes)
            pm.passes.extend(dpb.define_typed_pipeline(self.state).passes)
            pm.passes.extend((_LinkOnlyLowering if p is NativeLowering else p, d)
                             for p, d in dpb.define_nopython_lowering_pipeline(self.state).passes)
            pm.finalize()
            return [pm]

    return _LinkOnlyCompiler


def jit(fn=None, *, internal=False, **options):
    """``numba.njit`` with spotree's cache location (see the module docstring).

    Usable bare (``@jit``) or with numba options (``@jit(fastmath=False)``).
    Functions are compiled with ``nogil=True`` unless told otherwise.
    ``cache=False`` keeps one function off the disk cache: it compiles in
    every process (what a test of compilation itself needs, since a function
    loaded from the cache compiles none of its callees).

    ``internal=True`` marks a function called only from compiled code: numba
    then builds neither its Python nor its C wrapper. **Never call such a
    function from Python**: without its wrapper the call crashes the
    interpreter (a segmentation fault, not an exception). Each wrapper is lowered and compiled by LLVM on its own: some
    tens of milliseconds per function of a cold start. Nor is the function
    itself optimized or compiled to machine code on its own: its callers
    link its IR and optimize and compile it in their module, as they did
    before besides (see ``_LinkOnlyLibrary``). Tiny helpers are
    better decorated ``inline="always"``: inlined before typing, they are
    not compiled as functions of their own (about 0.1 s each saved), and
    stay callable from Python.
    """
    if fn is None:
        return lambda f: jit(f, internal=internal, **options)
    options.setdefault("nogil", True)
    if internal:
        options.update(no_cpython_wrapper=True, no_cfunc_wrapper=True)
        compiler = _link_only_compiler()
        if compiler is not None:
            options.setdefault("pipeline_class", compiler)
    return _plain_types(_decorate(numba.njit, fn, **options))


def _plain_types(dispatcher):
    """Compile calls from compiled code for the arguments' plain types.

    numba types a constant argument (``f(x, 0)``, ``g(True)``, or a variable
    that SSA shows to hold one) as a literal and compiles the callee again
    for it: on a knapsack fit's cold start that was seven second versions
    of five kernels (the literal 0, True or False next to int64 or bool).
    Calls are resolved against the plain types instead, so every kernel
    compiles once per signature of non-constant types; ``omitted`` default
    arguments stay specialized. Under a numba without this hook, calls go
    through unchanged (more compiles, same results).
    """
    get = getattr(dispatcher, "get_call_template", None)
    if get is None:  # pragma: no cover - numba internals of another version
        return dispatcher

    def get_call_template(args, kws):
        return get(tuple(types.unliteral(a) for a in args),
                   {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def cfunc(signature, fn):
    """``numba.cfunc(signature)(fn)`` with spotree's cache location.

    Compiles (or loads from the cache) at once. Compiled code receives the
    result as a first-class function of type ``FunctionType(signature)``:
    a kernel that takes it is compiled once for every function of that
    signature, and only the functions a fit passes are ever compiled.
    """
    return _decorate(lambda **o: numba.cfunc(signature, **o), fn)
