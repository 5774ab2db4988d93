package annotate

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/encoder"
	"repro/internal/rows"
	"repro/registry"
)

// letters embeds a text as the counts of the letters a-e in it: topics a
// reader can see ("aaa" and "aab" are close, "ccc" far from both).
type letters struct{ calls *int }

const lettersType = "annotate_test.letters"

var encodeCalls int

func init() {
	encoder.RegisterType(lettersType, func(string, json.RawMessage) (encoder.Encoder, error) {
		return letters{calls: &encodeCalls}, nil
	})
}

func (letters) Dim() int { return 5 }

func (l letters) Encode(_ context.Context, ss []string) ([][]float32, error) {
	*l.calls += len(ss)
	out := make([][]float32, len(ss))
	for i, s := range ss {
		v := make([]float32, 5)
		for _, r := range s {
			if r >= 'a' && r <= 'e' {
				v[r-'a']++
			}
		}
		out[i] = v
	}
	return out, nil
}

func encoderArtifact(t *testing.T) registry.Artifact {
	t.Helper()
	dir := t.TempDir()
	if err := encoder.WriteMeta(dir, encoder.Meta{Type: lettersType}); err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Kind: registry.KindEncoder, Dir: dir, Digest: "test"}
}

func docsArtifact(t *testing.T, docs []rows.Document) registry.Artifact {
	t.Helper()
	dir := t.TempDir()
	if err := rows.Write(filepath.Join(dir, registry.FileDocuments), docs); err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Kind: registry.KindDocuments, Dir: dir, Digest: "test"}
}

type result struct {
	pairs []rows.DocPair
	stats map[string]float64
}

// run runs stage type name with its defaults overridden by set.
func run(t *testing.T, name string, set map[string]cty.Value, inputs map[string]registry.Artifact, seed int64) (result, error) {
	t.Helper()
	r := registry.New()
	Register(r)
	st, ok := r.Lookup(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	ps, _ := st.ParamSchema()
	attrs := map[string]cty.Value{}
	for _, p := range ps {
		attrs[p.Name] = p.Default
	}
	for k, v := range set {
		if _, ok := attrs[k]; !ok {
			t.Fatalf("%s has no parameter %s", name, k)
		}
		attrs[k] = v
	}
	params, err := st.DecodeParams(cty.ObjectVal(attrs))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{"pairs": t.TempDir(), "stats": t.TempDir()}
	env := &registry.Env{Params: params, Inputs: inputs, Outputs: out, Seed: seed,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := st.Call(context.Background(), env); err != nil {
		return result{}, err
	}
	var res result
	if res.pairs, err = rows.Read[rows.DocPair](filepath.Join(out["pairs"], registry.FilePairs)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out["stats"], registry.FileMetrics))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res.stats); err != nil {
		t.Fatal(err)
	}
	return res, nil
}

var testDocs = []rows.Document{
	{ID: "d1", Headline: "h", Sentences: []string{"aaa", "ccc", "aab", "ccd", "aa"}},
	{ID: "d2", Sentences: []string{"only one"}},
	{ID: "d3", Sentences: []string{"bbb", "eee"}},
}

func pairsText(ps []rows.DocPair) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Doc+":"+p.Anchor+"|"+p.Positive)
	}
	return out
}

func TestIDC(t *testing.T) {
	in := map[string]registry.Artifact{"model": encoderArtifact(t), "documents": docsArtifact(t, testDocs)}
	encodeCalls = 0
	res, err := run(t, "annotate.idc", map[string]cty.Value{"similarity": cty.StringVal("cosine")}, in, 0)
	if err != nil {
		t.Fatal(err)
	}
	// d1: the a-sentences form one cluster, the c-sentences another; d2 is
	// skipped; d3's two sentences are each other's top-1 (the only choice).
	want := []string{"d1:aaa|aab", "d1:aaa|aa", "d1:aab|aa", "d1:ccc|ccd", "d3:bbb|eee"}
	if got := pairsText(res.pairs); !reflect.DeepEqual(got, want) {
		t.Errorf("pairs\n got %v\nwant %v", got, want)
	}
	if encodeCalls != 8 {
		t.Errorf("encoded %d sentences, want the 8 distinct ones", encodeCalls)
	}
	for k, v := range map[string]float64{"documents": 3, "skipped": 1, "clusters": 3, "pairs": 5, "singletons": 0, "largest": 3, "clusters_per_document": 1.5} {
		if res.stats[k] != v {
			t.Errorf("stats[%s] = %v, want %v", k, res.stats[k], v)
		}
	}
	// K = 4 keeps every edge of d1: one cluster, 10 pairs.
	res, err = run(t, "annotate.idc", map[string]cty.Value{"top_k": cty.NumberIntVal(4)}, in, 0)
	if err != nil || res.stats["pairs"] != 11 || res.stats["clusters"] != 2 {
		t.Errorf("top_k 4: %v %v", res.stats, err)
	}
	// The extra documents are appended.
	in["extra"] = docsArtifact(t, []rows.Document{{ID: "b1", Sentences: []string{"dd", "ddd"}}})
	res, err = run(t, "annotate.idc", nil, in, 0)
	if err != nil || res.stats["documents"] != 4 || res.pairs[len(res.pairs)-1].Doc != "b1" {
		t.Errorf("extra: %v %v", res.stats, err)
	}
}

