//go:build !purego

#include "textflag.h"
#include "expf_amd64.h"

// The GELU loops of gelu.go, eight lanes at a time, each lane doing the
// scalar code's operations in its order with separately rounded products
// and sums (no FMA). Each routine stops before the first block of eight
// with a NaN result, unwritten, and returns how many elements it wrote;
// gelu.go redoes that block with the scalar code. The constants c are
// geluConsts (byte offset = 4 * index there).

// NANEXIT jumps to done when a lane of a or b is NaN.
#define NANEXIT(a, b) \
	VCMPPS $3, a, a, Y8; \
	VCMPPS $3, b, b, Y9; \
	VORPS Y9, Y8, Y8; \
	VMOVMSKPS Y8, BX; \
	TESTL BX, BX; \
	JNE done

// func geluFwdAVX2(x, y, cdf *float32, n int, c *[32]float32) int
// cdf = 0.5*(1 + erff(x*invSqrt2)); y = x*cdf. erff: x = min(max(x, -4),
// 4), the numerator in x2 = x*x by Horner's rule times x, over the
// denominator, each step x2*p + c.
TEXT ·geluFwdAVX2(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ cdf+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ c+32(FP), DX
	XORQ AX, AX
	VBROADCASTSS 0(DX), Y15  // invSqrt2
	VBROADCASTSS 4(DX), Y14  // -4
	VBROADCASTSS 8(DX), Y13  // 4
	VBROADCASTSS 60(DX), Y12 // 1
	VBROADCASTSS 64(DX), Y11 // 0.5

fwdloop:
	VMOVUPS (SI)(AX*4), Y0
	VMULPS Y15, Y0, Y1
	// VMAXPS/VMINPS return their second source (Y1 here) when either is
	// NaN, as Go's max and min return the NaN (y = x*cdf is NaN there
	// anyway, so the block goes to the scalar code).
	VMAXPS Y1, Y14, Y1
	VMINPS Y1, Y13, Y1
	VMULPS Y1, Y1, Y2 // x2
	VBROADCASTSS 12(DX), Y3
	VMULPS Y3, Y2, Y3
	VBROADCASTSS 16(DX), Y4
	VADDPS Y4, Y3, Y3
	VMULPS Y3, Y2, Y3
	VBROADCASTSS 20(DX), Y4
	VADDPS Y4, Y3, Y3
	VMULPS Y3, Y2, Y3
	VBROADCASTSS 24(DX), Y4
	VADDPS Y4, Y3, Y3
	VMULPS Y3, Y2, Y3
	VBROADCASTSS 28(DX), Y4
	VADDPS Y4, Y3, Y3
	VMULPS Y3, Y2, Y3
	VBROADCASTSS 32(DX), Y4
	VADDPS Y4, Y3, Y3
	VMULPS Y3, Y2, Y3
	VBROADCASTSS 36(DX), Y4
	VADDPS Y4, Y3, Y3
	VMULPS Y1, Y3, Y3 // p *= x
	VBROADCASTSS 40(DX), Y4
	VMULPS Y4, Y2, Y4
	VBROADCASTSS 44(DX), Y5
	VADDPS Y5, Y4, Y4
	VMULPS Y4, Y2, Y4
	VBROADCASTSS 48(DX), Y5
	VADDPS Y5, Y4, Y4
	VMULPS Y4, Y2, Y4
	VBROADCASTSS 52(DX), Y5
	VADDPS Y5, Y4, Y4
	VMULPS Y4, Y2, Y4
	VBROADCASTSS 56(DX), Y5
	VADDPS Y5, Y4, Y4 // q
	VDIVPS Y4, Y3, Y3 // p/q
	VADDPS Y12, Y3, Y3
	VMULPS Y11, Y3, Y3 // cdf
	VMULPS Y3, Y0, Y4  // y
	NANEXIT(Y3, Y4)
	VMOVUPS Y3, (R8)(AX*4)
	VMOVUPS Y4, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT fwdloop

done:
	MOVQ AX, ret+40(FP)
	VZEROUPPER
	RET

// func geluBwdAVX2(x, cdf, gy, gx *float32, n int, c *[32]float32, e *[16]float32) int
// gx = g * (cdf + (x*invSqrt2Pi)*expf((-0.5*x)*x)).
TEXT ·geluBwdAVX2(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ cdf+8(FP), R8
	MOVQ gy+16(FP), R10
	MOVQ gx+24(FP), DI
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), R9
	MOVQ e+48(FP), DX
	XORQ AX, AX
	EXPF_CONSTS

bwdloop:
	VMOVUPS (SI)(AX*4), Y15
	VBROADCASTSS 72(R9), Y0
	VMULPS Y15, Y0, Y0 // -0.5*x
	VMULPS Y15, Y0, Y0 // *x
	EXPF_AVX2
	VBROADCASTSS 68(R9), Y1
	VMULPS Y1, Y15, Y1 // x*invSqrt2Pi
	VMULPS Y5, Y1, Y1
	VMOVUPS (R8)(AX*4), Y2
	VADDPS Y1, Y2, Y2
	VMOVUPS (R10)(AX*4), Y3
	VMULPS Y2, Y3, Y3
	NANEXIT(Y3, Y3)
	VMOVUPS Y3, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT bwdloop

done:
	MOVQ AX, ret+56(FP)
	VZEROUPPER
	RET

// TANHARG sets Y1 = geluTanhC * (x + ((geluTanhA*x)*x)*x) for x in Y15,
// R9 = c.
#define TANHARG \
	VBROADCASTSS 76(R9), Y1; \
	VMULPS Y15, Y1, Y1; \
	VMULPS Y15, Y1, Y1; \
	VMULPS Y15, Y1, Y1; \
	VADDPS Y1, Y15, Y1; \
	VBROADCASTSS 80(R9), Y2; \
	VMULPS Y1, Y2, Y1

// func geluTanhFwdAVX2(x, y, t *float32, n int, c *[32]float32, e *[16]float32) int
// t = tanhf(u), u = TANHARG; y = (0.5*x)*(1 + t). Every lane computes all
// three of tanhf's branches and blends: the odd polynomial below |u| =
// 0.625, +-(1 - 2/(expf(|u|+|u|) + 1)) from there, +-1 above 9.
TEXT ·geluTanhFwdAVX2(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ t+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ c+32(FP), R9
	MOVQ e+40(FP), DX
	XORQ AX, AX
	EXPF_CONSTS

tfwdloop:
	VMOVUPS (SI)(AX*4), Y15
	TANHARG
	VPCMPEQD Y2, Y2, Y2
	VPSRLD $1, Y2, Y2
	VANDPS Y2, Y1, Y0 // |u|
	VADDPS Y0, Y0, Y0
	EXPF_AVX2
	TANHARG // again: EXPF_AVX2 took Y1-Y9

	VBROADCASTSS 60(R9), Y2 // 1
	VADDPS Y2, Y5, Y5
	VBROADCASTSS 92(R9), Y3
	VDIVPS Y5, Y3, Y3
	VSUBPS Y3, Y2, Y3 // 1 - 2/(e+1)
	VPCMPEQD Y6, Y6, Y6
	VPSLLD $31, Y6, Y6 // the sign bit
	VXORPS Y7, Y7, Y7
	VCMPPS $0x11, Y7, Y1, Y8 // u < 0 (LT_OQ)
	VANDPS Y6, Y8, Y8
	VXORPS Y8, Y3, Y3 // negated where u < 0

	VMULPS Y1, Y1, Y4 // s
	VBROADCASTSS 100(R9), Y5
	VMULPS Y4, Y5, Y5
	VBROADCASTSS 104(R9), Y7
	VADDPS Y7, Y5, Y5
	VMULPS Y4, Y5, Y5
	VBROADCASTSS 108(R9), Y7
	VSUBPS Y7, Y5, Y5
	VMULPS Y4, Y5, Y5
	VBROADCASTSS 112(R9), Y7
	VADDPS Y7, Y5, Y5
	VMULPS Y4, Y5, Y5
	VBROADCASTSS 116(R9), Y7
	VSUBPS Y7, Y5, Y5
	VMULPS Y4, Y5, Y5
	VMULPS Y1, Y5, Y5
	VADDPS Y1, Y5, Y5 // the polynomial

	VANDPS Y6, Y1, Y7
	VORPS Y2, Y7, Y7 // +-1, u's sign
	VPCMPEQD Y8, Y8, Y8
	VPSRLD $1, Y8, Y8
	VANDPS Y8, Y1, Y8 // |u|
	VBROADCASTSS 88(R9), Y9
	VCMPPS $0x1d, Y9, Y8, Y9 // |u| >= 0.625 (GE_OQ)
	VBLENDVPS Y9, Y3, Y5, Y5
	VBROADCASTSS 84(R9), Y9
	VCMPPS $0x1e, Y9, Y8, Y9 // |u| > 9 (GT_OQ)
	VBLENDVPS Y9, Y7, Y5, Y5 // t

	VBROADCASTSS 64(R9), Y3
	VMULPS Y15, Y3, Y3 // 0.5*x
	VADDPS Y2, Y5, Y4
	VMULPS Y4, Y3, Y3 // y
	NANEXIT(Y3, Y5)
	VMOVUPS Y5, (R8)(AX*4)
	VMOVUPS Y3, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT tfwdloop

done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET

// func geluTanhBwdAVX2(x, t, gy, gx *float32, n int, c *[32]float32) int
// gx = g * (0.5*(1+t) + (((0.5*x)*(1-t*t))*geluTanhC)*(1 + ((3*geluTanhA)*x)*x)).
TEXT ·geluTanhBwdAVX2(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ t+8(FP), R8
	MOVQ gy+16(FP), R10
	MOVQ gx+24(FP), DI
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), R9
	XORQ AX, AX
	VBROADCASTSS 60(R9), Y15 // 1
	VBROADCASTSS 64(R9), Y14 // 0.5
	VBROADCASTSS 80(R9), Y13 // geluTanhC
	VBROADCASTSS 96(R9), Y12 // 3*geluTanhA

tbwdloop:
	VMOVUPS (SI)(AX*4), Y0 // x
	VMOVUPS (R8)(AX*4), Y1 // t
	VADDPS Y15, Y1, Y2
	VMULPS Y14, Y2, Y2 // 0.5*(1+t)
	VMULPS Y0, Y14, Y3 // 0.5*x
	VMULPS Y1, Y1, Y4
	VSUBPS Y4, Y15, Y4 // 1 - t*t
	VMULPS Y4, Y3, Y3
	VMULPS Y13, Y3, Y3
	VMULPS Y0, Y12, Y4
	VMULPS Y0, Y4, Y4
	VADDPS Y15, Y4, Y4
	VMULPS Y4, Y3, Y3
	VADDPS Y3, Y2, Y2
	VMOVUPS (R10)(AX*4), Y3
	VMULPS Y2, Y3, Y3
	NANEXIT(Y3, Y3)
	VMOVUPS Y3, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT tbwdloop

done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET

// The AVX-512 routines below are the AVX2 ones above on sixteen lanes:
// per lane the same operations in the same order, the compares into mask
// registers and the blends as merges under them, so every lane has the
// AVX2 routine's bits (AVX512F only). Same contract: n is a multiple of 8,
// and each stops before a block with a NaN result, unwritten, returning
// how many elements it wrote (a multiple of 16 there, which gelu.go's
// scalar redo of the next eight handles as it does for the AVX2 routines).

// BLOCKMASK sets K1 to the lanes of the block at AX: all sixteen, or the
// low eight where only eight are left. Masked loads zero the others.
#define BLOCKMASK \
	MOVQ CX, BX; \
	SUBQ AX, BX; \
	MOVL $0xffff, R11; \
	MOVL $0xff, R12; \
	CMPQ BX, $16; \
	CMOVQLT R12, R11; \
	KMOVW R11, K1

// NANEXIT512 jumps to done when a lane of a or b under K1 is NaN.
#define NANEXIT512(a, b) \
	VCMPPS $3, a, a, K1, K2; \
	VCMPPS $3, b, b, K1, K3; \
	KORTESTW K2, K3; \
	JNE done

// func geluFwdAVX512(x, y, cdf *float32, n int, c *[32]float32) int
TEXT ·geluFwdAVX512(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ cdf+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ c+32(FP), DX
	XORQ AX, AX
	VBROADCASTSS 0(DX), Z15  // invSqrt2
	VBROADCASTSS 4(DX), Z14  // -4
	VBROADCASTSS 8(DX), Z13  // 4
	VBROADCASTSS 60(DX), Z12 // 1
	VBROADCASTSS 64(DX), Z11 // 0.5
	VBROADCASTSS 12(DX), Z16 // the numerator
	VBROADCASTSS 16(DX), Z17
	VBROADCASTSS 20(DX), Z18
	VBROADCASTSS 24(DX), Z19
	VBROADCASTSS 28(DX), Z20
	VBROADCASTSS 32(DX), Z21
	VBROADCASTSS 36(DX), Z22
	VBROADCASTSS 40(DX), Z23 // the denominator
	VBROADCASTSS 44(DX), Z24
	VBROADCASTSS 48(DX), Z25
	VBROADCASTSS 52(DX), Z26
	VBROADCASTSS 56(DX), Z27

fwd512loop:
	BLOCKMASK
	VMOVUPS.Z (SI)(AX*4), K1, Z0
	VMULPS Z15, Z0, Z1
	VMAXPS Z1, Z14, Z1
	VMINPS Z1, Z13, Z1
	VMULPS Z1, Z1, Z2 // x2
	VMULPS Z16, Z2, Z3
	VADDPS Z17, Z3, Z3
	VMULPS Z3, Z2, Z3
	VADDPS Z18, Z3, Z3
	VMULPS Z3, Z2, Z3
	VADDPS Z19, Z3, Z3
	VMULPS Z3, Z2, Z3
	VADDPS Z20, Z3, Z3
	VMULPS Z3, Z2, Z3
	VADDPS Z21, Z3, Z3
	VMULPS Z3, Z2, Z3
	VADDPS Z22, Z3, Z3
	VMULPS Z1, Z3, Z3 // p *= x
	VMULPS Z23, Z2, Z4
	VADDPS Z24, Z4, Z4
	VMULPS Z4, Z2, Z4
	VADDPS Z25, Z4, Z4
	VMULPS Z4, Z2, Z4
	VADDPS Z26, Z4, Z4
	VMULPS Z4, Z2, Z4
	VADDPS Z27, Z4, Z4 // q
	VDIVPS Z4, Z3, Z3  // p/q
	VADDPS Z12, Z3, Z3
	VMULPS Z11, Z3, Z3 // cdf
	VMULPS Z3, Z0, Z4  // y
	NANEXIT512(Z3, Z4)
	VMOVUPS Z3, K1, (R8)(AX*4)
	VMOVUPS Z4, K1, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT fwd512loop
	MOVQ CX, AX // past n after a last block of eight

done:
	MOVQ AX, ret+40(FP)
	VZEROUPPER
	RET

// func geluBwdAVX512(x, cdf, gy, gx *float32, n int, c *[32]float32, e *[16]float32) int
TEXT ·geluBwdAVX512(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ cdf+8(FP), R8
	MOVQ gy+16(FP), R10
	MOVQ gx+24(FP), DI
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), R9
	MOVQ e+48(FP), DX
	XORQ AX, AX
	EXPF_CONSTS_AVX512
	VBROADCASTSS 72(R9), Z30 // -0.5
	VBROADCASTSS 68(R9), Z31 // invSqrt2Pi

bwd512loop:
	BLOCKMASK
	VMOVUPS.Z (SI)(AX*4), K1, Z15
	VMULPS Z15, Z30, Z0 // -0.5*x
	VMULPS Z15, Z0, Z0  // *x
	EXPF_AVX512
	VMULPS Z31, Z15, Z1 // x*invSqrt2Pi
	VMULPS Z5, Z1, Z1
	VMOVUPS.Z (R8)(AX*4), K1, Z2
	VADDPS Z1, Z2, Z2
	VMOVUPS.Z (R10)(AX*4), K1, Z3
	VMULPS Z2, Z3, Z3
	NANEXIT512(Z3, Z3)
	VMOVUPS Z3, K1, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT bwd512loop
	MOVQ CX, AX

done:
	MOVQ AX, ret+56(FP)
	VZEROUPPER
	RET

// func geluTanhFwdAVX512(x, y, t *float32, n int, c *[32]float32, e *[16]float32) int
// As geluTanhFwdAVX2, u kept in Z31 across EXPF_AVX512 instead of
// recomputed (the same operations, so the same bits).
TEXT ·geluTanhFwdAVX512(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ t+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ c+32(FP), R9
	MOVQ e+40(FP), DX
	XORQ AX, AX
	EXPF_CONSTS_AVX512
	VPSLLD $31, Z28, Z30 // the sign bit

tfwd512loop:
	BLOCKMASK
	VMOVUPS.Z (SI)(AX*4), K1, Z15
	VBROADCASTSS 76(R9), Z1
	VMULPS Z15, Z1, Z1
	VMULPS Z15, Z1, Z1
	VMULPS Z15, Z1, Z1
	VADDPS Z1, Z15, Z1
	VBROADCASTSS 80(R9), Z2
	VMULPS Z1, Z2, Z31 // u
	VPSRLD $1, Z28, Z2
	VPANDD Z2, Z31, Z0 // |u|
	VADDPS Z0, Z0, Z0
	EXPF_AVX512

	VBROADCASTSS 60(R9), Z2 // 1
	VADDPS Z2, Z5, Z5
	VBROADCASTSS 92(R9), Z3
	VDIVPS Z5, Z3, Z3
	VSUBPS Z3, Z2, Z3             // 1 - 2/(e+1)
	VCMPPS $0x11, Z29, Z31, K2    // u < 0 (LT_OQ)
	VPXORD Z30, Z3, K2, Z3        // negated there

	VMULPS Z31, Z31, Z4 // s
	VBROADCASTSS 100(R9), Z5
	VMULPS Z4, Z5, Z5
	VBROADCASTSS 104(R9), Z7
	VADDPS Z7, Z5, Z5
	VMULPS Z4, Z5, Z5
	VBROADCASTSS 108(R9), Z7
	VSUBPS Z7, Z5, Z5
	VMULPS Z4, Z5, Z5
	VBROADCASTSS 112(R9), Z7
	VADDPS Z7, Z5, Z5
	VMULPS Z4, Z5, Z5
	VBROADCASTSS 116(R9), Z7
	VSUBPS Z7, Z5, Z5
	VMULPS Z4, Z5, Z5
	VMULPS Z31, Z5, Z5
	VADDPS Z31, Z5, Z5 // the polynomial

	VPANDD Z30, Z31, Z7
	VPORD Z2, Z7, Z7 // +-1, u's sign
	VPSRLD $1, Z28, Z8
	VPANDD Z8, Z31, Z8 // |u|
	VBROADCASTSS 88(R9), Z9
	VCMPPS $0x1d, Z9, Z8, K2 // |u| >= 0.625 (GE_OQ)
	VMOVAPS Z3, K2, Z5
	VBROADCASTSS 84(R9), Z9
	VCMPPS $0x1e, Z9, Z8, K2 // |u| > 9 (GT_OQ)
	VMOVAPS Z7, K2, Z5       // t

	VBROADCASTSS 64(R9), Z3
	VMULPS Z15, Z3, Z3 // 0.5*x
	VADDPS Z2, Z5, Z4
	VMULPS Z4, Z3, Z3 // y
	NANEXIT512(Z3, Z5)
	VMOVUPS Z5, K1, (R8)(AX*4)
	VMOVUPS Z3, K1, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT tfwd512loop
	MOVQ CX, AX

done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET

// func geluTanhBwdAVX512(x, t, gy, gx *float32, n int, c *[32]float32) int
TEXT ·geluTanhBwdAVX512(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ t+8(FP), R8
	MOVQ gy+16(FP), R10
	MOVQ gx+24(FP), DI
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), R9
	XORQ AX, AX
	VBROADCASTSS 60(R9), Z15 // 1
	VBROADCASTSS 64(R9), Z14 // 0.5
	VBROADCASTSS 80(R9), Z13 // geluTanhC
	VBROADCASTSS 96(R9), Z12 // 3*geluTanhA

tbwd512loop:
	BLOCKMASK
	VMOVUPS.Z (SI)(AX*4), K1, Z0 // x
	VMOVUPS.Z (R8)(AX*4), K1, Z1 // t
	VADDPS Z15, Z1, Z2
	VMULPS Z14, Z2, Z2 // 0.5*(1+t)
	VMULPS Z0, Z14, Z3 // 0.5*x
	VMULPS Z1, Z1, Z4
	VSUBPS Z4, Z15, Z4 // 1 - t*t
	VMULPS Z4, Z3, Z3
	VMULPS Z13, Z3, Z3
	VMULPS Z0, Z12, Z4
	VMULPS Z0, Z4, Z4
	VADDPS Z15, Z4, Z4
	VMULPS Z4, Z3, Z3
	VADDPS Z3, Z2, Z2
	VMOVUPS.Z (R10)(AX*4), K1, Z3
	VMULPS Z2, Z3, Z3
	NANEXIT512(Z3, Z3)
	VMOVUPS Z3, K1, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT tbwd512loop
	MOVQ CX, AX

done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET
