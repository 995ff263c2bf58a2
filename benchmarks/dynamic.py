#!/usr/bin/env python3
# ===- dynamic.py - shape-generic kernels against static ones, compile time -=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   build/venv/bin/python3 benchmarks/dynamic.py [--seq 512 1024 2048 4096 8192] [--repeat 3]
#                                 [--no-compile-times] [--no-sweeps]
#                                 [--baseline-build DIR]
#
# 1. Kernel time: attn.sdpa compiled for the exact shapes and with batch and
#    sequence lengths dynamic (tensor<?x8x?xDxf32>), both through
#    attn_mlir.compile, called on the same inputs in the same process,
#    interleaved (run.py's time_interleaved). f32, B=1 H=8, full and causal,
#    D = 64 and 128.
# 2. Compile time of attnc --emit=shared for every example and for the
#    kernels of (1), static and dynamic (wall time, one process each, best
#    of --repeat); with --baseline-build, another build's attnc on the same
#    inputs, interleaved.
# 3. Length sweeps through attn_mlir.scaled_dot_product_attention with the
#    default dynamic=None: decode (Sq = 1, Skv = 100..199) and prefill
#    (Sq = Skv = 100..199): how many functions were compiled, and the time.
#
# ===----------------------------------------------------------------------=== #

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, cpu_model, time_interleaved  # noqa: E402


def sdpa_source(B, H, S, D, causal, dynamic):
    """attn.sdpa self-attention; with `dynamic`, B and S are `?`."""
    t = f"tensor<{'?' if dynamic else B}x{H}x{'?' if dynamic else S}x{D}xf32>"
    body = []
    if dynamic:
        body += ["%c0 = arith.constant 0 : index", "%c2 = arith.constant 2 : index",
                 f"%b = tensor.dim %q, %c0 : {t}", f"%s = tensor.dim %q, %c2 : {t}",
                 f"%e = tensor.empty(%b, %s) : {t}"]
    else:
        body.append(f"%e = tensor.empty() : {t}")
    body.append(f"%o = attn.sdpa %q, %k, %v outs(%e){' causal' if causal else ''} : "
                f"{t}, {t}, {t} -> {t}")
    lines = "\n  ".join(body)
    return (f"func.func @sdpa(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n  {lines}\n"
            f"  return %o : {t}\n}}\n")


def kernel_times(attn_mlir, seqs, repeat):
    print("| problem | static ms | dynamic ms | dynamic / static |")
    print("|---|---|---|---|", flush=True)
    rng = np.random.default_rng(0)
    for D in (64, 128):
        for causal in (False, True):
            dynamic = attn_mlir.compile(sdpa_source(1, 8, 0, D, causal, True))
            for S in seqs:
                static = attn_mlir.compile(sdpa_source(1, 8, S, D, causal, False))
                q, k, v = (rng.standard_normal((1, 8, S, D)).astype(np.float32)
                           for _ in range(3))
                best = time_interleaved({"static": lambda: static(q, k, v),
                                         "dynamic": lambda: dynamic(q, k, v)}, repeat)
                print(f"| B=1 H=8 S={S} D={D}{' causal' if causal else ''} | "
                      f"{best['static'] * 1e3:.2f} | {best['dynamic'] * 1e3:.2f} | "
                      f"{best['dynamic'] / best['static']:.2f} |", flush=True)


def compile_times(build, baseline=None, repeat=1):
    """attnc --emit=shared wall time per module, the best of `repeat`; with
    `baseline` (another build directory) its attnc too, interleaved with
    this one's on every round so that both see the same machine."""
    builds = ([("baseline", baseline)] if baseline else []) + [("this build", build)]
    inputs = sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir")))
    with tempfile.TemporaryDirectory() as tmp:
        for D in (64, 128):
            for causal in (False, True):
                for dynamic in (False, True):
                    name = (f"sdpa S=2048 D={D}{' causal' if causal else ''}"
                            f"{' dynamic' if dynamic else ''}")
                    path = os.path.join(tmp, name.replace(" ", "_").replace("=", "") + ".mlir")
                    with open(path, "w") as f:
                        f.write(sdpa_source(1, 8, 2048, D, causal, dynamic))
                    inputs.append(path)
        print("| module | " + " | ".join(f"{label} s" for label, _ in builds) + " |")
        print("|---|" + "---|" * len(builds), flush=True)
        for path in inputs:
            best = {label: float("inf") for label, _ in builds}
            for _ in range(repeat):
                for label, directory in builds:
                    attnc = os.path.join(directory, "bin", "attnc")
                    start = time.perf_counter()
                    subprocess.run([attnc, path, "--emit=shared",
                                    "-o", os.path.join(tmp, "out.so")], check=True)
                    best[label] = min(best[label], time.perf_counter() - start)
            name = os.path.basename(path).removesuffix(".mlir")
            print(f"| {name} | " + " | ".join(f"{best[label]:.2f}" for label, _ in builds)
                  + " |", flush=True)


def sweeps(attn_mlir):
    rng = np.random.default_rng(0)
    print("| sweep | calls | functions compiled | shape-generic | compile s | total s |")
    print("|---|---|---|---|---|---|", flush=True)
    for name, lengths in (("decode Sq=1, Skv=100..199", lambda s: (1, s)),
                          ("prefill Sq=Skv=100..199", lambda s: (s, s))):
        attn_mlir.clear_cache()
        before = attn_mlir.stats()
        start = time.perf_counter()
        for s in range(100, 200):
            L, S = lengths(s)
            q = rng.standard_normal((1, 8, L, 64)).astype(np.float32)
            k, v = (rng.standard_normal((1, 8, S, 64)).astype(np.float32) for _ in range(2))
            attn_mlir.scaled_dot_product_attention(q, k, v, is_causal=L > 1)
        total = time.perf_counter() - start
        after = attn_mlir.stats()
        compiled = (after["compiles"] + after["disk_hits"]
                    - before["compiles"] - before["disk_hits"])
        print(f"| {name} | 100 | {compiled} | "
              f"{after['dynamic_compiles'] - before['dynamic_compiles']} | "
              f"{after['compile_seconds'] - before['compile_seconds']:.2f} | {total:.2f} |",
              flush=True)


def main():
    p = argparse.ArgumentParser(description="shape-generic kernels and compile time")
    p.add_argument("--seq", type=int, nargs="+", default=[512, 1024, 2048, 4096, 8192])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--baseline-build",
                   help="another build directory whose attnc is timed too, "
                        "interleaved (compile times before/after a change)")
    p.add_argument("--no-compile-times", action="store_true")
    p.add_argument("--no-sweeps", action="store_true")
    p.add_argument("--no-kernels", action="store_true")
    args = p.parse_args()
    # Functions compile in this run: no on-disk cache from earlier runs.
    os.environ["ATTN_MLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="attn-dynamic-bench-")
    sys.path.insert(0, os.path.join(args.build, "python_packages"))
    import attn_mlir

    print(f"# CPU: {cpu_model(args.build)}")
    if not args.no_kernels:
        kernel_times(attn_mlir, args.seq, args.repeat)
    if not args.no_compile_times:
        compile_times(args.build, args.baseline_build, args.repeat)
    if not args.no_sweeps:
        sweeps(attn_mlir)


if __name__ == "__main__":
    main()
