# ===- attn_mlir/_compile.py - compile once, call many times ---------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# `compile(ir_text)` compiles a module with the CPU pipeline (the same
# passes as attnc and attn-run), or with target="cuda" the CUDA pipeline
# (docs/CUDA.md: a shared library calling libattn_cuda_runtime, called on
# torch CUDA tensors), and returns a callable. The entry points of
# this package generate IR whose text is a function of the op
# configuration, shapes and dtypes, so (IR, target, entry, pipeline, -O)
# is the cache key:
#   - in-process, compiled functions are kept in a dict;
#   - on disk, each is a shared library (what attnc --emit=shared makes)
#     named by a hash of the key and the compiler's identity, in
#     $ATTN_MLIR_CACHE_DIR (default ~/.cache/attn_mlir), so a second process
#     loads it instead of compiling. ATTN_MLIR_DISK_CACHE=0 turns the disk
#     cache off (functions are then JIT-compiled in memory).
# Loading a library runs its code, so the disk cache is used only in a
# directory no other user can write (created 0700, owned by this user,
# neither group- nor world-writable; otherwise one warning and functions
# stay in memory), and a library is loaded only when its content matches
# the SHA-256 recorded next to it when it was written (a truncated or
# corrupted entry, or one from a process that died mid-write, is compiled
# again). Entries are written to a temporary file and renamed into place,
# the recorded hash first: a process that sees a library sees its hash.
#
# ===----------------------------------------------------------------------=== #

import atexit
import ctypes
import hashlib
import hmac
import os
import stat
import tempfile
import time
import warnings

from . import _arrays, _native, _threads
from ._native import Program

__version__ = "0.1.0"

_TARGETS = ("cpu", "cuda")
_cache = {}
# (shape-generic source, target) -> the first static source called with it,
# or None once another came (compile_shaped).
_shape_families = {}
# (key, dynamic, target) -> what compile_shaped returned for a call whose
# texts `key` determines: later calls skip writing the texts.
_shaped_calls = {}
# Calls of the functional API whose arguments were checked before, by their
# signature (argument types, shapes, element types and options): what
# `remember_call` was given for them. A hit skips the checks and the
# building of the call, most of a small call's cost.
_checked_calls = {}
_stats = {"dynamic_compiles": 0, "compiles": 0, "cache_hits": 0, "disk_hits": 0, "compile_seconds": 0.0,
          "last_compile_seconds": None, "autotune_runs": 0, "tuning_cache_hits": 0,
          "weight_packs": 0, "disk_rejects": 0}
# Cache directories already warned about (one warning each per process).
_untrusted_dirs = set()


class CacheWarning(UserWarning):
    """The disk cache directory is not private to this user (or cannot be
    created): compiled functions are kept in memory instead."""


class TuningWarning(UserWarning):
    """A tuning cache entry was ignored (corrupt, or measured for another
    target) or the tuning result could not be kept."""


def _format_shape(shape):
    return "x".join("?" if d < 0 else str(d) for d in shape)


# What attn_abi_error's kind field means (docs/CpuABI.md).
_ABI_MISMATCHES = {0: "size", 1: "stride", 2: "data pointer", 3: "offset",
                   4: "size against another buffer's", 5: "value", 6: "page",
                   7: "position", 8: "shared page"}
_VALUE_MISMATCH, _PAGE_MISMATCH, _POSITION_MISMATCH, _SHARED_PAGE_MISMATCH = 5, 6, 7, 8


