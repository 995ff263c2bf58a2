#!/usr/bin/env python3
# ===- compare_pipelines.py - CPU pipeline variants, one shape, one run ----=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# Tuning aid: compiles one attention problem under several --cpu-pipeline
# option strings and times them interleaved in one process, with torch SDPA
# as the yardstick when it is installed (the machine is shared and noisy:
# only ratios within one run mean anything).
#
#   build/venv/bin/python3 benchmarks/compare_pipelines.py "" "m-block=8 n-block=32" \
#       --seq 4096 --dim 64 [--causal] [--repeat 5]
#
# ("" is the default pipeline.) --mcpu compiles every variant for another
# CPU than the host, one whose code the host can run (znver3's AVX2 on an
# AVX-512 host); ATEN_CPU_CAPABILITY=avx2 in the environment makes torch use
# its AVX2 kernels too.
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import AttnMlir, Config, Torch, Unavailable  # noqa: E402
from run import ROOT, cpu_model, time_interleaved  # noqa: E402


def main():
    p = argparse.ArgumentParser(description="compare --cpu-pipeline variants")
    p.add_argument("variants", nargs="+", help='--cpu-pipeline strings; "" = default')
    p.add_argument("--seq", type=int, default=4096)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--mcpu", help="compile for this CPU instead of the host")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = p.parse_args()

    cfg = Config(1, args.heads, args.heads, args.seq, args.seq, args.dim, args.causal)
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, args.heads, args.seq, args.dim), np.float32)
               for _ in range(3))
    attnc = os.path.join(args.build, "bin", "attnc")
    runs = {}
    try:
        runs["torch"] = Torch().prepare(cfg, q, k, v)
    except Unavailable as reason:
        print(f"# torch: {reason}")
    for variant in args.variants:
        runs[variant or "(default)"] = AttnMlir(attnc, variant or None, mcpu=args.mcpu).prepare(cfg, q, k, v)
    best = time_interleaved(runs, args.repeat)
    print(f"# CPU: {cpu_model(args.build)}"
          + (f", code for --mcpu={args.mcpu}" if args.mcpu else ""))
    if os.environ.get("ATEN_CPU_CAPABILITY"):
        print(f"# torch: ATEN_CPU_CAPABILITY={os.environ['ATEN_CPU_CAPABILITY']}")
    print(f"# {cfg.label()}, min of {args.repeat} interleaved calls")
    for name, t in best.items():
        ratio = f", torch/this {best['torch'] / t:.2f}" if "torch" in best else ""
        print(f"{name:45s} {t * 1e3:9.1f} ms {cfg.flops() / t * 1e-9:7.1f} GFLOP/s{ratio}")


if __name__ == "__main__":
    main()
