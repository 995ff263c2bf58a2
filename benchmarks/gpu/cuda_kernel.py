"""Calling attn-mlir's CUDA shared libraries (attnc --target=cuda
--emit=shared) from PyTorch, on the machine with the GPU: the runtime is
loaded first (the libraries find it by name), tensors are passed as memref
descriptors of their device pointers (docs/CpuABI.md), and the runtime's
first recorded error (it names the CUDA call that failed) is raised."""

import ctypes
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from peers import memref_descriptor  # noqa: E402


class Runtime:
    def __init__(self, bundle):
        path = os.path.join(bundle, "libattn_cuda_runtime.so")
        # RTLD_GLOBAL: the kernels' libraries resolve mgpu* against it.
        self.lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        self.lib.attnCudaGetError.restype = ctypes.c_char_p
        self.lib.attnCudaSetStream.argtypes = [ctypes.c_void_p]

    def use_stream(self, stream):
        """Compiled code runs on `stream` (a torch.cuda.Stream), so that it
        is ordered with PyTorch's work and timed by its events."""
        self.lib.attnCudaSetStream(ctypes.c_void_p(stream.cuda_stream or None))

    def take_error(self):
        message = self.lib.attnCudaGetError()
        if message:
            self.lib.attnCudaClearError()
            return message.decode()
        return None


class Kernel:
    """One public function of a compiled library."""

    def __init__(self, runtime, path, symbol):
        self.runtime = runtime
        # Loading runs the constructor that loads the cubin (cuModuleLoadData).
        self.lib = ctypes.CDLL(path)
        self.fn = getattr(self.lib, symbol)
        self.fn.restype = None
        error = runtime.take_error()
        if error:
            raise RuntimeError(f"loading {path}: {error}")

    def __call__(self, *tensors):
        """Inputs then outputs, contiguous CUDA tensors; returns when the
        outputs are written (the function synchronises its stream)."""
        descriptors = []
        for t in tensors:
            assert t.is_cuda and t.is_contiguous()
            descriptors.append(memref_descriptor(t.data_ptr(), list(t.shape)))
        self.fn(*[ctypes.byref(d) for d in descriptors])
        error = self.runtime.take_error()
        if error:
            raise RuntimeError(error)


def parse_signature(signature):
    """Element type names of a `_mlir_ciface_` declaration's parameters
    (`attn_memref_bf16_4d *in0, ...` -> ['bf16', ...])."""
    return re.findall(r"attn_memref_(\w+?)_\d+d", signature)


def torch_dtype(torch, element):
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
            "f64": torch.float64, "i1": torch.bool, "i8": torch.int8,
            "i32": torch.int32, "i64": torch.int64}[element]
