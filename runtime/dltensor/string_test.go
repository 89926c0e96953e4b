package dltensor_test

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTensorPrintsLikePythonsRepr: fmt.Println(t) printed the struct's
// pointers; it now says what the tensor is, in the fields and order of
// Python's repr of a dlgen Tensor.
func TestTensorPrintsLikePythonsRepr(t *testing.T) {
	tensor, err := dltensor.FromSlice(make([]float32, 6), 2, 3)
	require.NoError(t, err)
	assert.Equal(t, "Tensor(shape=[2 3], strides=[3 1], dtype=float32, device=Device(device_type=kDLCPU, device_id=0), readonly=false)\n",
		fmt.Sprintln(tensor))
	tensor.SetReadOnly()
	assert.Equal(t, "Tensor(shape=[2 3], strides=[3 1], dtype=float32, device=Device(device_type=kDLCPU, device_id=0), readonly=true)",
		tensor.String())
	tensor.Close()
	assert.Equal(t, "Tensor(closed)", fmt.Sprint(tensor))

	var buf [16]byte // memory on a device newer than the release: printed, never read
	layout := dltensor.Layout{DataType: dlpack.DataType{Code: dlpack.DataTypeCodeBfloat, Bits: 16, Lanes: 1}, Shape: []int64{4},
		Device: dlpack.Device{DeviceType: 99, DeviceID: 3}}
	foreign, err := dltensor.FromC(unsafe.Pointer(&buf[0]), layout, nil)
	require.NoError(t, err)
	defer foreign.Close()
	assert.Equal(t, "Tensor(shape=[4], strides=[1], dtype=bfloat16, device=Device(device_type=DeviceType(99), device_id=3), readonly=false)",
		foreign.String())

	scalar := dltensor.Scalar(2.5)
	defer scalar.Close()
	assert.Equal(t, "Tensor(shape=[], strides=[], dtype=float64, device=Device(device_type=kDLCPU, device_id=0), readonly=false)", scalar.String())
	assert.Equal(t, "<nil>", (*dltensor.Tensor)(nil).String())
}
