//go:build !purego

#include "textflag.h"

// func expSumAVX2(x *float32, n int, mx float32, c *[16][4]float64, sum float64) (s float64, done int)
// sum += math.Exp(float64(x[j] - mx)) for j < n (n a positive multiple of
// 4), in order. Each lane does math.Exp's FMA path (math/exp_amd64.s,
// avxfma) op for op: k = round(x*LOG2E) (VCVTPD2DQ rounds as CVTSD2SL
// under the same MXCSR); r = fnmadd(k, LN2L, fnmadd(k, LN2U, x)) * 0.0625;
// the Taylor chain of FMAs; r*p, then three r = r*(r+2) and r*(r+2) + 1
// by FMA; r * 2^k. That is math.Exp's exact sequence for x in [-700, 700]
// (no special case or denormal scaling is reached there); lanes below
// -750 (-Inf included) are math.Exp's 0, masked to +0 (adding +0 to the
// non-negative sum changes nothing). A group with any other lane stops
// the loop (done = its index) for the caller's scalar math.Exp.
TEXT ·expSumAVX2(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS mx+16(FP), X15
	MOVQ c+24(FP), DX
	VMOVSD sum+32(FP), X5
	XORQ BX, BX
	VPCMPEQD X14, X14, X14
	VPSRLD $22, X14, X14 // 1023 in every int32 lane: the exponent bias

loop:
	VMOVUPS (SI)(BX*4), X0
	VSUBPS X15, X0, X0 // v - mx, rounded to float32
	VCVTPS2PD X0, Y0 // x (exact)
	VCMPPD $0x1d, 32(DX), Y0, Y6 // x >= -700 (GE_OQ; false for NaN)
	VCMPPD $0x12, 0(DX), Y0, Y7 // x <= 700 (LE_OQ)
	VANDPD Y7, Y6, Y6
	VCMPPD $0x11, 64(DX), Y0, Y7 // x < -750 (LT_OQ): math.Exp is 0
	VORPD Y7, Y6, Y6
	VMOVMSKPD Y6, AX
	CMPQ AX, $15
	JNE out

	VMULPD 96(DX), Y0, Y1 // x*LOG2E
	VCVTPD2DQY Y1, X2 // k, rounded to nearest even
	VCVTDQ2PD X2, Y1
	VFNMADD231PD 128(DX), Y1, Y0 // x - k*LN2U, one rounding
	VFNMADD231PD 160(DX), Y1, Y0 // - k*LN2L
	VMULPD 192(DX), Y0, Y0 // *0.0625
	VMOVUPD 224(DX), Y3
	VFMADD213PD 256(DX), Y0, Y3
	VFMADD213PD 288(DX), Y0, Y3
	VFMADD213PD 320(DX), Y0, Y3
	VFMADD213PD 352(DX), Y0, Y3
	VFMADD213PD 384(DX), Y0, Y3
	VFMADD213PD 416(DX), Y0, Y3
	VFMADD213PD 448(DX), Y0, Y3 // the Taylor series
	VMULPD Y3, Y0, Y0
	VADDPD 480(DX), Y0, Y3
	VMULPD Y3, Y0, Y0 // r*(r+2)
	VADDPD 480(DX), Y0, Y3
	VMULPD Y3, Y0, Y0
	VADDPD 480(DX), Y0, Y3
	VMULPD Y3, Y0, Y0
	VADDPD 480(DX), Y0, Y3
	VFMADD213PD 448(DX), Y3, Y0 // r*(r+2) + 1
	VPADDD X14, X2, X2
	VPMOVZXDQ X2, Y2
	VPSLLQ $52, Y2, Y2 // 2^k (k + 1023 in [13, 2033])
	VMULPD Y2, Y0, Y0
	VANDNPD Y0, Y7, Y0 // +0 where x < -750

	// The sum, lane by lane in element order.
	VADDSD X0, X5, X5
	VPERMILPD $1, X0, X1
	VADDSD X1, X5, X5
	VEXTRACTF128 $1, Y0, X1
	VADDSD X1, X5, X5
	VPERMILPD $1, X1, X1
	VADDSD X1, X5, X5

	ADDQ $4, BX
	CMPQ BX, CX
	JLT loop

out:
	VMOVSD X5, s+40(FP)
	MOVQ BX, done+48(FP)
	VZEROUPPER
	RET

// func maxAVX2(x *float32, n int) (m float32, nan bool)
// The max of x[0..n) (n a positive multiple of 8) by VMAXPS in four
// running maxima, and whether any element is NaN (UNORD_Q compares).
TEXT ·maxAVX2(SB), NOSPLIT, $0-21
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS (SI), Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3
	VCMPPS $3, Y0, Y0, Y8 // NaN lanes
	MOVQ $8, BX

loop32:
	LEAQ 32(BX), AX
	CMPQ AX, CX
	JGT loop8
	VMOVUPS (SI)(BX*4), Y4
	VMOVUPS 32(SI)(BX*4), Y5
	VMOVUPS 64(SI)(BX*4), Y6
	VMOVUPS 96(SI)(BX*4), Y7
	VMAXPS Y4, Y0, Y0
	VMAXPS Y5, Y1, Y1
	VMAXPS Y6, Y2, Y2
	VMAXPS Y7, Y3, Y3
	VCMPPS $3, Y5, Y4, Y9 // either is NaN
	VCMPPS $3, Y7, Y6, Y10
	VORPS Y9, Y8, Y8
	VORPS Y10, Y8, Y8
	MOVQ AX, BX
	JMP loop32

loop8:
	CMPQ BX, CX
	JGE reduce
	VMOVUPS (SI)(BX*4), Y4
	VMAXPS Y4, Y0, Y0
	VCMPPS $3, Y4, Y4, Y9
	VORPS Y9, Y8, Y8
	ADDQ $8, BX
	JMP loop8

reduce:
	VMAXPS Y1, Y0, Y0
	VMAXPS Y3, Y2, Y2
	VMAXPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1 // the two halves swapped
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1 // neighbours swapped
	VMAXPS X1, X0, X0
	VMOVSS X0, m+16(FP)
	VMOVMSKPS Y8, AX
	TESTL AX, AX
	SETNE nan+20(FP)
	VZEROUPPER
	RET

// func subAVX2(dst, src *float32, n int, s float32)
// dst[j] = src[j] - s for j < n (n a positive multiple of 8).
TEXT ·subAVX2(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS s+24(FP), Y1

loop:
	VMOVUPS (SI), Y0
	VSUBPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNE loop
	VZEROUPPER
	RET

// func mulAVX2(dst, src *float32, n int, s float32)
// dst[j] = src[j] * s for j < n (n a positive multiple of 8), src[j] the
// first operand (a NaN there is the result, quieted, as with MULSS).
TEXT ·mulAVX2(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS s+24(FP), Y1

loop:
	VMOVUPS (SI), Y0
	VMULPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNE loop
	VZEROUPPER
	RET
