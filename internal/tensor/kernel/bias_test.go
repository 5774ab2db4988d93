package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// biasSpecials are the values the bias test plants in A, B and the bias: NaNs
// with payloads and signs (one signalling), infinities, signed zeros,
// denormals and values near the float32 range's ends.
var biasSpecials = []float32{
	math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc12345), math.Float32frombits(0x7f800001),
	float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)),
	math.Float32frombits(1), math.Float32frombits(0x807fffff), 3e38, -3e38, 1e-38,
}

// plant overwrites about one element in every 1/frac of x with a special.
func plant(r *rand.Rand, x []float32, frac float64) {
	for i := range x {
		if r.Float64() < frac {
			x[i] = biasSpecials[r.IntN(len(biasSpecials))]
		}
	}
}

// kernelConfigs runs f under every micro-kernel configuration the host
// has: the AVX-512 12x32 and 6x32 kernels (at every k slice), the AVX2
// 6x16 kernel alone, and the portable kernel.
func kernelConfigs(t *testing.T, f func(t *testing.T)) {
	saved, savedFMA, savedWide, savedTall, savedK := micro, microFMA, microWide, microTall, wideMinK
	defer func() {
		micro, microFMA, microWide, microTall, wideMinK = saved, savedFMA, savedWide, savedTall, savedK
	}()
	if savedWide != nil {
		wideMinK = 1
		t.Run("avx512-12x32", f)
		microTall = nil
		t.Run("avx512-6x32", f)
		wideMinK = savedK
	}
	microWide, microTall = nil, nil
	name := "avx2-fma-6x16"
	if microName == "go-6x16" {
		name = microName
	}
	t.Run(name, f)
	if microName != "go-6x16" {
		micro, microFMA = genericKernel, false
		t.Run("go-6x16", f)
	}
}

func microName6x16() string {
	if microName == "go-6x16" {
		return "go-6x16"
	}
	return "avx2-fma-6x16"
}

// TestSgemmBiasBits: SgemmBias gives the bits of copying the bias into
// every row of C and calling Sgemm with beta 1, on every path Sgemm takes
// (small products, k 0, alpha 0, edge tiles, several k slices, row and
// column bands across goroutines) under every micro-kernel, with NaNs,
// infinities, signed zeros and denormals in A, B and the bias.
func TestSgemmBiasBits(t *testing.T) {
	defer SetThreads(0)
	SetThreads(3)
	shapes := []struct{ m, n, k int }{
		{1, 1, 1}, {3, 5, 7}, {6, 16, 2}, {4, 4, 16}, {2, 3, 0}, {7, 9, 0}, {6, 16, 3},
		{7, 17, 5}, {12, 32, 9}, {13, 33, 64}, {6, 32, 256}, {18, 48, 257}, {25, 40, 513},
		{36, 96, 300}, {100, 130, 260}, {1, 64, 64}, {5, 100, 30},
		// goroutines: row bands (rowBands) and column bands (partition)
		{300, 64, 300}, {301, 70, 40}, {6, 2000, 100}, {11, 1500, 300},
		{13, 4100, 20},
	}
	alphas := []float32{1, 0, -0.5, 3}
	kernelConfigs(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(38, 38))
		for _, s := range shapes {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					for ai, alpha := range alphas {
						for mode := 0; mode < 3; mode++ {
							o := newOperands(r, tA, tB, s.m, s.n, s.k, 3, false)
							bias := randSlice(r, s.n+2)
							switch mode {
							case 1: // biasSpecials in the bias only
								plant(r, bias, 0.2)
							case 2: // everywhere, sparse in A and B so not every sum is NaN
								plant(r, bias, 0.2)
								plant(r, o.a, 0.01)
								plant(r, o.b, 0.01)
							}
							want := append([]float32(nil), o.c...)
							for i := 0; i < s.m; i++ {
								copy(want[i*o.ldc:i*o.ldc+s.n], bias)
							}
							Sgemm(tA, tB, s.m, s.n, s.k, alpha, o.a, o.lda, o.b, o.ldb, 1, want, o.ldc)
							got := append([]float32(nil), o.c...)
							SgemmBias(tA, tB, s.m, s.n, s.k, alpha, o.a, o.lda, o.b, o.ldb, bias, got, o.ldc)
							for i := range want {
								if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
									t.Fatalf("%v tA=%v tB=%v alpha=%v (%d) mode %d: C[%d] = %#08x, copy+Sgemm gives %#08x",
										s, tA, tB, alpha, ai, mode, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
								}
							}
						}
					}
				}
			}
		}
	})
}

func TestSgemmBiasShortBias(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("SgemmBias accepted a bias shorter than n")
		}
	}()
	SgemmBias(false, false, 2, 3, 1, 1, make([]float32, 2), 1, make([]float32, 3), 3, make([]float32, 2), make([]float32, 6), 3)
}

// BenchmarkSgemmBias compares Linear's former bias path (copy the bias into
// every row, then Sgemm with beta 1) with SgemmBias, in one binary.
func BenchmarkSgemmBias(b *testing.B) {
	for _, s := range []benchShape{
		{false, false, 4096, 1024, 256}, {false, false, 4096, 256, 1024},
		{false, true, 4096, 1024, 256}, {false, true, 4096, 256, 1024},
	} {
		o := benchOperands(s)
		bias := randSlice(rand.New(rand.NewPCG(2, 2)), s.n)
		flops := 2 * float64(s.m*s.n*s.k)
		b.Run(fmt.Sprintf("%v/copy+beta1", s), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				for r := 0; r < s.m; r++ {
					copy(o.c[r*o.ldc:r*o.ldc+s.n], bias)
				}
				Sgemm(o.transA, o.transB, o.m, o.n, o.k, 1, o.a, o.lda, o.b, o.ldb, 1, o.c, o.ldc)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("%v/bias", s), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				SgemmBias(o.transA, o.transB, o.m, o.n, o.k, 1, o.a, o.lda, o.b, o.ldb, bias, o.c, o.ldc)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
