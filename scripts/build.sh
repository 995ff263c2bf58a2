#!/usr/bin/env bash
#===- scripts/build.sh - install, configure and build attn-mlir ----------===//
#
# Usage: scripts/build.sh [extra cmake -D options]
# Builds into ./build (override with BUILD_DIR). Re-running is incremental.
# Python is the project's venv (scripts/common.sh), which deps.sh makes.
#
#===----------------------------------------------------------------------===//
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

"$root/scripts/deps.sh"

llvm=/usr/lib/llvm-22
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# Configured once; again only where the build directory was configured with
# another Python (a build from before the venv, or another ATTN_VENV).
if [[ ! -f "$build/build.ninja" ]] ||
   ! grep -qxF "Python3_EXECUTABLE:FILEPATH=$python" "$build/CMakeCache.txt"; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$llvm/bin/clang" \
    -DCMAKE_CXX_COMPILER="$llvm/bin/clang++" \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR="$llvm/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$llvm/bin/lit" \
    -DPython3_EXECUTABLE:FILEPATH="$python" \
    "${launcher[@]}" "$@"
fi
cmake --build "$build"
