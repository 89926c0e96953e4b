// Package devices is dlgen's copy engine: it allocates memory on devices and
// copies N-dimensional data between them, described as DLPack describes a
// tensor.
//
// An Array is one side of a copy: a device, DLTensor's data field and byte
// offset, extents, strides in elements and the element size. On the CPU,
// Data is an address; on a device it is whatever DLPack says the data field
// holds there (a cl_mem for OpenCL), which Go never dereferences.
//
// A Backend serves one device type: Allocate, Free, Copy and Sync, each told
// the device id. The package functions of the same names find the backend
// through a registry by DLDeviceType (For, Register). A copy between the
// CPU and a device goes through the device's backend, a copy within one
// device type through that type's; between two other device types there is
// none (copy through the CPU).
//
// Copies may be asynchronous. A copy is complete, its destination readable
// and its source free to change or be freed, once Sync has returned for each
// device other than the CPU that it touches. Copies that touch one device
// take effect in the order they were submitted; copies from different
// goroutines are not ordered, and memory used through two devices needs a
// Sync of the first before the second uses it.
//
// Built in:
//   - CPU (kDLCPU, any device id: every id is the host's memory). Go memory
//     from Allocate; contiguous data copied by memmove, any strided layout
//     by a cache-blocked engine that splits large copies over goroutines.
//     Copies are complete when Copy returns.
//   - OpenCL (kDLOpenCL), loaded at run time from the system's OpenCL ICD
//     loader (libOpenCL.so.1) when first asked for. Device id N is the N-th
//     device over all platforms in the loader's order (OpenCLDevices names
//     them). Without the loader or a platform, or in a build without cgo,
//     For answers "OpenCL not available: <why>", wrapping ErrNoBackend.
//   - CUDA (kDLCUDA), the driver (libcuda.so.1) loaded at run time when
//     first asked for, no toolkit needed to build. Device id N is the
//     driver's ordinal N, used through its primary context (CUDADevices
//     names them). Copies go on a stream of the backend's per device, or
//     on the caller's (CopyOn, StreamBackend); Handoff orders two streams
//     with an event. Without the driver or a device, or in a build without
//     cgo, For answers "CUDA not available: <why>", wrapping ErrNoBackend.
//     Proven in CI against a fake driver (its logic, not the hardware).
//
// Memory of a host-readable device type (DeviceType.HostReadable, from the
// schema: kDLCUDAHost, kDLROCMHost and kDLCUDAManaged besides kDLCPU) is
// host memory to Copy and Sync: unless a backend is registered for its
// type, the CPU copies it, a device's backend sees it as kDLCPU, and
// there is nothing to wait for. Allocate and Free never fall back: Go
// memory is not pinned or managed memory.
//
// Other device types report "no backend for kDLxxx", wrapping ErrNoBackend,
// until a backend is registered for them. Package devicetest is the suite
// every backend must pass.
//
// A copy to a device and back is the CPU copy of the examples with the
// device's Array on one side. For the first OpenCL device (OpenCLDevices
// lists them; PoCL makes the CPU one), in a function returning an error:
//
//	cpu := dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}
//	cl := dlpack.Device{DeviceType: dlpack.DeviceTypeOpenCL, DeviceID: 0}
//	on := func(dev dlpack.Device, data unsafe.Pointer) devices.Array {
//		return devices.Array{Device: dev, Data: data, Shape: []int64{2, 3}, Strides: []int64{3, 1}, ItemSize: 4}
//	}
//	host, back := []float32{1, 2, 3, 4, 5, 6}, make([]float32, 6)
//	mem, err := devices.Allocate(cl, 6*4) // a cl_mem, zero-filled
//	if err != nil {
//		return err // wraps ErrNoBackend where OpenCL is missing
//	}
//	defer devices.Free(cl, mem)
//	if err := devices.Copy(on(cl, mem), on(cpu, unsafe.Pointer(&host[0]))); err != nil {
//		return err
//	}
//	if err := devices.Copy(on(cpu, unsafe.Pointer(&back[0])), on(cl, mem)); err != nil {
//		return err
//	}
//	return devices.Sync(cl) // back holds host's values once Sync returns
package devices

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// Array describes one side of a copy: N-dimensional data on a device.
type Array struct {
	Device dlpack.Device // where the data lives
	// Data is DLTensor's data field: a host address on the CPU, a device
	// handle elsewhere (a cl_mem for OpenCL).
	Data unsafe.Pointer
	// ByteOffset is the distance in bytes from Data to the element at
	// index 0, as DLTensor's byte_offset.
	ByteOffset uint64
	Shape      []int64 // the extent of each dimension
	// Strides are in elements, of any sign; 0 repeats an element (only a
	// source may do that).
	Strides  []int64
	ItemSize int // bytes per element
}

