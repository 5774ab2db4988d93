package nonneural

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"repro/internal/datadir/datadirtest"
	"repro/internal/dataset"
	"repro/internal/encoder"
)

var ctx = context.Background()

func TestTokenize(t *testing.T) {
	vocab := map[string]bool{"well-known": true, "u.s.": true}
	known := func(w string) bool { return vocab[w] }
	for in, want := range map[string]string{
		"The cat sat on the mat.":           "the cat sat on the mat .",
		`He said "hello," (twice)!`:         `he said " hello , " ( twice ) !`,
		"I don't think it's John's":         "i do n't think it 's john 's",
		"We’re here; they’ll go":            "we 're here ; they 'll go",
		"a well-known state-of-the-art fix": "a well-known state of the art fix",
		"the U.S. and e.g. 1,650":           "the u.s. and e.g . 1,650",
		"$11.1bn  (£600m)":                  "$ 11.1bn ( £ 600m )",
		"and/or":                            "and or",
		"":                                  "",
	} {
		if got := strings.Join(Tokenize(in, known), " "); got != want {
			t.Errorf("Tokenize(%q) = %q, want %q", in, got, want)
		}
	}
}

func tinyVectors() *dataset.Vectors {
	return &dataset.Vectors{
		Words: []string{"the", "cat", "sat", ".", "well-known"},
		Dim:   3,
		Data: []float32{
			1, 0, 0,
			0, 2, 0,
			0, 0, 4,
			1, 1, 1,
			-1, 0.5, 0,
		},
	}
}

