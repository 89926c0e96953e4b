//go:build !purego

#include "textflag.h"

// STRIP loads the arguments and walks a strip: n steps (BX), each of
// R12 blocks down the strip; a block reads its source columns at R13 and
// writes its destination rows at R11, and BLOCK moves both on. A step
// moves dst 16 bytes on and src by R10 (its columns). CX is the source's
// column stride and R8 three times it, DX the destination's row stride and
// R9 three times it.
#define STRIP(blockShift, stepShift, BLOCK) \
	MOVQ dst+0(FP), DI; \
	MOVQ src+8(FP), SI; \
	MOVQ dstRow+16(FP), DX; \
	MOVQ srcCol+24(FP), CX; \
	MOVQ n+32(FP), BX; \
	MOVQ rows+40(FP), R12; \
	SHRQ $blockShift, R12; \
	LEAQ (CX)(CX*2), R8; \
	LEAQ (DX)(DX*2), R9; \
	MOVQ CX, R10; \
	SHLQ $stepShift, R10; \
	TESTQ R12, R12; \
	JEQ done; \
step: \
	TESTQ BX, BX; \
	JEQ done; \
	MOVQ DI, R11; \
	MOVQ SI, R13; \
	MOVQ R12, AX; \
block: \
	BLOCK; \
	DECQ AX; \
	JNZ block; \
	ADDQ R10, SI; \
	ADDQ $16, DI; \
	DECQ BX; \
	JMP step; \
done: \
	RET

// SHUFFLE4 transposes 4x4 four-byte items: the source columns in X0 to
// X3 become the destination rows X1, X2, X3, X5.
#define SHUFFLE4 \
	MOVAPS X0, X4; \
	UNPCKLPS X1, X0; \
	UNPCKHPS X1, X4; \
	MOVAPS X2, X5; \
	UNPCKLPS X3, X2; \
	UNPCKHPS X3, X5; \
	MOVAPS X0, X1; \
	MOVLHPS X2, X1; \
	MOVHLPS X0, X2; \
	MOVAPS X4, X3; \
	MOVLHPS X5, X3; \
	MOVHLPS X4, X5

// BLOCK4 transposes 4x4 four-byte items: four 16-byte source columns to
// four 16-byte destination rows.
#define BLOCK4 \
	MOVUPS (R13), X0; \
	MOVUPS (R13)(CX*1), X1; \
	MOVUPS (R13)(CX*2), X2; \
	MOVUPS (R13)(R8*1), X3; \
	SHUFFLE4; \
	MOVUPS X1, (R11); \
	MOVUPS X2, (R11)(DX*1); \
	MOVUPS X3, (R11)(DX*2); \
	MOVUPS X5, (R11)(R9*1); \
	ADDQ $16, R13; \
	LEAQ (R11)(DX*4), R11

// MIX interleaves a and b: the low halves' items into a, the high
// halves' into t.
#define MIX(LO, HI, a, b, t) MOVO a, t; LO b, a; HI b, t

// WORDS8 transposes 8x8 two-byte items, source columns in X0 to X7, into
// the destination rows X0, X2, X1, X6, X8, X9, X3, X11 in order: three
// rounds of interleaving (words, pairs, quads).
#define WORDS8 \
	MIX(PUNPCKLWL, PUNPCKHWL, X0, X1, X8); \
	MIX(PUNPCKLWL, PUNPCKHWL, X2, X3, X9); \
	MIX(PUNPCKLWL, PUNPCKHWL, X4, X5, X10); \
	MIX(PUNPCKLWL, PUNPCKHWL, X6, X7, X11); \
	MIX(PUNPCKLLQ, PUNPCKHLQ, X0, X2, X1); \
	MIX(PUNPCKLLQ, PUNPCKHLQ, X8, X9, X3); \
	MIX(PUNPCKLLQ, PUNPCKHLQ, X4, X6, X5); \
	MIX(PUNPCKLLQ, PUNPCKHLQ, X10, X11, X7); \
	MIX(PUNPCKLQDQ, PUNPCKHQDQ, X0, X4, X2); \
	MIX(PUNPCKLQDQ, PUNPCKHQDQ, X1, X5, X6); \
	MIX(PUNPCKLQDQ, PUNPCKHQDQ, X8, X10, X9); \
	MIX(PUNPCKLQDQ, PUNPCKHQDQ, X3, X7, X11)

