#!/usr/bin/env bash
#===- scripts/test.sh - build (incrementally) and run the whole test suite -===//
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$root/scripts/build.sh"
cmake --build "$build" --target check-attn
