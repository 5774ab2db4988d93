package synth

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/gense"
	"repro/internal/model/lm"
	"repro/internal/model/t5/t5test"
	"repro/internal/rows"
	"repro/registry"
)

// tinyT5 saves a randomly initialised T5 with a vocabulary of the test's
// words: its scores are arbitrary but real, which is all the filter's
// bookkeeping needs.
func tinyT5(t *testing.T) string {
	t.Helper()
	var corpus []string
	for i := 0; i < 10; i++ {
		corpus = append(corpus, "if a cat sleeps, does this mean that a cat rests? true or false",
			"two dogs run in the park", "no dogs are here", "the sun is hot")
	}
	dir, _, _ := t5test.Dir(t, t5test.Spec{Texts: corpus, Vocab: 120, Sentinels: 2, Seed: [2]uint64{2, 3}})
	return dir
}

func completions(t *testing.T, rs []rows.Completion) registry.Artifact {
	dir := t.TempDir()
	if err := rows.Write(filepath.Join(dir, registry.FileCompletions), rs); err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Kind: registry.KindCompletions, Dir: dir, Digest: dir}
}

func qualityStage(t *testing.T, model string) *stage {
	s := newStage(t, "synth.quality_check", nil)
	inputs := []string{"a cat sleeps", "two dogs run", "the sun is hot", "a cat sleeps"}
	ent := []string{"a cat rests", "dogs run", "", "the cat is resting"}
	con := []string{"a cat runs", "no dogs are here", "the sun is cold", "a cat sleeps"}
	var e, c []rows.Completion
	for i := range inputs {
		e = append(e, rows.Completion{PromptIndex: i, Input: inputs[i], Text: ent[i]})
		c = append(c, rows.Completion{PromptIndex: i, Input: inputs[i], Text: con[i]})
	}
	s.inputs["model"] = registry.Artifact{Kind: registry.KindLanguageModel, Dir: model, Digest: "m"}
	s.inputs["entail"] = completions(t, e)
	s.inputs["contra"] = completions(t, c)
	return s
}

func TestQualityCheck(t *testing.T) {
	model := tinyT5(t)
	s := qualityStage(t, model)
	s.set["alpha"] = cty.NumberFloatVal(0)
	out := s.mustRun()
	var scores []scoreRow
	scores, err := rows.Read[scoreRow](filepath.Join(out["triplets"], FileScores))
	if err != nil {
		t.Fatal(err)
	}
	if len(scores) != 4 || scores[2].Dropped != string(gense.EmptyEntail) || scores[3].Dropped != string(gense.Copy) {
		t.Fatalf("scores %+v", scores)
	}
	// The probabilities are the discriminator's, renormalised over the
	// two labels: recompute candidate 0's from the model directly.
	l, err := lm.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	td := `if "a cat sleeps", does this mean that "%s"? true or false`
	lp, err := l.ScoreOptions(context.Background(), []string{strings.Replace(td, "%s", "a cat rests", 1),
		strings.Replace(td, "%s", "a cat runs", 1)}, []string{"true", "false"}, false, 2)
	if err != nil {
		t.Fatal(err)
	}
	wantE := math.Exp(lp[0][0]) / (math.Exp(lp[0][0]) + math.Exp(lp[0][1]))
	wantC := math.Exp(lp[1][1]) / (math.Exp(lp[1][0]) + math.Exp(lp[1][1]))
	if scores[0].PTrueEntail == nil || math.Abs(*scores[0].PTrueEntail-wantE) > 1e-9 || math.Abs(*scores[0].PFalseContra-wantC) > 1e-9 {
		t.Errorf("candidate 0: %v %v, want %v %v", scores[0].PTrueEntail, scores[0].PFalseContra, wantE, wantC)
	}
	kept, err := rows.Read[rows.Triplet](filepath.Join(out["triplets"], registry.FileTriplets))
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 2 || kept[0] != (rows.Triplet{Anchor: "a cat sleeps", Positive: "a cat rests", Negative: "a cat runs"}) {
		t.Errorf("kept %+v", kept)
	}
	var m map[string]any
	b, err := os.ReadFile(filepath.Join(out["metrics"], registry.FileMetrics))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["candidates"] != 4.0 || m["kept"] != 2.0 || m["pass_rate"] != 0.5 || m["dropped"].(map[string]any)["copy"] != 1.0 {
		t.Errorf("metrics %v", m)
	}
	if _, ok := m["pass_rate_at_0.9"]; !ok {
		t.Error("no pass rate at 0.9")
	}
	sm, err := os.ReadFile(filepath.Join(out["triplets"], registry.FileSamples))
	if err != nil || !strings.Contains(string(sm), "2 of 4 candidate triplets kept") || !strings.Contains(string(sm), "no: copy") {
		t.Errorf("samples.md: %v\n%s", err, sm)
	}
	if _, err := os.Stat(filepath.Join(out["triplets"], registry.FileWhyEmpty)); err == nil {
		t.Error("why_empty.txt beside kept triplets")
	}

	// Nothing passes alpha = 1 with a random model: the set is empty and
	// says why.
	s = qualityStage(t, model)
	s.set["alpha"] = cty.NumberFloatVal(1)
	out = s.mustRun()
	why, err := os.ReadFile(filepath.Join(out["triplets"], registry.FileWhyEmpty))
	if err != nil || !strings.Contains(string(why), "kept 0 of 4 candidate triplets at alpha = 1") {
		t.Errorf("why_empty: %v %q", err, why)
	}
}

