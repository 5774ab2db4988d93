package data

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/rows"
	"repro/registry"
)

// runSplit runs data.fewshot_split on docs and returns its outputs' rows.
func runSplit(t *testing.T, docs []rows.Document, set map[string]cty.Value, seed int64) (map[string][]rows.Document, error) {
	t.Helper()
	res, _, err := runOnDocuments(t, "data.fewshot_split", docs, set, seed)
	return res, err
}

// runOnDocuments runs the stage type name on docs (its input "documents")
// and returns its outputs' rows and directories.
func runOnDocuments(t *testing.T, name string, docs []rows.Document, set map[string]cty.Value, seed int64) (map[string][]rows.Document, map[string]string, error) {
	t.Helper()
	r := registry.New()
	Register(r)
	st, _ := r.Lookup(name)
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
	in := t.TempDir()
	if err := rows.Write(filepath.Join(in, registry.FileDocuments), docs); err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{}
	for _, o := range st.Outputs {
		outs[o.Name] = t.TempDir()
	}
	env := &registry.Env{Params: params, Seed: seed, Outputs: outs,
		Inputs: map[string]registry.Artifact{"documents": {Kind: registry.KindDocuments, Dir: in}}}
	if err := st.Call(context.Background(), env); err != nil {
		return nil, nil, err
	}
	res := map[string][]rows.Document{}
	for name, dir := range outs {
		res[name] = mustRead[rows.Document](t, filepath.Join(dir, registry.FileDocuments))
	}
	return res, outs, nil
}

func labelled(n int) []rows.Document {
	docs := make([]rows.Document, n)
	for i := range docs {
		docs[i] = rows.Document{ID: fmt.Sprintf("d%03d", i), Headline: fmt.Sprintf("headline %d", i), Sentences: []string{"s"}}
	}
	return docs
}

func ids(docs []rows.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out
}

func TestFewShotSplit(t *testing.T) {
	set := map[string]cty.Value{"validation": cty.NumberIntVal(10), "test": cty.NumberIntVal(20), "labels": cty.NumberIntVal(30)}
	res, err := runSplit(t, labelled(100), set, 42)
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"validation": 10, "test": 20, "labeled": 30, "labeled_all": 70, "zero_shot": 90} {
		if len(res[name]) != n {
			t.Errorf("%s: %d documents, want %d", name, len(res[name]), n)
		}
		if !sort.StringsAreSorted(ids(res[name])) {
			t.Errorf("%s is not in corpus order", name)
		}
	}
	in := func(name string) map[string]bool {
		m := map[string]bool{}
		for _, id := range ids(res[name]) {
			m[id] = true
		}
		return m
	}
	val, test, all, zero := in("validation"), in("test"), in("labeled_all"), in("zero_shot")
	for id := range val {
		if test[id] || all[id] || zero[id] {
			t.Errorf("validation document %s is in a test or training set", id)
		}
	}
	for id := range test {
		if all[id] {
			t.Errorf("test document %s is a training document", id)
		}
	}
	for _, id := range ids(res["labeled"]) {
		if !all[id] {
			t.Errorf("labeled %s not in labeled_all", id)
		}
	}
	// A smaller label budget keeps validation and test as they were.
	small, _ := runSplit(t, labelled(100), map[string]cty.Value{"validation": cty.NumberIntVal(10), "test": cty.NumberIntVal(20), "labels": cty.NumberIntVal(5)}, 42)
	if strings.Join(ids(small["test"]), ",") != strings.Join(ids(res["test"]), ",") {
		t.Error("the test set changed with the label budget")
	}
	other, _ := runSplit(t, labelled(100), set, 1)
	if strings.Join(ids(other["test"]), ",") == strings.Join(ids(res["test"]), ",") {
		t.Error("the seed does not change the split")
	}
}

func TestFewShotSplitErrors(t *testing.T) {
	docs := labelled(50)
	docs[7].Headline = ""
	set := map[string]cty.Value{"validation": cty.NumberIntVal(10), "test": cty.NumberIntVal(20), "labels": cty.NumberIntVal(10)}
	if _, err := runSplit(t, docs, set, 1); err == nil || !strings.Contains(err.Error(), `row 8 (id "d007"): no headline`) {
		t.Errorf("missing headline: %v", err)
	}
	if _, err := runSplit(t, labelled(50), map[string]cty.Value{"labels": cty.NumberIntVal(10)}, 1); err == nil || !strings.Contains(err.Error(), "leave none") {
		t.Errorf("too few documents: %v", err)
	}
	if _, err := runSplit(t, labelled(50), map[string]cty.Value{"validation": cty.NumberIntVal(10), "test": cty.NumberIntVal(20), "labels": cty.NumberIntVal(21)}, 1); err == nil || !strings.Contains(err.Error(), "pool holds 20") {
		t.Errorf("too many labels: %v", err)
	}
}
