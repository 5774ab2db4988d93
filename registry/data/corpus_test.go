package data

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/rows"
	"repro/registry"
)

// runCorpus runs data.corpus with seed and returns its train and dev
// outputs.
func runCorpus(t *testing.T, seed int64, set map[string]cty.Value) (train, dev []rows.Sentence, err error) {
	train, dev, _, err = runCorpus3(t, seed, set)
	return train, dev, err
}

// runCorpus3 runs data.corpus with seed and returns its three outputs.
func runCorpus3(t *testing.T, seed int64, set map[string]cty.Value) (train, dev, test []rows.Sentence, err error) {
	t.Helper()
	r := registry.New()
	Register(r)
	st, _ := r.Lookup("data.corpus")
	ps, _ := st.ParamSchema()
	attrs := map[string]cty.Value{}
	for _, p := range ps {
		attrs[p.Name] = p.Default
		if v, ok := set[p.Name]; ok {
			attrs[p.Name] = v
		}
	}
	params, err := st.DecodeParams(cty.ObjectVal(attrs))
	if err != nil {
		t.Fatal(err)
	}
	so, do, tso := t.TempDir(), t.TempDir(), t.TempDir()
	env := &registry.Env{Params: params, Seed: seed, Outputs: map[string]string{"sentences": so, "dev": do, "test": tso}}
	if err := st.Call(context.Background(), env); err != nil {
		return nil, nil, nil, err
	}
	read := func(dir string) []rows.Sentence {
		return mustRead[rows.Sentence](t, filepath.Join(dir, registry.FileSentences))
	}
	return read(so), read(do), read(tso), nil
}

func TestBBCSentences(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the BBC corpus")
	}
	useData(t)
	out, err := run(t, "data.sentences", map[string]cty.Value{"source": cty.StringVal("bbc")})
	if err != nil {
		t.Fatal(err)
	}
	ss := mustRead[rows.Sentence](t, filepath.Join(out, registry.FileSentences))
	// 41,687 sentences in 2,225 articles; the 136 duplicate articles hold
	// the rest.
	if len(ss) < 38000 || len(ss) >= 41687 {
		t.Errorf("bbc: %d sentences", len(ss))
	}
	if _, err := run(t, "data.sentences", map[string]cty.Value{"source": cty.StringVal("reuters")}); err == nil || !strings.Contains(err.Error(), "wiki, bbc, brown") {
		t.Errorf("unknown source: %v", err)
	}
}

func TestCorpus(t *testing.T) {
	useData(t)
	wiki := map[string]cty.Value{"sources": strs("wiki"), "dev_size": cty.NumberIntVal(200)}
	train, dev, err := runCorpus(t, 42, wiki)
	if err != nil {
		t.Fatal(err)
	}
	if len(dev) != 200 {
		t.Errorf("dev: %d sentences", len(dev))
	}
	// 11,914 lines, 366 exact repeats; short ones and STS sentences go too.
	if n := len(train) + len(dev); n > 11914-366 || n < 10000 {
		t.Errorf("%d sentences in all", n)
	}
	seen := map[string]bool{}
	for _, s := range append(append([]rows.Sentence(nil), train...), dev...) {
		if seen[s.Text] {
			t.Fatalf("%q twice despite dedupe", s.Text)
		}
		seen[s.Text] = true
		if len(strings.Fields(s.Text)) < 3 {
			t.Fatalf("%q is shorter than min_words", s.Text)
		}
	}
	// The split follows the seed, and only the seed.
	train2, dev2, _ := runCorpus(t, 42, wiki)
	if len(train2) != len(train) || dev2[0] != dev[0] || dev2[199] != dev[199] {
		t.Error("same seed, different split")
	}
	_, dev3, _ := runCorpus(t, 7, wiki)
	if dev3[0] == dev[0] && dev3[1] == dev[1] {
		t.Error("another seed, same split")
	}
	// STS sentences are left out: none of the STS-B test sentences is here.
	sts := mustRead[rows.STSPair](t, filepath.Join(runOrFail(t, "data.sts", map[string]cty.Value{"tasks": strs("stsb", "sts12", "sts13", "sts14", "sts15", "sts16", "sickr")}), registry.FilePairs))
	kept := map[string]bool{}
	for _, s := range train {
		kept[s.Text] = true
	}
	for _, p := range sts {
		if kept[p.Sentence1] || kept[p.Sentence2] {
			t.Fatalf("an STS sentence is in the corpus: %q / %q", p.Sentence1, p.Sentence2)
		}
	}
	// A test split comes from the same permutation, after dev: dev is
	// unchanged, and the three splits partition the corpus.
	wiki["test_size"] = cty.NumberIntVal(300)
	train4, dev4, test4, err := runCorpus3(t, 42, wiki)
	if err != nil {
		t.Fatal(err)
	}
	if len(test4) != 300 || len(dev4) != 200 || dev4[0] != dev[0] || dev4[199] != dev[199] || len(train4)+300 != len(train) {
		t.Errorf("with test_size 300: train %d (was %d), dev %d, test %d", len(train4), len(train), len(dev4), len(test4))
	}
	inTrain := map[string]bool{}
	for _, s := range train4 {
		inTrain[s.Text] = true
	}
	for _, s := range append(append([]rows.Sentence(nil), dev4...), test4...) {
		if inTrain[s.Text] {
			t.Fatalf("%q is held out and in train", s.Text)
		}
	}
	for _, bad := range []map[string]cty.Value{
		{"sources": cty.ListValEmpty(cty.String)},
		{"sources": strs("wiki", "wiki")},
		{"sources": strs("news")},
		{"sources": strs("wiki"), "dev_size": cty.NumberIntVal(20000)},
		{"sources": strs("wiki"), "min_words": cty.NumberIntVal(-1)},
		{"sources": strs("wiki"), "test_size": cty.NumberIntVal(-1)},
		{"sources": strs("wiki"), "dev_size": cty.NumberIntVal(6000), "test_size": cty.NumberIntVal(6000)},
	} {
		if _, _, err := runCorpus(t, 1, bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func runOrFail(t *testing.T, name string, set map[string]cty.Value) string {
	t.Helper()
	out, err := run(t, name, set)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
