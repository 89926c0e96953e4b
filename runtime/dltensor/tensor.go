// Package dltensor exchanges tensors between Go and any DLPack consumer or
// producer (NumPy, PyTorch, JAX, C, C++) through the C ABI, zero-copy.
//
// A Tensor is a handle on shared storage: memory plus its description
// (device, dtype, shape, strides in elements, byte offset, is-copied and
// sub-byte-padded flags). The storage is reference counted: every handle
// holds one reference, dropped by its Close, and every live export holds
// another, so the memory stays valid until every Go handle and every
// consumer are done, in any order. Clone makes another handle on the same
// storage; RefCount reports the count. Read-only is a property of a handle.
//
// Making tensors:
//   - FromSlice wraps a Go slice of any numeric type without copying, as a
//     row-major tensor; Strided does the same with explicit strides and a
//     byte offset. While an export is alive the slice's memory is pinned
//     (runtime.Pinner), as cgo's rules demand of Go memory that C holds.
//   - FromC wraps memory that C (or a device API) allocated, described by a
//     Layout, with the function that frees it.
//   - Import takes over a foreign DLManagedTensorVersioned (ImportLegacy a
//     DLManagedTensor). It validates everything before touching data; on
//     any error it calls the producer's deleter and returns an error
//     wrapping ErrMalformed, except for a pointer that is already imported,
//     which is refused with ErrAlreadyImported and not deleted. The deleter
//     runs exactly once, when the last reference goes; a finalizer is a
//     safety net that also reports the leak (SetLeakReporter,
//     LeakedImports). A legacy import is writable, since the legacy format
//     cannot say otherwise; call SetReadOnly to treat it as read-only.
//
// Every tensor dltensor makes passes the same checks as Import: what Go
// exports, Import accepts. The checks are DLPack's rules as dlgen states
// them for every language (docs/rules.md), read from the tables of package
// dlpack, and a refusal is a *RuleError that names the rule and says it in
// the words every dlgen module uses; conformance/corpus/corpus.json pins
// them. Among them: every element count, byte offset and byte extent stays
// below 2^(P-1) for P-bit pointers, and every byte of every element has an
// address below 2^P. A tensor with no elements is exported with NULL data
// and byte offset 0, as DLTensor.data's doc asks; Import accepts any data
// pointer (NULL or not) for one and never reads through it.
//
// A tensor on a device the CPU cannot read, of a type this release knows
// or not, is imported and held: it can be exported again or closed, but
// View, ReadView, Bytes and ReadBytes refuse it with ErrNotOnCPU, and
// copies need a backend registered for its type (ErrNoBackend otherwise).
// Host-readable memory (CPU, CUDA and ROCm pinned host memory, CUDA managed
// memory: host_readable in the schema) is read in place and copied by the
// CPU.
//
// Handing tensors out: Export returns a DLManagedTensorVersioned (metadata
// in C memory, one reference held) whose deleter is a C trampoline into
// Go, callable from any OS thread; ExportLegacy does the same for
// consumers older than DLPack 1.0 and refuses read-only handles and padded
// sub-byte tensors, which that format cannot describe. A deleter
// called a second time is not passed on: it is counted (InvalidDeletes)
// and logged (unless C's allocator has meanwhile reused the address for
// another export, which no runtime can tell apart). ExportAndClose hands the storage over: when it was a private
// copy (Contiguous, CopyTo) and no other reference is left, the consumer
// owns it alone and the export carries DLPACK_FLAG_BITMASK_IS_COPIED.
//
// Using the data: View and ReadView return a typed Go slice over a
// contiguous host-readable tensor without copying (View refuses read-only handles;
// ReadView allows them, and the caller must not write); Bytes and
// ReadBytes do the same as raw bytes, for element types with no Go type
// (bfloat16, float16, float8, sub-byte types). Contiguous and CopyTo copy
// through the devices package.
//
// Sub-byte element types (4- and 6-bit floats, int4, ...) are packed, as
// DLPack specifies, unless DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED says
// one byte per element; every size computation honours that.
//
// Releases: an exchange speaks the newest DLPack release unless given
// WithRelease(dlpack.Release), the Release of the package dlgen -lang go
// wrote for the release a module pinned; then exports carry that
// release's version and only its flags, and imports follow its rules.
//
// Errors can be told apart with errors.Is: ErrClosed, ErrReadOnly,
// ErrNotContiguous, ErrElementType, ErrNotOnCPU, ErrNoBackend,
// ErrNeedsVersioned (ExportLegacy), ErrNotInRelease (WithRelease),
// ErrMalformed (the producer's deleter ran), ErrAlreadyImported (it did
// not), ErrNotDLPackType and ErrNeedsCgo;
// errors.As with a *RuleError
// tells which rule a tensor broke.
//
// Close is nil-safe, as are DeleteVersioned and DeleteLegacy: a deferred
// t.Close() does nothing when the constructor returned an error.
//
// Import, ImportLegacy, DeleteVersioned and DeleteLegacy take the managed
// tensors of any Go package dlgen generated: generated/go/dlpack, or the
// one `dlgen -lang go` wrote into your module, whose types are declared
// alike. The layout of each type is checked once, against
// generated/go/dlpack's; another layout is refused with ErrNotDLPackType.
//
// Exchanging through the C ABI needs cgo and a C compiler: exports live in
// C memory and deleters are C functions. Built with CGO_ENABLED=0 (or with
// no C compiler found) the package is its pure-Go part: making tensors,
// views and copies work, and Export, ExportLegacy, ExportAndClose, Import
// and ImportLegacy return an error wrapping ErrNeedsCgo, which says to
// build with CGO_ENABLED=1 and a C compiler (DeleteVersioned and
// DeleteLegacy, which return nothing, panic with it). The layout types
// (generated/go/dlpack) and the copy engine (devices) need no cgo.
//
// Concurrency: every function and method may be called from any goroutine
// at the same time, and deleters from any OS thread, except that a handle
// must not be used after, or concurrently with, its own Close (use Clone to
// give another goroutine a handle of its own). Slices from View and Bytes
// alias shared memory: synchronising writes to it is the caller's job.
package dltensor

