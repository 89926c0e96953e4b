//go:build !cgo

package dltensor

// dltensor needs cgo: exports live in C memory, deleters are C functions
// called from any thread, and imports call the producer's C deleter.
// Without cgo (CGO_ENABLED=0, or no C compiler found) every other file of
// the package is left out and the build stops at the identifier below,
// which says so. Build with CGO_ENABLED=1 and a C compiler (CC). The
// layout types (generated/go/dlpack) and the copy engine (devices) are
// pure Go and build without cgo.
var _ = dltensorNeedsCgo_setCGO_ENABLED_1
