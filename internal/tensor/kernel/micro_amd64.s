//go:build !purego

#include "textflag.h"

// One step of the 6x16 rank-1 update: two 8-wide loads of the packed B row,
// six broadcasts of the packed A column, twelve FMAs into Y0..Y11.
// ao is the byte offset into the A micro-panel (SI), bo into the B
// micro-panel (DI).
#define STEP(ao, bo) \
	VMOVUPS bo(DI), Y12; \
	VMOVUPS bo+32(DI), Y13; \
	VBROADCASTSS ao(SI), Y14; \
	VBROADCASTSS ao+4(SI), Y15; \
	VFMADD231PS Y12, Y14, Y0; \
	VFMADD231PS Y13, Y14, Y1; \
	VFMADD231PS Y12, Y15, Y2; \
	VFMADD231PS Y13, Y15, Y3; \
	VBROADCASTSS ao+8(SI), Y14; \
	VBROADCASTSS ao+12(SI), Y15; \
	VFMADD231PS Y12, Y14, Y4; \
	VFMADD231PS Y13, Y14, Y5; \
	VFMADD231PS Y12, Y15, Y6; \
	VFMADD231PS Y13, Y15, Y7; \
	VBROADCASTSS ao+16(SI), Y14; \
	VBROADCASTSS ao+20(SI), Y15; \
	VFMADD231PS Y12, Y14, Y8; \
	VFMADD231PS Y13, Y14, Y9; \
	VFMADD231PS Y12, Y15, Y10; \
	VFMADD231PS Y13, Y15, Y11

// Store one row of the tile: C = acc (accumulators already scaled by alpha).
#define STOREROW(lo, hi) \
	VMOVUPS lo, (DX); \
	VMOVUPS hi, 32(DX); \
	ADDQ R8, DX

// Store one row of the tile: C = beta*Cin + acc, where Cin (R10, row stride
// R11 bytes) is C itself or, for a bias, one row read for every row.
#define BETAROW(lo, hi) \
	VFMADD231PS (R10), Y15, lo; \
	VFMADD231PS 32(R10), Y15, hi; \
	VMOVUPS lo, (DX); \
	VMOVUPS hi, 32(DX); \
	ADDQ R8, DX; \
	ADDQ R11, R10

// func kernel6x16AVX2(k int, a, b, c *float32, ldc int, cin *float32, ldcin int, alpha, beta float32)
TEXT ·kernel6x16AVX2(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8

	// Prefetch the C tile (6 rows of 64 bytes, each possibly straddling two
	// lines) while the k loop runs; it is read back when beta != 0.
	MOVQ DX, R10
	PREFETCHT0 (R10)
	PREFETCHT0 63(R10)
	ADDQ R8, R10
	PREFETCHT0 (R10)
	PREFETCHT0 63(R10)
	ADDQ R8, R10
	PREFETCHT0 (R10)
	PREFETCHT0 63(R10)
	ADDQ R8, R10
	PREFETCHT0 (R10)
	PREFETCHT0 63(R10)
	ADDQ R8, R10
	PREFETCHT0 (R10)
	PREFETCHT0 63(R10)
	ADDQ R8, R10
	PREFETCHT0 (R10)
	PREFETCHT0 63(R10)

	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

	MOVQ CX, R9
	SHRQ $2, R9
	ANDQ $3, CX
	TESTQ R9, R9
	JEQ tail

loop4:
	PREFETCHT0 512(DI)
	STEP(0, 0)
	STEP(24, 64)
	PREFETCHT0 640(DI)
	STEP(48, 128)
	STEP(72, 192)
	ADDQ $96, SI
	ADDQ $256, DI
	DECQ R9
	JNE loop4

tail:
	TESTQ CX, CX
	JEQ scale

loop1:
	STEP(0, 0)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNE loop1

scale:
	VBROADCASTSS alpha+56(FP), Y14
	VMULPS Y14, Y0, Y0
	VMULPS Y14, Y1, Y1
	VMULPS Y14, Y2, Y2
	VMULPS Y14, Y3, Y3
	VMULPS Y14, Y4, Y4
	VMULPS Y14, Y5, Y5
	VMULPS Y14, Y6, Y6
	VMULPS Y14, Y7, Y7
	VMULPS Y14, Y8, Y8
	VMULPS Y14, Y9, Y9
	VMULPS Y14, Y10, Y10
	VMULPS Y14, Y11, Y11

	// beta == 0 must not read C (it may hold NaN or garbage, as in BLAS).
	VBROADCASTSS beta+60(FP), Y15
	VXORPS X13, X13, X13
	UCOMISS X13, X15
	JNE withbeta
	JPS withbeta

	STOREROW(Y0, Y1)
	STOREROW(Y2, Y3)
	STOREROW(Y4, Y5)
	STOREROW(Y6, Y7)
	STOREROW(Y8, Y9)
	STOREROW(Y10, Y11)
	VZEROUPPER
	RET

withbeta:
	MOVQ cin+40(FP), R10
	MOVQ ldcin+48(FP), R11
	SHLQ $2, R11
	BETAROW(Y0, Y1)
	BETAROW(Y2, Y3)
	BETAROW(Y4, Y5)
	BETAROW(Y6, Y7)
	BETAROW(Y8, Y9)
	BETAROW(Y10, Y11)
	VZEROUPPER
	RET
