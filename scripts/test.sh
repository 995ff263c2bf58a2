#!/usr/bin/env bash
#===- scripts/test.sh - build (incrementally) and run the whole test suite -===//
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/build.sh"
cmake --build "${BUILD_DIR:-$root/build}" --target check-attn
