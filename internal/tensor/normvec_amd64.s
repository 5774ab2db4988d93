//go:build !purego

#include "textflag.h"

// LayerNorm's and RMSNorm's elementwise loops (norm.go), eight lanes at a
// time. Each lane does the scalar loop's operations in its order with the
// same first operand (the one whose NaN x86 keeps when both are NaN),
// without fused multiply-adds: float32 -> float64 (VCVTPS2PD) is exact,
// float64 -> float32 (VCVTPD2PS) rounds to nearest as CVTSD2SS does.

// func layerNormRowAVX(x, gain, b, xh, y *float32, n int, mean, rstd float64)
// h = float32((float64(x[j]) - mean) * rstd), xh[j] = h,
// y[j] = h*g[j] + b[j], for j < n (n a positive multiple of 8).
TEXT ·layerNormRowAVX(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ gain+8(FP), R9
	MOVQ b+16(FP), R10
	MOVQ xh+24(FP), DI
	MOVQ y+32(FP), R8
	MOVQ n+40(FP), CX
	VBROADCASTSD mean+48(FP), Y14
	VBROADCASTSD rstd+56(FP), Y15
	SHLQ $2, CX
	XORQ AX, AX

ln8:
	VCVTPS2PD 0(SI)(AX*1), Y0
	VCVTPS2PD 16(SI)(AX*1), Y1
	VSUBPD Y14, Y0, Y0
	VSUBPD Y14, Y1, Y1
	VMULPD Y15, Y0, Y0
	VMULPD Y15, Y1, Y1
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VINSERTF128 $1, X1, Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	VMULPS (R9)(AX*1), Y0, Y0
	VADDPS (R10)(AX*1), Y0, Y0
	VMOVUPS Y0, (R8)(AX*1)
	ADDQ $32, AX
	CMPQ AX, CX
	JLT ln8
	VZEROUPPER
	RET

// func rmsNormRowAVX(x, gain, xh, y *float32, n int, rstd float64)
// h = float32(float64(x[j]) * rstd), xh[j] = h, y[j] = h*g[j], for j < n
// (n a positive multiple of 8).
TEXT ·rmsNormRowAVX(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ gain+8(FP), R9
	MOVQ xh+16(FP), DI
	MOVQ y+24(FP), R8
	MOVQ n+32(FP), CX
	VBROADCASTSD rstd+40(FP), Y15
	SHLQ $2, CX
	XORQ AX, AX

rms8:
	VCVTPS2PD 0(SI)(AX*1), Y0
	VCVTPS2PD 16(SI)(AX*1), Y1
	VMULPD Y15, Y0, Y0
	VMULPD Y15, Y1, Y1
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VINSERTF128 $1, X1, Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	VMULPS (R9)(AX*1), Y0, Y0
	VMOVUPS Y0, (R8)(AX*1)
	ADDQ $32, AX
	CMPQ AX, CX
	JLT rms8
	VZEROUPPER
	RET

// func layerNormGradAVX(gy, gain, xh, d *float32, n int, m1, m2, rs float32)
// d[j] = rs * (gy[j]*g[j] - m1 - xh[j]*m2), for j < n (n a positive
// multiple of 8); the compiled scalar loop multiplies the parenthesis by
// rs with the parenthesis first, and so does this.
TEXT ·layerNormGradAVX(SB), NOSPLIT, $0-52
	MOVQ gy+0(FP), SI
	MOVQ gain+8(FP), R9
	MOVQ xh+16(FP), R10
	MOVQ d+24(FP), DI
	MOVQ n+32(FP), CX
	VBROADCASTSS m1+40(FP), Y13
	VBROADCASTSS m2+44(FP), Y14
	VBROADCASTSS rs+48(FP), Y15
	SHLQ $2, CX
	XORQ AX, AX

lng8:
	VMOVUPS (SI)(AX*1), Y0
	VMULPS (R9)(AX*1), Y0, Y0
	VSUBPS Y13, Y0, Y0
	VMOVUPS (R10)(AX*1), Y1
	VMULPS Y14, Y1, Y1
	VSUBPS Y1, Y0, Y0
	VMULPS Y15, Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	CMPQ AX, CX
	JLT lng8
	VZEROUPPER
	RET

// func rmsNormGradAVX(gy, gain, xh, d *float32, n int, m, rs float32)
// d[j] = rs * (gy[j]*g[j] - xh[j]*m), for j < n (n a positive multiple of
// 8), the parenthesis first in the last product as in the scalar loop.
TEXT ·rmsNormGradAVX(SB), NOSPLIT, $0-48
	MOVQ gy+0(FP), SI
	MOVQ gain+8(FP), R9
	MOVQ xh+16(FP), R10
	MOVQ d+24(FP), DI
	MOVQ n+32(FP), CX
	VBROADCASTSS m+40(FP), Y14
	VBROADCASTSS rs+44(FP), Y15
	SHLQ $2, CX
	XORQ AX, AX

rmsg8:
	VMOVUPS (SI)(AX*1), Y0
	VMULPS (R9)(AX*1), Y0, Y0
	VMOVUPS (R10)(AX*1), Y1
	VMULPS Y14, Y1, Y1
	VSUBPS Y1, Y0, Y0
	VMULPS Y15, Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	CMPQ AX, CX
	JLT rmsg8
	VZEROUPPER
	RET

// func colProdSumsAVX(out, a, b *float32, rows, n, ld int)
// out[j] = s, s = +0 then s += a[i*ld+j] * b[i*ld+j] (the product rounded
// first) for i < rows in order, for j < n (n a positive multiple of 8):
// the normalisations' gain gradient, colSumsAVX's row streaming with the
// product that gainGrad once stored and summed.
TEXT ·colProdSumsAVX(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), R9
	MOVQ rows+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ ld+40(FP), DX
	SHLQ $2, DX // row stride in bytes
	SHLQ $2, CX // n in bytes

	// out = +0
	VXORPS Y0, Y0, Y0
	XORQ AX, AX
pzero:
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	CMPQ AX, CX
	JLT pzero

prow:
	TESTQ BX, BX
	JEQ pdone
	XORQ AX, AX
	CMPQ CX, $128
	JLT pcols8

pcols32:
	VMOVUPS 0(SI)(AX*1), Y4
	VMOVUPS 32(SI)(AX*1), Y5
	VMOVUPS 64(SI)(AX*1), Y6
	VMOVUPS 96(SI)(AX*1), Y7
	VMULPS 0(R9)(AX*1), Y4, Y4
	VMULPS 32(R9)(AX*1), Y5, Y5
	VMULPS 64(R9)(AX*1), Y6, Y6
	VMULPS 96(R9)(AX*1), Y7, Y7
	VMOVUPS 0(DI)(AX*1), Y0
	VMOVUPS 32(DI)(AX*1), Y1
	VMOVUPS 64(DI)(AX*1), Y2
	VMOVUPS 96(DI)(AX*1), Y3
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VMOVUPS Y0, 0(DI)(AX*1)
	VMOVUPS Y1, 32(DI)(AX*1)
	VMOVUPS Y2, 64(DI)(AX*1)
	VMOVUPS Y3, 96(DI)(AX*1)
	ADDQ $128, AX
	LEAQ 128(AX), R8
	CMPQ R8, CX
	JLE pcols32

pcols8:
	CMPQ AX, CX
	JGE pnextrow
	VMOVUPS (SI)(AX*1), Y4
	VMULPS (R9)(AX*1), Y4, Y4
	VMOVUPS (DI)(AX*1), Y0
	VADDPS Y4, Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	JMP pcols8

pnextrow:
	ADDQ DX, SI
	ADDQ DX, R9
	DECQ BX
	JMP prow

pdone:
	VZEROUPPER
	RET
