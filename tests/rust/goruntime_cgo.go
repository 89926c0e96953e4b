//go:build cgo

package rust

/*
#cgo CFLAGS: -I${SRCDIR}/../../generated/c
#include <stdint.h>
#include <stdlib.h>
#include <dlpack/dlpack.h>

typedef struct {
  DLManagedTensorVersioned versioned;
  DLManagedTensor legacy;
  int calls;
  int64_t dims[128];
} produced;

static void produced_delete_versioned(DLManagedTensorVersioned* m) {
  ((produced*)m->manager_ctx)->calls++;
}

static void produced_delete_legacy(DLManagedTensor* m) {
  ((produced*)m->manager_ctx)->calls++;
}

static produced* produced_new(void) {
  produced* p = (produced*)calloc(1, sizeof(produced));
  p->versioned.manager_ctx = p;
  p->versioned.deleter = produced_delete_versioned;
  p->legacy.manager_ctx = p;
  p->legacy.deleter = produced_delete_legacy;
  return p;
}

static void produced_set_data(produced* p, uint64_t address) {
  p->versioned.dl_tensor.data = (void*)(uintptr_t)address;
  p->legacy.dl_tensor.data = (void*)(uintptr_t)address;
}

static void produced_free(produced* p) { free(p); }
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/dlgen/dlgen/conformance/corpus"
	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/dlgen/dlgen/tests/internal/corpustest"
)

// goVerdict makes the tensor in C memory, as a C producer makes it (data
// is never read: the tensor must not be a buffer), and imports it with the
// Go runtime: dltensor.Import, or ImportLegacy; an accepted tensor is
// closed.
func goVerdict(t corpus.Tensor) (corpustest.Verdict, error) {
	if t.Data == corpus.Buffer || len(t.Shape) > 64 || len(t.Strides) > 64 {
		return corpustest.Verdict{}, fmt.Errorf("a tensor without a buffer and with at most 64 extents and strides")
	}
	p := C.produced_new()
	defer C.produced_free(p)
	dl := dlpack.Tensor{
		Device: dlpack.Device{DeviceType: dlpack.DeviceType(t.Device[0]), DeviceID: t.Device[1]},
		Dtype:  dlpack.DataType{Code: dlpack.DataTypeCode(t.Code), Bits: t.Bits, Lanes: t.Lanes},
		Ndim:   t.NDim, ByteOffset: t.ByteOffset,
	}
	dims := unsafe.Slice((*int64)(unsafe.Pointer(&p.dims[0])), len(p.dims))
	if t.Shape != nil {
		copy(dims[:64], t.Shape)
		dl.Shape = &dims[0]
	}
	if t.Strides != nil {
		copy(dims[64:], t.Strides)
		dl.Strides = &dims[64]
	}
	versioned := (*dlpack.ManagedTensorVersioned)(unsafe.Pointer(&p.versioned))
	legacy := (*dlpack.ManagedTensor)(unsafe.Pointer(&p.legacy))
	versioned.DLTensor, legacy.DLTensor = dl, dl
	if t.Data == corpus.Address {
		C.produced_set_data(p, C.uint64_t(t.Address))
	}
	var tensor *dltensor.Tensor
	var err error
	if t.Version == nil {
		tensor, err = dltensor.ImportLegacy(legacy)
	} else {
		versioned.Version = dlpack.Version{Major: t.Version[0], Minor: t.Version[1]}
		versioned.Flags = dlpack.FlagBitmask(t.Flags)
		tensor, err = dltensor.Import(versioned)
	}
	var v corpustest.Verdict
	var broken *dltensor.RuleError
	switch {
	case err == nil:
		v.Accept, v.CallsBefore = true, int(p.calls)
		tensor.Close()
	case errors.As(err, &broken):
		v.Rule, v.Message = broken.Rule.String(), broken.Message
	default:
		return corpustest.Verdict{}, err
	}
	v.Calls = int(p.calls)
	return v, nil
}
