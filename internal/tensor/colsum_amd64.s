//go:build !purego

#include "textflag.h"

// func colSumsAVX(out *float32, src *float32, rows, n, ld int)
// out[j] = s, s = +0 then s += src[i*ld + j] for i < rows in order, for
// j < n (n a positive multiple of 8): colSums' per-column chain, eight
// columns a lane each (VADDPS rounds each sum as ADDSS does). Rows are
// streamed in order, out's n sums kept in L1, as the scalar loop does:
// walking a block of columns down all rows instead reads each row a few
// cache lines at a time, and measured slower.
TEXT ·colSumsAVX(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ ld+32(FP), DX
	SHLQ $2, DX // row stride in bytes
	SHLQ $2, CX // n in bytes

	// out = +0
	VXORPS Y0, Y0, Y0
	XORQ AX, AX
zero:
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	CMPQ AX, CX
	JLT zero

row:
	TESTQ BX, BX
	JEQ done
	XORQ AX, AX
	CMPQ CX, $128
	JLT cols8

cols32:
	VMOVUPS 0(DI)(AX*1), Y0
	VMOVUPS 32(DI)(AX*1), Y1
	VMOVUPS 64(DI)(AX*1), Y2
	VMOVUPS 96(DI)(AX*1), Y3
	VADDPS 0(SI)(AX*1), Y0, Y0
	VADDPS 32(SI)(AX*1), Y1, Y1
	VADDPS 64(SI)(AX*1), Y2, Y2
	VADDPS 96(SI)(AX*1), Y3, Y3
	VMOVUPS Y0, 0(DI)(AX*1)
	VMOVUPS Y1, 32(DI)(AX*1)
	VMOVUPS Y2, 64(DI)(AX*1)
	VMOVUPS Y3, 96(DI)(AX*1)
	ADDQ $128, AX
	LEAQ 128(AX), R8
	CMPQ R8, CX
	JLE cols32

cols8:
	CMPQ AX, CX
	JGE nextrow
	VMOVUPS (DI)(AX*1), Y0
	VADDPS (SI)(AX*1), Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	JMP cols8

nextrow:
	ADDQ DX, SI
	DECQ BX
	JMP row

done:
	VZEROUPPER
	RET
