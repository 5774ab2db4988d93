package generate

import (
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

// tinyModel writes a random GPT-2 with a byte-level vocabulary trained on
// a few sentences, as a language-model artifact (context: positions).
func tinyModel(t *testing.T, positions int) registry.Artifact {
	t.Helper()
	texts := []string{"the cat sat on the mat.", "a dog ate the bone.", "\"quoted words\" end here."}
	tok, err := tokenizer.TrainBPE(texts, tokenizer.BPETrainOptions{VocabSize: 300, Special: tokenizer.GPT2Specials})
	if err != nil {
		t.Fatal(err)
	}
	eos, _ := tok.ID(gpt2.EndOfText)
	c := gpt2.DefaultConfig()
	c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead, c.BOSTokenID, c.EOSTokenID = tok.Size(), positions, 16, 1, 2, eos, eos
	m, err := gpt2.New(c, rand.New(rand.NewPCG(4, 4)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := gpt2.Save(dir, m, tok, map[string]any{"bos": true}); err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Kind: registry.KindLanguageModel, Dir: dir, Digest: "test"}
}

func sentences(t *testing.T, ss ...string) registry.Artifact {
	t.Helper()
	dir := t.TempDir()
	rs := make([]rows.Sentence, len(ss))
	for i, s := range ss {
		rs[i] = rows.Sentence{Text: s}
	}
	if err := rows.Write(filepath.Join(dir, registry.FileSentences), rs); err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Kind: registry.KindSentences, Dir: dir, Digest: "test"}
}

// complete runs generate.complete with its defaults overridden by set.
func complete(t *testing.T, set map[string]cty.Value, inputs map[string]registry.Artifact, seed int64) (string, error) {
	t.Helper()
	outs, err := runType(t, "generate.complete", set, inputs, seed)
	return outs["completions"], err
}

func TestComplete(t *testing.T) {
	model := tinyModel(t, 64)
	data := sentences(t, "the cat", "a dog", "quoted")
	set := map[string]cty.Value{
		"template": cty.StringVal("Sentence: \"[X]"), "samples": cty.NumberIntVal(3), "max_new_tokens": cty.NumberIntVal(12),
		"top_k": cty.NumberIntVal(20), "top_p": cty.NumberFloatVal(0.9), "stop": cty.ListVal([]cty.Value{cty.StringVal("\"")}),
		"show": cty.NumberIntVal(4),
	}
	in := map[string]registry.Artifact{"model": model, "data": data}
	out, err := complete(t, set, in, 11)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := rows.Read[rows.Completion](filepath.Join(out, registry.FileCompletions))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 9 {
		t.Fatalf("%d rows, want 3 prompts x 3 samples", len(rs))
	}
	for i, r := range rs {
		if r.PromptIndex != i/3 || r.Sample != i%3 || r.Seed != 11 || r.Sampling.TopK != 20 || r.Sampling.TopP != 0.9 ||
			r.Prompt != "Sentence: \""+[]string{"the cat", "a dog", "quoted"}[i/3] || r.Input == "" {
			t.Errorf("row %d: %+v", i, r)
		}
		switch r.StopReason {
		case "stop":
			if strings.Contains(r.Text, "\"") || r.StopString != "\"" {
				t.Errorf("row %d stopped at a quote but kept it: %+v", i, r)
			}
		case "eos", "length":
		default:
			t.Errorf("row %d: stop reason %q", i, r.StopReason)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, registry.FileSamples))
	if !strings.Contains(string(md), "| prompt | sample | completion | stop |") || strings.Count(string(md), "\n| Sentence") != 4 {
		t.Errorf("samples.md:\n%s", md)
	}
	// The same seed gives the same bytes; another seed other completions.
	again, _ := complete(t, set, in, 11)
	a, _ := os.ReadFile(filepath.Join(out, registry.FileCompletions))
	b, _ := os.ReadFile(filepath.Join(again, registry.FileCompletions))
	if string(a) != string(b) {
		t.Error("same seed, different completions")
	}
	other, _ := complete(t, set, in, 12)
	c, _ := os.ReadFile(filepath.Join(other, registry.FileCompletions))
	if string(a) == string(c) {
		t.Error("seeds 11 and 12 gave the same completions")
	}
	// Unconditional: the template alone, with <|endoftext|> first (auto).
	out, err = complete(t, map[string]cty.Value{"template": cty.StringVal(""), "samples": cty.NumberIntVal(2), "temperature": cty.NumberFloatVal(0)},
		map[string]registry.Artifact{"model": model}, 1)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ = rows.Read[rows.Completion](filepath.Join(out, registry.FileCompletions))
	if len(rs) != 2 || rs[0].Text != rs[1].Text {
		t.Errorf("greedy unconditional samples differ: %+v", rs)
	}
}

func TestCompleteErrors(t *testing.T) {
	model := tinyModel(t, 16)
	data := sentences(t, "a")
	withData := map[string]registry.Artifact{"model": model, "data": data}
	alone := map[string]registry.Artifact{"model": model}
	for _, tc := range []struct {
		set    map[string]cty.Value
		inputs map[string]registry.Artifact
		want   string
	}{
		{map[string]cty.Value{"template": cty.StringVal("no placeholder")}, withData, `template: "no placeholder" has no [X] placeholder`},
		{map[string]cty.Value{"template": cty.StringVal("[X] without data")}, alone, "has a [X] placeholder but no data is connected"},
		{map[string]cty.Value{"top_p": cty.NumberFloatVal(0)}, alone, "top_p: 0 must lie in (0, 1]"},
		{map[string]cty.Value{"top_p": cty.NumberFloatVal(1.2)}, alone, "top_p: 1.2 must lie in (0, 1]"},
		{map[string]cty.Value{"top_k": cty.NumberIntVal(-1)}, alone, "top_k: -1 must be at least 1"},
		{map[string]cty.Value{"temperature": cty.NumberFloatVal(-0.5)}, alone, "temperature: -0.5 must be"},
		{map[string]cty.Value{"frequency_penalty": cty.NumberFloatVal(2.5)}, alone, "frequency_penalty: 2.5 must lie in [-2, 2]"},
		{map[string]cty.Value{"samples": cty.NumberIntVal(0)}, alone, "samples: 0; must be at least 1"},
		{map[string]cty.Value{"bos": cty.StringVal("maybe")}, alone, `bos: "maybe" is not one of auto, yes, no`},
		{map[string]cty.Value{"stop": cty.ListVal([]cty.Value{cty.StringVal("")})}, alone, "stop: string 0 is empty"},
		{map[string]cty.Value{"template": cty.StringVal(strings.Repeat("the cat sat on the mat. ", 10))}, alone, "the model's context window of 16 leaves no room"},
		{map[string]cty.Value{"template": cty.StringVal("[X]")}, map[string]registry.Artifact{"model": model, "data": sentences(t)}, "no sentences"},
	} {
		if _, err := complete(t, tc.set, tc.inputs, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.set, err, tc.want)
		}
	}
}

// TestValidateReportsEveryParam: the load-time check names each bad
// parameter, not only the first.
func TestValidateReportsEveryParam(t *testing.T) {
	p := &CompleteParams{MaxNewTokens: 1, Samples: 1, Temperature: 1, TopK: -2, TopP: 1.5, BatchSize: 1, BOS: "auto"}
	ps, other := registry.ParamErrors(p.Validate())
	var names []string
	for _, e := range ps {
		names = append(names, e.Param)
	}
	if len(other) != 0 || strings.Join(names, ",") != "top_k,top_p" {
		t.Errorf("params %v, other %v", names, other)
	}
}
