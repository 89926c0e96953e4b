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
if (cd "$dir" && go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" -fuzzminimizetime="$minimizetime" .); then
  exit 0
fi
echo "fuzz: $target failed" >&2
for f in $(ls "$corpus" 2>/dev/null); do
  if ! grep -qx "$f" <<<"$before"; then
    echo "fuzz: new crasher $corpus/$f: fix the bug, then commit the file as a regression seed" >&2
  fi
done
exit 1
