//go:build !purego

#include "textflag.h"

// Lane masks for the last partial block of 16 columns: loading 32 bytes at
// directMask<>+4*(16-r) gives -1 in the first r lanes (r <= 8 for the low
// half; the high half loads 32 bytes further on).
DATA directMask<>+0(SB)/8, $0xffffffffffffffff
DATA directMask<>+8(SB)/8, $0xffffffffffffffff
DATA directMask<>+16(SB)/8, $0xffffffffffffffff
DATA directMask<>+24(SB)/8, $0xffffffffffffffff
DATA directMask<>+32(SB)/8, $0xffffffffffffffff
DATA directMask<>+40(SB)/8, $0xffffffffffffffff
DATA directMask<>+48(SB)/8, $0xffffffffffffffff
DATA directMask<>+56(SB)/8, $0xffffffffffffffff
DATA directMask<>+64(SB)/8, $0
DATA directMask<>+72(SB)/8, $0
DATA directMask<>+80(SB)/8, $0
DATA directMask<>+88(SB)/8, $0
DATA directMask<>+96(SB)/8, $0
DATA directMask<>+104(SB)/8, $0
DATA directMask<>+112(SB)/8, $0
DATA directMask<>+120(SB)/8, $0
GLOBL directMask<>(SB), RODATA|NOPTR, $128

DATA directOne<>+0(SB)/4, $0x3f800000
GLOBL directOne<>(SB), RODATA|NOPTR, $4

// One k step of the 4x16 tile: the B row in Y8, Y9 (full or masked), the
// four rows' A values broadcast, eight FMAs with the operand order of the
// 6x16 kernel (B, A, accumulator), then every pointer one step on.
#define FMAS \
	VBROADCASTSS (SI), Y10; \
	VBROADCASTSS (R11), Y11; \
	VFMADD231PS Y8, Y10, Y0; \
	VFMADD231PS Y9, Y10, Y1; \
	VFMADD231PS Y8, Y11, Y2; \
	VFMADD231PS Y9, Y11, Y3; \
	VBROADCASTSS (R12), Y10; \
	VBROADCASTSS (R13), Y11; \
	VFMADD231PS Y8, Y10, Y4; \
	VFMADD231PS Y9, Y10, Y5; \
	VFMADD231PS Y8, Y11, Y6; \
	VFMADD231PS Y9, Y11, Y7; \
	ADDQ R9, SI; \
	ADDQ R9, R11; \
	ADDQ R9, R12; \
	ADDQ R9, R13; \
	ADDQ R8, DI

#define ZERO \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

#define LOADA \
	MOVQ a0+8(FP), SI; \
	MOVQ a1+16(FP), R11; \
	MOVQ a2+24(FP), R12; \
	MOVQ a3+32(FP), R13; \
	MOVQ BX, DI; \
	MOVQ k+0(FP), CX

// alpha times the accumulators: the 6x16 kernel's VMULPS.
#define SCALE \
	VMULPS Y14, Y0, Y0; \
	VMULPS Y14, Y1, Y1; \
	VMULPS Y14, Y2, Y2; \
	VMULPS Y14, Y3, Y3; \
	VMULPS Y14, Y4, Y4; \
	VMULPS Y14, Y5, Y5; \
	VMULPS Y14, Y6, Y6; \
	VMULPS Y14, Y7, Y7

// Store one row at DI: C = acc, or with accum C = fma(C, 1, acc) as the
// 6x16 kernel's beta step computes it (Y15 holds 1).
#define FULLROW(lo, hi) \
	CMPB R14, $0; \
	JEQ 3(PC); \
	VFMADD231PS (DI), Y15, lo; \
	VFMADD231PS 32(DI), Y15, hi; \
	VMOVUPS lo, (DI); \
	VMOVUPS hi, 32(DI)

#define MASKROW(lo, hi) \
	CMPB R14, $0; \
	JEQ 5(PC); \
	VMASKMOVPS (DI), Y12, Y8; \
	VMASKMOVPS 32(DI), Y13, Y9; \
	VFMADD231PS Y8, Y15, lo; \
	VFMADD231PS Y9, Y15, hi; \
	VMASKMOVPS lo, Y12, (DI); \
	VMASKMOVPS hi, Y13, 32(DI)

// func directFMA4AVX2(k int, a0, a1, a2, a3 *float32, acs int, b *float32, ldb int, c *float32, ldc int, rows, n int, alpha float32, accum bool)
TEXT ·directFMA4AVX2(SB), NOSPLIT, $0-101
	MOVQ acs+40(FP), R9
	SHLQ $2, R9
	MOVQ ldb+56(FP), R8
	SHLQ $2, R8
	MOVQ ldc+72(FP), R10
	SHLQ $2, R10
	MOVQ b+48(FP), BX
	MOVQ c+64(FP), DX
	MOVQ n+88(FP), AX
	MOVBLZX accum+100(FP), R14
	VBROADCASTSS alpha+96(FP), Y14
	VBROADCASTSS directOne<>(SB), Y15

