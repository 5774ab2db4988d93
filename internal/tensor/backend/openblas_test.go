//go:build openblas

package backend

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"repro/internal/tensor/kernel"
)

func init() {
	// 0 means "all cores", as for the CPU backend.
	threadSetters["openblas"] = func(n int) {
		if n <= 0 {
			n = runtime.NumCPU()
		}
		SetOpenBLASThreads(n)
	}
}

// TestOpenBLASMatchesCPU compares OpenBLAS with the CPU backend to 1e-4
// relative on the step's shapes (scaled down) and odd ones, every transpose.
func TestOpenBLASMatchesCPU(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ob := OpenBLAS()
	for _, s := range [][3]int{{256, 64, 96}, {37, 51, 300}, {5, 3, 2}} {
		m, n, k := s[0], s[1], s[2]
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				lda, ldb, ldc := k+1, n+2, n+3
				if tA {
					lda = m + 1
				}
				if tB {
					ldb = k + 2
				}
				a := randFloats(r, max(m, k)*lda)
				b := randFloats(r, max(n, k)*ldb)
				c := randFloats(r, m*ldc)
				want, got := slices.Clone(c), slices.Clone(c)
				CPU().Sgemm(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 2, want, ldc)
				ob.Sgemm(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 2, got, ldc)
				for i := range got {
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
						t.Fatalf("tA=%v tB=%v %dx%dx%d: C[%d] openblas %v cpu %v", tA, tB, m, n, k, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestOpenBLASDeterministic checks that OpenBLAS with a fixed thread count
// repeats its bits, as the package documentation claims.
func TestOpenBLASDeterministic(t *testing.T) {
	defer SetOpenBLASThreads(runtime.NumCPU())
	SetOpenBLASThreads(2)
	if got := OpenBLASThreads(); got != 2 && runtime.NumCPU() >= 2 {
		t.Fatalf("OpenBLASThreads() = %d after setting 2", got)
	}
	r := rand.New(rand.NewPCG(13, 14))
	m, n, k := 300, 200, 400
	a, b := randFloats(r, m*k), randFloats(r, k*n)
	ref := make([]float32, m*n)
	OpenBLAS().Sgemm(false, true, m, n, k, 1, a, k, b, k, 0, ref, n)
	for rep := 0; rep < 5; rep++ {
		c := make([]float32, m*n)
		OpenBLAS().Sgemm(false, true, m, n, k, 1, a, k, b, k, 0, c, n)
		for i := range c {
			if math.Float32bits(c[i]) != math.Float32bits(ref[i]) {
				t.Fatalf("run %d: element %d differs", rep, i)
			}
		}
	}
}

// TestOpenBLASConcurrent calls OpenBLAS from several goroutines at once, as
// attention heads do.
func TestOpenBLASConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	a, b := randFloats(r, 32*64), randFloats(r, 32*64)
	want := make([]float32, 32*32)
	kernel.Sgemm(false, true, 32, 32, 64, 1, a, 64, b, 64, 0, want, 32)
	errs := make(chan string, 4)
	for g := 0; g < 4; g++ {
		go func() {
			c := make([]float32, 32*32)
			for i := 0; i < 50; i++ {
				OpenBLAS().Sgemm(false, true, 32, 32, 64, 1, a, 64, b, 64, 0, c, 32)
				for j := range c {
					if math.Abs(float64(c[j]-want[j])) > 1e-4*(1+math.Abs(float64(want[j]))) {
						errs <- "concurrent openblas result differs"
						return
					}
				}
			}
			errs <- ""
		}()
	}
	for g := 0; g < 4; g++ {
		if e := <-errs; e != "" {
			t.Fatal(e)
		}
	}
}

func TestOpenBLASConfig(t *testing.T) {
	cfg := OpenBLASConfig()
	if !strings.Contains(cfg, "OpenBLAS") || !strings.Contains(cfg, "/ core ") {
		t.Fatalf("OpenBLASConfig() = %q", cfg)
	}
	t.Log(cfg)
}

func TestOpenBLASPanicsOnBadArgs(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("no panic for a short A")
		}
	}()
	OpenBLAS().Sgemm(false, false, 4, 4, 4, 1, make([]float32, 15), 4, make([]float32, 16), 4, 0, make([]float32, 16), 4)
}
