package devices

import "unsafe"

// tileSide is the side of a square tile in elements of 2 and 4 bytes (half
// that for larger ones, four times for bytes): 256 rows of 256 four-byte
// elements are 256 KiB on each side, which stay in a core's L2 cache while
// each destination row is written in long runs (larger and smaller tiles,
// and tiles of one cache line by one, measured slower). Large byte copies
// keep nothing of the destination in cache (streamBytes), and read 1 KiB
// of each source line a tile, which the memory serves faster than 256
// bytes. Tests lower it.
var tileSide int64 = 256

func side(size int64) int64 {
	switch {
	case size == 1:
		return 4 * tileSide
	case size > 4:
		return tileSide / 2
	}
	return tileSide
}

// streamBytes is the size from which a transpose of bytes writes with
// non-temporal stores, as memmove does from 1 MiB: they do not read the
// destination's lines first, and they leave the cache to the source.
// Tests lower it.
var streamBytes int64 = 1 << 20

// tiles copies a 2-D block whose source is walked fastest along rows and
// whose destination is walked fastest along cols, in square tiles, so that
// each cache line read or written is used whole while it is in cache.
// stream says the whole copy has at least streamBytes.
func tiles(dst, src unsafe.Pointer, rows, cols dim, size int64, stream bool) {
	if rows.s < 0 {
		dst, src = unsafe.Add(dst, (rows.n-1)*rows.d), unsafe.Add(src, (rows.n-1)*rows.s)
		rows.d, rows.s = -rows.d, -rows.s
	}
	blocks := stream && (size == 1 || size == 4) && rows.s == size && cols.d == size && rows.d%16 == 0
	t := side(size)
	for r := int64(0); r < rows.n; r += t {
		tr := dim{min(t, rows.n-r), rows.d, rows.s}
		for c := int64(0); c < cols.n; c += t {
			tc := dim{min(t, cols.n-c), cols.d, cols.s}
			d, s := unsafe.Add(dst, r*rows.d+c*cols.d), unsafe.Add(src, r*rows.s+c*cols.s)
			if blocks && uintptr(d)%16 == 0 {
				blockTile(d, s, tr, tc, size)
			} else {
				tile(d, s, tr, tc, size)
			}
		}
	}
	if blocks {
		storeFence()
	}
}

// blockTile copies a tile of bytes or 4-byte items in blocks of 64x64
// items, each destination row of a block written whole with non-temporal
// stores, the edges as tile does.
func blockTile(dst, src unsafe.Pointer, rows, cols dim, size int64) {
	rn, cn := rows.n/64*64, cols.n/64*64
	for r := int64(0); r < rn; r += 64 {
		transposeBlocks(unsafe.Add(dst, r*rows.d), unsafe.Add(src, r*size), rows.d, cols.s, cn/64, size)
	}
	if cn < cols.n {
		tile(unsafe.Add(dst, cn*size), unsafe.Add(src, cn*cols.s), dim{rn, rows.d, rows.s}, dim{cols.n - cn, cols.d, cols.s}, size)
	}
	if rn < rows.n {
		tile(unsafe.Add(dst, rn*rows.d), unsafe.Add(src, rn*size), dim{rows.n - rn, rows.d, rows.s}, cols, size)
	}
}

// tile copies one tile with a strip kernel where both arrays are
// contiguous in the right direction, a strip of destination rows at a
// time, 16 bytes of each row a step (on amd64 in SSE2 assembly), element
// by element at the edges and otherwise.
func tile(dst, src unsafe.Pointer, rows, cols dim, size int64) {
	rb, cb, strip := stripShape(size)
	if rb == 0 || rows.s != size || cols.d != size || rows.n < rb || cols.n < cb {
		for r := int64(0); r < rows.n; r++ {
			copyElements(unsafe.Add(dst, r*rows.d), unsafe.Add(src, r*rows.s), cols, size)
		}
		return
	}
	rn, cn := rows.n/rb*rb, cols.n/cb*cb
	for r := int64(0); r < rn; r += strip {
		transposeStrip(unsafe.Add(dst, r*rows.d), unsafe.Add(src, r*size), rows.d, cols.s, cn/cb, min(strip, rn-r), size)
	}
	if cn < cols.n {
		tile(unsafe.Add(dst, cn*size), unsafe.Add(src, cn*cols.s), dim{rn, rows.d, rows.s}, dim{cols.n - cn, cols.d, cols.s}, size)
	}
	if rn < rows.n {
		tile(unsafe.Add(dst, rn*rows.d), unsafe.Add(src, rn*size), dim{rows.n - rn, rows.d, rows.s}, cols, size)
	}
}

// stripShape returns, for an item size with a strip kernel, the rows and
// columns of its block (rows and columns a multiple of them go through the
// kernel; a step of a strip is 16 bytes of destination row, 16/size
// columns) and the rows of a strip: the strip's destination lines stay in
// the L1 cache with its source lines even when the strides put them all in
// one set. Each step reads 16 bytes of each source line for 1- and 2-byte
// items (longer strips measured slower), 32 for 4-byte items, whole lines
// for larger ones.
func stripShape(size int64) (rows, cols, stripRows int64) {
	switch size {
	case 1:
		return 8, 16, 16
	case 2:
		return 8, 8, 16
	case 4:
		return 4, 4, 8
	case 8:
		return 4, 2, 8
	case 16:
		return 4, 1, 4
	}
	return 0, 0, 0
}
