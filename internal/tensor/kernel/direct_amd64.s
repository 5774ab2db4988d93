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
