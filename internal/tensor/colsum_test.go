package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// colSumsScalar is colSums' chain without the vector path.
func colSumsScalar(g []float32, rows, cols int) []float32 {
	out := make([]float32, cols)
	for i := 0; i < rows; i++ {
		for j := range out {
			out[j] += g[i*cols+j]
		}
	}
	return out
}

// TestColSumsBits: the vector path gives the scalar chain's bits for
// every shape (column counts around the 8- and 32-wide blocks and the
// parallel split), with values over many exponents, cancellations,
// signed zeros, infinities and NaN (any NaN matches any NaN, as in
// TestExpSubBits).
func TestColSumsBits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 1e-45, -1e-45, math.MaxFloat32, -math.MaxFloat32, 1, -1}
	value := func() float32 {
		switch r.IntN(8) {
		case 0:
			return specials[r.IntN(len(specials))]
		case 1:
			return float32(r.NormFloat64()) * 1e30
		default:
			return float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
		}
	}
	for _, rows := range []int{0, 1, 2, 3, 7, 64, 257} {
		for _, cols := range []int{1, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 127, 128, 200, 256, 1000, 1024} {
			g := make([]float32, rows*cols)
			for i := range g {
				g[i] = value()
			}
			got, want := colSums(g, rows, cols), colSumsScalar(g, rows, cols)
			for j := range want {
				if got[j] != got[j] && want[j] != want[j] {
					continue // NaN: which operand's payload x86 keeps depends on the compiled order
				}
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("rows %d cols %d: column %d = %v (%#08x), scalar chain %v (%#08x)",
						rows, cols, j, got[j], math.Float32bits(got[j]), want[j], math.Float32bits(want[j]))
				}
			}
		}
	}
}

// BenchmarkColSums is a bias gradient of the reference step's FFN
// (4096 rows x 1024 columns).
func BenchmarkColSums(b *testing.B) {
	rows, cols := 4096, 1024
	g := make([]float32, rows*cols)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range g {
		g[i] = float32(r.NormFloat64())
	}
	b.SetBytes(int64(4 * len(g)))
	for i := 0; i < b.N; i++ {
		free(colSums(g, rows, cols))
	}
}