// Backend moves data on one device type; the device id says which device.
//
// Copy receives arrays that the package's Copy checked: the same rank,
// shape and item size, at least one element, non-nil data, no destination
// dimension that repeats an element (stride 0); one side is on the
// backend's device type, the other on that type or on the CPU. Elements
// that overlap in the destination, or between destination and source, get
// unspecified values.
type Backend interface {
	// Allocate returns nbytes of zeroed memory on dev (nil for 0 bytes),
	// or an error for an unknown device or a size the device cannot hold.
	Allocate(dev dlpack.Device, nbytes int) (unsafe.Pointer, error)
	// Free releases memory from Allocate; nil is ignored. Copies still
	// running on the memory finish first.
	Free(dev dlpack.Device, data unsafe.Pointer) error
	// Copy submits a copy of src into dst and may return before it is
	// done; see Sync.
	Copy(dst, src Array) error
	// Sync waits until every copy submitted with a side on dev is complete,
	// and reports any that failed.
	Sync(dev dlpack.Device) error
}

// ErrNoBackend is wrapped by every error that says no backend serves a
// device type.
var ErrNoBackend = errors.New("no backend")

var (
	mu sync.RWMutex
	// backends holds the registered backends; a built-in one is made on
	// first use, so that OpenCL is loaded only when it is asked for.
	backends = map[dlpack.DeviceType]func() (Backend, error){
		dlpack.DeviceTypeCPU:    func() (Backend, error) { return CPU{}, nil },
		dlpack.DeviceTypeOpenCL: openCL,
		dlpack.DeviceTypeCUDA:   cuda,
	}
)

// Register installs the backend for a device type, replacing any other,
// built-in ones included; a nil backend removes it.
func Register(t dlpack.DeviceType, b Backend) {
	mu.Lock()
	defer mu.Unlock()
	if b == nil {
		delete(backends, t)
		return
	}
	backends[t] = func() (Backend, error) { return b, nil }
}

// For returns the backend of a device type.
func For(t dlpack.DeviceType) (Backend, error) {
	mu.RLock()
	get, ok := backends[t]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("devices: %w for %v", ErrNoBackend, t)
	}
	return get()
}

// Allocate returns nbytes of zeroed memory on dev from its backend.
func Allocate(dev dlpack.Device, nbytes int) (unsafe.Pointer, error) {
	b, err := For(dev.DeviceType)
	if err != nil {
		return nil, err
	}
	return b.Allocate(dev, nbytes)
}

// Free releases memory that Allocate returned for dev.
func Free(dev dlpack.Device, data unsafe.Pointer) error {
	b, err := For(dev.DeviceType)
	if err != nil {
		return err
	}
	return b.Free(dev, data)
}

// Sync waits for the copies submitted with a side on dev.
func Sync(dev dlpack.Device) error {
	if t := dev.DeviceType; t.HostReadable() && !registered(t) {
		return nil // the CPU copied it: complete when Copy returned
	}
	b, err := For(dev.DeviceType)
	if err != nil {
		return err
	}
	return b.Sync(dev)
}

// Copy checks dst and src and submits the copy to the backend that serves
// them: the device side's for a copy between host memory and a device. The
// copy is complete once Sync has returned for each device other than the
// CPU that it touches.
func Copy(dst, src Array) error {
	b, dst, src, err := routed(dst, src)
	if err != nil || b == nil {
		return err
	}
	return b.Copy(dst, src)
}

// routed checks a copy and finds its backend, with host-readable sides
// presented as the CPU's; no backend and no error when there is nothing
// to copy.
func routed(dst, src Array) (Backend, Array, Array, error) {
	if err := check(dst, src); err != nil {
		return nil, dst, src, err
	}
	dst, src = onHost(dst), onHost(src)
	b, err := route(dst.Device.DeviceType, src.Device.DeviceType)
	if n, _ := Elements(src.Shape); err != nil || n == 0 {
		return nil, dst, src, err
	}
	return b, dst, src, nil
}

// StreamBackend is a Backend whose devices order work on streams, named as
// DLPack's __dlpack__(stream=) names them: for CUDA, a CUstream handle as
// an integer, 1 the legacy default stream, 2 the per-thread default
// stream; 0 is refused (the array API disallows it for CUDA) and -1 asks
// for no synchronisation.
type StreamBackend interface {
	Backend
	// CopyOn submits a copy, as Copy does, on the caller's stream: it runs
	// after the work queued there before it, and work queued there after
	// it sees its result. Sync of the device also waits for it.
	CopyOn(dst, src Array, stream int64) error
	// Handoff makes the work queued on consumer from now on wait, on the
	// device, for the work queued on producer so far, without waiting on
	// the host. Nothing is done for consumer -1 or the same stream.
	Handoff(dev dlpack.Device, producer, consumer int64) error
}

