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
