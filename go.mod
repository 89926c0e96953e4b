module github.com/dlgen/dlgen

// The lowest Go that builds and tests everything: benchmarks use
// testing.B.Loop (1.24). golang.org/x/tools (txtar, in tests) is held at the
// newest release that asks for no later Go, and so is modernc.org/cc/v4 (the
// C front end of dlgen -identify; v4.28 asks for Go 1.25); go vet's
// stdversion check fails on any standard-library use newer than this line.
go 1.24.0

require (
	github.com/dave/jennifer v1.7.1
	github.com/pmezard/go-difflib v1.0.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/tools v0.42.0
	gopkg.in/yaml.v3 v3.0.1
	modernc.org/cc/v4 v4.27.1
)

require (
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/opt v0.1.4 // indirect
	modernc.org/sortutil v1.2.1 // indirect
	modernc.org/strutil v1.2.1 // indirect
	modernc.org/token v1.1.0 // indirect
)
