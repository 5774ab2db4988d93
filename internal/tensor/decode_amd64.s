//go:build !purego

#include "textflag.h"

// The one-query attention's loops eight lanes at a time, each lane doing
// the scalar loop's operations in its order: products and sums each
// rounded (VMULPS, VADDPS; no FMA), as the Go loops compile on amd64.

// func axpy4AVX(a *[4]float32, x0, x1, x2, x3, y *float32, n int)
// y[i] += a0*x0[i] + a1*x1[i] + a2*x2[i] + a3*x3[i] for i < n (n a
// positive multiple of 8): ((a0*x0 + a1*x1) + a2*x2) + a3*x3, then y plus
// that, as Go evaluates axpy4's statement.
TEXT ·axpy4AVX(SB), NOSPLIT, $0-56
	MOVQ a+0(FP), AX
	VBROADCASTSS 0(AX), Y0
	VBROADCASTSS 4(AX), Y1
	VBROADCASTSS 8(AX), Y2
	VBROADCASTSS 12(AX), Y3
	MOVQ x0+8(FP), R8
	MOVQ x1+16(FP), R9
	MOVQ x2+24(FP), R10
	MOVQ x3+32(FP), R11
	MOVQ y+40(FP), DI
	MOVQ n+48(FP), CX
	XORQ SI, SI

axloop:
	VMULPS (R8)(SI*1), Y0, Y4
	VMULPS (R9)(SI*1), Y1, Y5
	VADDPS Y5, Y4, Y4
	VMULPS (R10)(SI*1), Y2, Y5
	VADDPS Y5, Y4, Y4
	VMULPS (R11)(SI*1), Y3, Y5
	VADDPS Y5, Y4, Y4
	VMOVUPS (DI)(SI*1), Y6
	VADDPS Y4, Y6, Y6
	VMOVUPS Y6, (DI)(SI*1)
	ADDQ $32, SI
	SUBQ $8, CX
	JNE axloop
	VZEROUPPER
	RET

// func dotKeysAVX(q *float32, dh int, kt *float32, blocks int, scale float32, out *float32)
// For blocks (1 or 2) groups of 8 keys whose head vectors are the columns
// of kt (dh rows of 8*blocks: kt[i*8*blocks + 8*g + lane] is element i of
// key 8*g+lane): out[key] = scale * s, s = 0 then s += q[i]*k[i] for i in
// order, dot4's chain.
TEXT ·dotKeysAVX(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ dh+8(FP), CX
	MOVQ kt+16(FP), DI
	MOVQ blocks+24(FP), DX
	VBROADCASTSS scale+32(FP), Y15
	MOVQ out+40(FP), R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	CMPQ DX, $2
	JEQ two

one:
	VBROADCASTSS (SI), Y2
	VMULPS (DI), Y2, Y3
	VADDPS Y3, Y0, Y0
	ADDQ $4, SI
	ADDQ $32, DI
	DECQ CX
	JNE one
	VMULPS Y15, Y0, Y0
	VMOVUPS Y0, (R8)
	VZEROUPPER
	RET

two:
	VBROADCASTSS (SI), Y2
	VMULPS (DI), Y2, Y3
	VMULPS 32(DI), Y2, Y4
	VADDPS Y3, Y0, Y0
	VADDPS Y4, Y1, Y1
	ADDQ $4, SI
	ADDQ $64, DI
	DECQ CX
	JNE two
	VMULPS Y15, Y0, Y0
	VMULPS Y15, Y1, Y1
	VMOVUPS Y0, (R8)
	VMOVUPS Y1, 32(R8)
	VZEROUPPER
	RET
