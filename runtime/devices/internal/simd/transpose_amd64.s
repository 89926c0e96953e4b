#include "textflag.h"

// func TransposeStrip4x4of4(dst, src unsafe.Pointer, dstRow, srcCol, n int64)
TEXT ·TransposeStrip4x4of4(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ dstRow+16(FP), DX
	MOVQ srcCol+24(FP), CX
	MOVQ n+32(FP), BX
	LEAQ (CX)(CX*2), R8
	LEAQ (DX)(DX*2), R9
	MOVQ CX, R10
	SHLQ $2, R10

loop:
	TESTQ BX, BX
	JEQ   done
	MOVUPS (SI), X0
	MOVUPS (SI)(CX*1), X1
	MOVUPS (SI)(CX*2), X2
	MOVUPS (SI)(R8*1), X3
	MOVAPS X0, X4
	UNPCKLPS X1, X0
	UNPCKHPS X1, X4
	MOVAPS X2, X5
	UNPCKLPS X3, X2
	UNPCKHPS X3, X5
	MOVAPS X0, X1
	MOVLHPS X2, X1
	MOVHLPS X0, X2
	MOVAPS X4, X3
	MOVLHPS X5, X3
	MOVHLPS X4, X5
	MOVUPS X1, (DI)
	MOVUPS X2, (DI)(DX*1)
	MOVUPS X3, (DI)(DX*2)
	MOVUPS X5, (DI)(R9*1)
	ADDQ R10, SI
	ADDQ $16, DI
	DECQ BX
	JMP  loop

done:
	RET
