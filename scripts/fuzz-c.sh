#!/usr/bin/env bash
# Fuzzes the C helper header (c/dlpack/dlpack_helpers.h of the newest
# release) for a bounded time under AddressSanitizer and
# UndefinedBehaviorSanitizer, and fails on any crasher.
#
#   scripts/fuzz-c.sh [SECONDS]
#
# The target is tests/chelpers/testdata/fuzz_check.c, built with clang's
# libFuzzer. A crasher is written to tests/chelpers/testdata/fuzz/: fix the
# bug and commit the file with the fix; go test ./tests/chelpers then runs
# every file there as a regression seed.
set -euo pipefail
seconds=${1:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
seeds="$root/tests/chelpers/testdata/fuzz"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go run "$root/cmd/dlgen" -lang c -out "$work/gen"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I "$work/gen/c/dlpack" "$root/tests/chelpers/testdata/fuzz_check.c" -o "$work/fuzz_check"
mkdir -p "$work/corpus" "$seeds"
before=$(ls "$seeds")
if "$work/fuzz_check" -max_total_time="$seconds" -artifact_prefix="$seeds/" -print_final_stats=1 \
  "$work/corpus" "$seeds" 2>"$work/log"; then
  tail -n 12 "$work/log"
  exit 0
fi
cat "$work/log" >&2
for f in $(ls "$seeds"); do
  if ! grep -qx "$f" <<<"$before"; then
    echo "fuzz-c: new crasher $seeds/$f: fix the bug, then commit the file as a regression seed" >&2
  fi
done
exit 1
