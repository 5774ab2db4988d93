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

// func gainBiasAVX(outP, outS, a, b *float32, rows, n, ld int)
// colProdSumsAVX into outP and colSumsAVX of a into outS, for j < n (n a
// positive multiple of 8), in one pass over a: LayerNorm's gain and bias
// gradients (a the output gradient, b xhat). Same chains, same first
// operands (the column's sum, then the product or a).
TEXT ·gainBiasAVX(SB), NOSPLIT, $0-56
	MOVQ outP+0(FP), DI
	MOVQ outS+8(FP), R10
	MOVQ a+16(FP), SI
	MOVQ b+24(FP), R9
	MOVQ rows+32(FP), BX
	MOVQ n+40(FP), CX
	MOVQ ld+48(FP), DX
	SHLQ $2, DX // row stride in bytes
	SHLQ $2, CX // n in bytes

	// outP = outS = +0
	VXORPS Y0, Y0, Y0
	XORQ AX, AX
gbzero:
	VMOVUPS Y0, (DI)(AX*1)
	VMOVUPS Y0, (R10)(AX*1)
	ADDQ $32, AX
	CMPQ AX, CX
	JLT gbzero

gbrow:
	TESTQ BX, BX
	JEQ gbdone
	XORQ AX, AX
	CMPQ CX, $128
	JLT gbcols8

gbcols32:
	VMOVUPS 0(SI)(AX*1), Y0
	VMOVUPS 32(SI)(AX*1), Y1
	VMOVUPS 64(SI)(AX*1), Y2
	VMOVUPS 96(SI)(AX*1), Y3
	VMULPS 0(R9)(AX*1), Y0, Y4
	VMULPS 32(R9)(AX*1), Y1, Y5
	VMULPS 64(R9)(AX*1), Y2, Y6
	VMULPS 96(R9)(AX*1), Y3, Y7
	VMOVUPS 0(DI)(AX*1), Y8
	VMOVUPS 32(DI)(AX*1), Y9
	VMOVUPS 64(DI)(AX*1), Y10
	VMOVUPS 96(DI)(AX*1), Y11
	VADDPS Y4, Y8, Y8
	VADDPS Y5, Y9, Y9
	VADDPS Y6, Y10, Y10
	VADDPS Y7, Y11, Y11
	VMOVUPS Y8, 0(DI)(AX*1)
	VMOVUPS Y9, 32(DI)(AX*1)
	VMOVUPS Y10, 64(DI)(AX*1)
	VMOVUPS Y11, 96(DI)(AX*1)
	VMOVUPS 0(R10)(AX*1), Y12
	VMOVUPS 32(R10)(AX*1), Y13
	VMOVUPS 64(R10)(AX*1), Y14
	VMOVUPS 96(R10)(AX*1), Y15
	VADDPS Y0, Y12, Y12
	VADDPS Y1, Y13, Y13
	VADDPS Y2, Y14, Y14
	VADDPS Y3, Y15, Y15
	VMOVUPS Y12, 0(R10)(AX*1)
	VMOVUPS Y13, 32(R10)(AX*1)
	VMOVUPS Y14, 64(R10)(AX*1)
	VMOVUPS Y15, 96(R10)(AX*1)
	ADDQ $128, AX
	LEAQ 128(AX), R8
	CMPQ R8, CX
	JLE gbcols32

gbcols8:
	CMPQ AX, CX
	JGE gbnextrow
	VMOVUPS (SI)(AX*1), Y0
	VMULPS (R9)(AX*1), Y0, Y4
	VMOVUPS (DI)(AX*1), Y8
	VADDPS Y4, Y8, Y8
	VMOVUPS Y8, (DI)(AX*1)
	VMOVUPS (R10)(AX*1), Y12
	VADDPS Y0, Y12, Y12
	VMOVUPS Y12, (R10)(AX*1)
	ADDQ $32, AX
	JMP gbcols8

gbnextrow:
	ADDQ DX, SI
	ADDQ DX, R9
	DECQ BX
	JMP gbrow

gbdone:
	VZEROUPPER
	RET

// The row statistics' chains, eight rows at a time: each is a serial
// chain of float64 additions (latency bound alone), so the lanes here are
// rows, each lane summing its row in element order. Four columns of four
// rows are converted (VCVTPS2PD, exact) and transposed (TRANSPOSE4), then
// added column by column; two groups of four rows keep two independent
// accumulators in flight.

