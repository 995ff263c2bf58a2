#!/usr/bin/env bash
#===- scripts/sanitize.sh - the suite under ASan + UBSan ------------------===//
#
# Usage: scripts/sanitize.sh [lit arguments, e.g. -q or a test path]
# Builds attn-mlir with AddressSanitizer and UndefinedBehaviorSanitizer
# (-DATTN_SANITIZE=ON) into ./build-asan (override with BUILD_DIR) and runs
# the lit suite there: any sanitizer report fails its test (lit.cfg.py).
# Not a CI step (a full instrumented build and a suite run 2-3x slower);
# docs/Testing.md records the last run.
#
#===----------------------------------------------------------------------===//
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export BUILD_DIR="${BUILD_DIR:-$root/build-asan}"

# The sanitizer runtimes of clang-22 (compiler-rt).
if ! dpkg-query -W -f='${Status}' libclang-rt-22-dev 2>/dev/null | grep -q "ok installed"; then
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q libclang-rt-22-dev
fi

"$root/scripts/build.sh" -DATTN_SANITIZE=ON
/usr/lib/llvm-22/bin/lit "${@:--q}" "$BUILD_DIR/test"
