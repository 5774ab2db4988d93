package tensortest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// SameBits reports whether a and b are the same float32 bit for bit, any
// two NaNs counting as equal (which NaN payload a min, a max or 0*Inf
// gives is not the point, and no operator passes a NaN on).
func SameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// Identical fails t unless a kernel's values got agree with the Go
// operator's want bit for bit (SameBits), naming the first that differs.
func Identical(t testing.TB, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad, first := 0, -1
	for i := range want {
		if !SameBits(got[i], want[i]) {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ; first [%d]: kernel %v (%#08x), Go %v (%#08x)", what, bad, len(want),
			first, got[first], math.Float32bits(got[first]), want[first], math.Float32bits(want[first]))
	}
}

// Normals returns n normal draws of r scaled by scale, as float32.
func Normals(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
}
