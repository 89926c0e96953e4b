package dltensor

/*
#cgo CFLAGS: -I${SRCDIR}/../generated/c
#include "trampoline.h"
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// exported holds every tensor with a live export, by id: it keeps them
// reachable while C holds their memory, and lets the C deleter find them.
var exported struct {
	sync.Mutex
	m map[uintptr]*Tensor
}

func init() { exported.m = map[uintptr]*Tensor{} }

// retainForExport takes the reference an export holds and pins Go memory
// on the first export.
func (t *Tensor) retainForExport() error {
	if t.closed.Load() {
		return errors.New("dltensor: export of a closed tensor")
	}
	t.incRef()
	t.mu.Lock()
	if t.exports == 0 {
		if t.goMem && t.data != nil {
			t.pinner.Pin(t.data)
		}
		exported.Lock()
		exported.m[t.id] = t
		exported.Unlock()
	}
	t.exports++
	t.mu.Unlock()
	liveExports.Add(1)
	return nil
}

//export dlgenExportReleased
func dlgenExportReleased(id C.uintptr_t) {
	exported.Lock()
	t := exported.m[uintptr(id)]
	exported.Unlock()
	if t == nil {
		panic("dltensor: deleter called for an unknown export (called twice?)")
	}
	t.mu.Lock()
	t.exports--
	if t.exports == 0 {
		t.pinner.Unpin()
		exported.Lock()
		delete(exported.m, t.id)
		exported.Unlock()
	}
	t.mu.Unlock()
	liveExports.Add(-1)
	t.decRef()
}

// fill writes the tensor's description into dl, with shape and strides
// stored at dims (2*ndim int64 of C memory).
func (t *Tensor) fill(dl *dlpack.Tensor, dims unsafe.Pointer) {
	dl.Data = t.data
	dl.Device = t.device
	dl.Ndim = int32(len(t.shape))
	dl.Dtype = t.dtype
	dl.ByteOffset = t.byteOffset
	if len(t.shape) == 0 {
		return
	}
	d := unsafe.Slice((*int64)(dims), 2*len(t.shape))
	copy(d, t.shape)
	copy(d[len(t.shape):], t.strides)
	dl.Shape = &d[0]
	dl.Strides = &d[len(t.shape)]
}

// Export hands the tensor to a DLPack >= 1.0 consumer. The result lives in
// C memory and holds a reference to t until the consumer calls its deleter,
// exactly once, from any thread. Pass it to C as
// (*C.DLManagedTensorVersioned)(unsafe.Pointer(m)).
func (t *Tensor) Export() (*dlpack.ManagedTensorVersioned, error) {
	if err := t.retainForExport(); err != nil {
		return nil, err
	}
	ndim := len(t.shape)
	c := C.dlgen_alloc_versioned(C.int32_t(ndim), C.uintptr_t(t.id))
	if c == nil {
		dlgenExportReleased(C.uintptr_t(t.id))
		return nil, errors.New("dltensor: out of C memory")
	}
	m := (*dlpack.ManagedTensorVersioned)(unsafe.Pointer(c))
	if t.readOnly {
		m.Flags |= dlpack.FlagBitmaskReadOnly
	}
	if t.copied {
		m.Flags |= dlpack.FlagBitmaskIsCopied
	}
	t.fill(&m.DLTensor, unsafe.Add(unsafe.Pointer(c), unsafe.Sizeof(*m)))
	return m, nil
}

// ExportLegacy hands the tensor to a consumer older than DLPack 1.0, as a
// DLManagedTensor. Such consumers cannot see a read-only flag, so
// read-only tensors are refused.
func (t *Tensor) ExportLegacy() (*dlpack.ManagedTensor, error) {
	if t.readOnly {
		return nil, errors.New("dltensor: a read-only tensor cannot be exported as a legacy DLManagedTensor, which has no read-only flag")
	}
	if err := t.retainForExport(); err != nil {
		return nil, err
	}
	ndim := len(t.shape)
	c := C.dlgen_alloc_legacy(C.int32_t(ndim), C.uintptr_t(t.id))
	if c == nil {
		dlgenExportReleased(C.uintptr_t(t.id))
		return nil, errors.New("dltensor: out of C memory")
	}
	m := (*dlpack.ManagedTensor)(unsafe.Pointer(c))
	t.fill(&m.DLTensor, unsafe.Add(unsafe.Pointer(c), unsafe.Sizeof(*m)))
	return m, nil
}

// DeleteVersioned calls m's deleter, as a consumer does when it is done.
func DeleteVersioned(m *dlpack.ManagedTensorVersioned) {
	C.dlgen_call_versioned_deleter((*C.DLManagedTensorVersioned)(unsafe.Pointer(m)))
}

// DeleteLegacy calls m's deleter.
func DeleteLegacy(m *dlpack.ManagedTensor) {
	C.dlgen_call_legacy_deleter((*C.DLManagedTensor)(unsafe.Pointer(m)))
}