func TestIDCErrors(t *testing.T) {
	in := map[string]registry.Artifact{"model": encoderArtifact(t), "documents": docsArtifact(t, testDocs)}
	for _, c := range []struct {
		set  map[string]cty.Value
		in   map[string]registry.Artifact
		want string
	}{
		{map[string]cty.Value{"top_k": cty.NumberIntVal(0)}, in, "top_k: 0 must be at least 1"},
		{map[string]cty.Value{"similarity": cty.StringVal("l2")}, in, "similarity"},
		{map[string]cty.Value{"max_length": cty.NumberIntVal(-1)}, in, "max_length: -1 is negative"},
		// Only one-sentence documents: every one skipped, no pair at all.
		{nil, map[string]registry.Artifact{"model": in["model"], "documents": docsArtifact(t, []rows.Document{{ID: "x", Sentences: []string{"a"}}})},
			"no positive pair from 1 documents (1 skipped"},
		{nil, map[string]registry.Artifact{"model": in["model"], "documents": docsArtifact(t, []rows.Document{{ID: "x", Sentences: []string{"a", " "}}})},
			`row 1 (id "x"): sentence 2 is empty`},
	} {
		_, err := run(t, "annotate.idc", c.set, c.in, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}

func TestKMeans(t *testing.T) {
	in := map[string]registry.Artifact{"model": encoderArtifact(t), "documents": docsArtifact(t, testDocs)}
	set := map[string]cty.Value{"clusters": cty.NumberIntVal(2), "similarity": cty.StringVal("cosine")}
	a, err := run(t, "annotate.idc_kmeans", set, in, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := run(t, "annotate.idc_kmeans", set, in, 7)
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed, different pairs")
	}
	// Pairs only ever join sentences of one document.
	for _, p := range a.pairs {
		if p.Doc == "d2" {
			t.Errorf("pair from the one-sentence document: %v", p)
		}
	}
	if a.stats["documents"] != 3 || a.stats["skipped"] != 1 || a.stats["kmeans_converged"] != 1 {
		t.Errorf("stats %v", a.stats)
	}
	// More clusters than distinct sentences is a clear error.
	_, err = run(t, "annotate.idc_kmeans", map[string]cty.Value{"clusters": cty.NumberIntVal(50)}, in, 7)
	if err == nil || !strings.Contains(err.Error(), "at least as many points as clusters") {
		t.Errorf("50 clusters: %v", err)
	}
	_, err = run(t, "annotate.idc_kmeans", map[string]cty.Value{"clusters": cty.NumberIntVal(0)}, in, 7)
	if err == nil || !strings.Contains(err.Error(), "clusters: 0; must be at least 1") {
		t.Errorf("0 clusters: %v", err)
	}
}

func TestConponoAndICT(t *testing.T) {
	in := map[string]registry.Artifact{"documents": docsArtifact(t, testDocs)}
	res, err := run(t, "annotate.conpono", map[string]cty.Value{"window": cty.NumberIntVal(1)}, in, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"d1:aaa|ccc", "d1:ccc|aab", "d1:aab|ccd", "d1:ccd|aa", "d3:bbb|eee"}
	if got := pairsText(res.pairs); !reflect.DeepEqual(got, want) {
		t.Errorf("conpono\n got %v\nwant %v", got, want)
	}
	if res.stats["skipped"] != 1 {
		t.Errorf("conpono stats %v", res.stats)
	}
	res, err = run(t, "annotate.ict", map[string]cty.Value{"window": cty.NumberIntVal(1)}, in, 0)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"d1:aaa|ccc", "d1:ccc|aaa aab", "d1:aab|ccc ccd", "d1:ccd|aab aa", "d1:aa|ccd", "d3:bbb|eee", "d3:eee|bbb"}
	if got := pairsText(res.pairs); !reflect.DeepEqual(got, want) {
		t.Errorf("ict\n got %v\nwant %v", got, want)
	}
	if _, err := run(t, "annotate.conpono", map[string]cty.Value{"window": cty.NumberIntVal(0)}, in, 0); err == nil {
		t.Error("window 0 accepted")
	}
	if _, err := run(t, "annotate.ict", map[string]cty.Value{"window": cty.NumberIntVal(-1)}, in, 0); err == nil {
		t.Error("window -1 accepted")
	}
}

func TestRegistered(t *testing.T) {
	r := registry.New()
	Register(r)
	if got := strings.Join(r.Names(), " "); got != "annotate.conpono annotate.ict annotate.idc annotate.idc_kmeans" {
		t.Fatalf("types %s", got)
	}
	for _, n := range r.Names() {
		st, _ := r.Lookup(n)
		ps, err := st.ParamSchema()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.Doc == "" {
				t.Errorf("%s: parameter %s has no doc", n, p.Name)
			}
		}
		if o, ok := st.Output("pairs"); !ok || o.Kind != registry.KindDocPairs {
			t.Errorf("%s: output pairs", n)
		}
	}
}