import (
	"errors"
	"fmt"
	"log"
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
)

// MaxDims is the largest ndim any tensor may have.
const MaxDims = dlpack.MaxDims

var (
	// ErrMalformed: the tensor breaks the DLPack rules. For an import, the
	// producer's deleter has run.
	ErrMalformed = errors.New("malformed DLPack tensor")
	// ErrAlreadyImported: this managed tensor is already owned by a live
	// import; its deleter has not run.
	ErrAlreadyImported = errors.New("managed tensor already imported")
	// ErrClosed: the handle was closed, or its storage is gone.
	ErrClosed = errors.New("tensor is closed")
	// ErrReadOnly: writing through this handle is forbidden.
	ErrReadOnly = errors.New("tensor is read-only")
	// ErrNotContiguous: the operation needs row-major packed elements.
	ErrNotContiguous = errors.New("tensor is not contiguous")
	// ErrElementType: the Go element type does not match the tensor's dtype.
	ErrElementType = errors.New("wrong element type")
	// ErrNotOnCPU: the memory cannot be read from Go.
	ErrNotOnCPU = errors.New("tensor memory is not on the CPU")
	// ErrNoBackend: no copy engine is registered for a device type.
	ErrNoBackend = devices.ErrNoBackend
	// ErrNeedsVersioned: a legacy (pre-1.0) DLManagedTensor cannot
	// describe the tensor, which is read-only or has padded sub-byte
	// elements; Export can.
	ErrNeedsVersioned = errors.New("only a versioned (DLPack >= 1.0) export can describe this tensor")
	// ErrNeedsCgo: the program was built without cgo, and exchanging
	// tensors through the C ABI needs it.
	ErrNeedsCgo = errors.New("dltensor needs cgo to exchange tensors through the C ABI: " +
		"build with CGO_ENABLED=1 and a C compiler (gcc or clang on PATH, or named by CC)")
)