class _SharedLibrary:
    """A function in a shared library, called through its C interface
    (`_mlir_ciface_<name>` taking one memref descriptor per parameter). CPU
    code checks the buffers it is given and returns a status (0: ran);
    attn_abi_error says why it refused them."""

    _checks_abi = True

    def __init__(self, path, name, elements=None, strided=()):
        library = ctypes.CDLL(path)
        self._name = name
        self._function = getattr(library, "_mlir_ciface_" + name)
        # CPU code with its parameters' element types (and which take
        # views): called directly from C++ (_native.CifaceFunction),
        # without a ctypes descriptor per parameter; None: through `call`.
        self.direct = None
        if elements is not None:
            address = ctypes.cast(self._function, ctypes.c_void_p).value
            self.direct = _native.CifaceFunction(address, elements, list(strided))
        self._function.restype = ctypes.c_int32 if self._checks_abi else None
        if self._checks_abi:
            self._abi_error = library.attn_abi_error
            self._abi_error.restype = ctypes.c_int
            self._abi_error.argtypes = [ctypes.POINTER(ctypes.c_int64)]
        self._types = {}
        # CPU code: parallel loops on the host's threads (_threads).
        set_parallel_for = getattr(library, "attn_set_parallel_for", None)
        if set_parallel_for is not None:
            set_parallel_for.restype = None
            set_parallel_for.argtypes = [ctypes.c_void_p]
            set_parallel_for(_native.parallel_for())
        # CPU code: temporaries from the caching allocator (docs/CpuABI.md).
        set_allocator = getattr(library, "attn_set_allocator", None)
        if set_allocator is not None:
            set_allocator.restype = None
            set_allocator.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            set_allocator(*_native.cpu_allocator())

    def _descriptor(self, array):
        shape = _arrays.shape(array)
        rank = len(shape)
        kind = self._types.get(rank)
        if kind is None:
            fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                      ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * rank),
                      ("strides", ctypes.c_int64 * rank)]
            kind = self._types[rank] = type(f"MemRef{rank}D", (ctypes.Structure,),
                                            {"_fields_": fields})
        strides, stride = [0] * rank, 1
        for d in range(rank - 1, -1, -1):
            strides[d], stride = stride, stride * shape[d]
        pointer = array.data_ptr() if _arrays.is_torch(array) else array.ctypes.data
        return kind(pointer, pointer, 0, (ctypes.c_int64 * rank)(*shape),
                    (ctypes.c_int64 * rank)(*strides))

    def call(self, arrays):
        descriptors = [self._descriptor(a) for a in arrays]
        status = self._function(*[ctypes.byref(d) for d in descriptors])
        if status:
            self.raise_abi_error(arrays)

    def raise_abi_error(self, arrays):
        """Raises what attn_abi_error says of the buffers the function
        refused (a nonzero status)."""
        info = (ctypes.c_int64 * 5)()
        self._abi_error(info)
        argument, dimension, kind, expected, actual = info
        if kind == _VALUE_MISMATCH:
            raise ValueError(
                f"@{self._name} refused its buffers: argument #{argument} (shape "
                f"{_format_shape(_arrays.shape(arrays[argument]))}), element {dimension} is "
                f"{actual}, outside [0, {expected}]: the lengths it holds must fit the keys "
                f"the function attends over")
        if kind == _PAGE_MISMATCH:
            # The row-major index of the entry in the table [B, max_pages]
            # that was passed (the check read it, so max_pages > 0).
            shape = _arrays.shape(arrays[argument])
            sequence, entry = divmod(dimension, shape[1])
            raise ValueError(
                f"@{self._name} refused its buffers: argument #{argument} (block table, "
                f"shape {_format_shape(shape)}), element [{sequence}, {entry}] is {actual}, "
                f"a page sequence {sequence} reads keys from or writes rows into, but the "
                f"cache has {expected} pages (0 to {expected - 1})")
        if kind == _POSITION_MISMATCH:
            raise ValueError(
                f"@{self._name} refused its buffers: argument #{argument} (positions), "
                f"element {dimension} is {actual}: sequence {dimension}'s appended rows "
                f"must fit its block table row, so its position must be in [0, {expected}]")
        if kind == _SHARED_PAGE_MISMATCH:
            raise ValueError(
                f"@{self._name} refused its buffers: sequences {expected} and {dimension} "
                f"both append rows into page {actual}: sequences must not share the pages "
                f"they write")
        raise RuntimeError(
            f"@{self._name} refused its buffers: argument #{argument} (shape "
            f"{_format_shape(_arrays.shape(arrays[argument]))}), dimension {dimension}: "
            f"{_ABI_MISMATCHES.get(kind, kind)} {actual}, expected {expected}")


