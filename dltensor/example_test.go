//go:build cgo

package dltensor_test

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/dlgen/dlgen/dltensor"
	"github.com/dlgen/dlgen/generated/go/dlpack"
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