// CopyOn checks dst and src as Copy does and submits the copy on stream,
// a stream of the device side's backend, which must be a StreamBackend.
func CopyOn(dst, src Array, stream int64) error {
	b, dst, src, err := routed(dst, src)
	if err != nil || b == nil {
		return err
	}
	sb, ok := b.(StreamBackend)
	if !ok {
		return fmt.Errorf("devices: the backend of a copy from %v to %v has no streams", src.Device.DeviceType, dst.Device.DeviceType)
	}
	return sb.CopyOn(dst, src, stream)
}

// Handoff makes the work queued on stream consumer of dev wait for the
// work queued on stream producer so far, on the device: how the export of
// a tensor written on one stream is made ready for a consumer on another
// without a full device sync. Consumer -1 (no synchronisation) and the
// same stream need nothing; devices whose backend has no streams, and
// host-readable memory the CPU copies, have nothing to order; a device
// type without a backend cannot be ordered (ErrNoBackend).
func Handoff(dev dlpack.Device, producer, consumer int64) error {
	if t := dev.DeviceType; consumer == -1 || producer == consumer || t.HostReadable() && !registered(t) {
		return nil
	}
	b, err := For(dev.DeviceType)
	if err != nil {
		return err
	}
	if sb, ok := b.(StreamBackend); ok {
		return sb.Handoff(dev, producer, consumer)
	}
	return nil
}

// builtin is a built-in backend that is loaded once, when first asked
// for (so that a driver library is opened only then).
type builtin[B interface {
	Backend
	names() []string // of the devices, in device id order
}] struct {
	load func() (B, error)
	once sync.Once
	b    B
	err  error
}

func (l *builtin[B]) get() (Backend, error) {
	l.once.Do(func() { l.b, l.err = l.load() })
	if l.err != nil {
		return nil, l.err
	}
	return l.b, nil
}

func (l *builtin[B]) deviceNames() ([]string, error) {
	if _, err := l.get(); err != nil {
		return nil, err
	}
	return l.b.names(), nil
}

// notAvailable is For's error for kDLOpenCL when OpenCL cannot be loaded.
func notAvailable(why string) error { return unavailable(dlpack.DeviceTypeOpenCL, "OpenCL", why) }

// cudaNotAvailable is For's error for kDLCUDA when CUDA cannot be loaded.
func cudaNotAvailable(why string) error { return unavailable(dlpack.DeviceTypeCUDA, "CUDA", why) }

func unavailable(t dlpack.DeviceType, api, why string) error {
	return fmt.Errorf("devices: %w for %v: %s not available: %s", ErrNoBackend, t, api, why)
}

func registered(t dlpack.DeviceType) bool {
	mu.RLock()
	defer mu.RUnlock()
	_, ok := backends[t]
	return ok
}

// onHost presents a host-readable side without a backend of its own as
// the CPU's, so that backends serve it as they serve kDLCPU.
func onHost(a Array) Array {
	if t := a.Device.DeviceType; t.HostReadable() && !registered(t) {
		a.Device = dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}
	}
	return a
}

func route(dst, src dlpack.DeviceType) (Backend, error) {
	switch {
	case dst == src || src == dlpack.DeviceTypeCPU:
		return For(dst)
	case dst == dlpack.DeviceTypeCPU:
		return For(src)
	}
	return nil, fmt.Errorf("devices: %w copies from %v to %v; copy through the CPU", ErrNoBackend, src, dst)
}

// check refuses what no backend can copy.
func check(dst, src Array) error {
	switch {
	case len(dst.Shape) != len(src.Shape) || len(dst.Strides) != len(dst.Shape) || len(src.Strides) != len(src.Shape):
		return fmt.Errorf("devices: copy between shape %v strides %v and shape %v strides %v", dst.Shape, dst.Strides, src.Shape, src.Strides)
	case dst.ItemSize != src.ItemSize || src.ItemSize <= 0:
		return fmt.Errorf("devices: copy between items of %d and %d bytes", dst.ItemSize, src.ItemSize)
	}
	for i, e := range src.Shape {
		if e != dst.Shape[i] || e < 0 {
			return fmt.Errorf("devices: copy between shapes %v and %v", dst.Shape, src.Shape)
		}
	}
	n, ok := Elements(src.Shape)
	switch {
	case !ok:
		return fmt.Errorf("devices: shape %v has more elements than an int64 counts", src.Shape)
	case n == 0:
		return nil
	case dst.Data == nil || src.Data == nil:
		return errors.New("devices: copy of elements to or from nil data")
	}
	for i, s := range dst.Strides {
		if s == 0 && dst.Shape[i] > 1 {
			return fmt.Errorf("devices: destination strides %v repeat elements in dimension %d", dst.Strides, i)
		}
	}
	return nil
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
