#!/usr/bin/env python3
# ===- numpy_sdpa.py - naive NumPy attention, the simplest peer ----------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# Times softmax(Q K^T / sqrt(D)) V in float32 NumPy (OpenBLAS matmuls, the
# whole score matrix materialised) for one shape, and prints the minimum
# time and GFLOP/s counted as attn-run does (4 * B * H * Sq * Skv * D,
# causal not discounted), so the two can be compared as a ratio.
#
# Usage: benchmarks/numpy_sdpa.py B H S D [--causal] [--repeat N]
#
# ===----------------------------------------------------------------------=== #

import argparse
import time

import numpy as np


def attention(q, k, v, causal):
    s = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(q.shape[-1]))
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, np.float32(-np.inf))
    s -= s.max(-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(-1, keepdims=True)
    return s @ v


def main():
    p = argparse.ArgumentParser()
    for name in ("B", "H", "S", "D"):
        p.add_argument(name, type=int)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    rng = np.random.default_rng(1)
    q, k, v = (rng.uniform(-1, 1, (a.B, a.H, a.S, a.D)).astype(np.float32) for _ in range(3))
    times = []
    for _ in range(a.repeat):
        start = time.perf_counter()
        attention(q, k, v, a.causal)
        times.append(time.perf_counter() - start)
    flops = 4 * a.B * a.H * a.S * a.S * a.D
    best = min(times)
    print(f"numpy: {a.repeat} runs, min {best * 1e3:.3f} ms, median "
          f"{sorted(times)[len(times) // 2] * 1e3:.3f} ms, {flops / best * 1e-9:.2f} GFLOP/s")


if __name__ == "__main__":
    main()
