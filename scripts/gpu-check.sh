#!/usr/bin/env bash
# The CUDA backend of the copy engine on a real GPU, in two steps so that
# the machine with the GPU needs nothing installed (no Go, no compiler):
#
#   scripts/gpu-check.sh build   # here: go test -c into .cache/gpu-check/
#   scripts/gpu-check.sh run     # there: runs the binary against libcuda.so.1
#   scripts/gpu-check.sh         # both, on a machine with Go and a GPU
#
# The binary travels with the tree (.cache/gpu-check/, which git ignores:
# carry it; with dlgen's device tool, `build` here, then run the command
# `scripts/gpu-check.sh run` with carry [".cache/gpu-check"]). It links
# glibc dynamically, so the GPU machine's glibc must be as new as the
# builder's (2.34 for a build on Debian 12). `run` prints the GPU (nvidia-smi -L), the backend
# suite on the real driver (package devicetest), a 1 GiB host to device to
# host round trip and large strided copies compared byte by byte, and the
# bandwidth of the backend's contiguous copies as a ratio to the driver's
# own cuMemcpyHtoD_v2/cuMemcpyDtoH_v2 measured in the same run (goal 0.9x
# or more), then PASS or FAIL. DLGEN_REQUIRE_GPU=1 makes a missing driver
# or device a failure: a skip is never a pass. It takes well under 5
# minutes; each test binary run is limited to 4.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.cache/gpu-check
bin=$out/devices.test

build() {
  mkdir -p "$out"
  go test -c -o "$bin" ./runtime/devices
  echo "gpu-check: built $bin"
}

run() {
  if [ ! -x "$bin" ]; then
    echo "gpu-check: FAIL: $bin is missing; run scripts/gpu-check.sh build first (and carry $out)" >&2
    exit 1
  fi
  echo "== the GPU"
  nvidia-smi -L 2>&1 || echo "(nvidia-smi not found)"
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  echo "== the CUDA backend on the real driver: the suite, a 1 GiB round trip, strided copies, bandwidth"
  status=0
  (cd runtime/devices && DLGEN_REQUIRE_GPU=1 timeout -k 10 250 "../../$bin" -test.run '^TestCUDAOnTheRealDriver' \
    -test.v -test.count=1 -test.timeout 240s) >"$log" 2>&1 || status=$?
  grep -E '^(--- |ok|FAIL|panic)|real CUDA driver|byte-exact|bandwidth |fake driver|DLGEN_REQUIRE_GPU' "$log" | grep -v '^    --- PASS' || true
  passed=$(grep -c '^--- PASS' "$log" || true)
  skipped=$(grep -c -- '--- SKIP' "$log" || true)
  below=$(awk '/^gpu-check ratio/ && $NF < 0.9 { print $3, $4, $5, $NF }' "$log")
  if [ -n "$below" ]; then
    echo "gpu-check: bandwidth below the 0.9x goal: $below"
  fi
  if [ "$status" -ne 0 ] || [ "$skipped" -ne 0 ] || [ "$passed" -ne 4 ]; then
    echo "gpu-check: FAIL (exit $status, $passed of 4 tests passed, $skipped skipped); the whole log:"
    cat "$log"
    exit 1
  fi
  echo "gpu-check: PASS: 4 of 4 tests on the real driver, none skipped"
}

case "${1:-all}" in
  build) build ;;
  run) run ;;
  all) build && run ;;
  *) echo "usage: scripts/gpu-check.sh [build|run]" >&2; exit 2 ;;
esac
