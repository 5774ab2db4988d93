// EXPF_AVX2 sets Y5 = expf(Y0) in each of the eight lanes, expf's
// operations in expf's order (fastmath.go): n = floor(x*log2e + 0.5); r =
// (x - n*C1) - n*C2; z = r*r; p = ((((c0*r + c1)*r + c2)*r + c3)*r +
// c4)*r + c5; p = (p*z + r) + 1; then p*2^n (n <= 127) or (p*2)*2^(n-1);
// +Inf above c[0], 0 below c[1], x itself when NaN. No FMA: expf's
// products and sums are each rounded. In: Y0 (kept), DX = &expConsts,
// Y10 = C2, Y11 = C1, Y12 = 0.5, Y13 = log2(e), Y14 = 127 in every lane
// (int32; EXPF_CONSTS sets them). Clobbers Y1-Y9.
#define EXPF_CONSTS \
	VPCMPEQD Y14, Y14, Y14; \
	VPSRLD $25, Y14, Y14; \
	VBROADCASTSS 8(DX), Y13; \
	VBROADCASTSS 12(DX), Y12; \
	VBROADCASTSS 16(DX), Y11; \
	VBROADCASTSS 20(DX), Y10

#define EXPF_AVX2 \
	VMULPS Y13, Y0, Y1; \
	VADDPS Y12, Y1, Y1; \
	VROUNDPS $1, Y1, Y1; \
	VMULPS Y11, Y1, Y2; \
	VSUBPS Y2, Y0, Y3; \
	VMULPS Y10, Y1, Y2; \
	VSUBPS Y2, Y3, Y3; \
	VMULPS Y3, Y3, Y4; \
	VBROADCASTSS 24(DX), Y5; \
	VMULPS Y3, Y5, Y5; \
	VBROADCASTSS 28(DX), Y6; \
	VADDPS Y6, Y5, Y5; \
	VMULPS Y3, Y5, Y5; \
	VBROADCASTSS 32(DX), Y6; \
	VADDPS Y6, Y5, Y5; \
	VMULPS Y3, Y5, Y5; \
	VBROADCASTSS 36(DX), Y6; \
	VADDPS Y6, Y5, Y5; \
	VMULPS Y3, Y5, Y5; \
	VBROADCASTSS 40(DX), Y6; \
	VADDPS Y6, Y5, Y5; \
	VMULPS Y3, Y5, Y5; \
	VBROADCASTSS 44(DX), Y6; \
	VADDPS Y6, Y5, Y5; \
	VMULPS Y4, Y5, Y5; \
	VADDPS Y3, Y5, Y5; \
	VBROADCASTSS 48(DX), Y6; \
	VADDPS Y6, Y5, Y5; \
	VBROADCASTSS 56(DX), Y6; \
	VCMPPS $0x1e, Y6, Y1, Y7; \
	VBROADCASTSS 52(DX), Y8; \
	VMULPS Y8, Y5, Y8; \
	VBLENDVPS Y7, Y8, Y5, Y5; \
	VCVTTPS2DQ Y1, Y9; \
	VPADDD Y7, Y9, Y9; \
	VPADDD Y14, Y9, Y9; \
	VPSLLD $23, Y9, Y9; \
	VMULPS Y9, Y5, Y5; \
	VBROADCASTSS 0(DX), Y6; \
	VCMPPS $0x1e, Y6, Y0, Y7; \
	VBROADCASTSS 60(DX), Y8; \
	VBLENDVPS Y7, Y8, Y5, Y5; \
	VBROADCASTSS 4(DX), Y6; \
	VCMPPS $0x11, Y6, Y0, Y7; \
	VXORPS Y8, Y8, Y8; \
	VBLENDVPS Y7, Y8, Y5, Y5; \
	VCMPPS $3, Y0, Y0, Y7; \
	VBLENDVPS Y7, Y0, Y5, Y5

// EXPF_AVX512 is EXPF_AVX2 on sixteen lanes: the same operations in the
// same order, the blends done through K2 instead of vector masks (a merge
// under the mask where VBLENDVPS takes its second source), so each lane
// has EXPF_AVX2's bits. AVX512F only. In: Z0 (kept), DX = &expConsts,
// Z10-Z14 as in EXPF_AVX2, Z16-Z27 the other constants, Z28 all ones and
// Z29 zero in every lane (EXPF_CONSTS_AVX512 sets them all). Out: Z5.
// Clobbers Z1-Z9 and K2.
#define EXPF_CONSTS_AVX512 \
	VPTERNLOGD $0xff, Z28, Z28, Z28; \
	VPSRLD $25, Z28, Z14; \
	VBROADCASTSS 8(DX), Z13; \
	VBROADCASTSS 12(DX), Z12; \
	VBROADCASTSS 16(DX), Z11; \
	VBROADCASTSS 20(DX), Z10; \
	VBROADCASTSS 24(DX), Z16; \
	VBROADCASTSS 28(DX), Z17; \
	VBROADCASTSS 32(DX), Z18; \
	VBROADCASTSS 36(DX), Z19; \
	VBROADCASTSS 40(DX), Z20; \
	VBROADCASTSS 44(DX), Z21; \
	VBROADCASTSS 48(DX), Z22; \
	VBROADCASTSS 52(DX), Z23; \
	VBROADCASTSS 56(DX), Z24; \
	VBROADCASTSS 0(DX), Z25; \
	VBROADCASTSS 60(DX), Z26; \
	VBROADCASTSS 4(DX), Z27; \
	VPXORD Z29, Z29, Z29

#define EXPF_AVX512 \
	VMULPS Z13, Z0, Z1; \
	VADDPS Z12, Z1, Z1; \
	VRNDSCALEPS $1, Z1, Z1; \
	VMULPS Z11, Z1, Z2; \
	VSUBPS Z2, Z0, Z3; \
	VMULPS Z10, Z1, Z2; \
	VSUBPS Z2, Z3, Z3; \
	VMULPS Z3, Z3, Z4; \
	VMULPS Z3, Z16, Z5; \
	VADDPS Z17, Z5, Z5; \
	VMULPS Z3, Z5, Z5; \
	VADDPS Z18, Z5, Z5; \
	VMULPS Z3, Z5, Z5; \
	VADDPS Z19, Z5, Z5; \
	VMULPS Z3, Z5, Z5; \
	VADDPS Z20, Z5, Z5; \
	VMULPS Z3, Z5, Z5; \
	VADDPS Z21, Z5, Z5; \
	VMULPS Z4, Z5, Z5; \
	VADDPS Z3, Z5, Z5; \
	VADDPS Z22, Z5, Z5; \
	VCMPPS $0x1e, Z24, Z1, K2; \
	VMULPS Z23, Z5, K2, Z5; \
	VCVTTPS2DQ Z1, Z9; \
	VPADDD Z28, Z9, K2, Z9; \
	VPADDD Z14, Z9, Z9; \
	VPSLLD $23, Z9, Z9; \
	VMULPS Z9, Z5, Z5; \
	VCMPPS $0x1e, Z25, Z0, K2; \
	VMOVAPS Z26, K2, Z5; \
	VCMPPS $0x11, Z27, Z0, K2; \
	VMOVAPS Z29, K2, Z5; \
	VCMPPS $3, Z0, Z0, K2; \
	VMOVAPS Z0, K2, Z5
