// Package devices is dlgen's copy engine: one small interface per device
// type (allocate, free, copy, sync) and a registry by DLDeviceType.
//
// The CPU backend is built in: it allocates Go memory, copies contiguous
// data at memcpy speed and copies N-dimensional strided data with any
// strides (negative, zero, size-0 dimensions) into a contiguous or strided
// target. Other device types report a clear "no backend for kDLxxx" error
// until a backend is registered for them (CUDA, by dynamic loading, is
// next).
package devices

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// Array describes N-dimensional data in memory: the address of the element
// at index 0, the extents, and strides counted in elements.
type Array struct {
	Data     unsafe.Pointer
	Shape    []int64
	Strides  []int64
	ItemSize int
}

// Backend moves data on one kind of device.
type Backend interface {
	// Allocate returns nbytes of device memory, zeroed.
	Allocate(nbytes int) (unsafe.Pointer, error)
	// Free releases memory from Allocate.
	Free(p unsafe.Pointer)
	// Copy copies src into dst; both have the same shape and item size.
	Copy(dst, src Array) error
	// Sync waits for outstanding copies.
	Sync() error
}

var (
	mu       sync.RWMutex
	backends = map[dlpack.DeviceType]Backend{dlpack.DeviceTypeCPU: CPU{}}
)

// Register installs the backend for a device type, replacing any other.
func Register(t dlpack.DeviceType, b Backend) {
	mu.Lock()
	defer mu.Unlock()
	backends[t] = b
}

// For returns the backend of a device type.
func For(t dlpack.DeviceType) (Backend, error) {
	mu.RLock()
	defer mu.RUnlock()
	if b, ok := backends[t]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("devices: no backend for %v", t)
}

// ContiguousStrides returns the row-major strides of shape, in elements.
func ContiguousStrides(shape []int64) []int64 {
	strides := make([]int64, len(shape))
	step := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = step
		step *= max(shape[i], 1)
	}
	return strides
}

// Elements returns the number of elements of shape.
func Elements(shape []int64) int64 {
	n := int64(1)
	for _, e := range shape {
		n *= e
	}
	return n
}