class _CudaLibrary(_SharedLibrary):
    """A function compiled for CUDA: the runtime library is loaded first
    (the function's library needs its mgpu* symbols), tensors are passed by
    their device pointers, the function runs on PyTorch's current stream and
    returns when its kernels are done; the runtime's error (which names the
    CUDA call that failed) becomes a RuntimeError."""

    _runtime = None
    _checks_abi = False

    def __init__(self, path, name):
        # Loaded at the first call: loading initialises the driver and the
        # GPU, which compiling (e.g. to fill the disk cache) does not need.
        self._path, self._name, self._function = path, name, None
        self._types = {}

    def _load(self):
        runtime = _CudaLibrary._load_runtime()
        super().__init__(self._path, self._name)
        self._raise_runtime_error(f"loading {self._path}")
        return runtime

    @classmethod
    def _load_runtime(cls):
        if cls._runtime is None:
            path = _native.cuda_runtime_library()
            if not path:
                raise RuntimeError("target='cuda': this build of attn-mlir found no CUDA "
                                   "toolkit, so it has no CUDA runtime library")
            try:
                runtime = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError as e:
                raise RuntimeError(f"target='cuda': cannot load the CUDA runtime: {e} "
                                   "(is the NVIDIA driver installed?)") from None
            runtime.attnCudaGetError.restype = ctypes.c_char_p
            runtime.attnCudaSetStream.argtypes = [ctypes.c_void_p]
            cls._runtime = runtime
        return cls._runtime

    @classmethod
    def _raise_runtime_error(cls, what):
        message = cls._runtime.attnCudaGetError()
        if message:
            cls._runtime.attnCudaClearError()
            raise RuntimeError(f"{what}: {message.decode()}")

    def call(self, arrays):
        if self._function is None:
            self._load()
        torch = _arrays._torch()
        stream = torch.cuda.current_stream(arrays[0].device)
        self._runtime.attnCudaSetStream(ctypes.c_void_p(stream.cuda_stream or None))
        super().call(arrays)
        self._raise_runtime_error("running the CUDA function")


def _default_gpu_arch():
    """sm_XY of the first GPU PyTorch sees (sm_90a on Hopper), else sm_90a."""
    torch = _arrays._torch()
    if torch is not None and torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability(0)
        return f"sm_{major}{minor}" + ("a" if major == 9 else "")
    return "sm_90a"


class CompiledFunction:
    """A compiled function. Call it with its inputs (NumPy arrays or CPU
    torch tensors, in argument order); it allocates its results, runs, and
    returns one result or a tuple of them (torch tensors if any input was
    one)."""

    def __init__(self, program, backend, compile_seconds, target="cpu"):
        self._program, self._backend = program, backend
        self.compile_seconds = compile_seconds
        self.target = target
        # Result shapes by input shapes. Working them out lowers a copy of
        # the module (about 1 ms): static results need none of it, and a
        # shape-generic function does it once per distinct input shapes.
        static = [shape for _, shape in program.outputs]
        self._result_shapes = {}
        self._static_results = static if all(d >= 0 for s in static for d in s) else None
        # The shared library's entry called on the arrays themselves, or
        # None (the JIT); looked up once, not per call.
        self._direct = getattr(backend, "direct", None)

    @property
    def name(self):
        return self._program.name

    @property
    def inputs(self):
        """[(element type, shape)] of the parameters; -1 is a dynamic size."""
        return self._program.inputs

    @property
    def outputs(self):
        return self._program.outputs

    def __call__(self, *inputs):
        expected = self._program.inputs
        if len(inputs) != len(expected):
            raise TypeError(f"@{self.name} takes {len(expected)} inputs, "
                            f"{len(inputs)} were given")
        arrays = [_arrays.as_array(x, "input") for x in inputs]
        return self.run_arrays(arrays, _arrays.first_torch(inputs))

    def _check(self, arrays):
        """The checks the C++ runner makes, for the shared-library path,
        and that every array is where the target runs."""
        params = self._program.inputs + self._program.outputs
        n_in = len(self._program.inputs)
        for i, (array, (elem, shape)) in enumerate(zip(arrays, params)):
            what = f"input #{i}" if i < n_in else f"output #{i - n_in}"
            where = _arrays.device(array)
            if self.target == "cuda" and where != "cuda":
                raise TypeError(f"{what} of @{self.name} is "
                                f"{'a NumPy array' if not _arrays.is_torch(array) else 'on the CPU'}; "
                                "target='cuda' takes torch CUDA tensors")
            if self.target == "cpu" and where != "cpu":
                raise ValueError(f"{what} of @{self.name} is on {array.device}; this "
                                 "function was compiled for target='cpu'")
            got = _arrays.element(array)
            if got != elem:
                raise TypeError(f"{what} of @{self.name} has element type {got}, "
                                f"the function takes {elem}")
            actual = _arrays.shape(array)
            if len(actual) != len(shape) or any(s >= 0 and s != a for s, a in zip(shape, actual)):
                raise ValueError(f"{what} of @{self.name} has shape {_format_shape(actual)}, "
                                 f"the function takes {_format_shape(shape)}")

    def run_arrays(self, arrays, like=None):
        """Calls the function on `arrays` already in native form (from
        `_arrays.as_array`), allocating the results like `like` (a torch
        tensor, or None for NumPy)."""
        program = self._program
        direct = self._direct
        if direct is None:
            self._check(arrays[:len(program.inputs)])
        shapes = self._static_results
        if shapes is None:
            key = tuple(tuple(_arrays.shape(a)) for a in arrays)
            shapes = self._result_shapes.get(key)
            if shapes is None:
                if len(self._result_shapes) >= 4096:  # a bound for long-lived servers
                    self._result_shapes.clear()
                shapes = self._result_shapes[key] = program.result_shapes(
                    [list(s) for s in key])
        # Views (_arrays.as_view) go to the direct call only: the other
        # paths describe every buffer as dense.
        buffers = list(arrays) if direct is not None else [
            _arrays.contiguous(a) for a in arrays]
        results = []
        for (elem, _), shape in zip(program.outputs, shapes):
            written, result = _arrays.new_result(like, shape, elem)
            buffers.append(written)
            results.append(result)
        if direct is None:
            self._backend.call(buffers)
        else:
            status = direct(buffers)
            if status:
                # What the Python checks say first (wrong element type,
                # device or shape), else what the function said.
                self._check(arrays[:len(program.inputs)])
                if status < 0:
                    raise TypeError(f"argument #{-1 - status} of @{self.name} is not "
                                    "a C-contiguous CPU array of its element type")
                self._backend.raise_abi_error(buffers)
        return results[0] if len(results) == 1 else tuple(results)


