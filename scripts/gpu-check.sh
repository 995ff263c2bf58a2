#!/usr/bin/env bash
# The GPU checks of the CUDA backend in one command per machine
# (docs/CUDA.md, "Running on a GPU").
#
#   scripts/gpu-check.sh bundle        on the build machine (no GPU needed):
#                                      compiles the test cases and benchmark
#                                      kernels into build/gpu-bundle
#   scripts/gpu-check.sh run [DIR]     on the GPU machine (PyTorch, Triton,
#                                      compute-sanitizer; no LLVM needed):
#                                      correctness on every case, memcheck and
#                                      racecheck, benchmarks against torch and
#                                      Triton; results under DIR (default $OUT)
#
# With this workplace's device tool: run the bundle step here, then
#   run(command="scripts/gpu-check.sh run", carry=["build/gpu-bundle"])
#
# Each step of `run` has a wall-clock limit in seconds (GPU_CHECK_LIMITS:
# correctness, memcheck, racecheck, benchmarks; default "240 120 120 240"),
# so that one hanging step cannot take a short GPU lease with it; a step
# that runs past its limit fails with exit 124 and the next one starts.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bundle=build/gpu-bundle

case "${1:-}" in
bundle)
  shift
  # Here: the project's venv (scripts/common.sh); on the GPU machine, its
  # own python3 with PyTorch.
  source scripts/common.sh
  exec "$python" benchmarks/gpu/bundle.py --out "$bundle" "$@"
  ;;
run)
  out="${2:-${OUT:-gpu-results}}"
  mkdir -p "$out"
  status=0
  read -r limit_check limit_memcheck limit_racecheck limit_bench \
    <<<"${GPU_CHECK_LIMITS:-240 120 120 240}"
  nvidia-smi -L | tee "$out/device.txt"
  echo "== correctness (every case, 3 runs each)"
  PYTHONUNBUFFERED=1 timeout "$limit_check" \
    python3 benchmarks/gpu/check.py --bundle "$bundle" --out "$out" 2>&1 | tee "$out/check.log" || status=1
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool"
    limit="limit_$tool"
    PYTHONUNBUFFERED=1 timeout "${!limit}" \
      compute-sanitizer --tool "$tool" --error-exitcode 3 \
      python3 benchmarks/gpu/check.py --bundle "$bundle" --quick > "$out/$tool.log" 2>&1
    rc=$?
    tail -3 "$out/$tool.log"
    [ $rc -eq 0 ] || { echo "$tool: exit $rc"; status=1; }
  done
  echo "== benchmarks"
  PYTHONUNBUFFERED=1 timeout "$limit_bench" \
    python3 benchmarks/gpu/bench.py --bundle "$bundle" --out "$out" 2>&1 | tee "$out/bench.log" || status=1
  exit $status
  ;;
*)
  sed -n '2,16p' "$0"
  exit 2
  ;;
esac
