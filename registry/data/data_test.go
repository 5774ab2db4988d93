package data

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/datadir/datadirtest"
	"repro/internal/dataset"
	"repro/internal/rows"
	"repro/registry"
)

// useData points the stages at the real data with a private hash cache.
func useData(t *testing.T) {
	t.Helper()
	dir := datadirtest.Dir(t)
	cache := filepath.Join(t.TempDir(), "verified.json")
	catalogue = func() *dataset.Catalogue { return &dataset.Catalogue{Dirs: []string{dir}, CacheFile: cache} }
	t.Cleanup(func() { catalogue = dataset.Default })
}

// run decodes the type's defaults overridden by set through the registry's
// own parameter path, runs the stage and returns its output directory.
func run(t *testing.T, name string, set map[string]cty.Value) (string, error) {
	t.Helper()
	r := registry.New()
	Register(r)
	st, ok := r.Lookup(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	ps, err := st.ParamSchema()
	if err != nil {
		t.Fatal(err)
	}
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
	out := t.TempDir()
	env := &registry.Env{Params: params, Outputs: map[string]string{st.Outputs[0].Name: out}}
	return out, st.Call(context.Background(), env)
}

func strs(ss ...string) cty.Value {
	vs := make([]cty.Value, len(ss))
	for i, s := range ss {
		vs[i] = cty.StringVal(s)
	}
	return cty.ListVal(vs)
}

func mustRead[T any](t *testing.T, path string) []T {
	t.Helper()
	rs, err := rows.Read[T](path)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestTypesAreVersioned(t *testing.T) {
	r := registry.New()
	Register(r)
	if len(r.Names()) != 11 {
		t.Errorf("types %v", r.Names())
	}
	for _, n := range r.Names() {
		st, _ := r.Lookup(n)
		// Loaders read the catalogue and take no input; the
		// transformations of this family read triplets or documents.
		wantInputs, wantOutputs := 0, 1
		switch n {
		case "data.triplet_sentences", "data.sample":
			wantInputs = 1
		case "data.rerank_sentences":
			wantInputs = 2 // the training split and the evaluation split to exclude
		case "data.fewshot_split":
			wantInputs, wantOutputs = 1, 5
		case "data.corpus":
			wantOutputs = 3 // training, dev and test sentences
		}
		if st.Version < 1 || st.Doc == "" || len(st.Outputs) != wantOutputs || len(st.Inputs) != wantInputs || st.Family() != "data" {
			t.Errorf("%s: %+v", n, st)
		}
	}
}

func TestSTS(t *testing.T) {
	useData(t)
	out, err := run(t, "data.sts", nil)
	if err != nil {
		t.Fatal(err)
	}
	ps := mustRead[rows.STSPair](t, filepath.Join(out, registry.FilePairs))
	per := map[string]int{}
	for _, p := range ps {
		per[p.Task]++
	}
	want := map[string]int{"sts12": 3108, "sts13": 1500, "sts14": 3750, "sts15": 3000, "sts16": 1186, "stsb": 1379, "sickr": 4927}
	for k, n := range want {
		if per[k] != n {
			t.Errorf("%s: %d test pairs, want %d", k, per[k], n)
		}
	}
	out, err = run(t, "data.sts", map[string]cty.Value{"tasks": strs("stsb"), "split": cty.StringVal("dev")})
	if err != nil {
		t.Fatal(err)
	}
	ps = mustRead[rows.STSPair](t, filepath.Join(out, registry.FilePairs))
	if len(ps) != 1500 || ps[0].Subset != "dev" {
		t.Errorf("stsb dev: %d pairs, subset %q", len(ps), ps[0].Subset)
	}
	for _, tc := range []struct {
		set  map[string]cty.Value
		want string
	}{
		{map[string]cty.Value{"tasks": strs("sts12"), "split": cty.StringVal("dev")}, `split: task sts12 has no dev split`},
		{map[string]cty.Value{"split": cty.StringVal("bogus")}, `split: "bogus" is not one of train, dev, test`},
		{map[string]cty.Value{"tasks": strs("sts17")}, `unknown STS task "sts17"`},
		{map[string]cty.Value{"tasks": strs("stsb", "stsb")}, "listed twice"},
		{map[string]cty.Value{"tasks": cty.ListValEmpty(cty.String)}, "empty list"},
	} {
		if _, err := run(t, "data.sts", tc.set); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.set, err, tc.want)
		}
	}
}

