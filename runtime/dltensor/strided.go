package dltensor

import (
	"fmt"
	"iter"
	"unsafe"
)

// StridedView reads and writes the elements of a host-readable tensor of
// any strides (gaps, negative strides, broadcasts) in place, without a
// copy. Every element it reaches lies in the memory the tensor's checks
// bounded when it was made or imported: indices are checked against the
// shape, and an index out of range panics, as a slice index does. Keep the
// handle open while the view is in use.
type StridedView[T Element] struct {
	first   unsafe.Pointer // the element at index 0
	shape   []int64
	strides []int64 // in elements
}

// ViewStrided returns a view of the elements of a host-readable tensor of
// any layout; ErrReadOnly for a read-only handle, ErrElementType when T
// is not the tensor's data type.
func ViewStrided[T Element](t *Tensor) (StridedView[T], error) {
	if err := t.writable("ReadViewStrided"); err != nil {
		return StridedView[T]{}, err
	}
	return stridedView[T](t)
}

// ReadViewStrided is ViewStrided for reading only: it also serves
// read-only handles, and the caller must not write through the view.
func ReadViewStrided[T Element](t *Tensor) (StridedView[T], error) { return stridedView[T](t) }

func stridedView[T Element](t *Tensor) (StridedView[T], error) {
	s, err := readableAs[T](t, true)
	if err != nil {
		return StridedView[T]{}, err
	}
	return StridedView[T]{first: s.first(), shape: t.Shape(), strides: t.Strides()}, nil
}

// Shape returns the extents of the view.
func (v StridedView[T]) Shape() []int64 { return append([]int64(nil), v.shape...) }

// Strides returns the strides of the view, in elements.
func (v StridedView[T]) Strides() []int64 { return append([]int64(nil), v.strides...) }

// NDim is the number of dimensions.
func (v StridedView[T]) NDim() int { return len(v.shape) }

// At returns the element at index (one entry per dimension).
func (v StridedView[T]) At(index ...int64) T { return *v.at(index) }

// Set writes x at index (one entry per dimension).
func (v StridedView[T]) Set(x T, index ...int64) { *v.at(index) = x }

func (v StridedView[T]) at(index []int64) *T {
	if len(index) != len(v.shape) {
		panic(fmt.Sprintf("dltensor: index %v of %d dimensions for shape %v", index, len(index), v.shape))
	}
	return (*T)(unsafe.Add(v.first, v.offset(index)))
}

// offset is the byte offset of the element at index (one entry for each
// of the leading dimensions it names) from the first.
func (v StridedView[T]) offset(index []int64) int64 {
	var off int64
	for k, i := range index {
		if i < 0 || i >= v.shape[k] {
			panic(fmt.Sprintf("dltensor: index %v out of range for shape %v", index, v.shape))
		}
		off += i * v.strides[k]
	}
	return off * int64(unsafe.Sizeof(*new(T)))
}

// Rows iterates over the rows of the view (its last dimension) in
// row-major order, yielding the index of each row in the leading
// dimensions (valid until the next row) and its elements, a slice over
// the tensor's memory. A view whose last dimension is not contiguous
// (stride 1) has no rows as slices: ErrNotContiguous. A 0-d view is one
// row of one element.
func (v StridedView[T]) Rows() (iter.Seq2[[]int64, []T], error) {
	n := len(v.shape)
	if n > 0 && v.shape[n-1] > 1 && v.strides[n-1] != 1 {
		return nil, fmt.Errorf("dltensor: the last dimension has stride %d, so a row is no slice; use At: %w", v.strides[n-1], ErrNotContiguous)
	}
	lead, cols := v.shape, int64(1)
	if n > 0 {
		lead, cols = v.shape[:n-1], v.shape[n-1]
	}
	return func(yield func([]int64, []T) bool) {
		for _, extent := range v.shape {
			if extent == 0 {
				return
			}
		}
		index := make([]int64, len(lead))
		for {
			if !yield(index, unsafe.Slice((*T)(unsafe.Add(v.first, v.offset(index))), cols)) {
				return
			}
			k := len(index) - 1
			for ; k >= 0 && index[k] == lead[k]-1; k-- {
				index[k] = 0
			}
			if k < 0 {
				return
			}
			index[k]++
		}
	}, nil
}

// Matrix returns a 2-d view whose rows are contiguous and ascending (row
// stride at least the number of columns, column stride 1) as gonum's
// blas64.General and Gorgonia's dense tensors take it: data starts at
// element (0, 0), and element (i, j) is data[i*stride+j]. Other layouts
// are ErrNotContiguous.
func (v StridedView[T]) Matrix() (data []T, rows, cols, stride int, err error) {
	if len(v.shape) != 2 {
		return nil, 0, 0, 0, fmt.Errorf("dltensor: a %d-d view is no matrix: %w", len(v.shape), ErrNotContiguous)
	}
	r, c := v.shape[0], v.shape[1]
	rowStride := v.strides[0]
	if r <= 1 {
		rowStride = c // any stride walks one row
	}
	if c > 1 && v.strides[1] != 1 || rowStride < c {
		return nil, 0, 0, 0, fmt.Errorf("dltensor: strides %v for shape %v are no row-major matrix "+
			"(row stride at least the columns, column stride 1); use Contiguous: %w", v.strides, v.shape, ErrNotContiguous)
	}
	if r == 0 || c == 0 {
		return []T{}, int(r), int(c), int(rowStride), nil
	}
	return unsafe.Slice((*T)(v.first), (r-1)*rowStride+c), int(r), int(c), int(rowStride), nil
}
