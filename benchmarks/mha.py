#!/usr/bin/env python3
# ===- mha.py - multi-head attention and its projections against peers -----=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   build/venv/bin/python3 benchmarks/mha.py [--repeat 5] [--burst 5] [--no-gemm] [--no-mha]
#                             [--only SUBSTRING] [--loop CALLS] [--dynamic]
#                             [--thread-pool auto|torch|openmp]
#
# 1. GEMMs of the projections' shapes (M = tokens, K = model width, N = the
#    projection's outputs), f32, `linalg.matmul` through attn_mlir.compile
#    against NumPy's BLAS and torch.matmul, same inputs, interleaved.
# 2. attn_mlir.nn.MultiheadAttention against torch.nn.MultiheadAttention
#    with the same weights, inference (eval, no_grad), f32, batch_first,
#    with and without need_weights: the issue's configurations, BERT-base
#    and CLIP's cross attention with kdim/vdim. Outputs are checked against
#    torch's before timing.
#
# Each peer is timed in bursts of `--burst` calls back to back (the steady
# state of a loop of calls: the mean of a burst's calls after the first),
# bursts interleaved between peers and `run.SETTLE_SECONDS` apart so that no
# peer shares the cores with another's spinning threads; `--burst 1` times
# single calls after an idle spell instead (threads asleep, caches cold).
# `--loop CALLS` times the multi-head attentions differently: CALLS calls
# per peer, in runs of 20 back to back alternating between the peers, and
# reports each peer's median call (a serving loop's steady state; on a
# shared 2-vCPU VM the minimum of a few bursts moves by 10-20%).
# Each layer is attn_mlir's build for its shapes (`dynamic=False`: left
# automatic, a configuration after another of the same widths and heads
# would time the shape-generic build the second shapes switch to);
# `--dynamic` times the shape-generic build of each (`dynamic=True`: what
# a caller whose lengths vary gets after its second length).
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, cpu_model, time_interleaved  # noqa: E402

# (M, K, N): the seed's in-projection (N8 L128 E512: 1024 tokens, 3E
# outputs), BERT-base's (512 tokens, 768 -> 2304) and out-projection, a
# 2048-token E1024 layer, and the issue's corners.
GEMMS = [(1024, 512, 1536), (512, 768, 2304), (512, 768, 768), (2048, 1024, 1024),
         (256, 512, 512), (4096, 512, 512), (1024, 4096, 1024), (4096, 4096, 4096)]

# name, N, L (queries), S (keys), E, heads, kdim, vdim
MHAS = [("N32 L10 E512 H8", 32, 10, 10, 512, 8, None, None),
        ("N8 L128 E512 H8", 8, 128, 128, 512, 8, None, None),
        ("N4 L512 E768 H12", 4, 512, 512, 768, 12, None, None),
        ("BERT-base N1 L512 E768 H12", 1, 512, 512, 768, 12, None, None),
        ("CLIP cross N1 L77 S257 E768 H12 kdim/vdim 1024", 1, 77, 257, 768, 12, 1024, 1024)]


def matmul_source(M, K, N):
    a, b, c = f"tensor<{M}x{K}xf32>", f"tensor<{K}x{N}xf32>", f"tensor<{M}x{N}xf32>"
    return (f"func.func @mm(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %z = arith.constant 0.0 : f32\n"
            f"  %e = tensor.empty() : {c}\n"
            f"  %f = linalg.fill ins(%z : f32) outs(%e : {c}) -> {c}\n"
            f"  %r = linalg.matmul ins(%a, %b : {a}, {b}) outs(%f : {c}) -> {c}\n"
            f"  return %r : {c}\n}}\n")