// TRANSPOSE4 turns rows r0-r3 (four float64 each) into columns, column k
// in rk; c0-c3 are scratch.
#define TRANSPOSE4(r0, r1, r2, r3, c0, c1, c2, c3) \
	VUNPCKLPD r1, r0, c0 \
	VUNPCKHPD r1, r0, c1 \
	VUNPCKLPD r3, r2, c2 \
	VUNPCKHPD r3, r2, c3 \
	VPERM2F128 $0x20, c2, c0, r0 \
	VPERM2F128 $0x20, c3, c1, r1 \
	VPERM2F128 $0x31, c2, c0, r2 \
	VPERM2F128 $0x31, c3, c1, r3

// ROWPTRS8 sets DI, BX, DX, R8-R11 to rows 1-7 from row 0 at SI and the
// row stride in floats in R12 (left in bytes).
#define ROWPTRS8 \
	SHLQ $2, R12 \
	LEAQ (SI)(R12*1), DI \
	LEAQ (DI)(R12*1), BX \
	LEAQ (BX)(R12*1), DX \
	LEAQ (DX)(R12*1), R8 \
	LEAQ (R8)(R12*1), R9 \
	LEAQ (R9)(R12*1), R10 \
	LEAQ (R10)(R12*1), R11

// LOAD8 converts columns AX/4 to AX/4+3 of rows 0-3 into Y0-Y3 and of
// rows 4-7 into Y4-Y7, then transposes each group: Y0-Y3 and Y4-Y7 hold
// the four columns in order, lane q (q+4) row q (q+4).
#define LOAD8 \
	VCVTPS2PD (SI)(AX*1), Y0 \
	VCVTPS2PD (DI)(AX*1), Y1 \
	VCVTPS2PD (BX)(AX*1), Y2 \
	VCVTPS2PD (DX)(AX*1), Y3 \
	VCVTPS2PD (R8)(AX*1), Y4 \
	VCVTPS2PD (R9)(AX*1), Y5 \
	VCVTPS2PD (R10)(AX*1), Y6 \
	VCVTPS2PD (R11)(AX*1), Y7 \
	TRANSPOSE4(Y0, Y1, Y2, Y3, Y8, Y9, Y10, Y11) \
	TRANSPOSE4(Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11)

