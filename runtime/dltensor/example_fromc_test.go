//go:build cgo && (linux || darwin)

package dltensor_test

import (
	"fmt"
	"syscall"
	"unsafe"

	"github.com/dlgen/dlgen/runtime/dltensor"
)

// Memory Go did not allocate, wrapped without a copy: from C's malloc (with
// func(p unsafe.Pointer) { C.free(p) } as free), a device API, or, as here,
// pages mapped from the operating system. free runs once, when the last
// reference goes: here the consumer's, after the Go handle is closed.
func ExampleFromC() {
	mem, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		panic(err)
	}
	layout := dltensor.Layout{DataType: dltensor.DataTypeOf[float64](), Shape: []int64{2, 2}}
	t, err := dltensor.FromC(unsafe.Pointer(&mem[0]), layout, func(unsafe.Pointer) {
		fmt.Println("freed")
		_ = syscall.Munmap(mem)
	})
	if err != nil {
		panic(err) // the memory is still the caller's to free
	}
	v, _ := dltensor.View[float64](t)
	v[0], v[3] = 1, 4
	m, _ := t.Export()
	t.Close() // the export holds the memory now

	// The consumer reads the data, then is done with it.
	fmt.Println(unsafe.Slice((*float64)(m.DLTensor.Data), 4))
	dltensor.DeleteVersioned(m)
	// Output:
	// [1 0 0 4]
	// freed
}
