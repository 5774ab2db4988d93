package transformer

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"

	"repro/internal/tensor"
	"repro/internal/tensor/backend"
	"repro/internal/tensor/loss"
	"repro/internal/tensor/optim"
	"repro/internal/tensor/tensortest"
)

// simcseRun trains an encoder for steps SimCSE-unsup steps (mean pooling,
// two dropout views, temperature 0.05, AdamW) on a fixed random batch and
// returns the losses and the final weights.
type simcseRun struct {
	enc  *Encoder
	opt  *optim.Params
	rng  *rand.Rand
	b    Batch
	temp float32
}

func newSimCSERun(tb testing.TB, c Config, batch, seqLen int, seed uint64) *simcseRun {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	enc, err := NewEncoder(c, rng)
	if err != nil {
		tb.Fatal(err)
	}
	seqs := make([][]int, batch)
	for i := range seqs {
		n := seqLen - rng.IntN(seqLen/4+1) // some padding
		if i == 0 {
			n = seqLen
		}
		seqs[i] = make([]int, n)
		for j := range seqs[i] {
			seqs[i][j] = 1 + rng.IntN(c.VocabSize-1)
		}
	}
	b, err := NewBatch(seqs, c.PadID)
	if err != nil {
		tb.Fatal(err)
	}
	opt, err := optim.ForParams(Params(enc.NamedParams()), optim.Config{LR: 1e-4, WeightDecay: 0.01})
	if err != nil {
		tb.Fatal(err)
	}
	return &simcseRun{enc: enc, opt: opt, rng: rng, b: b, temp: 0.05}
}

func (r *simcseRun) step(tb testing.TB) float32 {
	view := func() *Output {
		o, err := r.enc.Forward(r.b, r.rng)
		if err != nil {
			tb.Fatal(err)
		}
		return o
	}
	o1, o2 := view(), view()
	z1, err := r.enc.Pool(o1, PoolMean)
	if err != nil {
		tb.Fatal(err)
	}
	z2, err := r.enc.Pool(o2, PoolMean)
	if err != nil {
		tb.Fatal(err)
	}
	l, err := loss.SimCSEUnsup(z1, z2, r.temp)
	if err != nil {
		tb.Fatal(err)
	}
	if err := tensor.Backward(l); err != nil {
		tb.Fatal(err)
	}
	r.opt.Step()
	v := tensor.Data(l)[0]
	tensor.Release(l) // the step's buffers serve the next step
	return v
}

// TestDeterministicTraining trains the small encoder twice with the same
// seed, parallelism on, and requires bit-identical losses and weights; it
// also requires the loss to move (the run really trains).
func TestDeterministicTraining(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Log("GOMAXPROCS < 2: parallel paths are not exercised")
	}
	c := tinyConfig()
	c.Pooler = false
	train := func() ([]float32, [][]float32) {
		r := newSimCSERun(t, c, 8, 12, 42)
		var losses []float32
		for i := 0; i < 4; i++ {
			losses = append(losses, r.step(t))
		}
		var w [][]float32
		for _, np := range r.enc.NamedParams() {
			w = append(w, append([]float32(nil), tensor.Data(np.Param)...))
		}
		return losses, w
	}
	l1, w1 := train()
	l2, w2 := train()
	for i := range l1 {
		if math.Float32bits(l1[i]) != math.Float32bits(l2[i]) {
			t.Errorf("step %d: loss %v then %v", i, l1[i], l2[i])
		}
		if math.IsNaN(float64(l1[i])) {
			t.Fatalf("step %d: loss is NaN", i)
		}
	}
	for i := range w1 {
		for j := range w1[i] {
			if math.Float32bits(w1[i][j]) != math.Float32bits(w2[i][j]) {
				t.Fatalf("parameter %d element %d differs: %v vs %v", i, j, w1[i][j], w2[i][j])
			}
		}
	}
	if l1[0] == l1[len(l1)-1] {
		t.Errorf("loss did not change over training: %v", l1)
	}
}

// BenchmarkSimCSEStep is the reference training step: encoder with 4
// layers, width 256, 4 heads, FFN 1024, vocabulary 8192; 64 sequences of
// 32 tokens; mean pooling; SimCSE-unsup loss over two dropout views
// (temperature 0.05); AdamW. FLOPs are counted as
// /work/shared/bench/torch_encoder_step.py counts them (matrix products
// only, x3 for forward + backward, x2 views).
//
// REPRO_BACKEND selects the backend (e.g. openblas in a -tags openblas build).
func BenchmarkSimCSEStep(b *testing.B) {
	if name := os.Getenv("REPRO_BACKEND"); name != "" {
		be, err := backend.ByName(name)
		if err != nil {
			b.Fatal(err)
		}
		prev := backend.Current()
		backend.Use(be)
		defer backend.Use(prev)
	}
	const L, D, H, FF, V, B, T = 4, 256, 4, 1024, 8192, 64, 32
	c := Config{VocabSize: V, Hidden: D, Layers: L, Heads: H, Intermediate: FF, MaxPosition: T,
		HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-5}
	r := newSimCSERun(b, c, B, T, 1)
	for i := range r.b.Lens { // no padding: the torch script has none
		r.b.Lens[i] = T
	}
	r.step(b) // warm-up
	runtime.GC()
	b.ReportAllocs() // bytes per step: steady state, buffers reused
	var peak uint64
	done := make(chan struct{})
	go func() { // sample the heap: MemStats has no peak of its own
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	}()
	var cpu tensortest.CPUTimer
	b.ResetTimer()
	cpu.Start()
	for i := 0; i < b.N; i++ {
		r.step(b)
	}
	b.StopTimer()
	cpu.Report(b)
	close(done)
	flop := 3.0 * L * (2*B*T*D*D*4 + 2*B*T*D*4*D*2 + 4*B*H*T*T*(D/H))
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/step")
	b.ReportMetric(2*flop/sec/1e9, "GFLOP/s")
	b.ReportMetric(float64(peak)/(1<<20), "peakMiB")
	b.Logf("backend %s, GOMAXPROCS %d", backend.Current().Name(), runtime.GOMAXPROCS(0))
}
