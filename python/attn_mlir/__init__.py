# ===- attn_mlir/__init__.py - attention compiled by attn-mlir -------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# PyTorch-compatible attention backed by the compiler: each call builds the
# attn-dialect IR of the problem, compiles it once per configuration (the
# CPU pipeline, JIT) and runs it on the caller's arrays. NumPy arrays and
# CPU PyTorch tensors are passed without copying; results come back as the
# inputs came in.
#
# ===----------------------------------------------------------------------=== #

from ._compile import (CacheWarning, CompiledFunction, TuningWarning, __version__, cache_dir,
                       clear_cache, compile, empty_cache, stats, tuning_cache_path)
from .functional import paged_attention, scaled_dot_product_attention, varlen_attention
from .flex import flex_attention
from ._threads import set_thread_pool, thread_pool
from . import _autograd, flex, integrations, nn, viz

# torch custom ops exist before any torch.compile traces a call.
_autograd.define_with_torch()

__all__ = [
    "CacheWarning",
    "CompiledFunction",
    "TuningWarning",
    "cache_dir",
    "clear_cache",
    "compile",
    "empty_cache",
    "flex",
    "flex_attention",
    "integrations",
    "nn",
    "paged_attention",
    "scaled_dot_product_attention",
    "set_thread_pool",
    "stats",
    "thread_pool",
    "tuning_cache_path",
    "varlen_attention",
    "viz",
]
