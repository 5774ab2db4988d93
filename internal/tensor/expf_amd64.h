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
