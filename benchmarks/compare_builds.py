#!/usr/bin/env python3
"""Two builds of attnc on the same decode problems, in one process: each
compiles the problem to a shared library (the default CPU pipeline), both
run on the same random inputs, calls interleaved back to back; prints the
min and median of each and the speedup. For before/after measurements of a
change to the compiler (build the old attnc, copy it aside, build the new):

  python3 benchmarks/compare_builds.py /tmp/attnc-old build/bin/attnc \\
      --dtypes bf16 f32 --seq 8192 32768

Back to back on the same inputs a cache that fits the last-level cache
stays there: this measures the steady state of repeated calls, not a
cold call (benchmarks/run.py interleaves peers with a settle instead).
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402
from run import ROOT, cpu_model  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before", help="attnc of the build before the change")
    p.add_argument("after", help="attnc of the build after it")
    p.add_argument("--dtypes", nargs="+", default=["bf16", "f32"], choices=["bf16", "f32"])
    p.add_argument("--seq", type=int, nargs="+", default=[8192, 32768],
                   help="key lengths (B1 Hq32 Hkv8 Sq1 D128)")
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--build", default=os.path.join(ROOT, "build"),
                   help="the build whose attnc names the CPU")
    args = p.parse_args()
    print(f"# CPU: {cpu_model(args.build)}", flush=True)
    rng = np.random.default_rng(1)
    print("| problem | before min / median ms | after min / median ms | speedup (min) | max |diff| |")
    print("|---|---|---|---|---|")
    for dtype in args.dtypes:
        for skv in args.seq:
            cfg = peers.Config(B=1, Hq=32, Hkv=8, Sq=1, Skv=skv, D=128, causal=False)

            def make(shape):
                x = rng.standard_normal(shape, dtype=np.float32)
                # bf16 as the upper half of the f32 bits.
                return x if dtype == "f32" else (x.view(np.uint32) >> 16).astype(np.uint16)

            q = make((1, 32, 1, 128))
            k, v = make((1, 8, skv, 128)), make((1, 8, skv, 128))
            runs = {name: peers.AttnMlir(attnc, dtype=dtype, workdir=tempfile.mkdtemp())
                    .prepare(cfg, q, k, v)
                    for name, attnc in (("before", args.before), ("after", args.after))}
            outs = {}
            for name, run in runs.items():
                out = run().copy()
                outs[name] = (out if dtype == "f32"
                              else (out.astype(np.uint32) << 16).view(np.float32))
            diff = float(np.abs(outs["before"].astype(np.float64) - outs["after"]).max())
            times = {name: [] for name in runs}
            for _ in range(args.calls):
                for name, run in runs.items():
                    start = time.perf_counter()
                    run()
                    times[name].append(time.perf_counter() - start)
            b, a = (min(times[n]) * 1e3 for n in ("before", "after"))
            mb, ma = (float(np.median(times[n])) * 1e3 for n in ("before", "after"))
            print(f"| {dtype} B1 Hq32 Hkv8 Skv{skv} D128 | {b:.3f} / {mb:.3f} | {a:.3f} / {ma:.3f} "
                  f"| {b / a:.2f}x | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
