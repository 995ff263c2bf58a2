#!/usr/bin/env python3
"""Runs every case of a GPU bundle (bundle.py: the flash kernel's cases and
every op form of the CPU integration tests) on the GPU and compares each
output with the float64 reference computed on the CPU for the same inputs:
relative error ||out - ref|| / ||ref||, f16/bf16 within 1e-2, f32 within
1e-5, every element written (outputs start as NaN). --repeat runs each case
again with fresh poison: an error that moves between runs is a race.

  python3 benchmarks/gpu/check.py --bundle build/gpu-bundle [--out DIR]

Exit status 1 if any case fails. Run it under compute-sanitizer (memcheck,
racecheck) with --quick to keep the sanitised run short.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_kernel import Kernel, Runtime, parse_signature, torch_dtype  # noqa: E402

TOLERANCE = {"f16": 1e-2, "bf16": 1e-2, "f32": 1e-5, "f64": 1e-12}
QUICK = ["causal_gqa_f16", "documents_causal_bf16", "fully_masked_rows_f16", "d80_f16",
         "d256_bf16", "run-weights.plain", "sparse.logsparse_causal",
         "flash-grad.causal_gqa_f16", "flash-grad.causal_mqa_bf16_d128",
         "flash-grad.dropout_causal_f16"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", default="build/gpu-bundle")
    parser.add_argument("--out")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help=f"only {', '.join(QUICK)}, once (for the sanitizers)")
    args = parser.parse_args()
    manifest = json.load(open(os.path.join(args.bundle, "manifest.json")))
    runtime = Runtime(args.bundle)
    runtime.use_stream(torch.cuda.current_stream())
    print(f"device: {torch.cuda.get_device_name()}, bundle for {manifest['gpu_arch']}")

    rows, ok = [], True
    for case in manifest["cases"]:
        if args.quick and case["name"] not in QUICK:
            continue
        elements = parse_signature(case["signature"])
        kernel = Kernel(runtime, os.path.join(args.bundle, case["library"]), case["symbol"])
        inputs = []
        for path, element in zip(case["inputs"], elements):
            array = np.load(os.path.join(args.bundle, path))
            inputs.append(torch.from_numpy(array).to(torch_dtype(torch, element)).cuda())
        out_elements = elements[len(inputs):]
        errors = []
        for _ in range(1 if args.quick else args.repeat):
            outputs = []
            for path, element in zip(case["outputs"], out_elements):
                shape = np.load(os.path.join(args.bundle, path), mmap_mode="r").shape
                outputs.append(torch.full(shape, float("nan"), dtype=torch_dtype(torch, element),
                                          device="cuda"))
            kernel(*inputs, *outputs)
            torch.cuda.synchronize()
            for index, (out, ref_path, element) in enumerate(
                    zip(outputs, case["references"], out_elements)):
                ref = torch.from_numpy(np.load(os.path.join(args.bundle, ref_path)))
                got = out.double().cpu()
                unwritten = int(torch.isnan(got).sum())
                norm = float(ref.norm()) or 1.0
                error = float((got - ref).norm()) / norm if unwritten == 0 else float("inf")
                errors.append((error, unwritten, TOLERANCE[element], index))
        worst = max(errors)
        # How far one output's error moves between runs (a race moves it);
        # the outputs of one case (O, dQ, dK, dV) differ from each other.
        spread = max(max(e[0] for e in errors if e[3] == i) -
                     min(e[0] for e in errors if e[3] == i)
                     for i in range(len(out_elements)))
        passed = all(e <= tol for e, _, tol, _ in errors)
        ok &= passed
        rows.append({"case": case["name"], "relative_error": worst[0], "tolerance": worst[2],
                     "nan": worst[1], "runs": len(errors) // len(out_elements), "spread": spread,
                     "cpu_check": case["cpu_check"], "pass": passed})
        print(f"{case['name']:28s} rel.err {worst[0]:.3e} (tol {worst[2]:.0e}) "
              f"runs {len(errors) // len(out_elements)} spread {spread:.1e}{'' if passed else '  FAIL'}", flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        name = "check-quick.json" if args.quick else "check.json"
        json.dump(rows, open(os.path.join(args.out, name), "w"), indent=1)
    print(f"{sum(r['pass'] for r in rows)} of {len(rows)} cases pass")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
