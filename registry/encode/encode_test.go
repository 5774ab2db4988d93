package encode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/datadir/datadirtest"
	"repro/internal/dataset"
	"repro/internal/encoder"
	"repro/internal/rows"
	"repro/registry"
)

// run decodes defaults overridden by set through the registry's parameter
// path and runs the stage; it returns the encoder artifact directory.
func run(t *testing.T, name string, set map[string]cty.Value, inputs map[string]registry.Artifact) (string, error) {
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
	env := &registry.Env{Params: params, Inputs: inputs, Outputs: map[string]string{"encoder": out}}
	return out, st.Call(context.Background(), env)
}

func TestTypes(t *testing.T) {
	r := registry.New()
	Register(r)
	if got := strings.Join(r.Names(), " "); got != "encode.file encode.glove_avg encode.pooling encode.tfidf" {
		t.Errorf("types %s", got)
	}
	for _, n := range r.Names() {
		st, _ := r.Lookup(n)
		want := 1
		if n == "encode.file" {
			want = 2 // encoder.json names the source by its base name
		}
		if st.Version != want || st.Outputs[0].Kind != registry.KindEncoder {
			t.Errorf("%s: %+v", n, st)
		}
	}
	for _, typ := range []string{"file", "glove_avg", "tfidf"} {
		if !strings.Contains(strings.Join(encoder.Types(), " "), typ) {
			t.Errorf("encoder type %s not registered with package encoder", typ)
		}
	}
}

func TestGloVeAvgStage(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 33 MB of GloVe vectors")
	}
	dir := datadirtest.Dir(t)
	catalogue = func() *dataset.Catalogue { return &dataset.Catalogue{Dirs: []string{dir}} }
	t.Cleanup(func() { catalogue = dataset.Default })
	out, err := run(t, "encode.glove_avg", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := encoder.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := enc.Encode(context.Background(), []string{"A man is playing a guitar.", "qqqzzz"})
	if err != nil {
		t.Fatal(err)
	}
	if enc.Dim() != 100 || vs[0][0] == 0 || vs[1][0] != 0 {
		t.Errorf("dim %d, vectors %v / %v", enc.Dim(), vs[0][:2], vs[1][:2])
	}
	if _, err := run(t, "encode.glove_avg", map[string]cty.Value{"vectors": cty.StringVal("sts12")}, nil); err == nil || !strings.Contains(err.Error(), "not a word-vector dataset") {
		t.Errorf("non-vector dataset: %v", err)
	}
}

func TestTFIDFStage(t *testing.T) {
	corpus := t.TempDir()
	rows.Write(filepath.Join(corpus, registry.FileSentences), []rows.Sentence{
		{Text: "the cat sat on the mat"}, {Text: "the dog sat on the log"}, {Text: "a bird sang"},
	})
	in := map[string]registry.Artifact{"corpus": {Kind: registry.KindSentences, Dir: corpus}}
	out, err := run(t, "encode.tfidf", map[string]cty.Value{"max_features": cty.NumberIntVal(4)}, in)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := encoder.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	// Top 4 by count: the (4), on (2), sat (2), then bird/cat/dog/log/mat/sang
	// tie at 1 and the first alphabetically, bird, is kept.
	if enc.Dim() != 4 {
		t.Fatalf("dim %d", enc.Dim())
	}
	b, _ := os.ReadFile(filepath.Join(out, "vocab.tsv"))
	if terms := strings.Fields(string(b)); terms[0] != "bird" || terms[3] != "on" || terms[6] != "sat" || terms[9] != "the" {
		t.Errorf("vocab.tsv:\n%s", b)
	}
	if _, err := run(t, "encode.tfidf", nil, nil); err == nil || !strings.Contains(err.Error(), `input "corpus"`) {
		t.Errorf("no input: %v", err)
	}
	os.WriteFile(filepath.Join(corpus, registry.FileSentences), []byte("{\"txt\": 1}\n"), 0o644)
	if _, err := run(t, "encode.tfidf", nil, in); err == nil || !strings.Contains(err.Error(), "sentences.jsonl:1:") {
		t.Errorf("bad corpus: %v", err)
	}
}

func TestFileStage(t *testing.T) {
	src := filepath.Join(t.TempDir(), "vectors.jsonl")
	body := []byte(`{"text": "hello", "vector": [1, 0]}` + "\n" + `{"text": "world", "vector": [0, 1]}` + "\n")
	os.WriteFile(src, body, 0o644)
	sum := sha256.Sum256(body)
	out, err := run(t, "encode.file", map[string]cty.Value{"path": cty.StringVal(src), "sha256": cty.StringVal(hex.EncodeToString(sum[:]))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := encoder.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if vs, err := enc.Encode(context.Background(), []string{"world"}); err != nil || vs[0][1] != 1 {
		t.Errorf("%v %v", vs, err)
	}
	if _, err := run(t, "encode.file", map[string]cty.Value{"path": cty.StringVal(src), "sha256": cty.StringVal(strings.Repeat("ab", 32))}, nil); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("wrong sha256: %v", err)
	}
	if _, err := run(t, "encode.file", nil, nil); err == nil || !strings.Contains(err.Error(), "path: required") {
		t.Errorf("no path: %v", err)
	}
	os.WriteFile(src, []byte(`{"text": "hello", "vector": [1, 0]}`+"\n"+`{"text": "x", "vector": []}`+"\n"), 0o644)
	if _, err := run(t, "encode.file", map[string]cty.Value{"path": cty.StringVal(src)}, nil); err == nil || !strings.Contains(err.Error(), src+":2:") {
		t.Errorf("bad row: %v", err)
	}
}
