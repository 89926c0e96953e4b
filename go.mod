module github.com/dlgen/dlgen

// The lowest Go that builds and tests everything: benchmarks use
// testing.B.Loop (1.24). golang.org/x/tools (txtar, in tests) is held at the
// newest release that asks for no later Go; go vet's stdversion check fails
// on any standard-library use newer than this line.
go 1.24.0

require (
	github.com/dave/jennifer v1.7.1
	github.com/pmezard/go-difflib v1.0.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/tools v0.42.0
	gopkg.in/yaml.v3 v3.0.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
