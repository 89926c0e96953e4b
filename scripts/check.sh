#!/usr/bin/env bash
# make check: the quick tests a newcomer runs first, in a few minutes, with
# no root and no framework venvs. It needs Go, Python 3 with venv and the
# system's C compiler; it builds one small venv (.cache/check/venv: NumPy,
# Cython and pytest, pinned by tests/requirements-pythons.txt). Then: gofmt,
# go vet, the generator's Go tests (schema, without the sweep make test runs, IR, backends, driver with its
# golden archives, CLI, the manual), that generated/ is current, the Python
# modules against NumPy (protocol, producer API, dtypes, the Cython API, the
# C extension), and the C helper header with the system compiler. A tool
# this machine lacks skips its tests and says so. `make test` runs the
# whole suite, as CI does.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.cache/check/venv
if ! cmp -s tests/requirements-pythons.txt "$venv/.requirements" 2>/dev/null; then
  echo "== check: NumPy, Cython and pytest in $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r tests/requirements-pythons.txt
  cp tests/requirements-pythons.txt "$venv/.requirements"
fi

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files -co --exclude-standard '*.go'))
if [ -n "$unformatted" ]; then echo "not gofmt'd: $unformatted"; exit 1; fi
echo "== go vet"
go vet ./...
echo "== generated/ is current"
go run ./cmd/dlgen -out generated -check
echo "== go test: the generator, its goldens, the CLI and the docs; the C helpers with the system compiler"
go test -short -count=1 -skip "^TestSweepOneChangeAtATime$" . ./internal/... ./cmd/... \
  ./conformance/... ./tests/chelpers
echo "== python: the generated modules against NumPy"
DLGEN_ABSENT_MODULES=tvm_ffi,torch "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python/test_protocol.py \
  tests/python/test_producer.py tests/python/test_dtypes.py tests/python/test_cython_api.py \
  tests/python/test_layout_check.py tests/python/test_c_extension.py tests/python/test_release.py \
  tests/python/test_messages.py
echo "== make check passed; make test runs the whole suite"
