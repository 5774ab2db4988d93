package train

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/model/checkpoint"
	"repro/internal/model/gpt2"
	"repro/internal/model/lm"
	"repro/internal/model/safetensors"
	"repro/internal/rows"
	"repro/registry"
)

// tinyLM is a from-scratch GPT-2 that trains in a second or two.
func tinyLM(extra map[string]cty.Value) map[string]cty.Value {
	s := map[string]cty.Value{
		"from_scratch": cty.True, "layers": cty.NumberIntVal(1), "hidden": cty.NumberIntVal(32), "heads": cty.NumberIntVal(2),
		"context": cty.NumberIntVal(32), "vocab": cty.StringVal("train"), "vocab_size": cty.NumberIntVal(400),
		"max_length": cty.NumberIntVal(24), "batch_size": cty.NumberIntVal(16), "learning_rate": cty.NumberFloatVal(3e-3),
		"max_steps": cty.NumberIntVal(30), "eval_every": cty.NumberIntVal(15), "dropout": cty.NumberFloatVal(0),
	}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// lmTexts are real sentences: the first 600 Wikipedia lines for training
// and the next 100 for dev.
func lmTexts(t *testing.T) (train, dev registry.Artifact) {
	t.Helper()
	c := useData(t)
	ls, err := c.Wiki()
	if err != nil {
		t.Fatal(err)
	}
	return sentencesArtifact(t, ls[:600]), sentencesArtifact(t, ls[600:700])
}

func readLMHistory(t *testing.T, dir string) LMHistory {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileHistory))
	if err != nil {
		t.Fatal(err)
	}
	var h LMHistory
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestCausalLM trains a tiny GPT-2 from scratch: the dev perplexity falls,
// the artifact is a Hugging Face GPT-2 directory that opens as a language
// model, and training continues from it as init.
func TestCausalLM(t *testing.T) {
	train, dev := lmTexts(t)
	out, _, err := stageRun{name: "train.causal_lm", set: tinyLM(nil), seed: 3,
		inputs: map[string]registry.Artifact{"data": train, "dev": dev}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	h := readLMHistory(t, out)
	if len(h.Evaluation) != 2 || h.DevPPL == nil || h.Evaluation[1].Perplexity >= h.Evaluation[0].Perplexity || *h.DevPPL > 400 {
		t.Fatalf("history %+v", h)
	}
	if h.Source != "from_scratch" || h.Texts != 600 || h.Steps != 30 {
		t.Errorf("history %+v", h)
	}
	m, err := lm.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if !m.BOS || m.GPT2.Config.NLayer != 1 || m.GPT2.Config.VocabSize != 400 || m.GPT2.Config.ResidPdrop != 0.1 {
		t.Errorf("opened %+v %+v", m, m.GPT2.Config)
	}
	for _, f := range []string{"config.json", "model.safetensors", "vocab.json", "merges.txt", "tokenizer_config.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("artifact lacks %s", f)
		}
	}
	// Continue from it: the model's shape comes from init, not the
	// architecture parameters.
	init := registry.Artifact{Kind: registry.KindLanguageModel, Dir: out, Digest: "x"}
	out2, _, err := stageRun{name: "train.causal_lm", set: tinyLM(map[string]cty.Value{"layers": cty.NumberIntVal(5), "max_steps": cty.NumberIntVal(15)}), seed: 3,
		inputs: map[string]registry.Artifact{"data": train, "dev": dev, "init": init}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	h2 := readLMHistory(t, out2)
	if h2.Source != "init" || *h2.DevPPL >= *h.DevPPL {
		t.Errorf("continued training: %+v (first run's best dev perplexity %v)", h2, *h.DevPPL)
	}
}

// TestCausalLMDeterministic: the same seed gives byte-identical artifacts,
// and a run interrupted and resumed from its work directory ends identical.
func TestCausalLMDeterministic(t *testing.T) {
	train, dev := lmTexts(t)
	in := map[string]registry.Artifact{"data": train, "dev": dev}
	set := tinyLM(map[string]cty.Value{"max_steps": cty.NumberIntVal(8), "eval_every": cty.NumberIntVal(4), "dropout": cty.NumberFloatVal(0.1)})
	run := func(work string) string {
		out, _, err := stageRun{name: "train.causal_lm", set: set, seed: 5, work: work, inputs: in}.run(t)
		if err != nil {
			t.Fatal(err)
		}
		return dirDigest(t, out)
	}
	a := run("")
	if b := run(""); a != b {
		t.Fatal("same seed, different artifacts")
	}
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	if err := (stageRun{name: "train.causal_lm", set: set, seed: 5, work: work, inputs: in}).runCtx(t, ctx, func(done int) {
		if done == 5 {
			cancel()
		}
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	if got := run(work); got != a {
		t.Fatal("resumed run differs from the uninterrupted one")
	}
}

func TestCausalLMErrors(t *testing.T) {
	train, dev := lmTexts(t)
	empty := artifact[rows.Sentence](t, registry.KindSentences, registry.FileSentences, nil)
	for _, tc := range []struct {
		name   string
		set    map[string]cty.Value
		inputs map[string]registry.Artifact
		want   string
	}{
		{"no text", tinyLM(nil), map[string]registry.Artifact{"dev": dev}, "no training text: connect data (sentences) or documents"},
		{"empty corpus", tinyLM(nil), map[string]registry.Artifact{"data": empty}, "no sentences"},
		{"no checkpoint", tinyLM(map[string]cty.Value{"from_scratch": cty.False}), map[string]registry.Artifact{"data": train}, "no pretrained model: set hf_checkpoint"},
		{"missing checkpoint", tinyLM(map[string]cty.Value{"hf_checkpoint": cty.StringVal("/nonexistent/gpt2")}), map[string]registry.Artifact{"data": train}, "hf_checkpoint: /nonexistent/gpt2 is not a directory"},
		{"vocab", tinyLM(map[string]cty.Value{"vocab": cty.StringVal("bert")}), map[string]registry.Artifact{"data": train}, `vocab: "bert" is not one of gpt2, train`},
		{"vocab size", tinyLM(map[string]cty.Value{"vocab_size": cty.NumberIntVal(100)}), map[string]registry.Artifact{"data": train}, "vocab_size: 100 is too small"},
		{"context", tinyLM(map[string]cty.Value{"max_length": cty.NumberIntVal(64)}), map[string]registry.Artifact{"data": train}, "context: 32 is shorter than max_length 64"},
		{"heads", tinyLM(map[string]cty.Value{"heads": cty.NumberIntVal(3)}), map[string]registry.Artifact{"data": train}, "hidden: 32 must be a positive multiple of heads (3)"},
		{"lr", tinyLM(map[string]cty.Value{"learning_rate": cty.NumberFloatVal(0)}), map[string]registry.Artifact{"data": train}, "learning_rate: 0 must be positive"},
	} {
		if _, _, err := (stageRun{name: "train.causal_lm", set: tc.set, inputs: tc.inputs}).run(t); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}

	// An init model whose tokenizer does not fit its embedding.
	out, _, err := stageRun{name: "train.causal_lm", set: tinyLM(map[string]cty.Value{"max_steps": cty.NumberIntVal(1)}), inputs: map[string]registry.Artifact{"data": train}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(filepath.Join(out, checkpoint.FileWeights))
	if err != nil {
		t.Fatal(err)
	}
	bad := t.TempDir()
	for _, n := range []string{"vocab.json", "merges.txt", "tokenizer_config.json"} {
		b, _ := os.ReadFile(filepath.Join(out, n))
		os.WriteFile(filepath.Join(bad, n), b, 0o644)
	}
	cfg, _ := gpt2.ReadConfig(out)
	cfg.VocabSize = 401
	gpt2.WriteConfig(bad, *cfg)
	wte := f.Tensors["transformer.wte.weight"]
	f.Tensors["transformer.wte.weight"] = safetensors.Tensor{Shape: []int{401, 32}, Data: append(wte.Data, make([]float32, 32)...)}
	safetensors.WriteFile(filepath.Join(bad, checkpoint.FileWeights), f.Tensors, nil)
	_, _, err = stageRun{name: "train.causal_lm", set: tinyLM(nil),
		inputs: map[string]registry.Artifact{"data": train, "init": {Kind: registry.KindLanguageModel, Dir: bad}}}.run(t)
	if err == nil || !strings.Contains(err.Error(), "the tokenizer has 400 tokens (vocab.json) but the model's token embedding has 401 rows") {
		t.Errorf("mismatched tokenizer: %v", err)
	}
}