// WORDS transposes 8x8 two-byte items, source columns in X0 to X7, and
// writes the eight destination rows of 16 bytes at R11, moving R11 eight
// rows on.
#define WORDS \
	WORDS8; \
	MOVOU X0, (R11); \
	MOVOU X2, (R11)(DX*1); \
	MOVOU X1, (R11)(DX*2); \
	MOVOU X6, (R11)(R9*1); \
	LEAQ (R11)(DX*4), R11; \
	MOVOU X8, (R11); \
	MOVOU X9, (R11)(DX*1); \
	MOVOU X3, (R11)(DX*2); \
	MOVOU X11, (R11)(R9*1); \
	LEAQ (R11)(DX*4), R11

// BLOCK2 transposes 8x8 two-byte items: eight 16-byte source columns.
#define BLOCK2 \
	MOVQ R13, R14; \
	MOVOU (R14), X0; \
	MOVOU (R14)(CX*1), X1; \
	MOVOU (R14)(CX*2), X2; \
	MOVOU (R14)(R8*1), X3; \
	LEAQ (R14)(CX*4), R14; \
	MOVOU (R14), X4; \
	MOVOU (R14)(CX*1), X5; \
	MOVOU (R14)(CX*2), X6; \
	MOVOU (R14)(R8*1), X7; \
	ADDQ $16, R13; \
	WORDS

// PAIR interleaves the 8-byte source columns at a and b into X (each
// two-byte item one destination row's pair of bytes).
#define PAIR(a, b, X) MOVQ a, X; MOVQ b, X15; PUNPCKLBW X15, X

// BLOCK1 transposes 8 destination rows by 16 one-byte items: sixteen
// 8-byte source columns, interleaved in pairs into eight columns of
// two-byte items, then transposed as those.
#define BLOCK1 \
	MOVQ R13, R14; \
	PAIRS(R14); \
	ADDQ $8, R13; \
	WORDS

// PAIRS loads 8 bytes of each of the sixteen source columns at p (CX
// apart; R8 is three times CX) as eight columns of byte pairs in X0 to X7.
#define PAIRS(p) \
	PAIR((p), (p)(CX*1), X0); \
	PAIR((p)(CX*2), (p)(R8*1), X1); \
	LEAQ (p)(CX*4), p; \
	PAIR((p), (p)(CX*1), X2); \
	PAIR((p)(CX*2), (p)(R8*1), X3); \
	LEAQ (p)(CX*4), p; \
	PAIR((p), (p)(CX*1), X4); \
	PAIR((p)(CX*2), (p)(R8*1), X5); \
	LEAQ (p)(CX*4), p; \
	PAIR((p), (p)(CX*1), X6); \
	PAIR((p)(CX*2), (p)(R8*1), X7)

// BLOCK8 transposes 4 destination rows by 2 eight-byte items: two
// source columns of 32 bytes.
#define BLOCK8 \
	MOVOU (R13), X0; \
	MOVOU (R13)(CX*1), X1; \
	MOVOU 16(R13), X2; \
	MOVOU 16(R13)(CX*1), X3; \
	MIX(PUNPCKLQDQ, PUNPCKHQDQ, X0, X1, X4); \
	MIX(PUNPCKLQDQ, PUNPCKHQDQ, X2, X3, X5); \
	MOVOU X0, (R11); \
	MOVOU X4, (R11)(DX*1); \
	MOVOU X2, (R11)(DX*2); \
	MOVOU X5, (R11)(R9*1); \
	ADDQ $32, R13; \
	LEAQ (R11)(DX*4), R11

