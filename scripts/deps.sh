#!/usr/bin/env bash
#===- scripts/deps.sh - install what the build needs ----------------------===//
#
# Idempotent: returns in about a second when everything is present.
# Installs Debian's LLVM/MLIR 22 packages (with compiler-rt: the sanitizers and
# libFuzzer; clang-format: the suite checks the sources' format), CMake,
# Ninja, ccache and Python's venv and headers; qemu-user and the AArch64 C
# library; creates the project's virtual environment (scripts/common.sh:
# build/venv) and installs into it from PyPI what the tests need (NumPy,
# nanobind, pytest, torch, ml_dtypes, matplotlib, onnx, iree-base-compiler,
# transformers, torch-mlir, iree-turbine, jax)
# and, where the machine has
# no CUDA toolkit, NVIDIA's compiler wheel for ptxas. The test suite fails,
# rather than skips, where one of these is missing (docs/Testing.md).
#
#===----------------------------------------------------------------------===//
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

packages=(libmlir-22-dev mlir-22-tools llvm-22 llvm-22-dev llvm-22-tools clang-22
          libclang-rt-22-dev clang-format-22
          lld-22 libomp-22-dev cmake ninja-build ccache
          python3 python3-venv python3-dev)

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

# Prints those of the named Debian packages that are not installed.
not_installed() {
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      echo "$pkg"
    fi
  done
}

# Installs the named packages (after one apt-get update).
apt_install() {
  $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      --no-install-recommends "$@"
}

mapfile -t missing < <(not_installed "${packages[@]}")
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  apt_install "${missing[@]}"
fi

# qemu-user and the AArch64 cross C library: the AArch64 integration tests
# run cross-compiled code with them.
mapfile -t cross_missing < <(not_installed qemu-user libc6-arm64-cross \
                              libc6-dev-arm64-cross)
if ((${#cross_missing[@]})); then
  echo "deps: installing ${cross_missing[*]}"
  apt_install "${cross_missing[@]}"
fi

# Python: the project's venv, made from the first python3 on PATH (ATTN_PYTHON
# names another) with its site-packages visible, so that what that
# interpreter already has is not installed again; everything else goes into
# the venv, never into the system's Python. NumPy computes the float64
# references; the package is a nanobind extension tested under pytest,
# against PyTorch (the default PyPI wheel, several GB with its CUDA
# libraries), bf16 through ml_dtypes, pictures through matplotlib; ONNX and
# IREE's compiler (its ONNX importer and input pipelines), torch-mlir,
# iree-turbine and JAX are the frontends whose linalg test/Frontends
# raises; Hugging Face
# transformers builds the random-init models attn_mlir.integrations is
# tested in.
if [[ ! -x "$python" ]]; then
  base="${ATTN_PYTHON:-python3}"
  echo "deps: creating the virtual environment $venv (from $(command -v "$base"))"
  "$base" -m venv --system-site-packages "$venv"
fi
# module:package
pip_modules=(numpy:numpy nanobind:nanobind pytest:pytest torch:torch
             ml_dtypes:ml_dtypes matplotlib:matplotlib onnx:onnx
             iree.compiler:iree-base-compiler transformers:transformers
             torch_mlir:torch-mlir iree.turbine:iree-turbine jax:jax)
mapfile -t pip_missing < <("$python" -c '
import importlib.util, sys
for entry in sys.argv[1:]:
    module, package = entry.split(":")
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # the parent package of a dotted name
        found = False
    if not found:
        print(package)' "${pip_modules[@]}")
if ((${#pip_missing[@]})); then
  echo "deps: installing ${pip_missing[*]}"
  "$python" -m pip install -q "${pip_missing[@]}"
fi

# ptxas: the CUDA toolkit's where the machine has one; elsewhere the PTX and
# cubin tests use the one in NVIDIA's CUDA 13 compiler wheel.
if ! command -v ptxas >/dev/null &&
   [[ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" ]] &&
   ! "$python" "$root/scripts/find-wheel-ptxas.py" >/dev/null; then
  echo "deps: no CUDA toolkit; installing ptxas from nvidia-cuda-nvcc"
  "$python" -m pip install -q "nvidia-cuda-nvcc>=13,<14"
fi