func TestQualityCheckBadInput(t *testing.T) {
	model := tinyT5(t)
	for name, set := range map[string]map[string]cty.Value{
		"alpha above 1":       {"alpha": cty.NumberFloatVal(1.5)},
		"alpha below 0":       {"alpha": cty.NumberFloatVal(-0.1)},
		"template without X2": {"template": cty.StringVal(`if "[X1]", true or false`)},
		"same labels":         {"false_label": cty.StringVal("true")},
	} {
		s := qualityStage(t, model)
		for k, v := range set {
			s.set[k] = v
		}
		_, err := s.run()
		want := map[string]string{"alpha above 1": "outside [0, 1]", "alpha below 0": "outside [0, 1]",
			"template without X2": "template", "same labels": "equal to true_label"}[name]
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	// Generations of different sentences cannot be paired.
	s := qualityStage(t, model)
	s.inputs["contra"] = completions(t, []rows.Completion{{PromptIndex: 0, Input: "other", Text: "x"}})
	if _, err := s.run(); err == nil || !strings.Contains(err.Error(), "contra") {
		t.Errorf("mismatched generations: %v", err)
	}
}

func TestSample(t *testing.T) {
	var ts []rows.Triplet
	for _, s := range sentences(50, "anchor %d") {
		ts = append(ts, rows.Triplet{Anchor: s.Text, Positive: s.Text + " pos", Negative: s.Text + " neg"})
	}
	run := func(fraction float64, seed int64, rest ...bool) ([]rows.Triplet, string) {
		s := newStage(t, "synth.sample", nil)
		s.seed = seed
		if len(rest) > 0 {
			s.set["rest"] = cty.BoolVal(rest[0])
		}
		s.input("data", registry.FileTriplets, ts)
		s.set["fraction"] = cty.NumberFloatVal(fraction)
		out := s.mustRun()
		got, err := rows.Read[rows.Triplet](filepath.Join(out["triplets"], registry.FileTriplets))
		if err != nil {
			t.Fatal(err)
		}
		return got, out["triplets"]
	}
	a, _ := run(0.2, 42)
	b, _ := run(0.6, 42)
	c, _ := run(0.2, 1)
	if len(a) != 10 || len(b) != 30 {
		t.Fatalf("sizes %d %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("not nested at %d", i)
		}
	}
	if a[0] == ts[0] && a[1] == ts[1] && a[2] == ts[2] {
		t.Error("seeded sample is the first rows")
	}
	same := true
	for i := range a {
		same = same && a[i] == c[i]
	}
	if same {
		t.Error("seeds 42 and 1 drew the same sample")
	}
	r, _ := run(0.2, 42, true)
	if len(r) != 40 || r[0] != b[10] {
		t.Fatalf("rest: %d rows", len(r))
	}
	seen := map[rows.Triplet]bool{}
	for _, x := range append(append([]rows.Triplet(nil), a...), r...) {
		seen[x] = true
	}
	if len(seen) != 50 {
		t.Errorf("share and rest cover %d distinct rows of 50", len(seen))
	}
	none, dir := run(0, 42)
	why, err := os.ReadFile(filepath.Join(dir, registry.FileWhyEmpty))
	if len(none) != 0 || err != nil || !strings.Contains(string(why), "leaves no row") {
		t.Errorf("fraction 0: %d rows, %v %q", len(none), err, why)
	}
	s := newStage(t, "synth.sample", nil)
	s.set["fraction"] = cty.NumberFloatVal(1.2)
	s.input("data", registry.FileTriplets, ts)
	if _, err := s.run(); err == nil || !strings.Contains(err.Error(), "outside [0, 1]") {
		t.Errorf("fraction 1.2: %v", err)
	}
}

// An empty set from the quality check keeps its reason through a sample.
func TestSampleKeepsWhyEmpty(t *testing.T) {
	s := newStage(t, "synth.sample", nil)
	s.input("data", registry.FileTriplets, []rows.Triplet{})
	if err := os.WriteFile(filepath.Join(s.inputs["data"].Dir, registry.FileWhyEmpty), []byte("kept 0 of 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := s.mustRun()
	why, err := os.ReadFile(filepath.Join(out["triplets"], registry.FileWhyEmpty))
	if err != nil || strings.TrimSpace(string(why)) != "kept 0 of 7" {
		t.Errorf("%v %q", err, why)
	}
}