// BLOCK16 moves 4 sixteen-byte items of one source column to 4
// destination rows.
#define BLOCK16 \
	MOVOU (R13), X0; \
	MOVOU 16(R13), X1; \
	MOVOU 32(R13), X2; \
	MOVOU 48(R13), X3; \
	MOVOU X0, (R11); \
	MOVOU X1, (R11)(DX*1); \
	MOVOU X2, (R11)(DX*2); \
	MOVOU X3, (R11)(R9*1); \
	ADDQ $64, R13; \
	LEAQ (R11)(DX*4), R11

// PAIRS64 loads 8 bytes of each of sixteen 64-byte lines at p as eight
// columns of byte pairs in X0 to X7.
#define PAIRS64(p) \
	PAIR((p), 64(p), X0); \
	PAIR(128(p), 192(p), X1); \
	PAIR(256(p), 320(p), X2); \
	PAIR(384(p), 448(p), X3); \
	PAIR(512(p), 576(p), X4); \
	PAIR(640(p), 704(p), X5); \
	PAIR(768(p), 832(p), X6); \
	PAIR(896(p), 960(p), X7)

// STORE256 writes X0 to X15 to the 256 bytes at (R11).
#define STORE256 \
	MOVOU X0, (R11); \
	MOVOU X1, 16(R11); \
	MOVOU X2, 32(R11); \
	MOVOU X3, 48(R11); \
	MOVOU X4, 64(R11); \
	MOVOU X5, 80(R11); \
	MOVOU X6, 96(R11); \
	MOVOU X7, 112(R11); \
	MOVOU X8, 128(R11); \
	MOVOU X9, 144(R11); \
	MOVOU X10, 160(R11); \
	MOVOU X11, 176(R11); \
	MOVOU X12, 192(R11); \
	MOVOU X13, 208(R11); \
	MOVOU X14, 224(R11); \
	MOVOU X15, 240(R11)

// LINES4 copies four 64-byte lines at (R13), CX apart, to the four lines
// at (R11), 64 bytes apart.
#define LINES4 \
	MOVOU (R13), X0; \
	MOVOU 16(R13), X1; \
	MOVOU 32(R13), X2; \
	MOVOU 48(R13), X3; \
	MOVOU (R13)(CX*1), X4; \
	MOVOU 16(R13)(CX*1), X5; \
	MOVOU 32(R13)(CX*1), X6; \
	MOVOU 48(R13)(CX*1), X7; \
	MOVOU (R13)(CX*2), X8; \
	MOVOU 16(R13)(CX*2), X9; \
	MOVOU 32(R13)(CX*2), X10; \
	MOVOU 48(R13)(CX*2), X11; \
	MOVOU (R13)(R8*1), X12; \
	MOVOU 16(R13)(R8*1), X13; \
	MOVOU 32(R13)(R8*1), X14; \
	MOVOU 48(R13)(R8*1), X15; \
	STORE256

// func TransposeStrip1of16(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64)
TEXT ·TransposeStrip1of16(SB), NOSPLIT, $0-48
	STRIP(2, 0, BLOCK16)

// func TransposeStrip2of8(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64)
TEXT ·TransposeStrip2of8(SB), NOSPLIT, $0-48
	STRIP(2, 1, BLOCK8)

// func TransposeStrip4of4(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64)
TEXT ·TransposeStrip4of4(SB), NOSPLIT, $0-48
	STRIP(2, 2, BLOCK4)

// func TransposeStrip8of2(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64)
TEXT ·TransposeStrip8of2(SB), NOSPLIT, $0-48
	STRIP(3, 3, BLOCK2)

// func TransposeStrip16of1(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64)
TEXT ·TransposeStrip16of1(SB), NOSPLIT, $0-48
	STRIP(3, 4, BLOCK1)

