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
// AVX-512 kernel where the CPU has it) and through every directFMA4 the
// CPU has (AVX2, AVX-512), on shapes around the small-product
// threshold, the 4x16 tile, column tails of every width and several k
// slices; C beyond the product is untouched and C's old contents (NaN) are
// not read.
func TestDirectMatchesSgemm(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		savedWide, savedDirect := microWide, directFMA4
		defer func() { microWide, directFMA4 = savedWide, savedDirect }()
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
				directCase{m: 4, n: 8, k: 9, alpha: 1}, directCase{m: 32, n: 32, k: 64, alpha: 0.125}, directCase{m: 32, n: 64, k: 32, tA: true, alpha: 1},
				directCase{m: 4, n: 48, k: 20, alpha: 1}, directCase{m: 7, n: 63, k: 300, tA: true, alpha: 0.5}, directCase{m: 9, n: 96, k: 40, alpha: 1})
			paths := directFMA4Paths
			if len(paths) == 0 {
				paths = []directFMA4Path{{"none", nil}}
			}
			for _, path := range paths {
				directFMA4 = path.f
				testDirectCases(t, r, cases, path.name)
			}
		}
	})
}

func testDirectCases(t *testing.T, r *rand.Rand, cases []directCase, path string) {
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
		what := fmt.Sprintf("%s, direct %s, %v %+v", microName, path, arith, c)
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

// TestDirectPathsBits: every directFMA4 the CPU has (AVX2, AVX-512) gives
// the same bits through Direct, NaN payloads included, on products with
// special values, every column count 1-100 (the 16- and 32-wide blocks'
// tails), row counts 1-9 and one to three k slices; C outside the product
// is untouched.
func TestDirectPathsBits(t *testing.T) {
	if len(directFMA4Paths) < 2 {
		t.Skip("one directFMA4 on this CPU")
	}
	saved := directFMA4
	defer func() { directFMA4 = saved }()
	r := rand.New(rand.NewPCG(9, 4))
	for n := 1; n <= 100; n++ {
		m, k := 1+r.IntN(9), 1+r.IntN(40)
		if n%7 == 0 {
			k = 257 + r.IntN(400)
		}
		tA := n%3 == 0
		lda, ar := k+1, m
		if tA {
			lda, ar = m+3, k
		}
		ldb, ldc := n+r.IntN(3), n+2
		a, b := randSlice(r, ar*lda), randSlice(r, k*ldb)
		specials(r, a)
		specials(r, b)
		alpha := []float32{1, 0.375, -2}[n%3]
		var want []float32
		for i, p := range directFMA4Paths {
			directFMA4 = p.f
			got := make([]float32, m*ldc+3)
			for j := range got {
				got[j] = math.Float32frombits(0x7fc0beef)
			}
			Direct(FMA, tA, m, n, k, alpha, a, lda, b, ldb, got, ldc)
			if i == 0 {
				want = got
				continue
			}
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("%s vs %s: %dx%dx%d (tA %v): element %d (row %d, col %d) = %#08x, want %#08x",
						p.name, directFMA4Paths[0].name, m, n, k, tA, j, j/ldc, j%ldc, math.Float32bits(got[j]), math.Float32bits(want[j]))
				}
			}
		}
	}
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