func TestSTSSentences(t *testing.T) {
	useData(t)
	out, err := run(t, "data.sts_sentences", nil)
	if err != nil {
		t.Fatal(err)
	}
	ss := mustRead[rows.Sentence](t, filepath.Join(out, registry.FileSentences))
	// Independently: the distinct sentences of every pair of every split.
	c := catalogue()
	distinct := map[string]bool{}
	for _, task := range dataset.STSTasks {
		splits, _ := dataset.STSSplits(task)
		for _, sp := range splits {
			ps, err := c.STS(task, sp)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				distinct[p.Sentence1], distinct[p.Sentence2] = true, true
			}
		}
	}
	seen := map[string]bool{}
	for _, s := range ss {
		if seen[s.Text] || !distinct[s.Text] {
			t.Fatalf("sentence %q repeated or foreign", s.Text)
		}
		seen[s.Text] = true
	}
	if len(ss) != len(distinct) {
		t.Errorf("%d sentences, want %d distinct", len(ss), len(distinct))
	}
	if !strings.HasPrefix(ss[0].Text, "The problem likely will mean") {
		t.Errorf("first sentence %q", ss[0].Text)
	}
	t.Logf("%d distinct sentences in the seven STS tasks (all splits)", len(ss))
	// Deterministic: the same parameters give the same bytes.
	out2, err := run(t, "data.sts_sentences", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(out, registry.FileSentences))
	b, _ := os.ReadFile(filepath.Join(out2, registry.FileSentences))
	if !bytes.Equal(a, b) {
		t.Error("two runs differ")
	}
	// Test splits only: fewer sentences.
	out, err = run(t, "data.sts_sentences", map[string]cty.Value{"splits": strs("test")})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(mustRead[rows.Sentence](t, filepath.Join(out, registry.FileSentences))); n >= len(ss) || n == 0 {
		t.Errorf("test-only corpus has %d sentences, all splits %d", n, len(ss))
	}
	if _, err := run(t, "data.sts_sentences", map[string]cty.Value{"splits": strs("validation")}); err == nil {
		t.Error("unknown split accepted")
	}
}

