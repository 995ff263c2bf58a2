#!/usr/bin/env python3
#===- scripts/find-wheel-ptxas.py - ptxas from NVIDIA's PyPI wheel --------===//
#
# Prints the root of the CUDA compiler that the nvidia-cuda-nvcc wheel
# installs (the folder whose bin/ holds ptxas), or nothing and exit 1 when
# the wheel is absent. scripts/deps.sh installs the wheel on machines with
# no CUDA toolkit, and CMake takes this root as the toolkit whose ptxas
# compiles the kernels, so the PTX and cubin tests run there too.
#
#===----------------------------------------------------------------------===//
import importlib.util
import os
import sys

spec = importlib.util.find_spec("nvidia")
for base in (spec.submodule_search_locations if spec else None) or []:
    # cu13 is the CUDA 13 wheels' folder (the pipeline emits PTX ISA 8.0,
    # which any CUDA 12+ ptxas takes).
    for major in ("cu13", "cu12"):
        root = os.path.join(base, major)
        if os.access(os.path.join(root, "bin", "ptxas"), os.X_OK):
            print(root)
            sys.exit(0)
sys.exit(1)