func TestGloVeAvgHandComputed(t *testing.T) {
	Register()
	dir := t.TempDir()
	if err := WriteGloVeAvg(dir, tinyVectors(), "tiny"); err != nil {
		t.Fatal(err)
	}
	enc, err := encoder.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if enc.Dim() != 3 {
		t.Fatalf("dim %d", enc.Dim())
	}
	got, err := enc.Encode(ctx, []string{"The cat sat", "the CAT sat.", "zebra unicorn", "a well-known cat", "the the cat"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{
		{1.0 / 3, 2.0 / 3, 4.0 / 3}, // (the + cat + sat) / 3
		{0.5, 0.75, 1.25},           // (the + cat + sat + .) / 4
		{0, 0, 0},                   // nothing known: zero vector
		{-0.5, 1.25, 0},             // (well-known + cat) / 2; "a" unknown
		{2.0 / 3, 2.0 / 3, 0},       // repeats count: (2 the + cat) / 3
	}
	for i := range want {
		for k := range want[i] {
			if math.Abs(float64(got[i][k]-want[i][k])) > 1e-6 {
				t.Errorf("sentence %d: %v, want %v", i, got[i], want[i])
				break
			}
		}
	}
	// A truncated vector file is refused with its expected size.
	os.WriteFile(filepath.Join(dir, gloveVectors), make([]byte, 7), 0o644)
	if _, err := encoder.Open(dir); err == nil || !strings.Contains(err.Error(), "want 60") {
		t.Errorf("truncated vectors: %v", err)
	}
}

// spearman is the Pearson correlation of average ranks (ties averaged).
func spearman(x, y []float64) float64 {
	rank := func(v []float64) []float64 {
		idx := make([]int, len(v))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
		r := make([]float64, len(v))
		for i := 0; i < len(idx); {
			j := i
			for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
				j++
			}
			for k := i; k <= j; k++ {
				r[idx[k]] = float64(i+j)/2 + 1
			}
			i = j + 1
		}
		return r
	}
	rx, ry := rank(x), rank(y)
	var mx, my float64
	for i := range rx {
		mx += rx[i]
		my += ry[i]
	}
	mx /= float64(len(rx))
	my /= float64(len(ry))
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// stsbSpearman encodes STS-B test in batches (TF-IDF vectors are wide) and
// returns the Spearman correlation x100 of cosine with the gold scores.
func stsbSpearman(t *testing.T, enc encoder.Encoder) float64 {
	t.Helper()
	c := &dataset.Catalogue{Dirs: []string{datadirtest.Dir(t)}}
	ps, err := c.STS("stsb", "test")
	if err != nil {
		t.Fatal(err)
	}
	var sims, gold []float64
	for i := 0; i < len(ps); i += 200 {
		batch := ps[i:min(i+200, len(ps))]
		var a, b []string
		for _, p := range batch {
			a, b = append(a, p.Sentence1), append(b, p.Sentence2)
		}
		ea, err := enc.Encode(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		eb, err := enc.Encode(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for j, p := range batch {
			sims = append(sims, cosine(ea[j], eb[j]))
			gold = append(gold, p.Score)
		}
	}
	return 100 * spearman(sims, gold)
}

func TestGloVeAvgOnSTSB(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 33 MB of GloVe vectors")
	}
	Register()
	v, err := (&dataset.Catalogue{Dirs: []string{datadirtest.Dir(t)}}).GloVe("glove.6B.100d")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteGloVeAvg(dir, v, "glove.6B.100d"); err != nil {
		t.Fatal(err)
	}
	enc, err := encoder.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The artifact reproduces the table exactly: "the" is row 0.
	e, _ := enc.Encode(ctx, []string{"the"})
	if !reflect.DeepEqual(e[0], v.Vector(0)) {
		t.Errorf("encode(the) = %v..., want row 0", e[0][:3])
	}
	rho := stsbSpearman(t, enc)
	// The STS Benchmark's own averaged-word-embedding baseline scores 40.6
	// on test (52.4 on dev); SBERT/SimCSE report 58.02 with 840B 300d
	// vectors. This 100d table lacks "a", "i" and numbers; it scores about
	// 41.8 here (55.5 on dev).
	t.Logf("GloVe 100d average, STS-B test Spearman x100 = %.2f", rho)
	if rho < 35 || rho > 60 {
		t.Errorf("STS-B Spearman %.2f outside the plausible 35..60", rho)
	}
}

type golden struct {
	Corpus  []string `json:"corpus"`
	Queries []string `json:"queries"`
	Cases   []struct {
		MaxFeatures *int        `json:"max_features"`
		Vocabulary  []string    `json:"vocabulary"`
		IDF         []float64   `json:"idf"`
		Vectors     [][]float64 `json:"vectors"`
	} `json:"cases"`
}

func TestTFIDFMatchesSklearn(t *testing.T) {
	Register()
	b, err := os.ReadFile("testdata/tfidf_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Cases {
		max := 0
		if c.MaxFeatures != nil {
			max = *c.MaxFeatures
		}
		m, err := FitTFIDF(g.Corpus, max)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(m.Terms, c.Vocabulary) {
			t.Fatalf("max_features %d: vocabulary\n%v\nwant\n%v", max, m.Terms, c.Vocabulary)
		}
		for i := range c.IDF {
			if math.Abs(m.IDF[i]-c.IDF[i]) > 1e-12 {
				t.Errorf("idf[%s] = %v, want %v", m.Terms[i], m.IDF[i], c.IDF[i])
			}
		}
		dir := t.TempDir()
		if err := m.Write(dir); err != nil {
			t.Fatal(err)
		}
		opened, err := encoder.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, enc := range []encoder.Encoder{m, opened} {
			got, err := enc.Encode(ctx, g.Queries)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range g.Queries {
				for k := range c.Vectors[i] {
					if math.Abs(float64(got[i][k])-c.Vectors[i][k]) > 1e-6 {
						t.Errorf("max_features %d, %q, %s: %v, want %v", max, q, m.Terms[k], got[i][k], c.Vectors[i][k])
					}
				}
			}
		}
	}
}

func TestTFIDFErrors(t *testing.T) {
	Register()
	if _, err := FitTFIDF(nil, 0); err == nil {
		t.Error("empty corpus accepted")
	}
	if _, err := FitTFIDF([]string{"a b c", "x !"}, 0); err == nil || !strings.Contains(err.Error(), "no token") {
		t.Errorf("one-letter corpus: %v", err)
	}
	if _, err := FitTFIDF([]string{"ab"}, -1); err == nil {
		t.Error("negative max_features accepted")
	}
	m, _ := FitTFIDF([]string{"ab cd", "cd ef"}, 0)
	dir := t.TempDir()
	if err := m.Write(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, tfidfVocab), []byte("ab\t1\t1.4\ncd\ttwo\t1\n"), 0o644)
	if _, err := encoder.Open(dir); err == nil || !strings.Contains(err.Error(), "vocab.tsv:2: bad df") {
		t.Errorf("bad vocab: %v", err)
	}
}

func TestTFIDFOnSTSB(t *testing.T) {
	if testing.Short() {
		t.Skip("fits on the wiki corpus")
	}
	c := &dataset.Catalogue{Dirs: []string{datadirtest.Dir(t)}}
	wiki, err := c.Wiki()
	if err != nil {
		t.Fatal(err)
	}
	m, err := FitTFIDF(wiki, 20000)
	if err != nil {
		t.Fatal(err)
	}
	rho := stsbSpearman(t, m)
	t.Logf("TF-IDF fitted on wiki (11,914 sentences, %d terms), STS-B test Spearman x100 = %.2f", m.Dim(), rho)
	if rho < 40 || rho > 75 {
		t.Errorf("STS-B Spearman %.2f implausible for tf-idf", rho)
	}
}

func TestFileVectors(t *testing.T) {
	Register()
	dir := t.TempDir()
	src := filepath.Join(dir, "vecs.jsonl")
	os.WriteFile(src, []byte(`{"text": "a cat", "vector": [1, 2]}
{"text": "a \"quoted\" dog", "vector": [0.5, -1]}

{"text": "a cat", "vector": [1, 2]}
`), 0o644)
	art := t.TempDir()
	if err := WriteFileVectors(art, src); err != nil {
		t.Fatal(err)
	}
	os.Remove(src) // the artifact is self-contained
	enc, err := encoder.Open(art)
	if err != nil {
		t.Fatal(err)
	}
	got, err := enc.Encode(ctx, []string{`a "quoted" dog`, "a cat"})
	if err != nil {
		t.Fatal(err)
	}
	if enc.Dim() != 2 || !reflect.DeepEqual(got, [][]float32{{0.5, -1}, {1, 2}}) {
		t.Errorf("dim %d, got %v", enc.Dim(), got)
	}
	_, err = enc.Encode(ctx, []string{"a cat", "A cat", "a bird"})
	if err == nil || !strings.Contains(err.Error(), `no vector for 2 of 3 sentences; the first is "A cat"`) {
		t.Errorf("missing sentence: %v", err)
	}
	// Gzip input is read (and stored decompressed).
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(`{"text": "x", "vector": [3]}` + "\n"))
	zw.Close()
	gz := filepath.Join(dir, "v.jsonl.gz")
	os.WriteFile(gz, buf.Bytes(), 0o644)
	if err := WriteFileVectors(t.TempDir(), gz); err != nil {
		t.Errorf("gzip: %v", err)
	}
	for body, want := range map[string]string{
		"{\"text\": \"a\", \"vector\": [1, 2]}\n{\"text\": \"b\", \"vector\": [1]}\n":    ":2: vector of 1 values, want 2",
		"{\"text\": \"a\", \"vector\": [1, 2]}\n{\"text\": \"a\", \"vector\": [1, 3]}\n": `:2: text "a" repeats line 1 with a different vector`,
		"{\"text\": \"a\", \"vector\": [1, \"x\"]}\n":                                    ":1: json",
		"{\"text\": \"a\", \"vec\": [1]}\n":                                              `:1: json: unknown field "vec"`,
		"{\"text\": \"a\"}\n":                                                            `:1: no "vector"`,
		"\n":                                                                             "no vectors",
	} {
		p := filepath.Join(dir, "bad.jsonl")
		os.WriteFile(p, []byte(body), 0o644)
		if err := WriteFileVectors(t.TempDir(), p); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: err %v, want %q", body, err, want)
		}
	}
	if err := WriteFileVectors(t.TempDir(), filepath.Join(dir, "absent.jsonl")); err == nil || !strings.Contains(err.Error(), "absent.jsonl") {
		t.Errorf("absent: %v", err)
	}
}

