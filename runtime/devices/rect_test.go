package devices

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/runtime/devices/internal/layouttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moveRect does what clEnqueue*BufferRect does with r: copies its rows
// from side from of src to side to of dst. It fails t where OpenCL would
// refuse the rectangle.
func moveRect(t *testing.T, r rect, dst []byte, to int, src []byte, from int) {
	t.Helper()
	for side, buf := range map[int][]byte{to: dst, from: src} {
		row, slice, off := r.row[side], r.slice[side], r.off[side]
		end := off + (r.region[2]-1)*slice + (r.region[1]-1)*row + r.region[0]
		ok := r.region[0] > 0 && r.region[1] > 0 && r.region[2] > 0 &&
			row >= r.region[0] && slice >= r.region[1]*row && slice%row == 0 && off >= 0 && end <= int64(len(buf))
		require.True(t, ok, "side %d of %+v is no OpenCL rectangle over %d bytes", side, r, len(buf))
	}
	for z := int64(0); z < r.region[2]; z++ {
		for y := int64(0); y < r.region[1]; y++ {
			d := r.off[to] + z*r.slice[to] + y*r.row[to]
			s := r.off[from] + z*r.slice[from] + y*r.row[from]
			copy(dst[d:d+r.region[0]], src[s:s+r.region[0]])
		}
	}
}

func bytesDims(shape, d, s []int64, size int64) []dim {
	dims := make([]dim, len(shape))
	for k, n := range shape {
		dims[k] = dim{n, d[k] * size, s[k] * size}
	}
	return dims
}

func hostAt(buf []byte, off int64) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(unsafe.SliceData(buf)), off)
}

// TestRectanglesCopyAnyLayout runs the three ways the OpenCL backend moves
// data through a model of OpenCL's rectangle copies: rectangles between
// the two arrays, and through a staging buffer laid out for the device
// side as destination or as source.
func TestRectanglesCopyAnyLayout(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	direct := 0
	for trial := 0; trial < 3000; trial++ {
		size := int64([]int{1, 2, 3, 4, 8, 16}[r.Intn(6)])
		var shape []int64
		if trial%10 == 0 {
			shape = layouttest.Tiled(r)
		} else {
			shape = layouttest.Shape(r, r.Intn(5), 6)
		}
		n := elements(shape)
		if n == 0 {
			continue
		}
		ss, sbase, slen := layouttest.Strides(r, shape, true)
		ds, dbase, dlen := layouttest.Strides(r, shape, false)
		if r.Intn(3) == 0 {
			ds, dbase, dlen = ContiguousStrides(shape), 0, n
		}
		src := make([]byte, slen*size)
		r.Read(src)
		want := make([]byte, dlen*size)
		layouttest.Copy(want, dbase, ds, src, sbase, ss, shape, int(size))
		what := func(how string) string {
			return fmt.Sprintf("%s: %d-byte items, shape %v, dst strides %v, src strides %v", how, size, shape, ds, ss)
		}

		plan := planRects(bytesDims(shape, ds, ss, size), size, dbase*size, sbase*size)
		if plan.direct() {
			direct++
		}
		got := make([]byte, len(want))
		require.NoError(t, plan.each(func(rc rect) error { moveRect(t, rc, got, 0, src, 1); return nil }))
		require.True(t, bytes.Equal(want, got), what("rectangles"))

		// The destination on the device: the source packed into staging
		// on the host, then staging to the device.
		packed, base, length := staging(shape, ds, size)
		stage, got := make([]byte, length), make([]byte, len(want))
		copyHost(hostAt(stage, base), hostAt(src, sbase*size), bytesDims(shape, packed, ss, size), size)
		plan = planRects(bytesDims(shape, ds, packed, size), size, dbase*size, base)
		require.NoError(t, plan.each(func(rc rect) error { moveRect(t, rc, got, 0, stage, 1); return nil }))
		require.True(t, bytes.Equal(want, got), what("staged write"))

		// The source on the device: the device to staging, then staging
		// unpacked into the destination on the host.
		packed, base, length = staging(shape, ss, size)
		stage, got = make([]byte, length), make([]byte, len(want))
		plan = planRects(bytesDims(shape, ss, packed, size), size, sbase*size, base)
		require.NoError(t, plan.each(func(rc rect) error { moveRect(t, rc, stage, 1, src, 0); return nil }))
		copyHost(hostAt(got, dbase*size), hostAt(stage, base), bytesDims(shape, ds, packed, size), size)
		require.True(t, bytes.Equal(want, got), what("staged read"))
		assert.LessOrEqual(t, length, n*size, "staging holds each element at most once")
	}
	assert.Greater(t, direct, 500, "many layouts need no staging")
}

func TestStagingOfATransposeIsOneRectangle(t *testing.T) {
	shape, strides := []int64{300, 500}, []int64{1, 300}
	packed, base, length := staging(shape, strides, 4)
	assert.Equal(t, []int64{1, 300}, packed)
	assert.Equal(t, int64(0), base)
	assert.Equal(t, int64(300*500*4), length)
	plan := planRects(bytesDims(shape, strides, packed, 4), 4, 0, 0)
	assert.Equal(t, int64(1), plan.count())
	assert.Equal(t, [3]int64{300 * 500 * 4, 1, 1}, plan.first.region)
	assert.True(t, plan.direct())
}

func TestSpanOverflows(t *testing.T) {
	lo, hi, ok := span([]int64{3, 4}, []int64{-4, 1}, 8)
	assert.True(t, ok)
	assert.Equal(t, int64(-64), lo)
	assert.Equal(t, int64(32), hi)
	_, _, ok = span([]int64{1 << 40, 2}, []int64{1 << 30, 1}, 8)
	assert.False(t, ok)
	_, _, ok = span([]int64{2}, []int64{-1 << 63}, 1)
	assert.False(t, ok)
}