func TestNLI(t *testing.T) {
	useData(t)
	out, err := run(t, "data.nli", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ts := mustRead[rows.Triplet](t, filepath.Join(out, registry.FileTriplets)); len(ts) != 8816 || ts[0].Negative == "" {
		t.Errorf("%d triplets (want 8816), first %+v", len(ts), ts[0])
	}
	out, err = run(t, "data.nli", map[string]cty.Value{"files": strs("mnli_dev_matched")})
	if err != nil {
		t.Fatal(err)
	}
	if ts := mustRead[rows.Triplet](t, filepath.Join(out, registry.FileTriplets)); len(ts) != 2933 {
		t.Errorf("mnli: %d triplets", len(ts))
	}
	if _, err := run(t, "data.nli", map[string]cty.Value{"files": strs("snli_train")}); err == nil || !strings.Contains(err.Error(), "snli_train") {
		t.Errorf("unknown file: %v", err)
	}
}

func TestSentencesDocumentsRerank(t *testing.T) {
	useData(t)
	out, err := run(t, "data.sentences", map[string]cty.Value{"limit": cty.NumberIntVal(100)})
	if err != nil {
		t.Fatal(err)
	}
	if ss := mustRead[rows.Sentence](t, filepath.Join(out, registry.FileSentences)); len(ss) != 100 || ss[0].Text != "YMCA in South Australia" {
		t.Errorf("wiki: %d, first %+v", len(ss), ss[0])
	}
	if testing.Short() {
		t.Skip("the Brown and BBC parts read 5.7 MB of gzip JSON")
	}
	out, err = run(t, "data.sentences", map[string]cty.Value{"source": cty.StringVal("brown")})
	if err != nil {
		t.Fatal(err)
	}
	if ss := mustRead[rows.Sentence](t, filepath.Join(out, registry.FileSentences)); len(ss) != 57340 {
		t.Errorf("brown: %d sentences", len(ss))
	}
	out, err = run(t, "data.sentences", map[string]cty.Value{"source": cty.StringVal("bbc")})
	if err != nil {
		t.Fatal(err)
	}
	if ss := mustRead[rows.Sentence](t, filepath.Join(out, registry.FileSentences)); len(ss) != 39145 || ss[0].Text != "Quarterly profits at US media giant TimeWarner jumped 76% to $1.13bn (£600m) for the three months to December, from $639m year-earlier." {
		t.Errorf("bbc: %d sentences, first %q", len(ss), ss[0].Text)
	}
	out, err = run(t, "data.documents", nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := mustRead[rows.Document](t, filepath.Join(out, registry.FileDocuments))
	if len(docs) != 2089 || docs[0].Headline != "Ad sales boost Time Warner profit" || docs[0].Category != "business" {
		t.Errorf("bbc: %d docs, first %+v", len(docs), docs[0].Headline)
	}
	out, err = run(t, "data.documents", map[string]cty.Value{"drop_duplicates": cty.False})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(mustRead[rows.Document](t, filepath.Join(out, registry.FileDocuments))); n != 2225 {
		t.Errorf("bbc with duplicates: %d", n)
	}
	out, err = run(t, "data.documents", map[string]cty.Value{"source": cty.StringVal("brown"), "limit": cty.NumberIntVal(3)})
	if err != nil {
		t.Fatal(err)
	}
	if docs := mustRead[rows.Document](t, filepath.Join(out, registry.FileDocuments)); len(docs) != 3 || docs[0].ID != "ca01" {
		t.Errorf("brown docs %d", len(docs))
	}
	if _, err := run(t, "data.documents", map[string]cty.Value{"source": cty.StringVal("reuters")}); err == nil {
		t.Error("unknown source accepted")
	}
	out, err = run(t, "data.rerank", nil)
	if err != nil {
		t.Fatal(err)
	}
	if qs := mustRead[rows.RerankQuery](t, filepath.Join(out, registry.FileQueries)); len(qs) != 41 {
		t.Errorf("rerank dev: %d queries", len(qs))
	}
	if _, err := run(t, "data.rerank", map[string]cty.Value{"split": cty.StringVal("test")}); err == nil || !strings.Contains(err.Error(), "unknown split") {
		t.Errorf("rerank test split: %v", err)
	}
}

func TestCorruptDataStopsTheStage(t *testing.T) {
	src := datadirtest.Dir(t)
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(src, "nli/snli_dev.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "nli"), 0o755)
	os.WriteFile(filepath.Join(dir, "nli/snli_dev.tsv"), bytes.Replace(b, []byte("\t"), []byte(" "), 1), 0o644)
	catalogue = func() *dataset.Catalogue { return &dataset.Catalogue{Dirs: []string{dir}} }
	t.Cleanup(func() { catalogue = dataset.Default })
	if _, err := run(t, "data.nli", map[string]cty.Value{"files": strs("snli_dev")}); err == nil || !strings.Contains(err.Error(), "sha256 mismatch") {
		t.Errorf("corrupt file: %v", err)
	}
	if _, err := run(t, "data.nli", map[string]cty.Value{"files": strs("mnli_dev_matched")}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing file: %v", err)
	}
}

func TestTripletSentences(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	out := filepath.Join(dir, "out")
	for _, d := range []string{in, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ts := []rows.Triplet{{Anchor: "a", Positive: "b", Negative: "c"}, {Anchor: "a", Positive: "d", Negative: "b"}}
	if err := rows.Write(filepath.Join(in, registry.FileTriplets), ts); err != nil {
		t.Fatal(err)
	}
	typ := tripletSentencesType()
	env := &registry.Env{Params: &TripletSentencesParams{Columns: []string{"anchor", "positive"}},
		Inputs:  map[string]registry.Artifact{"triplets": {Kind: registry.KindTriplets, Dir: in}},
		Outputs: map[string]string{"sentences": out}}
	if err := typ.Call(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	got, err := rows.Read[rows.Sentence](filepath.Join(out, registry.FileSentences))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, s := range got {
		texts = append(texts, s.Text)
	}
	if strings.Join(texts, ",") != "a,b,d" {
		t.Errorf("sentences = %v, want a,b,d (anchor and positive, distinct, in order)", texts)
	}
	env.Params = &TripletSentencesParams{Columns: []string{"premise"}}
	if err := typ.Call(context.Background(), env); err == nil || !strings.Contains(err.Error(), `columns: "premise" is not one of anchor, positive, negative`) {
		t.Errorf("bad column: err = %v", err)
	}
}
