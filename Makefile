# make test: the whole suite (installs its own dependencies).
# make generate: refresh generated/ from the embedded schema.
# make bench: the benchmarks.
.PHONY: test deps generate bench golden

test:
	./scripts/test.sh

deps:
	./scripts/deps.sh

generate:
	go run ./cmd/dlgen -out generated

golden:
	go test ./generate -update

bench:
	go test -run='^$$' -bench=. -benchmem ./generate
