#!/usr/bin/env bash
# Fuzzes one target for a bounded time and fails on any crasher.
#
#   scripts/fuzz.sh DIR TARGET [FUZZTIME] [MINIMIZETIME]
#
# DIR is a Go package directory, TARGET a fuzz function in it. Minimisation
# is bounded (default 1s per input) so that the time goes into new inputs
# rather than into shrinking a large one. go test writes a crasher to
# DIR/testdata/fuzz/TARGET/; this script names it and exits 1. Commit it
# with the fix: it then runs as a regression seed in every plain go test.
set -euo pipefail
dir=$1 target=$2 fuzztime=${3:-10s} minimizetime=${4:-1s}
corpus="$dir/testdata/fuzz/$target"
before=$(ls "$corpus" 2>/dev/null || true)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
(cd "$dir" && go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" -fuzzminimizetime="$minimizetime" .) 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
if [ "$status" = 0 ]; then
  exit 0
fi
new=""
for f in $(ls "$corpus" 2>/dev/null); do
  if ! grep -qx "$f" <<<"$before"; then
    new="$new $f"
  fi
done
# Go's fuzzing coordinator can fail a target at the end of -fuzztime with a
# bare "context deadline exceeded" when a worker is still running an input
# (go.dev/issue/75804, fixed in Go 1.27): no input failed and nothing was
# written. That alone, with the corpus replaying clean, is no crasher.
if [ -z "$new" ] && ! grep -q 'Failing input written' "$log" &&
  [ "$(grep -A1 "^--- FAIL: ${target} " "$log" | tail -n 1)" = "    context deadline exceeded" ] &&
  (cd "$dir" && go test -count=1 -run="^${target}\$" .) >/dev/null 2>&1; then
  echo "fuzz: $target: Go's fuzzing coordinator raced its own -fuzztime deadline (go.dev/issue/75804, fixed in Go 1.27); no input failed, and the corpus replays clean"
  exit 0
fi
echo "fuzz: $target failed" >&2
for f in $new; do
  echo "fuzz: new crasher $corpus/$f: fix the bug, then commit the file as a regression seed" >&2
done
exit 1
