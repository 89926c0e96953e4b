//go:build !cgo

package dltensor

import (
	"fmt"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// Without cgo (CGO_ENABLED=0, or no C compiler found) dltensor is its
// pure-Go part: FromSlice, Strided, Scalar, FromC, the views and the
// copies through the devices package work. Exports live in C memory,
// deleters are C functions called from any thread and imports call the
// producer's C deleter: those functions exist here with the same
// signatures, so a program builds either way, and say what is missing, as
// database/sql drivers built without cgo do.

func needsCgo(fn string) error { return fmt.Errorf("dltensor: %s: %w", fn, ErrNeedsCgo) }

// Export needs cgo; without it, it returns an error wrapping ErrNeedsCgo.
func (t *Tensor) Export(...Option) (*dlpack.ManagedTensorVersioned, error) {
	return nil, needsCgo("Export")
}

// ExportAndClose needs cgo; without it, it returns an error wrapping
// ErrNeedsCgo and leaves the handle open.
func (t *Tensor) ExportAndClose(...Option) (*dlpack.ManagedTensorVersioned, error) {
	return nil, needsCgo("ExportAndClose")
}

// ExportLegacy needs cgo; without it, it returns an error wrapping
// ErrNeedsCgo.
func (t *Tensor) ExportLegacy(...Option) (*dlpack.ManagedTensor, error) {
	return nil, needsCgo("ExportLegacy")
}

// Import needs cgo; without it, it returns an error wrapping ErrNeedsCgo
// and the producer's deleter has not run: only C can call it.
func Import[M any](p *M, _ ...Option) (*Tensor, error) {
	if _, err := convert[dlpack.ManagedTensorVersioned]("Import", p); err != nil {
		return nil, err
	}
	return nil, needsCgo("Import")
}

// ImportLegacy needs cgo; without it, it returns an error wrapping
// ErrNeedsCgo and the producer's deleter has not run.
func ImportLegacy[M any](p *M, _ ...Option) (*Tensor, error) {
	if _, err := convert[dlpack.ManagedTensor]("ImportLegacy", p); err != nil {
		return nil, err
	}
	return nil, needsCgo("ImportLegacy")
}

// DeleteVersioned does nothing for nil; without cgo it cannot call a C
// deleter, and panics with an error wrapping ErrNeedsCgo for anything else.
func DeleteVersioned[M any](p *M) {
	if m, err := convert[dlpack.ManagedTensorVersioned]("DeleteVersioned", p); err != nil {
		panic(err)
	} else if m != nil {
		panic(needsCgo("DeleteVersioned"))
	}
}

// DeleteLegacy does nothing for nil; without cgo it cannot call a C
// deleter, and panics with an error wrapping ErrNeedsCgo for anything else.
func DeleteLegacy[M any](p *M) {
	if m, err := convert[dlpack.ManagedTensor]("DeleteLegacy", p); err != nil {
		panic(err)
	} else if m != nil {
		panic(needsCgo("DeleteLegacy"))
	}
}

// deleteManaged is unreachable without cgo: nothing can be imported.
func deleteManaged(*dlpack.ManagedTensorVersioned, bool) {}
