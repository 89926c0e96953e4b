//go:build !purego

// Package simd holds the copy engine's kernels in assembly: package devices
// uses cgo, and a package that uses cgo cannot hold Go assembly.
package simd

import "unsafe"

// The strip kernels transpose items of one size into a strip of rows
// destination rows (dstRow bytes apart; a multiple of the kernel's block
// height), n steps along it: each step reads rows items from each of
// 16/size source columns (srcCol bytes apart) and writes 16 bytes of every
// destination row, then moves 16 bytes on in dst and 16/size columns on in
// src. The blocks are SSE2 shuffles: a 4x4 block of 4-byte items is four
// 16-byte loads, eight shuffles and four 16-byte stores; an 8x8 block of
// 2-byte items eight loads, 24 interleaves and eight stores; an 8 by 16
// block of bytes sixteen 8-byte loads interleaved in pairs, then the same;
// 8- and 16-byte items are moved 16 bytes at a time, 4 rows a block.

// TransposeStrip1of16 moves 16-byte items, one source column a step.
//
//go:noescape
func TransposeStrip1of16(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64)

// TransposeStrip2of8 transposes 8-byte items in blocks of 4 rows by 2.
//
//go:noescape
func TransposeStrip2of8(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64)

// TransposeStrip4of4 transposes 4-byte items in 4x4 blocks.
//
//go:noescape
func TransposeStrip4of4(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64)

// TransposeStrip8of2 transposes 2-byte items in 8x8 blocks.
//
//go:noescape
func TransposeStrip8of2(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64)

// TransposeStrip16of1 transposes bytes in blocks of 8 rows by 16.
//
//go:noescape
func TransposeStrip16of1(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64)

// TransposeBlocks64of1 transposes n blocks of 64x64 bytes along 64
// destination rows (dstRow bytes apart, each 16-byte aligned) with
// non-temporal stores: each block reads 64 source columns (srcCol bytes
// apart) whole, then writes 64 bytes of every destination row. A block
// moves dst 64 bytes on and src 64 columns. StoreFence must follow before
// another goroutine reads the destination.
//
//go:noescape
func TransposeBlocks64of1(dst, src unsafe.Pointer, dstRow, srcCol, n int64)

// TransposeBlocks64of4 transposes n blocks of 64x64 four-byte items
// along 64 destination rows (dstRow bytes apart, each 16-byte aligned)
// with non-temporal stores, as TransposeBlocks64of1 does bytes: each block
// reads 256 bytes of 64 source columns whole, then writes 256 bytes of
// every destination row. A block moves dst 256 bytes on and src 64
// columns. StoreFence must follow before another goroutine reads the
// destination.
//
//go:noescape
func TransposeBlocks64of4(dst, src unsafe.Pointer, dstRow, srcCol, n int64)

// StoreFence orders the non-temporal stores before it before every store
// after it (SFENCE).
func StoreFence()
