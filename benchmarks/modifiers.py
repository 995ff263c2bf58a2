#!/usr/bin/env python3
# ===- modifiers.py - the cost of a score modifier -------------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   build/venv/bin/python3 benchmarks/modifiers.py [--shape 1 8 1024 64] [--repeat 20]
#
# attn_mlir.flex_attention with a score_mod against the same attention
# without one (causal, f32), same inputs, same run: Gemma 2's softcap
# (cap * tanh(score / cap)), the same softcap written with exp, and scores
# through erf, log1p and sigmoid. The ratio to the attention without a
# modifier is what a modifier costs; a transcendental function that LLVM
# scalarises into libm calls costs several times the attention. The last
# two rows are scaled_dot_product_attention's causal attention without and
# with `softcap=` (whose cap is read at run time).
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, cpu_model  # noqa: E402


def modifiers(flex):
    cap = 30.0
    return {
        "none": None,
        "softcap (tanh)": lambda s, b, h, q, k: cap * flex.tanh(s / cap),
        "softcap (exp)": lambda s, b, h, q, k: cap * (1.0 - 2.0 / (flex.exp(2.0 * s / cap) + 1.0)),
        "erf": lambda s, b, h, q, k: s + flex.erf(s),
        "log1p": lambda s, b, h, q, k: s - flex.log1p(s * s),
        "sigmoid": lambda s, b, h, q, k: s * flex.sigmoid(s),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--shape", type=int, nargs=4, default=[1, 8, 1024, 64],
                   metavar=("B", "H", "S", "D"))
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = p.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python_packages"))
    import attn_mlir
    from attn_mlir import flex

    print(f"CPU: {cpu_model(args.build)}")
    print(f"command: {' '.join(sys.argv)}")
    rng = np.random.default_rng()
    q, k, v = (rng.standard_normal(args.shape).astype(np.float32) for _ in range(3))
    mask = lambda b, h, i, j: i >= j  # noqa: E731
    calls = {name: (lambda mod=mod: attn_mlir.flex_attention(q, k, v, score_mod=mod,
                                                             mask_mod=mask))
             for name, mod in modifiers(flex).items()}
    # sdpa's softcap= reads the cap and its reciprocal at run time (one
    # compile for every cap); against sdpa's causal attention without it.
    calls["sdpa causal"] = lambda: attn_mlir.scaled_dot_product_attention(
        q, k, v, is_causal=True)
    calls["sdpa softcap=30 (run-time cap)"] = lambda: attn_mlir.scaled_dot_product_attention(
        q, k, v, is_causal=True, softcap=30.0)
    best = {}
    for name, call in calls.items():
        call()  # compile
    for _ in range(args.repeat):  # rounds interleave the modifiers
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            best[name] = min(best.get(name, float("inf")), time.perf_counter() - start)
    print(f"| score_mod ({'x'.join(map(str, args.shape))}, causal) | ms | / none |")
    print("|---|---|---|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds * 1e3:.3f} | {seconds / best['none']:.2f} |")


if __name__ == "__main__":
    main()
