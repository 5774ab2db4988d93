//go:build !purego

#include "textflag.h"
#include "expf_amd64.h"

// func expSubAVX2(dst, src *float32, n int, m float32, c *[16]float32)
// dst[j] = expf(src[j] - m) for j < n (n a positive multiple of 8), every
// lane expf's operations in expf's order (EXPF_AVX2, expf_amd64.h).
TEXT ·expSubAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y15
	MOVQ c+32(FP), DX
	EXPF_CONSTS

loop:
	VMOVUPS (SI), Y0
	VSUBPS Y15, Y0, Y0 // x - m
	EXPF_AVX2
	VMOVUPS Y5, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNE loop
	VZEROUPPER
	RET
