#!/usr/bin/env bash
# CPython builds that neither Debian bookworm nor pyenv provide here:
# free-threaded 3.14t (./configure --disable-gil) and 3.14 with the GIL, and
# on request free-threaded 3.13t, each built from the source tarball of
# Debian's archive (the orig.tar.xz of its python3.14 / python3.13 source
# package, pinned below with its sha256, looked up in sid's Sources index and checked against the sha256 the
# index gives where it still lists it, and fetched from the mirror this
# machine's apt already uses, scripts/debian-mirror.sh). Each is installed
# into a cache outside the clone, shared by every clone on the machine:
#   ${DLGEN_PYTHONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dlgen/pythons}/<version>[t]
# (3.14.7t, 3.14.7, 3.13.15t). Then a venv per interpreter in the
# repository, .venv-py3.14t, .venv-py3.14 (.venv-py3.13t), with
# tests/requirements-pythons.txt (NumPy 2.4.6 has cp314, cp314t and cp313t
# wheels; Cython 3.3.1 a cp314 one, and on free-threaded builds pip takes
# its pure-Python wheel: slower to cythonize, the same output).
#
# Usage: scripts/pythons.sh [3.14t] [3.14] [3.13t]   (no argument: 3.14t 3.14)
#
# A build costs 6 to 7 minutes of CPU (3.14: configure 40 s, make 380 s,
# install a few seconds), about 4 minutes of a 2-core machine of its own
# (3.13t took 221 s on a quiet one): two fit CI's budget, three would take
# about 12 minutes, so 3.13t (the same free-threaded runtime, one release
# older) is built only when asked for.
#
# Safe to re-run: an interpreter already in the cache is used as it is (no
# network), a venv whose requirements and interpreter are unchanged is kept;
# a new pin builds anew beside the old build (which is then unused). A
# build that fails keeps its tree under <cache>/build and resumes at the
# failed step when this script runs again for it; every failure names its
# step, its log and the command that reruns just that. Builds are quick ones
# (no PGO, no LTO, no test modules, no static libpython, no pip in the base
# install, make -j$(nproc)); each build's time is printed and added to
# <cache>/build-times.log. Two clones building at once take turns (flock).
set -euo pipefail
cd "$(dirname "$0")/.."

