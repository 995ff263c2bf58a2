#!/usr/bin/env python3
"""Builds what a GPU machine without LLVM needs to check and time attn-mlir's
CUDA code (docs/CUDA.md, "Running on a GPU").

On the build machine (LLVM/MLIR 22 and the CUDA toolkit, no GPU needed):

  python3 benchmarks/gpu/bundle.py --build build --out build/gpu-bundle

writes
  libattn_cuda_runtime.so        the runtime the compiled code calls
  cases/<entry>.so               every entry of test/Integration/CUDA/flash.mlir
                                 (flash-grad.mlir's as flash-grad.<entry>)
  cases/<entry>/inN.npy, refN.npy  and of the CPU integration tests (named
                                 <file>.<entry>), compiled by attnc
                                 --target=cuda --emit=shared, with fresh
                                 random inputs and the float64 reference
                                 attn-run computed for them on the CPU
  bench/<name>.so                the benchmark configurations (bf16, B=4 H=16
                                 D=128, S = 1k..16k, causal and not)
  manifest.json                  what each library takes

check.py and bench.py (in this folder) then run on the GPU machine from the
bundle alone.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INTEGRATION = os.path.join(ROOT, "test", "Integration")
# The flash kernels' cases (forward, backward), then every op form of the CPU
# integration tests
# (the reference path on the GPU); entries and their attn-run arguments are
# read from the RUN lines.
SOURCES = [os.path.join(INTEGRATION, "CUDA", name) for name in ("flash.mlir", "flash-grad.mlir")] + [
    os.path.join(INTEGRATION, "CPU", name) for name in (
        "run-sdpa-masks.mlir", "run-sdpa-regions.mlir", "run-sdpa-shapes.mlir",
        "run-weights.mlir", "run-multihead.mlir", "sparse.mlir", "tiled-odd-shapes.mlir")]

BENCH_B, BENCH_H, BENCH_D = 4, 16, 128
BENCH_LENGTHS = [1024, 2048, 4096, 8192, 16384]


def bench_source(name, s, causal):
    t = f"tensor<{BENCH_B}x{BENCH_H}x{s}x{BENCH_D}xbf16>"
    return (f"func.func @{name}(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n"
            f"  %e = tensor.empty() : {t}\n"
            f"  %o = attn.sdpa %q, %k, %v outs(%e){' causal' if causal else ''}\n"
            f"     : {t}, {t}, {t} -> {t}\n"
            f"  return %o : {t}\n}}\n")


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "gpu-bundle"))
    parser.add_argument("--gpu-arch", default="sm_90a")
    args = parser.parse_args()

    attnc = os.path.join(args.build, "bin", "attnc")
    attn_run = os.path.join(args.build, "bin", "attn-run")
    runtime = os.path.join(args.build, "lib", "libattn_cuda_runtime.so")
    for path in (attnc, attn_run, runtime):
        if not os.path.exists(path):
            sys.exit(f"{path} is missing: build the project first (scripts/build.sh)")
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(os.path.join(args.out, "cases"))
    os.makedirs(os.path.join(args.out, "bench"))
    shutil.copy(runtime, args.out)
    arch = [f"--gpu-arch={args.gpu_arch}"]

    # The test entries, with the same input shapes the lit tests use.
    entries = []
    for path in SOURCES:
        source = open(path).read()
        stem = os.path.basename(path)[:-len(".mlir")]
        for line in source.splitlines():
            m = re.search(r"--entry=(\w+)(.*?)\|", line)
            name = m and (m.group(1) if stem == "flash" else f"{stem}.{m.group(1)}")
            if m and name not in [n for n, _, _, _ in entries]:
                # Pipeline flags of the CPU tests do not apply here.
                extra = [a for a in m.group(2).split() if not a.startswith("--cpu-pipeline")]
                entries.append((name, m.group(1), extra, source))
    manifest = {"gpu_arch": args.gpu_arch, "cases": [], "bench": []}
    with tempfile.TemporaryDirectory() as tmp:
        for name, entry, extra, source in entries:
            print(f"case {name}", flush=True)
            # One function per library: the entry alone.
            single = os.path.join(tmp, f"{name}.mlir")
            body = re.search(rf"(func\.func @{entry}\(.*?\n}}\n)", source, re.S).group(1)
            open(single, "w").write(body)
            library = os.path.join("cases", f"{name}.so")
            run([attnc, "--target=cuda", "--emit=shared", *arch, single,
                 "-o", os.path.join(args.out, library)])
            header = run([attnc, "--target=cuda", "--emit=header", single, "-o", "-"])
            case_dir = os.path.join(args.out, "cases", name)
            os.makedirs(case_dir)
            out = run([attn_run, single, "--check", f"--dump={case_dir}", *extra])
            files = sorted(os.listdir(case_dir))
            manifest["cases"].append({
                "name": name,
                "library": library,
                "symbol": f"_mlir_ciface_{entry}",
                # The C element types of the declaration, in argument order.
                "signature": re.search(rf"_mlir_ciface_{entry}\((.*?)\);", header).group(1),
                "inputs": [os.path.join("cases", name, f) for f in files if f.startswith("in")],
                "outputs": [os.path.join("cases", name, f) for f in files if f.startswith("out")],
                "references": [os.path.join("cases", name, f) for f in files if f.startswith("ref")],
                "cpu_check": out.strip().splitlines()[-1],
            })
        for s in BENCH_LENGTHS:
            for causal in (False, True):
                name = f"sdpa_s{s}{'_causal' if causal else ''}"
                print(f"bench {name}", flush=True)
                path = os.path.join(tmp, f"{name}.mlir")
                open(path, "w").write(bench_source(name, s, causal))
                library = os.path.join("bench", f"{name}.so")
                run([attnc, "--target=cuda", "--emit=shared", *arch, path,
                     "-o", os.path.join(args.out, library)])
                manifest["bench"].append({
                    "name": name, "library": library, "symbol": f"_mlir_ciface_{name}",
                    "B": BENCH_B, "H": BENCH_H, "S": s, "D": BENCH_D,
                    "causal": causal, "dtype": "bfloat16"})
    json.dump(manifest, open(os.path.join(args.out, "manifest.json"), "w"), indent=1)
    size = sum(os.path.getsize(os.path.join(d, f))
               for d, _, fs in os.walk(args.out) for f in fs)
    print(f"wrote {args.out}: {len(manifest['cases'])} cases, "
          f"{len(manifest['bench'])} benchmark kernels, {size / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
