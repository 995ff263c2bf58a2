#!/usr/bin/env bash
#===- scripts/fuzz.sh - run a fuzz target for a given time ----------------===//
#
# Usage: scripts/fuzz.sh parse|mutate|gen SECONDS [libFuzzer flags, e.g. -jobs=2]
#
# Builds attn-mlir with ASan + UBSan and every attn source instrumented for
# coverage (-DATTN_SANITIZE=ON -DATTN_FUZZ_COVERAGE=ON) into ./build-fuzz
# (BUILD_DIR overrides it; BUILD_DIR=build runs the default build's fuzzers
# instead, whose coverage feedback is their own code only), then runs
# attn-<target>-fuzzer for SECONDS on a corpus kept between runs in
# $BUILD_DIR/fuzz/<target>/corpus: seeded from every file of test/ and
# examples/ (parse, mutate), or with random bytes (gen). A finding stops
# the run and leaves its input as $BUILD_DIR/fuzz/<target>/crash-*; the log is
# $BUILD_DIR/fuzz/<target>/log. The last line says what ran: executions,
# corpus, coverage, findings. Not a CI step (test/Fuzz runs 20-30 s ones);
# docs/Testing.md records the long runs.
#
#===----------------------------------------------------------------------===//
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [[ $# -lt 2 || ! "$1" =~ ^(parse|mutate|gen)$ || ! "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh parse|mutate|gen SECONDS [libFuzzer flags]" >&2
  exit 2
fi
target="$1" seconds="$2"
shift 2
export BUILD_DIR="${BUILD_DIR:-$root/build-fuzz}"

if [[ "$BUILD_DIR" == "$root/build-fuzz" ]]; then
  # build.sh passes its options to the first configure only.
  options=(-DATTN_SANITIZE=ON -DATTN_FUZZ_COVERAGE=ON)
  if [[ -f "$BUILD_DIR/build.ninja" ]]; then
    cmake -S "$root" -B "$BUILD_DIR" "${options[@]}" > /dev/null
  fi
  # The sanitizer and libFuzzer runtimes (compiler-rt) come with deps.sh.
  "$root/scripts/build.sh" "${options[@]}"
else
  cmake --build "$BUILD_DIR"
fi

work="$BUILD_DIR/fuzz/$target"
corpus="$work/corpus"
mkdir -p "$corpus"
seeds=()
if [[ -z "$(ls -A "$corpus")" ]]; then
  if [[ "$target" != gen ]]; then
    seeds=("$root/test" "$root/examples")
  else
    "$python" "$root/test/lib/fuzz_seeds.py" "$corpus" 64 512
  fi
fi
flags=(-max_total_time="$seconds" -timeout=300 -rss_limit_mb=8192
       -print_final_stats=1 -artifact_prefix="$work/")
# The generator reads one choice per byte or two: inputs of any length
# from the start, not libFuzzer's slowly growing ones.
[[ "$target" == gen ]] && flags+=(-len_control=0 -max_len=2048)
[[ "$target" != gen ]] && flags+=(-max_len=65536)

if grep -q '^ATTN_SANITIZE:BOOL=ON' "$BUILD_DIR/CMakeCache.txt"; then
  # libFuzzer's C++ library comes before the sanitizer runtime in the
  # fuzzers' libraries, which ASan refuses unless the runtime is preloaded.
  export LD_PRELOAD="$(/usr/lib/llvm-22/bin/clang -print-file-name=libclang_rt.asan-x86_64.so)"
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
status=0
"$BUILD_DIR/bin/attn-$target-fuzzer" "${flags[@]}" "$@" "$corpus" "${seeds[@]}" \
  > "$work/log" 2>&1 || status=$?

done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$work/log" | tail -1 || true)"
findings="$(find "$work" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)"
echo "attn-$target-fuzzer, $seconds s, $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'):" \
     "${done_line:-no DONE line (see $work/log)}; corpus $(ls "$corpus" | wc -l) files;" \
     "findings in $work: $findings"
exit "$status"
