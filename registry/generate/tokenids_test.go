package generate

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/dino"
	"repro/internal/model/lm"
	"repro/internal/model/t5/t5test"
	"repro/internal/rows"
	"repro/registry"
)

// rewrite decodes the JSONL file at path as T, applies f to each row and
// returns the bytes rows.Write gives for the result.
func rewrite[T any](t *testing.T, path string, f func(*T)) []byte {
	t.Helper()
	rs, err := rows.Read[T](path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		f(&rs[i])
	}
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	if err := rows.Write(out, rs); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	return b
}

func sameFile(t *testing.T, what string, a []byte, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("%s differs:\n%s\n---\n%s", what, a, b)
	}
}

// checkCompletionIDs: every row's ids decode back to its text with the
// model's tokenizer (the text is the decoding cut before the stop string
// that ended it), and its prompt ids are the prompt as the model reads it.
func checkCompletionIDs(t *testing.T, l *lm.LM, bos bool, rs []rows.Completion) {
	t.Helper()
	stopped := 0
	for i, r := range rs {
		if len(r.TokenIDs) != r.Tokens || r.Tokens == 0 {
			t.Errorf("row %d: %d ids for %d tokens", i, len(r.TokenIDs), r.Tokens)
		}
		if !slices.Equal(r.PromptIDs, l.Prompt(r.Prompt, bos)) || l.Decode(r.PromptIDs) != r.Prompt {
			t.Errorf("row %d: prompt ids %v decode to %q, prompt %q", i, r.PromptIDs, l.Decode(r.PromptIDs), r.Prompt)
		}
		text := l.Decode(r.TokenIDs)
		switch r.StopReason {
		case "stop":
			stopped++
			if k := strings.Index(text, r.StopString); k < 0 || text[:k] != r.Text {
				t.Errorf("row %d: ids decode to %q, text %q before stop %q", i, text, r.Text, r.StopString)
			}
		default:
			if text != r.Text {
				t.Errorf("row %d (%s): ids decode to %q, text %q", i, r.StopReason, text, r.Text)
			}
		}
	}
	if stopped == 0 && len(rs) > 0 && rs[0].Sampling.Stop != nil {
		t.Error("no row ended at its stop string: the cut is not tested")
	}
}

