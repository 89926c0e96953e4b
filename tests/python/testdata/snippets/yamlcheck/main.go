// Command yamlcheck parses the YAML on its standard input with the YAML
// library the schema loader uses, and exits 1 with the error if it does not
// parse: tests/python/test_docs_snippets.py runs it on the docs' YAML blocks.
package main

import (
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err == nil {
		var v any
		err = yaml.Unmarshal(in, &v)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
