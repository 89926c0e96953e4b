// Package simd holds the copy engine's kernels in assembly: package devices
// uses cgo, and a package that uses cgo cannot hold Go assembly.
package simd

import "unsafe"

// TransposeStrip4x4of4 copies n blocks of 4x4 four-byte elements along a
// strip of four destination rows (dstRow bytes apart), the next block 16
// bytes on in dst and four source columns (srcCol bytes apart) on in src:
// four 16-byte loads, eight SSE2 shuffles and four 16-byte stores a block.
//
//go:noescape
func TransposeStrip4x4of4(dst, src unsafe.Pointer, dstRow, srcCol, n int64)