def _check_target(target):
    if target not in _TARGETS:
        raise ValueError(f"target must be one of {', '.join(_TARGETS)}, got {target!r}")


def cache_dir():
    """The on-disk cache directory, or None when it is turned off."""
    if os.environ.get("ATTN_MLIR_DISK_CACHE", "1") == "0":
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.environ.get("ATTN_MLIR_CACHE_DIR") or os.path.join(base, "attn_mlir")


def _compiler_identity():
    """What a cached library depends on besides its key: this package's
    version, the native module (a rebuilt compiler invalidates) and whether
    the pipeline poisons its stack tiles (ATTN_MLIR_ALLOCATOR_POISON, read
    where the pipeline is built: docs/CpuABI.md)."""
    st = os.stat(_native.__file__)
    poison = _arrays.poison_requested()
    return f"{__version__}:{st.st_size}:{st.st_mtime_ns}:{int(poison)}"


def _private_directory(directory):
    """`directory` (created 0700 when missing) if only this user can write
    to it: owned by the effective user and neither group- nor
    world-writable. Otherwise None, with one CacheWarning per directory: a
    library someone else could have written there would run as this
    user."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        info = os.stat(directory)
    except OSError as error:
        problem = f"it cannot be created or read ({error})"
    else:
        problem = None
        if not stat.S_ISDIR(info.st_mode):
            problem = "it is not a directory"
        elif info.st_uid != os.geteuid():
            problem = (f"it belongs to user id {info.st_uid}, not to this process's "
                       f"({os.geteuid()})")
        elif info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            problem = f"other users can write to it (mode {info.st_mode & 0o777:o})"
    if problem is None:
        return directory
    if directory not in _untrusted_dirs:
        _untrusted_dirs.add(directory)
        warnings.warn(f"attn_mlir: not using the disk cache {directory}: {problem}; "
                      "compiled functions stay in memory (set ATTN_MLIR_CACHE_DIR to a "
                      "directory only you can write, or ATTN_MLIR_DISK_CACHE=0)",
                      CacheWarning, stacklevel=3)
    return None


def _content_hash(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _verified(path):
    """Whether the library at `path` may be loaded: it exists, is this
    user's, is not writable by others, and its content has the SHA-256
    recorded in `path`.sha256 when it was written."""
    try:
        info = os.stat(path)
        if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return False
        with open(path + ".sha256") as f:
            recorded = f.read().strip()
        return hmac.compare_digest(recorded, _content_hash(path))
    except OSError:
        return False


def _write_atomically(directory, path, write, suffix=".part"):
    """Calls write(temporary path) for a file in `directory`, then renames
    it to `path` (readers see all of it or nothing)."""
    fd, partial = tempfile.mkstemp(suffix=suffix, dir=directory)
    os.close(fd)
    try:
        write(partial)
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


def _store_library(directory, path, emit):
    """Writes the library `emit(file)` makes to `path`, its content's
    SHA-256 to `path`.sha256 first."""
    def write_library(library):
        emit(library)
        digest = _content_hash(library)

        def write_hash(file):
            with open(file, "w") as f:
                f.write(digest + "\n")

        _write_atomically(directory, path + ".sha256", write_hash)

    _write_atomically(directory, path, write_library, suffix=".so")


_scratch = None


def _scratch_dir():
    """Where CUDA libraries go when the disk cache is off (ctypes loads
    files), removed with the process."""
    global _scratch
    if _scratch is None:
        _scratch = tempfile.TemporaryDirectory(prefix="attn_mlir-")
    return _scratch.name


def tuning_cache_path():
    """The tuning cache autotune=True reads and writes, attnc --autotune's
    too: tuning.json in the cache directory (also when the disk cache of
    compiled functions is turned off)."""
    return _native.default_tuning_cache_path()


def _autotune(program, pipeline, opt_level):
    """`pipeline` with the sizes autotuning finds for `program` (from the
    tuning cache, else timed on this machine and stored there)."""
    sizes, source, _, problems = program.autotune(pipeline, opt_level, tuning_cache_path())
    for problem in problems:
        warnings.warn(problem, TuningWarning, stacklevel=3)
    if source == "cache":
        _stats["tuning_cache_hits"] += 1
    elif source == "measured":
        _stats["autotune_runs"] += 1
    return f"{pipeline} {sizes}".strip()


def compile(ir, target="cpu", entry=None, pipeline="", opt_level=3, gpu_arch=None,
            autotune=False):
    """Compiles the module `ir` (text) for `target` and returns its entry
    (`entry`, or the only public function) as a CompiledFunction.
    `pipeline` takes the options of attnc's --cpu-pipeline
    ("q-tile=64 kv-tile=64", ...), or for target="cuda" those of
    --cuda-pipeline ("kv-tile=32", ...); `gpu_arch` (cuda) defaults to the
    GPU PyTorch sees, else sm_90a. `autotune=True` (cpu) times a few
    candidate tile and register-block sizes on this machine on the
    module's shapes, or takes them from the tuning cache
    (`tuning_cache_path()`); sizes `pipeline` gives stay fixed. Bad IR
    raises ValueError with the compiler's diagnostics."""
    _check_target(target)
    if autotune and target != "cpu":
        raise ValueError("autotune=True tunes the CPU pipeline; target='cuda' has no "
                         "tuning yet")
    if target == "cuda":
        gpu_arch = gpu_arch or _default_gpu_arch()
    key = (ir, target, entry, pipeline, opt_level, gpu_arch, autotune)
    function = _cache.get(key)
    if function is not None:
        _stats["cache_hits"] += 1
        return function
    start = time.perf_counter()
    _threads.bind()
    program = Program.parse(ir, entry)
    if autotune:
        pipeline = _autotune(program, pipeline, opt_level)
    disk_key = (ir, target, entry, pipeline, opt_level, gpu_arch)
    directory = cache_dir()
    if directory is not None:
        directory = _private_directory(directory)
    if directory is None and target == "cuda":
        directory = _scratch_dir()  # mkdtemp's: 0700, this user's
    if directory is None:
        backend = program.jit(pipeline, opt_level)
        compiled = True
    else:
        digest = hashlib.sha256(repr((disk_key, _compiler_identity())).encode()).hexdigest()[:40]
        path = os.path.join(directory, digest + ".so")
        compiled = not _verified(path)
        if compiled:
            if os.path.exists(path):
                _stats["disk_rejects"] += 1
            _store_library(directory, path, lambda file: program.emit_shared(
                file, pipeline, opt_level, target, gpu_arch or "sm_90a"))
        if target == "cuda":
            backend = _CudaLibrary(path, program.name)
        else:
            backend = _SharedLibrary(path, program.name, [
                elem for elem, _ in program.inputs + program.outputs],
                program.strided_inputs)
    seconds = time.perf_counter() - start
    if compiled:
        _stats["compiles"] += 1
        _stats["compile_seconds"] += seconds
        _stats["last_compile_seconds"] = seconds
    else:
        _stats["disk_hits"] += 1
    function = CompiledFunction(program, backend, seconds, target)
    _cache[key] = function
    return function


