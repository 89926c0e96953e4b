#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian machine:
# Debian packages (the upstream v0.6 header, cross-compilers, clang, valgrind,
# OpenCL on the CPU), a Python venv in .venv with pinned packages (and others:
# MXNet, pre-commit, dpnp, the conformance matrix's other libraries, other
# CPython releases, free-threaded ones built from source by
# scripts/pythons.sh), the Rust toolchains, targets and crates of
# tests/rust, the Go modules and staticcheck (in .cache/bin).
# Safe to re-run: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# A failed step is named, with the command that reruns it alone; re-running
# this script redoes only what is missing.
trap 'echo "deps: failed (line $LINENO): $BASH_COMMAND; rerun that command alone, or scripts/deps.sh, which skips what is installed" >&2' ERR

# retry CMD...: a toolchain install, tried again once after a failure (two
# rustup runs at once fail with "detected conflict"; the second try finds
# the other's work done), then named with how to rerun it alone.
retry() {
  "$@" && return
  echo "deps: $* failed; trying once more" >&2
  sleep 5
  "$@" && return
  echo "deps: $* failed twice; rerun it alone: $*" >&2
  return 1
}

packages=(
  libdlpack-dev                                   # upstream DLPack v0.6 header
  gcc g++ binutils
  gcc-i686-linux-gnu binutils-i686-linux-gnu libc6-dev-i386-cross
  libc6-i386                                      # runs tests/rust's i686 layout probe
  gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross
  clang                                           # freestanding compiles for dozens of targets (tests/abi)
  clang-16                                        # the same for LoongArch (loong64), which clang 14 lacks
  libclang-rt-14-dev                              # libFuzzer and the sanitizer runtimes for clang (scripts/fuzz-c.sh)
  g++-mingw-w64-x86-64-win32 g++-mingw-w64-i686-win32  # Windows C and C++ with the Windows C runtime's headers (tests/chelpers)
  python3-venv
  python3.11-dbg                                  # a debug CPython (python3.11d) for the thread stress test
  valgrind                                        # the bridge's memcheck test
  python3-torch                                   # PyTorch 1.13 for Debian's own python3
  ocl-icd-libopencl1 pocl-opencl-icd              # OpenCL (the ICD loader, PoCL's CPU driver) for the devices suite
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

# CuPy only where a GPU is: without one its tests skip (and count as skips).
if nvidia-smi -L 2>/dev/null | grep -q '^GPU' \
    && ! cmp -s tests/requirements-gpu.txt .venv/.requirements-gpu 2>/dev/null; then
  echo "deps: CuPy in .venv (a GPU is present)"
  .venv/bin/pip install -q --disable-pip-version-check -r tests/requirements-gpu.txt
  cp tests/requirements-gpu.txt .venv/.requirements-gpu
fi

# MXNet 1.9.1 with NumPy 1.23.5 needs Python 3.11 at most: its own venv.
if ! cmp -s tests/requirements-mxnet.txt .venv-mxnet/.requirements 2>/dev/null; then
  echo "deps: MXNet venv in .venv-mxnet"
  rm -rf .venv-mxnet
  python3.11 -m venv .venv-mxnet
  .venv-mxnet/bin/pip install -q --disable-pip-version-check -r tests/requirements-mxnet.txt
  cp tests/requirements-mxnet.txt .venv-mxnet/.requirements
fi

# TensorFlow and Paddle, which the conformance matrix runs the kit against:
# their own venv, so that neither pins anything in .venv.
if ! cmp -s tests/requirements-kit.txt .venv-kit/.requirements 2>/dev/null; then
  echo "deps: TensorFlow and Paddle venv in .venv-kit"
  rm -rf .venv-kit
  python3.11 -m venv .venv-kit
  .venv-kit/bin/pip install -q --disable-pip-version-check -r tests/requirements-kit.txt
  cp tests/requirements-kit.txt .venv-kit/.requirements
fi

# pyarrow, mlx, Warp, Open3D, onnxruntime, ndonnx and nanobind, the matrix's
# other libraries: their own venv, each package pinned and installed without
# its declared dependencies (tests/requirements-libs.txt says why).
if ! cmp -s tests/requirements-libs.txt .venv-libs/.requirements 2>/dev/null; then
  echo "deps: pyarrow, mlx, Warp, Open3D, onnxruntime, ndonnx, nanobind venv in .venv-libs"
  rm -rf .venv-libs
  python3.11 -m venv .venv-libs
  .venv-libs/bin/pip install -q --disable-pip-version-check --no-deps -r tests/requirements-libs.txt
  cp tests/requirements-libs.txt .venv-libs/.requirements
fi

# NumPy 1.26 and JAX 0.4, the older releases the conformance kit's adapters
# must still drive (the matrix's rows numpy-1.26 and jax-0.4): their own venv.
if ! cmp -s tests/requirements-oldlibs.txt .venv-oldlibs/.requirements 2>/dev/null; then
  echo "deps: NumPy 1.26 and JAX 0.4 venv in .venv-oldlibs"
  rm -rf .venv-oldlibs
  python3.11 -m venv .venv-oldlibs
  .venv-oldlibs/bin/pip install -q --disable-pip-version-check -r tests/requirements-oldlibs.txt
  cp tests/requirements-oldlibs.txt .venv-oldlibs/.requirements
fi

# pre-commit from PyPI, for the test that runs the dlgen-check hook
# (tests/dist): its own venv, so that a pin here never rebuilds .venv.
if ! cmp -s tests/requirements-precommit.txt .venv-precommit/.requirements 2>/dev/null; then
  echo "deps: pre-commit venv in .venv-precommit"
  rm -rf .venv-precommit
  python3 -m venv .venv-precommit
  .venv-precommit/bin/pip install -q --disable-pip-version-check -r tests/requirements-precommit.txt
  cp tests/requirements-precommit.txt .venv-precommit/.requirements
fi

# dpnp with Intel's OpenCL runtime for CPUs (about 3 GB): a real SYCL device
# for tests/python/test_devices.py on machines without a GPU.
if ! cmp -s tests/requirements-dpnp.txt .venv-dpnp/.requirements 2>/dev/null; then
  echo "deps: dpnp venv in .venv-dpnp"
  rm -rf .venv-dpnp
  python3 -m venv .venv-dpnp
  .venv-dpnp/bin/pip install -q --disable-pip-version-check -r tests/requirements-dpnp.txt
  cp tests/requirements-dpnp.txt .venv-dpnp/.requirements
fi

# The other CPython releases pyenv provides, each with NumPy, Cython and
# pytest only: the protocol, producer, dtype, callback and Cython-API tests
# run on each (ctypes memoryview(t) needs 3.12).
for v in 3.10 3.12 3.13; do
  venv=.venv-py$v
  if ! cmp -s tests/requirements-pythons.txt "$venv/.requirements" 2>/dev/null; then
    echo "deps: Python $v venv in $venv"
    py=$(command -v "python$v" 2>/dev/null || true)
    if command -v pyenv >/dev/null && [ -n "$(pyenv latest "$v" 2>/dev/null)" ]; then
      py="$(pyenv root)/versions/$(pyenv latest "$v")/bin/python$v"
    fi
    [ -x "$py" ] || { echo "deps: no Python $v (pyenv install $v)" >&2; exit 1; }
    rm -rf "$venv"
    "$py" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r tests/requirements-pythons.txt
    cp tests/requirements-pythons.txt "$venv/.requirements"
  fi
done

# Debian's debug CPython (python3.11d, the same ABI as the release build)
# with Cython only: the thread stress test builds dlpack_cython there too.
if ! cmp -s tests/requirements-debug.txt .venv-py3.11d/.requirements 2>/dev/null; then
  echo "deps: Python 3.11 debug venv in .venv-py3.11d"
  rm -rf .venv-py3.11d
  python3.11d -m venv .venv-py3.11d
  .venv-py3.11d/bin/pip install -q --disable-pip-version-check -r tests/requirements-debug.txt
  cp tests/requirements-debug.txt .venv-py3.11d/.requirements
fi

# CPython 3.14 and the free-threaded 3.14t, which neither Debian nor pyenv
# provide here: built from Debian's source tarballs into a cache outside the
# clone (~/.cache/dlgen/pythons, shared by every clone on the machine), each
# with its venv .venv-py3.14, .venv-py3.14t and the same requirements
# (scripts/pythons.sh says how, and builds 3.13t when asked; skips what exists).
scripts/pythons.sh

# Upstream headers of older releases as wheels on PyPI ship them; only
# each dlpack.h is kept, for the ABI test. The wheels are pure downloads
# (a pinned platform, never installed): DLPack 1.2 from apache-tvm-ffi 0.1.0,
# 1.1 from cuda-core 0.3.2.
wheel_header() { # requirement, path inside the wheel, directory under .cache/upstream
  local dir=.cache/upstream/$3
  [ -s "$dir/dlpack/dlpack.h" ] && return
  echo "deps: the DLPack header of $1"
  local wheels
  wheels=$(mktemp -d)
  .venv/bin/pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux_2_28_x86_64 --python-version 3.11 -d "$wheels" "$1"
  mkdir -p "$dir/dlpack"
  .venv/bin/python - "$wheels" "$2" "$dir/dlpack/dlpack.h" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[3], "wb") as out:
    out.write(z.read(sys.argv[2]))
PY
  rm -rf "$wheels"
}
wheel_header apache-tvm-ffi==0.1.0 tvm_ffi/include/dlpack/dlpack.h apache-tvm-ffi-0.1.0
wheel_header cuda-core==0.3.2 cuda/core/experimental/dlpack.h cuda-core-0.3.2

