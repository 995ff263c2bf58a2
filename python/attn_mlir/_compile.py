# ===- attn_mlir/_compile.py - compile once, call many times ---------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# `compile(ir_text)` JIT-compiles a module with the CPU pipeline (the same
# passes as attnc and attn-run) and returns a callable. Compiled functions
# are cached in-process by (IR, target, entry, pipeline options, -O level):
# the entry points of this package generate IR whose text is a function of
# the op configuration, shapes and dtypes, so the IR is the cache key.
#
# ===----------------------------------------------------------------------=== #

import time

from . import _arrays
from ._native import Kernel

_TARGETS = ("cpu", "cuda")
_cache = {}
_stats = {"compiles": 0, "cache_hits": 0, "compile_seconds": 0.0,
          "last_compile_seconds": None}


class CompiledFunction:
    """A JIT-compiled function. Call it with its inputs (NumPy arrays or CPU
    torch tensors, in argument order); it allocates its results, runs, and
    returns one result or a tuple of them (torch tensors if any input was
    one)."""

    def __init__(self, kernel):
        self._kernel = kernel

    @property
    def name(self):
        return self._kernel.name

    @property
    def inputs(self):
        """[(element type, shape)] of the parameters; -1 is a dynamic size."""
        return self._kernel.inputs

    @property
    def outputs(self):
        return self._kernel.outputs

    @property
    def compile_seconds(self):
        return self._kernel.compile_seconds

    def __call__(self, *inputs):
        expected = self._kernel.inputs
        if len(inputs) != len(expected):
            raise TypeError(f"@{self.name} takes {len(expected)} inputs, "
                            f"{len(inputs)} were given")
        arrays = []
        for i, (x, (elem, _)) in enumerate(zip(inputs, expected)):
            got = _arrays.element(x)
            if got != elem:
                raise TypeError(f"input #{i} of @{self.name} has element type "
                                f"{got}, the function takes {elem}")
            arrays.append(_arrays.as_array(x, f"input #{i}"))
        like = next((x for x in inputs if _arrays.is_torch(x)), None)
        return self.run_arrays(arrays, like)

    def run_arrays(self, arrays, like=None):
        """Calls the function on `arrays` already in native form (from
        `_arrays.as_array`, of the parameters' shapes and types), allocating
        the results like `like` (a torch tensor, or None for NumPy)."""
        kernel = self._kernel
        shapes = kernel.result_shapes([list(_arrays.shape(a)) for a in arrays])
        results = [_arrays.empty_like_kind(like, s, elem)
                   for (elem, _), s in zip(kernel.outputs, shapes)]
        kernel.call(list(arrays) + [_arrays.as_array(r, "result") for r in results])
        return results[0] if len(results) == 1 else tuple(results)


def _check_target(target):
    if target not in _TARGETS:
        raise ValueError(f"target must be one of {', '.join(_TARGETS)}, got {target!r}")
    if target == "cuda":
        raise NotImplementedError(
            "target='cuda': attn-mlir has no CUDA backend yet; use target='cpu'")


def compile(ir, target="cpu", entry=None, pipeline="", opt_level=3):
    """Compiles the module `ir` (text) for `target` and returns its entry
    (`entry`, or the only public function) as a CompiledFunction.
    `pipeline` takes the options of attnc's --cpu-pipeline
    ("q-tile=64 kv-tile=64", ...). Bad IR raises ValueError with the
    compiler's diagnostics."""
    _check_target(target)
    key = (ir, target, entry, pipeline, opt_level)
    function = _cache.get(key)
    if function is not None:
        _stats["cache_hits"] += 1
        return function
    start = time.perf_counter()
    function = CompiledFunction(Kernel.compile(ir, entry, pipeline, opt_level))
    seconds = time.perf_counter() - start
    _stats["compiles"] += 1
    _stats["compile_seconds"] += seconds
    _stats["last_compile_seconds"] = seconds
    _cache[key] = function
    return function


def stats():
    """Compilation counters of this process: compiles, cache_hits,
    compile_seconds (total) and last_compile_seconds."""
    return dict(_stats, cached_functions=len(_cache))


def clear_cache():
    """Forgets every compiled function (the next call compiles again)."""
    _cache.clear()
