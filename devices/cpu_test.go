package devices

import (
	"math"
	"math/rand"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// view is an Array over a Go slice, with the element at index 0 at base.
func view[T any](buf []T, base int64, shape, strides []int64) Array {
	var zero T
	return Array{Data: unsafe.Pointer(&buf[base]), Shape: shape, Strides: strides, ItemSize: int(unsafe.Sizeof(zero))}
}

// reference copies element by element through the index space.
func reference[T any](dst []T, dbase int64, ds []int64, src []T, sbase int64, ss []int64, shape []int64) {
	if n, _ := Elements(shape); n == 0 {
		return
	}
	idx := make([]int64, len(shape))
	for {
		d, s := dbase, sbase
		for k := range idx {
			d += idx[k] * ds[k]
			s += idx[k] * ss[k]
		}
		dst[d] = src[s]
		k := len(idx) - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// layout picks random strides (any sign, some zero for a broadcast source)
// and returns them with the base offset and buffer length they need.
func layout(r *rand.Rand, shape []int64, allowZero bool) (strides []int64, base, length int64) {
	strides = make([]int64, len(shape))
	step := int64(1)
	perm := r.Perm(len(shape))
	for _, k := range perm {
		s := step * int64(1+r.Intn(2))
		if allowZero && r.Intn(5) == 0 {
			s = 0
		}
		if r.Intn(3) == 0 {
			s = -s
		}
		strides[k] = s
		step *= max(shape[k], 1) * 2
	}
	lo, hi := int64(0), int64(0)
	for k, s := range strides {
		if shape[k] == 0 {
			continue
		}
		if s < 0 {
			lo += (shape[k] - 1) * s
		} else {
			hi += (shape[k] - 1) * s
		}
	}
	return strides, -lo, hi - lo + 1
}

func testCopy[T ~uint8 | ~uint16 | ~uint32 | ~uint64](t *testing.T, r *rand.Rand) {
	for trial := 0; trial < 300; trial++ {
		ndim := r.Intn(5)
		shape := make([]int64, ndim)
		for i := range shape {
			shape[i] = int64(r.Intn(5))
			if r.Intn(8) == 0 {
				shape[i] = 1
			}
		}
		ss, sbase, slen := layout(r, shape, true)
		var ds []int64
		var dbase, dlen int64
		if r.Intn(2) == 0 {
			ds, dbase, dlen = ContiguousStrides(shape), 0, max(elements(shape), 1)
		} else {
			ds, dbase, dlen = layout(r, shape, false)
		}
		src := make([]T, slen)
		for i := range src {
			src[i] = T(r.Uint64())
		}
		got, want := make([]T, dlen), make([]T, dlen)
		require.NoError(t, CPU{}.Copy(view(got, dbase, shape, ds), view(src, sbase, shape, ss)))
		reference(want, dbase, ds, src, sbase, ss, shape)
		require.Equal(t, want, got, "shape %v dst strides %v src strides %v", shape, ds, ss)
	}
}

func TestCopyMatchesReferenceForAnyStrides(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	t.Run("1 byte", func(t *testing.T) { testCopy[uint8](t, r) })
	t.Run("2 bytes", func(t *testing.T) { testCopy[uint16](t, r) })
	t.Run("4 bytes", func(t *testing.T) { testCopy[uint32](t, r) })
	t.Run("8 bytes", func(t *testing.T) { testCopy[uint64](t, r) })
}

func TestTransposeTiles(t *testing.T) {
	for _, dims := range [][2]int64{{1, 1}, {3, 70}, {33, 65}, {64, 64}, {100, 7}} {
		rows, cols := dims[0], dims[1]
		src := make([]uint64, rows*cols)
		for i := range src {
			src[i] = uint64(i)
		}
		// src is cols x rows row-major, read transposed.
		got := make([]uint64, rows*cols)
		require.NoError(t, CPU{}.Copy(view(got, 0, []int64{rows, cols}, []int64{cols, 1}), view(src, 0, []int64{rows, cols}, []int64{1, rows})))
		for r := int64(0); r < rows; r++ {
			for c := int64(0); c < cols; c++ {
				require.Equal(t, src[c*rows+r], got[r*cols+c])
			}
		}
	}
}

func TestCopyRejectsMismatchedShapes(t *testing.T) {
	buf := make([]uint32, 8)
	err := CPU{}.Copy(view(buf, 0, []int64{2, 4}, []int64{4, 1}), view(buf, 0, []int64{4, 2}, []int64{2, 1}))
	assert.ErrorContains(t, err, "shapes")
}

func TestUnknownDeviceHasNoBackend(t *testing.T) {
	_, err := For(dlpack.DeviceTypeCUDA)
	assert.EqualError(t, err, "devices: no backend for kDLCUDA")
	assert.ErrorIs(t, err, ErrNoBackend)
	b, err := For(dlpack.DeviceTypeCPU)
	require.NoError(t, err)
	p, err := b.Allocate(dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}, 16)
	require.NoError(t, err)
	assert.Equal(t, make([]byte, 16), unsafe.Slice((*byte)(p), 16))
}

// hostAlias is a backend for a device type whose memory the CPU reads
// directly: it reuses the CPU engine and counts its copies.
type hostAlias struct {
	CPU
	copies *int
}

func (h hostAlias) Copy(dst, src Array) error { *h.copies++; return h.CPU.Copy(dst, src) }

func TestRegisterInstallsABackend(t *testing.T) {
	copies := 0
	Register(dlpack.DeviceTypeExtDev, hostAlias{copies: &copies})
	defer func() {
		mu.Lock()
		delete(backends, dlpack.DeviceTypeExtDev)
		mu.Unlock()
	}()
	b, err := For(dlpack.DeviceTypeExtDev)
	require.NoError(t, err)
	src, dst := []uint32{1, 2, 3}, make([]uint32, 3)
	require.NoError(t, b.Copy(view(dst, 0, []int64{3}, []int64{1}), view(src, 0, []int64{3}, []int64{1})))
	assert.Equal(t, src, dst)
	assert.Equal(t, 1, copies)
}

func elements(shape []int64) int64 {
	n, _ := Elements(shape)
	return n
}

func TestElementsReportsOverflow(t *testing.T) {
	for _, shape := range [][]int64{{1 << 32, 1 << 32}, {3, 6148914691236517206}, {1 << 62, 2}} {
		_, ok := Elements(shape)
		assert.False(t, ok, "%v", shape)
	}
	n, ok := Elements([]int64{1 << 40, 1 << 40, 0})
	assert.True(t, ok)
	assert.Zero(t, n)
	n, ok = Elements([]int64{1 << 31, 1 << 31})
	assert.True(t, ok)
	assert.Equal(t, int64(1<<62), n)
}

func TestCPUAllocateRefusesImpossibleSizes(t *testing.T) {
	sizes := []int{-1}
	if big := uint64(MaxAllocation) + 1; uint64(math.MaxInt) >= big {
		sizes = append(sizes, int(big), math.MaxInt)
	}
	for _, n := range sizes {
		_, err := CPU{}.Allocate(dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}, n)
		assert.Error(t, err, "%d bytes", n)
	}
}
