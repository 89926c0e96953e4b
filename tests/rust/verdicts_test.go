//go:build cgo

package rust

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/dlgen/dlgen/conformance/corpus"
	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tensors is a fixed list of tensors at the edges of each rule, then
// random ones drawn from values near every limit (seeded: the same every
// run), versioned and legacy. Data is an address, never read, so that a
// message that names it is the same in both runtimes.
func tensors() []corpus.Tensor {
	current := [2]uint32{dlpack.MajorVersion, dlpack.MinorVersion}
	good := corpus.Tensor{Version: &current, Device: [2]int32{1, 0}, Code: 2, Bits: 32, Lanes: 1,
		NDim: 2, Shape: []int64{2, 3}, Strides: []int64{3, 1}, Data: corpus.Address, Address: 1 << 20}
	edit := func(f func(*corpus.Tensor)) corpus.Tensor {
		t := good
		t.Shape, t.Strides = append([]int64(nil), good.Shape...), append([]int64(nil), good.Strides...)
		f(&t)
		return t
	}
	version := func(major, minor uint32) *[2]uint32 { return &[2]uint32{major, minor} }
	const maxAddress = math.MaxUint64
	out := []corpus.Tensor{good,
		edit(func(t *corpus.Tensor) { t.Version = version(0, 0) }),
		edit(func(t *corpus.Tensor) { t.Version = version(2, 0); t.Strides = nil }),
		edit(func(t *corpus.Tensor) { t.Version = nil }),
		edit(func(t *corpus.Tensor) { t.Version, t.Strides = nil, nil }),
		edit(func(t *corpus.Tensor) { t.NDim = -1 }),
		edit(func(t *corpus.Tensor) { t.NDim = 65; t.Shape, t.Strides = ones(64), ones(64) }),
		edit(func(t *corpus.Tensor) { t.NDim = 0; t.Shape, t.Strides = nil, nil }),
		edit(func(t *corpus.Tensor) { t.Shape = nil }),
		edit(func(t *corpus.Tensor) { t.Strides = nil }),
		edit(func(t *corpus.Tensor) { t.Strides = nil; t.Version = version(1, 1) }),
		edit(func(t *corpus.Tensor) { t.Device[0] = 99 }),
		edit(func(t *corpus.Tensor) { t.Device[0] = 2 }),
		edit(func(t *corpus.Tensor) { t.Code = 3 }),
		edit(func(t *corpus.Tensor) { t.Code = 200 }),
		edit(func(t *corpus.Tensor) { t.Bits = 0 }),
		edit(func(t *corpus.Tensor) { t.Lanes = 0 }),
		edit(func(t *corpus.Tensor) { t.Code, t.Bits = 17, 8 }),
		edit(func(t *corpus.Tensor) { t.Code, t.Bits = 17, 4 }),
		edit(func(t *corpus.Tensor) { t.Code, t.Bits = 15, 4 }),
		edit(func(t *corpus.Tensor) { t.Code, t.Bits = 10, 16 }),
		edit(func(t *corpus.Tensor) { t.Shape[1] = -3 }),
		edit(func(t *corpus.Tensor) { t.ByteOffset = math.MaxUint64 }),
		edit(func(t *corpus.Tensor) { t.ByteOffset = 1 << 63 }),
		edit(func(t *corpus.Tensor) { t.ByteOffset = 1<<63 - 24 }),
		edit(func(t *corpus.Tensor) { t.ByteOffset = 1<<63 - 25 }),
		edit(func(t *corpus.Tensor) { t.Strides[0] = math.MinInt64 }),
		edit(func(t *corpus.Tensor) { t.Strides[0] = 1 << 61 }),
		edit(func(t *corpus.Tensor) { t.Strides[0] = 1<<61 - 1 }),
		edit(func(t *corpus.Tensor) { t.Shape, t.Strides = []int64{1 << 40, 1 << 40}, []int64{1 << 40, 1} }),
		edit(func(t *corpus.Tensor) { t.Shape, t.Strides = []int64{1 << 61, 1}, []int64{0, 0} }),
		edit(func(t *corpus.Tensor) { t.Shape, t.Strides = []int64{1<<61 - 1, 1}, []int64{0, 0} }),
		edit(func(t *corpus.Tensor) { t.Shape, t.Strides = []int64{1 << 62, 4}, []int64{0, 0} }),
		edit(func(t *corpus.Tensor) { t.Shape, t.Strides = []int64{0, 1 << 62}, []int64{1, 1} }),
		edit(func(t *corpus.Tensor) { t.Shape, t.Strides = []int64{2, 0}, []int64{math.MinInt64, 1} }),
		edit(func(t *corpus.Tensor) { t.Shape, t.Strides = []int64{2, 2}, []int64{1 << 60, -(1 << 60)} }),
		edit(func(t *corpus.Tensor) { t.Data = corpus.Null }),
		edit(func(t *corpus.Tensor) { t.Data = corpus.Null; t.Shape[0] = 0; t.ByteOffset = 16 }),
		edit(func(t *corpus.Tensor) { t.Shape, t.Strides = []int64{3, 2}, []int64{-2, -1}; t.ByteOffset = 20 }),
		edit(func(t *corpus.Tensor) { t.Shape, t.Strides = []int64{2}, []int64{-(1 << 40)}; t.NDim = 1 }),
		edit(func(t *corpus.Tensor) { t.Address = maxAddress - 15 }),
		edit(func(t *corpus.Tensor) { t.Address = maxAddress - 23 }),
		edit(func(t *corpus.Tensor) { t.Address, t.ByteOffset = maxAddress-15, 32 }),
		edit(func(t *corpus.Tensor) {
			t.Code, t.Bits, t.Shape, t.Strides = 17, 4, []int64{1<<62 - 1, 1}, []int64{1, 1}
		}),
		edit(func(t *corpus.Tensor) { t.Flags = 4; t.Code, t.Bits = 17, 4 }),
		edit(func(t *corpus.Tensor) { t.Version = nil; t.Code, t.Bits, t.Shape = 1, 1, []int64{1 << 62, 2} }),
	}
	r := rand.New(rand.NewSource(17))
	pick := func(xs ...int64) int64 { return xs[r.Intn(len(xs))] }
	// usually returns the well-formed value, else one of the others.
	usually := func(good int64, others ...int64) int64 {
		if r.Intn(8) > 0 {
			return good
		}
		return pick(others...)
	}
	extents := []int64{0, 1, 2, 3, -1, 1 << 31, 1 << 40, 1 << 59, 1<<61 - 1, 1 << 61, 1 << 62, math.MaxInt64}
	strides := []int64{0, 1, -1, 2, -2, 3, 1 << 40, 1 << 59, 1<<61 - 1, 1 << 61, -(1 << 62), 1<<62 - 1,
		math.MinInt64, math.MaxInt64}
	offsets := []int64{1, 1 << 59, 1 << 62, math.MaxInt64 - 7, math.MaxInt64}
	addresses := []uint64{4096, 1 << 20, 1 << 40, 1 << 62, 1 << 63, maxAddress - 4095, maxAddress - 15, maxAddress}
	for range 3000 {
		ndim := int(usually(pick(1, 2, 3, 4), 0, 64, 65, -1))
		dtype := [][3]int64{{2, 32, 1}, {0, 8, 1}, {6, 8, 1}, {5, 64, 1}, {17, 4, 1}, {15, 6, 1}, {1, 1, 1}, {2, 16, 4}}[r.Intn(8)]
		t := corpus.Tensor{
			Version:    version(uint32(usually(1, 0, 2)), uint32(pick(0, 1, 2, 3, 9))),
			Flags:      uint64(pick(0, 0, 1, 2, 4, 7)),
			Device:     [2]int32{int32(usually(pick(1, 2, 3, 13, 17, 18), 19, 99, -1)), int32(pick(0, 1, -1))},
			Code:       uint8(usually(dtype[0], 3, 18, 200, 16, 17)),
			Bits:       uint8(usually(dtype[1], 0, 1, 4, 6, 255)),
			Lanes:      uint16(usually(dtype[2], 0, 2, 65535)),
			NDim:       int32(ndim),
			Data:       corpus.Address,
			Address:    addresses[r.Intn(len(addresses))],
			ByteOffset: uint64(usually(pick(0, 8), offsets...)),
		}
		switch r.Intn(12) {
		case 0:
			t.Data, t.Address = corpus.Null, 0
		case 1:
			t.Version, t.Flags = nil, 0
		}
		if r.Intn(16) == 0 {
			t.ByteOffset = math.MaxUint64 - uint64(r.Intn(8))
		}
		if ndim > 0 {
			n := min(ndim, 64)
			if r.Intn(20) > 0 {
				t.Shape = make([]int64, n)
				for i := range t.Shape {
					t.Shape[i] = usually(int64(r.Intn(5)), extents...)
				}
			}
			if r.Intn(10) > 0 {
				t.Strides = make([]int64, n)
				for i := range t.Strides {
					t.Strides[i] = usually(pick(0, 1, -1, 4, 7), strides...)
				}
			}
		}
		out = append(out, t)
	}
	return out
}

