//go:build !purego

#include "textflag.h"

// func expSubAVX2(dst, src *float32, n int, m float32, c *[16]float32)
// dst[j] = expf(src[j] - m) for j < n (n a positive multiple of 8), every lane
// expf's operations in expf's order: n = floor(x*log2e + 0.5); r = (x -
// n*C1) - n*C2; z = r*r; p = ((((c0*r + c1)*r + c2)*r + c3)*r + c4)*r +
// c5; p = (p*z + r) + 1; then p*2^n (n <= 127) or (p*2)*2^(n-1); +Inf
// above c[0], 0 below c[1], x itself when NaN. No FMA: expf's products and
// sums are each rounded.
TEXT ·expSubAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y15
	MOVQ c+32(FP), DX
	VPCMPEQD Y14, Y14, Y14
	VPSRLD $25, Y14, Y14 // 127 in every lane (int32)
	VBROADCASTSS 8(DX), Y13 // log2(e)
	VBROADCASTSS 12(DX), Y12 // 0.5
	VBROADCASTSS 16(DX), Y11 // C1
	VBROADCASTSS 20(DX), Y10 // C2

loop:
	VMOVUPS (SI), Y0
	VSUBPS Y15, Y0, Y0 // x - m
	VMULPS Y13, Y0, Y1
	VADDPS Y12, Y1, Y1
	VROUNDPS $1, Y1, Y1 // n = floor(x*log2e + 0.5)
	VMULPS Y11, Y1, Y2
	VSUBPS Y2, Y0, Y3
	VMULPS Y10, Y1, Y2
	VSUBPS Y2, Y3, Y3 // r
	VMULPS Y3, Y3, Y4 // z
	VBROADCASTSS 24(DX), Y5
	VMULPS Y3, Y5, Y5
	VBROADCASTSS 28(DX), Y6
	VADDPS Y6, Y5, Y5
	VMULPS Y3, Y5, Y5
	VBROADCASTSS 32(DX), Y6
	VADDPS Y6, Y5, Y5
	VMULPS Y3, Y5, Y5
	VBROADCASTSS 36(DX), Y6
	VADDPS Y6, Y5, Y5
	VMULPS Y3, Y5, Y5
	VBROADCASTSS 40(DX), Y6
	VADDPS Y6, Y5, Y5
	VMULPS Y3, Y5, Y5
	VBROADCASTSS 44(DX), Y6
	VADDPS Y6, Y5, Y5 // the polynomial
	VMULPS Y4, Y5, Y5
	VADDPS Y3, Y5, Y5
	VBROADCASTSS 48(DX), Y6
	VADDPS Y6, Y5, Y5 // p = p*z + r + 1

	// n > 127: (p*2) * 2^(n-1); else p * 2^n.
	VBROADCASTSS 56(DX), Y6
	VCMPPS $0x1e, Y6, Y1, Y7 // n > 127 (GT_OQ)
	VBROADCASTSS 52(DX), Y8
	VMULPS Y8, Y5, Y8
	VBLENDVPS Y7, Y8, Y5, Y5
	VCVTTPS2DQ Y1, Y9
	VPADDD Y7, Y9, Y9 // -1 where n > 127
	VPADDD Y14, Y9, Y9
	VPSLLD $23, Y9, Y9
	VMULPS Y9, Y5, Y5

	// The special cases.
	VBROADCASTSS 0(DX), Y6
	VCMPPS $0x1e, Y6, Y0, Y7 // x > 88.72283
	VBROADCASTSS 60(DX), Y8
	VBLENDVPS Y7, Y8, Y5, Y5
	VBROADCASTSS 4(DX), Y6
	VCMPPS $0x11, Y6, Y0, Y7 // x < -87.33654 (LT_OQ)
	VXORPS Y8, Y8, Y8
	VBLENDVPS Y7, Y8, Y5, Y5
	VCMPPS $3, Y0, Y0, Y7 // x is NaN (UNORD_Q)
	VBLENDVPS Y7, Y0, Y5, Y5

	VMOVUPS Y5, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNE loop
	VZEROUPPER
	RET