// BLOCKS_ARGS loads the arguments of the block kernels: dst in DI, src in
// R13, dstRow in DX (R9 three times it), srcCol in CX (R8 three times it),
// n in BX, and sets the flags for n == 0.
#define BLOCKS_ARGS \
	MOVQ dst+0(FP), DI; \
	MOVQ src+8(FP), R13; \
	MOVQ dstRow+16(FP), DX; \
	MOVQ srcCol+24(FP), CX; \
	MOVQ n+32(FP), BX; \
	LEAQ (CX)(CX*2), R8; \
	LEAQ (DX)(DX*2), R9; \
	TESTQ BX, BX

// func TransposeBlocks64of1(dst, src unsafe.Pointer, dstRow, srcCol, n int64)
//
// It transposes n blocks of 64x64 bytes in three passes through two 4 KiB
// buffers on the stack: the block's 64 source lines copied whole into the
// first (lines with power-of-two strides share a few cache sets, and
// reading them 8 bytes at a time would lose them between reads); the
// transpose into the second, sixteen columns by 8 rows a round (as
// BLOCK1); and the 64 destination rows written whole from it with
// non-temporal stores, which do not read the destination lines first. A
// block moves dst 64 bytes on and src 64 columns. While a block is
// transposed, two lines a round, the next block's source lines are
// prefetched (SI walks them), so that the memory works while the core
// shuffles (past the last block they are lines that are not read, and a
// prefetch never faults). AX and R10 count loops, R13 walks the source, R12
// and R11 the buffers.
TEXT ·TransposeBlocks64of1(SB), 0, $8192-40
	BLOCKS_ARGS
	JEQ blocksDone

block64:
	MOVQ SP, R11
	MOVQ $16, AX

lines64:
	LINES4
	LEAQ (R13)(CX*4), R13
	ADDQ $256, R11
	DECQ AX
	JNZ lines64

	MOVQ SP, R12
	LEAQ 4096(SP), R11
	MOVQ $4, AX
	MOVQ R13, SI

group64:
	MOVQ R12, R14
	MOVQ $8, R10

round64:
	PREFETCHT0 (SI)
	PREFETCHT0 (SI)(CX*1)
	LEAQ (SI)(CX*2), SI
	PAIRS64(R14)
	WORDS8
	MOVOU X0, (R11)
	MOVOU X2, 64(R11)
	MOVOU X1, 128(R11)
	MOVOU X6, 192(R11)
	MOVOU X8, 256(R11)
	MOVOU X9, 320(R11)
	MOVOU X3, 384(R11)
	MOVOU X11, 448(R11)
	ADDQ $512, R11
	ADDQ $8, R14
	DECQ R10
	JNZ round64
	SUBQ $4080, R11
	ADDQ $1024, R12
	DECQ AX
	JNZ group64

	LEAQ 4096(SP), R11
	MOVQ DI, R14
	MOVQ $16, AX

out64:
	MOVOU (R11), X0
	MOVOU 16(R11), X1
	MOVOU 32(R11), X2
	MOVOU 48(R11), X3
	MOVOU 64(R11), X4
	MOVOU 80(R11), X5
	MOVOU 96(R11), X6
	MOVOU 112(R11), X7
	MOVNTO X0, (R14)
	MOVNTO X1, 16(R14)
	MOVNTO X2, 32(R14)
	MOVNTO X3, 48(R14)
	MOVNTO X4, (R14)(DX*1)
	MOVNTO X5, 16(R14)(DX*1)
	MOVNTO X6, 32(R14)(DX*1)
	MOVNTO X7, 48(R14)(DX*1)
	MOVOU 128(R11), X0
	MOVOU 144(R11), X1
	MOVOU 160(R11), X2
	MOVOU 176(R11), X3
	MOVOU 192(R11), X4
	MOVOU 208(R11), X5
	MOVOU 224(R11), X6
	MOVOU 240(R11), X7
	MOVNTO X0, (R14)(DX*2)
	MOVNTO X1, 16(R14)(DX*2)
	MOVNTO X2, 32(R14)(DX*2)
	MOVNTO X3, 48(R14)(DX*2)
	MOVNTO X4, (R14)(R9*1)
	MOVNTO X5, 16(R14)(R9*1)
	MOVNTO X6, 32(R14)(R9*1)
	MOVNTO X7, 48(R14)(R9*1)
	ADDQ $256, R11
	LEAQ (R14)(DX*4), R14
	DECQ AX
	JNZ out64

	ADDQ $64, DI
	DECQ BX
	JNZ block64

