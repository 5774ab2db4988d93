package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWideKernelBits: the 6x32 and 12x32 AVX-512 kernels give the 6x16 kernel's bits
// for every shape class (edges, several k slices, both transpositions,
// alpha and beta, through Sgemm and SgemmPacked), so an AVX-512 host
// computes what an AVX2 host computes. Skipped where the CPU lacks it.
func TestWideKernelBits(t *testing.T) {
	if microWide == nil {
		t.Skipf("no wide kernel on this CPU (%s)", microName)
	}
	saved, savedK := microWide, wideMinK
	defer func() { microWide, wideMinK = saved, savedK }()
	wideMinK = 1 // every k slice through the wide kernel
	r := rand.New(rand.NewPCG(9, 9))
	shapes := []struct{ m, n, k int }{
		{6, 32, 1}, {6, 32, 7}, {7, 33, 64}, {32, 32, 64}, {32, 64, 32}, {36, 96, 300},
		{100, 130, 257}, {13, 4100, 260}, {2048, 256, 256}, {256, 1024, 513}, {1, 64, 64}, {5, 64, 40},
		// 12-row blocks (microTall), then a 6-row one, then an edge.
		{20, 64, 70}, {30, 96, 513}, {12, 32, 5}, {18, 40, 256},
	}
	for _, s := range shapes {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.125, 0}, {-2, 0.25}} {
					o := newOperands(r, tA, tB, s.m, s.n, s.k, 3, false)
					run := func(wide bool, packed bool) []float32 {
						if wide {
							microWide = saved
						} else {
							microWide = nil
						}
						c := append([]float32(nil), o.c...)
						if packed {
							pb, err := PackB(o.transB, o.k, o.n, o.b, o.ldb)
							if err != nil {
								t.Fatal(err)
							}
							SgemmPacked(o.transA, o.m, ab[0], o.a, o.lda, pb, ab[1], c, o.ldc)
						} else {
							Sgemm(o.transA, o.transB, o.m, o.n, o.k, ab[0], o.a, o.lda, o.b, o.ldb, ab[1], c, o.ldc)
						}
						return c
					}
					for _, packed := range []bool{false, true} {
						want, got := run(false, packed), run(true, packed)
						for i := range want {
							if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
								t.Fatalf("%v tA=%v tB=%v alpha,beta=%v packed=%v: element %d is %v with the wide kernel, %v without",
									s, tA, tB, ab, packed, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}
