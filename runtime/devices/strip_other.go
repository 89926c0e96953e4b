//go:build !amd64 || purego

package devices

import "unsafe"

// strip4of4 copies n steps of a strip of rows (a multiple of 4)
// destination rows of 4-byte items, each step four source columns.
func strip4of4(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64) {
	for k := int64(0); k < n; k++ {
		for q := int64(0); q < rows; q += 4 {
			transpose4x4of4(unsafe.Add(dst, q*dstRow+16*k), unsafe.Add(src, 4*q+4*k*srcCol), dstRow, srcCol)
		}
	}
}
