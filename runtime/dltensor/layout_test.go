//go:build cgo

package dltensor_test

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/dlgen/dlgen/runtime/dltensor/internal/cproducer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These stand for the types of a package that dlgen -lang go wrote into a
// user's module: the same names and layout, another package. (tests/dist
// compiles the real thing with the README's snippets.)
type (
	theirVersion  struct{ Major, Minor uint32 }
	theirDevice   struct{ DeviceType, DeviceID int32 }
	theirDataType struct {
		Code, Bits uint8
		Lanes      uint16
	}
	theirTensor struct {
		Data       unsafe.Pointer
		Device     theirDevice
		Ndim       int32
		Dtype      theirDataType
		Shape      *int64
		Strides    *int64
		_          [unsafe.Offsetof(dlpack.Tensor{}.ByteOffset) - unsafe.Offsetof(dlpack.Tensor{}.Strides) - unsafe.Sizeof(uintptr(0))]byte // as C pads on 32-bit ARM
		ByteOffset uint64
	}
	theirManagedTensor struct {
		DLTensor   theirTensor
		ManagerCtx unsafe.Pointer
		Deleter    uintptr
	}
	theirManagedTensorVersioned struct {
		Version    theirVersion
		ManagerCtx unsafe.Pointer
		Deleter    uintptr
		Flags      uint64
		DLTensor   theirTensor
	}
)

func TestImportTakesAnotherGeneratedPackagesTypes(t *testing.T) {
	r := cproducer.New(goodSpec())
	theirs := (*theirManagedTensorVersioned)(unsafe.Pointer(r.Versioned())) // as their C code hands it over
	tensor, err := dltensor.Import(theirs)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3}, tensor.Shape())
	tensor.Close()
	assert.Equal(t, 1, r.Calls())

	r = cproducer.New(goodSpec())
	legacy := (*theirManagedTensor)(unsafe.Pointer(r.Legacy()))
	tensor, err = dltensor.ImportLegacy(legacy)
	require.NoError(t, err)
	tensor.Close()
	assert.Equal(t, 1, r.Calls())

	r = cproducer.New(goodSpec())
	dltensor.DeleteVersioned((*theirManagedTensorVersioned)(unsafe.Pointer(r.Versioned())))
	assert.Equal(t, 1, r.Calls())
	r = cproducer.New(goodSpec())
	dltensor.DeleteLegacy((*theirManagedTensor)(unsafe.Pointer(r.Legacy())))
	assert.Equal(t, 1, r.Calls())
}

func TestImportRefusesAnotherLayoutNamingWhatToPass(t *testing.T) {
	type renamed struct {
		Version    theirVersion
		ManagerCtx unsafe.Pointer
		Deleter    uintptr
		Flags      uint64
		Tensor     theirTensor
	}
	_, err := dltensor.Import(&renamed{})
	require.ErrorIs(t, err, dltensor.ErrNotDLPackType)
	assert.EqualError(t, err, "dltensor: Import takes a *ManagedTensorVersioned of a Go package dlgen generated "+
		"(github.com/dlgen/dlgen/generated/go/dlpack, or your own from dlgen -lang go), "+
		"and was passed a *dltensor_test.renamed whose layout differs: "+
		fmt.Sprintf("renamed field 4 is Tensor at offset %[1]d, want DLTensor at offset %[1]d: ", unsafe.Offsetof(renamed{}.Tensor))+
		dltensor.ErrNotDLPackType.Error())

	_, err = dltensor.Import(&theirManagedTensor{})
	require.ErrorIs(t, err, dltensor.ErrNotDLPackType)
	assert.ErrorContains(t, err, "and was passed a *dltensor_test.theirManagedTensor whose layout differs: ")
	assert.ErrorContains(t, err, "; it is laid out as a DLManagedTensor (DLPack < 1.0): pass it to ImportLegacy: ")

	_, err = dltensor.ImportLegacy(&theirManagedTensorVersioned{})
	require.ErrorIs(t, err, dltensor.ErrNotDLPackType)
	assert.ErrorContains(t, err, "dltensor: ImportLegacy takes a *ManagedTensor of a Go package dlgen generated")
	assert.ErrorContains(t, err, "; it is laid out as a DLManagedTensorVersioned (DLPack >= 1.0): pass it to Import: ")

	type narrow struct {
		Version    theirVersion
		ManagerCtx unsafe.Pointer
		Deleter    uintptr
		Flags      uint32 // not DLPack's uint64
		DLTensor   theirTensor
	}
	_, err = dltensor.Import(&narrow{})
	assert.ErrorContains(t, err, "narrow.Flags is of kind uint32, want uint64")

	var n int64
	_, err = dltensor.Import(&n)
	assert.ErrorContains(t, err, "was passed a *int64 whose layout differs: int64 is of kind int64, want struct")
	assert.PanicsWithError(t, "dltensor: DeleteLegacy takes a *ManagedTensor of a Go package dlgen generated "+
		"(github.com/dlgen/dlgen/generated/go/dlpack, or your own from dlgen -lang go), "+
		"and was passed a *int64 whose layout differs: int64 is of kind int64, want struct: "+dltensor.ErrNotDLPackType.Error(),
		func() { dltensor.DeleteLegacy(&n) })
}
