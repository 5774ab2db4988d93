//go:build !purego

#include "textflag.h"

// Packing helpers in AVX-512F: the same copies as pack_amd64.s with one ZMM
// per 16 floats and fewer shuffles per value.

// func copyRows16AVX512(dst, src *float32, lds, rows int)
TEXT ·copyRows16AVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), DX
	SHLQ $2, DX
	MOVQ rows+24(FP), CX
	LEAQ (DX)(DX*2), R10 // 3 rows
	CMPQ CX, $4
	JLT  c16tail

c16four:
	VMOVUPS (SI), Z0
	VMOVUPS (SI)(DX*1), Z1
	VMOVUPS (SI)(DX*2), Z2
	VMOVUPS (SI)(R10*1), Z3
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	LEAQ (SI)(DX*4), SI
	ADDQ $256, DI
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  c16four
	TESTQ CX, CX
	JEQ  c16done

c16tail:
	VMOVUPS (SI), Z0
	VMOVUPS Z0, (DI)
	ADDQ DX, SI
	ADDQ $64, DI
	DECQ CX
	JNE  c16tail

c16done:
	VZEROUPPER
	RET

// func copyPanels16x4AVX512(dst, src *float32, lds, rows int)
// copyRows16AVX512 for four adjacent micro-panels at once (dst's panels
// 16*rows floats apart): each source row is read as 256 contiguous bytes.
TEXT ·copyPanels16x4AVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), DX
	SHLQ $2, DX
	MOVQ rows+24(FP), CX
	MOVQ CX, R8
	SHLQ $6, R8 // panel stride in bytes
	LEAQ (R8)(R8*2), R10 // 3 panels

z16loop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, (DI)(R8*1)
	VMOVUPS Z2, (DI)(R8*2)
	VMOVUPS Z3, (DI)(R10*1)
	ADDQ DX, SI
	ADDQ $64, DI
	DECQ CX
	JNE  z16loop
	VZEROUPPER
	RET

