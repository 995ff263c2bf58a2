#!/usr/bin/env bash
#===- compare-ir.sh - the code two builds of attnc make, compared ---------===#
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# A restructuring that should not change the generated code (moving passes,
# splitting files, passes taking their work from another place) is proved by
# compiling a corpus with the attnc of both builds and comparing the
# LLVM-dialect modules, for several CPUs, an AArch64 cross target and CUDA:
# identical code runs at identical speed, which no timing on a shared
# machine shows as well.
#
#   scripts/compare-ir.sh OLD_ATTNC NEW_ATTNC [FILE.mlir ...]
#
# Copy the old build's attnc aside before rebuilding (cp build/bin/attnc
# /tmp/attnc.old). Without files, the corpus is examples/*.mlir and the
# .mlir inputs of test/Integration/CPU. Two differences are not the code's
# and are masked: the cubin's compile times in gpu.binary properties, and
# the order of llvm.mlir.global constants, which one-shot bufferization
# emits in an order that varies from run to run. The tuning cache is an
# empty directory, so both builds choose sizes from the target model alone.
# Exit status: 0 when every module is the same, 1 otherwise.
#
#===----------------------------------------------------------------------===#

set -euo pipefail

if [[ $# -lt 2 ]]; then
  sed -n '/^#   scripts/p' "$0" | sed 's/^#   //'
  exit 2
fi
old=$1
new=$2
shift 2
cd "$(dirname "$0")/.."
if [[ $# -gt 0 ]]; then
  files=("$@")
else
  files=(examples/*.mlir test/Integration/CPU/Inputs/*.mlir
         test/Integration/CPU/*.mlir)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/cache"

# One module, normalised: globals sorted to the top, compile times dropped.
normalise() {
  local times='s/ISAToBinaryTimeInMs = [0-9]+ : i64, LLVMIRToISATimeInMs = [0-9]+ : i64//'
  sed -E "$times" "$1" | grep -v '^  llvm.mlir.global ' || true
  sed -E "$times" "$1" | grep '^  llvm.mlir.global ' | LC_ALL=C sort || true
}

targets=("--mcpu=znver3" "--mcpu=znver4" "--mcpu=sapphirerapids"
         "--mtriple=aarch64-linux-gnu --mcpu=neoverse-v2" "--target=cuda")
compared=0
differ=0
for file in "${files[@]}"; do
  for target in "${targets[@]}"; do
    outputs=()
    for build in old new; do
      attnc=$old
      [[ $build == new ]] && attnc=$new
      out="$work/$build.mlir"
      # shellcheck disable=SC2086 # a target is several flags
      if ATTN_MLIR_CACHE_DIR="$work/cache" "$attnc" --emit=mlir $target \
           "$file" -o "$out" 2>"$work/$build.err"; then
        normalise "$out" >"$work/$build.norm"
      else
        # A refusal is compared too: both builds must refuse alike.
        sed "s|$attnc|attnc|g" "$work/$build.err" >"$work/$build.norm"
      fi
      outputs+=("$work/$build.norm")
    done
    compared=$((compared + 1))
    if ! cmp -s "${outputs[0]}" "${outputs[1]}"; then
      differ=$((differ + 1))
      echo "differs: $file ($target)"
    fi
  done
done
echo "$compared modules compared, $differ differ"
[[ $differ -eq 0 ]]
