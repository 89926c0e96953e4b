// The harness of docs/copy-engine.md's backend interface: the page's Array
// converts to the runtime's (Go converts only between structs of the same
// fields), and its Backend and the runtime's are the same method set.
package main

import (
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
)

// SNIPPET

var (
	_ = devices.Array(Array{})
	_ = devices.Array{Device: dlpack.Device{}, Data: unsafe.Pointer(nil)}
)

type runtime struct{ devices.Backend }

func (runtime) Copy(dst, src Array) error { return nil }

var _ Backend = runtime{}

func main() {}
