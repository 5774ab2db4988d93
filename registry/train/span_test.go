package train

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/model/checkpoint"
	"repro/internal/model/lm"
	"repro/internal/model/tokenizer"
	"repro/internal/text/spancorrupt"
	"repro/registry"
)

// testCorrupt is a stand-in for the SentencePiece branch's span
// corruption, for this package's tests only: one span of about
// noiseDensity*len tokens at a random offset.
func testCorrupt(ids []int, density, _ float64, sentinels []int, rng *rand.Rand) ([]int, []int, error) {
	n := max(1, int(density*float64(len(ids))+0.5))
	n = min(n, len(ids))
	at := rng.IntN(len(ids) - n + 1)
	src := append(append(append([]int{}, ids[:at]...), sentinels[0]), ids[at+n:]...)
	tgt := append(append([]int{sentinels[0]}, ids[at:at+n]...), sentinels[1])
	return src, tgt, nil
}

func TestSpanCorruptionSeam(t *testing.T) {
	prev := SpanCorrupt
	SpanCorrupt = testCorrupt
	defer func() { SpanCorrupt = prev }()
	train, dev := lmTexts(t)
	set := tinyT5(map[string]cty.Value{"max_length": cty.NumberIntVal(24), "batch_size": cty.NumberIntVal(16)})
	delete(set, "max_source_length")
	delete(set, "max_target_length")
	out, _, err := stageRun{name: "train.span_corruption", set: set, seed: 2,
		inputs: map[string]registry.Artifact{"data": train, "dev": dev}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	h := readT5History[SpanHistory](t, out)
	if len(h.Evaluation) != 2 || h.DevPPL == nil || h.Evaluation[1].Metric <= h.Evaluation[0].Metric || h.Sequences != (h.Tokens+23)/24 {
		t.Fatalf("history %+v", h)
	}
	t.Logf("dev perplexity of the spans %.2f -> %.2f", -h.Evaluation[0].Metric, *h.DevPPL)
	if l, err := lm.Open(out); err != nil || l.Family != "t5" {
		t.Fatalf("the artifact does not open as a t5 language model: %v", err)
	}
}

// TestSpanCorruptionT5 pretrains with T5's own noise function
// (spancorrupt.IDs) over a SentencePiece vocabulary trained on the same
// sentences (the tokenizer input): the dev perplexity of the spans falls
// and the artifact is a T5 directory with spiece.model.
func TestSpanCorruptionT5(t *testing.T) {
	c := useData(t)
	ls, err := c.Wiki()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.TrainT5SentencePiece(ls[:600], 400, 20)
	if err != nil {
		t.Fatal(err)
	}
	tdir := t.TempDir()
	if err := checkpoint.SaveTokenizer(tdir, tok, 0); err != nil {
		t.Fatal(err)
	}
	set := tinyT5(map[string]cty.Value{"max_length": cty.NumberIntVal(24), "sentinels": cty.NumberIntVal(20)})
	delete(set, "max_source_length")
	delete(set, "max_target_length")
	out, _, err := stageRun{name: "train.span_corruption", set: set, seed: 2, inputs: map[string]registry.Artifact{
		"data": sentencesArtifact(t, ls[:600]), "dev": sentencesArtifact(t, ls[600:700]),
		"tokenizer": {Kind: registry.KindTokenizer, Dir: tdir}}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	h := readT5History[SpanHistory](t, out)
	if len(h.Evaluation) != 2 || h.Evaluation[1].Metric <= h.Evaluation[0].Metric {
		t.Fatalf("history %+v", h)
	}
	t.Logf("SentencePiece, T5 noise: dev perplexity of the spans %.2f -> %.2f", -h.Evaluation[0].Metric, *h.DevPPL)
	if _, err := os.Stat(filepath.Join(out, "spiece.model")); err != nil {
		t.Errorf("artifact lacks spiece.model: %v", err)
	}
	l, err := lm.Open(out)
	if err != nil || l.Family != "t5" {
		t.Fatalf("open: %v", err)
	}
}

// TestSpanCorruptionPacks: the stage corrupts packed sequences, not
// sentences one by one. Every sequence the noise function sees is
// max_length tokens (but the corpus's last), their count is the tokens
// over max_length, and the noise -- T5's own mask, three spans at 60
// tokens -- lies all over the sequence: corrupting each 20-odd-token
// Wikipedia sentence alone would put its single span at its end.
func TestSpanCorruptionPacks(t *testing.T) {
	const maxLen = 60
	var lengths []int
	var firstNoise []float64 // position of the first noise token / length
	prev := SpanCorrupt
	SpanCorrupt = func(ids []int, density, span float64, sentinels []int, rng *rand.Rand) ([]int, []int, error) {
		src, tgt, err := spancorrupt.IDs(ids, density, span, sentinels, rng)
		if err == nil {
			lengths = append(lengths, len(ids))
			// The source's plain tokens before its first sentinel.
			for i, id := range src {
				if id == sentinels[0] {
					firstNoise = append(firstNoise, float64(i)/float64(len(ids)))
					break
				}
			}
		}
		return src, tgt, err
	}
	defer func() { SpanCorrupt = prev }()
	train, _ := lmTexts(t)
	set := tinyT5(map[string]cty.Value{"max_length": cty.NumberIntVal(maxLen), "batch_size": cty.NumberIntVal(8),
		"max_steps": cty.NumberIntVal(12), "eval_every": cty.NumberIntVal(0)})
	delete(set, "max_source_length")
	delete(set, "max_target_length")
	out, _, err := stageRun{name: "train.span_corruption", set: set, seed: 3,
		inputs: map[string]registry.Artifact{"data": train}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	h := readT5History[SpanHistory](t, out)
	if want := (h.Tokens + maxLen - 1) / maxLen; h.Sequences != want || h.Sentences != 600 {
		t.Fatalf("%d sentences, %d tokens packed into %d sequences of %d, want %d", h.Sentences, h.Tokens, h.Sequences, maxLen, want)
	}
	last := h.Tokens - (h.Sequences-1)*maxLen
	short := 0
	for _, n := range lengths {
		switch n {
		case maxLen:
		case last:
			short++
		default:
			t.Fatalf("a sequence of %d tokens reached the noise function (packed: %d, or the last one's %d)", n, maxLen, last)
		}
	}
	if len(lengths) != 12*8 || short > 2 {
		t.Fatalf("%d corruptions (%d of the short last sequence), want 96", len(lengths), short)
	}
	// Where the noise starts: with one span per short sentence it would
	// always be in the last fifth; packed, it starts in the first half in
	// a good share of the sequences.
	early := 0
	for _, f := range firstNoise {
		if f < 0.5 {
			early++
		}
	}
	if len(firstNoise) != len(lengths) || early < len(firstNoise)/4 {
		t.Fatalf("the first noise span starts in the first half of %d of %d sequences", early, len(firstNoise))
	}
	t.Logf("%d sentences -> %d sequences of %d; first noise in the first half of %d/%d", h.Sentences, h.Sequences, maxLen, early, len(firstNoise))
}