// TestBadDocuments covers the bad input for the pair stages: one-
// sentence (and sentence-less) documents are skipped and counted, a
// corpus that yields no pair at all is a clear error rather than an empty
// pairs file, and a K-means cluster left empty is counted, not a crash.
func TestBadDocuments(t *testing.T) {
	model := encoderArtifact(t)
	withEmpty := append(append([]rows.Document(nil), testDocs...), rows.Document{ID: "e"})
	in := map[string]registry.Artifact{"model": model, "documents": docsArtifact(t, withEmpty)}
	for _, name := range []string{"annotate.idc", "annotate.conpono", "annotate.ict"} {
		res, err := run(t, name, nil, in, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.stats["documents"] != 4 || res.stats["skipped"] != 2 {
			t.Errorf("%s: stats %v, want 4 documents, 2 skipped (d2 has one sentence, e none)", name, res.stats)
		}
		for _, p := range res.pairs {
			if p.Doc == "d2" || p.Doc == "e" {
				t.Errorf("%s: pair from a document with fewer than two sentences: %v", name, p)
			}
		}
	}

	// "ab" and "ba" count the same letters: two points, one place, so the
	// second of two K-means clusters ends empty.
	same := map[string]registry.Artifact{"model": model, "documents": docsArtifact(t, []rows.Document{{ID: "s", Sentences: []string{"ab", "ba", "ab"}}})}
	res, err := run(t, "annotate.idc_kmeans", map[string]cty.Value{"clusters": cty.NumberIntVal(2)}, same, 3)
	if err != nil {
		t.Fatal(err)
	}
	if res.stats["empty_clusters"] != 1 || res.stats["pairs"] != 3 || res.stats["clusters"] != 1 {
		t.Errorf("empty global cluster: stats %v, want empty_clusters 1, one group of 3 sentences (3 pairs)", res.stats)
	}

	single := map[string]registry.Artifact{"model": model, "documents": docsArtifact(t, []rows.Document{
		{ID: "x", Sentences: []string{"aa"}}, {ID: "y", Sentences: []string{"bb"}}})}
	none := map[string]registry.Artifact{"model": model, "documents": docsArtifact(t, []rows.Document{})}
	for _, c := range []struct {
		name string
		set  map[string]cty.Value
		in   map[string]registry.Artifact
		want string
	}{
		{"annotate.idc_kmeans", map[string]cty.Value{"clusters": cty.NumberIntVal(1)}, single, "no positive pair from 2 documents (2 skipped"},
		{"annotate.conpono", nil, single, "no positive pair from 2 documents (2 skipped"},
		{"annotate.ict", nil, single, "no positive pair from 2 documents (2 skipped"},
		{"annotate.idc", map[string]cty.Value{"top_k": cty.NumberIntVal(-1)}, in, "top_k: -1 must be at least 1"},
		{"annotate.idc", nil, none, "documents: no documents"},
		{"annotate.idc_kmeans", nil, none, "documents: no documents"},
	} {
		if _, err := run(t, c.name, c.set, c.in, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: err = %v, want %q", c.name, c.set, err, c.want)
		}
	}
}
