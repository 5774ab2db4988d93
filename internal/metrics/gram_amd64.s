//go:build amd64 && !purego

#include "textflag.h"

// Rows r and r+1 of the 4x8 tile: broadcast a[k*4+r] and a[k*4+r+1],
// multiply by the eight b values in Y8:Y9, add to the accumulators.
#define TWOROWS(ao, acc0, acc1, acc2, acc3) \
	VBROADCASTSD ao(SI), Y10; \
	VBROADCASTSD ao+8(SI), Y11; \
	VMULPD Y8, Y10, Y12; \
	VMULPD Y9, Y10, Y13; \
	VMULPD Y8, Y11, Y14; \
	VMULPD Y9, Y11, Y15; \
	VADDPD Y12, acc0, acc0; \
	VADDPD Y13, acc1, acc1; \
	VADDPD Y14, acc2, acc2; \
	VADDPD Y15, acc3, acc3

// func kernel4x8AVX2(k int, a, b *float64, acc *[32]float64)
TEXT ·kernel4x8AVX2(SB), NOSPLIT, $0-32
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ acc+24(FP), DX

	// Accumulator row r is Y(2r) (columns 0-3) and Y(2r+1) (columns 4-7).
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	VMOVUPD 128(DX), Y4
	VMOVUPD 160(DX), Y5
	VMOVUPD 192(DX), Y6
	VMOVUPD 224(DX), Y7

loop:
	VMOVUPD 0(DI), Y8
	VMOVUPD 32(DI), Y9
	TWOROWS(0, Y0, Y1, Y2, Y3)
	TWOROWS(16, Y4, Y5, Y6, Y7)
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  loop

	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	VZEROUPPER
	RET
