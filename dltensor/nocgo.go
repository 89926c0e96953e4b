//go:build !cgo

package dltensor

import "github.com/dlgen/dlgen/generated/go/dlpack"

// Without cgo (CGO_ENABLED=0, or no C compiler found) dltensor is its
// pure-Go part: FromSlice, Strided, Scalar, FromC, the views and the
// copies through the devices package. Export, ExportLegacy,
// ExportAndClose, Import, ImportLegacy, DeleteVersioned and DeleteLegacy
// need cgo (exports live in C memory, deleters are C functions called from
// any thread, imports call the producer's C deleter) and are not defined.

// deleteManaged is unreachable without cgo: nothing can be imported.
func deleteManaged(*dlpack.ManagedTensorVersioned, bool) {}
