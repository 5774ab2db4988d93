package gpt2

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/optim"
	"repro/internal/tensor/tensortest"
)

// lmRun is a causal-LM training setup on one fixed random batch: the shape
// of ../../bench/torch_gpt2_step.py (GPT-2 of 6 layers, width 384, 6
// heads, vocabulary 50257, dropout 0.1; 16 windows of 128 tokens; AdamW).
type lmRun struct {
	m   *Model
	opt *optim.Params
	rng *rand.Rand
	b   transformer.Batch
}

func newLMRun(tb testing.TB, layers, width, heads, vocab, batch, seqLen int) *lmRun {
	tb.Helper()
	c := DefaultConfig()
	c.NLayer, c.NEmbd, c.NHead, c.VocabSize, c.BOSTokenID, c.EOSTokenID = layers, width, heads, vocab, vocab-1, vocab-1
	c.NPositions = max(c.NPositions, seqLen)
	c.ResidPdrop, c.EmbdPdrop, c.AttnPdrop = 0.1, 0.1, 0.1
	m, err := New(c, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 6))
	seqs := make([][]int, batch)
	for i := range seqs {
		seqs[i] = make([]int, seqLen)
		for j := range seqs[i] {
			seqs[i][j] = rng.IntN(vocab)
		}
	}
	b, err := transformer.NewBatch(seqs, 0)
	if err != nil {
		tb.Fatal(err)
	}
	opt, err := optim.ForParams(m.Params(), optim.Config{LR: 1e-4, WeightDecay: 0.01})
	if err != nil {
		tb.Fatal(err)
	}
	return &lmRun{m: m, opt: opt, rng: rng, b: b}
}

func (r *lmRun) step(tb testing.TB) float32 {
	l, err := r.m.Loss(r.b, r.rng)
	if err != nil {
		tb.Fatal(err)
	}
	if err := tensor.Backward(l); err != nil {
		tb.Fatal(err)
	}
	r.opt.Step()
	v := tensor.Data(l)[0]
	tensor.Release(l)
	return v
}

// BenchmarkLMStep is one causal-LM training step (forward with dropout,
// token cross-entropy, backward, AdamW) of the shape above. Compare with
// `/usr/bin/python3 bench/torch_gpt2_step.py` on the same machine.
func BenchmarkLMStep(b *testing.B) {
	r := newLMRun(b, 6, 384, 6, 50257, 16, 128)
	r.step(b) // warm-up
	runtime.GC()
	b.ReportAllocs()
	var cpu tensortest.CPUTimer
	b.ResetTimer()
	cpu.Start()
	for i := 0; i < b.N; i++ {
		r.step(b)
	}
	b.StopTimer()
	cpu.Report(b)
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/step")
}