def checked_call(signature):
    """What remember_call kept for a call of this signature, or None."""
    entry = _checked_calls.get(signature)
    if entry is not None:
        _stats["cache_hits"] += 1
    return entry


def remember_call(signature, entry):
    if len(_checked_calls) >= 4096:  # a bound for long-lived servers
        _checked_calls.clear()
    _checked_calls[signature] = entry


def compile_shaped(source, dynamic=None, target="cpu", key=None):
    """Compiles one call's function for its shapes or for every size.

    `source(d)` returns the function's text: with d=False for this call's
    exact shapes, with d=True with its batch and sequence sizes dynamic.
    `dynamic=False` compiles the static text, `dynamic=True` the dynamic
    one; `dynamic=None` (automatic, as torch.compile does) compiles the
    static text for the first shapes of a function, and the dynamic text
    once a call comes with other sizes of the same function, which then
    serves every later size: a loop over N lengths compiles twice, not N
    times. `key`, when given, is a hashable value that determines both
    texts (shapes, element types, attributes): a call with a key seen
    before takes the function chosen then without writing the texts again
    (writing them was most of a small call's overhead)."""
    if key is None:
        return _compile_shaped(source, dynamic, target)
    memo = (key, dynamic, target)
    function = _shaped_calls.get(memo)
    if function is not None:
        _stats["cache_hits"] += 1
        return function
    function = _compile_shaped(source, dynamic, target)
    if len(_shaped_calls) >= 4096:  # a bound for long-lived servers
        _shaped_calls.clear()
    _shaped_calls[memo] = function
    return function


