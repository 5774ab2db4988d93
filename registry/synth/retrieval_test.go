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

	"repro/internal/model/lm"
	"repro/internal/retrieve"
	"repro/internal/rows"
	"repro/registry"
)

var retrievalSentences = []rows.Sentence{
	{Text: "a cat sleeps"}, {Text: "a cat rests"}, {Text: "two dogs run in the park"},
	{Text: "no dogs are here"}, {Text: "sunshine warms us"}, {Text: "a cat sleeps"},
}

func retrievalStage(t *testing.T, model string) *stage {
	s := newStage(t, "synth.retrieval_pairs", nil)
	s.inputs["model"] = registry.Artifact{Kind: registry.KindLanguageModel, Dir: model, Digest: "m"}
	s.input("data", registry.FileSentences, retrievalSentences)
	return s
}

func TestRetrievalPairs(t *testing.T) {
	model := tinyT5(t)
	s := retrievalStage(t, model)
	s.set["threshold"] = cty.NumberFloatVal(0)
	s.set["top_k"] = cty.NumberIntVal(2)
	out := s.mustRun()
	cands, err := rows.Read[candidateRow](filepath.Join(out["triplets"], FileCandidates))
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) == 0 {
		t.Fatal("no candidates")
	}
	// Every candidate is BM25's: recompute its score and the labeller's
	// probability independently.
	var docs []string
	for _, r := range retrievalSentences {
		docs = append(docs, r.Text)
	}
	ix, err := retrieve.NewIndex(docs, retrieve.DefaultParams)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lm.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cands {
		if c.Anchor == c.Partner {
			t.Errorf("%+v pairs a sentence with itself or a duplicate", c)
		}
		sc := ix.Scores(c.Anchor)
		found := false
		for d, doc := range docs {
			found = found || (doc == c.Partner && math.Abs(sc[d]-c.BM25) < 1e-12)
		}
		if !found {
			t.Errorf("%+v: BM25 score is not the index's", c)
		}
		lp, err := l.ScoreOptions(context.Background(), []string{`if "` + c.Anchor + `", does this mean that "` + c.Partner + `"? true or false`},
			[]string{"true", "false"}, false, 1)
		if err != nil {
			t.Fatal(err)
		}
		if want := 1 / (1 + math.Exp(lp[0][1]-lp[0][0])); math.Abs(want-c.PTrue) > 1e-6 || !c.Kept {
			t.Errorf("%+v: P(true) want %v, kept at threshold 0", c, want)
		}
	}
	kept, err := rows.Read[rows.Triplet](filepath.Join(out["triplets"], registry.FileTriplets))
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != len(cands) || kept[0].Negative != "" || kept[0].Anchor != cands[0].Anchor || kept[0].Positive != cands[0].Partner {
		t.Errorf("kept %+v for candidates %+v", kept, cands)
	}
	var m map[string]float64
	b, err := os.ReadFile(filepath.Join(out["metrics"], registry.FileMetrics))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["sentences"] != 6 || m["candidates"] != float64(len(cands)) || m["kept"] != float64(len(cands)) || m["pass_rate"] != 1 || m["no_hit"] != 1 {
		t.Errorf("metrics %v (the sun sentence shares no word: one no_hit)", m)
	}
	sm, err := os.ReadFile(filepath.Join(out["triplets"], registry.FileSamples))
	if err != nil || !strings.Contains(string(sm), "BM25 retrieval: 6 sentences, 1 without a partner") {
		t.Errorf("samples.md: %v\n%s", err, sm)
	}

	// A threshold no random model reaches: an empty set that says why.
	s = retrievalStage(t, model)
	s.set["threshold"] = cty.NumberFloatVal(1)
	out = s.mustRun()
	why, err := os.ReadFile(filepath.Join(out["triplets"], registry.FileWhyEmpty))
	if err != nil || !strings.Contains(string(why), "kept 0 of") {
		t.Errorf("why_empty: %v %q", err, why)
	}
}

func TestRetrievalPairsBadInput(t *testing.T) {
	model := tinyT5(t)
	for _, c := range []struct {
		set  map[string]cty.Value
		want string
	}{
		{map[string]cty.Value{"threshold": cty.NumberFloatVal(1.5)}, "threshold: 1.5 is outside [0, 1]"},
		{map[string]cty.Value{"threshold": cty.NumberFloatVal(-0.2)}, "threshold: -0.2 is outside [0, 1]"},
		{map[string]cty.Value{"b": cty.NumberFloatVal(2)}, "b: 2 is outside [0, 1]"},
		{map[string]cty.Value{"k1": cty.NumberFloatVal(-1)}, "k1: -1"},
		{map[string]cty.Value{"top_k": cty.NumberIntVal(0)}, "top_k: 0"},
		{map[string]cty.Value{"template": cty.StringVal("[X1] only")}, "template"},
	} {
		s := retrievalStage(t, model)
		for k, v := range c.set {
			s.set[k] = v
		}
		if _, err := s.run(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.set, err, c.want)
		}
	}
	// An empty corpus: nothing to search.
	s := retrievalStage(t, model)
	s.input("corpus", registry.FileSentences, []rows.Sentence{})
	if _, err := s.run(); err == nil || !strings.Contains(err.Error(), "corpus") || !strings.Contains(err.Error(), "no sentences") {
		t.Errorf("empty corpus: %v", err)
	}
	// A corpus without a single word.
	s = retrievalStage(t, model)
	s.input("corpus", registry.FileSentences, []rows.Sentence{{Text: "..."}, {Text: "!"}})
	if _, err := s.run(); err == nil || !strings.Contains(err.Error(), "none of the 2 documents has a word") {
		t.Errorf("wordless corpus: %v", err)
	}
}
