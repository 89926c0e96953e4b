// Package dltensor exchanges tensors between Go and any DLPack consumer or
// producer (NumPy, PyTorch, JAX, C, C++) through the C ABI, zero-copy.
//
// A Tensor describes memory (device, dtype, shape, strides in elements,
// byte offset, read-only and is-copied flags) and is reference counted:
// its creator holds one reference, dropped by Close, and every live export
// holds another, so the memory stays valid until both the Go side and every
// consumer are done, in either order.
//
// Making tensors:
//   - FromSlice wraps a Go slice of any numeric type without copying. While
//     an export is alive the slice's memory is pinned (dltensor.Pinner), as
//     cgo's rules demand of Go memory that C holds on to.
//   - FromC wraps C-allocated memory with the function that frees it.
//   - Import takes over a foreign DLManagedTensorVersioned (ImportLegacy a
//     DLManagedTensor): it validates everything before touching data, and on
//     any error calls the producer's deleter and returns an error wrapping
//     ErrMalformed. The deleter runs exactly once, when the last reference
//     goes; a finalizer is a safety net that also reports the leak
//     (ReportLeak, LeakedImports).
//
// Handing tensors out: Export returns a DLManagedTensorVersioned (metadata
// in C memory, one reference held) whose deleter is a C trampoline into Go,
// callable from any OS thread; ExportLegacy does the same for consumers
// older than DLPack 1.0. A read-only tensor is exported with
// DLPACK_FLAG_BITMASK_READ_ONLY and cannot be exported as a legacy tensor.
//
// Using the data: View returns a typed Go slice over a contiguous, writable
// CPU tensor without copying; Contiguous and CopyTo copy through the
// devices package, and their results carry the is-copied flag.
package dltensor

