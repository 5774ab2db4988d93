package trainer

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/loss"
	"repro/internal/tensor/tensortest"
)

// simcseRun trains a small unsupervised-SimCSE encoder through the trainer
// for six updates of two micro-batches each, with clipping that fires, and
// returns the losses, gradient norms and weights after it.
func simcseRun(t *testing.T) (losses, norms []float64, weights [][]float32) {
	t.Helper()
	const L, D, H, FF, V, B, T = 2, 64, 4, 128, 500, 16, 12
	enc, err := transformer.NewEncoder(transformer.Config{VocabSize: V, Hidden: D, Layers: L, Heads: H, Intermediate: FF,
		MaxPosition: 32, TypeVocab: 2, HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 2))
	seqs := make([][]int, 8*B)
	for i := range seqs {
		s := []int{2}
		for n := 3 + r.IntN(T-4); len(s) < n; {
			s = append(s, 5+r.IntN(V-5))
		}
		seqs[i] = append(s, 3) // lengths differ: padding and masks
	}
	step := simcseStep(enc, seqs)
	tr := &Trainer{Params: FromNamed(enc.NamedParams()), N: len(seqs), Step: step,
		OnStep: func(p Progress) { losses, norms = append(losses, p.Loss), append(norms, p.GradNorm) },
		Config: Config{MaxSteps: 6, BatchSize: B, Accumulate: 2, LR: 1e-3, Warmup: 2, MaxGradNorm: 0.5, WeightDecay: 0.01, Seed: 3}}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, np := range enc.NamedParams() {
		weights = append(weights, append([]float32(nil), tensor.Data(np.Param)...))
	}
	return losses, norms, weights
}

// TestGradientBuffersReused: the trainer hands its gradient buffers back
// to the free lists after each update, so a second identical run in the
// same process starts on buffers that held the first run's gradients; it
// must give the same bits (no operator may read a reused buffer's old
// values). The clipping must fire for the test to cover it.
func TestGradientBuffersReused(t *testing.T) {
	l1, n1, w1 := simcseRun(t)
	l2, n2, w2 := simcseRun(t)
	clipped := false
	for i := range n1 {
		if math.Float64bits(l1[i]) != math.Float64bits(l2[i]) || math.Float64bits(n1[i]) != math.Float64bits(n2[i]) {
			t.Fatalf("update %d: loss %v, norm %v, then loss %v, norm %v", i+1, l1[i], n1[i], l2[i], n2[i])
		}
		clipped = clipped || n1[i] > 0.5
	}
	if !clipped {
		t.Fatalf("no gradient norm above the clipping threshold: %v", n1)
	}
	if a, b := tensortest.Digest(w1...), tensortest.Digest(w2...); a != b {
		t.Fatalf("weights differ: %s then %s", a, b)
	}
}

// TestTrainerStepDigest logs a digest of simcseRun's losses, norms and
// weights, to compare builds of the trainer bit for bit (run it before
// and after a change). REPRO_STEP_DIGEST=1 runs it.
func TestTrainerStepDigest(t *testing.T) {
	if os.Getenv("REPRO_STEP_DIGEST") == "" {
		t.Skip("REPRO_STEP_DIGEST not set")
	}
	losses, norms, weights := simcseRun(t)
	f := func(xs []float64) []float32 {
		out := make([]float32, 0, 2*len(xs))
		for _, x := range xs {
			b := math.Float64bits(x)
			out = append(out, math.Float32frombits(uint32(b)), math.Float32frombits(uint32(b>>32)))
		}
		return out
	}
	t.Logf("losses %v norms %v digest %s", losses, norms, tensortest.Digest(append([][]float32{f(losses), f(norms)}, weights...)...))
}

// simcseStep is unsupervised SimCSE's step on seqs (each sequence twice,
// two dropout masks, mean pooling, temperature 0.05), shared by the digest
// test and the benchmark.
func simcseStep(enc *transformer.Encoder, seqs [][]int) func(context.Context, []int, *rand.Rand) (mat.Tensor, error) {
	return func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		in := make([][]int, 0, 2*len(batch))
		for _, i := range batch {
			in = append(in, seqs[i])
		}
		for _, i := range batch {
			in = append(in, seqs[i])
		}
		bt, err := transformer.NewBatch(in, 0)
		if err != nil {
			return nil, err
		}
		o, err := enc.Forward(bt, rng)
		if err != nil {
			return nil, err
		}
		z, err := enc.Pool(o, transformer.PoolMean)
		if err != nil {
			return nil, err
		}
		return loss.SimCSEUnsup(tensor.SliceRows(z, 0, len(batch)), tensor.SliceRows(z, len(batch), 2*len(batch)), 0.05)
	}
}
