# ===- attn_mlir/_arrays.py - NumPy arrays and torch tensors alike ---------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# The package takes NumPy arrays (float32, float16, ml_dtypes.bfloat16,
# bool) and CPU torch tensors, and answers in kind. This module is the one
# place that knows the difference.
#
# ===----------------------------------------------------------------------=== #

import math
import os
import sys

import numpy as np

from . import _native

try:  # optional: NumPy has no bfloat16 of its own
    import ml_dtypes

    _NP_BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _NP_BF16 = None


def _torch():
    """torch if something imported it (this module never does)."""
    return sys.modules.get("torch")


_TENSOR = None  # torch.Tensor, once something imported torch


def is_torch(x):
    global _TENSOR
    # Asked of every argument of every call: NumPy answered first, then
    # the class kept once torch is there.
    if type(x) is np.ndarray:
        return False
    if _TENSOR is None:
        torch = _torch()
        if torch is None:
            return False
        _TENSOR = torch.Tensor
    return isinstance(x, _TENSOR)


def first_torch(values):
    """The first torch tensor among `values` (None entries allowed), or
    None: what a call's results are allocated like."""
    for x in values:
        if x is not None and is_torch(x):
            return x
    return None


_TORCH_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16",
                "float64": "f64", "bool": "i1", "int8": "i8", "int32": "i32",
                "int64": "i64"}
# uint16 is how `as_array` passes ml_dtypes.bfloat16 data (by its bits).
_NUMPY_NAMES = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16",
                np.dtype(np.float64): "f64", np.dtype(np.bool_): "i1",
                np.dtype(np.int8): "i8", np.dtype(np.int32): "i32",
                np.dtype(np.int64): "i64", np.dtype(np.uint16): "bf16"}


def element(x):
    """The IR element type of `x` ('f32', 'f16', 'bf16', 'i1', ...), or None."""
    if is_torch(x):
        return _TORCH_NAMES.get(str(x.dtype).replace("torch.", ""))
    dtype = np.asarray(x).dtype if not hasattr(x, "dtype") else np.dtype(x.dtype)
    if _NP_BF16 is not None and dtype == _NP_BF16:
        return "bf16"
    return _NUMPY_NAMES.get(dtype)


def as_array(x, name):
    """`x` as something the native call takes: a C-contiguous array or
    tensor (copied only when it is not one already). Torch tensors stay on
    their device; the compiled function checks it is the one its target
    runs on."""
    if type(x) is np.ndarray and x.flags.c_contiguous:
        # No copy to make: skip np.require, a microsecond of a small call's
        # budget.
        pass
    elif is_torch(x):
        # The native call reads the tensor's storage (data_ptr), with or
        # without grad: a contiguous one needs no new tensor object.
        return x if x.is_contiguous() else x.detach().contiguous()
    else:
        # np.require keeps a 0-D array 0-D (np.ascontiguousarray makes it 1-D).
        x = np.require(x, requirements="C")
    if _NP_BF16 is not None and x.dtype == _NP_BF16:
        return x.view(np.uint16)  # bf16 travels as its bit patterns
    return x


def as_view(x, name):
    """`x` as a parameter that takes views passes it (docs/CpuABI.md's
    row-strided buffers): a torch tensor or NumPy array whose last
    dimension is contiguous stays the caller's view, strides and all (a
    transposed [B, L, H, D] projection read in place); anything else as
    as_array makes it."""
    if is_torch(x):
        if x.dim() == 0 or x.stride(-1) == 1 or x.shape[-1] <= 1:
            return x
    elif type(x) is np.ndarray and x.ndim > 0 and x.dtype != _NP_BF16 and (
            x.strides[-1] == x.itemsize or x.shape[-1] <= 1) and all(
                s % x.itemsize == 0 for s in x.strides):
        return x
    return as_array(x, name)


