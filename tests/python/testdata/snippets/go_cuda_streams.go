// The harness of docs/copy-engine.md's CUDA example: its statements are
// the body of exportOnStream, which main does not call (it needs a CUDA
// GPU).
package main

import (
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
	"github.com/dlgen/dlgen/runtime/dltensor"
)

func exportOnStream(host []float32, producer, consumer int64) (*dlpack.ManagedTensorVersioned, error) {
	// SNIPPET
}

func main() { _ = exportOnStream }
