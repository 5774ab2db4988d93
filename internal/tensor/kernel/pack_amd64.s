//go:build !purego

#include "textflag.h"

// func copyRows16AVX(dst, src *float32, lds, rows int)
TEXT ·copyRows16AVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), DX
	SHLQ $2, DX
	MOVQ rows+24(FP), CX

c16loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ DX, SI
	ADDQ $64, DI
	DECQ CX
	JNE c16loop
	VZEROUPPER
	RET

// func copyPanels16x4AVX(dst, src *float32, lds, rows int)
// copyRows16AVX for four adjacent micro-panels at once (dst's panels
// 16*rows floats apart): each source row is read as 256 contiguous bytes
// (in BenchmarkPack, 1.6-1.9x faster than the four panels one by one).
TEXT ·copyPanels16x4AVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), DX
	SHLQ $2, DX
	MOVQ rows+24(FP), CX
	MOVQ CX, R8
	SHLQ $6, R8 // panel stride in bytes
	LEAQ (R8)(R8*2), R10 // 3 panels

p16loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMOVUPS 128(SI), Y4
	VMOVUPS 160(SI), Y5
	VMOVUPS 192(SI), Y6
	VMOVUPS 224(SI), Y7
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (DI)(R8*1)
	VMOVUPS Y3, 32(DI)(R8*1)
	VMOVUPS Y4, (DI)(R8*2)
	VMOVUPS Y5, 32(DI)(R8*2)
	VMOVUPS Y6, (DI)(R10*1)
	VMOVUPS Y7, 32(DI)(R10*1)
	ADDQ DX, SI
	ADDQ $64, DI
	DECQ CX
	JNE  p16loop
	VZEROUPPER
	RET

// func copyRows6SSE(dst, src *float32, lds, rows int)
TEXT ·copyRows6SSE(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), DX
	SHLQ $2, DX
	MOVQ rows+24(FP), CX

c6loop:
	MOVUPS (SI), X0
	MOVQ 16(SI), X1
	MOVUPS X0, (DI)
	MOVQ X1, 16(DI)
	ADDQ DX, SI
	ADDQ $24, DI
	DECQ CX
	JNE c6loop
	RET

// func copyPanels6SSE(dst, src *float32, lds, rows, panels int)
// copyRows6SSE for panels adjacent micro-panels (src's 6 floats apart,
// dst's 6*rows floats apart), eight rows of all the panels at a time: the
// eight source rows' lines are each read whole before the next eight rows,
// where one panel at a time reads a line once per panel and, with rows a
// multiple of 4 KiB apart, can find it evicted from its L1 set in between.
TEXT ·copyPanels6SSE(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), DX
	SHLQ $2, DX
	MOVQ rows+24(FP), CX
	MOVQ panels+32(FP), R9
	LEAQ (CX)(CX*2), R8
	SHLQ $3, R8 // dst panel stride in bytes
	LEAQ (DX)(DX*2), R10 // 3 rows
	CMPQ CX, $8
	JLT  p6tail

p6eight:
	MOVQ SI, R11
	MOVQ DI, BX
	MOVQ R9, R12

p6eightpanel:
	MOVQ R11, AX
	MOVUPS (AX), X0
	MOVQ 16(AX), X8
	MOVUPS (AX)(DX*1), X1
	MOVQ 16(AX)(DX*1), X9
	MOVUPS (AX)(DX*2), X2
	MOVQ 16(AX)(DX*2), X10
	MOVUPS (AX)(R10*1), X3
	MOVQ 16(AX)(R10*1), X11
	LEAQ (AX)(DX*4), AX
	MOVUPS (AX), X4
	MOVQ 16(AX), X12
	MOVUPS (AX)(DX*1), X5
	MOVQ 16(AX)(DX*1), X13
	MOVUPS (AX)(DX*2), X6
	MOVQ 16(AX)(DX*2), X14
	MOVUPS (AX)(R10*1), X7
	MOVQ 16(AX)(R10*1), X15
	MOVUPS X0, 0(BX)
	MOVQ X8, 16(BX)
	MOVUPS X1, 24(BX)
	MOVQ X9, 40(BX)
	MOVUPS X2, 48(BX)
	MOVQ X10, 64(BX)
	MOVUPS X3, 72(BX)
	MOVQ X11, 88(BX)
	MOVUPS X4, 96(BX)
	MOVQ X12, 112(BX)
	MOVUPS X5, 120(BX)
	MOVQ X13, 136(BX)
	MOVUPS X6, 144(BX)
	MOVQ X14, 160(BX)
	MOVUPS X7, 168(BX)
	MOVQ X15, 184(BX)
	ADDQ $24, R11
	ADDQ R8, BX
	DECQ R12
	JNE  p6eightpanel
	LEAQ (SI)(DX*8), SI
	ADDQ $192, DI
	SUBQ $8, CX
	CMPQ CX, $8
	JGE  p6eight
	TESTQ CX, CX
	JEQ  p6done

p6tail:
	MOVQ SI, R11
	MOVQ DI, BX
	MOVQ R9, R12

p6tailpanel:
	MOVUPS (R11), X0
	MOVQ 16(R11), X1
	MOVUPS X0, (BX)
	MOVQ X1, 16(BX)
	ADDQ $24, R11
	ADDQ R8, BX
	DECQ R12
	JNE  p6tailpanel
	ADDQ DX, SI
	ADDQ $24, DI
	DECQ CX
	JNE  p6tail

p6done:
	RET

// Store the first six floats of one transposed column (low lane: four,
// high lane: two) at off(DI).
#define STORE6(y, x, off) \
	VMOVUPS x, off(DI); \
	VEXTRACTF128 $1, y, X6; \
	VMOVQ X6, off+16(DI)

// func interleave6AVX(dst, src *float32, lds, blocks int)
TEXT ·interleave6AVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), R8
	SHLQ $2, R8
	MOVQ blocks+24(FP), CX
	LEAQ (R8)(R8*2), R10 // 3 rows

iblock:
	MOVQ SI, AX
	VMOVUPS (AX), Y0
	VMOVUPS (AX)(R8*1), Y1
	VMOVUPS (AX)(R8*2), Y2
	VMOVUPS (AX)(R10*1), Y3
	LEAQ (AX)(R8*4), AX
	VMOVUPS (AX), Y4
	VMOVUPS (AX)(R8*1), Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15

	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7

	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15

	STORE6(Y8, X8, 0)
	STORE6(Y9, X9, 24)
	STORE6(Y10, X10, 48)
	STORE6(Y11, X11, 72)
	STORE6(Y12, X12, 96)
	STORE6(Y13, X13, 120)
	STORE6(Y14, X14, 144)
	STORE6(Y15, X15, 168)

	ADDQ $32, SI
	ADDQ $192, DI
	DECQ CX
	JNE iblock
	VZEROUPPER
	RET