block:
	CMPQ AX, $16
	JLT tail
	LOADA
	ZERO

loop:
	VMOVUPS (DI), Y8
	VMOVUPS 32(DI), Y9
	FMAS
	DECQ CX
	JNE loop

	SCALE
	MOVQ DX, DI
	MOVQ rows+80(FP), CX
	FULLROW(Y0, Y1)
	DECQ CX
	JEQ next
	ADDQ R10, DI
	FULLROW(Y2, Y3)
	DECQ CX
	JEQ next
	ADDQ R10, DI
	FULLROW(Y4, Y5)
	DECQ CX
	JEQ next
	ADDQ R10, DI
	FULLROW(Y6, Y7)

next:
	ADDQ $64, BX
	ADDQ $64, DX
	SUBQ $16, AX
	JMP block

tail:
	TESTQ AX, AX
	JEQ done
	MOVQ $16, CX
	SUBQ AX, CX
	SHLQ $2, CX
	LEAQ directMask<>(SB), SI
	VMOVDQU (SI)(CX*1), Y12
	VMOVDQU 32(SI)(CX*1), Y13
	LOADA
	ZERO

mloop:
	VMASKMOVPS (DI), Y12, Y8
	VMASKMOVPS 32(DI), Y13, Y9
	FMAS
	DECQ CX
	JNE mloop

	SCALE
	MOVQ DX, DI
	MOVQ rows+80(FP), CX
	MASKROW(Y0, Y1)
	DECQ CX
	JEQ done
	ADDQ R10, DI
	MASKROW(Y2, Y3)
	DECQ CX
	JEQ done
	ADDQ R10, DI
	MASKROW(Y4, Y5)
	DECQ CX
	JEQ done
	ADDQ R10, DI
	MASKROW(Y6, Y7)

done:
	VZEROUPPER
	RET

// func transpose8AVX(src *float32, lds int, dst *float32, ldd int, blocks int)
// Transposes the 8 x 8*blocks band at src (row stride lds elements) into
// the 8*blocks x 8 band at dst (row stride ldd): eight loads, the
// unpack/shuffle/permute network, eight stores per block.
TEXT ·transpose8AVX(SB), NOSPLIT, $0-40
	MOVQ src+0(FP), SI
	MOVQ lds+8(FP), R8
	SHLQ $2, R8
	MOVQ dst+16(FP), DI
	MOVQ ldd+24(FP), R9
	SHLQ $2, R9
	MOVQ blocks+32(FP), CX
	LEAQ (R8)(R8*2), R10 // 3 rows
	LEAQ (R9)(R9*2), R11

tblock:
	MOVQ SI, AX
	VMOVUPS (AX), Y0
	VMOVUPS (AX)(R8*1), Y1
	VMOVUPS (AX)(R8*2), Y2
	VMOVUPS (AX)(R10*1), Y3
	LEAQ (AX)(R8*4), AX
	VMOVUPS (AX), Y4
	VMOVUPS (AX)(R8*1), Y5
	VMOVUPS (AX)(R8*2), Y6
	VMOVUPS (AX)(R10*1), Y7

	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15

	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7

	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15

	MOVQ DI, AX
	VMOVUPS Y8, (AX)
	VMOVUPS Y9, (AX)(R9*1)
	VMOVUPS Y10, (AX)(R9*2)
	VMOVUPS Y11, (AX)(R11*1)
	LEAQ (AX)(R9*4), AX
	VMOVUPS Y12, (AX)
	VMOVUPS Y13, (AX)(R9*1)
	VMOVUPS Y14, (AX)(R9*2)
	VMOVUPS Y15, (AX)(R11*1)

	ADDQ $32, SI
	LEAQ (DI)(R9*8), DI
	DECQ CX
	JNE tblock
	VZEROUPPER
	RET

