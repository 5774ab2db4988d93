package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDecodeBits: the one-query attention (decoding against a key/value
// cache) gives the same bits with its vectorised loops as with the scalar
// ones, for head widths that take the vector path (multiples of 8) and
// that do not, key lengths on and off the 4/8/16-key groups (0 included),
// with and without a bias, and with signed zeros and infinities among the
// values, so the order of every product and sum matters.
func TestDecodeBits(t *testing.T) {
	savedA, savedD := axpy4Vec, dotKeysVec
	defer func() { axpy4Vec, dotKeysVec = savedA, savedD }()
	if savedA == nil {
		t.Skip("no AVX2: only the scalar loops exist")
	}
	r := rand.New(rand.NewPCG(4, 2))
	rnd := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
			if r.IntN(50) == 0 {
				x[i] = []float32{0, float32(math.Copysign(0, -1)), 1e30, -1e-41}[r.IntN(4)]
			}
		}
		return x
	}
	for trial := 0; trial < 80; trial++ {
		B, H := 1+r.IntN(4), 1+r.IntN(3)
		dh := []int{3, 8, 16, 24, 64, 72}[r.IntN(6)]
		Tk := 1 + r.IntN(70)
		D := H * dh
		s := AttentionSpec{Batch: B, Heads: H, QLen: 1, KLen: Tk, KeyLens: make([]int, B)}
		for i := range s.KeyLens {
			s.KeyLens[i] = r.IntN(Tk + 1)
		}
		var bias []float32
		if r.IntN(2) == 0 {
			bias = rnd(H * Tk)
		}
		Q, K, V := rnd(B*D), rnd(B*Tk*D), rnd(B*Tk*D)
		run := func(vec bool) []float32 {
			if vec {
				axpy4Vec, dotKeysVec = savedA, savedD
			} else {
				axpy4Vec, dotKeysVec = nil, nil
			}
			ss := s
			if bias != nil {
				ss.Bias = New(H, Tk, bias)
			}
			y := Attention(New(B, D, Q), New(B*Tk, D, K), New(B*Tk, D, V), ss)
			return append([]float32(nil), Data(y)...)
		}
		want, got := run(false), run(true)
		for i := range want {
			if want[i] != want[i] && got[i] != got[i] {
				continue
			}
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("trial %d (B %d H %d dh %d Tk %d lens %v bias %v): out[%d] = %v vectorised, %v scalar",
					trial, B, H, dh, Tk, s.KeyLens, bias != nil, i, got[i], want[i])
			}
		}
	}
}
