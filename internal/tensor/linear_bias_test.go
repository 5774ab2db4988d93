package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"repro/internal/tensor/backend"
)

// sgemmOnly hides the CPU backend's BiasSgemm, so Linear copies the bias
// into its output and calls Sgemm with beta 1.
type sgemmOnly struct{ backend.Backend }

// TestLinearBiasBits: Linear and Affine with a bias give the same bits
// through the CPU backend's SgemmBias as through the copy and beta-1
// Sgemm that backends without it use, special values included.
func TestLinearBiasBits(t *testing.T) {
	prev := backend.Current()
	defer backend.Use(prev)
	specials := []float32{
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc12345), float32(math.Inf(-1)),
		float32(math.Copysign(0, -1)), math.Float32frombits(1), 3e38,
	}
	rng := rand.New(rand.NewPCG(38, 1))
	vals := func(n int, special bool) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(rng.NormFloat64())
			if special && rng.IntN(50) == 0 {
				s[i] = specials[rng.IntN(len(specials))]
			}
		}
		return s
	}
	for _, s := range []struct{ n, in, out int }{{1, 3, 2}, {5, 4, 3}, {7, 17, 33}, {64, 300, 40}, {300, 64, 96}, {33, 513, 20}, {4, 0, 5}} {
		for _, io := range []bool{false, true} {
			for _, special := range []bool{false, true} {
				x := New(s.n, s.in, vals(s.n*s.in, special))
				wr, wc := s.out, s.in
				if io {
					wr, wc = s.in, s.out
				}
				w := New(wr, wc, vals(wr*wc, special))
				b := New(1, s.out, vals(s.out, special))
				var got [2][]float32
				for i, be := range []backend.Backend{backend.CPU(), sgemmOnly{backend.CPU()}} {
					backend.Use(be)
					var y []float32
					if io {
						y = Data(Affine(x, w, b))
					} else {
						y = Data(Linear(x, w, b))
					}
					got[i] = append([]float32(nil), y...)
				}
				name := fmt.Sprintf("%v io=%v special=%v", s, io, special)
				for i := range got[0] {
					if math.Float32bits(got[0][i]) != math.Float32bits(got[1][i]) {
						t.Fatalf("%s: y[%d] = %#08x with SgemmBias, %#08x with copy+Sgemm", name, i, math.Float32bits(got[0][i]), math.Float32bits(got[1][i]))
					}
				}
			}
		}
	}
}
