#!/usr/bin/env python3
# ===- qemu_check.py - run cross-compiled attention under qemu-user -------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   qemu_check.py --cc CC --tools DIR --triple T --mcpu CPU --qemu QEMU \
#       --sysroot DIR --work DIR [--qemu-cpu MODEL] FILE.mlir ENTRY [ENTRY...]
#
# --qemu-cpu is qemu's -cpu (max,sve256=on: the emulated CPU has 256-bit SVE
# vectors, the length code for neoverse-v1 is compiled for).
# For each entry: attn-run (on this machine) draws fresh random inputs,
# runs the float64 reference and dumps both (--dump); attnc compiles the
# module for T/CPU into a shared library; test/lib/Cross/run_shared.c (kept
# out of test/lib, whose CMake target must list every source there), built for
# T, loads it under qemu and calls the entry on the same inputs with
# poisoned outputs. The check is per row: the largest relative error of any
# output row (last dimension) against the float64 reference must stay
# below 1e-5 for f32 outputs, 1e-2 for f16. Prints one line per entry with the seed; exit 1 on the
# first failure.
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import re
import subprocess
import sys

import numpy as np


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"qemu_check: {' '.join(cmd)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


def widen(array):
    """The output as float64 and its tolerance (attn-run dumps bf16 arrays
    widened to f32, so bf16 entries are not supported here)."""
    tolerance = 1e-5 if array.dtype == np.float32 else 1e-2
    return array.astype(np.float64), tolerance


def max_row_error(out, ref):
    rows_out = out.reshape(-1, out.shape[-1])
    rows_ref = ref.reshape(-1, ref.shape[-1])
    diff = np.linalg.norm(rows_out - rows_ref, axis=1)
    norm = np.linalg.norm(rows_ref, axis=1)
    error = np.where(norm > 0, diff / np.where(norm > 0, norm, 1), diff)
    worst = int(np.argmax(error)) if error.size else 0
    return float(error.max()) if error.size else 0.0, worst


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--cc", required=True)
    p.add_argument("--tools", required=True)
    p.add_argument("--triple", required=True)
    p.add_argument("--mcpu", required=True)
    p.add_argument("--qemu", required=True)
    p.add_argument("--sysroot", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--qemu-cpu", help="qemu's -cpu, e.g. max,sve256=on")
    p.add_argument("mlir")
    p.add_argument("entries", nargs="+")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    lib = os.path.join(a.sysroot, "lib")
    runner = os.path.join(a.work, "run_shared")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Cross",
                          "run_shared.c")
    # No cross GCC on the machine: clang with lld, the cross C library's
    # start files and libc named explicitly.
    run([a.cc, f"--target={a.triple}", "-O1", "-isystem",
         os.path.join(a.sysroot, "include"), "-fuse-ld=lld", "-nostdlib",
         os.path.join(lib, "crt1.o"), os.path.join(lib, "crti.o"), source,
         os.path.join(lib, "crtn.o"), f"-L{lib}", "-lc", "-o", runner])
    shared = os.path.join(a.work, "kernel.so")
    run([os.path.join(a.tools, "attnc"), a.mlir, "--emit=shared",
         f"--mtriple={a.triple}", f"--mcpu={a.mcpu}", "-o", shared])
    for entry in a.entries:
        dump = os.path.join(a.work, entry)
        os.makedirs(dump, exist_ok=True)
        host = run([os.path.join(a.tools, "attn-run"), a.mlir, f"--entry={entry}",
                    "--check", f"--dump={dump}"])
        seed = re.search(r"seed (\d+)", host).group(1)
        inputs = sorted(f for f in os.listdir(dump) if re.fullmatch(r"in\d+\.npy", f))
        likes = sorted(f for f in os.listdir(dump) if re.fullmatch(r"out\d+\.npy", f))
        outs = [os.path.join(dump, "cross" + f[3:]) for f in likes]
        cmd = [a.qemu, "-L", a.sysroot]
        if a.qemu_cpu:
            cmd += ["-cpu", a.qemu_cpu]
        cmd += [runner, shared, entry]
        cmd += [os.path.join(dump, f) for f in sorted(inputs, key=lambda f: int(f[2:-4]))]
        cmd += [":"] + [os.path.join(dump, f) for f in sorted(likes, key=lambda f: int(f[3:-4]))]
        cmd += [":"] + sorted(outs, key=lambda f: int(os.path.basename(f)[5:-4]))
        run(cmd)
        for i in range(len(likes)):
            out, tolerance = widen(np.load(os.path.join(dump, f"cross{i}.npy")))
            ref = np.load(os.path.join(dump, f"ref{i}.npy"))
            error, row = max_row_error(out, ref)
            ok = error <= tolerance and np.isfinite(out).all()
            print(f"@{entry} result #{i} on {a.mcpu} under qemu (seed {seed}): "
                  f"largest row relative error {error:.2e} (row {row}, "
                  f"tolerance {tolerance:.0e}) {'ok' if ok else 'FAILED'}")
            if not ok:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
