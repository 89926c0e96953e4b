package dltensor

import (
	"math/bits"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// The checks of docs/rules.md, in their order, reading the rule tables of
// package dlpack (generated from the schema): every tensor this package
// imports or makes passes them, and a refusal is a *RuleError in the words
// every dlgen module uses for it.
//
// dlgen:checker go-import (docs/rules.md lists every checker)

// ptrBits is P, the width of a pointer: every element count, byte offset and
// byte extent stays below 2^(P-1), and every address, the end of the last
// element's included, below 2^P.
const ptrBits = 8 * unsafe.Sizeof(uintptr(0))

// bound is 2^(P-1).
const bound = uint64(1) << (ptrBits - 1)

// maxAddress is 2^P - 1, the highest address.
const maxAddress = ^uint64(0) >> (64 - ptrBits)

// RuleError is a tensor that breaks a rule: Rule says which, Message is its
// words, the same in every language dlgen writes. It wraps ErrMalformed,
// or ErrNotOnCPU for memory the CPU cannot read.
type RuleError struct {
	Rule    dlpack.Rule // the rule the tensor breaks
	Message string      // the rule's words for this tensor
	err     error
}

// Error is the message, decorated as every dltensor error is.
func (e *RuleError) Error() string { return "dltensor: " + e.Message + ": " + e.err.Error() }

// Unwrap returns ErrMalformed or ErrNotOnCPU.
func (e *RuleError) Unwrap() error { return e.err }

// broken is the error of a tensor that breaks rule r; args are the
// parameters of its message, integers as plain integer types (not enum
// types, whose String would show).
func broken(r dlpack.Rule, args ...any) error {
	return &RuleError{Rule: r, Message: r.Format(args...), err: ErrMalformed}
}

// current is the version of the tensors this package makes.
var current = dlpack.Version{Major: dlpack.MajorVersion, Minor: dlpack.MinorVersion}

// nullAllowed reports whether rule n lets a pointer field be NULL in a
// tensor of version v (zero for a legacy tensor, older than every
// versioned one) with ndim dimensions, empty when it has no elements.
func nullAllowed(n dlpack.Nullable, v dlpack.Version, ndim int, empty bool) bool {
	when := n.When
	if changed := (dlpack.Version{Major: n.Changed[0], Minor: n.Changed[1]}); changed != (dlpack.Version{}) && older(v, changed) {
		when = n.Before
	}
	switch when {
	case dlpack.NullAlways:
		return true
	case dlpack.NullIfNdimZero:
		return ndim == 0
	case dlpack.NullIfNoElements:
		return empty
	}
	return false
}

// older compares versions as versions: major first, then minor.
func older(v, w dlpack.Version) bool {
	return v.Major < w.Major || v.Major == w.Major && v.Minor < w.Minor
}

// describe copies a foreign DLTensor's description and checks it by the
// rules of release r; v is the tensor's version (zero for a legacy one).
// The major version is the caller's to check, before anything else is read.
func describe(dl *dlpack.Tensor, v dlpack.Version, padded bool, r *releaseRules) (*storage, error) {
	ndim := int(dl.Ndim)
	if ndim < 0 || ndim > dlpack.MaxDims {
		return nil, broken(dlpack.RuleNdimRange, ndim, dlpack.MaxDims)
	}
	if dl.Shape == nil && !nullAllowed(dlpack.TensorShapeNullable, v, ndim, false) {
		return nil, broken(dlpack.RuleShapeNull, ndim)
	}
	if dl.Strides == nil && !nullAllowed(dlpack.TensorStridesNullable, v, ndim, false) {
		from := dlpack.TensorStridesNullable.Changed
		return nil, broken(dlpack.RuleStridesNull, ndim, v.Major, v.Minor, from[0], from[1])
	}
	s := copyDescription(dl, padded)
	s.rules = r
	if err := s.check(v); err != nil {
		return nil, err
	}
	return s, nil
}

// copyDescription copies a foreign DLTensor's description into Go memory,
// once its ndim and its shape and strides pointers are known to be usable.
func copyDescription(dl *dlpack.Tensor, padded bool) *storage {
	ndim := int(dl.Ndim)
	s := &storage{device: dl.Device, dtype: dl.Dtype, data: dl.Data, byteOffset: dl.ByteOffset, padded: padded}
	if ndim > 0 {
		dims := make([]int64, 2*ndim) // shape and strides in one allocation
		s.shape, s.strides = dims[:ndim:ndim], dims[ndim:]
		copy(s.shape, unsafe.Slice(dl.Shape, ndim))
		if dl.Strides != nil {
			copy(s.strides, unsafe.Slice(dl.Strides, ndim))
		} else { // row-major, as NULL meant
			copy(s.strides, contiguousStrides(s.shape))
		}
	}
	return s
}

// check makes the checks that follow the pointer fields', in the order of
// docs/rules.md, on a tensor of version v, by the rules of the release
// s speaks; every tensor this package makes or imports passes through it.
func (s *storage) check(v dlpack.Version) error {
	if len(s.shape) > dlpack.MaxDims {
		return broken(dlpack.RuleNdimRange, len(s.shape), dlpack.MaxDims)
	}
	if len(s.strides) != len(s.shape) {
		return broken(dlpack.RuleStridesCount, len(s.strides), len(s.shape))
	}
	if err := s.speaks().checkDtype(s.dtype); err != nil {
		return err
	}
	for i, n := range s.shape {
		if n < 0 {
			return broken(dlpack.RuleShapeNegative, n, i)
		}
	}
	if err := s.checkLimits(); err != nil {
		return err
	}
	n := s.elements()
	if s.data == nil && !nullAllowed(dlpack.TensorDataNullable, v, len(s.shape), n == 0) {
		return broken(dlpack.RuleDataNull, n)
	}
	if n == 0 {
		return nil // nothing is addressed
	}
	low, high := s.reach()
	lowBytes, _ := s.bytesFor(low)
	endBytes, _ := s.bytesFor(high + 1)
	// The first byte lies byte_offset - lowBytes from data, the end
	// byte_offset + endBytes: checkLimits bounds both.
	addr := uint64(uintptr(s.data))
	if lowBytes > s.byteOffset && addr < lowBytes-s.byteOffset || addr > maxAddress-(s.byteOffset+endBytes) {
		return broken(dlpack.RuleAddressLimit, uintptr(s.data), s.byteOffset)
	}
	return nil
}

// checkLimits makes the address-space checks that need no data pointer.
func (s *storage) checkLimits() error {
	const log2 = ptrBits - 1
	if s.byteOffset >= bound {
		return broken(dlpack.RuleByteOffsetLimit, s.byteOffset, log2)
	}
	count := uint64(1) // every 0 extent read as 1: the verdict never depends on where a 0 sits
	for _, n := range s.shape {
		hi, lo := bits.Mul64(count, uint64(max(n, 1)))
		if hi != 0 || lo >= bound {
			return broken(dlpack.RuleSizeLimit, log2)
		}
		count = lo
	}
	if !s.fits(count) {
		return broken(dlpack.RuleSizeLimit, log2)
	}
	for i, st := range s.strides {
		if !s.fits(abs(st)) {
			return broken(dlpack.RuleStrideLimit, st, i, log2)
		}
	}
	if s.elements() == 0 {
		return nil
	}
	low, high := s.reach()
	span, carry := bits.Add64(low, high, 1)
	if carry != 0 || !s.fits(span) {
		return broken(dlpack.RuleSpanLimit, log2)
	}
	if end, _ := s.bytesFor(high + 1); s.byteOffset+end >= bound {
		return broken(dlpack.RuleOffsetLimit, s.byteOffset, log2)
	}
	return nil
}

// reach is how many elements the strides reach below the first element
// and above it, saturated at 2^64-1; the tensor must have elements.
func (s *storage) reach() (low, high uint64) {
	for i, n := range s.shape {
		hi, r := bits.Mul64(uint64(n-1), abs(s.strides[i]))
		if hi != 0 {
			r = ^uint64(0)
		}
		var carry uint64
		if s.strides[i] < 0 {
			low, carry = bits.Add64(low, r, 0)
			low |= -carry
		} else {
			high, carry = bits.Add64(high, r, 0)
			high |= -carry
		}
	}
	return low, high
}

// fits reports whether n elements, and the bytes they take, are below
// 2^(P-1).
func (s *storage) fits(n uint64) bool {
	b, ok := s.bytesFor(n)
	return n < bound && ok && b < bound
}

// elementBits is the width of one element, all lanes.
func (s *storage) elementBits() int64 { return int64(s.dtype.Bits) * int64(s.dtype.Lanes) }

// packed reports whether elements are narrower than a byte and share
// bytes (DLPack's default for sub-byte types).
func (s *storage) packed() bool { return s.elementBits() < 8 && !s.padded }

// itemSize is the byte distance between elements of stride 1 (1 for
// sub-byte elements, which packed ones only use as a byte granule).
func (s *storage) itemSize() int { return int((s.elementBits() + 7) / 8) }

// bytesFor is the number of bytes n consecutive elements occupy; false if
// it reaches 2^64.
func (s *storage) bytesFor(n uint64) (uint64, bool) {
	if s.packed() {
		hi, lo := bits.Mul64(n, uint64(s.elementBits()))
		lo, carry := bits.Add64(lo, 7, 0)
		hi += carry
		return hi<<61 | lo>>3, hi>>3 == 0
	}
	hi, b := bits.Mul64(n, uint64(s.itemSize()))
	return b, hi == 0
}

// contiguousBytes is the size of a row-major copy of s, if it is
// addressable (a checked tensor's is, below 2^(P-1)).
func (s *storage) contiguousBytes() (int64, bool) {
	b, ok := s.bytesFor(uint64(s.elements()))
	return int64(b), ok && b < bound
}

// byteRange is where the elements of a checked tensor lie, in bytes from
// data: [lo, hi). ok is false for a tensor with no element (nothing is
// addressed).
func (s *storage) byteRange() (lo int64, hi uint64, ok bool) {
	if s.elements() == 0 {
		return 0, 0, false
	}
	low, high := s.reach()
	lowBytes, _ := s.bytesFor(low)
	endBytes, _ := s.bytesFor(high + 1)
	return int64(s.byteOffset) - int64(lowBytes), s.byteOffset + endBytes, true
}

func abs(x int64) uint64 {
	if x < 0 {
		return -uint64(x)
	}
	return uint64(x)
}
