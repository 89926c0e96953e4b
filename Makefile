# make check: the quick tests a newcomer runs first (a few minutes, no root, no framework venvs).
# make test: the whole suite (installs its own dependencies).
# make generate: refresh generated/ from the embedded schema.
# make bench: the benchmarks (bench-runtime, bench-python, bench-framework, bench-conformance, bench-sanitize, generation);
#   each prints its table and draws it outside the checkout ($TMPDIR/dlgen-bench/*.svg).
# make bench-docs: the same, redrawing the figures the docs show, docs/bench/*.svg (docs/benchmarks.md).
# make wheels: dlgen as Python wheels in dist/, one per platform (pip install needs no Go), and the
#   conformance kit's pure-Python wheel (dlpack_conformance-VERSION-py3-none-any.whl).
.PHONY: check test deps generate bench bench-docs bench-python bench-runtime bench-framework bench-conformance bench-sanitize golden wheels

check:
	./scripts/check.sh

test:
	./scripts/test.sh

deps:
	./scripts/deps.sh

generate:
	go run ./cmd/dlgen -out generated

golden:
	go test $$(ls -d internal/backend/*/testdata | sed 's|^|./|; s|/testdata$$||') -update

wheels:
	rm -rf dist
	go run ./scripts/wheels -out dist

bench: bench-runtime bench-python bench-framework bench-conformance bench-sanitize
	go test -run='^$$' -bench=. -benchmem ./internal/generate

bench-docs:
	$(MAKE) bench DLGEN_BENCH_DOCS=1

# The plots go to docs/bench only with DLGEN_BENCH_DOCS=1 (bench/plot.py).
export DLGEN_BENCH_DOCS

# The conformance kit: a full run per library against a bare import of it.
bench-conformance: deps
	.venv/bin/python bench/conformance.py

# The DLPack sanitizer: each from_dlpack sanitized against the same call plain.
bench-sanitize: deps
	.venv/bin/python bench/sanitize.py

bench-runtime: deps
	.venv/bin/python bench/runtime.py

# Builds dlpack_cython in a scratch copy of generated/python, then compares.
bench-python: deps
	rm -rf .cache/cython && mkdir -p .cache && cp -r generated/python .cache/cython
	cd .cache/cython && ../../.venv/bin/cythonize -q -i dlpack_cython.pyx > build.log
	DLGEN_CYTHON_DIR=.cache/cython .venv/bin/python bench/python_exchange.py
	.venv/bin/python bench/ctypes_profile.py

# The framework-facing API (from_pointer, from_buffer, PyTorch both ways).
bench-framework: deps
	rm -rf .cache/cython-framework && mkdir -p .cache && cp -r generated/python .cache/cython-framework
	cd .cache/cython-framework && ../../.venv/bin/cythonize -q -i dlpack_cython.pyx > build.log
	DLGEN_CYTHON_DIR=.cache/cython-framework .venv/bin/python bench/framework.py
