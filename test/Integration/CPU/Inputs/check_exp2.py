"""Calls exp2-rows.mlir's library on the values where f32 exp2 has edges
(+-inf, NaN, the underflow and overflow thresholds, integers, halves) and on
fresh random ones, and compares with float64's exp2: at most 1.5 ULP off
from 2^-126 up, 0 below 2^-126 (-inf included), +inf from 128 on, NaN
kept. Prints one line per property and the worst error."""
import ctypes
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "lib"))
from memref_descriptor import descriptor  # noqa: E402


lib = ctypes.CDLL(sys.argv[1])
rng = np.random.default_rng()
edges = [-np.inf, np.inf, np.nan, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5,
         127.0, 127.5, np.nextafter(np.float32(128), np.float32(0)), 128.0,
         128.5, 200.0, 1e30, -125.0, -125.5, -126.0,
         np.nextafter(np.float32(-126), np.float32(0)),
         np.nextafter(np.float32(-126), np.float32(-200)), -126.5, -127.0,
         -149.0, -150.0, -1e30, 1e-8, -1e-8]
x = np.concatenate([np.array(edges, np.float32),
                    rng.uniform(-130, 130, 1024).astype(np.float32),
                    rng.uniform(-2, 2, 512).astype(np.float32),
                    np.round(rng.uniform(-126, 127, 256)).astype(np.float32)])
x = np.resize(x, (8, 256)).astype(np.float32)
x.flat[:len(edges)] = edges
out = np.full(x.shape, 1.5, np.float32)  # poisoned
args = [descriptor(a) for a in (x, out)]
status = lib._mlir_ciface_exp2s(*[ctypes.byref(d) for d in args])
print("status", status)

with np.errstate(over="ignore"):
    want = np.exp2(x.astype(np.float64))
nan = np.isnan(x)
print("NaN kept", bool(np.all(np.isnan(out[nan]))))
low = x < -126
print("below -126 is 0", bool(np.all(out[low] == 0)))
high = x >= 128
print("from 128 +inf", bool(np.all(np.isposinf(out[high]))))
normal = ~nan & ~low & ~high
ulp = np.spacing(want[normal].astype(np.float32)).astype(np.float64)
error = np.abs(out[normal].astype(np.float64) - want[normal]) / ulp
print("within 1.5 ULP", bool(np.all(error <= 1.5)), "worst %.2f ULP" % error.max())
