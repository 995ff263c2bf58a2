#!/usr/bin/env bash
#===- scripts/deps.sh - install what the build needs ----------------------===//
#
# Idempotent: returns in well under a second when everything is present.
# Installs Debian's LLVM/MLIR 22 packages, CMake, Ninja and ccache.
#
#===----------------------------------------------------------------------===//
set -euo pipefail

packages=(libmlir-22-dev mlir-22-tools llvm-22 llvm-22-dev llvm-22-tools clang-22
          lld-22 libomp-22-dev cmake ninja-build ccache)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
fi

# Optional: qemu-user and the AArch64 cross C library, with which the
# AArch64 integration tests run cross-compiled code (they are skipped where
# these do not install).
optional=(qemu-user libc6-arm64-cross libc6-dev-arm64-cross)
optional_missing=()
for pkg in "${optional[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    optional_missing+=("$pkg")
  fi
done
if ((${#optional_missing[@]})); then
  echo "deps: installing ${optional_missing[*]} (optional)"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      --no-install-recommends "${optional_missing[@]}"; } ||
    echo "deps: ${optional_missing[*]} did not install; AArch64 runs skipped"
fi

# The integration tests compute float64 references with NumPy; the Python
# package is a nanobind extension and its tests run under pytest.
pip_missing=()
for module in numpy nanobind pytest; do
  if ! python3 -c "import $module" 2>/dev/null; then
    pip_missing+=("$module")
  fi
done
if ((${#pip_missing[@]})); then
  echo "deps: installing ${pip_missing[*]}"
  python3 -m pip install -q "${pip_missing[@]}"
fi
