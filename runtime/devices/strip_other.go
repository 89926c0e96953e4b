//go:build !amd64

package devices

import "unsafe"

// strip4x4of4 copies n blocks of 4x4 four-byte elements along a strip of
// four destination rows, the next block 4 source columns on.
func strip4x4of4(dst, src unsafe.Pointer, dstRow, srcCol, n int64) {
	for k := int64(0); k < n; k++ {
		transpose4x4of4(unsafe.Add(dst, 16*k), unsafe.Add(src, 4*k*srcCol), dstRow, srcCol)
	}
}
