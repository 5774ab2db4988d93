//go:build !purego

#include "textflag.h"

// Elementwise loops eight lanes at a time for dropout, ReLU and gradient
// accumulation; each lane
// does the scalar loop's one operation (a rounded product; a bitwise AND
// with the x > 0 mask; a rounded sum), so the bits are the scalar
// loop's.

// func mulAVX(dst, a, b *float32, n int)
// dst[i] = a[i] * b[i] for i < n (n a positive multiple of 8).
TEXT ·mulAVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHLQ $2, CX
	XORQ AX, AX
	CMPQ CX, $128
	JLT mul8

mul32:
	VMOVUPS 0(SI)(AX*1), Y0
	VMOVUPS 32(SI)(AX*1), Y1
	VMOVUPS 64(SI)(AX*1), Y2
	VMOVUPS 96(SI)(AX*1), Y3
	VMULPS 0(DX)(AX*1), Y0, Y0
	VMULPS 32(DX)(AX*1), Y1, Y1
	VMULPS 64(DX)(AX*1), Y2, Y2
	VMULPS 96(DX)(AX*1), Y3, Y3
	VMOVUPS Y0, 0(DI)(AX*1)
	VMOVUPS Y1, 32(DI)(AX*1)
	VMOVUPS Y2, 64(DI)(AX*1)
	VMOVUPS Y3, 96(DI)(AX*1)
	ADDQ $128, AX
	LEAQ 128(AX), R8
	CMPQ R8, CX
	JLE mul32

mul8:
	CMPQ AX, CX
	JGE muldone
	VMOVUPS (SI)(AX*1), Y0
	VMULPS (DX)(AX*1), Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	JMP mul8

muldone:
	VZEROUPPER
	RET

// func addAVX(dst, a, b *float32, n int)
// dst[i] = a[i] + b[i] for i < n (n a positive multiple of 8).
TEXT ·addAVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHLQ $2, CX
	XORQ AX, AX
	CMPQ CX, $128
	JLT add8

add32:
	VMOVUPS 0(SI)(AX*1), Y0
	VMOVUPS 32(SI)(AX*1), Y1
	VMOVUPS 64(SI)(AX*1), Y2
	VMOVUPS 96(SI)(AX*1), Y3
	VADDPS 0(DX)(AX*1), Y0, Y0
	VADDPS 32(DX)(AX*1), Y1, Y1
	VADDPS 64(DX)(AX*1), Y2, Y2
	VADDPS 96(DX)(AX*1), Y3, Y3
	VMOVUPS Y0, 0(DI)(AX*1)
	VMOVUPS Y1, 32(DI)(AX*1)
	VMOVUPS Y2, 64(DI)(AX*1)
	VMOVUPS Y3, 96(DI)(AX*1)
	ADDQ $128, AX
	LEAQ 128(AX), R8
	CMPQ R8, CX
	JLE add32

add8:
	CMPQ AX, CX
	JGE adddone
	VMOVUPS (SI)(AX*1), Y0
	VADDPS (DX)(AX*1), Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	JMP add8

adddone:
	VZEROUPPER
	RET

// func reluMaskAVX(dst, x, v *float32, n int)
// dst[i] = v[i] with its bits ANDed with all ones where x[i] > 0 (ordered:
// NaN is not) and zero elsewhere, for i < n (n a positive multiple of 8):
// ReLU's forward (v = x) and backward (v = the output gradient).
TEXT ·reluMaskAVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ n+24(FP), CX
	SHLQ $2, CX
	XORQ AX, AX
	VXORPS Y7, Y7, Y7

relu8:
	VMOVUPS (SI)(AX*1), Y0
	VCMPPS $0x1e, Y7, Y0, Y1 // x > 0, ordered, quiet
	VANDPS (DX)(AX*1), Y1, Y1
	VMOVUPS Y1, (DI)(AX*1)
	ADDQ $32, AX
	CMPQ AX, CX
	JLT relu8
	VZEROUPPER
	RET
