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

	"repro/internal/model/gpt2"
	"repro/internal/model/tokenizer"
	"repro/internal/rows"
	"repro/registry"
)

func perplexity(t *testing.T, p *PerplexityParams, model string, data registry.Artifact) (map[string]any, error) {
	t.Helper()
	r := registry.New()
	Register(r)
	st, _ := r.Lookup("evaluate.perplexity")
	out := t.TempDir()
	env := &registry.Env{Params: p, Outputs: map[string]string{"metrics": out},
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

// TestPerplexity: the stage's number is exp of the mean NLL of the framed
// sentences; windows shorter than a sentence change it only a little (each
// token is still predicted once, with less context).
func TestPerplexity(t *testing.T) {
	texts := []string{"the cat sat on the mat.", "a dog ate the bone.", "the dog sat on the cat."}
	tok, err := tokenizer.TrainBPE(texts, tokenizer.BPETrainOptions{VocabSize: 290, Special: tokenizer.GPT2Specials})
	if err != nil {
		t.Fatal(err)
	}
	eos, _ := tok.ID(gpt2.EndOfText)
	c := gpt2.DefaultConfig()
	c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead, c.BOSTokenID, c.EOSTokenID = tok.Size(), 32, 16, 1, 2, eos, eos
	m, _ := gpt2.New(c, rand.New(rand.NewPCG(5, 5)))
	dir := t.TempDir()
	if err := gpt2.Save(dir, m, tok, nil); err != nil {
		t.Fatal(err)
	}
	data := artifact(t, registry.KindSentences, registry.FileSentences, []rows.Sentence{{Text: texts[0]}, {Text: texts[2]}})
	got, err := perplexity(t, &PerplexityParams{BatchSize: 1}, dir, data)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	n := 0
	for _, s := range []string{texts[0], texts[2]} {
		seq := append(append([]int{eos}, tok.IDs(s)...), eos)
		lp, err := m.ScoreTokens([][]int{seq[:1]}, [][]int{seq[1:]})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range lp[0] {
			want -= v
			n++
		}
	}
	want = math.Exp(want / float64(n))
	if p := got["perplexity"].(float64); math.Abs(p-want) > 1e-9*want || int(got["tokens"].(float64)) != n || got["sentences"].(float64) != 2 {
		t.Errorf("metrics %v, want perplexity %v over %d tokens", got, want, n)
	}
	short, err := perplexity(t, &PerplexityParams{BatchSize: 4, MaxLength: 4}, dir, data)
	if err != nil {
		t.Fatal(err)
	}
	if short["tokens"] != got["tokens"] || short["sequences"].(float64) <= got["sequences"].(float64) {
		t.Errorf("windows of 4: %v", short)
	}

	empty := artifact[rows.Sentence](t, registry.KindSentences, registry.FileSentences, nil)
	if _, err := perplexity(t, &PerplexityParams{BatchSize: 4}, dir, empty); err == nil || !strings.Contains(err.Error(), "perplexity of an empty corpus") {
		t.Errorf("empty corpus: %v", err)
	}
	if _, err := perplexity(t, &PerplexityParams{BatchSize: 0}, dir, data); err == nil || !strings.Contains(err.Error(), "batch_size: 0") {
		t.Errorf("batch 0: %v", err)
	}
	if _, err := perplexity(t, &PerplexityParams{BatchSize: 4}, t.TempDir(), data); err == nil || !strings.Contains(err.Error(), "model:") {
		t.Errorf("no model: %v", err)
	}
}

// TestPerplexityFramings: each framing scores the tokens it says, against
// the model's own token scores; the default is today's framing and keeps
// the stage's encoded parameters (so its cache keys) as they were.
func TestPerplexityFramings(t *testing.T) {
	texts := []string{"the cat sat on the mat.", "a dog ate the bone.", "the dog sat on the cat."}
	tok, err := tokenizer.TrainBPE(texts, tokenizer.BPETrainOptions{VocabSize: 290, Special: tokenizer.GPT2Specials})
	if err != nil {
		t.Fatal(err)
	}
	eos, _ := tok.ID(gpt2.EndOfText)
	c := gpt2.DefaultConfig()
	c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead, c.BOSTokenID, c.EOSTokenID = tok.Size(), 32, 16, 1, 2, eos, eos
	m, _ := gpt2.New(c, rand.New(rand.NewPCG(5, 5)))
	dir := t.TempDir()
	if err := gpt2.Save(dir, m, tok, nil); err != nil {
		t.Fatal(err)
	}
	data := artifact(t, registry.KindSentences, registry.FileSentences, []rows.Sentence{{Text: texts[0]}, {Text: texts[1]}})
	frame := map[string]func(ids []int) []int{
		"eos_s_eos": func(ids []int) []int { return append(append([]int{eos}, ids...), eos) },
		"eos_s":     func(ids []int) []int { return append([]int{eos}, ids...) },
		"s":         func(ids []int) []int { return ids },
	}
	results := map[string]map[string]any{}
	for _, framing := range []string{"", "eos_s_eos", "eos_s", "s"} {
		got, err := perplexity(t, &PerplexityParams{BatchSize: 2, Framing: framing}, dir, data)
		if err != nil {
			t.Fatal(framing, err)
		}
		results[framing] = got
		if framing == "" {
			continue
		}
		var nll float64
		n := 0
		for _, s := range texts[:2] {
			seq := frame[framing](tok.IDs(s))
			lp, err := m.ScoreTokens([][]int{seq[:1]}, [][]int{seq[1:]})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range lp[0] {
				nll -= v
				n++
			}
		}
		want := math.Exp(nll / float64(n))
		if p := got["perplexity"].(float64); math.Abs(p-want) > 1e-9*want || int(got["tokens"].(float64)) != n {
			t.Errorf("%s: metrics %v, want perplexity %v over %d tokens", framing, got, want, n)
		}
	}
	if results[""]["perplexity"] != results["eos_s_eos"]["perplexity"] {
		t.Errorf("the default framing scores %v, eos_s_eos %v", results[""], results["eos_s_eos"])
	}
	if d, s := results["eos_s_eos"]["tokens"].(float64), results["s"]["tokens"].(float64); d-s != 4 {
		t.Errorf("eos_s_eos scores %v tokens, s %v: want 2 fewer per sentence", d, s)
	}
	// The default stays out of the encoded parameters (the key of every
	// cached evaluate.perplexity); another framing gets a key of its own.
	r := registry.New()
	Register(r)
	st, _ := r.Lookup("evaluate.perplexity")
	def, err := st.EncodeParams(&PerplexityParams{BatchSize: 16, Framing: "eos_s_eos"})
	if err != nil {
		t.Fatal(err)
	}
	if def.Type().HasAttribute("framing") {
		t.Errorf("the default framing is in the encoded parameters: %#v", def)
	}
	other, _ := st.EncodeParams(&PerplexityParams{BatchSize: 16, Framing: "eos_s"})
	if !other.Type().HasAttribute("framing") {
		t.Errorf("framing eos_s is not in the encoded parameters")
	}
	if _, err := perplexity(t, &PerplexityParams{BatchSize: 2, Framing: "bos"}, dir, data); err == nil || !strings.Contains(err.Error(), "framing") {
		t.Errorf("unknown framing: %v", err)
	}
}
