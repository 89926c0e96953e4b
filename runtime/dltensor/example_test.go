//go:build cgo

package dltensor_test

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
	"github.com/dlgen/dlgen/runtime/dltensor"
)

// A Go slice handed to a DLPack consumer and taken back, without a copy.
func Example() {
	data := []float32{1, 2, 3, 4, 5, 6}
	t, err := dltensor.FromSlice(data, 2, 3)
	if err != nil {
		panic(err)
	}
	m, err := t.Export() // what a C or Python consumer receives
	if err != nil {
		panic(err)
	}
	t.Close() // the export keeps the memory alive

	back, err := dltensor.Import(m) // here Go is the consumer
	if err != nil {
		panic(err)
	}
	v, _ := dltensor.View[float32](back)
	v[0] = 42
	fmt.Println(back.Shape(), data[0])
	back.Close() // runs the export's deleter, exactly once
	fmt.Println(dltensor.LiveExports())
	// Output:
	// [2 3] 42
	// 0
}

// A strided import made contiguous by the copy engine.
func ExampleTensor_Contiguous() {
	t, _ := dltensor.FromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	defer t.Close()
	m, _ := t.Export()
	// A consumer reading the transpose: swap shape and strides in place.
	shape, strides := unsafe.Slice(m.DLTensor.Shape, 2), unsafe.Slice(m.DLTensor.Strides, 2)
	shape[0], shape[1], strides[0], strides[1] = shape[1], shape[0], strides[1], strides[0]
	transposed, _ := dltensor.Import(m)
	defer transposed.Close()
	c, _ := transposed.Contiguous()
	defer c.Close()
	v, _ := dltensor.View[int32](c)
	fmt.Println(v, c.Copied())
	// Output: [1 4 2 5 3 6] true
}

// A column of a Go matrix, described by strides and a byte offset: no copy.
func ExampleStrided() {
	matrix := []float64{
		1, 2, 3,
		4, 5, 6,
	}
	column, _ := dltensor.Strided(matrix, []int64{2}, []int64{3}, 2*8) // the third column
	defer column.Close()
	c, _ := column.Contiguous()
	defer c.Close()
	v, _ := dltensor.View[float64](c)
	fmt.Println(v, column.IsContiguous())
	// Output: [3 6] false
}

// A private copy handed over: the consumer owns it alone, so the export
// says IS_COPIED.
func ExampleTensor_ExportAndClose() {
	t, _ := dltensor.FromSlice([]int8{1, 2, 3})
	defer t.Close()
	c, _ := t.Contiguous()
	m, _ := c.ExportAndClose()
	fmt.Println(m.Flags&dlpack.FlagBitmaskIsCopied != 0)
	dltensor.DeleteVersioned(m)
	// Output: true
}

// Errors tell what went wrong.
func ExampleView() {
	t, _ := dltensor.FromSlice([]int32{1, 2})
	t.SetReadOnly()
	_, err := dltensor.View[int32](t)
	fmt.Println(errors.Is(err, dltensor.ErrReadOnly))
	_, err = dltensor.ReadView[float32](t)
	fmt.Println(errors.Is(err, dltensor.ErrElementType))
	t.Close()
	_, err = dltensor.ReadView[int32](t)
	fmt.Println(errors.Is(err, dltensor.ErrClosed))
	// Output:
	// true
	// true
	// true
}

// What a consumer reads from an export of a Go slice: the C structs of
// DLPack, pointing at the slice's memory. Hand m to C as
// (*C.DLManagedTensorVersioned)(unsafe.Pointer(m)); the consumer calls its
// deleter once when done, from any thread.
func ExampleTensor_Export() {
	data := []float32{1, 2, 3, 4, 5, 6}
	t, err := dltensor.FromSlice(data, 2, 3)
	if err != nil {
		panic(err)
	}
	defer t.Close()
	m, err := t.Export()
	if err != nil {
		panic(err)
	}
	dl := m.DLTensor
	fmt.Println(m.Version.Major, dl.Device.DeviceType, dl.Dtype.Code, dl.Dtype.Bits, dl.Ndim)
	fmt.Println(unsafe.Slice(dl.Shape, dl.Ndim), unsafe.Slice(dl.Strides, dl.Ndim))
	fmt.Println(dl.Data == unsafe.Pointer(&data[0]), dltensor.LiveExports())
	dltensor.DeleteVersioned(m) // what the consumer does when it is done
	fmt.Println(dltensor.LiveExports())
	// Output:
	// 1 kDLCPU kDLFloat 32 2
	// [2 3] [3 1]
	// true 1
	// 0
}

// A tensor from a producer, read in place. m would come from C or Python
// as a pointer, (*dlpack.ManagedTensorVersioned)(unsafe.Pointer(p)); here
// Go produces it, read-only. A read-only tensor refuses View; ReadView
// reads it, and the caller must not write.
func ExampleImport() {
	producer, _ := dltensor.FromSlice([]float64{0.5, 1.5, 2.5})
	producer.SetReadOnly()
	m, _ := producer.Export()
	producer.Close()

	t, err := dltensor.Import(m)
	if err != nil {
		panic(err) // the producer's deleter has run
	}
	defer t.Close() // calls the producer's deleter
	fmt.Println(t.Device().DeviceType, t.Shape(), t.ReadOnly())
	_, err = dltensor.View[float64](t)
	fmt.Println(errors.Is(err, dltensor.ErrReadOnly))
	v, err := dltensor.ReadView[float64](t)
	fmt.Println(v, err)
	// Output:
	// kDLCPU [3] true
	// true
	// [0.5 1.5 2.5] <nil>
}