func ones(n int) []int64 {
	xs := make([]int64, n)
	for i := range xs {
		xs[i] = 1
	}
	return xs
}

// TestImportVerdictsEqualTheGoRuntime imports every tensor of tensors()
// with the Go runtime (dltensor.Import and ImportLegacy) and with the
// newest release's crate (ManagedTensor::from_versioned and from_legacy,
// through importer.rs): both accept or both refuse, by the same rule in
// the same words, and each calls the deleter once, after the release of an
// accepted tensor.
func TestImportVerdictsEqualTheGoRuntime(t *testing.T) {
	s, _ := Releases(t)
	newest := s.At(s.Newest())
	require.Equal(t, [2]int64{dlpack.MajorVersion, dlpack.MinorVersion},
		[2]int64{newest.Versions.Major.Value, newest.Versions.Minor.Value}, "the Go runtime speaks the newest release")
	cases := tensors()
	rust := Importer{}.Run(t, cases)
	refused, rules := 0, map[string]bool{}
	for i, c := range cases {
		want, err := goVerdict(c)
		require.NoError(t, err, c.Line())
		assert.Equal(t, 1, want.Calls, "Go: deleter calls for %s", c.Line())
		if !want.Accept {
			refused++
			rules[want.Rule] = true
		}
		got := rust[i]
		got.Read = ""
		assert.Equal(t, want, got, "case %d: %s", i, c.Line())
	}
	fmt.Printf("Rust and Go import verdicts agree on %d tensors (%d refused, by %d rules, in the same words)\n",
		len(cases), refused, len(rules))
}
