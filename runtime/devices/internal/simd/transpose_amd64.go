//go:build !purego

// Package simd holds the copy engine's kernels in assembly: package devices
// uses cgo, and a package that uses cgo cannot hold Go assembly.
package simd

import "unsafe"

// TransposeStrip4of4 transposes four-byte items into a strip of rows
// destination rows (a multiple of 4, dstRow bytes apart), n steps along
// it: each step reads rows items from each of four source columns
// (srcCol bytes apart) and writes 16 bytes of every destination row, then
// moves 16 bytes on in dst and four columns on in src. A 4x4 block is four
// 16-byte loads, eight SSE2 shuffles and four 16-byte stores.
//
//go:noescape
func TransposeStrip4of4(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64)
