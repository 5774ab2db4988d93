package t5

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"repro/internal/generate"
	"repro/internal/tensor"
	"repro/internal/tensor/optim"
	"repro/internal/tensor/tensortest"
)

// smallConfig is t5-small's shape (v1.0: ReLU, tied output, vocabulary
// 32128), as bench/torch_t5.py builds it.
func smallConfig() Config {
	c := DefaultConfig()
	c.DropoutRate = 0.1
	return c
}

func randomSeqs(rng *rand.Rand, n, length, vocab int) [][]int {
	out := make([][]int, n)
	for i := range out {
		out[i] = make([]int, length)
		for j := range out[i] {
			out[i][j] = 2 + rng.IntN(vocab-2)
		}
	}
	return out
}

// trainRun is BenchmarkTrainStep's setup: T5-small, batch 32, sources of
// 64 and targets of 32 tokens, AdamW; step makes one update and returns the
// loss.
type trainRun struct {
	m    *Model
	step func(tb testing.TB) float32
}

func newTrainRun(b testing.TB) trainRun {
	const B, S, T = 32, 64, 32
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := New(smallConfig(), rng)
	if err != nil {
		b.Fatal(err)
	}
	src, tgt := randomSeqs(rng, B, S, m.Config.VocabSize), randomSeqs(rng, B, T, m.Config.VocabSize)
	ex := make([]Example, B)
	for i := range ex {
		ex[i] = Example{Source: src[i], Target: tgt[i]}
	}
	opt, err := optim.ForParams(m.Params(), optim.Config{LR: 1e-4, WeightDecay: 0.01})
	if err != nil {
		b.Fatal(err)
	}
	step := func(b testing.TB) float32 {
		l, _, err := m.Loss(ex, rng)
		if err != nil {
			b.Fatal(err)
		}
		if err := tensor.Backward(l); err != nil {
			b.Fatal(err)
		}
		opt.Step()
		v := tensor.Data(l)[0]
		tensor.Release(l) // the step's buffers serve the next step
		return v
	}
	return trainRun{m: m, step: step}
}

// BenchmarkTrainStep is one T5-small training step: batch 32, sources of
// 64 and targets of 32 tokens (no padding, as the torch script), forward,
// backward (dropout 0.1) and AdamW. Compare with
// `/usr/bin/python3 bench/torch_t5.py step` on the same machine.
func BenchmarkTrainStep(b *testing.B) {
	r := newTrainRun(b)
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
	b.Logf("GOMAXPROCS %d", runtime.GOMAXPROCS(0))
}

// BenchmarkGenerate samples 40 new tokens for 32 prompts of 24 tokens with
// T5-small (top-k 5, top-p 0.9, no EOS stop), through the engine and the
// encoder-decoder cache. Compare with `bench/torch_t5.py generate`.
func BenchmarkGenerate(b *testing.B) {
	const B, P, N = 32, 24, 40
	rng := rand.New(rand.NewPCG(3, 4))
	c := smallConfig()
	m, err := New(c, rng)
	if err != nil {
		b.Fatal(err)
	}
	prompts := randomSeqs(rng, B, P, c.VocabSize)
	opts := generate.Options{MaxNewTokens: N, EOS: -1, Seed: 1, Sampling: generate.Sampling{Temperature: 1, TopK: 5, TopP: 0.9}}
	run := func() {
		if _, err := generate.Generate(context.Background(), m, prompts, opts); err != nil {
			b.Fatal(err)
		}
	}
	run()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run()
	}
	b.ReportMetric(float64(B*N)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}