// func rowSums8AVX(x *float32, ld, n int, s *[8]float64)
// s[q] = +0 then s[q] += float64(x[q*ld+j]) for j < n in order (n a
// positive multiple of 4), q < 8: LayerNorm's sums for the means, the
// sum first in each addition as in the scalar loop.
TEXT ·rowSums8AVX(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ ld+8(FP), R12
	ROWPTRS8
	MOVQ n+16(FP), CX
	SHLQ $2, CX
	XORQ AX, AX
	VXORPD Y14, Y14, Y14
	VXORPD Y15, Y15, Y15

sum4:
	LOAD8
	VADDPD Y0, Y14, Y14
	VADDPD Y4, Y15, Y15
	VADDPD Y1, Y14, Y14
	VADDPD Y5, Y15, Y15
	VADDPD Y2, Y14, Y14
	VADDPD Y6, Y15, Y15
	VADDPD Y3, Y14, Y14
	VADDPD Y7, Y15, Y15
	ADDQ $16, AX
	CMPQ AX, CX
	JLT sum4

	MOVQ s+24(FP), AX
	VMOVUPD Y14, 0(AX)
	VMOVUPD Y15, 32(AX)
	VZEROUPPER
	RET

// func rowSqDev8AVX(x *float32, ld, n int, mean *[8]float64, s *[8]float64)
// s[q] = +0 then d = float64(x[q*ld+j]) - mean[q], s[q] += d*d, for j < n
// in order (n a positive multiple of 4), q < 8: LayerNorm's sums of
// squared deviations, and RMSNorm's sums of squares with mean 0 (v - 0 is
// v, -0 and NaN included). Operands first as in the scalar loop: v in
// the subtraction, the sum in the addition.
TEXT ·rowSqDev8AVX(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ ld+8(FP), R12
	ROWPTRS8
	MOVQ n+16(FP), CX
	SHLQ $2, CX
	MOVQ mean+24(FP), AX
	VMOVUPD 0(AX), Y12
	VMOVUPD 32(AX), Y13
	XORQ AX, AX
	VXORPD Y14, Y14, Y14
	VXORPD Y15, Y15, Y15

sq4:
	LOAD8
	VSUBPD Y12, Y0, Y0
	VSUBPD Y13, Y4, Y4
	VSUBPD Y12, Y1, Y1
	VSUBPD Y13, Y5, Y5
	VSUBPD Y12, Y2, Y2
	VSUBPD Y13, Y6, Y6
	VSUBPD Y12, Y3, Y3
	VSUBPD Y13, Y7, Y7
	VMULPD Y0, Y0, Y0
	VMULPD Y4, Y4, Y4
	VMULPD Y1, Y1, Y1
	VMULPD Y5, Y5, Y5
	VMULPD Y2, Y2, Y2
	VMULPD Y6, Y6, Y6
	VMULPD Y3, Y3, Y3
	VMULPD Y7, Y7, Y7
	VADDPD Y0, Y14, Y14
	VADDPD Y4, Y15, Y15
	VADDPD Y1, Y14, Y14
	VADDPD Y5, Y15, Y15
	VADDPD Y2, Y14, Y14
	VADDPD Y6, Y15, Y15
	VADDPD Y3, Y14, Y14
	VADDPD Y7, Y15, Y15
	ADDQ $16, AX
	CMPQ AX, CX
	JLT sq4

	MOVQ s+32(FP), AX
	VMOVUPD Y14, 0(AX)
	VMOVUPD Y15, 32(AX)
	VZEROUPPER
	RET

// The input gradients' float32 sums, eight rows at a time, a lane per
// row, each row summed in element order. Blocks of eight columns: rows
// 0-3 go to the low halves and rows 4-7 to the high halves of four
// registers per four columns (a load and a VINSERTF128 each), and a 4x4
// transpose within the halves (TRANSPOSE4PS) leaves column k of the eight
// rows in one register.

// TRANSPOSE4PS transposes the 4x4 float32 blocks in each half of r0-r3
// (row q in rq), leaving column k in rk; c0-c3 are scratch.
#define TRANSPOSE4PS(r0, r1, r2, r3, c0, c1, c2, c3) \
	VUNPCKLPS r1, r0, c0 \
	VUNPCKHPS r1, r0, c1 \
	VUNPCKLPS r3, r2, c2 \
	VUNPCKHPS r3, r2, c3 \
	VSHUFPS $0x44, c2, c0, r0 \
	VSHUFPS $0xee, c2, c0, r1 \
	VSHUFPS $0x44, c3, c1, r2 \
	VSHUFPS $0xee, c3, c1, r3

// LOADCOLS4 loads columns off/4 to off/4+3 of rows 0-7 (rows 0 and 4 at
// p and p4, R12 bytes apart, R13 = 3 R12) into ya-yd (xa-xd their low
// halves) and transposes them: column k in the k-th register, lane q row
// q. yw-yz are scratch.
#define LOADCOLS4(off, p, p4, xa, ya, xb, yb, xc, yc, xd, yd, yw, yx, yy, yz) \
	VMOVUPS off(p), xa \
	VINSERTF128 $1, off(p4), ya, ya \
	VMOVUPS off(p)(R12*1), xb \
	VINSERTF128 $1, off(p4)(R12*1), yb, yb \
	VMOVUPS off(p)(R12*2), xc \
	VINSERTF128 $1, off(p4)(R12*2), yc, yc \
	VMOVUPS off(p)(R13*1), xd \
	VINSERTF128 $1, off(p4)(R13*1), yd, yd \
	TRANSPOSE4PS(ya, yb, yc, yd, yw, yx, yy, yz)

// LNGRAD4 adds columns off/4 to off/4+3 to the sums: d = gy*g (gy
// first), a += d, b += xh*d (xh first: the single-row loop's compiled
// order), the sums first.
#define LNGRAD4(off) \
	LOADCOLS4(off, SI, DI, X0, Y0, X1, Y1, X2, Y2, X3, Y3, Y4, Y5, Y6, Y7) \
	VBROADCASTSS off+0(R10), Y12 \
	VMULPS Y12, Y0, Y0 \
	VBROADCASTSS off+4(R10), Y12 \
	VMULPS Y12, Y1, Y1 \
	VBROADCASTSS off+8(R10), Y12 \
	VMULPS Y12, Y2, Y2 \
	VBROADCASTSS off+12(R10), Y12 \
	VMULPS Y12, Y3, Y3 \
	VADDPS Y0, Y14, Y14 \
	VADDPS Y1, Y14, Y14 \
	VADDPS Y2, Y14, Y14 \
	VADDPS Y3, Y14, Y14 \
	LOADCOLS4(off, R8, R9, X4, Y4, X5, Y5, X6, Y6, X7, Y7, Y8, Y9, Y10, Y11) \
	VMULPS Y0, Y4, Y4 \
	VMULPS Y1, Y5, Y5 \
	VMULPS Y2, Y6, Y6 \
	VMULPS Y3, Y7, Y7 \
	VADDPS Y4, Y15, Y15 \
	VADDPS Y5, Y15, Y15 \
	VADDPS Y6, Y15, Y15 \
	VADDPS Y7, Y15, Y15

// RMSGRAD4 adds columns off/4 to off/4+3 to the sums: s += (gy*g)*xh,
// each operation's left operand first, the sum first.
#define RMSGRAD4(off) \
	LOADCOLS4(off, SI, DI, X0, Y0, X1, Y1, X2, Y2, X3, Y3, Y4, Y5, Y6, Y7) \
	LOADCOLS4(off, R8, R9, X4, Y4, X5, Y5, X6, Y6, X7, Y7, Y8, Y9, Y10, Y11) \
	VBROADCASTSS off+0(R10), Y12 \
	VMULPS Y12, Y0, Y0 \
	VMULPS Y4, Y0, Y0 \
	VADDPS Y0, Y14, Y14 \
	VBROADCASTSS off+4(R10), Y12 \
	VMULPS Y12, Y1, Y1 \
	VMULPS Y5, Y1, Y1 \
	VADDPS Y1, Y14, Y14 \
	VBROADCASTSS off+8(R10), Y12 \
	VMULPS Y12, Y2, Y2 \
	VMULPS Y6, Y2, Y2 \
	VADDPS Y2, Y14, Y14 \
	VBROADCASTSS off+12(R10), Y12 \
	VMULPS Y12, Y3, Y3 \
	VMULPS Y7, Y3, Y3 \
	VADDPS Y3, Y14, Y14

// GRADPTRS sets DI and R9 to row 4 of gy (SI) and xh (R8), R12 (the row
// stride in floats) to bytes and R13 to 3 R12, and CX to n/8 blocks.
#define GRADPTRS \
	SHLQ $2, R12 \
	LEAQ (R12)(R12*2), R13 \
	LEAQ (SI)(R12*4), DI \
	LEAQ (R8)(R12*4), R9 \
	SHRQ $3, CX

// func layerNormGradSums8AVX(gy, gain, xh *float32, ld, n int, a, b *[8]float32)
// For the eight rows q ld apart: a[q] = +0, b[q] = +0, then d =
// gy[q*ld+j]*gain[j], a[q] += d, b[q] += xh[q*ld+j]*d, for j < n in order
// (n a positive multiple of 8): layerNormGradX's sums.
TEXT ·layerNormGradSums8AVX(SB), NOSPLIT, $0-56
	MOVQ gy+0(FP), SI
	MOVQ gain+8(FP), R10
	MOVQ xh+16(FP), R8
	MOVQ ld+24(FP), R12
	MOVQ n+32(FP), CX
	GRADPTRS
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

lngs8:
	LNGRAD4(0)
	LNGRAD4(16)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	DECQ CX
	JNZ lngs8

	MOVQ a+40(FP), AX
	VMOVUPS Y14, (AX)
	MOVQ b+48(FP), AX
	VMOVUPS Y15, (AX)
	VZEROUPPER
	RET

// func rmsNormGradSums8AVX(gy, gain, xh *float32, ld, n int, s *[8]float32)
// For the eight rows q ld apart: s[q] = +0, then s[q] +=
// gy[q*ld+j]*gain[j]*xh[q*ld+j] for j < n in order (n a positive multiple
// of 8): rmsNormGradX's sums.
TEXT ·rmsNormGradSums8AVX(SB), NOSPLIT, $0-48
	MOVQ gy+0(FP), SI
	MOVQ gain+8(FP), R10
	MOVQ xh+16(FP), R8
	MOVQ ld+24(FP), R12
	MOVQ n+32(FP), CX
	GRADPTRS
	VXORPS Y14, Y14, Y14

rmsgs8:
	RMSGRAD4(0)
	RMSGRAD4(16)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	DECQ CX
	JNZ rmsgs8

	MOVQ s+40(FP), AX
	VMOVUPS Y14, (AX)
	VZEROUPPER
	RET