// TestCompleteTokenIDs: with token_ids, generate.complete's rows carry the
// generated ids and the prompt's, which decode back to the text with the
// model's tokenizer (GPT-2, BOS first; and T5); without it (the default)
// the rows are those rows less the ids, byte for byte, and samples.md is
// the same.
func TestCompleteTokenIDs(t *testing.T) {
	model := tinyModel(t, 64)
	data := sentences(t, "the cat", "a dog", "quoted")
	set := map[string]cty.Value{
		"template": cty.StringVal("Sentence: \"[X]"), "samples": cty.NumberIntVal(4), "max_new_tokens": cty.NumberIntVal(12),
		"stop": cty.ListVal([]cty.Value{cty.StringVal("e")}),
	}
	in := map[string]registry.Artifact{"model": model, "data": data}
	off, err := complete(t, set, in, 3)
	if err != nil {
		t.Fatal(err)
	}
	set["token_ids"] = cty.True
	on, err := complete(t, set, in, 3)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := rows.Read[rows.Completion](filepath.Join(on, registry.FileCompletions))
	if err != nil {
		t.Fatal(err)
	}
	l, err := lm.Open(model.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if !l.BOS {
		t.Fatal("the test model is not framed with <|endoftext|> first")
	}
	checkCompletionIDs(t, l, true, rs)
	if rs[0].PromptIDs[0] != l.EOS {
		t.Errorf("prompt ids %v do not start with <|endoftext|> (%d)", rs[0].PromptIDs, l.EOS)
	}
	stripped := rewrite(t, filepath.Join(on, registry.FileCompletions), func(r *rows.Completion) { r.TokenIDs, r.PromptIDs = nil, nil })
	sameFile(t, "completions.jsonl without token_ids vs with them, less the ids", stripped, filepath.Join(off, registry.FileCompletions))
	if b, _ := os.ReadFile(filepath.Join(off, registry.FileCompletions)); bytes.Contains(b, []byte("token_ids")) {
		t.Error("token_ids in the rows of a stage without it")
	}
	md, _ := os.ReadFile(filepath.Join(on, registry.FileSamples))
	sameFile(t, "samples.md", md, filepath.Join(off, registry.FileSamples))

	// T5: the prompt is the encoder's input (</s> last), the ids the
	// decoder's.
	var corpus []string
	for i := 0; i < 10; i++ {
		corpus = append(corpus, "the cat sat on the mat", "a dog ran", "write two sentences that are entailment")
	}
	dir, _, _ := t5test.Dir(t, t5test.Spec{Texts: corpus, Vocab: 100, Sentinels: 2, Seed: [2]uint64{2, 3}})
	t5in := map[string]registry.Artifact{"model": {Kind: registry.KindLanguageModel, Dir: dir}, "data": sentences(t, "the cat", "a dog")}
	out, err := complete(t, map[string]cty.Value{"template": cty.StringVal("write two sentences that are entailment [X]"),
		"samples": cty.NumberIntVal(2), "max_new_tokens": cty.NumberIntVal(6), "token_ids": cty.True}, t5in, 5)
	if err != nil {
		t.Fatal(err)
	}
	rs, err = rows.Read[rows.Completion](filepath.Join(out, registry.FileCompletions))
	if err != nil {
		t.Fatal(err)
	}
	t5, err := lm.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkCompletionIDs(t, t5, false, rs)
	if p := rs[0].PromptIDs; p[len(p)-1] != t5.EOS {
		t.Errorf("T5 prompt ids %v do not end with </s> (%d)", p, t5.EOS)
	}
}

// TestDINOTokenIDs: with token_ids, generate.dino_pairs's generated rows
// carry x2's ids and I_y(x1)'s, which decode back to x2 (before the
// closing quote, trimmed) and the instruction; generate.dino_x1 writes
// tokens.jsonl, row for row with sentences.jsonl. Without it the outputs
// are those, less the ids, byte for byte.
func TestDINOTokenIDs(t *testing.T) {
	model := tinyModel(t, 128)
	l, err := lm.Open(model.Dir)
	if err != nil {
		t.Fatal(err)
	}
	data := sentences(t, "the cat sat", "a dog ate", "words end here")
	in := map[string]registry.Artifact{"model": model, "data": data}
	set := map[string]cty.Value{"quote": cty.StringVal("e"), "max_new_tokens": cty.NumberIntVal(10), "max_tries": cty.NumberIntVal(3)}
	off, err := runType(t, "generate.dino_pairs", set, in, 5)
	if err != nil {
		t.Fatal(err)
	}
	set["token_ids"] = cty.True
	on, err := runType(t, "generate.dino_pairs", set, in, 5)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := rows.Read[rows.GeneratedPair](filepath.Join(on["pairs"], registry.FilePairs))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 {
		t.Fatal("no pairs")
	}
	x1s := []string{"the cat sat", "a dog ate", "words end here"}
	for i, p := range ps {
		text := l.Decode(p.X2IDs)
		k := strings.Index(text, "e")
		if k < 0 || strings.TrimSpace(text[:k]) != p.Sentence2 {
			t.Errorf("row %d: x2 ids decode to %q, x2 %q", i, text, p.Sentence2)
		}
		inst := dino.Labels[slices.IndexFunc(dino.Labels, func(lb dino.Label) bool { return lb.Value == p.Instruction })].Instruction
		if want := dino.Instruction(dino.Template, inst, x1s[p.X1]); l.Decode(p.PromptIDs) != want || !slices.Equal(p.PromptIDs, l.Prompt(want, true)) {
			t.Errorf("row %d: prompt ids decode to %q, want %q", i, l.Decode(p.PromptIDs), want)
		}
	}
	stripped := rewrite(t, filepath.Join(on["pairs"], registry.FilePairs), func(p *rows.GeneratedPair) { p.X2IDs, p.PromptIDs = nil, nil })
	sameFile(t, "pairs.jsonl without token_ids vs with them, less the ids", stripped, filepath.Join(off["pairs"], registry.FilePairs))
	for _, f := range []string{registry.FileStats, registry.FileSamples} {
		b, _ := os.ReadFile(filepath.Join(on["pairs"], f))
		sameFile(t, f, b, filepath.Join(off["pairs"], f))
	}

	x1set := map[string]cty.Value{"quote": cty.StringVal("e"), "max_new_tokens": cty.NumberIntVal(10), "count": cty.NumberIntVal(6)}
	x1off, err := runType(t, "generate.dino_x1", x1set, map[string]registry.Artifact{"model": model}, 2)
	if err != nil {
		t.Fatal(err)
	}
	x1set["token_ids"] = cty.True
	x1on, err := runType(t, "generate.dino_x1", x1set, map[string]registry.Artifact{"model": model}, 2)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := rows.Read[rows.Sentence](filepath.Join(x1on["sentences"], registry.FileSentences))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := rows.Read[X1Tokens](filepath.Join(x1on["sentences"], FileTokens))
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) == 0 || len(ts) != len(ss) {
		t.Fatalf("%d sentences, %d token rows", len(ss), len(ts))
	}
	for i, tr := range ts {
		text := l.Decode(tr.TokenIDs)
		k := strings.Index(text, "e")
		if tr.Text != ss[i].Text || k < 0 || strings.TrimSpace(text[:k]) != tr.Text {
			t.Errorf("x1 %d: %q, ids decode to %q, sentence %q", i, tr.Text, text, ss[i].Text)
		}
		if p := l.Decode(tr.PromptIDs); !strings.HasPrefix(p, "Task: Write two sentences that ") || !strings.HasSuffix(p, "Sentence 1: \"") {
			t.Errorf("x1 %d: prompt ids decode to %q", i, p)
		}
	}
	if _, err := os.Stat(filepath.Join(x1off["sentences"], FileTokens)); !os.IsNotExist(err) {
		t.Errorf("tokens.jsonl without token_ids: %v", err)
	}
	for _, f := range []string{registry.FileSentences, registry.FileStats, registry.FileSamples} {
		b, _ := os.ReadFile(filepath.Join(x1on["sentences"], f))
		sameFile(t, f, b, filepath.Join(x1off["sentences"], f))
	}
}
