//go:build !amd64 || purego

package devices

import "unsafe"

// transposeStrip copies n steps of a strip of rows destination rows of
// items of size 1, 2, 4, 8 or 16 bytes, each step 16/size source columns:
// items of up to 4 bytes in square blocks whose rows and columns are
// 8-byte words, larger ones word by word.
func transposeStrip(dst, src unsafe.Pointer, dstRow, srcCol, n, rows, size int64) {
	if size >= 8 {
		for c := int64(0); c < 16/size*n; c++ {
			for q := int64(0); q < rows; q++ {
				d, s := unsafe.Add(dst, q*dstRow+c*size), unsafe.Add(src, q*size+c*srcCol)
				for w := int64(0); w < size; w += 8 {
					*(*uint64)(unsafe.Add(d, w)) = *(*uint64)(unsafe.Add(s, w))
				}
			}
		}
		return
	}
	block, b := transpose4x4of4, int64(4)
	switch size {
	case 1:
		block, b = transpose8x8of1, 8
	case 2:
		block = transpose4x4of2
	}
	for k := int64(0); k < n; k++ {
		for c := int64(0); c < 16/size; c += b {
			for q := int64(0); q < rows; q += b {
				block(unsafe.Add(dst, q*dstRow+16*k+c*size), unsafe.Add(src, q*size+(16/size*k+c)*srcCol), dstRow, srcCol)
			}
		}
	}
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

// transposeBlocks copies n blocks of 64x64 bytes or four-byte items along
// 64 destination rows: strips of 64 rows.
func transposeBlocks(dst, src unsafe.Pointer, dstRow, srcCol, n, size int64) {
	transposeStrip(dst, src, dstRow, srcCol, 4*size*n, 64, size)
}

// storeFence does nothing: the Go code makes no non-temporal stores.
func storeFence() {}
