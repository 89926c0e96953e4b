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

// BLOCK4 transposes 4x4 four-byte items: four 16-byte source columns to
// four 16-byte destination rows.
#define BLOCK4 \
	MOVUPS (R13), X0; \
	MOVUPS (R13)(CX*1), X1; \
	MOVUPS (R13)(CX*2), X2; \
	MOVUPS (R13)(R8*1), X3; \
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
	MOVHLPS X4, X5; \
	MOVUPS X1, (R11); \
	MOVUPS X2, (R11)(DX*1); \
	MOVUPS X3, (R11)(DX*2); \
	MOVUPS X5, (R11)(R9*1); \
	ADDQ $16, R13; \
	LEAQ (R11)(DX*4), R11

// MIX interleaves a and b: the low halves' items into a, the high
// halves' into t.
#define MIX(LO, HI, a, b, t) MOVO a, t; LO b, a; HI b, t

// WORDS transposes 8x8 two-byte items, source columns in X0 to X7, and
// writes the eight destination rows of 16 bytes at R11, moving R11 eight
// rows on: three rounds of interleaving (words, pairs, quads).
#define WORDS \
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
	MIX(PUNPCKLQDQ, PUNPCKHQDQ, X3, X7, X11); \
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
	PAIR((R14), (R14)(CX*1), X0); \
	PAIR((R14)(CX*2), (R14)(R8*1), X1); \
	LEAQ (R14)(CX*4), R14; \
	PAIR((R14), (R14)(CX*1), X2); \
	PAIR((R14)(CX*2), (R14)(R8*1), X3); \
	LEAQ (R14)(CX*4), R14; \
	PAIR((R14), (R14)(CX*1), X4); \
	PAIR((R14)(CX*2), (R14)(R8*1), X5); \
	LEAQ (R14)(CX*4), R14; \
	PAIR((R14), (R14)(CX*1), X6); \
	PAIR((R14)(CX*2), (R14)(R8*1), X7); \
	ADDQ $8, R13; \
	WORDS

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
