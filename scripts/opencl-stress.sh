#!/usr/bin/env bash
# Runs the OpenCL tests of the copy engine (the backend suite, many
# goroutines on one queue) several times side by side under -race, as two
# CI jobs or a busy machine would, and fails if any run fails or hangs.
#
#   scripts/opencl-stress.sh [ROUNDS] [SIDE_BY_SIDE] [TIMEOUT_SECONDS]
#
# Each round starts SIDE_BY_SIDE runs of the test binary at once (default 3
# rounds of 3); a run that has not finished within TIMEOUT_SECONDS (default
# 60; one run alone takes about 5 s) ends in go test's own timeout, which
# prints every goroutine's stack, and the script exits 1 with that run's
# output. A process deadlocked in C may not even manage that: 20 s later it
# is killed.
# Set DLGEN_REQUIRE_TOOLS=1 to fail, not skip, without an OpenCL device.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3} side_by_side=${2:-3} timeout=${3:-60}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -race -c -o "$tmp/devices.test" ./runtime/devices
for round in $(seq "$rounds"); do
  pids=()
  for run in $(seq "$side_by_side"); do
    (cd runtime/devices && exec timeout -k 5 $((timeout + 20)) "$tmp/devices.test" -test.run '^TestOpenCL' -test.count=1 \
      -test.timeout "${timeout}s") >"$tmp/$round.$run.log" 2>&1 &
    pids+=($!)
  done
  for run in $(seq "$side_by_side"); do
    if ! wait "${pids[$((run - 1))]}"; then
      cat "$tmp/$round.$run.log"
      echo "opencl-stress: run $run of round $round failed or did not finish within ${timeout}s" >&2
      wait
      exit 1
    fi
  done
  echo "opencl-stress: round $round: $side_by_side runs side by side passed"
done