// Bounded, line-numbered reads: a device is refused before anything is
// read, invalid UTF-8 is reported at its line, and an endless line stops at
// the limit instead of growing memory.
func TestVectorFileBoundedReads(t *testing.T) {
	if _, err := ReadVectorFile("/dev/zero", nil); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("/dev/zero: %v", err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "v.jsonl")
	os.WriteFile(p, []byte("{\"text\": \"a\", \"vector\": [1, 2]}\n{\"text\": \"b\xff\", \"vector\": [1, 2]}\n"), 0o644)
	if _, err := ReadVectorFile(p, nil); err == nil || !strings.Contains(err.Error(), "v.jsonl:2: invalid UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	long := filepath.Join(dir, "long.jsonl")
	f, _ := os.Create(long)
	f.Write(bytes.Repeat([]byte("x"), MaxVectorLine+10))
	f.Close()
	if _, err := ReadVectorFile(long, nil); err == nil || !strings.Contains(err.Error(), "long.jsonl:1: a line longer than") {
		t.Errorf("long line: %v", err)
	}
	// The copy is the decompressed content, byte for byte.
	gz := filepath.Join(dir, "v.jsonl.gz")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	content := "{\"text\": \"a\", \"vector\": [1, 2]}\n{\"text\": \"b\", \"vector\": [3, 4]}\n"
	zw.Write([]byte(content))
	zw.Close()
	os.WriteFile(gz, buf.Bytes(), 0o644)
	var copied bytes.Buffer
	fv, err := ReadVectorFile(gz, &copied)
	if err != nil || fv.Dim() != 2 || copied.String() != content {
		t.Errorf("gzip copy: %v, %q", err, copied.String())
	}
}
