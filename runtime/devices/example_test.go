package devices_test

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
)

var cpu = dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}

// A strided copy between CPU arrays: a 2x3 row-major matrix read through
// swapped strides, which is its transpose, written row-major. A copy to or
// from a device is the same call with that side's Device and Data (see the
// package doc); Sync then waits for it.
func ExampleCopy() {
	src := []int32{1, 2, 3, 4, 5, 6} // 2x3, row-major
	dst := make([]int32, 6)          // 3x2, row-major
	shape := []int64{3, 2}
	err := devices.Copy(
		devices.Array{Device: cpu, Data: unsafe.Pointer(&dst[0]), Shape: shape, Strides: devices.ContiguousStrides(shape), ItemSize: 4},
		devices.Array{Device: cpu, Data: unsafe.Pointer(&src[0]), Shape: shape, Strides: []int64{1, 3}, ItemSize: 4},
	)
	if err == nil {
		err = devices.Sync(cpu) // nothing to wait for on the CPU
	}
	fmt.Println(dst, err)
	// Output: [1 4 2 5 3 6] <nil>
}

// Memory from a device's backend, filled by a copy and freed. The source is
// read backwards: a negative stride, with ByteOffset reaching the element at
// index 0 (the last one in memory), as DLPack describes such views.
func ExampleAllocate() {
	mem, err := devices.Allocate(cpu, 4*8)
	if err != nil {
		panic(err)
	}
	defer devices.Free(cpu, mem)
	src := []float64{1, 2, 3, 4}
	err = devices.Copy(
		devices.Array{Device: cpu, Data: mem, Shape: []int64{4}, Strides: []int64{1}, ItemSize: 8},
		devices.Array{Device: cpu, Data: unsafe.Pointer(&src[0]), ByteOffset: 3 * 8, Shape: []int64{4}, Strides: []int64{-1}, ItemSize: 8},
	)
	fmt.Println(unsafe.Slice((*float64)(mem), 4), err) // on the CPU, mem is an address
	// Output: [4 3 2 1] <nil>
}

// A device type with no backend answers an error wrapping ErrNoBackend,
// until one is registered for it (Register).
func ExampleFor() {
	_, err := devices.For(dlpack.DeviceTypeROCM)
	fmt.Println(errors.Is(err, devices.ErrNoBackend))
	fmt.Println(err)
	// Output:
	// true
	// devices: no backend for kDLROCM
}