def as_destination(x, name):
    """`x` as a destination parameter passes it: a view the call writes
    (docs/CpuABI.md, "Destinations"), as as_view passes it but never a
    copy, which would take the results and drop them."""
    y = as_view(x, name)
    if is_torch(x):
        same = y is x
    else:
        same = (y.__array_interface__["data"][0] == x.__array_interface__["data"][0]
                and y.strides == x.strides)
    if not same:
        strides = x.stride() if is_torch(x) else tuple(s // x.itemsize for s in x.strides)
        raise ValueError(f"{name} is written in place, so it must be a view the call "
                         f"can take as it is: its last dimension contiguous (stride 1), "
                         f"got strides {list(strides)} (in elements)")
    return y


def reshape_view(x, new_shape, name):
    """`x` reshaped to `new_shape` as a view of the same memory: an error
    where that needs a copy (a destination's results would go to it)."""
    new_shape = tuple(new_shape)
    if tuple(x.shape) == new_shape:
        return x
    try:
        if is_torch(x):
            return x.view(new_shape)
        y = x.view()
        y.shape = new_shape
        return y
    except (RuntimeError, AttributeError):
        raise ValueError(f"{name} of shape {list(x.shape)} cannot be viewed as "
                         f"{list(new_shape)} without a copy; pass a view whose leading "
                         f"dimensions merge") from None


def may_overlap(a, b):
    """Whether the memory of arrays or tensors `a` and `b` may overlap: for
    tensors of different storages never (one call each, the common case),
    else whether the bounds of what each spans meet (conservative)."""
    if is_torch(a) and is_torch(b):
        if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
            return False
        return _span_overlap(*(
            (x.data_ptr(), x.element_size(), x.stride(), x.shape) for x in (a, b)))
    if not is_torch(a) and not is_torch(b):
        return bool(np.may_share_memory(a, b))
    return False  # a NumPy array and a torch tensor of their own memory


def _span_overlap(first, second):
    """Whether two (address, element size, strides, shape) spans meet."""
    def bounds(start, size, strides, shape):
        if any(d == 0 for d in shape):
            return None
        low = start + size * sum(s * (d - 1) for s, d in zip(strides, shape) if s < 0)
        high = start + size * (1 + sum(s * (d - 1) for s, d in zip(strides, shape) if s > 0))
        return low, high

    sa, sb = bounds(*first), bounds(*second)
    return sa is not None and sb is not None and sa[0] < sb[1] and sb[0] < sa[1]


def contiguous(x):
    """`x` (from as_array or as_view) as a C-contiguous array or tensor."""
    if is_torch(x):
        return x if x.is_contiguous() else x.contiguous()
    return x if x.flags.c_contiguous else np.ascontiguousarray(x)


def poison_requested():
    """Whether ATTN_MLIR_ALLOCATOR_POISON asks for poisoned buffers: set to
    anything but "" or "0", the rule of the compiled code's allocator and
    of the CPU pipeline (attnCpuAllocatorPoisonRequested, CpuAllocator.h)."""
    return os.environ.get("ATTN_MLIR_ALLOCATOR_POISON", "") not in ("", "0")


# Read once, as the compiled code's allocator does.
_POISON = poison_requested()
_NUMPY_RESULT_TYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64,
                       "bf16": _NP_BF16}


# Results of at least this many bytes come from the compiled code's caching
# allocator (lib/Runtime/CpuAllocator.cpp caches blocks from 64 KiB): from
# malloc, a training step's outputs of a few MiB each grew the heap and
# gave it back to the system on every step, faulting in (and zeroing) fresh
# pages each time.
_CACHED_RESULT_BYTES = 64 << 10


def _empty(shape, dtype):
    """A result array of `shape` and `dtype`: filled with NaN under
    ATTN_MLIR_ALLOCATOR_POISON, else unfilled; a block of the caching
    allocator when it is large (the block returns to the cache when the
    array, and any tensor made from it, is freed)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < _CACHED_RESULT_BYTES:
        return np.full(shape, np.nan, dtype) if _POISON else np.empty(shape, dtype)
    array = _native.cpu_empty(nbytes).view(dtype).reshape(shape)
    if _POISON:
        array.fill(np.nan)
    return array


def new_result(reference, shape, elem):
    """A new output of `shape` and element `elem` as (what the native call
    writes, what the caller gets): a torch tensor when `reference` is one,
    else a NumPy array. With ATTN_MLIR_ALLOCATOR_POISON set (poison_requested)
    in the environment when the package is imported (the test suites set it) it
    is filled with NaN, so that elements the compiled code fails to write
    show; otherwise left unfilled: a fill is a pass over the output, and on
    torch tensors it wakes torch's own OpenMP threads, whose spinning then
    competes with the compiled code's for the cores."""
    if reference is not None and is_torch(reference):
        torch = _torch()
        if elem != "bf16" and reference.device.type == "cpu":
            # A NumPy array's memory as the tensor: the native call writes
            # the array (the buffer protocol, faster than a tensor's
            # attributes) and this costs half of torch.empty.
            array = _empty(shape, _NUMPY_RESULT_TYPES[elem])
            return array, torch.from_numpy(array)
        dtype = {"f32": torch.float32, "f16": torch.float16,
                 "bf16": torch.bfloat16, "f64": torch.float64}[elem]
        if _POISON:
            tensor = torch.full(tuple(shape), float("nan"), dtype=dtype,
                                device=reference.device)
        else:
            tensor = torch.empty(tuple(shape), dtype=dtype, device=reference.device)
        return tensor, tensor
    array = _empty(shape, _NUMPY_RESULT_TYPES[elem])
    return as_array(array, "result"), array



def device(x):
    """'cpu' for NumPy arrays and CPU tensors, 'cuda' for CUDA tensors."""
    return x.device.type if is_torch(x) else "cpu"


def shape(x):
    return tuple(int(d) for d in x.shape)


def reshape(x, new_shape):
    return x.reshape(tuple(new_shape))
