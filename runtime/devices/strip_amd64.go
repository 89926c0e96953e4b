package devices

import (
	"unsafe"

	"github.com/dlgen/dlgen/runtime/devices/internal/simd"
)

// strip4x4of4 copies n blocks of 4x4 four-byte elements along a strip of
// four destination rows, the next block 4 source columns on, with SSE2
// shuffles (every amd64 processor has them): about a quarter of the
// instructions transpose4x4of4 takes.
func strip4x4of4(dst, src unsafe.Pointer, dstRow, srcCol, n int64) {
	simd.TransposeStrip4x4of4(dst, src, dstRow, srcCol, n)
}
