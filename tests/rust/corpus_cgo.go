package rust

/*
#cgo CFLAGS: -I${SRCDIR}/../../generated/c
#include <stdint.h>
#include <stdlib.h>
#include <dlpack/dlpack.h>

typedef struct {
  DLManagedTensorVersioned managed;
  int calls;
  int64_t dims[256];
  double buffer[8];
} corpus_tensor;

static void corpus_delete(DLManagedTensorVersioned* m) {
  ((corpus_tensor*)m->manager_ctx)->calls++;
}

static corpus_tensor* corpus_new(void) {
  corpus_tensor* t = (corpus_tensor*)calloc(1, sizeof(corpus_tensor));
  t->managed.manager_ctx = t;
  t->managed.deleter = corpus_delete;
  return t;
}

static void corpus_free(corpus_tensor* t) { free(t); }
*/
import "C"

import (
	"errors"
	"strings"
	"unsafe"

	"github.com/dlgen/dlgen/dltensor"
	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// Case is a versioned managed tensor as a producer could hand it over,
// well formed or not. A nil Shape or Strides is NULL.
type Case struct {
	Major, Minor         uint32
	Flags                uint64
	DeviceType, DeviceID int32
	Code, Bits           uint8
	Lanes                uint16
	NDim                 int32
	Shape, Strides       []int64
	ByteOffset           uint64
	NullData             bool
}

// goVerdict imports the tensor c describes, made in C memory as a C
// producer makes it, with the Go runtime: "" when accepted, else the
// error's message without the runtime's decoration; and how often the
// deleter ran once the import (if any) is closed.
func goVerdict(c Case) (message string, calls int, err error) {
	t := C.corpus_new()
	defer C.corpus_free(t)
	m := (*dlpack.ManagedTensorVersioned)(unsafe.Pointer(&t.managed))
	m.Version = dlpack.Version{Major: c.Major, Minor: c.Minor}
	m.Flags = dlpack.FlagBitmask(c.Flags)
	dl := &m.DLTensor
	dl.Device = dlpack.Device{DeviceType: dlpack.DeviceType(c.DeviceType), DeviceID: c.DeviceID}
	dl.Dtype = dlpack.DataType{Code: dlpack.DataTypeCode(c.Code), Bits: c.Bits, Lanes: c.Lanes}
	dl.Ndim = c.NDim
	dl.ByteOffset = c.ByteOffset
	if !c.NullData {
		dl.Data = unsafe.Pointer(&t.buffer[0])
	}
	dims := unsafe.Slice((*int64)(unsafe.Pointer(&t.dims[0])), 256)
	if c.Shape != nil {
		copy(dims[:128], c.Shape)
		dl.Shape = &dims[0]
	}
	if c.Strides != nil {
		copy(dims[128:], c.Strides)
		dl.Strides = &dims[128]
	}
	tensor, ierr := dltensor.Import(m)
	if ierr == nil {
		tensor.Close()
	} else if !errors.Is(ierr, dltensor.ErrMalformed) {
		return "", 0, ierr
	} else {
		message = strings.TrimSuffix(strings.TrimPrefix(ierr.Error(), "dltensor: "), ": "+dltensor.ErrMalformed.Error())
	}
	return message, int(t.calls), nil
}
