package trainer

import (
	"context"
	"math/rand/v2"
	"testing"

	"repro/internal/model/transformer"
)

// BenchmarkTrainerSimCSEStep is one update of unsupervised SimCSE through
// the trainer (forward, loss, backward, clipping, AdamW, and the release
// of the step's graph): an encoder of 4 layers, width 128, 4 heads, FFN
// 512, a batch of 64 sentences of 32 tokens seen twice, mean pooling.
// Bytes allocated per op are per update.
func BenchmarkTrainerSimCSEStep(b *testing.B) {
	const L, D, H, FF, V, B, T = 4, 128, 4, 512, 8000, 64, 32
	enc, err := transformer.NewEncoder(transformer.Config{VocabSize: V, Hidden: D, Layers: L, Heads: H, Intermediate: FF,
		MaxPosition: 64, TypeVocab: 2, HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 2))
	seqs := make([][]int, 4*B)
	for i := range seqs {
		s := []int{2}
		for len(s) < T-1 {
			s = append(s, 5+r.IntN(V-5))
		}
		seqs[i] = append(s, 3)
	}
	step := simcseStep(enc, seqs)
	tr := &Trainer{Params: FromNamed(enc.NamedParams()), N: len(seqs), Step: step,
		Config: Config{MaxSteps: b.N, BatchSize: B, LR: 3e-5, MaxGradNorm: 1, Seed: 1}}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := tr.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
}