cache=${DLGEN_PYTHONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dlgen/pythons}
suite=sid
builds=("$@")
((${#builds[@]})) || builds=(3.14t 3.14)

step="" log="" rerun="" tmp=""
finish() {
  local rc=$?
  [ -z "$tmp" ] || rm -rf "$tmp"
  if [ "$rc" != 0 ] && [ -n "$step" ]; then
    echo "pythons: step '$step' failed (exit $rc)${log:+; its log: $log}" >&2
    echo "pythons: rerun only that step with: $rerun" >&2
  fi
}
trap finish EXIT

# The install of a series (3.14) and flavour ("t" or "") in the cache, if
# it is complete.
installed() {
  local prefix=$cache/${release[$1]}$2
  if [ -e "$prefix/.complete" ]; then echo "$prefix"; fi
}

# The release of each series, pinned with the sha256 of its orig tarball:
# the newest that this machine's mirror serves. Both sha256 are those of
# the Checksums-Sha256 of the release's .dsc in Debian's pool, whose
# signature (Matthias Klose's) gpgv verified against debian-keyring.
# 3.13.15-1 is also in sid's and forky's Sources index, which the script
# checks the pin against; 3.14.8-3.14.10 are in the indexes, but their
# files 404 on the mirror, so 3.14.7-1 (gone from the indexes) it is.
declare -A release=([3.13]=3.13.15 [3.14]=3.14.7)
declare -A sha256=([3.13]=1e66a7945a48390ee4c2a4268a0e4185884059a13c4aab6d148aa208deea4a76
                   [3.14]=3b48dac8fb59f62eaa67ac83c1eb12bda1b7a08406dd286e252c11a66be27f81)

# Debian's Sources index of the suite, fetched once per run.
index() {
  if [ -z "$tmp" ]; then
    tmp=$(mktemp -d)
    mirror=$(scripts/debian-mirror.sh)
    step="fetch Debian's $suite Sources index" log="" rerun="curl -fsSL $mirror/dists/$suite/main/source/Sources.xz"
    curl -fsSL --retry 3 -o "$tmp/Sources.xz" "$mirror/dists/$suite/main/source/Sources.xz"
  fi
}

# "directory sha256" of a file in the index, or nothing.
listed() {
  xz -dc "$tmp/Sources.xz" | awk -v want="$1" '
    /^Package: / { dir = ""; insha = 0 }
    /^Directory: / { dir = $2 }
    /^[^ ]/ { insha = ($1 == "Checksums-Sha256:"); next }
    insha && $3 == want { sha = $1; file = $3 }
    /^$/ { if (file != "" && dir != "") { print dir, sha; exit } file = "" }'
}

# The build dependencies: only what pip, venv, ssl and ctypes need.
build_deps() {
  local packages=(build-essential pkg-config curl xz-utils libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev)
  local missing=() p sudo=""
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  [ "$(id -u)" = 0 ] || sudo=sudo
  step="apt-get install ${missing[*]}" log="" rerun="$sudo apt-get install ${missing[*]}"
  echo "pythons: apt-get install ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# CPU seconds of the finished child processes of this shell: with the wall
# time, what a build would take on idle cores (this machine's may be shared).
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($16 + $17) / hz }' /proc/$$/stat; }

# Builds one interpreter into the cache; prints nothing when it is there.
build() {
  local name=$1 series=${1%t} t="" version dir file sha listed_dir listed_sha prefix src work py start t0 t1 t2 t3 c0 c1 c2 c3
  [[ $name == *t ]] && t=t
  [ -n "$(installed "$series" "$t")" ] && return 0

  build_deps
  index
  version=${release[$series]:-}
  [ -n "$version" ] || { echo "pythons: no release of $series is pinned in $0" >&2; exit 2; }
  file=python${series}_$version.orig.tar.xz
  sha=${sha256[$series]}
  dir=pool/main/p/python$series
  step="look $file up in Debian's $suite Sources index" log="" rerun="scripts/pythons.sh $name"
  read -r listed_dir listed_sha < <(listed "$file") || true
  if [ -n "${listed_sha:-}" ]; then
    [ "$listed_sha" = "$sha" ] || { echo "pythons: Debian's index gives $file the sha256 $listed_sha, not the pinned $sha" >&2; exit 1; }
    dir=$listed_dir
  else
    echo "pythons: $file is no longer in Debian's $suite index: checked against its pinned sha256 only"
  fi
  prefix=$cache/$version$t
  src=$cache/src/$file
  work=$cache/build/$version$t
  mkdir -p "$cache/src" "$cache/build"
  start=$(date +%s)

  if ! echo "$sha  $src" | sha256sum -c --quiet >/dev/null 2>&1; then
    step="download $file" rerun="scripts/pythons.sh $name"
    echo "pythons: $mirror/$dir/$file"
    curl -fsSL --retry 3 -o "$src.part" "$mirror/$dir/$file"
    step="check $file against its sha256 ($sha)"
    echo "$sha  $src.part" | sha256sum -c --quiet
    mv "$src.part" "$src"
  fi
  if [ ! -e "$work/.extracted" ]; then
    step="extract $file" rerun="scripts/pythons.sh $name"
    rm -rf "$work"
    mkdir -p "$work"
    tar -xJf "$src" -C "$work" --strip-components=1
    touch "$work/.extracted"
  fi
  t0=$(date +%s) c0=$(cpu)
  if [ ! -e "$work/.configured" ]; then
    step="configure CPython $version$t" log="$work/configure.log"
    rerun="(cd $work && ./configure --prefix=$prefix ${t:+--disable-gil }--with-ensurepip=no --disable-test-modules --without-static-libpython) && scripts/pythons.sh $name"
    echo "pythons: building CPython $version$t in $work (logs there)"
    (cd "$work" && ./configure --prefix="$prefix" ${t:+--disable-gil} --with-ensurepip=no \
       --disable-test-modules --without-static-libpython >configure.log 2>&1)
    touch "$work/.configured"
  fi
  t1=$(date +%s) c1=$(cpu)
  step="make CPython $version$t" log="$work/make.log" rerun="make -C $work -j$(nproc) && scripts/pythons.sh $name"
  make -C "$work" -j"$(nproc)" >"$work/make.log" 2>&1
  t2=$(date +%s) c2=$(cpu)
  # Installs into a fresh prefix: .complete, written last, marks it whole.
  step="install CPython $version$t into $prefix" log="$work/install.log" rerun="scripts/pythons.sh $name"
  rm -rf "$prefix"
  make -C "$work" install >"$work/install.log" 2>&1
  py=$prefix/bin/python$series$t
  step="check CPython $version$t (ssl, ctypes, zlib, bz2, lzma${t:+, the GIL off})" log="" rerun="$py -c 'import ssl, ctypes, zlib, bz2, lzma, sys; print(sys._is_gil_enabled())'"
  "$py" - "$t" <<'PY'
import bz2, ctypes, lzma, ssl, sys, sysconfig, zlib
free = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
if free != (sys.argv[1] == "t"):
    sys.exit(f"{sys.executable}: Py_GIL_DISABLED is {free}")
if free and sys._is_gil_enabled():
    sys.exit(f"{sys.executable}: the GIL is on in a free-threaded build")
PY
  touch "$prefix/.complete"
  t3=$(date +%s) c3=$(cpu)
  rm -rf "$work" "$src"
  local times="configure $((t1 - t0))s, make $((t2 - t1))s, install $((t3 - t2))s; CPU time configure $((c1 - c0))s, make $((c2 - c1))s, install $((c3 - c2))s"
  echo "pythons: CPython $version$t in $prefix ($(du -sh "$prefix" | cut -f1)): $((t3 - start))s ($times; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "$(date -u +%FT%TZ) $version$t $((t3 - start))s ($times; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))" >>"$cache/build-times.log"
  step=""
}

# A venv in the repository with tests/requirements-pythons.txt; its marker
# holds the requirements and the interpreter, so a new build remakes it.
venv() {
  local name=$1 series=${1%t} t="" prefix py venv=.venv-py$1 want
  [[ $name == *t ]] && t=t
  prefix=$(installed "$series" "$t")
  py=$prefix/bin/python$series$t
  want=$(cat tests/requirements-pythons.txt; echo "# interpreter: $py")
  [ "$want" = "$(cat "$venv/.requirements" 2>/dev/null)" ] && return 0
  echo "pythons: Python $name venv in $venv ($py)"
  step="venv $venv" log="" rerun="scripts/pythons.sh $name"
  rm -rf "$venv"
  "$py" -m venv "$venv"
  step="pip install -r tests/requirements-pythons.txt into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r tests/requirements-pythons.txt
  echo "$want" >"$venv/.requirements"
  step=""
}

mkdir -p "$cache"
for name in "${builds[@]}"; do
  [[ $name =~ ^3\.[0-9]+t?$ ]] && [ -n "${release[${name%t}]:-}" ] ||
    { echo "pythons: $name is not one of the series pinned here, such as 3.14 or 3.14t" >&2; exit 2; }
  # One build of a series at a time on the machine, whichever clone asks.
  exec {lock}>"$cache/.lock-$name"
  flock "$lock"
  build "$name"
  exec {lock}>&-
  venv "$name"
done
