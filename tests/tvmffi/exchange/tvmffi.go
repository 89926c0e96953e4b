//go:build tvmffi

// Package exchange links tvm-ffi's C++ runtime (libtvm_ffi.so from the
// apache-tvm-ffi wheel) for tests of dltensor against it. The tvmffi build
// tag keeps it out of ordinary builds: it needs tvm-ffi's headers and
// library, which tests/tvmffi finds at run time and passes through
// CGO_CFLAGS and CGO_LDFLAGS.
package exchange

/*
#include <stdlib.h>
#include <tvm/ffi/c_api.h>

// A C producer whose deleter frees and counts, so the test can tell when
// tvm-ffi gives the tensor back.
static int c_deleted;
static void c_delete(DLManagedTensorVersioned* self) {
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self);
  c_deleted++;
}

static DLManagedTensorVersioned* c_matrix(int64_t rows, int64_t cols) {
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)calloc(1, sizeof(*m));
  int64_t* dims = (int64_t*)malloc(4 * sizeof(int64_t));
  float* data = (float*)malloc((size_t)(rows * cols) * sizeof(float));
  int64_t i;
  for (i = 0; i < rows * cols; i++) data[i] = (float)i;
  dims[0] = rows; dims[1] = cols; dims[2] = cols; dims[3] = 1;
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->deleter = c_delete;
  m->dl_tensor.data = data;
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.ndim = 2;
  m->dl_tensor.dtype.code = kDLFloat;
  m->dl_tensor.dtype.bits = 32;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = dims;
  m->dl_tensor.strides = dims + 2;
  return m;
}

// tvm-ffi's view of row r of a tensor it owns: a new Tensor object that
// tvm-ffi allocates, sharing the source's memory.
static int row_view(TVMFFIObjectHandle src, int64_t r, TVMFFIObjectHandle* out) {
  DLTensor* s = (DLTensor*)((char*)src + sizeof(TVMFFIObject));
  DLTensor proto = *s;
  proto.ndim = 1;
  proto.shape = s->shape + 1;
  proto.strides = s->strides + 1;
  proto.byte_offset = s->byte_offset + (uint64_t)(r * s->strides[0]) * (s->dtype.bits / 8);
  return TVMFFITensorCreateUnsafeView(src, &proto, out);
}

static int c_deleted_count(void) { return c_deleted; }

// A proxy that counts the calls of another producer's deleter (tvm-ffi's),
// then calls it.
typedef struct {
  DLManagedTensorVersioned self;
  DLManagedTensorVersioned* orig;
} proxy;
static int proxied;
static void proxy_delete(DLManagedTensorVersioned* self) {
  proxy* p = (proxy*)self->manager_ctx;
  proxied++;
  p->orig->deleter(p->orig);
  free(p);
}
static DLManagedTensorVersioned* counted(DLManagedTensorVersioned* orig) {
  proxy* p = (proxy*)malloc(sizeof(proxy));
  p->self = *orig;
  p->self.manager_ctx = p;
  p->self.deleter = proxy_delete;
  p->orig = orig;
  return &p->self;
}
static int proxied_count(void) { return proxied; }
static DLTensor* tensor_of(TVMFFIObjectHandle obj) { return (DLTensor*)((char*)obj + sizeof(TVMFFIObject)); }
static void call_versioned(DLManagedTensorVersioned* m) { m->deleter(m); }
static void call_legacy(DLManagedTensor* m) { m->deleter(m); }
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// Object is a tvm-ffi object handle; Release drops the reference.
type Object struct{ h C.TVMFFIObjectHandle }

func check(rc C.int, what string) error {
	if rc != 0 {
		return fmt.Errorf("%s: tvm-ffi returned %d", what, int(rc))
	}
	return nil
}

// FromDLPack makes a tvm-ffi Tensor owning m.
func FromDLPack(m *dlpack.ManagedTensorVersioned) (Object, error) {
	var o Object
	rc := C.TVMFFITensorFromDLPackVersioned((*C.DLManagedTensorVersioned)(unsafe.Pointer(m)), 0, 0, &o.h)
	return o, check(rc, "TVMFFITensorFromDLPackVersioned")
}

// FromDLPackLegacy makes a tvm-ffi Tensor owning a legacy m.
func FromDLPackLegacy(m *dlpack.ManagedTensor) (Object, error) {
	var o Object
	rc := C.TVMFFITensorFromDLPack((*C.DLManagedTensor)(unsafe.Pointer(m)), 0, 0, &o.h)
	return o, check(rc, "TVMFFITensorFromDLPack")
}

// ToDLPack exports o to a DLPack consumer.
func (o Object) ToDLPack() (*dlpack.ManagedTensorVersioned, error) {
	var m *C.DLManagedTensorVersioned
	rc := C.TVMFFITensorToDLPackVersioned(o.h, &m)
	return (*dlpack.ManagedTensorVersioned)(unsafe.Pointer(m)), check(rc, "TVMFFITensorToDLPackVersioned")
}

// ToDLPackLegacy exports o to a legacy DLPack consumer.
func (o Object) ToDLPackLegacy() (*dlpack.ManagedTensor, error) {
	var m *C.DLManagedTensor
	rc := C.TVMFFITensorToDLPack(o.h, &m)
	return (*dlpack.ManagedTensor)(unsafe.Pointer(m)), check(rc, "TVMFFITensorToDLPack")
}

// RowView is tvm-ffi's own view of row r of o.
func (o Object) RowView(r int64) (Object, error) {
	var v Object
	return v, check(C.row_view(o.h, C.int64_t(r), &v.h), "TVMFFITensorCreateUnsafeView")
}

// Tensor is the DLTensor inside o.
func (o Object) Tensor() *dlpack.Tensor { return (*dlpack.Tensor)(unsafe.Pointer(C.tensor_of(o.h))) }

// Release drops this reference with TVMFFIObjectDecRef.
func (o Object) Release() error { return check(C.TVMFFIObjectDecRef(o.h), "TVMFFIObjectDecRef") }

// CMatrix is a C-allocated rows x cols float32 matrix holding 0, 1, ...;
// its deleter frees it and counts (CDeleted).
func CMatrix(rows, cols int64) *dlpack.ManagedTensorVersioned {
	return (*dlpack.ManagedTensorVersioned)(unsafe.Pointer(C.c_matrix(C.int64_t(rows), C.int64_t(cols))))
}

// Counted wraps m, a tensor from another producer, so that calls of its
// deleter are counted (ProxiedDeletes).
func Counted(m *dlpack.ManagedTensorVersioned) *dlpack.ManagedTensorVersioned {
	return (*dlpack.ManagedTensorVersioned)(unsafe.Pointer(C.counted((*C.DLManagedTensorVersioned)(unsafe.Pointer(m)))))
}

// ProxiedDeletes counts the deleter calls of Counted tensors.
func ProxiedDeletes() int { return int(C.proxied_count()) }

// CDeleted counts the deleter calls of CMatrix tensors.
func CDeleted() int { return int(C.c_deleted_count()) }

// Delete calls m's deleter, as a C consumer does.
func Delete(m *dlpack.ManagedTensorVersioned) {
	C.call_versioned((*C.DLManagedTensorVersioned)(unsafe.Pointer(m)))
}

// DeleteLegacy calls m's deleter.
func DeleteLegacy(m *dlpack.ManagedTensor) { C.call_legacy((*C.DLManagedTensor)(unsafe.Pointer(m))) }
