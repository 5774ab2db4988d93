package gpt2

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"time"

	"repro/internal/generate"
	"repro/internal/tensor/backend"
)

// plain hides the Scorer fast path, so Score takes the Session path.
type plain struct{ *Model }

func (p plain) Start(prompts [][]int, capacity int) (generate.Session, error) {
	return p.Model.Start(prompts, capacity)
}

// TestScorePaths: scoring through one causal pass (Scorer) and through the
// Session, token by token, agree.
func TestScorePaths(t *testing.T) {
	g := loadGolden(t)[1]
	m, _, err := Load(filepath.Join("testdata", g.Dir))
	if err != nil {
		t.Fatal(err)
	}
	prompts := [][]int{g.IDs[0][:2], g.IDs[1][:5], g.IDs[2][:1]}
	conts := [][]int{g.IDs[0][2:], g.IDs[1][5:], g.IDs[2][1:]}
	fast, err := generate.Score(context.Background(), m, prompts, conts, 2)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := generate.Score(context.Background(), plain{m}, prompts, conts, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range fast {
		for j := range fast[i] {
			if math.Abs(fast[i][j]-slow[i][j]) > 1e-4 {
				t.Errorf("pair %d token %d: %v in one pass, %v incrementally", i, j, fast[i][j], slow[i][j])
			}
		}
	}
}

// TestGenerateReproducible: sampling from GPT-2 gives the same tokens, bit
// for bit, run after run and whatever the batch size.
func TestGenerateReproducible(t *testing.T) {
	g := loadGolden(t)[0]
	m, _, err := Load(filepath.Join("testdata", g.Dir))
	if err != nil {
		t.Fatal(err)
	}
	prompts := [][]int{g.IDs[0][:3], g.IDs[1][:6], g.IDs[2]}
	o := generate.Options{Sampling: generate.Sampling{Temperature: 1, TopK: 5, TopP: 0.9}, MaxNewTokens: 8, Samples: 2, EOS: -1, Seed: 9}
	a, err := generate.Generate(context.Background(), m, prompts, o)
	if err != nil {
		t.Fatal(err)
	}
	o.BatchSize = 2
	b, err := generate.Generate(context.Background(), m, prompts, o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("batch size changed the samples:\n%v\n%v", a, b)
	}
	for _, out := range a {
		if len(out.Tokens) != 8 && out.Stop != generate.StopContext {
			t.Errorf("%+v", out)
		}
	}
}

// BenchmarkGenerate is the reference generation run of
// ../shared/bench/torch_gpt2_generate.py: a GPT-2 of 6 layers, width 384,
// 6 heads and GPT-2's vocabulary of 50257 with random weights; 32 prompts
// of 24 tokens, 40 new tokens each, top-k 5 then top-p 0.9, KV cache.
// It reports generated tokens per second (32 x 40 / time per run) and the
// peak heap in use. REPRO_BENCH_GEN="layers width heads vocab batch prompt
// new" changes the shape, as the script's arguments do.
func BenchmarkGenerate(b *testing.B) {
	shape := []int{6, 384, 6, 50257, 32, 24, 40}
	if s := os.Getenv("REPRO_BENCH_GEN"); s != "" {
		var err error
		for i, f := range splitFields(s) {
			if shape[i], err = strconv.Atoi(f); err != nil {
				b.Fatal(err)
			}
		}
	}
	L, D, H, V, B, P, N := shape[0], shape[1], shape[2], shape[3], shape[4], shape[5], shape[6]
	c := DefaultConfig()
	c.NLayer, c.NEmbd, c.NHead, c.VocabSize, c.BOSTokenID, c.EOSTokenID = L, D, H, V, V-1, V-1
	m, err := New(c, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	prompts := make([][]int, B)
	for i := range prompts {
		prompts[i] = make([]int, P)
		for j := range prompts[i] {
			prompts[i][j] = rng.IntN(V)
		}
	}
	o := generate.Options{Sampling: generate.Sampling{Temperature: 1, TopK: 5, TopP: 0.9}, MaxNewTokens: N, EOS: -1, BatchSize: B, Seed: 1}
	run := func() {
		outs, err := generate.Generate(context.Background(), m, prompts, o)
		if err != nil {
			b.Fatal(err)
		}
		for _, out := range outs {
			if len(out.Tokens) != N {
				b.Fatalf("a sequence stopped after %d tokens (%s)", len(out.Tokens), out.Stop)
			}
		}
	}
	run() // warm-up, as the script's
	var peak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // sample the heap: MemStats has no peak of its own
		defer close(sampled)
		var ms runtime.MemStats
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run()
	}
	b.StopTimer()
	close(stop)
	<-sampled
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/run")
	b.ReportMetric(float64(B*N)/sec, "tokens/s")
	b.ReportMetric(float64(peak)/(1<<20), "peakMiB")
	b.Logf("backend %s, GOMAXPROCS %d", backend.Current().Name(), runtime.GOMAXPROCS(0))
}

func splitFields(s string) []string {
	var out []string
	cur := ""
	for _, r := range s + " " {
		if r == ' ' || r == ',' {
			if cur != "" {
				out = append(out, cur)
			}
			cur = ""
			continue
		}
		cur += string(r)
	}
	return out
}
