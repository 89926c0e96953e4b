package devices

import "unsafe"

// tileSide is the side of a square tile in elements of up to 4 bytes (half
// that for larger ones): 256 rows of 256 four-byte elements are 256 KiB on
// each side, which stay in a core's L2 cache while each destination row is
// written in long runs (larger and smaller tiles, and tiles of one cache
// line by one, measured slower). Tests lower it.
var tileSide int64 = 256

func side(size int64) int64 {
	if size > 4 {
		return tileSide / 2
	}
	return tileSide
}

// tiles copies a 2-D block whose source is walked fastest along rows and
// whose destination is walked fastest along cols, in square tiles, so that
// each cache line read or written is used whole while it is in cache.
func tiles(dst, src unsafe.Pointer, rows, cols dim, size int64) {
	if rows.s < 0 {
		dst, src = unsafe.Add(dst, (rows.n-1)*rows.d), unsafe.Add(src, (rows.n-1)*rows.s)
		rows.d, rows.s = -rows.d, -rows.s
	}
	t := side(size)
	for r := int64(0); r < rows.n; r += t {
		tr := dim{min(t, rows.n-r), rows.d, rows.s}
		for c := int64(0); c < cols.n; c += t {
			tc := dim{min(t, cols.n-c), cols.d, cols.s}
			tile(unsafe.Add(dst, r*rows.d+c*cols.d), unsafe.Add(src, r*rows.s+c*cols.s), tr, tc, size)
		}
	}
}

// tile copies one tile with a kernel where both arrays are contiguous in
// the right direction and the item size has one, element by element at
// the edges and otherwise. Items of 1, 2 and 4 bytes go a strip of rows
// at a time (on amd64 in SSE2 assembly), 16 bytes of each destination row a
// step; 8 and 16 bytes a square block at a time.
func tile(dst, src unsafe.Pointer, rows, cols dim, size int64) {
	rb, cb, strip := kernelShape(size)
	if rb == 0 || rows.s != size || cols.d != size || rows.n < rb || cols.n < cb {
		for r := int64(0); r < rows.n; r++ {
			copyElements(unsafe.Add(dst, r*rows.d), unsafe.Add(src, r*rows.s), cols, size)
		}
		return
	}
	rn, cn := rows.n/rb*rb, cols.n/cb*cb
	if strip > 0 {
		for r := int64(0); r < rn; r += strip {
			transposeStrip(unsafe.Add(dst, r*rows.d), unsafe.Add(src, r*size), rows.d, cols.s, cn/cb, min(strip, rn-r), size)
		}
	} else {
		block := transpose4x4of8
		if size == 16 {
			block = transpose2x2of16
		}
		for r := int64(0); r < rn; r += rb {
			for c := int64(0); c < cn; c += cb {
				block(unsafe.Add(dst, r*rows.d+c*size), unsafe.Add(src, r*size+c*cols.s), rows.d, cols.s)
			}
		}
	}
	if cn < cols.n {
		tile(unsafe.Add(dst, cn*size), unsafe.Add(src, cn*cols.s), dim{rn, rows.d, rows.s}, dim{cols.n - cn, cols.d, cols.s}, size)
	}
	if rn < rows.n {
		tile(unsafe.Add(dst, rn*rows.d), unsafe.Add(src, rn*size), dim{rows.n - rn, rows.d, rows.s}, cols, size)
	}
}

// kernelShape returns, for an item size with a kernel, the rows and
// columns of its block (rows and columns a multiple of them go through the
// kernel) and, for the strip kernels, the rows of a strip: each step of a
// strip reads stripRows*size bytes of each source line, and the strip's
// destination lines stay in the L1 cache with the source lines even when
// the strides put them all in one set.
func kernelShape(size int64) (rows, cols, stripRows int64) {
	switch size {
	case 1:
		return 8, 16, 16
	case 2:
		return 8, 8, 16
	case 4:
		return 4, 4, 8
	case 8:
		return 4, 4, 0
	case 16:
		return 2, 2, 0
	}
	return 0, 0, 0
}

// transpose4x4of8 copies 4x4 eight-byte elements, a source row at a time.
func transpose4x4of8(dst, src unsafe.Pointer, dstRow, srcCol int64) {
	for c := int64(0); c < 4; c++ {
		s, d := unsafe.Add(src, c*srcCol), unsafe.Add(dst, c*8)
		a, b, e, f := *(*uint64)(s), *(*uint64)(unsafe.Add(s, 8)), *(*uint64)(unsafe.Add(s, 16)), *(*uint64)(unsafe.Add(s, 24))
		*(*uint64)(d) = a
		*(*uint64)(unsafe.Add(d, dstRow)) = b
		*(*uint64)(unsafe.Add(d, 2*dstRow)) = e
		*(*uint64)(unsafe.Add(d, 3*dstRow)) = f
	}
}

// transpose2x2of16 copies 2x2 sixteen-byte elements, each as two 8-byte
// words.
func transpose2x2of16(dst, src unsafe.Pointer, dstRow, srcCol int64) {
	s1, d1 := unsafe.Add(src, srcCol), unsafe.Add(dst, dstRow)
	a := *(*[4]uint64)(src)
	b := *(*[4]uint64)(s1)
	*(*[4]uint64)(dst) = [4]uint64{a[0], a[1], b[0], b[1]}
	*(*[4]uint64)(d1) = [4]uint64{a[2], a[3], b[2], b[3]}
}
