#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian machine:
# Debian packages (the upstream v0.6 header, cross-compilers, valgrind),
# a Python venv in .venv with pinned packages, and the Go modules.
# Safe to re-run: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  libdlpack-dev                                   # upstream DLPack v0.6 header
  gcc g++ binutils
  gcc-i686-linux-gnu binutils-i686-linux-gnu libc6-dev-i386-cross
  gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross
  python3-venv
  valgrind                                        # the bridge's memcheck test
  python3-torch                                   # PyTorch 1.13 for Debian's own python3
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "deps: apt-get install ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! cmp -s tests/requirements.txt .venv/.requirements 2>/dev/null; then
  echo "deps: python venv in .venv"
  rm -rf .venv
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r tests/requirements.txt
  cp tests/requirements.txt .venv/.requirements
fi

# MXNet 1.9.1 with NumPy 1.23.5 needs Python 3.11 at most: its own venv.
if ! cmp -s tests/requirements-mxnet.txt .venv-mxnet/.requirements 2>/dev/null; then
  echo "deps: MXNet venv in .venv-mxnet"
  rm -rf .venv-mxnet
  python3.11 -m venv .venv-mxnet
  .venv-mxnet/bin/pip install -q --disable-pip-version-check -r tests/requirements-mxnet.txt
  cp tests/requirements-mxnet.txt .venv-mxnet/.requirements
fi

# DLPack 1.2 as shipped by an older wheel of the same package, apache-tvm-ffi
# 0.1.0: only its header is kept, for the ABI test.
upstream12=.cache/upstream/apache-tvm-ffi-0.1.0
if [ ! -s "$upstream12/dlpack/dlpack.h" ]; then
  echo "deps: the DLPack 1.2 header from apache-tvm-ffi 0.1.0"
  wheels=$(mktemp -d)
  .venv/bin/pip download -q --disable-pip-version-check --no-deps --only-binary=:all: -d "$wheels" apache-tvm-ffi==0.1.0
  mkdir -p "$upstream12/dlpack"
  .venv/bin/python - "$wheels" "$upstream12/dlpack/dlpack.h" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("tvm_ffi/include/dlpack/dlpack.h"))
PY
  rm -rf "$wheels"
fi

go mod download
