package evaluate

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/model/t5"
	"repro/internal/model/t5/t5test"
	"repro/internal/rows"
	"repro/internal/text/spancorrupt"
	"repro/registry"
)

func spanEval(t *testing.T, p *SpanCorruptionParams, seed int64, model string, data registry.Artifact) (map[string]any, error) {
	t.Helper()
	r := registry.New()
	Register(r)
	st, _ := r.Lookup("evaluate.span_corruption")
	out := t.TempDir()
	env := &registry.Env{Params: p, Seed: seed, Outputs: map[string]string{"metrics": out},
		Inputs: map[string]registry.Artifact{"model": {Kind: registry.KindLanguageModel, Dir: model}, "data": data}}
	if err := st.Call(context.Background(), env); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(out, registry.FileMetrics))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m, nil
}

// tinyT5Dir saves a random 1+1-layer T5 with a WordPiece vocabulary
// and 10 sentinels learned on texts.
func tinyT5Dir(t *testing.T, texts []string) (string, *t5.Model, *t5.Text) {
	t.Helper()
	return t5test.Dir(t, t5test.Spec{Texts: texts, Vocab: 200, Sentinels: 10, Seed: [2]uint64{1, 2}})
}

// TestSpanCorruptionEval: the metrics are those of the packed sentences
// corrupted once from the seed, recomputed here from per-token
// log-probabilities; the target token count follows from T5's mask
// arithmetic alone; another seed corrupts differently.
func TestSpanCorruptionEval(t *testing.T) {
	texts := []string{"the cat sat on the mat and looked at the dog.", "a dog ate the bone in the garden.",
		"the dog sat on the cat, which did not like it at all.", "birds sing in the morning and sleep at night."}
	dir, m, text := tinyT5Dir(t, texts)
	var rs []rows.Sentence
	for _, s := range texts {
		rs = append(rs, rows.Sentence{Text: s})
	}
	data := artifact(t, registry.KindSentences, registry.FileSentences, rs)
	p := &SpanCorruptionParams{NoiseDensity: 0.15, MeanSpanLength: 3, MaxLength: 40, BatchSize: 2}
	got, err := spanEval(t, p, 7, dir, data)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: all pieces in one stream, cut every 40 (two noise spans
	// each: at 30 tokens or fewer the one span would always end the
	// sequence and every seed would corrupt alike).
	var stream []int
	for _, s := range texts {
		stream = append(stream, text.Pieces(s)...)
	}
	o := spancorrupt.T5
	rng := rand.New(rand.NewPCG(7, spanStream))
	_, spans := o.Counts(40)
	sentinels, _ := t5.Sentinels(text.Tok, spans)
	var nll float64
	tokens, seqs := 0, 0
	for lo := 0; lo < len(stream); lo += 40 {
		ids := stream[lo:min(lo+40, len(stream))]
		noise, sp := o.Counts(len(ids))
		src, tgt := spancorrupt.Corrupt(ids, o, rng, func(k int) int { return sentinels[k] })
		src, tgt = append(src, text.EOS), append(tgt, text.EOS)
		if len(tgt) != noise+sp+1 {
			t.Fatalf("target of %d tokens, want %d noise + %d sentinels + EOS", len(tgt), noise, sp)
		}
		lp, err := m.ScoreTokens([][]int{src}, [][]int{tgt})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range lp[0] {
			nll -= v
		}
		tokens += len(tgt)
		seqs++
	}
	want := math.Exp(nll / float64(tokens))
	if g := got["perplexity"].(float64); math.Abs(g-want) > 1e-4*want || int(got["tokens"].(float64)) != tokens ||
		int(got["sequences"].(float64)) != seqs || got["sentences"].(float64) != 4 || seqs != (len(stream)+39)/40 {
		t.Fatalf("metrics %v; want perplexity %v over %d target tokens of %d sequences", got, want, tokens, seqs)
	}
	other, err := spanEval(t, p, 8, dir, data)
	if err != nil {
		t.Fatal(err)
	}
	if other["perplexity"] == got["perplexity"] || other["tokens"] != got["tokens"] {
		t.Errorf("seed 8 %v vs seed 7 %v: another corruption of the same sequences", other, got)
	}

	// Bad input names its cause.
	if _, err := spanEval(t, p, 7, dir, artifact(t, registry.KindSentences, registry.FileSentences, []rows.Sentence{{Text: " "}})); err == nil ||
		!strings.Contains(err.Error(), "row 1: empty sentence") {
		t.Errorf("empty sentence: %v", err)
	}
	big := &SpanCorruptionParams{NoiseDensity: 0.15, MeanSpanLength: 1, MaxLength: 200, BatchSize: 2}
	if _, err := spanEval(t, big, 7, dir, data); err == nil || !strings.Contains(err.Error(), "<extra_id_10>") {
		t.Errorf("more spans than sentinels: %v", err)
	}
	if err := (&SpanCorruptionParams{NoiseDensity: 1, MeanSpanLength: 3, MaxLength: 1, BatchSize: 0}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "noise_density") || !strings.Contains(err.Error(), "max_length") || !strings.Contains(err.Error(), "batch_size") {
		t.Errorf("validate: %v", err)
	}
}
