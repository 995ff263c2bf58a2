#!/usr/bin/env python3
# ===- overhead.py - the cost of a call from Python ------------------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   build/venv/bin/python3 benchmarks/overhead.py [--calls 20000] [--repeat 5]
#
# A decode step calls attention once per layer per token, so what a call
# costs before any attention is computed is most of a small step. This
# times attn_mlir.functional.scaled_dot_product_attention against torch's on
# problems too small to compute anything (B1 H1 S8 D16, and one decode row
# against 16 keys with GQA), with torch tensors and with NumPy arrays (torch
# takes tensors only), and a compiled function called directly
# (attn_mlir.compile), and a small causal call on the [B, H, L, D] views of
# [B, L, H, D] projections that transformers pass (read in place, and copied
# first as before views), after a warm-up that compiles. Each figure is the
# best of --repeat runs of the mean over --calls back-to-back calls, in
# microseconds; the ratio is ours / torch's (lower is better).
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import cpu_model  # noqa: E402


def per_call(fn, calls, repeat):
    """Best over `repeat` runs of the mean seconds of `calls` calls."""
    for _ in range(100):
        fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main():
    p = argparse.ArgumentParser(description="per-call overhead from Python")
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = p.parse_args()
    os.environ["ATTN_MLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="attn-overhead-")
    sys.path.insert(0, os.path.join(args.build, "python_packages"))
    import attn_mlir
    import attn_mlir.functional as F
    import torch

    print(f"# CPU: {cpu_model(args.build)}; torch {torch.__version__} with "
          f"{torch.get_num_threads()} threads; mean of {args.calls} calls, best of "
          f"{args.repeat}")
    print("| call | attn-mlir us | torch us | attn-mlir / torch |")
    print("|---|---|---|---|", flush=True)
    rng = np.random.default_rng(0)
    problems = [("sdpa B1 H1 S8 D16", (1, 1, 8, 16), (1, 1, 8, 16), False),
                ("decode B1 Hq4 Hkv1 Skv16 D16", (1, 4, 1, 16), (1, 1, 16, 16), True)]
    for name, qshape, kshape, gqa in problems:
        q = rng.standard_normal(qshape).astype(np.float32)
        k = rng.standard_normal(kshape).astype(np.float32)
        v = rng.standard_normal(kshape).astype(np.float32)
        tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
        expected = torch.nn.functional.scaled_dot_product_attention(
            tq, tk, tv, enable_gqa=gqa).numpy()
        for inputs, kind in (((tq, tk, tv), "torch tensors"), ((q, k, v), "NumPy arrays")):
            got = np.asarray(F.scaled_dot_product_attention(*inputs, enable_gqa=gqa))
            if np.max(np.abs(got - expected)) > 1e-5:
                raise SystemExit(f"{name}: attn-mlir differs from torch")
        with torch.no_grad():
            theirs = per_call(lambda: torch.nn.functional.scaled_dot_product_attention(
                tq, tk, tv, enable_gqa=gqa), args.calls, args.repeat)
            for inputs, kind in (((tq, tk, tv), "torch tensors"), ((q, k, v), "NumPy arrays")):
                ours = per_call(lambda: F.scaled_dot_product_attention(*inputs, enable_gqa=gqa),
                                args.calls, args.repeat)
                print(f"| functional {name}, {kind} | {ours * 1e6:.1f} | {theirs * 1e6:.1f} | "
                      f"{ours / theirs:.2f} |", flush=True)
    # Transformers' inputs: [B, H, L, D] views of [B, L, H, D] projections
    # (B1 L24 H4 D64, causal). attn-mlir reads the views in place; the
    # second row makes the copies every call made before it did.
    views = [torch.from_numpy(rng.standard_normal((1, 24, 4, 64)).astype(np.float32))
             .transpose(1, 2) for _ in range(3)]
    got = F.scaled_dot_product_attention(*views, is_causal=True)
    if (got - torch.nn.functional.scaled_dot_product_attention(
            *views, is_causal=True)).abs().max() > 1e-5:
        raise SystemExit("views: attn-mlir differs from torch")
    with torch.no_grad():
        theirs = per_call(lambda: torch.nn.functional.scaled_dot_product_attention(
            *views, is_causal=True), args.calls, args.repeat)
        for kind, call in (
                ("views, read in place", lambda: F.scaled_dot_product_attention(
                    *views, is_causal=True)),
                ("views, copied first", lambda: F.scaled_dot_product_attention(
                    *(x.contiguous() for x in views), is_causal=True))):
            ours = per_call(call, args.calls, args.repeat)
            print(f"| functional B1 H4 L24 D64 causal, {kind} | {ours * 1e6:.1f} | "
                  f"{theirs * 1e6:.1f} | {ours / theirs:.2f} |", flush=True)
    # A paged decode (attn_mlir.paged_attention) against torch SDPA on the
    # same keys held contiguously: B1 Hq4 Hkv1, 16 keys in one 16-key page.
    q = rng.standard_normal((1, 1, 4, 16)).astype(np.float32)  # [B, Sq, Hq, D]
    kc = rng.standard_normal((2, 16, 1, 16)).astype(np.float32)
    vc = rng.standard_normal((2, 16, 1, 16)).astype(np.float32)
    table, lens = np.array([[1]], np.int32), np.array([16], np.int32)
    tq = torch.from_numpy(np.ascontiguousarray(np.swapaxes(q, 1, 2)))
    tk, tv = (torch.from_numpy(np.ascontiguousarray(np.swapaxes(c[1:2], 1, 2)))
              for c in (kc, vc))
    expected = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True)
    paged = (torch.from_numpy(q), torch.from_numpy(kc), torch.from_numpy(vc),
             torch.from_numpy(table), torch.from_numpy(lens))
    got = attn_mlir.paged_attention(*paged)
    if np.max(np.abs(got.transpose(1, 2).numpy() - expected.numpy())) > 1e-5:
        raise SystemExit("paged decode: attn-mlir differs from torch")
    with torch.no_grad():
        theirs = per_call(lambda: torch.nn.functional.scaled_dot_product_attention(
            tq, tk, tv, enable_gqa=True), args.calls, args.repeat)
    for inputs, kind in ((paged, "torch tensors"), ((q, kc, vc, table, lens), "NumPy arrays")):
        ours = per_call(lambda: attn_mlir.paged_attention(*inputs), args.calls, args.repeat)
        print(f"| paged_attention B1 Hq4 Hkv1 Skv16 D16, {kind} | {ours * 1e6:.1f} | "
              f"{theirs * 1e6:.1f} | {ours / theirs:.2f} |", flush=True)
    # A compiled function called directly: the floor of the path above.
    q = rng.standard_normal((1, 1, 8, 16)).astype(np.float32)
    f = attn_mlir.compile(
        "func.func @f(%q: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {\n"
        "  %e = tensor.empty() : tensor<1x1x8x16xf32>\n"
        "  %o = attn.sdpa %q, %q, %q outs(%e) : tensor<1x1x8x16xf32>, "
        "tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>\n"
        "  return %o : tensor<1x1x8x16xf32>\n}\n")
    tq = torch.from_numpy(q)
    with torch.no_grad():
        theirs = per_call(lambda: torch.nn.functional.scaled_dot_product_attention(tq, tq, tq),
                          args.calls, args.repeat)
    for x, kind in ((tq, "torch tensor"), (q, "NumPy array")):
        ours = per_call(lambda: f(x), args.calls, args.repeat)
        print(f"| compiled function B1 H1 S8 D16, {kind} | {ours * 1e6:.1f} | "
              f"{theirs * 1e6:.1f} | {ours / theirs:.2f} |", flush=True)


if __name__ == "__main__":
    main()
