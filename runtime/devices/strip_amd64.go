//go:build amd64 && !purego

package devices

import (
	"unsafe"

	"github.com/dlgen/dlgen/runtime/devices/internal/simd"
)

// transposeStrip copies n steps of a strip of rows destination rows of
// items of size 1, 2, 4, 8 or 16 bytes, each step 16/size source columns,
// with SSE2 (every amd64 processor has it).
func transposeStrip(dst, src unsafe.Pointer, dstRow, srcCol, n, rows, size int64) {
	switch size {
	case 1:
		simd.TransposeStrip16of1(dst, src, dstRow, srcCol, n, rows)
	case 2:
		simd.TransposeStrip8of2(dst, src, dstRow, srcCol, n, rows)
	case 4:
		simd.TransposeStrip4of4(dst, src, dstRow, srcCol, n, rows)
	case 8:
		simd.TransposeStrip2of8(dst, src, dstRow, srcCol, n, rows)
	case 16:
		simd.TransposeStrip1of16(dst, src, dstRow, srcCol, n, rows)
	}
}

// transposeBlocks copies n blocks of 64x64 bytes or four-byte items
// along a block's 64 destination rows (dst and dstRow multiples of 16)
// with non-temporal stores; storeFence must follow.
func transposeBlocks(dst, src unsafe.Pointer, dstRow, srcCol, n, size int64) {
	if size == 1 {
		simd.TransposeBlocks64of1(dst, src, dstRow, srcCol, n)
	} else {
		simd.TransposeBlocks64of4(dst, src, dstRow, srcCol, n)
	}
}

// storeFence orders the non-temporal stores before it (SFENCE).
func storeFence() { simd.StoreFence() }
