package dltensor_test

import (
	"math/rand"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// indices calls f with every index of shape in row-major order, each
// worked out from its position.
func indices(shape []int64, f func(index []int64)) {
	n := int64(1)
	for _, extent := range shape {
		n *= extent
	}
	index := make([]int64, len(shape))
	for pos := int64(0); pos < n; pos++ {
		rest := pos
		for k := len(shape) - 1; k >= 0; k-- {
			index[k], rest = rest%shape[k], rest/shape[k]
		}
		f(index)
	}
}

// TestStridedViewReadsEveryLayout: over random layouts (any dimension
// order, gaps, negative strides, broadcasts) the view's elements, read
// by At and by Rows, are the copy engine's row-major copy.
func TestStridedViewReadsEveryLayout(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	checked := 0
	for trial := 0; trial < 300; trial++ {
		shape := make([]int64, r.Intn(5))
		for k := range shape {
			shape[k] = int64(r.Intn(5))
		}
		strides := make([]int64, len(shape))
		order := r.Perm(len(shape))
		step := int64(1 + r.Intn(2))
		var base int64
		for _, k := range order {
			switch r.Intn(6) {
			case 0:
				strides[k] = 0 // broadcast
			case 1:
				strides[k] = -step
				base += max(shape[k]-1, 0) * step
			default:
				strides[k] = step
			}
			step *= max(shape[k], 1) + int64(r.Intn(2))
		}
		if r.Intn(3) == 0 && len(shape) > 0 {
			strides[len(shape)-1] = 1 // rows are slices
		}
		mem := make([]int32, step+base+1)
		for i := range mem {
			mem[i] = int32(i)
		}
		tensor, err := dltensor.Strided(mem, shape, strides, uint64(4*base))
		if err != nil {
			continue // a layout whose elements reach outside mem
		}
		c, err := tensor.Contiguous()
		require.NoError(t, err)
		want, err := dltensor.ReadView[int32](c)
		require.NoError(t, err)
		v, err := dltensor.ViewStrided[int32](tensor)
		require.NoError(t, err)
		var got []int32
		indices(shape, func(index []int64) { got = append(got, v.At(index...)) })
		assert.Equal(t, want, append([]int32{}, got...), "shape %v strides %v: At", shape, strides)
		assert.Equal(t, tensor.Shape(), v.Shape())
		assert.Equal(t, tensor.Strides(), v.Strides())
		if rows, err := v.Rows(); err == nil {
			got = got[:0]
			for _, row := range rows {
				got = append(got, row...)
			}
			assert.Equal(t, want, append([]int32{}, got...), "shape %v strides %v: Rows", shape, strides)
		} else {
			assert.ErrorIs(t, err, dltensor.ErrNotContiguous)
		}
		c.Close()
		tensor.Close()
		checked++
	}
	assert.Greater(t, checked, 250, "layouts checked")
}

func TestStridedViewWritesInPlace(t *testing.T) {
	mem := []float64{0, 1, 2, 3, 4, 5}
	transposed, _ := dltensor.Strided(mem, []int64{3, 2}, []int64{1, 3}, 0)
	defer transposed.Close()
	v, err := dltensor.ViewStrided[float64](transposed)
	require.NoError(t, err)
	v.Set(40, 1, 1)
	assert.Equal(t, 40.0, mem[4])
	assert.Equal(t, 2.0, v.At(2, 0))
}

// TestStridedViewMatrixIsGonumsLayout: a block of a row-major matrix is
// data, rows, columns and a row stride past the columns; other layouts
// are refused.
func TestStridedViewMatrixIsGonumsLayout(t *testing.T) {
	mem := make([]float32, 20) // 4x5
	for i := range mem {
		mem[i] = float32(i)
	}
	block, _ := dltensor.Strided(mem, []int64{3, 2}, []int64{5, 1}, 4*(5+2)) // rows 1-3, columns 2-3
	defer block.Close()
	v, _ := dltensor.ReadViewStrided[float32](block)
	data, rows, cols, stride, err := v.Matrix()
	require.NoError(t, err)
	assert.Equal(t, []int{3, 2, 5}, []int{rows, cols, stride})
	assert.Equal(t, []float32{7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, data)
	assert.Equal(t, &mem[7], &data[0], "no copy")

	row, _ := dltensor.Strided(mem, []int64{1, 3}, []int64{-7, 1}, 0) // one row: its stride means nothing
	defer row.Close()
	v, _ = dltensor.ReadViewStrided[float32](row)
	data, rows, cols, stride, err = v.Matrix()
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 1, 2}, data)
	assert.Equal(t, []int{1, 3, 3}, []int{rows, cols, stride})

	for _, l := range []struct{ shape, strides []int64 }{
		{[]int64{4, 5}, []int64{1, 4}},        // column-major
		{[]int64{4, 3}, []int64{5, 2}},        // columns with gaps
		{[]int64{4, 5}, []int64{-5, 1}},       // rows descending
		{[]int64{4, 5}, []int64{0, 1}},        // a broadcast row
		{[]int64{2, 5}, []int64{3, 1}},        // overlapping rows
		{[]int64{2, 2, 5}, []int64{10, 5, 1}}, // 3-d
	} {
		off := uint64(0)
		if l.strides[0] < 0 {
			off = 4 * 15
		}
		tensor, err := dltensor.Strided(mem, l.shape, l.strides, off)
		require.NoError(t, err)
		v, _ := dltensor.ReadViewStrided[float32](tensor)
		_, _, _, _, err = v.Matrix()
		assert.ErrorIs(t, err, dltensor.ErrNotContiguous, "%v %v", l.shape, l.strides)
		tensor.Close()
	}
}

