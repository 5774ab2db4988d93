package tensor

import (
	"math/rand/v2"
	"testing"

	"github.com/nlpodyssey/spago/mat"
)

func TestBucketBiasValues(t *testing.T) {
	// w[b, h] = 10*b + h; buckets of a 2x3 grid.
	w := New(4, 2, []float32{0, 1, 10, 11, 20, 21, 30, 31})
	got := Data(BucketBias(w, []int{0, 1, 2, 3, 3, 0}, 2, 3))
	want := []float32{0, 10, 20, 30, 30, 0, 1, 11, 21, 31, 31, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("BucketBias = %v, want %v", got, want)
		}
	}
}

func TestGradBucketBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 11))
	const B, H, Tq, Tk, D = 2, 2, 3, 4, 4
	buckets := []int{0, 1, 2, 2, 1, 0, 1, 2, 2, 2, 0, 1} // repeats exercise the scatter-add
	in := []*Matrix{param(rng, B*Tq, D, 1), param(rng, B*Tk, D, 1), param(rng, B*Tk, D, 1), param(rng, 3, H, 1)}
	gradCheck(t, "BucketBias", in, func(in []*Matrix) mat.Tensor {
		return Attention(in[0], in[1], in[2], AttentionSpec{Batch: B, Heads: H, QLen: Tq, KLen: Tk,
			KeyLens: []int{Tk, Tk - 1}, Scale: 1, Bias: BucketBias(in[3], buckets, Tq, Tk)})
	})
}
