// Package kernel is repro's single-precision matrix multiply (sgemm) for the
// CPU: C = alpha*op(A)*op(B) + beta*C on row-major matrices, where op(X) is X
// or its transpose.
//
// The structure is GotoBLAS/BLIS: C is walked in nc-column blocks, the k
// dimension in kc-deep slices, and rows in mc-row blocks; for each
// (column block, k slice) a kc x nc panel of op(B) is packed into 16-wide
// micro-panels (it lives in L3; one micro-panel of 16 KiB stays in L1), for
// each row block an mc x kc block of op(A) is packed into 6-tall micro-panels
// (it lives in L2), and a register-blocked micro-kernel multiplies one A
// micro-panel by one B micro-panel into a 6x16 tile of C. All four transpose
// combinations are handled by the packing routines alone, so there is one
// micro-kernel. Partial tiles at the right and bottom edges are computed into
// a scratch tile (the packed panels are zero-padded) and merged into C.
//
// The micro-kernel is Go assembly using AVX2 and FMA on amd64 (12 YMM
// accumulators, the BLIS Haswell/Zen shape), selected at run time with
// golang.org/x/sys/cpu; elsewhere, on CPUs without AVX2/FMA, or with the
// purego build tag, a portable Go micro-kernel of the same 6x16 shape runs.
// On AVX-512 hosts two wider kernels cover full blocks of the same grid:
// 6x32 (one A micro-panel, two B micro-panels) and 12x32 (two of each, 24
// ZMM accumulators, each B row loaded once for twelve rows: on the 2-core
// Sapphire Rapids host it took the step's products from 213-233 to 251-320
// GFLOP/s). Each element still gets the 6x16 kernel's FMA chain and
// epilogue, so an AVX-512 host computes an AVX2 host's bits.
//
// Determinism: every element of C is summed over k in increasing order,
// in kc-deep slices whose boundaries depend only on k, and every 6x16 tile
// sits on a grid fixed by the matrix origin. Parallel work is a fixed
// partition of C into contiguous bands of whole tiles, one band per
// goroutine, so each element is computed by exactly one goroutine with the
// same instruction sequence whatever the number of goroutines or their
// scheduling: results are bit-identical run after run, and also across
// thread counts. (They can differ between the assembly and the portable
// micro-kernel, i.e. between machines.) When the bands are row bands, the
// goroutines pack each op(B) panel once between them (rowBands) instead of
// each packing all of it: packing copies values, so the tiles' arithmetic
// is the same. On amd64 the packing loops copy through small assembly
// helpers (pack_amd64.s, and pack512_amd64.s where the CPU has AVX-512),
// which also copy only.
//
// Direct (direct.go) computes a product, or any band of its rows and
// columns, without packing and with the bits Sgemm gives it (ArithOf names
// the per-element arithmetic: the assembly kernels' FMA chains or the
// portable and small-product mul+add), for callers that keep small
// products in their own cache tiles: the fused attention operator.
//
// SgemmBias adds a bias row to every row of the product without writing it
// into C first (Linear's bias): the kernels read the beta*C term of the
// first k slice from a C-input pointer with its own row stride, which for
// the bias is the bias row with stride 0, so each element gets the same
// instruction on the same values as after copying the bias into C and
// calling Sgemm with beta 1.
//
// Small products skip packing and goroutines: below a few hundred
// multiply-adds a direct loop is faster than packing, and below half a
// million the work is done on the calling goroutine (callers such as batched
// attention parallelise across heads themselves; Sgemm is safe for
// concurrent use).
package kernel
