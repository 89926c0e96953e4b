package dltensor

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/dlgen/dlgen/devices"
	"github.com/dlgen/dlgen/generated/go/dlpack"
)

func malformed(format string, args ...any) error {
	return fmt.Errorf("dltensor: "+format+": %w", append(args, ErrMalformed)...)
}

// describe copies a foreign DLTensor's description and validates it.
func describe(dl *dlpack.Tensor, nullStridesOK, padded bool) (*storage, error) {
	ndim := int(dl.Ndim)
	if ndim < 0 || ndim > MaxDims {
		return nil, malformed("ndim %d outside [0, %d]", ndim, MaxDims)
	}
	s := &storage{device: dl.Device, dtype: dl.Dtype, data: dl.Data, byteOffset: dl.ByteOffset, padded: padded}
	if ndim > 0 {
		if dl.Shape == nil {
			return nil, malformed("shape is NULL for %d dimensions", ndim)
		}
		dims := make([]int64, 2*ndim) // shape and strides in one allocation
		s.shape, s.strides = dims[:ndim:ndim], dims[ndim:]
		copy(s.shape, unsafe.Slice(dl.Shape, ndim))
		switch {
		case dl.Strides != nil:
			copy(s.strides, unsafe.Slice(dl.Strides, ndim))
		case !nullStridesOK:
			return nil, malformed("strides is NULL, which DLPack 1.2+ forbids for ndim %d", ndim)
		default:
			copy(s.strides, contiguousStrides(s.shape))
		}
	}
	if err := s.validate(nullStridesOK); err != nil {
		return nil, err
	}
	return s, nil
}

// subbyteWidth is the only width the sub-byte float codes allow.
var subbyteWidth = map[dlpack.DataTypeCode]uint8{
	dlpack.DataTypeCodeFloat4E2m1fn: 4,
	dlpack.DataTypeCodeFloat6E2m3fn: 6,
	dlpack.DataTypeCodeFloat6E3m2fn: 6,
}

// validate checks everything DLPack requires of s; every tensor this
// package makes or imports passes through it.
func (s *storage) validate(nullStridesOK bool) error {
	if len(s.shape) > MaxDims {
		return malformed("ndim %d outside [0, %d]", len(s.shape), MaxDims)
	}
	if len(s.strides) != len(s.shape) {
		return malformed("%d strides for %d dimensions", len(s.strides), len(s.shape))
	}
	if strings.HasPrefix(s.device.DeviceType.String(), "DeviceType(") {
		return malformed("unknown device type %d", int32(s.device.DeviceType))
	}
	code := s.dtype.Code
	switch {
	case strings.HasPrefix(code.String(), "DataTypeCode("):
		return malformed("unknown dtype code %d", s.dtype.Code)
	case code == dlpack.DataTypeCodeOpaqueHandle:
		return malformed("opaque-handle elements cannot be addressed")
	case s.dtype.Bits == 0 || s.dtype.Lanes == 0:
		return malformed("dtype with %d bits and %d lanes", s.dtype.Bits, s.dtype.Lanes)
	case subbyteWidth[code] != 0 && s.dtype.Bits != subbyteWidth[code]:
		return malformed("%v elements of %d bits (DLPack requires %d)", code, s.dtype.Bits, subbyteWidth[code])
	}
	if anyNegative(s.shape) {
		return malformed("negative extent in shape %v", s.shape)
	}
	if err := s.checkExtent(); err != nil {
		return err
	}
	if s.elements() > 0 && s.data == nil {
		return malformed("data is NULL for %d elements", s.elements())
	}
	return nil
}

// elementBits is the width of one element, all lanes.
func (s *storage) elementBits() int64 { return int64(s.dtype.Bits) * int64(s.dtype.Lanes) }

// packed reports whether elements are narrower than a byte and share
// bytes (DLPack's default for sub-byte types).
func (s *storage) packed() bool { return s.elementBits() < 8 && !s.padded }

// itemSize is the byte distance between elements of stride 1 (1 for
// sub-byte elements, which packed ones only use as a byte granule).
func (s *storage) itemSize() int { return int((s.elementBits() + 7) / 8) }

// bytesFor is the number of bytes n consecutive elements occupy.
func (s *storage) bytesFor(n uint64) (uint64, bool) {
	if s.packed() {
		hi, bits := mul64(n, uint64(s.elementBits()))
		return (bits + 7) / 8, hi == 0 && bits <= math.MaxUint64-7
	}
	hi, b := mul64(n, uint64(s.itemSize()))
	return b, hi == 0
}

// contiguousBytes is the size of a row-major copy of s, if it is
// addressable.
func (s *storage) contiguousBytes() (int64, bool) {
	b, ok := s.bytesFor(uint64(s.elements()))
	return int64(b), ok && b <= math.MaxInt64
}

// byteRange is where the elements lie, in bytes relative to data: [lo,
// hi). ok is false for a tensor with no element (nothing is addressed).
func (s *storage) byteRange() (lo, hi int64, ok bool) {
	if s.elements() == 0 {
		return 0, 0, false
	}
	var neg, pos int64 // element index reach below and above the first
	for i, n := range s.shape {
		reach := (n - 1) * s.strides[i]
		if reach < 0 {
			neg += reach
		} else {
			pos += reach
		}
	}
	// checkExtent proved these cannot overflow.
	if s.packed() {
		first := int64(s.byteOffset) * 8
		return (first + neg*s.elementBits()) / 8, (first + (pos+1)*s.elementBits() + 7) / 8, true
	}
	item := int64(s.itemSize())
	return int64(s.byteOffset) + neg*item, int64(s.byteOffset) + (pos+1)*item, true
}

// checkExtent proves that the element count and every element's byte
// address, relative to data, are computable without overflow, whatever
// extent is 0 and wherever it sits.
func (s *storage) checkExtent() error {
	if s.byteOffset > math.MaxInt64/8 {
		return malformed("byte_offset %d overflows", s.byteOffset)
	}
	var span uint64 // sum of (n-1)*|stride|, in elements
	for i, n := range s.shape {
		st := s.strides[i]
		if st == math.MinInt64 {
			return malformed("stride %d overflows", st)
		}
		hi, reach := mul64(uint64(max(n-1, 0)), uint64(abs(st)))
		var carry uint64
		span, carry = bits.Add64(span, reach, 0)
		if hi != 0 || carry != 0 {
			return malformed("shape %v with strides %v overflows", s.shape, s.strides)
		}
	}
	nonzero, ok := devices.Elements(nonzeroExtents(s.shape))
	if !ok {
		return malformed("shape %v overflows", s.shape)
	}
	if _, ok := s.bytesFor(uint64(nonzero)); !ok || span >= math.MaxInt64/8 {
		return malformed("tensor exceeds the addressable extent (%v x %d bits, strides %v)", s.shape, s.elementBits(), s.strides)
	}
	b, ok := s.bytesFor(span + 1)
	if !ok || b > math.MaxInt64/8-s.byteOffset {
		return malformed("tensor exceeds the addressable extent (%v x %d bits, strides %v)", s.shape, s.elementBits(), s.strides)
	}
	return nil
}

// nonzeroExtents is shape with every 0 read as 1: a tensor whose count
// would overflow but for a 0 extent is refused wherever the 0 sits.
func nonzeroExtents(shape []int64) []int64 {
	out := make([]int64, len(shape))
	for i, n := range shape {
		out[i] = max(n, 1)
	}
	return out
}

func mul64(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
