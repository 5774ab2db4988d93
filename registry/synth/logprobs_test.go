package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zclconf/go-cty/cty"

	gen "repro/internal/generate"
	"repro/internal/gense"
	"repro/internal/model/lm"
	"repro/internal/prompt"
	"repro/internal/rows"
	"repro/registry"
)

// readOptions reads options.json of a scorer's output.
func readOptions(t *testing.T, dir string) OptionsDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileOptions))
	if err != nil {
		t.Fatal(err)
	}
	var d OptionsDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// checkLabel checks one label's raw scores: the sum is the per-token
// values' generate.Sum, one value per label token, and the values are the
// model's own log-probabilities of the label after the prompt.
func checkLabel(t *testing.T, what string, l *lm.LM, promptText string, ids []int, got OptionLogprob) {
	t.Helper()
	if len(got.Tokens) != len(ids) || got.Sum != gen.Sum(got.Tokens) {
		t.Errorf("%s: %d token values for %d label ids, sum %v of %v", what, len(got.Tokens), len(ids), got.Sum, got.Tokens)
	}
	want, err := gen.Score(context.Background(), l.Model, [][]int{l.Prompt(promptText, false)}, [][]int{ids}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for k := range ids {
		if math.Abs(want[0][k]-got.Tokens[k]) > 1e-6 {
			t.Errorf("%s: token %d log-probability %v, the model gives %v", what, k, got.Tokens[k], want[0][k])
		}
	}
}

// sameWithout checks that file of the run with raw_logprobs, less what
// strip removes (the log-probabilities), is the file of the run without.
func sameWithout(t *testing.T, off, on map[string]string, file string, strip func([]byte) []byte) {
	t.Helper()
	a, err := os.ReadFile(filepath.Join(off["triplets"], file))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(on["triplets"], file))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, strip(b)) {
		t.Errorf("%s: with raw_logprobs, less the log-probabilities, differs from the file without:\n%s\n%s", file, a, strip(b))
	}
}

// TestQualityRawLogprobs: with raw_logprobs, every scored candidate's row
// holds both labels' sums and per-token log-probabilities for T_d(u,
// u_entail) and T_d(u, u_contra); the probabilities the stage decided by
// are exactly the ones these sums give; options.json gives the labels'
// ids (which decode back to the labels) and says no end token is scored.
// Without it (the default) the outputs are what they were: no logprobs,
// no options.json, every other byte the same.
func TestQualityRawLogprobs(t *testing.T) {
	model := tinyT5(t)
	s := qualityStage(t, model)
	s.set["alpha"] = cty.NumberFloatVal(0)
	off := s.mustRun()
	s = qualityStage(t, model)
	s.set["alpha"] = cty.NumberFloatVal(0)
	s.set["raw_logprobs"] = cty.True
	on := s.mustRun()

	l, err := lm.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	d := readOptions(t, on["triplets"])
	if d.EndTokenScored || d.True.Text != "true" || d.False.Text != "false" ||
		l.Decode(d.True.IDs) != "true" || l.Decode(d.False.IDs) != "false" || slices.Contains(d.True.IDs, l.EOS) || slices.Contains(d.False.IDs, l.EOS) {
		t.Errorf("options.json %+v (true decodes to %q, false to %q, EOS %d)", d, l.Decode(d.True.IDs), l.Decode(d.False.IDs), l.EOS)
	}
	scores, err := rows.Read[scoreRow](filepath.Join(on["triplets"], FileScores))
	if err != nil {
		t.Fatal(err)
	}
	td := prompt.MustParse(`if "[X1]", does this mean that "[X2]"? true or false`, 2)
	scored := 0
	for i, r := range scores {
		if r.PTrueEntail == nil {
			if r.Logprobs != nil {
				t.Errorf("row %d: dropped unscored (%s) but has log-probabilities", i, r.Dropped)
			}
			continue
		}
		scored++
		lp := r.Logprobs
		if lp == nil || lp.Entail == nil || lp.Contra == nil {
			t.Fatalf("row %d: scored without log-probabilities: %+v", i, r)
		}
		if pe := gense.Normalised(lp.Entail.True.Sum, lp.Entail.False.Sum); pe != *r.PTrueEntail {
			t.Errorf("row %d: p_true_entail %v, the sums give %v", i, *r.PTrueEntail, pe)
		}
		if pc := gense.Normalised(lp.Contra.False.Sum, lp.Contra.True.Sum); pc != *r.PFalseContra {
			t.Errorf("row %d: p_false_contra %v, the sums give %v", i, *r.PFalseContra, pc)
		}
		pe, pc := td.Fill(r.Anchor, r.Entail), td.Fill(r.Anchor, r.Contra)
		checkLabel(t, "entail true", l, pe, d.True.IDs, lp.Entail.True)
		checkLabel(t, "entail false", l, pe, d.False.IDs, lp.Entail.False)
		checkLabel(t, "contra true", l, pc, d.True.IDs, lp.Contra.True)
		checkLabel(t, "contra false", l, pc, d.False.IDs, lp.Contra.False)
	}
	if scored != 2 {
		t.Errorf("%d scored candidates, want 2 (of 4: one empty, one copy)", scored)
	}
	if _, err := os.Stat(filepath.Join(off["triplets"], FileOptions)); !os.IsNotExist(err) {
		t.Errorf("options.json without raw_logprobs: %v", err)
	}
	sameWithout(t, off, on, FileScores, func(b []byte) []byte {
		rs, err := rows.Decode[scoreRow](bytes.NewReader(b), FileScores)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rs {
			rs[i].Logprobs = nil
		}
		return jsonl(t, rs)
	})
	for _, f := range []string{registry.FileTriplets, FileQuality, registry.FileSamples} {
		sameWithout(t, off, on, f, func(b []byte) []byte { return b })
	}
}

