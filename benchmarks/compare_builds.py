#!/usr/bin/env python3
"""Two builds of attnc on the same problems, in one process: each compiles
the problem to a shared library (the default CPU pipeline, or --pipeline),
both run on the same random inputs, calls interleaved back to back; prints
the min and median of each and the speedup. For before/after measurements
of a change to the compiler (build the old attnc, copy it aside, build the
new):

  python3 benchmarks/compare_builds.py /tmp/attnc-old build/bin/attnc \\
      --dtypes bf16 f32 --seq 8192 32768

The problems: decode attention (B1 Hq32 Hkv8 Sq1 D128, --seq key lengths,
the default), full or causal attention (--kind full|causal: B1 H8 Sq = Skv
= --seq, head sizes --dims), or f32 products C = A B (--kind gemm: --gemm
MxKxN ..., with NumPy's BLAS timed in the same rounds as a third column
and the ratios to it; give --burst 5 --settle 0.3 or so: BLAS and OpenMP
threads spin a while after a call, on the cores the next call needs).

Back to back on the same inputs a cache that fits the last-level cache
stays there: this measures the steady state of repeated calls, not a
cold call (benchmarks/run.py interleaves peers with a settle instead).
"""

import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402
from mha import matmul_source  # noqa: E402
from run import ROOT, cpu_model  # noqa: E402


def gemm_run(attnc, shape, a, b, pipeline):
    """C = A B compiled by `attnc` to a shared library: a call writing C."""
    M, K, N = shape
    stem = os.path.join(tempfile.mkdtemp(prefix="attn-compare-"), "mm")
    with open(stem + ".mlir", "w") as f:
        f.write(matmul_source(M, K, N))
    command = [attnc, stem + ".mlir", "--emit=shared", "-o", stem + ".so"]
    if pipeline:
        command.append(f"--cpu-pipeline={pipeline}")
    subprocess.run(command, check=True)
    function = ctypes.CDLL(stem + ".so")._mlir_ciface_mm
    c = np.full((M, N), np.nan, np.float32)
    pointers = [ctypes.byref(peers.memref(x)) for x in (a, b, c)]

    def run():
        function(*pointers)
        return c

    return run


def problems(args, rng):
    """(label, {name: call returning the output}, float64 reference or None)
    for each problem the arguments ask for."""
    builds = (("before", args.before), ("after", args.after))
    if args.kind == "gemm":
        for text in args.gemm:
            M, K, N = (int(x) for x in text.lower().split("x"))
            a = rng.standard_normal((M, K), dtype=np.float32)
            b = rng.standard_normal((K, N), dtype=np.float32)
            runs = {name: gemm_run(attnc, (M, K, N), a, b, args.pipeline)
                    for name, attnc in builds}
            runs["numpy"] = lambda a=a, b=b: a @ b
            yield f"f32 {M} x {K} x {N}", runs
        return
    for dtype in args.dtypes:
        for s in args.seq:
            for d in ([128] if args.kind == "decode" else args.dims):
                if args.kind == "decode":
                    cfg = peers.Config(B=1, Hq=32, Hkv=8, Sq=1, Skv=s, D=d, causal=False)
                else:
                    cfg = peers.Config(B=1, Hq=8, Hkv=8, Sq=s, Skv=s, D=d,
                                       causal=args.kind == "causal")

                def make(shape):
                    x = rng.standard_normal(shape, dtype=np.float32)
                    # bf16 as the upper half of the f32 bits.
                    return x if dtype == "f32" else (x.view(np.uint32) >> 16).astype(np.uint16)

                q = make((cfg.B, cfg.Hq, cfg.Sq, d))
                k, v = make((cfg.B, cfg.Hkv, s, d)), make((cfg.B, cfg.Hkv, s, d))
                runs = {name: peers.AttnMlir(attnc, pipeline=args.pipeline, dtype=dtype,
                                             workdir=tempfile.mkdtemp()).prepare(cfg, q, k, v)
                        for name, attnc in builds}
                label = (f"{dtype} B1 Hq32 Hkv8 Skv{s} D{d}" if args.kind == "decode"
                         else f"{dtype} {args.kind} B1 H8 S{s} D{d}")
                yield label, runs


def as_f32(x):
    return (x.astype(np.uint32) << 16).view(np.float32) if x.dtype == np.uint16 else x


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before", help="attnc of the build before the change")
    p.add_argument("after", help="attnc of the build after it")
    p.add_argument("--kind", default="decode", choices=["decode", "full", "causal", "gemm"])
    p.add_argument("--dtypes", nargs="+", default=["bf16", "f32"], choices=["bf16", "f32"])
    p.add_argument("--seq", type=int, nargs="+", default=[8192, 32768],
                   help="key lengths (decode) or sequence lengths (full, causal)")
    p.add_argument("--dims", type=int, nargs="+", default=[64, 128],
                   help="head sizes (full, causal)")
    p.add_argument("--gemm", nargs="+", default=["1024x512x1536", "512x768x2304"],
                   help="MxKxN products (gemm)")
    p.add_argument("--pipeline", default="", help="--cpu-pipeline options for both builds")
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--burst", type=int, default=1,
                   help="calls of one build in a row before the next's (the "
                        "first after a switch pays for the other's threads "
                        "still spinning: OpenMP's and OpenBLAS's)")
    p.add_argument("--settle", type=float, default=0.0,
                   help="seconds of sleep before each burst, for those "
                        "threads to stop spinning (0.3 outlasts both)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"),
                   help="the build whose attnc names the CPU")
    args = p.parse_args()
    print(f"# CPU: {cpu_model(args.build)}", flush=True)
    rng = np.random.default_rng(1)
    gemm = args.kind == "gemm"
    print("| problem | before min / median ms | after min / median ms | speedup (min) | max |diff| |"
          + (" numpy min ms | before / numpy | after / numpy |" if gemm else ""))
    print("|---|---|---|---|---|" + ("---|---|---|" if gemm else ""))
    for label, runs in problems(args, rng):
        outs = {name: as_f32(run().copy()) for name, run in runs.items()}
        diff = float(np.abs(outs["before"].astype(np.float64) - outs["after"]).max())
        if gemm and not np.allclose(outs["after"], outs["numpy"], rtol=1e-4, atol=1e-3):
            raise SystemExit(f"{label}: the after build's product differs from NumPy's")
        times = {name: [] for name in runs}
        for _ in range(max(1, args.calls // args.burst)):
            for name, run in runs.items():
                time.sleep(args.settle)
                for _ in range(args.burst):
                    start = time.perf_counter()
                    run()
                    times[name].append(time.perf_counter() - start)
        best = {n: min(t) * 1e3 for n, t in times.items()}
        median = {n: float(np.median(t)) * 1e3 for n, t in times.items()}
        line = (f"| {label} | {best['before']:.3f} / {median['before']:.3f} "
                f"| {best['after']:.3f} / {median['after']:.3f} "
                f"| {best['before'] / best['after']:.2f}x | {diff:.1e} |")
        if gemm:
            line += (f" {best['numpy']:.3f} | {best['numpy'] / best['before']:.2f} "
                     f"| {best['numpy'] / best['after']:.2f} |")
        print(line, flush=True)


if __name__ == "__main__":
    main()
