package kernel

import "fmt"

// Direct products: C = alpha*A*B computed without packing, element by
// element as Sgemm computes it, for callers that hold small products in
// their own tiles (fused attention: one query-row tile's scores, softmax
// and value product while they are in L1).
//
// What Sgemm computes for one element of an m x n x k product with beta 0
// depends only on the product's size and the micro-kernel in use, never
// on where the element sits or how the call is partitioned (see the
// package doc): with s = 0 and the k index p increasing,
//
//   - products of at most smallWork multiply-adds (smallGemm), and every
//     product under the portable micro-kernel: s += a_p*b_p (a product
//     and a sum, each rounded; Go does not fuse them on amd64), then
//     c = alpha*s;
//   - otherwise, under the assembly kernels (AVX2 6x16, AVX-512 6x32):
//     s = fma(a_p, b_p, s), then c = alpha*s (one VMULPS).
//
// k is cut into slices of kc: each slice starts its own s from 0, the
// first stores alpha*s and each later one adds its alpha*s to C (the
// kernels' beta = 1 step: fma(1, c, alpha*s), a single rounding). Direct
// reproduces exactly that, vectorising across independent elements of C
// (the columns) and never reassociating a sum, so its results are
// Sgemm's bit for bit; TestDirectMatchesSgemm checks every path.

// Arith is the arithmetic Sgemm gives one element of C.
type Arith uint8

const (
	// MulAdd: s += a*b, each operation rounded.
	MulAdd Arith = iota
	// FMA: s = fma(a, b, s), one rounding a step.
	FMA
)

func (a Arith) String() string {
	if a == FMA {
		return "fma"
	}
	return "mul+add"
}

// microFMA says the micro-kernel in use is an assembly FMA kernel (set
// with micro; tests that swap micro for the portable kernel reset it).
var microFMA bool

// directFMA4, where the CPU has the assembly kernel, computes rows rows
// (1 to 4; a0..a3 point at A(i, 0) of each, unused ones at row 0) of C =
// alpha*A*B over one k slice with FMA chains, n columns (any count; the
// last partial 16 through masks), A(i, p+1) acs elements after A(i, p), B
// and C row-major with leading dimensions ldb and ldc; accum adds the
// result to C (Sgemm's later k slices) instead of storing it.
var directFMA4 directFMA4Func

type directFMA4Func func(k int, a0, a1, a2, a3 *float32, acs int, b *float32, ldb int, c *float32, ldc int, rows, n int, alpha float32, accum bool)

// directFMA4Path is one implementation of directFMA4; directFMA4Paths
// holds those the CPU has, the one in use last, for the tests and
// benchmarks to compare (their bits are the same).
type directFMA4Path struct {
	name string
	f    directFMA4Func
}

var directFMA4Paths []directFMA4Path

// ArithOf returns the arithmetic Sgemm uses for an m x n x k product (at
// beta 0; alpha 0 and k 0 write zeros either way).
func ArithOf(m, n, k int) Arith {
	if m*n*k <= smallWork || !microFMA || directFMA4 == nil {
		return MulAdd
	}
	return FMA
}

