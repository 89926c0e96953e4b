#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what it needs, then checks
# formatting, vet, generated-file drift, every Go test under -race (golden,
# CLI, end-to-end compiles, ABI against upstream headers, cgo layout, the
# dltensor runtime, the copy engine with its backend suite on the CPU and on
# OpenCL through PoCL, where a missing OpenCL device fails, the example
# c-shared bridge from C under sanitizers and valgrind, dltensor against
# tvm-ffi's C++ runtime, which runs itself under -race and cgocheck2; the
# OpenCL tests three at a time under -race, where a hang fails; the Rust
# crate of every release: clippy, rustfmt, its tests also under Miri, its
# layout against gcc's and its data model on every rustc target, its import
# verdicts against Go's, a PyO3 extension with NumPy and PyTorch; the
# wheels of `make wheels`, installed with pip, and the pre-commit hook; NumPy
# built from its sdist with dlgen's v1.0 header passing NumPy's DLPack
# tests), the runtime and the copy engine again under cgocheck2, the
# Python tests (protocol, peers, the bridge from NumPy, device tensors with
# dpnp on a SYCL CPU device; the portable ones and the thread stress test
# again on CPython 3.10, 3.12, 3.13, 3.14 and free-threaded 3.14t, where
# importing the modules must leave the GIL off), the schema sweep, and
# short fuzz runs that fail on any crasher.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh

export PATH="$PWD/.venv/bin:$PATH:$HOME/.cargo/bin"
export DLGEN_REQUIRE_TOOLS=1   # a missing tool fails the tests instead of skipping them

echo "== gofmt"
unformatted=$(gofmt -l $(find . -name '*.go' -not -path './.venv/*'))
if [ -n "$unformatted" ]; then echo "not gofmt'd: $unformatted"; exit 1; fi
echo "== go vet, staticcheck"
go vet ./...
.cache/bin/staticcheck ./...
echo "== generated/ is current"
go run ./cmd/dlgen -out generated -check
echo "== go test -race (then every skipped test with its reason: one tests/expected-skips.txt lacks fails)"
mkdir -p .cache/bin
go build -o .cache/bin/testreport ./tests/internal/testreport
# a cold NumPy build (tests/numpy) takes minutes
go test -race -count=1 -timeout 30m -json ./... | .cache/bin/testreport tests/expected-skips.txt
echo "== dltensor, the copy engine (CPU, OpenCL, CUDA on the fake driver) and the bridge under GOEXPERIMENT=cgocheck2"
GOEXPERIMENT=cgocheck2 go test -count=1 ./runtime/dltensor/... ./runtime/devices/... ./tests/bridge
echo "== the copy engine's portable kernels (-tags purego: the Go code that stands for its amd64 assembly elsewhere)"
go test -count=1 -tags purego -run 'TestStrips|TestBlocks|TestTransposes|TestCopyMatches|FuzzCopy' ./runtime/devices
echo "== the OpenCL backend under load: its tests three times side by side, three rounds, under -race (a hang fails)"
scripts/opencl-stress.sh 3 3 60
echo "== ABI report (upstream headers vs dlgen)"
go test -count=1 -v -run 'TestMatches|Clang' ./tests/abi | grep -E '^(ABI|Go layout|--- )'
echo "== python: generated modules against NumPy, JAX, tvm-ffi, array-api-strict; the conformance kit and its sanitizer"
python -m pytest -q -p no:cacheprovider tests/python conformance/tests
echo "== python: the interop suites again under the DLPack sanitizer (a report fails them)"
sanitize_kit=$(mktemp -d)
go run ./cmd/dlgen -lang conformance -out "$sanitize_kit"
# Deselected: it asserts that a consumer takes the C exchange API's table,
# which the sanitizer's proxy does not publish (docs/sanitizer.md).
PYTHONPATH="$sanitize_kit/conformance" python -m pytest -q -p no:cacheprovider -p dlpack_conformance.pytest_plugin \
  --dlpack-sanitize tests/python/test_interop.py tests/python/test_torch_exchange.py \
  --deselect tests/python/test_torch_exchange.py::test_ordinary_tensors_still_take_the_table
rm -rf "$sanitize_kit"
echo "== python: device tensors with dpnp on Intel's OpenCL CPU device (.venv-dpnp)"
# The OpenCL ICD loader finds the wheel's driver through the environment
# alone; OCL_ICD_VENDORS names the venv's vendor directory so that no
# system-wide driver is listed beside it.
OCL_ICD_FILENAMES="$PWD/.venv-dpnp/lib/libintelocl.so" OCL_ICD_VENDORS="$PWD/.venv-dpnp/etc/OpenCL/vendors" \
  DLGEN_REQUIRE_DPNP=1 .venv-dpnp/bin/python -m pytest -q -p no:cacheprovider tests/python/test_devices.py
# pyenv's 3.10, 3.12, 3.13; CPython 3.14 and free-threaded 3.14t built from
# Debian's source tarballs (scripts/pythons.sh). PYTHON_GIL is unset: a
# free-threaded build keeps the GIL off unless a module asks for it.
for v in 3.10 3.12 3.13 3.14 3.14t; do
  echo "== python $v: protocol, producer API, dtypes, pending errors, Cython API, device tensors, the C extension, capsules taken in place, exports given back, threads racing for a capsule"
  # dlpack_cython, built once for this interpreter as the tests build it (on
  # a free-threaded build Cython is its pure-Python wheel: minutes).
  cython_dir=$(env -u PYTHON_GIL PYTHONPATH=tests .venv-py$v/bin/python -c 'import harness; print(harness.CYTHON_DIR)')
  # These venvs hold NumPy, Cython and pytest only: tvm-ffi and PyTorch may skip there.
  env -u PYTHON_GIL DLGEN_CYTHON_DIR="$cython_dir" DLGEN_ABSENT_MODULES=tvm_ffi,torch .venv-py$v/bin/python -m pytest -q -p no:cacheprovider tests/python/test_protocol.py \
    tests/python/test_producer.py tests/python/test_dtypes.py tests/python/test_pending_error.py \
    tests/python/test_cython_api.py tests/python/test_layout_check.py tests/python/test_device_tensors.py \
    tests/python/test_c_extension.py tests/python/test_ctypes_capsule_in_place.py \
    tests/python/test_release.py tests/python/test_thread_stress.py
  if [[ $v == *t ]]; then
    echo "== python $v: importing dlpack_ctypes and dlpack_cython leaves the GIL off"
    env -u PYTHON_GIL DLGEN_CYTHON_DIR="$cython_dir" PYTHONPATH=tests .venv-py$v/bin/python -c '
import sys, harness  # puts both modules on sys.path
import dlpack_ctypes, dlpack_cython
if sys._is_gil_enabled():
    sys.exit("importing dlpack_ctypes and dlpack_cython turned the GIL on")'
  fi
done
echo "== python 3.11 debug build (.venv-py3.11d): one capsule, many threads, in both modules"
.venv-py3.11d/bin/python tests/python/test_thread_stress.py
echo "== schema sweep in full (go test -race above tries every 16th variant)"
go test -count=1 -run '^TestSweepOneChangeAtATime$' ./internal/schema
echo "== fuzz: the loader, every backend and -diff on what loads, dltensor.Import, the C helpers (a crasher fails CI)"
scripts/fuzz.sh internal/schema FuzzLoad 10s
scripts/fuzz.sh internal/schema FuzzGenerate 10s
scripts/fuzz.sh runtime/dltensor FuzzImport 10s
scripts/fuzz-c.sh 10                          # the C helper header, libFuzzer under ASan and UBSan