// Permutation indices for interleave6x16AVX512 (VPERMT2PS: 0-15 pick the
// first table, 16-31 the second). pair lo/hi interleave two rows' columns
// 0-7 / 8-15; then each of the three output vectors of a half takes its
// (row 0, row 1) and (row 2, row 3) pairs (ab) and then its (row 4, row 5)
// pairs (c).
DATA il6idx<>+0(SB)/4, $0
DATA il6idx<>+4(SB)/4, $16
DATA il6idx<>+8(SB)/4, $1
DATA il6idx<>+12(SB)/4, $17
DATA il6idx<>+16(SB)/4, $2
DATA il6idx<>+20(SB)/4, $18
DATA il6idx<>+24(SB)/4, $3
DATA il6idx<>+28(SB)/4, $19
DATA il6idx<>+32(SB)/4, $4
DATA il6idx<>+36(SB)/4, $20
DATA il6idx<>+40(SB)/4, $5
DATA il6idx<>+44(SB)/4, $21
DATA il6idx<>+48(SB)/4, $6
DATA il6idx<>+52(SB)/4, $22
DATA il6idx<>+56(SB)/4, $7
DATA il6idx<>+60(SB)/4, $23
DATA il6idx<>+64(SB)/4, $8
DATA il6idx<>+68(SB)/4, $24
DATA il6idx<>+72(SB)/4, $9
DATA il6idx<>+76(SB)/4, $25
DATA il6idx<>+80(SB)/4, $10
DATA il6idx<>+84(SB)/4, $26
DATA il6idx<>+88(SB)/4, $11
DATA il6idx<>+92(SB)/4, $27
DATA il6idx<>+96(SB)/4, $12
DATA il6idx<>+100(SB)/4, $28
DATA il6idx<>+104(SB)/4, $13
DATA il6idx<>+108(SB)/4, $29
DATA il6idx<>+112(SB)/4, $14
DATA il6idx<>+116(SB)/4, $30
DATA il6idx<>+120(SB)/4, $15
DATA il6idx<>+124(SB)/4, $31
DATA il6idx<>+128(SB)/4, $0
DATA il6idx<>+132(SB)/4, $1
DATA il6idx<>+136(SB)/4, $16
DATA il6idx<>+140(SB)/4, $17
DATA il6idx<>+144(SB)/4, $0
DATA il6idx<>+148(SB)/4, $0
DATA il6idx<>+152(SB)/4, $2
DATA il6idx<>+156(SB)/4, $3
DATA il6idx<>+160(SB)/4, $18
DATA il6idx<>+164(SB)/4, $19
DATA il6idx<>+168(SB)/4, $0
DATA il6idx<>+172(SB)/4, $0
DATA il6idx<>+176(SB)/4, $4
DATA il6idx<>+180(SB)/4, $5
DATA il6idx<>+184(SB)/4, $20
DATA il6idx<>+188(SB)/4, $21
DATA il6idx<>+192(SB)/4, $0
DATA il6idx<>+196(SB)/4, $1
DATA il6idx<>+200(SB)/4, $2
DATA il6idx<>+204(SB)/4, $3
DATA il6idx<>+208(SB)/4, $16
DATA il6idx<>+212(SB)/4, $17
DATA il6idx<>+216(SB)/4, $6
DATA il6idx<>+220(SB)/4, $7
DATA il6idx<>+224(SB)/4, $8
DATA il6idx<>+228(SB)/4, $9
DATA il6idx<>+232(SB)/4, $18
DATA il6idx<>+236(SB)/4, $19
DATA il6idx<>+240(SB)/4, $12
DATA il6idx<>+244(SB)/4, $13
DATA il6idx<>+248(SB)/4, $14
DATA il6idx<>+252(SB)/4, $15
DATA il6idx<>+256(SB)/4, $0
DATA il6idx<>+260(SB)/4, $0
DATA il6idx<>+264(SB)/4, $6
DATA il6idx<>+268(SB)/4, $7
DATA il6idx<>+272(SB)/4, $22
DATA il6idx<>+276(SB)/4, $23
DATA il6idx<>+280(SB)/4, $0
DATA il6idx<>+284(SB)/4, $0
DATA il6idx<>+288(SB)/4, $8
DATA il6idx<>+292(SB)/4, $9
DATA il6idx<>+296(SB)/4, $24
DATA il6idx<>+300(SB)/4, $25
DATA il6idx<>+304(SB)/4, $0
DATA il6idx<>+308(SB)/4, $0
DATA il6idx<>+312(SB)/4, $10
DATA il6idx<>+316(SB)/4, $11
DATA il6idx<>+320(SB)/4, $20
DATA il6idx<>+324(SB)/4, $21
DATA il6idx<>+328(SB)/4, $2
DATA il6idx<>+332(SB)/4, $3
DATA il6idx<>+336(SB)/4, $4
DATA il6idx<>+340(SB)/4, $5
DATA il6idx<>+344(SB)/4, $22
DATA il6idx<>+348(SB)/4, $23
DATA il6idx<>+352(SB)/4, $8
DATA il6idx<>+356(SB)/4, $9
DATA il6idx<>+360(SB)/4, $10
DATA il6idx<>+364(SB)/4, $11
DATA il6idx<>+368(SB)/4, $24
DATA il6idx<>+372(SB)/4, $25
DATA il6idx<>+376(SB)/4, $14
DATA il6idx<>+380(SB)/4, $15
DATA il6idx<>+384(SB)/4, $26
DATA il6idx<>+388(SB)/4, $27
DATA il6idx<>+392(SB)/4, $0
DATA il6idx<>+396(SB)/4, $0
DATA il6idx<>+400(SB)/4, $12
DATA il6idx<>+404(SB)/4, $13
DATA il6idx<>+408(SB)/4, $28
DATA il6idx<>+412(SB)/4, $29
DATA il6idx<>+416(SB)/4, $0
DATA il6idx<>+420(SB)/4, $0
DATA il6idx<>+424(SB)/4, $14
DATA il6idx<>+428(SB)/4, $15
DATA il6idx<>+432(SB)/4, $30
DATA il6idx<>+436(SB)/4, $31
DATA il6idx<>+440(SB)/4, $0
DATA il6idx<>+444(SB)/4, $0
DATA il6idx<>+448(SB)/4, $0
DATA il6idx<>+452(SB)/4, $1
DATA il6idx<>+456(SB)/4, $26
DATA il6idx<>+460(SB)/4, $27
DATA il6idx<>+464(SB)/4, $4
DATA il6idx<>+468(SB)/4, $5
DATA il6idx<>+472(SB)/4, $6
DATA il6idx<>+476(SB)/4, $7
DATA il6idx<>+480(SB)/4, $28
DATA il6idx<>+484(SB)/4, $29
DATA il6idx<>+488(SB)/4, $10
DATA il6idx<>+492(SB)/4, $11
DATA il6idx<>+496(SB)/4, $12
DATA il6idx<>+500(SB)/4, $13
DATA il6idx<>+504(SB)/4, $30
DATA il6idx<>+508(SB)/4, $31
GLOBL il6idx<>(SB), RODATA|NOPTR, $512

