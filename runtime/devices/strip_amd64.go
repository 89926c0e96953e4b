//go:build amd64 && !purego

package devices

import (
	"unsafe"

	"github.com/dlgen/dlgen/runtime/devices/internal/simd"
)

// strip4of4 copies n steps of a strip of rows (a multiple of 4)
// destination rows of 4-byte items, each step four source columns, with
// SSE2 shuffles (every amd64 processor has them): about a quarter of the
// instructions transpose4x4of4 takes.
func strip4of4(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64) {
	simd.TransposeStrip4of4(dst, src, dstRow, srcCol, n, rows)
}