// TestRetrievalRawLogprobs: the same for synth.retrieval_pairs: each
// candidate's p_true is what its logprobs' sums give.
func TestRetrievalRawLogprobs(t *testing.T) {
	model := tinyT5(t)
	s := retrievalStage(t, model)
	off := s.mustRun()
	s = retrievalStage(t, model)
	s.set["raw_logprobs"] = cty.True
	on := s.mustRun()
	l, err := lm.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	d := readOptions(t, on["triplets"])
	if d.EndTokenScored || l.Decode(d.True.IDs) != "true" || l.Decode(d.False.IDs) != "false" {
		t.Errorf("options.json %+v", d)
	}
	cs, err := rows.Read[candidateRow](filepath.Join(on["triplets"], FileCandidates))
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 {
		t.Fatal("no candidates")
	}
	td := prompt.MustParse(`if "[X1]", does this mean that "[X2]"? true or false`, 2)
	for i, c := range cs {
		if c.Logprobs == nil {
			t.Fatalf("candidate %d has no log-probabilities", i)
		}
		if p := gense.Normalised(c.Logprobs.True.Sum, c.Logprobs.False.Sum); p != c.PTrue {
			t.Errorf("candidate %d: p_true %v, the sums give %v", i, c.PTrue, p)
		}
		pr := td.Fill(c.Anchor, c.Partner)
		checkLabel(t, "true", l, pr, d.True.IDs, c.Logprobs.True)
		checkLabel(t, "false", l, pr, d.False.IDs, c.Logprobs.False)
	}
	if _, err := os.Stat(filepath.Join(off["triplets"], FileOptions)); !os.IsNotExist(err) {
		t.Errorf("options.json without raw_logprobs: %v", err)
	}
	sameWithout(t, off, on, FileCandidates, func(b []byte) []byte {
		rs, err := rows.Decode[candidateRow](bytes.NewReader(b), FileCandidates)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rs {
			rs[i].Logprobs = nil
		}
		return jsonl(t, rs)
	})
	for _, f := range []string{registry.FileTriplets, registry.FileSamples} {
		sameWithout(t, off, on, f, func(b []byte) []byte { return b })
	}
}

// jsonl writes rows as rows.Write does and returns the bytes.
func jsonl[T any](t *testing.T, rs []T) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rows.jsonl")
	if err := rows.Write(p, rs); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