// directFMA4AVX512: directFMA4AVX2 on tiles of 4 rows by 32 columns, two
// ZMM accumulators a row, the last partial 32 through K1 (columns 0-15)
// and K2 (16-31). Each element's instructions are the AVX2 routine's (the
// FMA chain with the same operand order, the alpha VMULPS, the beta FMA),
// so the bits are the same.
#define FMAS512 \
	VBROADCASTSS (SI), Z10; \
	VBROADCASTSS (R11), Z11; \
	VFMADD231PS Z8, Z10, Z0; \
	VFMADD231PS Z9, Z10, Z1; \
	VFMADD231PS Z8, Z11, Z2; \
	VFMADD231PS Z9, Z11, Z3; \
	VBROADCASTSS (R12), Z10; \
	VBROADCASTSS (R13), Z11; \
	VFMADD231PS Z8, Z10, Z4; \
	VFMADD231PS Z9, Z10, Z5; \
	VFMADD231PS Z8, Z11, Z6; \
	VFMADD231PS Z9, Z11, Z7; \
	ADDQ R9, SI; \
	ADDQ R9, R11; \
	ADDQ R9, R12; \
	ADDQ R9, R13; \
	ADDQ R8, DI

#define ZERO512 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7

#define SCALE512 \
	VMULPS Z14, Z0, Z0; \
	VMULPS Z14, Z1, Z1; \
	VMULPS Z14, Z2, Z2; \
	VMULPS Z14, Z3, Z3; \
	VMULPS Z14, Z4, Z4; \
	VMULPS Z14, Z5, Z5; \
	VMULPS Z14, Z6, Z6; \
	VMULPS Z14, Z7, Z7

#define FULLROW512(lo, hi) \
	CMPB R14, $0; \
	JEQ 3(PC); \
	VFMADD231PS (DI), Z15, lo; \
	VFMADD231PS 64(DI), Z15, hi; \
	VMOVUPS lo, (DI); \
	VMOVUPS hi, 64(DI)

#define MASKROW512(lo, hi) \
	CMPB R14, $0; \
	JEQ 5(PC); \
	VMOVUPS.Z (DI), K1, Z8; \
	VMOVUPS.Z 64(DI), K2, Z9; \
	VFMADD231PS Z8, Z15, lo; \
	VFMADD231PS Z9, Z15, hi; \
	VMOVUPS lo, K1, (DI); \
	VMOVUPS hi, K2, 64(DI)

// func directFMA4AVX512(k int, a0, a1, a2, a3 *float32, acs int, b *float32, ldb int, c *float32, ldc int, rows, n int, alpha float32, accum bool)
TEXT ·directFMA4AVX512(SB), NOSPLIT, $0-101
	MOVQ acs+40(FP), R9
	SHLQ $2, R9
	MOVQ ldb+56(FP), R8
	SHLQ $2, R8
	MOVQ ldc+72(FP), R10
	SHLQ $2, R10
	MOVQ b+48(FP), BX
	MOVQ c+64(FP), DX
	MOVQ n+88(FP), AX
	MOVBLZX accum+100(FP), R14
	VBROADCASTSS alpha+96(FP), Z14
	VBROADCASTSS directOne<>(SB), Z15

block512:
	CMPQ AX, $32
	JLT tail512
	LOADA
	ZERO512

loop512:
	VMOVUPS (DI), Z8
	VMOVUPS 64(DI), Z9
	FMAS512
	DECQ CX
	JNE loop512

	SCALE512
	MOVQ DX, DI
	MOVQ rows+80(FP), CX
	FULLROW512(Z0, Z1)
	DECQ CX
	JEQ next512
	ADDQ R10, DI
	FULLROW512(Z2, Z3)
	DECQ CX
	JEQ next512
	ADDQ R10, DI
	FULLROW512(Z4, Z5)
	DECQ CX
	JEQ next512
	ADDQ R10, DI
	FULLROW512(Z6, Z7)

next512:
	ADDQ $128, BX
	ADDQ $128, DX
	SUBQ $32, AX
	JMP block512

tail512:
	TESTQ AX, AX
	JEQ done512
	// The first AX (1-31) lanes: (1<<AX)-1, split into K1 and K2.
	MOVQ AX, CX
	MOVL $1, SI
	SHLL CX, SI
	DECL SI
	KMOVW SI, K1
	SHRL $16, SI
	KMOVW SI, K2
	LOADA
	ZERO512

mloop512:
	VMOVUPS.Z (DI), K1, Z8
	VMOVUPS.Z 64(DI), K2, Z9
	FMAS512
	DECQ CX
	JNE mloop512

	SCALE512
	MOVQ DX, DI
	MOVQ rows+80(FP), CX
	MASKROW512(Z0, Z1)
	DECQ CX
	JEQ done512
	ADDQ R10, DI
	MASKROW512(Z2, Z3)
	DECQ CX
	JEQ done512
	ADDQ R10, DI
	MASKROW512(Z4, Z5)
	DECQ CX
	JEQ done512
	ADDQ R10, DI
	MASKROW512(Z6, Z7)

done512:
	VZEROUPPER
	RET
