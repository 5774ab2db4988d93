// Macros shared by the AVX-512 micro-kernels (micro512_amd64.s,
// micro12_amd64.s): one 32-float C row stored, or combined with its beta
// term, and the C tile's prefetch. C is at DX with row stride R8 bytes;
// the beta term's source at R10 with row stride R11 bytes.

// STOREROW_Z writes the row's two accumulators to C and steps to the next
// row.
#define STOREROW_Z(lo, hi) \
	VMOVUPS lo, (DX); \
	VMOVUPS hi, 64(DX); \
	ADDQ R8, DX

// BETAROW_Z sets C = beta*Cin + acc (beta broadcast in b) and steps both
// rows.
#define BETAROW_Z(lo, hi, b) \
	VFMADD231PS (R10), b, lo; \
	VFMADD231PS 64(R10), b, hi; \
	VMOVUPS lo, (DX); \
	VMOVUPS hi, 64(DX); \
	ADDQ R8, DX; \
	ADDQ R11, R10

// PREFETCH_C prefetches rows rows of 128 bytes of C (up to three lines
// each), using R10 and R11.
#define PREFETCH_C(rows) \
	MOVQ DX, R10; \
	MOVQ $rows, R11; \
pfc: \
	PREFETCHT0 (R10); \
	PREFETCHT0 64(R10); \
	PREFETCHT0 127(R10); \
	ADDQ R8, R10; \
	DECQ R11; \
	JNE pfc
