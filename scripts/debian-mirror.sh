#!/usr/bin/env bash
# Prints the Debian mirror this machine's apt already uses (the first deb
# URI of its sources that is not a security mirror), for scripts that fetch
# from Debian's archive beside apt: scripts/deps.sh (trixie's headers) and
# scripts/pythons.sh (CPython's source tarballs). Fails when there is none.
set -euo pipefail
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
         awk '$1 == "URIs:" || $1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\//) {print $i; next}}' | grep -v -- '-security' | head -n 1 || true)
[ -n "$mirror" ] || { echo "no Debian mirror in this machine's apt sources" >&2; exit 1; }
echo "${mirror%/}"
