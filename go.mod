module github.com/dlgen/dlgen

go 1.26.8

require (
	github.com/dave/jennifer v1.7.1
	github.com/pmezard/go-difflib v1.0.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/tools v0.52.0
	gopkg.in/yaml.v3 v3.0.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