// storage is what every handle on one tensor shares.
type storage struct {
	device     dlpack.Device
	dtype      dlpack.DataType
	shape      []int64
	strides    []int64
	byteOffset uint64
	data       unsafe.Pointer
	padded     bool // sub-byte elements take a byte each
	copied     bool // a private copy: made by CopyTo, or imported with IS_COPIED

	refs    atomic.Int64
	exports int            // guarded by exported's lock
	pinner  runtime.Pinner // guarded by exported's lock
	goMem   bool           // data is Go memory: pinned while exported
	release func()         // frees what backs data once the last reference goes
	// managed is the producer's DLManagedTensor(Versioned) of an import,
	// deleted once the last reference goes (no closure: imports are hot).
	managed *dlpack.ManagedTensorVersioned
	legacy  bool          // managed is really a *dlpack.ManagedTensor
	rules   *releaseRules // the release it was imported at; nil: the newest
}

// speaks is the release whose rules the storage follows.
func (s *storage) speaks() *releaseRules {
	if s.rules == nil {
		return newest
	}
	return s.rules
}

// hostReadable reports whether the CPU reads the storage's memory, by the
// rules of the release it follows.
func (s *storage) hostReadable() bool { return s.speaks().readable(int32(s.device.DeviceType)) }

// Tensor is a handle on an N-dimensional array shared with DLPack
// consumers.
type Tensor struct {
	s        *storage
	closed   atomic.Bool
	readOnly atomic.Bool
}

var (
	liveTensors    atomic.Int64
	liveExports    atomic.Int64
	leaked         atomic.Int64
	invalidDeletes atomic.Int64
	leakReporter   atomic.Pointer[func(shape []int64, dtype dlpack.DataType)]
)

// LiveTensors is the number of storages some reference still holds.
func LiveTensors() int64 { return liveTensors.Load() }

// LiveExports is the number of exports whose deleter has not run yet.
func LiveExports() int64 { return liveExports.Load() }

// LeakedImports counts imported tensors that were garbage collected
// without Close; their deleter ran from the finalizer.
func LeakedImports() int64 { return leaked.Load() }

// InvalidDeletes counts deleter calls for exports that were already
// deleted (or never existed); they are ignored.
func InvalidDeletes() int64 { return invalidDeletes.Load() }

// SetLeakReporter sets the function called, from the finalizer goroutine,
// for every imported tensor that was garbage collected without Close. By
// default reports are logged to standard error; nil silences them. It is
// safe to call at any time, from any goroutine.
func SetLeakReporter(report func(shape []int64, dtype dlpack.DataType)) {
	if report == nil {
		report = func([]int64, dlpack.DataType) {}
	}
	leakReporter.Store(&report)
}

func init() {
	SetLeakReporter(func(shape []int64, dtype dlpack.DataType) {
		log.Printf("dltensor: an imported tensor (shape %v, dtype %+v) was garbage collected without Close; "+
			"its deleter ran from the finalizer", shape, dtype)
	})
}

// newTensor makes the first handle on s.
func newTensor(s *storage) *Tensor {
	s.refs.Store(1)
	liveTensors.Add(1)
	return newHandle(s)
}

func newHandle(s *storage) *Tensor {
	t := &Tensor{s: s}
	runtime.SetFinalizer(t, finalize)
	return t
}

// finalize drops the reference of a handle nobody closed. Exports keep
// their storage, not the handle, reachable.
func finalize(t *Tensor) {
	if t.closed.CompareAndSwap(false, true) {
		if t.s.managed != nil {
			leaked.Add(1)
			(*leakReporter.Load())(t.s.shape, t.s.dtype)
		}
		t.s.decRef()
	}
}

// Close drops the handle's reference; the memory is released once no
// other handle and no export holds it. Closing twice, or closing a nil
// *Tensor (what a constructor returns with its error), is harmless.
func (t *Tensor) Close() {
	if t != nil && t.closed.CompareAndSwap(false, true) {
		runtime.SetFinalizer(t, nil)
		t.s.decRef()
	}
}