// Direct computes C = alpha*A*B (C is not read) with the bits Sgemm gives
// the elements of a product of arithmetic ar, where ar is ArithOf of the
// whole product the caller reproduces (Direct may compute a part of it: a
// few rows, some columns). op(A) is m x k, stored row-major with leading
// dimension lda (transposed when transA, as for Sgemm); B is k x n
// row-major (not transposed: a caller with op(B) = X^T packs X^T once);
// C is m x n with leading dimension ldc. Invalid arguments panic.
//
// NaN payloads: under the assembly kernels and for small products every
// bit is Sgemm's, NaNs included. Under the portable kernel a NaN's sign or
// payload may differ (which operand of a+b a compiled loop returns is the
// compiler's choice); other values are identical.
func Direct(ar Arith, transA bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	ars, acs := lda, 1
	if transA {
		ars, acs = 1, lda
	}
	if m < 0 || n < 0 || k < 0 || ldb < n || ldc < n || (!transA && lda < k) || (transA && lda < m) {
		panic(fmt.Sprintf("kernel.Direct: m=%d n=%d k=%d, lda %d (transposed %v), ldb %d, ldc %d", m, n, k, lda, transA, ldb, ldc))
	}
	if m == 0 || n == 0 {
		return
	}
	if need := (m-1)*ldc + n; len(c) < need {
		panic(fmt.Sprintf("kernel.Direct: C has %d elements, want >= %d", len(c), need))
	}
	if alpha == 0 || k == 0 {
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	if need := (m-1)*ars + (k-1)*acs + 1; len(a) < need {
		panic(fmt.Sprintf("kernel.Direct: A has %d elements, want >= %d", len(a), need))
	}
	if need := (k-1)*ldb + n; len(b) < need {
		panic(fmt.Sprintf("kernel.Direct: B has %d elements, want >= %d", len(b), need))
	}
	if ar == FMA && directFMA4 == nil {
		panic("kernel.Direct: FMA arithmetic without the assembly kernel")
	}
	if ar == MulAdd && m*n*k <= smallWork {
		// Sgemm's own loop, so that even NaN payloads (which operand a
		// compiled a+b returns) are Sgemm's.
		smallGemm(transA, false, m, n, k, alpha, a, lda, b, ldb, 0, nil, c, ldc)
		return
	}
	for pc := 0; pc < k; pc += kc {
		kb := min(kc, k-pc)
		accum := pc > 0
		if ar == MulAdd {
			directMulAdd(m, n, kb, alpha, a[pc*acs:], ars, acs, b[pc*ldb:], ldb, c, ldc, accum)
			continue
		}
		for i := 0; i < m; i += 4 {
			rows := min(4, m-i)
			base := a[pc*acs+i*ars:]
			a0 := &base[0]
			a1, a2, a3 := a0, a0, a0
			if rows > 1 {
				a1 = &base[ars]
			}
			if rows > 2 {
				a2 = &base[2*ars]
			}
			if rows > 3 {
				a3 = &base[3*ars]
			}
			directFMA4(kb, a0, a1, a2, a3, acs, &b[pc*ldb], ldb, &c[i*ldc], ldc, rows, n, alpha, accum)
		}
	}
}

// directMulAdd is one k slice of Direct in MulAdd arithmetic, written as
// smallGemm and the portable micro-kernel write it (the same expressions,
// so a compiler that fuses a*b+c fuses them alike).
func directMulAdd(m, n, k int, alpha float32, a []float32, ars, acs int, b []float32, ldb int, c []float32, ldc int, accum bool) {
	var beta float32 = 1
	for i := 0; i < m; i++ {
		crow := c[i*ldc : i*ldc+n]
		for j := range crow {
			var s float32
			for p := 0; p < k; p++ {
				x := a[i*ars+p*acs]
				y := b[p*ldb+j]
				s += x * y
			}
			if accum {
				crow[j] = alpha*s + beta*crow[j]
			} else {
				crow[j] = alpha * s
			}
		}
	}
}

// transpose8, where the CPU has AVX, transposes 8 x 8*blocks bands.
var transpose8 func(src *float32, lds int, dst *float32, ldd int, blocks int)

// Transpose writes the transpose of the rows x cols matrix src (row
// stride lds) into dst (cols x rows, row stride ldd): dst[j*ldd+i] =
// src[i*lds+j]. A copy: no value changes. For a caller that multiplies by
// op(B) = X^T through Direct, which takes B as stored.
func Transpose(dst []float32, ldd int, src []float32, lds int, rows, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	if lds < cols || ldd < rows || len(src) < (rows-1)*lds+cols || len(dst) < (cols-1)*ldd+rows {
		panic(fmt.Sprintf("kernel.Transpose: %dx%d from %d elements (stride %d) into %d (stride %d)", rows, cols, len(src), lds, len(dst), ldd))
	}
	i := 0
	if transpose8 != nil && cols >= 8 {
		for ; i+8 <= rows; i += 8 {
			transpose8(&src[i*lds], lds, &dst[i], ldd, cols/8)
		}
		// The columns past the last block of 8, for those rows.
		for j := cols / 8 * 8; j < cols; j++ {
			d := dst[j*ldd : j*ldd+i]
			for r := range d {
				d[r] = src[r*lds+j]
			}
		}
	}
	for ; i < rows; i++ {
		s := src[i*lds : i*lds+cols]
		for j, v := range s {
			dst[j*ldd+i] = v
		}
	}
}
