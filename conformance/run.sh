#!/usr/bin/env bash
# The step of dlgen's conformance action (action.yml beside this script),
# which also runs anywhere else (GitLab CI, a shell; tests/dist runs it):
# installs the DLPack conformance kit with pip, runs it against the library
# and exits as the kit does (0: every case passes; 1: a case fails; 2: the
# kit cannot run). Its inputs are variables:
#
#   DLPACK_LIBRARY  the libraries, space-separated modules or adapter files (required)
#   DLPACK_XFAIL    an xfail file
#   DLPACK_KIT      what to pip install: a generated conformance/ directory, a
#                   wheel, a requirement; default: the kit wheel of this
#                   release of dlgen (dlgen.go's Version), from its GitHub release
#   DLPACK_ARGS     more arguments for the kit (--case PATTERN, -q, ...)
#   DLPACK_JSON     where every result goes as JSON (default dlpack-conformance.json)
#   DLPACK_PYTHON   the Python that has the library (default python3, or python)
#
# Under GitHub Actions it also sets the output json and writes the summary
# lines of the run to the job summary.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "${DLPACK_LIBRARY:-}" ]; then
  echo "dlpack-conformance: name the library to test (the action's input library, DLPACK_LIBRARY)" >&2
  exit 2
fi
python=${DLPACK_PYTHON:-}
if [ -z "$python" ]; then
  python=$(command -v python3 || command -v python || true)
  if [ -z "$python" ]; then
    echo "dlpack-conformance: no python3 or python on PATH (set the input python, DLPACK_PYTHON)" >&2
    exit 2
  fi
fi
kit=${DLPACK_KIT:-}
if [ -z "$kit" ]; then
  version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' "$here/../dlgen.go")
  if [ -z "$version" ]; then
    echo "dlpack-conformance: no version of dlgen in $here/../dlgen.go (set the input kit, DLPACK_KIT)" >&2
    exit 2
  fi
  kit="https://github.com/dlgen/dlgen/releases/download/v$version/dlpack_conformance-$version-py3-none-any.whl"
fi
json=${DLPACK_JSON:-dlpack-conformance.json}

echo "dlpack-conformance: pip install $kit"
"$python" -m pip install --disable-pip-version-check --quiet "$kit"

read -r -a libraries <<< "$DLPACK_LIBRARY"
read -r -a extra <<< "${DLPACK_ARGS:-}"
command=("$python" -m dlpack_conformance "${libraries[@]}" --json "$json")
if [ -n "${DLPACK_XFAIL:-}" ]; then
  command+=(--xfail "$DLPACK_XFAIL")
fi
command+=(${extra[@]+"${extra[@]}"})   # bash 3.2 (macOS) calls an empty array unbound
echo "dlpack-conformance: ${command[*]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
"${command[@]}" 2>&1 | tee "$log" || status=${PIPESTATUS[0]}

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "json=$json" >> "$GITHUB_OUTPUT"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    echo '### DLPack conformance'
    echo '```'
    grep -E '^(== |python -m dlpack_conformance: )' "$log" || true
    echo '```'
  } >> "$GITHUB_STEP_SUMMARY"
fi
exit "$status"