import (
	"errors"
	"fmt"
	"log"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dlgen/dlgen/devices"
	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// MaxDims is the largest ndim Import accepts.
const MaxDims = 64

// ErrMalformed is wrapped by every error Import returns for a tensor that
// breaks the DLPack rules.
var ErrMalformed = errors.New("malformed DLPack tensor")

// Tensor is an N-dimensional array shared with DLPack consumers.
type Tensor struct {
	id         uintptr
	device     dlpack.Device
	dtype      dlpack.DataType
	shape      []int64
	strides    []int64
	byteOffset uint64
	data       unsafe.Pointer
	readOnly   bool
	copied     bool

	refs    atomic.Int64
	closed  atomic.Bool
	mu      sync.Mutex // guards exports and pinner
	exports int
	pinner  runtime.Pinner
	goMem   bool   // data is Go memory: pinned while exported
	release func() // frees what backs data once the last reference goes
	// managed is the producer's DLManagedTensor(Versioned) of an import,
	// deleted once the last reference goes (no closure: imports are hot).
	managed *dlpack.ManagedTensorVersioned
	legacy  bool // managed is really a *dlpack.ManagedTensor
}

var (
	nextID      atomic.Uintptr
	liveTensors atomic.Int64
	liveExports atomic.Int64
	leaked      atomic.Int64
)

// LiveTensors is the number of tensors some reference still holds.
func LiveTensors() int64 { return liveTensors.Load() }

// LiveExports is the number of exports whose deleter has not run yet.
func LiveExports() int64 { return liveExports.Load() }

// LeakedImports counts imported tensors that were garbage collected
// without Close; their deleter ran from the finalizer.
func LeakedImports() int64 { return leaked.Load() }

// ReportLeak is called, from the finalizer goroutine, for every imported
// tensor that was garbage collected without Close. By default it logs to
// standard error; set it before importing to route or silence the reports.
var ReportLeak = func(shape []int64, dtype dlpack.DataType) {
	log.Printf("dltensor: an imported tensor (shape %v, dtype %+v) was garbage collected without Close; "+
		"its deleter ran from the finalizer", shape, dtype)
}

func newTensor(t *Tensor) *Tensor {
	t.id = nextID.Add(1)
	t.refs.Store(1)
	liveTensors.Add(1)
	runtime.SetFinalizer(t, finalize)
	return t
}

// finalize drops the owner's reference of a tensor nobody closed. Exports
// keep their tensor reachable, so only the owner's reference can be left.
func finalize(t *Tensor) {
	if t.closed.CompareAndSwap(false, true) {
		if t.managed != nil {
			leaked.Add(1)
			if report := ReportLeak; report != nil {
				report(t.shape, t.dtype)
			}
		}
		t.decRef()
	}
}

// Close drops the creator's reference; the memory is released once no
// export holds it either. Closing twice is harmless.
func (t *Tensor) Close() {
	if t.closed.CompareAndSwap(false, true) {
		runtime.SetFinalizer(t, nil)
		t.decRef()
	}
}

func (t *Tensor) incRef() { t.refs.Add(1) }

func (t *Tensor) decRef() {
	switch n := t.refs.Add(-1); {
	case n == 0:
		liveTensors.Add(-1)
		if t.managed != nil {
			deleteManaged(t.managed, t.legacy)
		}
		if t.release != nil {
			t.release()
		}
	case n < 0:
		panic("dltensor: tensor released more often than referenced")
	}
}

// Element is a Go type that has a DLPack data type.
type Element interface {
	int8 | int16 | int32 | int64 | int | uint8 | uint16 | uint32 | uint64 | uint | uintptr |
		float32 | float64 | complex64 | complex128 | bool
}

// DataTypeOf returns the DLPack data type of T.
func DataTypeOf[T Element]() dlpack.DataType {
	var zero T
	bits := uint8(unsafe.Sizeof(zero) * 8)
	code := dlpack.DataTypeCodeInt
	switch any(zero).(type) {
	case uint8, uint16, uint32, uint64, uint, uintptr:
		code = dlpack.DataTypeCodeUInt
	case float32, float64:
		code = dlpack.DataTypeCodeFloat
	case complex64, complex128:
		code = dlpack.DataTypeCodeComplex
	case bool:
		code = dlpack.DataTypeCodeBool
	}
	return dlpack.DataType{Code: uint8(code), Bits: bits, Lanes: 1}
}

// FromSlice wraps s without copying, as a tensor of the given shape (by
// default one dimension of len(s)).
func FromSlice[T Element](s []T, shape ...int64) (*Tensor, error) {
	if len(shape) == 0 {
		shape = []int64{int64(len(s))}
	}
	if n := devices.Elements(shape); n != int64(len(s)) || anyNegative(shape) {
		return nil, fmt.Errorf("dltensor: shape %v does not hold %d elements", shape, len(s))
	}
	t := &Tensor{
		device: dlpack.Device{DeviceType: dlpack.DeviceTypeCPU},
		dtype:  DataTypeOf[T](),
		shape:  append([]int64(nil), shape...), strides: devices.ContiguousStrides(shape),
		data: unsafe.Pointer(unsafe.SliceData(s)), goMem: true,
	}
	return newTensor(t), nil
}

// Scalar returns a 0-dimensional tensor holding v.
func Scalar[T Element](v T) *Tensor {
	t, _ := FromSlice([]T{v}, 1)
	t.shape, t.strides = []int64{}, []int64{}
	return t
}

// FromC wraps memory that C allocated, described by dtype, shape and
// strides (nil strides: contiguous), on the CPU. free, if not nil, is
// called once when the last reference goes.
func FromC(data unsafe.Pointer, dtype dlpack.DataType, shape, strides []int64, free func(unsafe.Pointer)) (*Tensor, error) {
	if anyNegative(shape) {
		return nil, fmt.Errorf("dltensor: negative extent in shape %v", shape)
	}
	if strides == nil {
		strides = devices.ContiguousStrides(shape)
	}
	if len(strides) != len(shape) {
		return nil, fmt.Errorf("dltensor: %d strides for %d dimensions", len(strides), len(shape))
	}
	t := &Tensor{
		device: dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}, dtype: dtype,
		shape: append([]int64(nil), shape...), strides: append([]int64(nil), strides...), data: data,
	}
	if free != nil {
		t.release = func() { free(data) }
	}
	return newTensor(t), nil
}

func anyNegative(xs []int64) bool {
	for _, x := range xs {
		if x < 0 {
			return true
		}
	}
	return false
}

// Device is where the data lives.
func (t *Tensor) Device() dlpack.Device { return t.device }

// DataType is the element type.
func (t *Tensor) DataType() dlpack.DataType { return t.dtype }

// Shape returns a copy of the extents.
func (t *Tensor) Shape() []int64 { return append([]int64(nil), t.shape...) }

