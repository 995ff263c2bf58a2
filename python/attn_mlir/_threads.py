# ===- attn_mlir/_threads.py - compiled loops on the host's threads --------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# Which threads run the parallel loops of compiled CPU code. Every library
# this package compiles or loads gets the runtime's parallel-for
# (attn_set_parallel_for, docs/CpuABI.md). With torch loaded, and its ATen
# parallel backend OpenMP (the PyPI wheels on Linux: libgomp), that
# parallel-for runs the loops on torch's own OpenMP team: the threads that
# run torch's operators run ours too, one pool in the process. Otherwise
# the library runs them on its own OpenMP runtime (LLVM libomp), as a C
# program linking it does. Two pools in one process fight for its cores:
# libomp's threads spin for 200 ms after each of our calls while torch's
# need the same cores for the next operator (a small model's forward took
# 8 ms instead of 1).
#
# ===----------------------------------------------------------------------=== #

import ctypes
import os
import sys

from . import _native

_POOLS = ("auto", "torch", "openmp")
_policy = "auto"
# The addresses of torch's GOMP_parallel and omp_get_max_threads once
# found; None: not looked for since torch was loaded, False: torch has none.
_torch_runtime = None


def _find_torch_openmp():
    """(GOMP_parallel, omp_get_max_threads) of the OpenMP runtime torch's
    operators run on, or False where torch's backend is not OpenMP or its
    runtime cannot be found."""
    torch = sys.modules["torch"]
    if "parallel backend: OpenMP" not in torch.__config__.parallel_info():
        return False
    # libtorch_cpu calls the runtime: looking its entry points up in that
    # library finds them in the runtime it was linked with (a bundled
    # libgomp-<hash>.so.1 in the wheels), whatever its file name.
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    try:
        library = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        return tuple(ctypes.cast(getattr(library, name), ctypes.c_void_p).value
                     for name in ("GOMP_parallel", "omp_get_max_threads"))
    except (OSError, AttributeError):
        return False


def bind():
    """Binds the runtime's parallel-for to torch's OpenMP team when the
    policy allows it and torch is loaded (once; cheap after). Called before
    compiled code is made or loaded."""
    global _torch_runtime
    if _policy == "openmp" or _torch_runtime is not None or "torch" not in sys.modules:
        return
    _torch_runtime = _find_torch_openmp()
    if _torch_runtime:
        _native.bind_openmp(*_torch_runtime)


def set_thread_pool(pool="auto"):
    """Chooses the threads that run compiled CPU code's parallel loops:
    "torch" (torch's intra-op OpenMP team, the threads torch.get_num_threads
    counts; an error where torch is not loaded or has no OpenMP backend),
    "openmp" (the compiled library's own OpenMP runtime, LLVM libomp, sized by
    OMP_NUM_THREADS: what a C program linking the library gets), or "auto"
    (the default: torch's team once torch is loaded, else the library's
    own). Takes effect for every compiled function, already compiled or
    not. Returns the pool chosen before."""
    global _policy, _torch_runtime
    if pool not in _POOLS:
        raise ValueError(f"thread pool must be one of {', '.join(_POOLS)}, not {pool!r}")
    previous = _policy
    _policy = pool
    if pool == "openmp":
        _native.bind_openmp(0, 0)
        _torch_runtime = None
        return previous
    if pool == "torch" and "torch" not in sys.modules:
        _policy = previous
        raise RuntimeError("set_thread_pool('torch'): torch is not loaded")
    bind()
    if pool == "torch" and not _torch_runtime:
        _policy = previous
        raise RuntimeError("set_thread_pool('torch'): torch's ATen parallel backend is not "
                           "OpenMP (torch.__config__.parallel_info()), or its OpenMP "
                           "runtime was not found")
    return previous


def thread_pool():
    """The pool compiled CPU code's parallel loops run on now: "torch" or
    "openmp"."""
    return "torch" if _native.parallel_is_bound() else "openmp"