# DLPack 0.7 as the dlpack-sys 0.1.1 crate ships it (dmlc/dlpack of
# September 2022 as a git submodule). cargo fetches it and its build
# dependencies (6 MB) into a throwaway CARGO_HOME; nothing is built.
crate=.cache/upstream/dlpack-sys-0.1.1
if [ ! -s "$crate/dlpack/dlpack.h" ]; then
  echo "deps: the DLPack 0.7 header of the dlpack-sys 0.1.1 crate"
  cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
  work=$(mktemp -d)
  mkdir -p "$work/src"
  touch "$work/src/lib.rs"
  printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\ndlpack-sys = "=0.1.1"\n' >"$work/Cargo.toml"
  CARGO_HOME="$work/home" "$cargo" fetch -q --manifest-path "$work/Cargo.toml" --target x86_64-unknown-linux-gnu
  mkdir -p "$crate/dlpack"
  cp "$work"/home/registry/src/*/dlpack-sys-0.1.1/csrc/dlpack/include/dlpack/dlpack.h "$crate/dlpack/dlpack.h"
  rm -rf "$work"
fi

# DLPack 0.8 and 1.0 as Debian trixie packages them: the 1.0 header of its
# libdlpack-dev, and the 0.8 one PyTorch 2.6 carries in libtorch-dev
# (ATen/dlpack.h). apt reads trixie's index into a private state directory
# (nothing is installed, the system's sources are untouched) and only each
# dlpack.h is kept.
trixie=.cache/upstream/debian-trixie
if [ ! -s "$trixie-libdlpack-dev/dlpack/dlpack.h" ] || [ ! -s "$trixie-libtorch-dev/dlpack/dlpack.h" ]; then
  echo "deps: the DLPack 0.8 and 1.0 headers from Debian trixie"
  state=$(mktemp -d)
  mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$state/debs"
  # The Debian mirror this machine's apt already uses, with trixie as the suite.
  mirror=$(scripts/debian-mirror.sh)
  echo "deb $mirror trixie main" >"$state/sources.list"
  apt=(-qq -o APT::Sandbox::User=root -o "Dir::Etc::sourcelist=$state/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$state/lists"
       -o "Dir::Cache=$state/cache" -o Acquire::Languages=none -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
       -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false -o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false)
  apt-get "${apt[@]}" update
  (cd "$state/debs" && apt-get "${apt[@]}" download libdlpack-dev libtorch-dev 2>/dev/null)
  for pkg in libdlpack-dev:usr/include/dlpack/dlpack.h libtorch-dev:usr/include/ATen/dlpack.h; do
    mkdir -p "$trixie-${pkg%%:*}/dlpack"
    dpkg-deb --fsys-tarfile "$state"/debs/"${pkg%%:*}"_*.deb | tar -xO "./${pkg#*:}" >"$trixie-${pkg%%:*}/dlpack/dlpack.h"
  done
  rm -rf "$state"
fi

# NumPy 2.4 from its PyPI sdist, which tests/numpy builds with dlgen's DLPack
# 1.0 header in place of the copy NumPy vendors, and a venv with what builds
# and tests it. The sdist comes from pip's package index (its simple page),
# checked against its pinned hash: `pip download --no-binary` would compile all of
# NumPy just to read its metadata (meson-python has no metadata hook).
numpy_sdist=numpy-2.4.6.tar.gz
numpy_sha256=f3a3570c4a2a16746ac2c31a7c7c7b0c186b95ce902e33db6f28094ed7387dda
if [ ! -s ".cache/numpy/$numpy_sdist" ]; then
  echo "deps: the $numpy_sdist sdist"
  mkdir -p .cache/numpy
  rm -f .cache/numpy/numpy-*.tar.gz
  # The index pip itself uses (its configuration, else its default).
  index=$(.venv/bin/pip config get global.index-url 2>/dev/null ||
          .venv/bin/python -c 'from pip._internal.models.index import PyPI; print(PyPI.simple_url)')
  .venv/bin/python - "$numpy_sdist" "$numpy_sha256" ".cache/numpy/$numpy_sdist" "${PIP_INDEX_URL:-$index}" <<'PY'
import hashlib, html, os, re, sys, urllib.parse, urllib.request
name, sha256, dest, index = sys.argv[1:]
page = index.rstrip("/") + "/numpy/"
listing = urllib.request.urlopen(page, timeout=180).read().decode()
url = next(urllib.parse.urljoin(page, html.unescape(href)) for href in re.findall(r'href="([^"]+)"', listing)
           if urllib.parse.urlparse(html.unescape(href)).path.endswith("/" + name))
data = urllib.request.urlopen(url, timeout=180).read()
if hashlib.sha256(data).hexdigest() != sha256:
    sys.exit(f"deps: {name} from the package index does not have the pinned sha256 {sha256}")
with open(dest + ".part", "wb") as out:
    out.write(data)
os.replace(dest + ".part", dest)
PY
fi
if ! cmp -s tests/requirements-numpy.txt .cache/numpy/venv/.requirements 2>/dev/null; then
  echo "deps: NumPy build venv in .cache/numpy/venv"
  rm -rf .cache/numpy/venv
  python3.11 -m venv .cache/numpy/venv
  .cache/numpy/venv/bin/pip install -q --disable-pip-version-check -r tests/requirements-numpy.txt
  cp tests/requirements-numpy.txt .cache/numpy/venv/.requirements
fi

# Rust (tests/rust): with rustup, the toolchains and targets of
# tests/rust/toolchain.txt (a pinned nightly with Miri and the library
# sources for -Zbuild-std; core and alloc for one target of each branch of
# the crate's cfg), the oldest Rust the crate declares (internal/backend/rust's
# RustVersion), clippy and rustfmt; with cargo, the crates the PyO3 test
# extension locks and those the nightly's library needs to build offline;
# maturin, pinned, in its own venv under .cache.
rustup=$(command -v rustup || echo "$HOME/.cargo/bin/rustup")
cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
[ -x "$rustup" ] || { echo "deps: rustup is not installed (https://rustup.rs)" >&2; exit 1; }
nightly=$(awk '$1 == "nightly" {print $2}' tests/rust/toolchain.txt)
msrv=$(sed -n 's/^const RustVersion = "\(.*\)"$/\1/p' internal/backend/rust/rust.go).0
installed=$("$rustup" toolchain list)
grep -q "^$nightly-" <<<"$installed" || retry "$rustup" -q toolchain install "$nightly" --profile minimal -c miri -c rust-src
grep -q "^$msrv-" <<<"$installed" || retry "$rustup" -q toolchain install "$msrv" --profile minimal
retry "$rustup" -q component add --toolchain stable clippy rustfmt
missing_targets=$(comm -23 <(awk '$1 == "target" {print $2}' tests/rust/toolchain.txt | sort) \
                           <("$rustup" target list --toolchain stable --installed | sort))
[ -z "$missing_targets" ] || retry "$rustup" -q target add --toolchain stable $missing_targets
retry "$cargo" fetch -q --locked --manifest-path tests/rust/pyo3ext/Cargo.toml
retry "$cargo" "+$nightly" fetch -q --manifest-path "$("$rustup" run "$nightly" rustc --print sysroot)/lib/rustlib/src/rust/library/Cargo.toml"
if ! cmp -s tests/rust/requirements.txt .cache/rust/maturin/.requirements 2>/dev/null; then
  echo "deps: maturin venv in .cache/rust/maturin"
  rm -rf .cache/rust/maturin
  python3 -m venv .cache/rust/maturin
  .cache/rust/maturin/bin/pip install -q --disable-pip-version-check -r tests/rust/requirements.txt
  cp tests/rust/requirements.txt .cache/rust/maturin/.requirements
fi

go mod download
# staticcheck, pinned, built by this Go (a new Go rebuilds it); outside
# go.mod, whose dependencies it would raise past the Go the module asks for.
staticcheck="honnef.co/go/tools/cmd/staticcheck@v0.8.2"
if [ "$(cat .cache/bin/.staticcheck 2>/dev/null)" != "$staticcheck $(go env GOVERSION)" ]; then
  echo "deps: $staticcheck in .cache/bin"
  GOBIN="$PWD/.cache/bin" go install "$staticcheck"
  echo "$staticcheck $(go env GOVERSION)" > .cache/bin/.staticcheck
fi

# The workflow linters (tests/dist's TestWorkflowsLint), pinned: actionlint
# built by this Go into .cache/bin, zizmor from PyPI in its own venv.
actionlint="github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"
if [ "$(cat .cache/bin/.actionlint 2>/dev/null)" != "$actionlint $(go env GOVERSION)" ]; then
  echo "deps: $actionlint in .cache/bin"
  GOBIN="$PWD/.cache/bin" retry go install "$actionlint"
  echo "$actionlint $(go env GOVERSION)" > .cache/bin/.actionlint
fi
if ! cmp -s tests/requirements-zizmor.txt .cache/zizmor/.requirements 2>/dev/null; then
  echo "deps: zizmor venv in .cache/zizmor"
  rm -rf .cache/zizmor
  python3 -m venv .cache/zizmor
  .cache/zizmor/bin/pip install -q --disable-pip-version-check -r tests/requirements-zizmor.txt
  cp tests/requirements-zizmor.txt .cache/zizmor/.requirements
fi
