//go:build !cgo

package dltensor_test

import (
	"testing"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExchangeWithoutCgoSaysToEnableIt: built with CGO_ENABLED=0, the
// functions that need C build and say so on the first call, naming what
// to do.
func TestExchangeWithoutCgoSaysToEnableIt(t *testing.T) {
	want := func(fn string) string {
		return "dltensor: " + fn + ": dltensor needs cgo to exchange tensors through the C ABI: " +
			"build with CGO_ENABLED=1 and a C compiler (gcc or clang on PATH, or named by CC)"
	}
	tensor, err := dltensor.FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	require.NoError(t, err, "making tensors needs no cgo")
	defer tensor.Close()
	_, err = tensor.Export()
	require.ErrorIs(t, err, dltensor.ErrNeedsCgo)
	assert.EqualError(t, err, want("Export"))
	_, err = tensor.ExportLegacy()
	assert.EqualError(t, err, want("ExportLegacy"))
	_, err = tensor.ExportAndClose()
	assert.EqualError(t, err, want("ExportAndClose"))
	c, err := tensor.Contiguous()
	require.NoError(t, err, "ExportAndClose left the handle open")
	c.Close()

	_, err = dltensor.Import(&dlpack.ManagedTensorVersioned{})
	assert.EqualError(t, err, want("Import"))
	_, err = dltensor.ImportLegacy(&dlpack.ManagedTensor{})
	assert.EqualError(t, err, want("ImportLegacy"))
	dltensor.DeleteVersioned[dlpack.ManagedTensorVersioned](nil)
	assert.PanicsWithError(t, want("DeleteLegacy"), func() { dltensor.DeleteLegacy(&dlpack.ManagedTensor{}) })
}
