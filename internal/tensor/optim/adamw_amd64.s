//go:build !purego

#include "textflag.h"

// ADAMW_LANES updates the eight elements at byte offset AX of p (DI), g
// (SI), m (DX) and v (BX), p already loaded in Y0 (and decayed). Each
// product, sum, square root and quotient is adamwScalar's, rounded once
// (no FMA: the scalar code rounds every operation), in its order: m*b1,
// (1-b1)*g, their sum; v*b2, ((1-b2)*g)*g, their sum; sqrt(v)/sqrtBC2 +
// eps; p - (m*stepSize)/denom. Each operation also has the first source
// operand the Go compiler (1.26) gives the scalar code, which decides the
// result's payload when both operands are NaN; TestAdamWVecBits compares
// NaN bits too.
#define ADAMW_LANES \
	VMOVUPS (SI)(AX*1), Y1; \
	VMOVUPS (DX)(AX*1), Y2; \
	VMULPS Y9, Y2, Y2; \
	VMULPS Y1, Y10, Y3; \
	VADDPS Y2, Y3, Y2; \
	VMOVUPS Y2, (DX)(AX*1); \
	VMOVUPS (BX)(AX*1), Y4; \
	VMULPS Y11, Y4, Y4; \
	VMULPS Y1, Y12, Y5; \
	VMULPS Y1, Y5, Y5; \
	VADDPS Y4, Y5, Y4; \
	VMOVUPS Y4, (BX)(AX*1); \
	VSQRTPS Y4, Y4; \
	VDIVPS Y14, Y4, Y4; \
	VADDPS Y15, Y4, Y4; \
	VMULPS Y13, Y2, Y2; \
	VDIVPS Y4, Y2, Y2; \
	VSUBPS Y2, Y0, Y0; \
	VMOVUPS Y0, (DI)(AX*1)

// func adamwAVX2(p, gr, m, v *float32, n int, c adamwCoef, nodecay int)
// The AdamW update of elements [0, n) (n a positive multiple of 8), with
// c = decay, b1, 1-b1, b2, 1-b2, stepSize, sqrtBC2, eps; p *= decay first
// unless nodecay != 0. (g is gr here: g names a register in Go assembly.)
TEXT ·adamwAVX2(SB), NOSPLIT, $0-80
	MOVQ p+0(FP), DI
	MOVQ gr+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), BX
	MOVQ n+32(FP), CX
	LEAQ c+40(FP), R8
	MOVQ nodecay+72(FP), R9
	VBROADCASTSS 0(R8), Y8  // decay
	VBROADCASTSS 4(R8), Y9  // b1
	VBROADCASTSS 8(R8), Y10 // 1-b1
	VBROADCASTSS 12(R8), Y11 // b2
	VBROADCASTSS 16(R8), Y12 // 1-b2
	VBROADCASTSS 20(R8), Y13 // stepSize
	VBROADCASTSS 24(R8), Y14 // sqrtBC2
	VBROADCASTSS 28(R8), Y15 // eps
	SHLQ $2, CX // n in bytes
	XORQ AX, AX
	TESTQ R9, R9
	JNE nodecay

decay:
	VMOVUPS (DI)(AX*1), Y0
	VMULPS Y8, Y0, Y0 // p*decay
	ADAMW_LANES
	ADDQ $32, AX
	CMPQ AX, CX
	JLT decay
	VZEROUPPER
	RET

nodecay:
	VMOVUPS (DI)(AX*1), Y0
	ADAMW_LANES
	ADDQ $32, AX
	CMPQ AX, CX
	JLT nodecay
	VZEROUPPER
	RET
