package backend

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"repro/internal/tensor/kernel"
)

// threadSetters sets a backend's thread count for the benchmarks;
// openblas_test.go adds OpenBLAS's.
var threadSetters = map[string]func(int){"cpu": kernel.SetThreads}

// stepShapes are the products of the reference training step (4 layers,
// width 256, FFN 1024, 64 x 32 tokens): forward, input gradient (B
// transposed) and weight gradient (A transposed).
var stepShapes = []struct {
	tA, tB  bool
	m, n, k int
}{
	{false, false, 2048, 256, 256}, {false, false, 2048, 1024, 256}, {false, false, 2048, 256, 1024},
	{false, true, 2048, 256, 256}, {false, true, 2048, 256, 1024}, {false, true, 2048, 1024, 256},
	{true, false, 256, 256, 2048}, {true, false, 256, 1024, 2048}, {true, false, 1024, 256, 2048},
	{false, true, 32, 32, 64}, {false, false, 32, 64, 32}, // one attention head
}

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// BenchmarkBackends reports GFLOP/s of each compiled-in backend on the step
// shapes with 1 and 2 threads (go test -tags openblas -bench Backends).
func BenchmarkBackends(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range Names() {
		be, err := ByName(name)
		if err != nil {
			b.Fatal(err)
		}
		set := threadSetters[name]
		for _, th := range []int{1, 2} {
			for _, s := range stepShapes {
				t := func(x bool) string { return map[bool]string{false: "N", true: "T"}[x] }
				label := fmt.Sprintf("%s/threads=%d/%s%s_%dx%dx%d", name, th, t(s.tA), t(s.tB), s.m, s.n, s.k)
				b.Run(label, func(b *testing.B) {
					if set == nil {
						b.Skipf("no thread setting for %s", name)
					}
					set(th)
					defer set(0)
					lda, ldb := s.k, s.n
					if s.tA {
						lda = s.m
					}
					if s.tB {
						ldb = s.k
					}
					a, bb, c := randFloats(r, s.m*s.k), randFloats(r, s.k*s.n), make([]float32, s.m*s.n)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						be.Sgemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
					}
					b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}
