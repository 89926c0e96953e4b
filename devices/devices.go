// Package devices is dlgen's copy engine: one small interface per device
// type (allocate, free, copy, sync, each told which device id) and a
// registry by DLDeviceType.
//
// The CPU backend is built in: every CPU device id is the same host
// memory. It allocates Go memory (refusing sizes beyond Go's heap limit
// with an error, not a panic), copies contiguous data at memcpy speed and
// copies N-dimensional strided data with any strides (negative, zero,
// size-0 dimensions) into a contiguous or strided target. Other device
// types report "no backend for kDLxxx", wrapping ErrNoBackend, until a
// backend is registered for them.
package devices

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// Array describes N-dimensional data in memory: the device, the address
// of the element at index 0, the extents, and strides counted in elements.
type Array struct {
	Device   dlpack.Device
	Data     unsafe.Pointer
	Shape    []int64
	Strides  []int64
	ItemSize int
}

// Backend moves data on one kind of device; the device id says which one.
type Backend interface {
	// Allocate returns nbytes of memory on dev, zeroed.
	Allocate(dev dlpack.Device, nbytes int) (unsafe.Pointer, error)
	// Free releases memory from Allocate.
	Free(dev dlpack.Device, p unsafe.Pointer)
	// Copy copies src into dst; both have the same shape and item size, and
	// either may be on any device this backend serves.
	Copy(dst, src Array) error
	// Sync waits for outstanding copies on dev.
	Sync(dev dlpack.Device) error
}

// ErrNoBackend is wrapped by For's error for a device type with no backend.
var ErrNoBackend = errors.New("no backend")

var (
	mu       sync.RWMutex
	backends = map[dlpack.DeviceType]Backend{dlpack.DeviceTypeCPU: CPU{}}
)

// Register installs the backend for a device type, replacing any other;
// a nil backend removes it.
func Register(t dlpack.DeviceType, b Backend) {
	mu.Lock()
	defer mu.Unlock()
	if b == nil {
		delete(backends, t)
		return
	}
	backends[t] = b
}

// For returns the backend of a device type.
func For(t dlpack.DeviceType) (Backend, error) {
	mu.RLock()
	defer mu.RUnlock()
	if b, ok := backends[t]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("devices: %w for %v", ErrNoBackend, t)
}

// ContiguousStrides returns the row-major strides of shape, in elements.
// The shape must be non-negative and its element count must not overflow.
func ContiguousStrides(shape []int64) []int64 {
	strides := make([]int64, len(shape))
	step := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = step
		step *= max(shape[i], 1)
	}
	return strides
}

// Elements returns the number of elements of a non-negative shape, and
// false if that number overflows an int64.
func Elements(shape []int64) (int64, bool) {
	n, overflow := uint64(1), false
	for _, e := range shape {
		hi, lo := bits.Mul64(n, uint64(e))
		if e == 0 {
			return 0, true
		}
		overflow = overflow || hi != 0 || lo > 1<<63-1
		n = lo
	}
	return int64(n), !overflow
}
