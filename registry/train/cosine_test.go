package train

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/rows"
	"repro/registry"
)

func cosineRun(t *testing.T, ps []rows.GeneratedPair, dev []rows.STSPair) stageRun {
	t.Helper()
	in := map[string]registry.Artifact{"data": artifact(t, registry.KindPairs, registry.FilePairs, ps)}
	if dev != nil {
		in["dev"] = artifact(t, registry.KindSTS, registry.FilePairs, dev)
	}
	return stageRun{name: "train.cosine_mse", inputs: in, seed: 3, work: t.TempDir(), set: cosineSet()}
}

// cosineSet is a tiny from-scratch train.cosine_mse.
func cosineSet() map[string]cty.Value {
	return map[string]cty.Value{
		"from_scratch": cty.True, "layers": cty.NumberIntVal(1), "hidden": cty.NumberIntVal(16), "heads": cty.NumberIntVal(2),
		"intermediate": cty.NumberIntVal(32), "max_position": cty.NumberIntVal(32), "vocab": cty.StringVal("train"),
		"vocab_size": cty.NumberIntVal(120), "max_length": cty.NumberIntVal(16), "batch_size": cty.NumberIntVal(4),
		"max_steps": cty.NumberIntVal(6), "eval_every": cty.NumberIntVal(3), "learning_rate": cty.NumberFloatVal(1e-3)}
}

// cosinePairs are labelled pairs and validation pairs of a few sentences.
func cosinePairs() ([]rows.GeneratedPair, []rows.STSPair) {
	var ps []rows.GeneratedPair
	var dev []rows.STSPair
	words := []string{"a man plays a flute", "a woman walks down the street", "two dogs run in a park", "the cat sleeps"}
	for i, w := range words {
		other := words[(i+1)%len(words)]
		ps = append(ps, rows.GeneratedPair{Sentence1: w, Sentence2: w + " now", Label: 0.9, Origin: "generated"},
			rows.GeneratedPair{Sentence1: w, Sentence2: other, Label: 0.1, Origin: "generated"})
		dev = append(dev, rows.STSPair{Task: "sts-l", Subset: "validation", Sentence1: w, Sentence2: w + " today", Score: 0.9},
			rows.STSPair{Task: "sts-l", Subset: "validation", Sentence1: w, Sentence2: other, Score: 0.1})
	}
	return ps, dev
}

// TestCosineMSE trains the bi-encoder regression on generated pairs (with
// provenance keys) and plain pairs, selects on an STS validation split,
// and is deterministic; a label outside [-1, 1] is an error naming its row.
func TestCosineMSE(t *testing.T) {
	ps, dev := cosinePairs()
	a, _, err := cosineRun(t, ps, dev).run(t)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := cosineRun(t, ps, dev).run(t)
	if err != nil {
		t.Fatal(err)
	}
	if dirDigest(t, a) != dirDigest(t, b) {
		t.Error("the same seed trained different models")
	}
	ps[3].Label = 2
	if _, _, err := cosineRun(t, ps, nil).run(t); err == nil || !strings.Contains(err.Error(), "row 4: label 2 outside [-1, 1]") {
		t.Errorf("bad label: %v", err)
	}
}

// lrLog records the learning rate of every logged update.
type lrLog struct {
	mu sync.Mutex
	lr map[int]float64 // step -> lr
}

func (l *lrLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *lrLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *lrLog) WithGroup(string) slog.Handler            { return l }
func (l *lrLog) Handle(_ context.Context, r slog.Record) error {
	step, lr, ok := -1, 0.0, false
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "step":
			step = int(a.Value.Int64())
		case "lr":
			lr, ok = a.Value.Float64(), true
		}
		return true
	})
	if r.Message == "train" && ok {
		l.mu.Lock()
		l.lr[step] = lr
		l.mu.Unlock()
	}
	return nil
}

// TestCosineWarmupRatio: warmup_ratio is the warm-up as a share of the
// updates the run makes, counted from its data and rounded up as
// sentence-transformers' ceil(10%) is: the learning rate climbs for
// ceil(0.1 x updates) updates and peaks at the next, for two data sizes
// the ratio alone sets apart; warmup and warmup_ratio together are refused.
func TestCosineWarmupRatio(t *testing.T) {
	ps, dev := cosinePairs() // 8 pairs: 2 updates of 4 an epoch
	for _, c := range []struct{ epochs, updates, warmup int }{{10, 20, 2}, {13, 26, 3}} {
		r := cosineRun(t, ps, dev)
		r.set["max_steps"] = cty.NumberIntVal(0)
		r.set["epochs"] = cty.NumberIntVal(int64(c.epochs))
		r.set["eval_every"] = cty.NumberIntVal(1) // an evaluation, so a log line, every update
		r.set["warmup_ratio"] = cty.NumberFloatVal(0.1)
		log := &lrLog{lr: map[int]float64{}}
		r.log = log
		if _, _, err := r.run(t); err != nil {
			t.Fatal(err)
		}
		if len(log.lr) != c.updates {
			t.Fatalf("%d epochs: %d updates logged, want %d: %v", c.epochs, len(log.lr), c.updates, log.lr)
		}
		const peak = 1e-3
		for step := 1; step <= c.updates; step++ {
			var want float64 // HF's linear schedule: update s (from 1) at lr x min((s-1)/w, (n-s+1)/(n-w))
			if s := step - 1; s < c.warmup {
				want = peak * float64(s) / float64(c.warmup)
			} else {
				want = peak * float64(c.updates-s) / float64(c.updates-c.warmup)
			}
			if got := log.lr[step]; math.Abs(got-want) > 1e-12 {
				t.Errorf("%d updates: update %d at lr %g, want %g (warm-up %d updates)", c.updates, step, got, want, c.warmup)
			}
		}
	}
	r := cosineRun(t, ps, dev)
	r.set["warmup"] = cty.NumberIntVal(3)
	r.set["warmup_ratio"] = cty.NumberFloatVal(0.1)
	if _, _, err := r.run(t); err == nil || !strings.Contains(err.Error(), "warmup_ratio") {
		t.Errorf("warmup and warmup_ratio together: %v", err)
	}
}
