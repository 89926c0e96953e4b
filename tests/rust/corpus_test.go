//go:build cgo

package rust

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// line is the case as verdicts.rs reads it.
func (c Case) line() string {
	list := func(xs []int64) string {
		if xs == nil {
			return "null"
		}
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = strconv.FormatInt(x, 10)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return fmt.Sprintf("%d %d %d %d %d %d %d %d %d %d %t %s %s", c.Major, c.Minor, c.Flags, c.DeviceType, c.DeviceID,
		c.Code, c.Bits, c.Lanes, c.NDim, c.ByteOffset, c.NullData, list(c.Shape), list(c.Strides))
}

// corpus is a fixed list of tensors at the edges of each rule, then random
// ones drawn from values near every limit (seeded: the same every run).
func corpus() []Case {
	good := Case{Major: dlpack.MajorVersion, Minor: dlpack.MinorVersion, DeviceType: 1, Code: 2, Bits: 32, Lanes: 1,
		NDim: 2, Shape: []int64{2, 3}, Strides: []int64{3, 1}}
	edit := func(f func(*Case)) Case {
		c := good
		c.Shape, c.Strides = append([]int64(nil), good.Shape...), append([]int64(nil), good.Strides...)
		f(&c)
		return c
	}
	cases := []Case{good,
		edit(func(c *Case) { c.Major = 0 }), edit(func(c *Case) { c.Major = 2 }),
		edit(func(c *Case) { c.NDim = -1 }), edit(func(c *Case) { c.NDim = 65; c.Shape, c.Strides = ones(65), ones(65) }),
		edit(func(c *Case) { c.NDim = 0; c.Shape, c.Strides = nil, nil }),
		edit(func(c *Case) { c.Shape = nil }), edit(func(c *Case) { c.Strides = nil }),
		edit(func(c *Case) { c.Strides = nil; c.Minor = 1 }),
		edit(func(c *Case) { c.DeviceType = 99 }), edit(func(c *Case) { c.DeviceType = 2 }),
		edit(func(c *Case) { c.Code = 3 }), edit(func(c *Case) { c.Code = 200 }),
		edit(func(c *Case) { c.Bits = 0 }), edit(func(c *Case) { c.Lanes = 0 }),
		edit(func(c *Case) { c.Code, c.Bits = 17, 8 }), edit(func(c *Case) { c.Code, c.Bits = 17, 4 }),
		edit(func(c *Case) { c.Code, c.Bits = 15, 4 }), edit(func(c *Case) { c.Code, c.Bits = 16, 6 }),
		edit(func(c *Case) { c.Shape[1] = -3 }), edit(func(c *Case) { c.ByteOffset = math.MaxUint64 }),
		edit(func(c *Case) { c.ByteOffset = math.MaxInt64 / 8 }), edit(func(c *Case) { c.ByteOffset = math.MaxInt64/8 + 1 }),
		edit(func(c *Case) { c.Strides[0] = math.MinInt64 }), edit(func(c *Case) { c.Strides[0] = 1 << 61 }),
		edit(func(c *Case) { c.Shape, c.Strides = []int64{1 << 40, 1 << 40}, []int64{1 << 40, 1} }),
		edit(func(c *Case) { c.Shape, c.Strides = []int64{1 << 61, 1}, []int64{0, 0} }),
		edit(func(c *Case) { c.Shape, c.Strides = []int64{1 << 62, 4}, []int64{0, 0} }),
		edit(func(c *Case) { c.Shape, c.Strides = []int64{0, 1 << 62}, []int64{1, 1} }),
		edit(func(c *Case) { c.Shape, c.Strides = []int64{2, 0}, []int64{math.MinInt64, 1} }),
		edit(func(c *Case) { c.NullData = true }),
		edit(func(c *Case) { c.NullData = true; c.Shape[0] = 0; c.ByteOffset = 16 }),
		edit(func(c *Case) { c.Shape, c.Strides = []int64{3, 2}, []int64{-2, -1}; c.ByteOffset = 20 }),
		edit(func(c *Case) { c.Code, c.Bits, c.Shape, c.Strides = 17, 4, []int64{(1 << 61) - 1, 1}, []int64{1, 1} }),
		edit(func(c *Case) { c.Flags = 4; c.Code, c.Bits = 17, 4 }),
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
	extents := []int64{0, 1, 2, 3, -1, 1 << 31, 1 << 40, 1 << 59, 1 << 60, 1 << 61, 1 << 62, math.MaxInt64}
	strides := []int64{0, 1, -1, 2, -2, 3, 1 << 40, 1 << 59, 1 << 61, -(1 << 62), math.MinInt64, math.MaxInt64}
	for range 3000 {
		ndim := int(usually(pick(1, 2, 3, 4), 0, 64, 65, -1))
		dtype := [][3]int64{{2, 32, 1}, {0, 8, 1}, {6, 8, 1}, {5, 64, 1}, {17, 4, 1}, {15, 6, 1}, {2, 16, 4}}[r.Intn(7)]
		c := Case{
			Major: uint32(usually(1, 0, 2)), Minor: uint32(pick(0, 1, 2, 3, 9)),
			Flags:      uint64(pick(0, 0, 1, 2, 4, 7)),
			DeviceType: int32(usually(pick(1, 2, 3, 13, 17, 18), 19, 99, -1)), DeviceID: int32(pick(0, 1, -1)),
			Code:  uint8(usually(dtype[0], 3, 18, 200, 16, 17)),
			Bits:  uint8(usually(dtype[1], 0, 1, 4, 6, 255)),
			Lanes: uint16(usually(dtype[2], 0, 2, 65535)),
			NDim:  int32(ndim), ByteOffset: uint64(usually(pick(0, 8), 1, 1<<59, math.MaxInt64/8, 1<<60, math.MaxInt64)),
			NullData: r.Intn(12) == 0,
		}
		if r.Intn(16) == 0 {
			c.ByteOffset = math.MaxUint64 - uint64(r.Intn(8))
		}
		if ndim > 0 {
			if r.Intn(20) > 0 {
				c.Shape = make([]int64, ndim)
				for i := range c.Shape {
					c.Shape[i] = usually(int64(r.Intn(5)), extents...)
				}
			}
			if r.Intn(10) > 0 {
				c.Strides = make([]int64, ndim)
				for i := range c.Strides {
					c.Strides[i] = usually(pick(0, 1, -1, 4, 7), strides...)
				}
			}
		}
		cases = append(cases, c)
	}
	return cases
}

func ones(n int) []int64 {
	xs := make([]int64, n)
	for i := range xs {
		xs[i] = 1
	}
	return xs
}

// TestImportVerdictsEqualTheGoRuntime imports every tensor of the corpus
// with the Go runtime (dltensor.Import) and with the newest crate's
// ManagedTensor::from_versioned (tests/rust/verdicts.rs): both accept or
// both refuse, with the same words, and each calls the deleter once.
func TestImportVerdictsEqualTheGoRuntime(t *testing.T) {
	s, releases := Releases(t)
	require.Equal(t, dlpack.MinorVersion, int(s.At(releases[len(releases)-1]).Versions.Minor.Value),
		"the Go runtime speaks the newest release")
	src, err := os.ReadFile(filepath.Join(tooltest.Root(), "tests", "rust", "verdicts.rs"))
	require.NoError(t, err)
	dir := Probe(t, Crate(t, s, releases[len(releases)-1]), "verdicts", src)

	cases := corpus()
	var input strings.Builder
	for _, c := range cases {
		input.WriteString(c.line() + "\n")
	}
	in := filepath.Join(t.TempDir(), "corpus.txt")
	require.NoError(t, os.WriteFile(in, []byte(input.String()), 0o644))
	out := RunCargo(t, dir, "run", "--quiet", "--features", "safe", "--bin", "verdicts", "--", in)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, len(cases), "one verdict per case")
	refused := 0
	for i, c := range cases {
		message, calls, err := goVerdict(c)
		require.NoError(t, err, c.line())
		assert.Equal(t, 1, calls, "Go: deleter calls for %s", c.line())
		want := "ok"
		if message != "" {
			want, refused = "refused: "+message, refused+1
		}
		assert.Equal(t, "1 "+want, lines[i], "case %d: %s", i, c.line())
	}
	fmt.Printf("Rust and Go import verdicts agree on %d tensors (%d refused, same words)\n", len(cases), refused)
}
