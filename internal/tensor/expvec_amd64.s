//go:build !purego

#include "textflag.h"
#include "expf_amd64.h"

// func expSubAVX2(x *float32, n int, m float32, c *[16]float32)
// x[j] = expf(x[j] - m) for j < n (n a positive multiple of 8), every lane
// expf's operations in expf's order (EXPF_AVX2, expf_amd64.h).
TEXT ·expSubAVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS m+16(FP), Y15
	MOVQ c+24(FP), DX
	EXPF_CONSTS

loop:
	VMOVUPS (DI), Y0
	VSUBPS Y15, Y0, Y0 // x - m
	EXPF_AVX2
	VMOVUPS Y5, (DI)
	ADDQ $32, DI
	SUBQ $8, CX
	JNE loop
	VZEROUPPER
	RET
