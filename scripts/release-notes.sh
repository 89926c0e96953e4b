#!/usr/bin/env bash
# scripts/release-notes.sh VERSION: CHANGELOG.md's entry for VERSION (the
# text under its "## [VERSION] - DATE" heading), the notes of its GitHub
# release (.github/workflows/release.yml). Fails when there is none: the tag,
# dlgen.Version and CHANGELOG.md's newest release are one number.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/release-notes.sh VERSION}
awk -v v="$version" '
  index($0, "## [" v "] - ") == 1 { on = 1; found = 1; next }
  on && /^## \[/ { exit }
  on && /^\[[^]]*\]: / { exit }
  on { print }
  END { if (!found) { print "release-notes: CHANGELOG.md has no entry ## [" v "]" > "/dev/stderr"; exit 1 } }
' CHANGELOG.md | sed -e '/./,$!d'
