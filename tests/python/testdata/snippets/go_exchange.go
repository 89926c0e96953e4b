// The harness of docs/go.md's dltensor example: its import block joins
// these imports, and its statements are the body of exchange, foreign a
// tensor a producer in C handed over.
package main

import (
	"fmt"
)

func exchange(foreign *dlpack.ManagedTensorVersioned) error {
	// SNIPPET
	_, _ = m, v
	return err
}

func main() { fmt.Println(exchange(nil)) }
