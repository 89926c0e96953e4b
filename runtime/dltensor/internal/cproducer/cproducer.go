// Package cproducer is a DLPack producer written in C, for tests: it makes
// managed tensors (well-formed or not) whose deleters count their calls.
package cproducer

/*
#cgo CFLAGS: -I${SRCDIR}/../../../../generated/c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <dlpack/dlpack.h>

typedef struct {
  DLManagedTensorVersioned versioned;
  DLManagedTensor legacy;
  int calls;
  int64_t dims[128];
  void* buffer;
} record;

static void delete_versioned(DLManagedTensorVersioned* m) {
  record* r = (record*)m->manager_ctx;
  r->calls++;
}

static void delete_legacy(DLManagedTensor* m) {
  record* r = (record*)m->manager_ctx;
  r->calls++;
}

static void set_address(record* r, uintptr_t address) {
  r->versioned.dl_tensor.data = (void*)address;
  r->legacy.dl_tensor.data = (void*)address;
}

static record* new_record(size_t buffer_bytes) {
  record* r = (record*)calloc(1, sizeof(record));
  r->buffer = buffer_bytes ? calloc(1, buffer_bytes) : NULL;
  r->versioned.manager_ctx = r;
  r->versioned.deleter = delete_versioned;
  r->legacy.manager_ctx = r;
  r->legacy.deleter = delete_legacy;
  return r;
}

*/
import "C"

import (
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// Spec describes a tensor to produce. Shape or Strides nil means NULL.
type Spec struct {
	Major, Minor uint32             // the version the tensor claims
	Flags        dlpack.FlagBitmask // DLManagedTensorVersioned.flags
	Device       dlpack.Device      // DLTensor.device
	DType        dlpack.DataType    // DLTensor.dtype
	NDim         int32              // DLTensor.ndim, whatever Shape's length
	Shape        []int64            // copied into C memory for DLTensor.shape
	Strides      []int64            // copied into C memory for DLTensor.strides
	ByteOffset   uint64             // DLTensor.byte_offset
	BufferBytes  int                // size of the C buffer data points into
	NullData     bool               // data is NULL even with a buffer
}

// Record is one produced tensor.
type Record struct{ r *C.record }

// New allocates a tensor per spec (never freed: tests inspect it after the
// deleter ran).
func New(s Spec) Record {
	r := C.new_record(C.size_t(s.BufferBytes))
	dims := unsafe.Slice((*int64)(unsafe.Pointer(&r.dims[0])), 128)
	m := (*dlpack.ManagedTensorVersioned)(unsafe.Pointer(&r.versioned))
	m.Version = dlpack.Version{Major: s.Major, Minor: s.Minor}
	m.Flags = s.Flags
	fill := func(dl *dlpack.Tensor) {
		dl.Device, dl.Dtype, dl.Ndim, dl.ByteOffset = s.Device, s.DType, s.NDim, s.ByteOffset
		if !s.NullData {
			dl.Data = r.buffer
		}
		if s.Shape != nil {
			copy(dims[:64], s.Shape)
			dl.Shape = &dims[0]
		}
		if s.Strides != nil {
			copy(dims[64:], s.Strides)
			dl.Strides = &dims[64]
		}
	}
	fill(&m.DLTensor)
	fill(&(*dlpack.ManagedTensor)(unsafe.Pointer(&r.legacy)).DLTensor)
	return Record{r}
}

// Versioned is the record as a DLManagedTensorVersioned.
func (r Record) Versioned() *dlpack.ManagedTensorVersioned {
	return (*dlpack.ManagedTensorVersioned)(unsafe.Pointer(&r.r.versioned))
}

// Legacy is the record as a DLManagedTensor.
func (r Record) Legacy() *dlpack.ManagedTensor {
	return (*dlpack.ManagedTensor)(unsafe.Pointer(&r.r.legacy))
}

// Calls is how often the record's deleter ran.
func (r Record) Calls() int { return int(r.r.calls) }

// Buffer is the record's data buffer.
func (r Record) Buffer(n int) []byte {
	if r.r.buffer == nil {
		return nil
	}
	return unsafe.Slice((*byte)(r.r.buffer), n)
}

// SetAddress sets the data pointer to an address that is never read (C
// writes it: no Go pointer is made of it).
func (r Record) SetAddress(address uint64) {
	C.set_address(r.r, C.uintptr_t(address))
}

// SetData points the tensor at p instead of its own buffer (memory the
// test owns, a guard-paged buffer for instance).
func (r Record) SetData(p unsafe.Pointer) {
	r.Versioned().DLTensor.Data = p
	r.Legacy().DLTensor.Data = p
}
