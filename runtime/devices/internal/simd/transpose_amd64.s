//go:build !purego

#include "textflag.h"

// func TransposeStrip4of4(dst, src unsafe.Pointer, dstRow, srcCol, n, rows int64)
TEXT ·TransposeStrip4of4(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ dstRow+16(FP), DX
	MOVQ srcCol+24(FP), CX
	MOVQ n+32(FP), BX
	MOVQ rows+40(FP), R12
	SHRQ $2, R12           // blocks a step
	LEAQ (CX)(CX*2), R8    // 3 source columns
	LEAQ (DX)(DX*2), R9    // 3 destination rows
	MOVQ CX, R10
	SHLQ $2, R10           // 4 source columns: the next step

step:
	TESTQ BX, BX
	JEQ   done
	TESTQ R12, R12
	JEQ   done
	MOVQ  DI, R11
	MOVQ  SI, R13
	MOVQ  R12, AX

block:
	// A 4x4 block: four source columns of 4 items, read at R13, written
	// as four destination rows at R11.
	MOVUPS   (R13), X0
	MOVUPS   (R13)(CX*1), X1
	MOVUPS   (R13)(CX*2), X2
	MOVUPS   (R13)(R8*1), X3
	MOVAPS   X0, X4
	UNPCKLPS X1, X0
	UNPCKHPS X1, X4
	MOVAPS   X2, X5
	UNPCKLPS X3, X2
	UNPCKHPS X3, X5
	MOVAPS   X0, X1
	MOVLHPS  X2, X1
	MOVHLPS  X0, X2
	MOVAPS   X4, X3
	MOVLHPS  X5, X3
	MOVHLPS  X4, X5
	MOVUPS   X1, (R11)
	MOVUPS   X2, (R11)(DX*1)
	MOVUPS   X3, (R11)(DX*2)
	MOVUPS   X5, (R11)(R9*1)
	ADDQ     $16, R13
	LEAQ     (R11)(DX*4), R11
	DECQ     AX
	JNZ      block

	ADDQ R10, SI
	ADDQ $16, DI
	DECQ BX
	JMP  step

done:
	RET
