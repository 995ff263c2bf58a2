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

# Optional: qemu-user and the AArch64 cross C library, with which the
# AArch64 integration tests run cross-compiled code (they are skipped where
# these do not install).
mapfile -t optional_missing < <(not_installed qemu-user libc6-arm64-cross \
                                 libc6-dev-arm64-cross)
if ((${#optional_missing[@]})); then
  echo "deps: installing ${optional_missing[*]} (optional)"
  apt_install "${optional_missing[@]}" ||
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
