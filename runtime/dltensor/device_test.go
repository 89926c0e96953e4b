//go:build cgo

package dltensor_test

import (
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
	"github.com/dlgen/dlgen/runtime/devices/devicetest"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openCL returns OpenCL device 0, or skips (fails in CI) without one.
func openCL(t *testing.T) dlpack.Device {
	t.Helper()
	if _, err := devices.OpenCLDevices(); err != nil {
		devicetest.Unavailable(t, err)
	}
	return dlpack.Device{DeviceType: dlpack.DeviceTypeOpenCL}
}

func TestCopyToOpenCLAndBack(t *testing.T) {
	gpu := openCL(t)
	// A 3x4 view, transposed, of 12 floats.
	tensor, err := dltensor.Strided([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, []int64{4, 3}, []int64{1, 4}, 0)
	require.NoError(t, err)
	defer tensor.Close()

	on, err := tensor.CopyTo(gpu)
	require.NoError(t, err)
	defer on.Close()
	assert.Equal(t, gpu, on.Device())
	assert.Equal(t, []int64{3, 1}, on.Strides())
	assert.True(t, on.Copied())
	_, err = dltensor.View[float32](on)
	assert.ErrorIs(t, err, dltensor.ErrNotOnCPU, "a cl_mem is no host memory")
	m, err := on.Export()
	require.NoError(t, err)
	data, _ := on.Data()
	assert.Equal(t, dlpack.DeviceTypeOpenCL, m.DLTensor.Device.DeviceType)
	assert.Equal(t, data, m.DLTensor.Data, "the export hands on the cl_mem")
	dltensor.DeleteVersioned(m)

	back, err := on.CopyTo(dlpack.Device{DeviceType: dlpack.DeviceTypeCPU})
	require.NoError(t, err)
	defer back.Close()
	v, err := dltensor.View[float32](back)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, v)
}

// TestContiguousStaysOnTheDevice wraps OpenCL memory as a strided tensor
// with a byte offset (as an import from another framework would hold it)
// and makes it contiguous there.
func TestContiguousStaysOnTheDevice(t *testing.T) {
	gpu := openCL(t)
	host := []int32{10, 11, 12, 13, 14, 15, 16, 17}
	mem, err := devices.Allocate(gpu, 4*len(host))
	require.NoError(t, err)
	whole := []int64{int64(len(host))}
	require.NoError(t, devices.Copy(devices.Array{Device: gpu, Data: mem, Shape: whole, Strides: []int64{1}, ItemSize: 4},
		devices.Array{Device: dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}, Data: unsafe.Pointer(&host[0]), Shape: whole, Strides: []int64{1}, ItemSize: 4}))
	require.NoError(t, devices.Sync(gpu))
	freed := 0
	// Elements 7, 5, 3 and 6, 4, 2 of the buffer: byte offset 28, strides -1 and -2.
	tensor, err := dltensor.FromC(mem, dltensor.Layout{Device: gpu, DataType: dltensor.DataTypeOf[int32](), Shape: []int64{3, 2}, Strides: []int64{-2, -1}, ByteOffset: 28},
		func(p unsafe.Pointer) { freed++; assert.NoError(t, devices.Free(gpu, p)) })
	require.NoError(t, err)

	c, err := tensor.Contiguous()
	require.NoError(t, err)
	tensor.Close()
	assert.Equal(t, 1, freed, "the wrapped memory is freed once, when its tensor goes")
	assert.Equal(t, gpu, c.Device(), "Contiguous stays on the device")
	assert.True(t, c.IsContiguous())
	back, err := c.CopyTo(dlpack.Device{DeviceType: dlpack.DeviceTypeCPU})
	require.NoError(t, err)
	c.Close()
	v, err := dltensor.View[int32](back)
	require.NoError(t, err)
	assert.Equal(t, []int32{17, 16, 15, 14, 13, 12}, v)
	back.Close()
}

func TestDeviceCopiesOfPackedAndEmptyTensors(t *testing.T) {
	gpu := openCL(t)
	cpu := dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}
	fp4 := dlpack.DataType{Code: dlpack.DataTypeCodeFloat4E2m1fn, Bits: 4, Lanes: 1}
	packed := []byte{0x21, 0x43, 0x65}
	tensor, err := dltensor.FromC(unsafe.Pointer(&packed[0]), dltensor.Layout{DataType: fp4, Shape: []int64{6}}, nil)
	require.NoError(t, err)
	defer tensor.Close()
	on, err := tensor.CopyTo(gpu)
	require.NoError(t, err)
	back, err := on.CopyTo(cpu)
	on.Close()
	require.NoError(t, err)
	b, err := back.Bytes()
	require.NoError(t, err)
	assert.Equal(t, packed, b)
	back.Close()

	empty, err := dltensor.FromSlice([]float64{}, 0, 3)
	require.NoError(t, err)
	defer empty.Close()
	on, err = empty.CopyTo(gpu)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 3}, on.Shape())
	again, err := on.Contiguous()
	require.NoError(t, err)
	again.Close()
	on.Close()
}

func TestDeviceCopyErrorsLoseNothing(t *testing.T) {
	gpu := openCL(t)
	tensor, err := dltensor.FromSlice([]float32{1, 2, 3})
	require.NoError(t, err)
	defer tensor.Close()
	live := dltensor.LiveTensors()
	_, err = tensor.CopyTo(dlpack.Device{DeviceType: dlpack.DeviceTypeOpenCL, DeviceID: 1 << 20})
	assert.ErrorContains(t, err, "no OpenCL device")
	assert.Equal(t, live, dltensor.LiveTensors())
	assert.Equal(t, int64(1), tensor.RefCount())

	on, err := tensor.CopyTo(gpu)
	require.NoError(t, err)
	m, err := on.ExportAndClose()
	require.NoError(t, err)
	assert.Equal(t, dlpack.FlagBitmaskIsCopied, m.Flags, "a device copy handed over is the consumer's alone")
	dltensor.DeleteVersioned(m)
	assert.Equal(t, live, dltensor.LiveTensors())
}
