// The harness of docs/copy-engine.md's first example: its statements are
// the body of copyAround, which main does not call (it needs an OpenCL
// device).
package main

import (
	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
)

func copyAround() error {
	// SNIPPET
	_ = v
	return err
}

func main() { _ = copyAround }
