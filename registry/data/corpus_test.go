package data

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/rows"
	"repro/registry"
)

// TestCorpusSplits: the three splits of the three corpora are disjoint,
// cover every distinct sentence, and keep their sizes near the fractions.
func TestCorpusSplits(t *testing.T) {
	useData(t)
	sets := map[string][]rows.Sentence{}
	for _, split := range []string{"train", "dev", "test", "all"} {
		dir, err := run(t, "data.corpus", map[string]cty.Value{"split": cty.StringVal(split)})
		if err != nil {
			t.Fatal(err)
		}
		sets[split] = mustRead[rows.Sentence](t, filepath.Join(dir, registry.FileSentences))
	}
	owner := map[string]string{}
	for _, split := range []string{"train", "dev", "test"} {
		for _, s := range sets[split] {
			if prev, dup := owner[s.Text]; dup {
				t.Fatalf("%q is in %s and %s", s.Text, prev, split)
			}
			owner[s.Text] = split
		}
	}
	all := len(sets["all"])
	if len(owner) != all || all < 100000 {
		t.Fatalf("%d sentences in the splits, %d in all", len(owner), all)
	}
	for _, split := range []string{"dev", "test"} {
		if f := float64(len(sets[split])) / float64(all); f < 0.015 || f > 0.025 {
			t.Errorf("%s holds %.3f of the sentences, want about 0.02", split, f)
		}
	}
	// Source order: Wikipedia first.
	if !strings.Contains(sets["all"][0].Text, " ") || owner[sets["all"][0].Text] == "" {
		t.Errorf("first sentence %q", sets["all"][0].Text)
	}
}

func TestCorpusBadParams(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]cty.Value
		want string
	}{
		{map[string]cty.Value{"sources": strs("wiki", "reddit")}, `sources: unknown corpus "reddit"`},
		{map[string]cty.Value{"sources": cty.ListValEmpty(cty.String)}, "sources: empty list"},
		{map[string]cty.Value{"sources": strs("bbc", "bbc")}, "sources: bbc listed twice"},
		{map[string]cty.Value{"split": cty.StringVal("val")}, `split: "val" is not train, dev, test or all`},
		{map[string]cty.Value{"dev_fraction": cty.NumberFloatVal(0.6), "test_fraction": cty.NumberFloatVal(0.5)}, "must be >= 0 and leave a training share"},
	} {
		if _, err := run(t, "data.corpus", tc.set); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.set, err, tc.want)
		}
	}
}
