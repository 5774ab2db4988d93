//go:build !purego

#include "textflag.h"

// Elementwise loops eight lanes at a time for dropout, ReLU and gradient
// accumulation; each lane does the scalar loop's one operation (a rounded
// product; a bitwise AND with the x > 0 mask; a rounded sum), so the bits
// are the scalar loop's.

// BINARY_LOOP(OP) sets dst[i] = a[i] OP b[i] for i < n (n a positive
// multiple of 8; DI = dst, SI = a, DX = b, CX = n), 32 lanes a round while
// 32 remain, then 8.
#define BINARY_LOOP(OP) \
	SHLQ $2, CX; \
	XORQ AX, AX; \
	CMPQ CX, $128; \
	JLT tail8; \
wide32: \
	VMOVUPS 0(SI)(AX*1), Y0; \
	VMOVUPS 32(SI)(AX*1), Y1; \
	VMOVUPS 64(SI)(AX*1), Y2; \
	VMOVUPS 96(SI)(AX*1), Y3; \
	OP 0(DX)(AX*1), Y0, Y0; \
	OP 32(DX)(AX*1), Y1, Y1; \
	OP 64(DX)(AX*1), Y2, Y2; \
	OP 96(DX)(AX*1), Y3, Y3; \
	VMOVUPS Y0, 0(DI)(AX*1); \
	VMOVUPS Y1, 32(DI)(AX*1); \
	VMOVUPS Y2, 64(DI)(AX*1); \
	VMOVUPS Y3, 96(DI)(AX*1); \
	ADDQ $128, AX; \
	LEAQ 128(AX), R8; \
	CMPQ R8, CX; \
	JLE wide32; \
tail8: \
	CMPQ AX, CX; \
	JGE loopdone; \
	VMOVUPS (SI)(AX*1), Y0; \
	OP (DX)(AX*1), Y0, Y0; \
	VMOVUPS Y0, (DI)(AX*1); \
	ADDQ $32, AX; \
	JMP tail8; \
loopdone: \
	VZEROUPPER

// func mulAVX(dst, a, b *float32, n int)
// dst[i] = a[i] * b[i] for i < n (n a positive multiple of 8).
TEXT ·mulAVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	BINARY_LOOP(VMULPS)
	RET

// func addAVX(dst, a, b *float32, n int)
// dst[i] = a[i] + b[i] for i < n (n a positive multiple of 8).
TEXT ·addAVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	BINARY_LOOP(VADDPS)
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
