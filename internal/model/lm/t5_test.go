package lm

import (
	"context"
	"math"
	"strings"
	"testing"

	gen "repro/internal/generate"
	"repro/internal/model/t5/t5test"
)

// TestOpenT5 opens a T5 language-model directory: prompts are framed as
// encoder inputs (pieces then EOS), generation runs through the engine,
// and option scoring agrees with per-token scoring.
func TestOpenT5(t *testing.T) {
	texts := []string{"the cat sat on the mat", "a dog ran in the park", "true or false", "the sun is hot", "it is true"}
	var corpus []string
	for i := 0; i < 20; i++ {
		corpus = append(corpus, texts...)
	}
	dir, _, _ := t5test.Dir(t, t5test.Spec{Texts: corpus, Vocab: 120, Sentinels: 3, Seed: [2]uint64{1, 2}})
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Family != "t5" || l.T5 == nil || l.BOS {
		t.Fatalf("opened %+v", l)
	}
	p := l.Prompt("the cat sat", true)
	if len(p) != 4 || p[3] != l.EOS || l.Decode(p) != "the cat sat" {
		t.Errorf("prompt ids %v (%q)", p, l.Decode(p))
	}
	outs, err := gen.Generate(context.Background(), l.Model, [][]int{p}, gen.Options{MaxNewTokens: 4, EOS: l.EOS, Samples: 2,
		Seed: 1, Sampling: gen.Sampling{Temperature: 1, TopP: 1}})
	if err != nil || len(outs) != 2 {
		t.Fatalf("generate: %v %v", outs, err)
	}
	sc, err := l.ScoreOptions(context.Background(), []string{"the sun is hot", "it is"}, []string{"true", "false"}, false, 3)
	if err != nil {
		t.Fatal(err)
	}
	tr := l.Encode("true")
	want, err := gen.Score(context.Background(), l.Model, [][]int{l.Prompt("it is", false)}, [][]int{tr}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sc[1][0]-gen.Sum(want[0])) > 1e-4 {
		t.Errorf("ScoreOptions %v, per-token %v", sc[1][0], gen.Sum(want[0]))
	}
	if !(sc[0][0] < 0 && sc[0][1] < 0) {
		t.Errorf("log-probabilities %v", sc)
	}
	if _, err := l.ScoreOptions(context.Background(), []string{"x"}, nil, false, 1); err == nil || !strings.Contains(err.Error(), "no options") {
		t.Errorf("no options: %v", err)
	}
}
