package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// directCase is one product for the Direct tests: op(A) m x k (transposed
// storage when tA), B k x n row-major, padded leading dimensions.
type directCase struct {
	m, n, k int
	tA      bool
	alpha   float32
}

// specials sprinkles signed zeros, infinities and a NaN into x, so the
// tests see the sign of zero sums and NaN propagation, not just rounding.
func specials(r *rand.Rand, x []float32) {
	vals := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, -3e38}
	for i := range x {
		if r.IntN(40) == 0 {
			x[i] = vals[r.IntN(len(vals))]
		}
	}
}

// bitsEqual fails unless got and want have the same bits, element by
// element, except that any NaN equals any NaN: Sgemm itself gives a NaN
// different payloads in a full tile (assembly) and an edge tile (Go adds
// the k slices there), so only NaN-ness is part of its contract.
func bitsEqual(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if got[i] != got[i] && want[i] != want[i] {
			continue
		}
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d = %v (%#08x), Sgemm %v (%#08x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestDirectMatchesSgemm: Direct, given ArithOf of the whole product, gives
// Sgemm's bits (beta 0) for the whole product and for any band of its rows
// computed alone, under both micro-kernels (and with and without the
// AVX-512 kernel where the CPU has it), on shapes around the small-product
// threshold, the 4x16 tile, column tails of every width and several k
// slices; C beyond the product is untouched and C's old contents (NaN) are
// not read.
func TestDirectMatchesSgemm(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		savedWide := microWide
		defer func() { microWide = savedWide }()
		for _, wide := range []bool{true, false} {
			if wide && (savedWide == nil || !microFMA) {
				continue // the wide kernel runs only beside the 6x16 assembly
			}
			if !wide {
				microWide = nil
			}
			r := rand.New(rand.NewPCG(5, 6))
			dims := []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 64, 65}
			var cases []directCase
			for trial := 0; trial < 120; trial++ {
				c := directCase{m: dims[r.IntN(len(dims))], n: dims[r.IntN(len(dims))], k: dims[r.IntN(len(dims))], tA: r.IntN(2) == 0, alpha: 1}
				switch trial % 6 {
				case 1:
					c.alpha = 0.125
				case 2:
					c.alpha = -1.7
				case 5:
					c.k = 257 + r.IntN(300) // two and three k slices
				}
				cases = append(cases, c)
			}
			cases = append(cases, directCase{m: 2, n: 2, k: 64, alpha: 1}, directCase{m: 4, n: 8, k: 8, alpha: 1},
				directCase{m: 4, n: 8, k: 9, alpha: 1}, directCase{m: 32, n: 32, k: 64, alpha: 0.125}, directCase{m: 32, n: 64, k: 32, tA: true, alpha: 1})
			for _, c := range cases {
				lda := c.k + 3
				if c.tA {
					lda = c.m + 2
				}
				ldb, ldc := c.n+5, c.n+1
				ar, ac := c.m, c.k
				if c.tA {
					ar, ac = c.k, c.m
				}
				_ = ac
				a, b := randSlice(r, ar*lda), randSlice(r, c.k*ldb)
				specials(r, a)
				specials(r, b)
				want := make([]float32, c.m*ldc)
				for i := range want {
					want[i] = float32(math.NaN())
				}
				got := append([]float32(nil), want...)
				Sgemm(c.tA, false, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, 0, want, ldc)
				ars := lda
				if c.tA {
					ars = 1
				}
				arith := ArithOf(c.m, c.n, c.k)
				Direct(arith, c.tA, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, got, ldc)
				what := fmt.Sprintf("%s %v %+v", microName, arith, c)
				bitsEqual(t, what, got, want)
				// Bands of rows and of columns alone, as a fused caller computes them.
				band := append([]float32(nil), want...)
				for i := range band {
					band[i] = float32(math.NaN())
				}
				for i0 := 0; i0 < c.m; {
					rows := min(c.m-i0, 1+r.IntN(6))
					j0 := 0
					for j0 < c.n {
						cols := min(c.n-j0, 1+r.IntN(40))
						Direct(arith, c.tA, rows, cols, c.k, c.alpha, a[i0*ars:], lda, b[j0:], ldb, band[i0*ldc+j0:], ldc)
						j0 += cols
					}
					i0 += rows
				}
				bitsEqual(t, what+" bands", band, want)
			}
		}
	})
}

// TestDirectArith: the arithmetic ArithOf names is the one Sgemm uses: an
// FMA chain and a mul+add chain differ on these operands, and each
// product agrees with the chain ArithOf reports.
func TestDirectArith(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		// 1 + 2^-12 squared is 1 + 2^-11 + 2^-24: the product rounds
		// (to even, 1 + 2^-11) and the FMA keeps the 2^-24.
		x := float32(1 + 1.0/4096)
		for _, s := range [][3]int{{1, 1, 2}, {4, 8, 8}, {4, 8, 10}, {6, 16, 64}} {
			m, n, k := s[0], s[1], s[2]
			a := make([]float32, m*k)
			b := make([]float32, k*n)
			for i := range a {
				a[i] = x
			}
			for i := range b {
				b[i] = x
			}
			for p := 1; p < k; p += 2 { // s = x*x - x*x + ... (k even): 0, or the FMA's rounding error
				for i := 0; i < m; i++ {
					a[i*k+p] = -x
				}
			}
			c := make([]float32, m*n)
			Sgemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
			var fmaS, mulS float32
			for p := 0; p < k; p++ {
				fmaS = float32(math.FMA(float64(a[p]), float64(b[p*n]), float64(fmaS)))
				mulS += a[p] * b[p*n]
			}
			want := mulS
			if ArithOf(m, n, k) == FMA {
				want = fmaS
			}
			if fmaS == mulS {
				t.Fatalf("%v: the chains agree (%v); the test shows nothing", s, fmaS)
			}
			if c[0] != want {
				t.Errorf("%s %v: Sgemm gives %v, ArithOf says %v (fma %v, mul+add %v)", microName, s, c[0], ArithOf(m, n, k), fmaS, mulS)
			}
		}
	})
}

// TestTranspose: every shape around the 8x8 blocks, padded strides, and
// nothing outside the destination written.
func TestTranspose(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, rows := range []int{1, 3, 7, 8, 9, 16, 17, 32, 45} {
		for _, cols := range []int{1, 5, 8, 12, 16, 24, 33, 64} {
			lds, ldd := cols+r.IntN(3), rows+r.IntN(3)
			src := randSlice(r, rows*lds)
			dst := make([]float32, cols*ldd+5)
			for i := range dst {
				dst[i] = -7
			}
			Transpose(dst, ldd, src, lds, rows, cols)
			for j := 0; j < cols; j++ {
				for i := 0; i < ldd; i++ {
					got := dst[j*ldd+i]
					want := float32(-7)
					if i < rows {
						want = src[i*lds+j]
					}
					if math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%dx%d (lds %d, ldd %d): dst[%d][%d] = %v, want %v", rows, cols, lds, ldd, j, i, got, want)
					}
				}
			}
			for _, v := range dst[cols*ldd:] {
				if v != -7 {
					t.Fatalf("%dx%d: wrote past the destination", rows, cols)
				}
			}
		}
	}
}
