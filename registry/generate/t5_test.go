package generate

import (
	"path/filepath"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/model/t5/t5test"
	"repro/internal/rows"
	"repro/registry"
)

// TestCompleteT5 drives generate.complete with a text-to-text model: the
// prompt is the encoder's input and completions come from the decoder,
// seeded and reproducible.
func TestCompleteT5(t *testing.T) {
	var corpus []string
	for i := 0; i < 10; i++ {
		corpus = append(corpus, "the cat sat on the mat", "a dog ran", "write two sentences that are entailment")
	}
	dir, _, _ := t5test.Dir(t, t5test.Spec{Texts: corpus, Vocab: 100, Sentinels: 2, Seed: [2]uint64{2, 3}})
	in := map[string]registry.Artifact{"model": {Kind: registry.KindLanguageModel, Dir: dir}, "data": sentences(t, "the cat", "a dog")}
	set := map[string]cty.Value{"template": cty.StringVal("write two sentences that are entailment: [X]"), "samples": cty.NumberIntVal(2),
		"max_new_tokens": cty.NumberIntVal(6), "top_k": cty.NumberIntVal(5), "top_p": cty.NumberFloatVal(0.9)}
	read := func() []rows.Completion {
		out, err := complete(t, set, in, 5)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := rows.Read[rows.Completion](filepath.Join(out, registry.FileCompletions))
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	a, b := read(), read()
	if len(a) != 4 {
		t.Fatalf("%d completions", len(a))
	}
	for i := range a {
		if a[i].Text != b[i].Text || a[i].Tokens != b[i].Tokens || a[i].Tokens == 0 {
			t.Errorf("completion %d: %+v vs %+v", i, a[i], b[i])
		}
	}
}