// Strides returns a copy of the strides, in elements.
func (t *Tensor) Strides() []int64 { return append([]int64(nil), t.strides...) }

// NDim is the number of dimensions.
func (t *Tensor) NDim() int { return len(t.shape) }

// Size is the number of elements.
func (t *Tensor) Size() int64 { return devices.Elements(t.shape) }

// ByteOffset is the distance in bytes from Data to the first element.
func (t *Tensor) ByteOffset() uint64 { return t.byteOffset }

// Data is the base pointer (the first element is ByteOffset bytes on).
func (t *Tensor) Data() unsafe.Pointer { return t.data }

// ReadOnly reports whether writing through the tensor is forbidden.
func (t *Tensor) ReadOnly() bool { return t.readOnly }

// Copied reports whether the tensor is a private copy (IS_COPIED).
func (t *Tensor) Copied() bool { return t.copied }

// SetReadOnly marks the tensor read-only for every later export.
func (t *Tensor) SetReadOnly() { t.readOnly = true }

func (t *Tensor) itemSize() int {
	return (int(t.dtype.Bits)*int(t.dtype.Lanes) + 7) / 8
}

// IsContiguous reports whether the elements are packed in row-major order.
func (t *Tensor) IsContiguous() bool {
	if t.Size() == 0 {
		return true
	}
	want := devices.ContiguousStrides(t.shape)
	for i, s := range t.strides {
		if t.shape[i] != 1 && s != want[i] {
			return false
		}
	}
	return true
}

func (t *Tensor) array() devices.Array {
	return devices.Array{Data: unsafe.Add(t.data, t.byteOffset), Shape: t.shape, Strides: t.strides, ItemSize: t.itemSize()}
}

// View returns the elements of a contiguous, writable CPU tensor as a Go
// slice that aliases the tensor's memory. Keep the tensor open while the
// slice is in use.
func View[T Element](t *Tensor) ([]T, error) {
	switch {
	case t.closed.Load():
		return nil, errors.New("dltensor: view of a closed tensor")
	case t.device.DeviceType != dlpack.DeviceTypeCPU:
		return nil, fmt.Errorf("dltensor: view of memory on %v", t.device.DeviceType)
	case t.dtype != DataTypeOf[T]():
		return nil, fmt.Errorf("dltensor: tensor of %+v viewed as %T", t.dtype, *new(T))
	case t.readOnly:
		return nil, errors.New("dltensor: no writable view of a read-only tensor; use Contiguous for a copy")
	case !t.IsContiguous():
		return nil, errors.New("dltensor: view of a non-contiguous tensor; use Contiguous")
	}
	n := t.Size()
	if n == 0 {
		return []T{}, nil
	}
	return unsafe.Slice((*T)(unsafe.Add(t.data, t.byteOffset)), n), nil
}

// Contiguous returns a writable, row-major copy on the CPU.
func (t *Tensor) Contiguous() (*Tensor, error) {
	return t.CopyTo(dlpack.Device{DeviceType: dlpack.DeviceTypeCPU})
}

// CopyTo copies the tensor, made contiguous, to another device through the
// copy engine. The copy is writable and flagged IS_COPIED.
func (t *Tensor) CopyTo(dev dlpack.Device) (*Tensor, error) {
	if t.closed.Load() {
		return nil, errors.New("dltensor: copy of a closed tensor")
	}
	from, err := devices.For(t.device.DeviceType)
	if err != nil {
		return nil, err
	}
	to, err := devices.For(dev.DeviceType)
	if err != nil {
		return nil, err
	}
	if from != to {
		return nil, fmt.Errorf("dltensor: no copy engine from %v to %v", t.device.DeviceType, dev.DeviceType)
	}
	nbytes := int(t.Size()) * t.itemSize()
	mem, err := to.Allocate(nbytes)
	if err != nil {
		return nil, err
	}
	c := &Tensor{
		device: dev, dtype: t.dtype, shape: t.Shape(), strides: devices.ContiguousStrides(t.shape),
		data: mem, copied: true, goMem: dev.DeviceType == dlpack.DeviceTypeCPU,
	}
	if err := to.Copy(c.array(), t.array()); err != nil {
		to.Free(mem)
		return nil, err
	}
	if err := to.Sync(); err != nil {
		return nil, err
	}
	if !c.goMem {
		c.release = func() { to.Free(mem) }
	}
	return newTensor(c), nil
}
