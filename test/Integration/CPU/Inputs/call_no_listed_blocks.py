"""Calls no-listed-blocks.mlir's library with NumPy arrays as a C caller
would describe them: the empty indices array has NumPy's strides, (0,)."""
import ctypes
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "lib"))
from memref_descriptor import descriptor  # noqa: E402


lib = ctypes.CDLL(sys.argv[1])
rng = np.random.default_rng()
q, k, v = (rng.standard_normal((1, 1, 256, 16)).astype(np.float32) for _ in range(3))
offsets = np.zeros(3, np.int32)
indices = np.zeros(0, np.int32)
out = np.full((1, 1, 256, 16), np.nan, np.float32)
print("indices strides", indices.strides)
keep = [descriptor(x) for x in (q, k, v, offsets, indices, out)]
status = lib._mlir_ciface_sdpa(*[ctypes.byref(d) for d in keep])
info = (ctypes.c_int64 * 5)()
print("status", status, "error", lib.attn_abi_error(info), list(info))
# No key is visible to any row: every row is 0 (docs/Numerics.md).
print("rows of zeros", int(np.sum(np.all(out == 0, axis=-1))), "of", 256)
