package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpSubBits: expSub gives expf(x - m)'s bits for every float32 x in
// a dense sweep of the range (every 4093rd bit pattern of both signs, which
// covers each binade many times), around the cut-offs and the n = 127/128
// scale change, for the special values, and with several m; NaN in, NaN
// out.
func TestExpSubBits(t *testing.T) {
	var xs []float32
	for b := uint32(0); b < 0xff800000; b += 4093 {
		xs = append(xs, math.Float32frombits(b))
		if b < 0x7f800000 {
			xs = append(xs, math.Float32frombits(b|0x80000000))
		}
	}
	edges := []float32{88.72283, -87.33654, 88.0, 88.3762626647949, 88.37626, -87, -86.5, 0, float32(math.Copysign(0, -1)),
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-45, -1e-45, 0.5, -0.5}
	for _, e := range edges {
		for d := -40; d <= 40; d++ {
			b := int64(math.Float32bits(e)) + int64(d)
			if b >= 0 && b <= math.MaxUint32 {
				xs = append(xs, math.Float32frombits(uint32(b)))
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 1))
	r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	for _, m := range []float32{0, 1.5, -3.25, 80} {
		got := append([]float32(nil), xs...)
		for lo := 0; lo < len(got); lo += 1000 { // rows of 1000 plus a tail of 7
			expSub(got[lo:min(lo+1000, len(got))], m)
		}
		tail := got[len(got)-7:]
		copy(tail, xs[len(xs)-7:])
		expSub(tail, m)
		for i, x := range xs {
			want := expf(x - m)
			if want != want && got[i] != got[i] {
				continue
			}
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("m=%v x=%v (%#08x): expSub %v (%#08x), expf %v (%#08x)", m, x, math.Float32bits(x),
					got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
			}
		}
	}
	if expSubVec == nil {
		t.Log("no AVX2: the scalar loop ran")
	}
}