def gemms(attn_mlir, torch, repeat, burst, shapes=GEMMS):
    print("| M x K x N | attn-mlir GFLOP/s | NumPy GFLOP/s | torch GFLOP/s | "
          "attn-mlir / NumPy | attn-mlir / torch |")
    print("|---|---|---|---|---|---|", flush=True)
    rng = np.random.default_rng(0)
    for M, K, N in shapes:
        f = attn_mlir.compile(matmul_source(M, K, N))
        a = rng.standard_normal((M, K)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
        ours = f(a, b)
        reference = a.astype(np.float64) @ b.astype(np.float64)
        error = float(np.max(np.abs(ours - reference)) / np.max(np.abs(reference)))
        if error > 1e-5:
            raise SystemExit(f"{M}x{K}x{N}: attn-mlir's product is off by {error:.1e}")
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        best = time_interleaved({"ours": lambda: f(a, b), "numpy": lambda: a @ b,
                                 "torch": lambda: torch.matmul(ta, tb)}, repeat,
                                burst=burst)
        flops = 2 * M * N * K
        rate = {k: flops / v / 1e9 for k, v in best.items()}
        print(f"| {M} x {K} x {N} | {rate['ours']:.0f} | {rate['numpy']:.0f} | "
              f"{rate['torch']:.0f} | {rate['ours'] / rate['numpy']:.2f} | "
              f"{rate['ours'] / rate['torch']:.2f} |", flush=True)


def time_loops(runs, calls, run_length=20):
    """Median seconds per call per peer: `calls` calls each, in runs of
    `run_length` back to back, the peers' runs alternating (after 5 warm-up
    calls each)."""
    for run in runs.values():
        for _ in range(5):
            run()
    times = {name: [] for name in runs}
    for _ in range(max(1, calls // run_length)):
        for name, run in runs.items():
            for _ in range(run_length):
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
    return {name: float(np.median(t)) for name, t in times.items()}


def mhas(attn_mlir, torch, repeat, burst, only=None, loop=0, dynamic=False):
    print("| config | need_weights | attn-mlir ms | torch ms | torch / attn-mlir |")
    print("|---|---|---|---|---|", flush=True)
    rng = np.random.default_rng(0)
    for name, N, L, S, E, H, kdim, vdim in MHAS:
        if only and only not in name:
            continue
        ref = torch.nn.MultiheadAttention(E, H, kdim=kdim, vdim=vdim,
                                          batch_first=True).eval()
        ours = attn_mlir.nn.MultiheadAttention(E, H, kdim=kdim, vdim=vdim,
                                               batch_first=True,
                                               dynamic=dynamic)
        ours.load_state_dict(ref.state_dict())
        ours.eval()
        q = rng.standard_normal((N, L, E)).astype(np.float32)
        if kdim is None:
            k = v = q
        else:
            k = rng.standard_normal((N, S, kdim)).astype(np.float32)
            v = rng.standard_normal((N, S, vdim)).astype(np.float32)
        tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
        for need_weights in (False, True):
            with torch.no_grad():
                expected = ref(tq, tk, tv, need_weights=need_weights)[0].numpy()
            got = ours(q, k, v, need_weights=need_weights)[0]
            error = float(np.max(np.abs(got - expected)))
            if error > 1e-4:
                raise SystemExit(f"{name}: attn-mlir differs from torch by {error:.1e}")

            def run_torch():
                with torch.no_grad():
                    ref(tq, tk, tv, need_weights=need_weights)

            runs = {"ours": lambda: ours(q, k, v, need_weights=need_weights),
                    "torch": run_torch}
            best = (time_loops(runs, loop) if loop
                    else time_interleaved(runs, repeat, burst=burst))
            print(f"| {name} | {need_weights} | {best['ours'] * 1e3:.2f} | "
                  f"{best['torch'] * 1e3:.2f} | {best['torch'] / best['ours']:.2f} |",
                  flush=True)


def main():
    p = argparse.ArgumentParser(description="multi-head attention and projection GEMMs")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--burst", type=int, default=5,
                   help="calls per timed burst (1: single calls after an idle spell)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--no-gemm", action="store_true")
    p.add_argument("--gemms", nargs="+", metavar="MxKxN",
                   help="products to run instead of the default list")
    p.add_argument("--no-mha", action="store_true")
    p.add_argument("--only", help="run only the MHA configs whose name contains this "
                   "(e.g. BERT, 'N8 L128'); implies --no-gemm")
    p.add_argument("--loop", type=int, default=0, metavar="CALLS",
                   help="time the multi-head attentions as median calls of CALLS "
                   "calls per peer in alternating runs of 20 (0: bursts)")
    p.add_argument("--dynamic", action="store_true",
                   help="time attn_mlir's shape-generic build of each layer")
    p.add_argument("--thread-pool", choices=["auto", "torch", "openmp"], default="auto",
                   help="attn_mlir.set_thread_pool: openmp times the compiled code "
                   "on its own OpenMP runtime (the behaviour before session 39)")
    args = p.parse_args()
    os.environ["ATTN_MLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="attn-mha-bench-")
    sys.path.insert(0, os.path.join(args.build, "python_packages"))
    import attn_mlir
    import attn_mlir.nn  # noqa: F401
    import torch
    attn_mlir.set_thread_pool(args.thread_pool)

    print(f"# CPU: {cpu_model(args.build)}; torch {torch.__version__} with "
          f"thread pool {attn_mlir.thread_pool()}; "
          f"{torch.get_num_threads()} threads; "
          + (f"MHA: median of {args.loop} calls in alternating runs of 20"
             if args.loop else f"bursts of {args.burst}")
          + ("; attn-mlir shape-generic (dynamic=True)" if args.dynamic else ""))
    if not args.no_gemm and not args.only:
        shapes = ([tuple(int(x) for x in s.split("x")) for s in args.gemms]
                  if args.gemms else GEMMS)
        gemms(attn_mlir, torch, args.repeat, args.burst, shapes)
    if not args.no_mha:
        mhas(attn_mlir, torch, args.repeat, args.burst, args.only, args.loop,
             args.dynamic)


if __name__ == "__main__":
    main()
