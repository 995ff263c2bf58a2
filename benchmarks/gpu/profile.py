#!/usr/bin/env python3
"""Runs one benchmark kernel of a GPU bundle a few times on random inputs,
for a profiler to watch (the first call loads the module: skip it):

  ncu --clock-control none --launch-skip 1 --launch-count 1 \\
      --section SpeedOfLight --section Occupancy --section LaunchStats \\
      python3 benchmarks/gpu/profile.py --bundle build/gpu-bundle --name sdpa_s4096
"""

import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_kernel import Kernel, Runtime  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", default="build/gpu-bundle")
    parser.add_argument("--name", default="sdpa_s4096")
    parser.add_argument("--calls", type=int, default=3)
    args = parser.parse_args()
    manifest = json.load(open(os.path.join(args.bundle, "manifest.json")))
    configs = {c["name"]: c for c in manifest["bench"]}
    if args.name not in configs:
        sys.exit(f"no benchmark kernel {args.name}; the bundle has {', '.join(configs)}")
    cfg = configs[args.name]
    runtime = Runtime(args.bundle)
    runtime.use_stream(torch.cuda.current_stream())
    kernel = Kernel(runtime, os.path.join(args.bundle, cfg["library"]), cfg["symbol"])
    shape = (cfg["B"], cfg["H"], cfg["S"], cfg["D"])
    q, k, v = (torch.randn(shape, dtype=torch.bfloat16, device="cuda") for _ in range(3))
    out = torch.full_like(q, float("nan"))
    for _ in range(args.calls):
        kernel(q, k, v, out)
    torch.cuda.synchronize()
    print(f"{args.name}: {args.calls} calls, {int(torch.isnan(out).sum())} unwritten elements")


if __name__ == "__main__":
    main()