func TestStridedViewRefusals(t *testing.T) {
	mem := []int16{1, 2, 3, 4}
	tensor, _ := dltensor.Strided(mem, []int64{2, 2}, []int64{1, 2}, 0)
	_, err := dltensor.ViewStrided[uint16](tensor)
	assert.ErrorIs(t, err, dltensor.ErrElementType)
	assert.EqualError(t, err, "dltensor: tensor of int16 viewed as uint16: wrong element type")
	v, _ := dltensor.ViewStrided[int16](tensor)
	_, err = v.Rows()
	assert.ErrorIs(t, err, dltensor.ErrNotContiguous)
	assert.EqualError(t, err, "dltensor: the last dimension has stride 2, so a row is no slice; use At: tensor is not contiguous")
	assert.PanicsWithValue(t, "dltensor: index [2 0] out of range for shape [2 2]", func() { v.At(2, 0) })
	assert.PanicsWithValue(t, "dltensor: index [0 -1] out of range for shape [2 2]", func() { v.Set(0, 0, -1) })
	assert.PanicsWithValue(t, "dltensor: index [1] of 1 dimensions for shape [2 2]", func() { v.At(1) })

	tensor.SetReadOnly()
	_, err = dltensor.ViewStrided[int16](tensor)
	assert.ErrorIs(t, err, dltensor.ErrReadOnly)
	assert.EqualError(t, err, "dltensor: no writable view; use ReadViewStrided or Contiguous: tensor is read-only")
	_, err = dltensor.ReadViewStrided[int16](tensor)
	assert.NoError(t, err)
	tensor.Close()
	_, err = dltensor.ReadViewStrided[int16](tensor)
	assert.ErrorIs(t, err, dltensor.ErrClosed)

	buf := make([]byte, 16)
	gpu, err := dltensor.FromC(unsafe.Pointer(&buf[0]), dltensor.Layout{Device: dlpack.Device{DeviceType: dlpack.DeviceTypeCUDA}, DataType: dltensor.DataTypeOf[float32](), Shape: []int64{2}, Strides: []int64{2}}, nil)
	require.NoError(t, err)
	defer gpu.Close()
	_, err = dltensor.ReadViewStrided[float32](gpu)
	assert.ErrorIs(t, err, dltensor.ErrNotOnCPU)

	odd, err := dltensor.FromC(unsafe.Pointer(&buf[0]), dltensor.Layout{DataType: dltensor.DataTypeOf[float32](), Shape: []int64{2}, Strides: []int64{2}, ByteOffset: 1}, nil)
	require.NoError(t, err)
	defer odd.Close()
	_, err = dltensor.ReadViewStrided[float32](odd)
	assert.ErrorIs(t, err, dltensor.ErrElementType, "unaligned")
}

func TestStridedViewOfNoElementsAndOfAScalar(t *testing.T) {
	empty, _ := dltensor.Strided([]float64{}, []int64{3, 0}, []int64{7, 1}, 0)
	defer empty.Close()
	v, err := dltensor.ReadViewStrided[float64](empty)
	require.NoError(t, err)
	rows, err := v.Rows()
	require.NoError(t, err)
	for range rows {
		t.Fatal("a view of no elements has no rows")
	}
	data, r, c, _, err := v.Matrix()
	require.NoError(t, err)
	assert.Equal(t, []int{3, 0}, []int{r, c})
	assert.Empty(t, data)

	scalar := dltensor.Scalar(int64(7))
	defer scalar.Close()
	s, err := dltensor.ViewStrided[int64](scalar)
	require.NoError(t, err)
	assert.Equal(t, int64(7), s.At())
	scalarRows, err := s.Rows()
	require.NoError(t, err)
	n := 0
	for index, row := range scalarRows {
		assert.Empty(t, index)
		assert.Equal(t, []int64{7}, row)
		n++
	}
	assert.Equal(t, 1, n)
}
