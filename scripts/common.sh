#===- scripts/common.sh - what the scripts share (sourced) ----------------===//
#
# Sets `root` (the repository), `build` (BUILD_DIR, default build/), `venv`
# (the project's Python virtual environment: ATTN_VENV, default build/venv,
# one for every build directory) and `python` (its interpreter). The venv
# is what the build, the tests and the benchmarks run Python with: Debian's
# own python3 is externally managed (PEP 668) and refuses `pip install`.
#
#===----------------------------------------------------------------------===//
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
venv="${ATTN_VENV:-$root/build/venv}"
python="$venv/bin/python3"