// Three output vectors (48 floats: eight columns of six rows) of one half
// from its three interleaved row pairs.
#define IL6OUT(p01, p23, p45, ab, c, t, off) \
	VMOVAPS p01, t; \
	VPERMT2PS p23, ab, t; \
	VPERMT2PS p45, c, t; \
	VMOVUPS t, off(DI)

// func interleave6x16AVX512(dst, src *float32, lds, blocks int)
TEXT ·interleave6x16AVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), R8
	SHLQ $2, R8
	MOVQ blocks+24(FP), CX
	LEAQ (R8)(R8*2), R10 // 3 rows
	VMOVUPS il6idx<>+0(SB), Z16
	VMOVUPS il6idx<>+64(SB), Z17
	VMOVUPS il6idx<>+128(SB), Z18
	VMOVUPS il6idx<>+192(SB), Z19
	VMOVUPS il6idx<>+256(SB), Z20
	VMOVUPS il6idx<>+320(SB), Z21
	VMOVUPS il6idx<>+384(SB), Z22
	VMOVUPS il6idx<>+448(SB), Z23

i16block:
	MOVQ SI, AX
	VMOVUPS (AX), Z0
	VMOVUPS (AX)(R8*1), Z1
	VMOVUPS (AX)(R8*2), Z2
	VMOVUPS (AX)(R10*1), Z3
	LEAQ (AX)(R8*4), AX
	VMOVUPS (AX), Z4
	VMOVUPS (AX)(R8*1), Z5

	VMOVAPS Z0, Z6
	VPERMT2PS Z1, Z16, Z6 // rows 0, 1, columns 0-7
	VPERMT2PS Z1, Z17, Z0 // rows 0, 1, columns 8-15
	VMOVAPS Z2, Z7
	VPERMT2PS Z3, Z16, Z7
	VPERMT2PS Z3, Z17, Z2
	VMOVAPS Z4, Z8
	VPERMT2PS Z5, Z16, Z8
	VPERMT2PS Z5, Z17, Z4

	IL6OUT(Z6, Z7, Z8, Z18, Z19, Z9, 0)
	IL6OUT(Z6, Z7, Z8, Z20, Z21, Z10, 64)
	IL6OUT(Z6, Z7, Z8, Z22, Z23, Z11, 128)
	IL6OUT(Z0, Z2, Z4, Z18, Z19, Z12, 192)
	IL6OUT(Z0, Z2, Z4, Z20, Z21, Z13, 256)
	IL6OUT(Z0, Z2, Z4, Z22, Z23, Z14, 320)

	ADDQ $64, SI
	ADDQ $384, DI
	DECQ CX
	JNE  i16block
	VZEROUPPER
	RET
