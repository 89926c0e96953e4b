// The harness of docs/go.md's dltensor example: its import block joins
// these imports, and its statements are the body of exchange; main hands
// it, as foreign, a tensor exported by dltensor, as a producer in C would.
package main

import (
	"fmt"
	"os"
)

func exchange(foreign *dlpack.ManagedTensorVersioned) error {
	// SNIPPET
	_, _ = m, v
	return err
}

func main() {
	producer, err := dltensor.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err == nil {
		var foreign *dlpack.ManagedTensorVersioned
		if foreign, err = producer.Export(); err == nil {
			err = exchange(foreign)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
