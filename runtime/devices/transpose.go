package devices

import "unsafe"

// stripRows is how many destination rows of 4-byte items a strip takes:
// each visit of a source row reads 32 bytes of it, and the 8 destination
// lines a strip fills stay in the L1 cache with the 4 source lines even
// when the strides put them all in one set (12 ways). Strips of 4 rows
// measured slower on the 3-d permutations, of 16 on the 2-d transposes.
const stripRows = 8

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

// tile copies one tile a block of b by b elements at a time where both
// arrays are contiguous in the right direction and the item size has a
// block kernel, element by element at the edges and otherwise. The blocks
// run along destination rows, b rows at a time; 4-byte items go a strip of
// stripRows at a time (on amd64 in SSE2 assembly).
func tile(dst, src unsafe.Pointer, rows, cols dim, size int64) {
	block, b := blockKernel(size)
	if block == nil || rows.s != size || cols.d != size || rows.n < b || cols.n < b {
		for r := int64(0); r < rows.n; r++ {
			copyElements(unsafe.Add(dst, r*rows.d), unsafe.Add(src, r*rows.s), cols, size)
		}
		return
	}
	rn, cn := rows.n/b*b, cols.n/b*b
	if size == 4 {
		r := int64(0)
		for ; r+stripRows <= rn; r += stripRows {
			strip4of4(unsafe.Add(dst, r*rows.d), unsafe.Add(src, r*size), rows.d, cols.s, cn/4, stripRows)
		}
		if r < rn {
			strip4of4(unsafe.Add(dst, r*rows.d), unsafe.Add(src, r*size), rows.d, cols.s, cn/4, rn-r)
		}
	} else {
		for r := int64(0); r < rn; r += b {
			for c := int64(0); c < cn; c += b {
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

// blockKernel returns the function that transposes a block of b by b
// items of size bytes with 8-byte loads and stores, nil for sizes without
// one. Each takes the destination's row stride and the source's column
// stride in bytes.
func blockKernel(size int64) (kernel func(dst, src unsafe.Pointer, dstRow, srcCol int64), b int64) {
	switch size {
	case 1:
		return transpose8x8of1, 8
	case 2:
		return transpose4x4of2, 4
	case 4:
		return transpose4x4of4, 4
	case 8:
		return transpose4x4of8, 4
	case 16:
		return transpose2x2of16, 2
	}
	return nil, 0
}

// transpose8x8of1 copies 8x8 one-byte elements: each source row of eight
// is one 8-byte word, transposed in three rounds of swaps (bytes, pairs,
// quads) as 8-byte words.
func transpose8x8of1(dst, src unsafe.Pointer, dstRow, srcCol int64) {
	const m8, m16, lo = 0x00ff00ff00ff00ff, 0x0000ffff0000ffff, 0x00000000ffffffff
	x0, x1 := *(*uint64)(src), *(*uint64)(unsafe.Add(src, srcCol))
	x2, x3 := *(*uint64)(unsafe.Add(src, 2*srcCol)), *(*uint64)(unsafe.Add(src, 3*srcCol))
	x4, x5 := *(*uint64)(unsafe.Add(src, 4*srcCol)), *(*uint64)(unsafe.Add(src, 5*srcCol))
	x6, x7 := *(*uint64)(unsafe.Add(src, 6*srcCol)), *(*uint64)(unsafe.Add(src, 7*srcCol))
	// Bytes: each pair of rows becomes its even and its odd columns.
	x0, x1 = x0&m8|x1&m8<<8, x0>>8&m8|x1&^m8
	x2, x3 = x2&m8|x3&m8<<8, x2>>8&m8|x3&^m8
	x4, x5 = x4&m8|x5&m8<<8, x4>>8&m8|x5&^m8
	x6, x7 = x6&m8|x7&m8<<8, x6>>8&m8|x7&^m8
	// Pairs of bytes: four rows' columns 0 and 4, 2 and 6, 1 and 5, 3 and 7.
	x0, x2 = x0&m16|x2&m16<<16, x0>>16&m16|x2&^m16
	x1, x3 = x1&m16|x3&m16<<16, x1>>16&m16|x3&^m16
	x4, x6 = x4&m16|x6&m16<<16, x4>>16&m16|x6&^m16
	x5, x7 = x5&m16|x7&m16<<16, x5>>16&m16|x7&^m16
	// Quads: column k of all eight rows in xk.
	x0, x4 = x0&lo|x4<<32, x0>>32|x4&^lo
	x1, x5 = x1&lo|x5<<32, x1>>32|x5&^lo
	x2, x6 = x2&lo|x6<<32, x2>>32|x6&^lo
	x3, x7 = x3&lo|x7<<32, x3>>32|x7&^lo
	*(*uint64)(dst), *(*uint64)(unsafe.Add(dst, dstRow)) = x0, x1
	*(*uint64)(unsafe.Add(dst, 2*dstRow)), *(*uint64)(unsafe.Add(dst, 3*dstRow)) = x2, x3
	*(*uint64)(unsafe.Add(dst, 4*dstRow)), *(*uint64)(unsafe.Add(dst, 5*dstRow)) = x4, x5
	*(*uint64)(unsafe.Add(dst, 6*dstRow)), *(*uint64)(unsafe.Add(dst, 7*dstRow)) = x6, x7
}

// transpose4x4of2 copies 4x4 two-byte elements, each source row of four
// one 8-byte word, in two rounds of swaps.
func transpose4x4of2(dst, src unsafe.Pointer, dstRow, srcCol int64) {
	const m16, lo = 0x0000ffff0000ffff, 0x00000000ffffffff
	a, b := *(*uint64)(src), *(*uint64)(unsafe.Add(src, srcCol))
	c, d := *(*uint64)(unsafe.Add(src, 2*srcCol)), *(*uint64)(unsafe.Add(src, 3*srcCol))
	ab0, ab1 := a&m16|b&m16<<16, a>>16&m16|b&^m16 // elements 0 and 2, 1 and 3 of a and b
	cd0, cd1 := c&m16|d&m16<<16, c>>16&m16|d&^m16
	*(*uint64)(dst) = ab0&lo | cd0<<32
	*(*uint64)(unsafe.Add(dst, dstRow)) = ab1&lo | cd1<<32
	*(*uint64)(unsafe.Add(dst, 2*dstRow)) = ab0>>32 | cd0&^lo
	*(*uint64)(unsafe.Add(dst, 3*dstRow)) = ab1>>32 | cd1&^lo
}

// transpose4x4of4 copies 4x4 four-byte elements: each source row of four
// is read as two 8-byte words, and each destination row is written as two
// 8-byte words assembled from them.
func transpose4x4of4(dst, src unsafe.Pointer, dstRow, srcCol int64) {
	const lo, hi = 0x00000000ffffffff, 0xffffffff00000000
	s1, s2, s3 := unsafe.Add(src, srcCol), unsafe.Add(src, 2*srcCol), unsafe.Add(src, 3*srcCol)
	a0, a1 := *(*uint64)(src), *(*uint64)(unsafe.Add(src, 8))
	b0, b1 := *(*uint64)(s1), *(*uint64)(unsafe.Add(s1, 8))
	c0, c1 := *(*uint64)(s2), *(*uint64)(unsafe.Add(s2, 8))
	d0, d1 := *(*uint64)(s3), *(*uint64)(unsafe.Add(s3, 8))
	r1, r2, r3 := unsafe.Add(dst, dstRow), unsafe.Add(dst, 2*dstRow), unsafe.Add(dst, 3*dstRow)
	*(*uint64)(dst), *(*uint64)(unsafe.Add(dst, 8)) = a0&lo|b0<<32, c0&lo|d0<<32
	*(*uint64)(r1), *(*uint64)(unsafe.Add(r1, 8)) = a0>>32|b0&hi, c0>>32|d0&hi
	*(*uint64)(r2), *(*uint64)(unsafe.Add(r2, 8)) = a1&lo|b1<<32, c1&lo|d1<<32
	*(*uint64)(r3), *(*uint64)(unsafe.Add(r3, 8)) = a1>>32|b1&hi, c1>>32|d1&hi
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
