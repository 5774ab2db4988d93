package generate

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/model/gpt2"
	"repro/internal/model/tokenizer"
	"repro/internal/rows"
	"repro/registry"
)

// runType runs stage type name with its defaults overridden by set; the
// outputs go to fresh directories, returned by port name.
func runType(t *testing.T, name string, set map[string]cty.Value, inputs map[string]registry.Artifact, seed int64) (map[string]string, error) {
	t.Helper()
	r := registry.New()
	Register(r)
	RegisterDINO(r)
	st, _ := r.Lookup(name)
	ps, _ := st.ParamSchema()
	attrs := map[string]cty.Value{}
	for _, p := range ps {
		attrs[p.Name] = p.Default
	}
	for k, v := range set {
		if _, ok := attrs[k]; !ok {
			t.Fatalf("no parameter %q", k)
		}
		attrs[k] = v
	}
	params, err := st.DecodeParams(cty.ObjectVal(attrs))
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{}
	for _, o := range st.Outputs {
		outs[o.Name] = t.TempDir()
	}
	env := &registry.Env{Params: params, Inputs: inputs, Outputs: outs, Seed: seed,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return outs, st.Call(context.Background(), env)
}

// TestDINOPairs runs generate.dino_pairs on the tiny random GPT-2 with a
// common letter as the "quote" (a random model never closes a real one):
// every kept row is a labelled pair with its provenance, at most two per
// (x1, y), and stats.json accounts for every draw.
func TestDINOPairs(t *testing.T) {
	model := tinyModel(t, 128)
	data := sentences(t, "the cat sat", "a dog ate", "words end here")
	set := map[string]cty.Value{"quote": cty.StringVal("e"), "max_new_tokens": cty.NumberIntVal(10), "max_tries": cty.NumberIntVal(3)}
	outs, err := runType(t, "generate.dino_pairs", set, map[string]registry.Artifact{"model": model, "data": data}, 5)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := rows.Read[rows.GeneratedPair](filepath.Join(outs["pairs"], registry.FilePairs))
	if err != nil {
		t.Fatal(err)
	}
	per := map[[2]float64]int{}
	for i, p := range ps {
		if p.Origin != "generated" || p.Seed != 5 || p.Label != p.Instruction || strings.Contains(p.Sentence2, "e") ||
			p.Sentence2 == "" || p.Sentence1 != []string{"the cat sat", "a dog ate", "words end here"}[p.X1] {
			t.Errorf("row %d: %+v", i, p)
		}
		per[[2]float64{float64(p.X1), p.Label}]++
	}
	for k, n := range per {
		if n > 2 {
			t.Errorf("(x1 %v, y %v): %d pairs, at most 2", k[0], k[1], n)
		}
	}
	var st struct {
		Pairs  int
		Labels []struct {
			Label                                       float64
			Drawn, Kept, NoQuote, Empty, Surplus, Short int
		}
	}
	raw, _ := os.ReadFile(filepath.Join(outs["pairs"], registry.FileStats))
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, l := range st.Labels {
		kept += l.Kept
		if l.Drawn%2 != 0 || l.Drawn < 6 {
			t.Errorf("label %v: %d drawn", l.Label, l.Drawn)
		}
	}
	if st.Pairs != len(ps) || kept != len(ps) || len(st.Labels) != 3 {
		t.Errorf("stats %s for %d rows", raw, len(ps))
	}
	// The same seed gives the same rows.
	again, err := runType(t, "generate.dino_pairs", set, map[string]registry.Artifact{"model": model, "data": data}, 5)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(outs["pairs"], registry.FilePairs))
	b, _ := os.ReadFile(filepath.Join(again["pairs"], registry.FilePairs))
	if string(a) != string(b) {
		t.Error("the same seed gave different rows")
	}
}

// quotelessModel is tinyModel with a tokenizer that cannot write '"': its
// byte symbol is renamed in vocab.json.
func quotelessModel(t *testing.T) registry.Artifact {
	t.Helper()
	tok, err := tokenizer.TrainBPE([]string{"the cat sat on the mat.", "a dog ate the bone."}, tokenizer.BPETrainOptions{VocabSize: 280, Special: tokenizer.GPT2Specials})
	if err != nil {
		t.Fatal(err)
	}
	eos, _ := tok.ID(gpt2.EndOfText)
	c := gpt2.DefaultConfig()
	c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead, c.BOSTokenID, c.EOSTokenID = tok.Size(), 64, 16, 1, 2, eos, eos
	m, err := gpt2.New(c, rand.New(rand.NewPCG(4, 4)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := gpt2.Save(dir, m, tok, map[string]any{"bos": true}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "vocab.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var vocab map[string]int
	if err := json.Unmarshal(raw, &vocab); err != nil {
		t.Fatal(err)
	}
	id, ok := vocab[`"`]
	if !ok {
		t.Fatal(`no '"' symbol to remove`)
	}
	delete(vocab, `"`)
	vocab["<|no-quote|>"] = id
	raw, _ = json.Marshal(vocab)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Kind: registry.KindLanguageModel, Dir: dir, Digest: "test"}
}

// TestDINOBadInput: an empty X1, no generator, a tokenizer without the
// quote character -- each a clear message, before any generation.
func TestDINOBadInput(t *testing.T) {
	model := tinyModel(t, 64)
	for _, tc := range []struct {
		name   string
		stage  string
		inputs map[string]registry.Artifact
		want   string
	}{
		{"empty X1", "generate.dino_pairs", map[string]registry.Artifact{"model": model, "data": sentences(t)}, "no input sentences (X1 is empty)"},
		{"no generator", "generate.dino_pairs", map[string]registry.Artifact{"data": sentences(t, "a cat")},
			"no generator: set hf_checkpoint to a local Hugging Face GPT-2 directory (experiments/dino.hcl takes GPT2-XL as -var gpt2=DIR) or connect a model"},
		{"no quote", "generate.dino_pairs", map[string]registry.Artifact{"model": quotelessModel(t), "data": sentences(t, "a cat")},
			`model: the generator's tokenizer cannot write the quotation mark "\"" (it encodes to [], which decodes to ""): the closing quote that ends every generated sentence could never be produced`},
		{"x1 no quote", "generate.dino_x1", map[string]registry.Artifact{"model": quotelessModel(t)}, `cannot write the quotation mark "\""`},
	} {
		_, err := runType(t, tc.stage, nil, tc.inputs, 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