// Clone returns another handle on the same storage, with its own Close
// and the same read-only setting.
func (t *Tensor) Clone() (*Tensor, error) {
	if err := t.retain(); err != nil {
		return nil, err
	}
	c := newHandle(t.s)
	c.readOnly.Store(t.readOnly.Load())
	return c, nil
}

// RefCount is the number of references to the storage: open handles plus
// live exports.
func (t *Tensor) RefCount() int64 { return t.s.refs.Load() }

// retain takes a reference for a new handle or export. It never revives
// storage whose count already reached zero.
func (t *Tensor) retain() error {
	if t.closed.Load() {
		return ErrClosed
	}
	for {
		n := t.s.refs.Load()
		if n <= 0 {
			return ErrClosed
		}
		if t.s.refs.CompareAndSwap(n, n+1) {
			return nil
		}
	}
}

func (s *storage) decRef() {
	switch n := s.refs.Add(-1); {
	case n == 0:
		liveTensors.Add(-1)
		if s.managed != nil {
			deleteManaged(s.managed, s.legacy)
		}
		if s.release != nil {
			s.release()
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
	return dlpack.DataType{Code: code, Bits: bits, Lanes: 1}
}

// FromSlice wraps s without copying, as a row-major tensor of the given
// shape (by default one dimension of len(s)).
func FromSlice[T Element](s []T, shape ...int64) (*Tensor, error) {
	if len(shape) == 0 {
		shape = []int64{int64(len(s))}
	}
	if len(shape) > MaxDims {
		return nil, broken(dlpack.RuleNdimRange, len(shape), MaxDims)
	}
	st, err := fromSlice(s, shape, contiguousStrides(shape), 0)
	if err != nil {
		return nil, err
	}
	if st.elements() != int64(len(s)) {
		return nil, fmt.Errorf("dltensor: shape %v does not hold %d elements: %w", shape, len(s), ErrMalformed)
	}
	return newTensor(st), nil
}

// Strided wraps s without copying, as a tensor of the given shape and
// strides (in elements, any sign, 0 to broadcast) whose first element lies
// byteOffset bytes into s. Every element must lie inside s.
func Strided[T Element](s []T, shape, strides []int64, byteOffset uint64) (*Tensor, error) {
	st, err := fromSlice(s, shape, strides, byteOffset)
	if err != nil {
		return nil, err
	}
	return newTensor(st), nil
}

func fromSlice[T Element](s []T, shape, strides []int64, byteOffset uint64) (*storage, error) {
	if size := uint64(unsafe.Sizeof(*new(T))); byteOffset%size != 0 {
		return nil, fmt.Errorf("dltensor: byte offset %d is not a multiple of %d: %w", byteOffset, size, ErrMalformed)
	}
	st := &storage{
		device: dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}, dtype: DataTypeOf[T](),
		shape: append([]int64(nil), shape...), strides: append([]int64(nil), strides...),
		byteOffset: byteOffset, data: unsafe.Pointer(unsafe.SliceData(s)), goMem: true,
	}
	if err := st.check(current); err != nil {
		return nil, err
	}
	if lo, hi, ok := st.byteRange(); ok && (lo < 0 || hi > uint64(len(s))*uint64(unsafe.Sizeof(*new(T)))) {
		return nil, fmt.Errorf("dltensor: shape %v, strides %v and byte offset %d reach outside a slice of %d elements: %w",
			shape, strides, byteOffset, len(s), ErrMalformed)
	}
	return st, nil
}

// Scalar returns a 0-dimensional tensor holding v.
func Scalar[T Element](v T) *Tensor {
	t, _ := FromSlice([]T{v}, 1)
	t.s.shape, t.s.strides = []int64{}, []int64{}
	return t
}

// Layout describes memory that FromC wraps.
type Layout struct {
	Device     dlpack.Device   // the zero value means CPU 0
	DataType   dlpack.DataType // the element type
	Shape      []int64         // the extent of each dimension
	Strides    []int64         // in elements; nil means row-major
	ByteOffset uint64          // bytes from the data pointer to the first element
	// SubbytePadded: sub-byte elements take a byte each rather than being
	// packed (DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED).
	SubbytePadded bool
}

// FromC wraps memory that C or a device API allocated, described by l.
// free, if not nil, is called once when the last reference goes. The
// layout passes the same checks as Import; unlike Import, a refused
// layout leaves the memory with the caller (free is not called).
func FromC(data unsafe.Pointer, l Layout, free func(unsafe.Pointer)) (*Tensor, error) {
	if l.Device == (dlpack.Device{}) {
		l.Device.DeviceType = dlpack.DeviceTypeCPU
	}
	if len(l.Shape) > MaxDims {
		return nil, broken(dlpack.RuleNdimRange, len(l.Shape), MaxDims)
	}
	strides := l.Strides
	if strides == nil {
		strides = contiguousStrides(l.Shape)
	}
	st := &storage{
		device: l.Device, dtype: l.DataType, byteOffset: l.ByteOffset, data: data, padded: l.SubbytePadded,
		shape: append([]int64(nil), l.Shape...), strides: append([]int64(nil), strides...),
	}
	if err := st.check(current); err != nil {
		return nil, err
	}
	if free != nil {
		st.release = func() { free(data) }
	}
	return newTensor(st), nil
}

// contiguousStrides is devices.ContiguousStrides, which needs its input
// validated first: shape may be anything here.
func contiguousStrides(shape []int64) []int64 {
	if len(shape) > MaxDims || anyNegative(shape) {
		return make([]int64, len(shape))
	}
	if _, ok := devices.Elements(shape); !ok {
		return make([]int64, len(shape))
	}
	return devices.ContiguousStrides(shape)
}

func anyNegative(xs []int64) bool {
	for _, x := range xs {
		if x < 0 {
			return true
		}
	}
	return false
}

// String describes the handle as Python's repr of a dlgen Tensor does, in
// Go's notation: "Tensor(shape=[2 3], strides=[3 1], dtype=float32,
// device=Device(device_type=kDLCPU, device_id=0), readonly=false)", or
// "Tensor(closed)". It reads no element, so it works for any device.
func (t *Tensor) String() string {
	switch {
	case t == nil:
		return "<nil>"
	case t.closed.Load():
		return "Tensor(closed)"
	}
	s := t.s
	return fmt.Sprintf("Tensor(shape=%v, strides=%v, dtype=%v, device=Device(device_type=%v, device_id=%d), readonly=%t)",
		s.shape, s.strides, s.dtype, s.device.DeviceType, s.device.DeviceID, t.readOnly.Load())
}

// Device is where the data lives.
func (t *Tensor) Device() dlpack.Device { return t.s.device }

// DataType is the element type.
func (t *Tensor) DataType() dlpack.DataType { return t.s.dtype }

// Shape returns a copy of the extents.
func (t *Tensor) Shape() []int64 { return append([]int64(nil), t.s.shape...) }

// Strides returns a copy of the strides, in elements.
func (t *Tensor) Strides() []int64 { return append([]int64(nil), t.s.strides...) }

// NDim is the number of dimensions.
func (t *Tensor) NDim() int { return len(t.s.shape) }

// Size is the number of elements.
func (t *Tensor) Size() int64 { return t.s.elements() }

// ByteOffset is the distance in bytes from Data to the first element.
func (t *Tensor) ByteOffset() uint64 { return t.s.byteOffset }

// Data is the base pointer (the first element is ByteOffset bytes on),
// valid until the handle is closed; after Close it is ErrClosed.
func (t *Tensor) Data() (unsafe.Pointer, error) {
	if t.closed.Load() {
		return nil, ErrClosed
	}
	return t.s.data, nil
}

// ReadOnly reports whether writing through this handle is forbidden.
func (t *Tensor) ReadOnly() bool { return t.readOnly.Load() }

// SetReadOnly forbids writing through this handle and every later export
// of it.
func (t *Tensor) SetReadOnly() { t.readOnly.Store(true) }

// Copied reports whether the storage is a private copy made by CopyTo or
// imported with IS_COPIED.
func (t *Tensor) Copied() bool { return t.s.copied }

// SubbytePadded reports whether sub-byte elements take a byte each.
func (t *Tensor) SubbytePadded() bool { return t.s.padded }

// IsContiguous reports whether the elements are packed in row-major order.
func (t *Tensor) IsContiguous() bool { return t.s.contiguous() }

func (s *storage) contiguous() bool {
	if s.elements() == 0 {
		return true
	}
	want := devices.ContiguousStrides(s.shape)
	for i, st := range s.strides {
		if s.shape[i] != 1 && st != want[i] {
			return false
		}
	}
	return true
}

func (s *storage) elements() int64 {
	n, _ := devices.Elements(s.shape)
	return n
}

// first is the address of the first element; data itself when there is
// none (data may then be NULL, with any byte offset).
func (s *storage) first() unsafe.Pointer {
	if s.elements() == 0 {
		return s.data
	}
	return unsafe.Add(s.data, s.byteOffset)
}

func (s *storage) array() devices.Array {
	return devices.Array{Device: s.device, Data: s.data, ByteOffset: s.byteOffset, Shape: s.shape, Strides: s.strides, ItemSize: s.itemSize()}
}

// readable checks what every view needs and returns the storage; a
// strided view takes any strides, the others contiguous ones.
// dlgen:checker go-read (docs/rules.md lists every checker)
func (t *Tensor) readable(strided bool) (*storage, error) {
	switch s := t.s; {
	case t.closed.Load():
		return nil, ErrClosed
	case !s.hostReadable():
		return nil, &RuleError{Rule: dlpack.RuleDeviceUnreadable, err: ErrNotOnCPU,
			Message: dlpack.RuleDeviceUnreadable.Format(int32(s.device.DeviceType), s.device.DeviceID)}
	case !strided && !s.contiguous():
		return nil, fmt.Errorf("dltensor: strides %v for shape %v; use Contiguous: %w", s.strides, s.shape, ErrNotContiguous)
	default:
		return s, nil
	}
}

// readableAs is readable for a view of elements of type T: the data type
// is T's and the first element is aligned for T (strides count whole
// elements, so every element is).
func readableAs[T Element](t *Tensor, strided bool) (*storage, error) {
	s, err := t.readable(strided)
	switch {
	case err != nil:
		return nil, err
	case s.dtype != DataTypeOf[T]():
		return nil, fmt.Errorf("dltensor: tensor of %+v viewed as %T: %w", s.dtype, *new(T), ErrElementType)
	case s.elements() != 0 && uintptr(s.first())%unsafe.Alignof(*new(T)) != 0:
		hint := "ReadBytes or Contiguous"
		if strided {
			hint = "Contiguous"
		}
		return nil, fmt.Errorf("dltensor: the first element is not aligned for %T; use %s: %w", *new(T), hint, ErrElementType)
	}
	return s, nil
}

func typedView[T Element](t *Tensor) ([]T, error) {
	s, err := readableAs[T](t, false)
	if err != nil {
		return nil, err
	}
	n := s.elements()
	if n == 0 {
		return []T{}, nil
	}
	return unsafe.Slice((*T)(s.first()), n), nil
}

// View returns the elements of a contiguous host-readable tensor as a Go slice that
// aliases its memory; ErrReadOnly for a read-only handle. Keep the handle
// open while the slice is in use.
func View[T Element](t *Tensor) ([]T, error) {
	if err := t.writable("ReadView"); err != nil {
		return nil, err
	}
	return typedView[T](t)
}

// writable refuses a read-only handle, naming reader, the method that
// would serve it; a closed handle is ErrClosed whatever its setting.
func (t *Tensor) writable(reader string) error {
	switch {
	case t.closed.Load():
		return ErrClosed
	case t.readOnly.Load():
		return fmt.Errorf("dltensor: no writable view; use %s or Contiguous: %w", reader, ErrReadOnly)
	}
	return nil
}

// ReadView is View for reading only: it also serves read-only handles,
// and the caller must not write through the slice.
func ReadView[T Element](t *Tensor) ([]T, error) { return typedView[T](t) }

func (t *Tensor) byteView() ([]byte, error) {
	s, err := t.readable(false)
	if err != nil {
		return nil, err
	}
	n, _ := s.contiguousBytes()
	if n == 0 {
		return []byte{}, nil
	}
	return unsafe.Slice((*byte)(s.first()), n), nil
}

// Bytes returns the memory of a contiguous host-readable tensor of any element type
// as raw bytes (packed sub-byte elements share bytes); ErrReadOnly for a
// read-only handle.
func (t *Tensor) Bytes() ([]byte, error) {
	if err := t.writable("ReadBytes"); err != nil {
		return nil, err
	}
	return t.byteView()
}

// ReadBytes is Bytes for reading only: it also serves read-only handles,
// and the caller must not write through the slice.
func (t *Tensor) ReadBytes() ([]byte, error) { return t.byteView() }

// Contiguous returns a writable, row-major copy on the same device; on the
// CPU for host-readable memory whose type has no backend of its own
// (pinned and managed memory), which Go cannot allocate.
func (t *Tensor) Contiguous() (*Tensor, error) {
	dev := t.s.device
	if _, err := devices.For(dev.DeviceType); err != nil && t.s.hostReadable() {
		dev = dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}
	}
	return t.CopyTo(dev)
}

