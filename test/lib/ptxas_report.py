#!/usr/bin/env python3
# ===- ptxas_report.py - register and spill report of tensor-core kernels --=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   ptxas_report.py PTXAS ARCH FILE.ptx...
#
# Assembles every PTX file that uses tensor cores (mma.sync) with `ptxas -v`
# for ARCH and prints, per kernel, its registers and spill bytes, then
# "N tensor-core kernels, M with spills, K with local memory". Files
# without mma.sync (the reference lowering's kernels) are skipped. Exits 1
# when ptxas rejects a file.
#
# ===----------------------------------------------------------------------=== #

import re
import subprocess
import sys


def main():
    ptxas, arch, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    kernels = spilling = local = 0
    for path in sorted(files):
        text = open(path).read()
        if "mma.sync" not in text:
            continue
        result = subprocess.run([ptxas, f"-arch={arch}", "-v", path, "-o", "/dev/null"],
                                capture_output=True, text=True)
        if result.returncode != 0:
            print(f"{path}: ptxas failed:\n{result.stderr}")
            return 1
        report = result.stderr
        registers = re.search(r"Used (\d+) registers", report).group(1)
        spills = [int(x) for x in re.findall(r"(\d+) bytes spill (?:stores|loads)", report)]
        kernels += 1
        spilling += any(spills)
        local += ".local" in text
        print(f"{path.rsplit('/', 1)[-1]}: {registers} registers, "
              f"{spills[0]} bytes spill stores, {spills[1]} bytes spill loads")
    print(f"{kernels} tensor-core kernels, {spilling} with spills, {local} with local memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