blocksDone:
	RET

// T4 transposes the 4x4 four-byte items at boff(B) (four buffered source
// columns ls bytes apart, 16 bytes of each) and writes them as 16 bytes at
// doff(D) of four destination rows (DX apart; R9 is three times DX) with
// non-temporal stores.
#define T4(B, ls, boff, D, doff) \
	MOVUPS (boff)(B), X0; \
	MOVUPS (boff+ls)(B), X1; \
	MOVUPS (boff+2*ls)(B), X2; \
	MOVUPS (boff+3*ls)(B), X3; \
	SHUFFLE4; \
	MOVNTO X1, (doff)(D); \
	MOVNTO X2, (doff)(D)(DX*1); \
	MOVNTO X3, (doff)(D)(DX*2); \
	MOVNTO X5, (doff)(D)(R9*1)

// LINE256 copies 256 bytes at (R13) to (R11).
#define LINE256 \
	MOVOU (R13), X0; \
	MOVOU 16(R13), X1; \
	MOVOU 32(R13), X2; \
	MOVOU 48(R13), X3; \
	MOVOU 64(R13), X4; \
	MOVOU 80(R13), X5; \
	MOVOU 96(R13), X6; \
	MOVOU 112(R13), X7; \
	MOVOU 128(R13), X8; \
	MOVOU 144(R13), X9; \
	MOVOU 160(R13), X10; \
	MOVOU 176(R13), X11; \
	MOVOU 192(R13), X12; \
	MOVOU 208(R13), X13; \
	MOVOU 224(R13), X14; \
	MOVOU 240(R13), X15; \
	STORE256

// func TransposeBlocks64of4(dst, src unsafe.Pointer, dstRow, srcCol, n int64)
//
// It transposes n blocks of 64x64 four-byte items as TransposeBlocks64of1
// does bytes, through a 16 KiB buffer on the stack: 256 bytes of each of
// the block's 64 source columns copied whole into it, then four
// destination rows at a time transposed from it in 4x4 blocks (T4) and
// written 64 bytes, one whole line of each row, at a time with
// non-temporal stores. Each 64 bytes of four rows, one column (four lines)
// of the next block's source is prefetched (SI walks them). A block moves
// dst 256 bytes on and src 64 columns.
TEXT ·TransposeBlocks64of4(SB), 0, $16384-40
	BLOCKS_ARGS
	JEQ blocks64of4Done

block64of4:
	MOVQ SP, R11
	MOVQ $64, AX

lines64of4:
	LINE256
	ADDQ CX, R13
	ADDQ $256, R11
	DECQ AX
	JNZ lines64of4

	MOVQ R13, SI
	MOVQ SP, R12
	MOVQ DI, R14
	MOVQ $16, AX

rows64of4:
	MOVQ R12, R15
	MOVQ R14, R11
	MOVQ $4, R10

quads64of4:
	PREFETCHT0 (SI)
	PREFETCHT0 64(SI)
	PREFETCHT0 128(SI)
	PREFETCHT0 192(SI)
	ADDQ CX, SI
	T4(R15, 256, 0, R11, 0)
	T4(R15, 256, 1024, R11, 16)
	T4(R15, 256, 2048, R11, 32)
	T4(R15, 256, 3072, R11, 48)
	ADDQ $4096, R15
	ADDQ $64, R11
	DECQ R10
	JNZ quads64of4

	ADDQ $16, R12
	LEAQ (R14)(DX*4), R14
	DECQ AX
	JNZ rows64of4

	ADDQ $256, DI
	DECQ BX
	JNZ block64of4

blocks64of4Done:
	RET

// func StoreFence()
TEXT ·StoreFence(SB), NOSPLIT, $0-0
	SFENCE
	RET
