//go:build !purego

#include "textflag.h"
#include "micro512_amd64.h"

// One k step of the 6x32 update: the two 16-wide B rows (one from each
// packed B micro-panel), six broadcasts of the packed A column, twelve FMAs
// into Z0..Z11. Each accumulator lane sees exactly the FMA sequence of
// kernel6x16AVX2 (acc = a*b + acc, k increasing), so the bits are the same.
#define STEP512(ao, bo) \
	VMOVUPS bo(DI), Z12; \
	VMOVUPS bo(BX), Z13; \
	VBROADCASTSS ao(SI), Z14; \
	VBROADCASTSS ao+4(SI), Z15; \
	VFMADD231PS Z12, Z14, Z0; \
	VFMADD231PS Z13, Z14, Z1; \
	VFMADD231PS Z12, Z15, Z2; \
	VFMADD231PS Z13, Z15, Z3; \
	VBROADCASTSS ao+8(SI), Z14; \
	VBROADCASTSS ao+12(SI), Z15; \
	VFMADD231PS Z12, Z14, Z4; \
	VFMADD231PS Z13, Z14, Z5; \
	VFMADD231PS Z12, Z15, Z6; \
	VFMADD231PS Z13, Z15, Z7; \
	VBROADCASTSS ao+16(SI), Z14; \
	VBROADCASTSS ao+20(SI), Z15; \
	VFMADD231PS Z12, Z14, Z8; \
	VFMADD231PS Z13, Z14, Z9; \
	VFMADD231PS Z12, Z15, Z10; \
	VFMADD231PS Z13, Z15, Z11

// func kernel6x32AVX512(k int, a, b0, b1, c *float32, ldc int, cin *float32, ldcin int, alpha, beta float32)
TEXT ·kernel6x32AVX512(SB), NOSPLIT, $0-72
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b0+16(FP), DI
	MOVQ b1+24(FP), BX
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8

	// Prefetch the C tile: 6 rows of 128 bytes (up to three lines each).
	PREFETCH_C(6)

	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11

	MOVQ CX, R9
	SHRQ $2, R9
	ANDQ $3, CX
	TESTQ R9, R9
	JEQ tail

loop4:
	PREFETCHT0 512(DI)
	PREFETCHT0 512(BX)
	STEP512(0, 0)
	STEP512(24, 64)
	PREFETCHT0 640(DI)
	PREFETCHT0 640(BX)
	STEP512(48, 128)
	STEP512(72, 192)
	ADDQ $96, SI
	ADDQ $256, DI
	ADDQ $256, BX
	DECQ R9
	JNE loop4

tail:
	TESTQ CX, CX
	JEQ scale

loop1:
	STEP512(0, 0)
	ADDQ $24, SI
	ADDQ $64, DI
	ADDQ $64, BX
	DECQ CX
	JNE loop1

scale:
	VBROADCASTSS alpha+64(FP), Z14
	VMULPS Z14, Z0, Z0
	VMULPS Z14, Z1, Z1
	VMULPS Z14, Z2, Z2
	VMULPS Z14, Z3, Z3
	VMULPS Z14, Z4, Z4
	VMULPS Z14, Z5, Z5
	VMULPS Z14, Z6, Z6
	VMULPS Z14, Z7, Z7
	VMULPS Z14, Z8, Z8
	VMULPS Z14, Z9, Z9
	VMULPS Z14, Z10, Z10
	VMULPS Z14, Z11, Z11

	// beta == 0 must not read C (as in BLAS).
	MOVSS beta+68(FP), X15
	VXORPS X13, X13, X13
	UCOMISS X13, X15
	JNE withbeta
	JPS withbeta

	STOREROW_Z(Z0, Z1)
	STOREROW_Z(Z2, Z3)
	STOREROW_Z(Z4, Z5)
	STOREROW_Z(Z6, Z7)
	STOREROW_Z(Z8, Z9)
	STOREROW_Z(Z10, Z11)
	VZEROUPPER
	RET

withbeta:
	VBROADCASTSS beta+68(FP), Z16
	MOVQ cin+48(FP), R10
	MOVQ ldcin+56(FP), R11
	SHLQ $2, R11
	BETAROW_Z(Z0, Z1, Z16)
	BETAROW_Z(Z2, Z3, Z16)
	BETAROW_Z(Z4, Z5, Z16)
	BETAROW_Z(Z6, Z7, Z16)
	BETAROW_Z(Z8, Z9, Z16)
	BETAROW_Z(Z10, Z11, Z16)
	VZEROUPPER
	RET
