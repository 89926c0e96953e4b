package dltensor

/*
#cgo CFLAGS: -I${SRCDIR}/../../generated/c
#include "trampoline.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"log"
	"sync"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// exported maps every live export's C struct to its storage: it keeps the
// storage reachable while C holds its memory, lets the C deleter find it,
// and recognises a deleter called twice before anything is freed. Its lock
// also guards every storage's exports and pinner.
var exported struct {
	sync.Mutex
	m map[unsafe.Pointer]*storage
}

func init() { exported.m = map[unsafe.Pointer]*storage{} }

// errOutOfCMemory: calloc failed.
var errOutOfCMemory = errors.New("dltensor: out of C memory")

// register records the export c of s, which already holds a reference,
// and pins Go memory on the first export.
func (s *storage) register(c unsafe.Pointer) {
	exported.Lock()
	if s.exports == 0 && s.goMem && s.data != nil {
		s.pinner.Pin(s.data)
	}
	s.exports++
	exported.m[c] = s
	exported.Unlock()
	liveExports.Add(1)
}

//export dlgenExportReleased
func dlgenExportReleased(c unsafe.Pointer) C.int {
	exported.Lock()
	s := exported.m[c]
	if s != nil {
		delete(exported.m, c)
		s.exports--
		if s.exports == 0 {
			s.pinner.Unpin()
		}
	}
	exported.Unlock()
	if s == nil {
		invalidDeletes.Add(1)
		log.Printf("dltensor: deleter called for %p, which is not a live export (called twice?); ignored", c)
		return 0
	}
	liveExports.Add(-1)
	s.decRef()
	return 1
}

// fill writes the storage's description into dl, with shape and strides
// stored at dims (2*ndim int64 of C memory). A tensor with no elements is
// exported with NULL data and byte offset 0, as DLTensor.data's doc asks,
// whatever backs it in Go.
func (s *storage) fill(dl *dlpack.Tensor, dims unsafe.Pointer) {
	if s.elements() > 0 {
		dl.Data, dl.ByteOffset = s.data, s.byteOffset
	}
	dl.Device = s.device
	dl.Ndim = int32(len(s.shape))
	dl.Dtype = s.dtype
	if len(s.shape) == 0 {
		return
	}
	d := unsafe.Slice((*int64)(dims), 2*len(s.shape))
	copy(d, s.shape)
	copy(d[len(s.shape):], s.strides)
	dl.Shape = &d[0]
	dl.Strides = &d[len(s.shape)]
}

// Export hands the tensor to a DLPack >= 1.0 consumer. The result lives in
// C memory and holds a reference to the storage until the consumer calls
// its deleter, exactly once, from any thread. Pass it to C as
// (*C.DLManagedTensorVersioned)(unsafe.Pointer(m)). A read-only handle
// exports with DLPACK_FLAG_BITMASK_READ_ONLY. It carries the version of
// the newest release, or of the one WithRelease names, and only flags that
// release defines; a tensor a consumer of that release would refuse, or
// could not be told about, is refused with ErrNotInRelease.
func (t *Tensor) Export(opts ...Option) (*dlpack.ManagedTensorVersioned, error) {
	r, err := speaking(opts)
	if err == nil {
		err = r.versionedOnly("ExportLegacy")
	}
	if err != nil {
		return nil, err
	}
	var flags dlpack.FlagBitmask
	if t.readOnly.Load() {
		flags |= dlpack.FlagBitmaskReadOnly
	}
	if t.s.padded && t.s.elementBits() < 8 {
		flags |= dlpack.FlagBitmaskIsSubbyteTypePadded
	}
	if err := t.retain(); err != nil {
		return nil, err
	}
	s := t.s
	if err := r.exportable(s, flags); err != nil {
		s.decRef()
		return nil, err
	}
	c := C.dlgen_alloc_versioned(C.int32_t(len(s.shape)))
	if c == nil {
		s.decRef()
		return nil, errOutOfCMemory
	}
	m := (*dlpack.ManagedTensorVersioned)(unsafe.Pointer(c))
	m.Version, m.Flags = r.version, flags
	s.register(unsafe.Pointer(c)) // pins Go memory before C holds it
	s.fill(&m.DLTensor, unsafe.Add(unsafe.Pointer(c), unsafe.Sizeof(*m)))
	return m, nil
}

// ExportAndClose exports the tensor, as Export does, and closes this
// handle in one step, handing the storage over. If the storage is a
// private copy (Copied) and the export is then its only reference, the
// consumer owns it alone and the export carries
// DLPACK_FLAG_BITMASK_IS_COPIED.
func (t *Tensor) ExportAndClose(opts ...Option) (*dlpack.ManagedTensorVersioned, error) {
	m, err := t.Export(opts...)
	if err != nil {
		return nil, err
	}
	if t.s.copied && t.s.refs.Load() == 2 { // this handle and the export
		r, _ := speaking(opts) // Export spoke it
		m.Flags |= dlpack.FlagBitmaskIsCopied & r.flags
	}
	t.Close()
	return m, nil
}

// ExportLegacy hands the tensor to a consumer older than DLPack 1.0, as a
// DLManagedTensor. Such consumers cannot see a read-only or padded flag,
// so read-only handles and padded sub-byte tensors are refused with
// ErrNeedsVersioned (and ErrReadOnly for the former). With WithRelease, a
// tensor a consumer of that release would refuse is refused with
// ErrNotInRelease.
func (t *Tensor) ExportLegacy(opts ...Option) (*dlpack.ManagedTensor, error) {
	r, err := speaking(opts)
	if err != nil {
		return nil, err
	}
	if t.readOnly.Load() {
		return nil, fmt.Errorf("dltensor: a legacy DLManagedTensor has no read-only flag (%w): %w", ErrReadOnly, ErrNeedsVersioned)
	}
	if t.s.padded && t.s.elementBits() < 8 {
		return nil, fmt.Errorf("dltensor: a legacy DLManagedTensor cannot say that sub-byte elements are padded: %w", ErrNeedsVersioned)
	}
	if err := t.retain(); err != nil {
		return nil, err
	}
	s := t.s
	if err := r.exportable(s, 0); err != nil {
		s.decRef()
		return nil, err
	}
	c := C.dlgen_alloc_legacy(C.int32_t(len(s.shape)))
	if c == nil {
		s.decRef()
		return nil, errOutOfCMemory
	}
	m := (*dlpack.ManagedTensor)(unsafe.Pointer(c))
	s.register(unsafe.Pointer(c))
	s.fill(&m.DLTensor, unsafe.Add(unsafe.Pointer(c), unsafe.Sizeof(*m)))
	return m, nil
}

// DeleteVersioned calls m's deleter, as a consumer does when it is done;
// nil, or a NULL deleter, does nothing. M is the ManagedTensorVersioned of
// any Go package dlgen generated, as for Import; another layout panics
// with an error wrapping ErrNotDLPackType.
func DeleteVersioned[M any](p *M) {
	m, err := convert[dlpack.ManagedTensorVersioned]("DeleteVersioned", p)
	if err != nil {
		panic(err)
	}
	if m != nil {
		C.dlgen_call_versioned_deleter((*C.DLManagedTensorVersioned)(unsafe.Pointer(m)))
	}
}

// DeleteLegacy calls m's deleter; nil, or a NULL deleter, does nothing.
// M is the ManagedTensor of any Go package dlgen generated; another layout
// panics with an error wrapping ErrNotDLPackType.
func DeleteLegacy[M any](p *M) {
	m, err := convert[dlpack.ManagedTensor]("DeleteLegacy", p)
	if err != nil {
		panic(err)
	}
	if m != nil {
		C.dlgen_call_legacy_deleter((*C.DLManagedTensor)(unsafe.Pointer(m)))
	}
}
