package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSgemmPacked: a prepacked B gives Sgemm's bits for every shape class
// (tiny, single-goroutine, split by rows, split by columns, several k
// slices and column blocks), both transpositions, alpha and beta.
func TestSgemmPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	rnd := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	for _, s := range []struct{ m, n, k int }{
		{2, 3, 4}, {1, 50, 7}, {32, 1152, 384}, {32, 5000, 300}, {700, 40, 600}, {13, 4100, 260}, {6, 16, 256},
	} {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, ab := range [][2]float32{{1, 0}, {0.5, 1}, {-2, 0.25}} {
					a := rnd(s.m * s.k)
					b := rnd(s.k * s.n)
					c0 := rnd(s.m * s.n)
					lda, ldb := s.k, s.n
					if tA {
						lda = s.m
					}
					if tB {
						ldb = s.k
					}
					want := append([]float32(nil), c0...)
					Sgemm(tA, tB, s.m, s.n, s.k, ab[0], a, lda, b, ldb, ab[1], want, s.n)
					pb, err := PackB(tB, s.k, s.n, b, ldb)
					if err != nil {
						t.Fatal(err)
					}
					got := append([]float32(nil), c0...)
					SgemmPacked(tA, s.m, ab[0], a, lda, pb, ab[1], got, s.n)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%dx%dx%d tA=%v tB=%v alpha,beta=%v: C[%d] packed %v, Sgemm %v", s.m, s.n, s.k, tA, tB, ab, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
	if _, err := PackB(false, 3, 4, make([]float32, 5), 4); err == nil {
		t.Error("PackB accepted a short operand")
	}
}