// A malformed tensor is refused before its data is touched, and its
// deleter runs at once: the consumer owns nothing afterwards.
func ExampleImport_malformed() {
	producer, _ := dltensor.FromSlice([]int16{1, 2, 3})
	m, _ := producer.Export()
	producer.Close()
	m.DLTensor.Ndim = -1 // a broken producer

	_, err := dltensor.Import(m)
	fmt.Println(errors.Is(err, dltensor.ErrMalformed), dltensor.LiveExports())
	// Output: true 0
}

// A copy to a device, here the CPU: the result is row-major, writable and
// marked Copied, whatever the source. Only the device changes for another
// one, t.CopyTo(dlpack.Device{DeviceType: dlpack.DeviceTypeOpenCL}) for
// OpenCL's first device, and back with CopyTo to the CPU (see package
// devices).
func ExampleTensor_CopyTo() {
	t, _ := dltensor.FromSlice([]uint8{1, 2, 3, 4})
	defer t.Close()
	t.SetReadOnly()
	c, err := t.CopyTo(dlpack.Device{DeviceType: dlpack.DeviceTypeCPU})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	v, err := dltensor.View[uint8](c)
	fmt.Println(v, err, c.Copied())
	// Output: [1 2 3 4] <nil> true
}

// toyDevice is the device backend of the example below. Its memory is Go
// byte slices, and data on it is a handle (a *toyBuffer), not an address,
// as a cl_mem is on OpenCL. A copy turns each side into host memory and
// lets the CPU backend move the elements.
type toyDevice struct{}

type toyBuffer struct{ bytes []byte }

func (toyDevice) Allocate(_ dlpack.Device, nbytes int) (unsafe.Pointer, error) {
	if nbytes == 0 {
		return nil, nil
	}
	return unsafe.Pointer(&toyBuffer{make([]byte, nbytes)}), nil
}

func (toyDevice) Free(dlpack.Device, unsafe.Pointer) error { return nil } // the collector frees it
func (toyDevice) Sync(dlpack.Device) error                 { return nil } // copies finish in Copy

func (toyDevice) Copy(dst, src devices.Array) error {
	return devices.CPU{}.Copy(onHost(dst), onHost(src))
}

// onHost is a as host memory: a toy handle becomes the address of its bytes.
func onHost(a devices.Array) devices.Array {
	if a.Device.DeviceType != dlpack.DeviceTypeCPU && a.Data != nil {
		a.Data = unsafe.Pointer(&(*toyBuffer)(a.Data).bytes[0])
	}
	a.Device = dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}
	return a
}

// A copy to a device and back, each made by the backend registered for the
// device's type. The device is a toy registered for kDLExtDev (see
// toyDevice); OpenCL's backend is built in, and a copy to OpenCL is the same
// call with its Device.
func ExampleTensor_CopyTo_device() {
	ext := dlpack.Device{DeviceType: dlpack.DeviceTypeExtDev}
	devices.Register(ext.DeviceType, toyDevice{})
	defer devices.Register(ext.DeviceType, nil)

	t, _ := dltensor.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	defer t.Close()
	onDevice, err := t.CopyTo(ext)
	if err != nil {
		panic(err)
	}
	defer onDevice.Close()
	_, err = dltensor.View[float32](onDevice) // the CPU never reads a device's memory
	fmt.Println(onDevice.Device().DeviceType, onDevice.Shape(), errors.Is(err, dltensor.ErrNotOnCPU))

	back, err := onDevice.CopyTo(dlpack.Device{DeviceType: dlpack.DeviceTypeCPU})
	if err != nil {
		panic(err)
	}
	defer back.Close()
	v, err := dltensor.View[float32](back)
	fmt.Println(v, err)
	// Output:
	// kDLExtDev [2 3] true
	// [1 2 3 4 5 6] <nil>
}

// A block of a row-major matrix, viewed in place as gonum's *mat.Dense
// holds a matrix (blas64.General: rows, columns, a row stride and data)
// and read row by row: no element is copied.
func ExampleViewStrided() {
	matrix := []float64{
		0, 1, 2, 3,
		4, 5, 6, 7,
		8, 9, 10, 11,
	}
	// Rows 1 and 2, columns 1 and 2: what a producer hands over as a
	// sliced array, shape (2, 2), strides (4, 1), byte offset 5 elements.
	block, _ := dltensor.Strided(matrix, []int64{2, 2}, []int64{4, 1}, 5*8)
	defer block.Close()
	v, err := dltensor.ViewStrided[float64](block)
	if err != nil {
		panic(err)
	}
	data, rows, cols, stride, _ := v.Matrix() // mat.NewDense needs stride == cols: use SetRawMatrix
	fmt.Println(rows, cols, stride, data)
	v.Set(50, 0, 0)
	byRow, _ := v.Rows()
	for index, row := range byRow {
		fmt.Println(index, row)
	}
	fmt.Println(matrix[5], v.At(1, 1))
	// Output:
	// 2 2 4 [5 6 7 8 9 10]
	// [0] [50 6]
	// [1] [9 10]
	// 50 10
}