// CopyTo copies the tensor, made row-major, to dev: between host-readable
// memory and a device through the device's backend, within one device type
// through that type's, between host-readable types by the CPU (see package
// devices). The copy is complete when CopyTo returns; it
// is writable and marked Copied.
func (t *Tensor) CopyTo(dev dlpack.Device) (*Tensor, error) {
	if t.closed.Load() {
		return nil, ErrClosed
	}
	s := t.s
	nbytes, ok := s.contiguousBytes()
	if !ok || nbytes > math.MaxInt {
		return nil, fmt.Errorf("dltensor: a copy of %v elements of %d bits does not fit in memory", s.shape, s.elementBits())
	}
	src, dstShape := s.array(), s.shape
	if s.packed() {
		// Packed sub-byte elements are not byte addressable: copy bytes.
		if !s.contiguous() {
			return nil, fmt.Errorf("dltensor: a strided copy of packed %d-bit elements: %w", s.elementBits(), ErrNotContiguous)
		}
		src = devices.Array{Device: s.device, Data: s.data, ByteOffset: s.byteOffset, Shape: []int64{nbytes}, Strides: []int64{1}, ItemSize: 1}
		dstShape = src.Shape
	}
	mem, err := devices.Allocate(dev, int(nbytes))
	if err != nil {
		return nil, err
	}
	dst := devices.Array{Device: dev, Data: mem, Shape: dstShape, Strides: devices.ContiguousStrides(dstShape), ItemSize: src.ItemSize}
	if err := copyAndSync(dst, src); err != nil {
		_ = devices.Free(dev, mem)
		return nil, err
	}
	c := &storage{
		device: dev, dtype: s.dtype, shape: t.Shape(), strides: devices.ContiguousStrides(s.shape),
		data: mem, padded: s.padded, copied: true, goMem: dev.DeviceType == dlpack.DeviceTypeCPU,
	}
	if !c.goMem {
		c.release = func() { _ = devices.Free(dev, mem) }
	}
	return newTensor(c), nil
}

// copyAndSync copies and waits until the copy is complete on both sides.
func copyAndSync(dst, src devices.Array) error {
	if err := devices.Copy(dst, src); err != nil {
		return err
	}
	if err := devices.Sync(dst.Device); err != nil {
		return err
	}
	if src.Device != dst.Device {
		return devices.Sync(src.Device)
	}
	return nil
}
