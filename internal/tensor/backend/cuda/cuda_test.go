//go:build cuda && gpu

package cuda

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"repro/internal/tensor/backend"
)

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func open(t testing.TB) *Backend {
	t.Helper()
	b, err := Open(0)
	if err != nil {
		t.Fatalf("Open(0): %v", err)
	}
	return b
}

// closeTo is the 1e-4 relative agreement required of every call.
func closeTo(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); !(d <= 1e-4*math.Max(1, math.Abs(float64(want[i])))) {
			t.Fatalf("%s: C[%d] cuda %v, cpu %v", what, i, got[i], want[i])
		}
	}
}

// TestMatchesCPU compares every call with the CPU backend: random shapes,
// all transposes, alpha/beta (beta 0 with NaN in C), padded rows.
func TestMatchesCPU(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(1, 2))
	dims := []int{1, 3, 16, 17, 64, 129, 300}
	for trial := 0; trial < 48; trial++ {
		m, n, k := dims[r.IntN(len(dims))], dims[r.IntN(len(dims))], dims[r.IntN(len(dims))]
		tA, tB := trial&1 == 1, trial&2 == 2
		pad := trial % 3
		alpha, beta := []float32{1, -0.5, 2}[trial%3], []float32{0, 1, 0.25}[trial/3%3]
		lda, ldb, ldc := k+pad, n+pad, n+pad
		if tA {
			lda = m + pad
		}
		if tB {
			ldb = k + pad
		}
		a, b := randFloats(r, max(m, k)*lda), randFloats(r, max(n, k)*ldb)
		c := randFloats(r, m*ldc)
		if beta == 0 {
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					c[i*ldc+j] = float32(math.NaN())
				}
			}
		}
		want, got := slices.Clone(c), slices.Clone(c)
		backend.CPU().Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
		g.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, got, ldc)
		closeTo(t, "random", got, want) // padding included: must be unchanged
	}
}

// TestKeep checks the resident-operand cache: a kept weight is used from
// the device, a host change is invisible until Changed, and Release forgets.
func TestKeep(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(3, 4))
	m, n, k := 64, 48, 80
	x, w := randFloats(r, m*k), randFloats(r, k*n)
	mul := func(be backend.Backend) []float32 {
		c := make([]float32, m*n)
		be.Sgemm(false, false, m, n, k, 1, x, k, w, n, 0, c, n)
		return c
	}
	g.Keep(w)
	defer g.Release(w)
	if g.Kept() != 1 {
		t.Fatalf("Kept() = %d after Keep", g.Kept())
	}
	closeTo(t, "kept", mul(g), mul(backend.CPU()))

	old := mul(backend.CPU())
	w[0] += 10 // host change without Changed: the device copy is used
	closeTo(t, "stale by design", mul(g), old)
	g.Changed(w)
	closeTo(t, "after Changed", mul(g), mul(backend.CPU()))

	g.Release(w)
	if g.Kept() != 0 {
		t.Fatalf("Kept() = %d after Release", g.Kept())
	}
	w[1] -= 3 // no longer kept: copied per call again
	closeTo(t, "released", mul(g), mul(backend.CPU()))
}

func TestByNameAndConcurrency(t *testing.T) {
	be, err := backend.ByName("cuda")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backend.ByName("cuda:x"); err == nil {
		t.Fatal("ByName(cuda:x) accepted")
	}
	if _, err := backend.ByName("cuda:99"); err == nil {
		t.Fatal("ByName(cuda:99) accepted")
	}
	r := rand.New(rand.NewPCG(5, 6))
	a, b := randFloats(r, 32*64), randFloats(r, 32*64)
	want := make([]float32, 32*32)
	backend.CPU().Sgemm(false, true, 32, 32, 64, 1, a, 64, b, 64, 0, want, 32)
	done := make(chan []float32)
	for i := 0; i < 8; i++ {
		go func() {
			c := make([]float32, 32*32)
			be.Sgemm(false, true, 32, 32, 64, 1, a, 64, b, 64, 0, c, 32)
			done <- c
		}()
	}
	for i := 0; i < 8; i++ {
		closeTo(t, "concurrent", <-done, want)
	}
}

// BenchmarkStep reports GFLOP/s of the step's largest product with the
// weight kept on the device (copies of X and C remain).
func BenchmarkStep(b *testing.B) {
	g := open(b)
	r := rand.New(rand.NewPCG(7, 8))
	m, n, k := 2048, 1024, 256
	x, w, c := randFloats(r, m*k), randFloats(r, k*n), make([]float32, m*n)
	g.Keep(w)
	defer g.Release(w)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.Sgemm(false, false, m, n, k, 1, x, k, w, n, 0, c, n)
	}
	b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