def _compile_shaped(source, dynamic, target):
    if dynamic is None:
        generic, static = source(True), source(False)
        # Per family, its first static text until another one comes, then
        # None (generalised): what is kept per family stays one string.
        family = (generic, target)
        first = _shape_families.setdefault(family, static)
        if first == static or generic == static:
            return compile(static, target=target)
        _shape_families[family] = None
        dynamic = True
    if not dynamic:
        return compile(source(False), target=target)
    before = _stats["compiles"]
    function = compile(source(True), target=target)
    _stats["dynamic_compiles"] += _stats["compiles"] - before
    return function


def stats():
    """Compilation counters of this process: compiles, dynamic_compiles
    (those of shape-generic functions compile_shaped chose), cache_hits (in
    process), disk_hits (loaded from the on-disk cache), compile_seconds
    (total), last_compile_seconds, autotune_runs (candidates timed) and
    tuning_cache_hits (sizes taken from the tuning cache), weight_packs
    (module parameters packed into panels: once per parameter array) and
    disk_rejects (disk cache entries not loaded because their content did
    not match the hash recorded with them: compiled again); and
    the caching allocator of compiled CPU code: allocator_reused (blocks
    handed out again), allocator_fresh (blocks taken from the system) and
    allocator_cached_bytes (free blocks it holds, see empty_cache); and
    the parallel loops run on torch's threads (set_thread_pool):
    parallel_inline_loops (on the calling thread: small loops, whose work
    costs less than waking the team) and parallel_team_loops."""
    allocator = {"allocator_" + k: v for k, v in _native.cpu_allocator_stats().items()}
    parallel = {"parallel_" + k: v for k, v in _native.parallel_stats().items()}
    return dict(_stats, cached_functions=len(_cache), cache_dir=cache_dir(), **allocator,
                **parallel)


def empty_cache():
    """Gives the free blocks the compiled CPU code's allocator keeps for
    reuse back to the system (stats()["allocator_cached_bytes"]); compiled
    functions stay."""
    _native.cpu_allocator_release()


def clear_cache():
    """Forgets every compiled function of this process (the on-disk cache
    stays)."""
    _cache.clear()
    _shape_families.clear()
    _shaped_calls.clear()
    _checked_calls.clear()


# The compiled functions go before the interpreter tears modules down: a
# function still cached then (a process that imported transformers, whose
# teardown order differs) outlives the native module, which reports it as
# leaked.
atexit.register(clear_cache)
