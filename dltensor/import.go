package dltensor

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync"
	"unsafe"

	"github.com/dlgen/dlgen/devices"
	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// imported holds the managed tensors owned by live imports, so the same
// pointer cannot be consumed twice.
var imported struct {
	sync.Mutex
	m map[unsafe.Pointer]bool
}

func init() { imported.m = map[unsafe.Pointer]bool{} }

func claim(p unsafe.Pointer) error {
	imported.Lock()
	defer imported.Unlock()
	if imported.m[p] {
		return fmt.Errorf("dltensor: this managed tensor was already imported: %w", ErrMalformed)
	}
	imported.m[p] = true
	return nil
}

func unclaim(p unsafe.Pointer) {
	imported.Lock()
	delete(imported.m, p)
	imported.Unlock()
}

// Import takes ownership of a DLManagedTensorVersioned from a producer.
// Everything is validated before the data is touched; on error the
// producer's deleter has already been called and the error wraps
// ErrMalformed. On success, Close (or the last export's deleter, whichever
// comes last) calls the deleter exactly once.
func Import(m *dlpack.ManagedTensorVersioned) (*Tensor, error) {
	if m == nil {
		return nil, fmt.Errorf("dltensor: import of a NULL tensor: %w", ErrMalformed)
	}
	if err := claim(unsafe.Pointer(m)); err != nil {
		return nil, err
	}
	if major := m.Version.Major; major != dlpack.MajorVersion {
		deleteManaged(m, false) // m is gone after this: report what was read before
		return nil, fmt.Errorf("dltensor: DLPack major version %d, this runtime speaks %d.%d: %w",
			major, dlpack.MajorVersion, dlpack.MinorVersion, ErrMalformed)
	}
	nullStridesOK := m.Version.Minor < 2 // NULL strides meant contiguous before 1.2
	t, err := describe(&m.DLTensor, nullStridesOK)
	if err != nil {
		deleteManaged(m, false)
		return nil, err
	}
	t.readOnly = m.Flags&dlpack.FlagBitmaskReadOnly != 0
	t.copied = m.Flags&dlpack.FlagBitmaskIsCopied != 0
	t.managed = m
	return newTensor(t), nil
}

// deleteManaged gives an imported tensor back to its producer.
func deleteManaged(m *dlpack.ManagedTensorVersioned, legacy bool) {
	unclaim(unsafe.Pointer(m))
	if legacy {
		DeleteLegacy((*dlpack.ManagedTensor)(unsafe.Pointer(m)))
	} else {
		DeleteVersioned(m)
	}
}

// ImportLegacy takes ownership of a DLManagedTensor (DLPack < 1.0). As
// NumPy does, it treats the data as read-only: the format cannot say.
func ImportLegacy(m *dlpack.ManagedTensor) (*Tensor, error) {
	if m == nil {
		return nil, fmt.Errorf("dltensor: import of a NULL tensor: %w", ErrMalformed)
	}
	// Stored in the versioned field, flagged legacy: the layouts differ, so
	// it is only ever passed back to DeleteLegacy.
	managed := (*dlpack.ManagedTensorVersioned)(unsafe.Pointer(m))
	if err := claim(unsafe.Pointer(m)); err != nil {
		return nil, err
	}
	t, err := describe(&m.DLTensor, true)
	if err != nil {
		deleteManaged(managed, true)
		return nil, err
	}
	t.readOnly = true
	t.managed, t.legacy = managed, true
	return newTensor(t), nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("dltensor: "+format+": %w", append(args, ErrMalformed)...)
}

// describe validates a foreign DLTensor and copies its description.
func describe(dl *dlpack.Tensor, nullStridesOK bool) (*Tensor, error) {
	ndim := int(dl.Ndim)
	if ndim < 0 || ndim > MaxDims {
		return nil, malformed("ndim %d outside [0, %d]", ndim, MaxDims)
	}
	if strings.HasPrefix(dl.Device.DeviceType.String(), "DeviceType(") {
		return nil, malformed("unknown device type %d", int32(dl.Device.DeviceType))
	}
	code := dlpack.DataTypeCode(dl.Dtype.Code)
	switch {
	case strings.HasPrefix(code.String(), "DataTypeCode("):
		return nil, malformed("unknown dtype code %d", dl.Dtype.Code)
	case code == dlpack.DataTypeCodeOpaqueHandle:
		return nil, malformed("opaque-handle elements cannot be addressed")
	case dl.Dtype.Bits == 0 || dl.Dtype.Lanes == 0:
		return nil, malformed("dtype with %d bits and %d lanes", dl.Dtype.Bits, dl.Dtype.Lanes)
	}
	t := &Tensor{device: dl.Device, dtype: dl.Dtype, data: dl.Data, byteOffset: dl.ByteOffset}
	if ndim > 0 {
		if dl.Shape == nil {
			return nil, malformed("shape is NULL for %d dimensions", ndim)
		}
		dims := make([]int64, 2*ndim) // shape and strides in one allocation
		t.shape, t.strides = dims[:ndim:ndim], dims[ndim:]
		copy(t.shape, unsafe.Slice(dl.Shape, ndim))
		if anyNegative(t.shape) {
			return nil, malformed("negative extent in shape %v", t.shape)
		}
		switch {
		case dl.Strides != nil:
			copy(t.strides, unsafe.Slice(dl.Strides, ndim))
		case nullStridesOK:
			copy(t.strides, devices.ContiguousStrides(t.shape))
		default:
			return nil, malformed("strides is NULL, which DLPack 1.2+ forbids for ndim %d", ndim)
		}
	}
	if err := checkExtent(t); err != nil {
		return nil, err
	}
	if t.Size() > 0 && t.data == nil {
		return nil, malformed("data is NULL for %d elements", t.Size())
	}
	return t, nil
}

// checkExtent proves that every element's byte address, relative to data,
// is computable without overflow and addressable.
func checkExtent(t *Tensor) error {
	item := uint64(t.itemSize())
	if t.byteOffset > math.MaxInt64 {
		return malformed("byte_offset %d overflows", t.byteOffset)
	}
	var elems, span uint64 = 1, 0
	for i, n := range t.shape {
		hi, lo := bits.Mul64(elems, uint64(n))
		if hi != 0 {
			return malformed("shape %v overflows", t.shape)
		}
		elems = lo
		if n == 0 {
			return nil // no element exists, nothing to address
		}
		s := t.strides[i]
		if s == math.MinInt64 {
			return malformed("stride %d overflows", s)
		}
		hi, reach := bits.Mul64(uint64(n-1), uint64(abs(s)))
		if hi != 0 {
			return malformed("shape %v with strides %v overflows", t.shape, t.strides)
		}
		var carry uint64
		span, carry = bits.Add64(span, reach, 0)
		if carry != 0 {
			return malformed("shape %v with strides %v overflows", t.shape, t.strides)
		}
	}
	if span >= math.MaxInt64 {
		return malformed("shape %v with strides %v overflows", t.shape, t.strides)
	}
	hi, bytesSpan := bits.Mul64(span+1, item)
	if hi != 0 || bytesSpan > math.MaxInt64-t.byteOffset || elems > math.MaxInt64/item {
		return malformed("tensor exceeds the addressable extent (%v x %d bytes, strides %v)", t.shape, item, t.strides)
	}
	return nil
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
