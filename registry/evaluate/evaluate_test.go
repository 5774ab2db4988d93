package evaluate

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"hash/fnv"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode"

	"repro/internal/encoder"
	"repro/internal/metrics"
	"repro/internal/rows"
	"repro/registry"
)

// testEncoder is a hashed bag-of-words encoder: each lower-cased word maps
// to a fixed pseudo-random vector, a sentence to the sum of its words'.
// Word overlap thus gives real, if weak, similarity. Modes make it
// misbehave for the error tests.
type testEncoder struct {
	Type string `json:"type"`
	D    int    `json:"dim"`
	Mode string `json:"mode"` // "", "sparse", "constant", "nan" (NaN for sentences containing "boom"), "wrongdim"

	mu      sync.Mutex
	encoded []string // every sentence Encode received, in order
	batches []int
}

const testType = "evaluate_test.bow"

var (
	encMu    sync.Mutex
	encoders = map[string]*testEncoder{} // by artifact dir, so tests can inspect calls
)

func init() {
	encoder.RegisterType(testType, func(dir string, meta json.RawMessage) (encoder.Encoder, error) {
		e := &testEncoder{}
		if err := json.Unmarshal(meta, e); err != nil {
			return nil, err
		}
		encMu.Lock()
		encoders[dir] = e
		encMu.Unlock()
		return e, nil
	})
}

func (e *testEncoder) Dim() int { return e.D }

func (e *testEncoder) Encode(_ context.Context, ss []string) ([][]float32, error) {
	e.mu.Lock()
	e.encoded = append(e.encoded, ss...)
	e.batches = append(e.batches, len(ss))
	e.mu.Unlock()
	out := make([][]float32, len(ss))
	for i, s := range ss {
		v := make([]float32, e.D)
		switch {
		case e.Mode == "constant":
			for j := range v {
				v[j] = 1
			}
		case e.Mode == "wrongdim":
			v = v[:1]
		case e.Mode == "sparse":
			// One hashed dimension per word: a bag of words as sparse as TF-IDF.
			for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
				h := fnv.New64a()
				h.Write([]byte(w))
				v[h.Sum64()%uint64(e.D)]++
			}
		default:
			for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
				h := fnv.New64a()
				h.Write([]byte(w))
				rng := rand.New(rand.NewPCG(h.Sum64(), 7))
				for j := range v {
					v[j] += float32(rng.NormFloat64())
				}
			}
			if e.Mode == "nan" && strings.Contains(s, "boom") {
				v[0] = float32(math.NaN())
			}
		}
		out[i] = v
	}
	return out, nil
}

// newEncoder writes an encoder artifact and returns its directory.
func newEncoder(t testing.TB, dim int, mode string) string {
	t.Helper()
	dir := t.TempDir()
	if err := encoder.WriteMeta(dir, map[string]any{"type": testType, "dim": dim, "mode": mode}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func encoderAt(dir string) *testEncoder {
	encMu.Lock()
	defer encMu.Unlock()
	return encoders[dir]
}

// artifact writes rows into a fresh artifact directory under file.
func artifact[T any](t testing.TB, kind registry.Kind, file string, rs []T) registry.Artifact {
	t.Helper()
	dir := t.TempDir()
	if err := rows.Write(filepath.Join(dir, file), rs); err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Kind: kind, Dir: dir}
}

// run runs stage type name with params (nil: defaults) and returns the
// decoded metrics.json.
func run(t testing.TB, name string, params any, encDir string, data registry.Artifact) (map[string]any, error) {
	t.Helper()
	r := registry.New()
	Register(r)
	st, ok := r.Lookup(name)
	if !ok {
		t.Fatalf("%s not registered (have %v)", name, r.Names())
	}
	if params == nil {
		v := reflectNew(st.Params)
		params = v
	}
	out := t.TempDir()
	env := &registry.Env{
		Params:  params,
		Inputs:  map[string]registry.Artifact{"encoder": {Kind: registry.KindEncoder, Dir: encDir}, "data": data},
		Outputs: map[string]string{"metrics": out},
		Work:    t.TempDir(),
	}
	if err := st.Call(context.Background(), env); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(out, registry.FileMetrics))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("metrics.json: %v\n%s", err, b)
	}
	return m, nil
}

// reflectNew returns a pointer to a copy of a Params default value, as the
// runner would decode it from a stage block with no parameters set.
func reflectNew(def any) any {
	switch d := def.(type) {
	case STSParams:
		return &d
	case RerankParams:
		return &d
	case RetrievalParams:
		return &d
	case DensityParams:
		return &d
	}
	panic("unknown params type")
}

func num(t *testing.T, m map[string]any, path ...string) float64 {
	t.Helper()
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("metrics %v: %q is not an object", path, k)
		}
		if cur, ok = mm[k]; !ok {
			t.Fatalf("metrics has no %v (have %v)", path, keys(mm))
		}
	}
	f, ok := cur.(float64)
	if !ok {
		t.Fatalf("metrics %v = %v, not a number", path, cur)
	}
	return f
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// stsRows makes pairs for every one of the seven tasks: sentence2 shares
// a number of words with sentence1 that grows with the gold score.
func stsRows() []rows.STSPair {
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango")
	var out []rows.STSPair
	for ti, task := range metrics.STSSeven {
		subs := []string{"test"}
		if ti < 5 {
			subs = []string{"one", "two"}
		}
		for si, sub := range subs {
			for i := 0; i < 12; i++ {
				s1 := make([]string, 5)
				s2 := make([]string, 5)
				for k := range s1 {
					s1[k] = words[(i*3+k+ti)%len(words)]
					s2[k] = words[(i*7+k*5+11+si)%len(words)]
				}
				shared := i % 6 // 0..5 words in common
				copy(s2, s1[:min(shared, 5)])
				out = append(out, rows.STSPair{Task: task, Subset: sub, Sentence1: strings.Join(s1, " "),
					Sentence2: strings.Join(s2, "  "), Score: float64(shared)})
			}
		}
	}
	return out
}

func TestSTSStage(t *testing.T) {
	enc := newEncoder(t, 48, "")
	data := artifact(t, registry.KindSTS, registry.FilePairs, stsRows())
	p := &STSParams{BatchSize: 7, AlignUniform: true}
	m, err := run(t, "evaluate.sts", p, enc, data)
	if err != nil {
		t.Fatal(err)
	}
	// The stage's numbers must equal the metrics library applied to the
	// encoder's vectors directly.
	e := encoderAt(enc)
	rs := stsRows()
	var scored []metrics.ScoredPair
	for _, r := range rs {
		v, _ := e.Encode(context.Background(), []string{normalizeSpace(r.Sentence1), normalizeSpace(r.Sentence2)})
		scored = append(scored, metrics.ScoredPair{Task: r.Task, Subset: r.Subset, Sys: metrics.Cosine(v[0], v[1]), Gold: r.Score})
	}
	want, err := metrics.STS(scored)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, task := range metrics.STSSeven {
		got := num(t, m, task)
		if math.Abs(got-want.Tasks[task].Spearman) > 1e-9 {
			t.Errorf("%s = %v, want %v", task, got, want.Tasks[task].Spearman)
		}
		if got < 50 {
			t.Errorf("%s = %v: word overlap should correlate with gold", task, got)
		}
		sum += metrics.Round2(got)
	}
	if got := num(t, m, "avg"); math.Abs(got-sum/7) > 1e-9 {
		t.Errorf("avg = %v, want %v", got, sum/7)
	}
	num(t, m, "sts12_16")
	if got, w := num(t, m, "subsets", "sts13", "two"), want.Tasks["sts13"].Subsets["two"].Spearman; math.Abs(got-w) > 1e-9 {
		t.Errorf("subsets.sts13.two = %v, want %v", got, w)
	}
	if n := num(t, m, "n", "sts12"); n != 24 {
		t.Errorf("n.sts12 = %v, want 24", n)
	}
	// Alignment over the stsb pairs with gold > 4, uniformity over the
	// distinct stsb sentences, recomputed here from the encoder's vectors.
	var pa, pb, uni [][]float32
	seenU := map[string]bool{}
	for _, r := range rs {
		if r.Task != "stsb" {
			continue
		}
		v, _ := e.Encode(context.Background(), []string{normalizeSpace(r.Sentence1), normalizeSpace(r.Sentence2)})
		if r.Score > 4 {
			pa, pb = append(pa, v[0]), append(pb, v[1])
		}
		for k, s := range []string{normalizeSpace(r.Sentence1), normalizeSpace(r.Sentence2)} {
			if !seenU[s] {
				seenU[s] = true
				uni = append(uni, v[k])
			}
		}
	}
	wa, _ := metrics.Alignment(pa, pb)
	wu, _ := metrics.Uniformity(uni)
	if a := num(t, m, "alignment"); len(pa) != 2 || math.Abs(a-wa) > 1e-12 {
		t.Errorf("alignment %v over %d pairs, want %v over 2", a, len(pa), wa)
	}
	if u := num(t, m, "uniformity"); math.Abs(u-wu) > 1e-12 || u >= 0 {
		t.Errorf("uniformity %v, want %v (< 0)", u, wu)
	}
	// Dedupe and batching: every distinct (whitespace-normalised) sentence
	// encoded once, in batches of at most 7.
	distinct := map[string]bool{}
	for _, r := range rs {
		distinct[normalizeSpace(r.Sentence1)] = true
		distinct[normalizeSpace(r.Sentence2)] = true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	stageCalls := 0
	n := 0
	for _, b := range e.batches {
		if n >= len(distinct) {
			break
		}
		if b > 7 {
			t.Errorf("batch of %d sentences, batch_size 7", b)
		}
		n += b
		stageCalls++
	}
	if n != len(distinct) {
		t.Errorf("stage encoded %d sentences, %d distinct", n, len(distinct))
	}
	seen := map[string]bool{}
	for _, s := range e.encoded[:n] {
		if seen[s] {
			t.Errorf("sentence %q encoded twice", s)
		}
		seen[s] = true
	}
}

func TestSTSStageErrors(t *testing.T) {
	good := artifact(t, registry.KindSTS, registry.FilePairs, stsRows())
	cases := []struct {
		name string
		enc  string
		data registry.Artifact
		want string
	}{
		{"constant encoder", newEncoder(t, 8, "constant"), good, "evaluate.sts: task sickr: all 12 similarities are equal"},
		{"wrong dimension", newEncoder(t, 8, "wrongdim"), good, "1-dimensional vector (Dim() = 8)"},
		{"NaN vector", newEncoder(t, 8, "nan"), artifact(t, registry.KindSTS, registry.FilePairs, []rows.STSPair{
			{Task: "stsb", Subset: "test", Sentence1: "a b", Sentence2: "a c", Score: 1},
			{Task: "stsb", Subset: "test", Sentence1: "a b", Sentence2: "it goes boom", Score: 2},
		}), `non-finite value (NaN) for "it goes boom" (|pairs.jsonl row 2, sentence2)`},
		{"empty sentence", newEncoder(t, 8, ""), artifact(t, registry.KindSTS, registry.FilePairs, []rows.STSPair{
			{Task: "stsb", Subset: "test", Sentence1: "a b", Sentence2: "  ", Score: 1},
		}), "pairs.jsonl row 1: empty sentence"},
		{"missing file", newEncoder(t, 8, ""), registry.Artifact{Kind: registry.KindSTS, Dir: t.TempDir()}, "pairs.jsonl: no such file"},
	}
	for _, c := range cases {
		_, err := run(t, "evaluate.sts", nil, c.enc, c.data)
		for _, w := range strings.Split(c.want, "|") {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, w)
			}
		}
	}
	// A malformed row is reported at its line by the rows reader.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, registry.FilePairs), []byte(`{"task":"stsb","subset":"test","sentence1":"a","sentence2":"b","score":1}`+"\n"+`{"task":"stsb","score":"high"}`+"\n"), 0o644)
	_, err := run(t, "evaluate.sts", nil, newEncoder(t, 8, ""), registry.Artifact{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "pairs.jsonl:2:") {
		t.Errorf("malformed row: error %v, want file:line", err)
	}
}

func TestRerankStage(t *testing.T) {
	qs := []rows.RerankQuery{
		{ID: "q1", Query: "cheap flights to paris", Positive: []string{"flights to paris cheap", "paris flights"}, Negative: []string{"best pizza in rome", "rome pizza recipes", "cheap hotels in rome"}},
		{ID: "q2", Query: "learn go programming", Positive: []string{"go programming tutorial"}, Negative: []string{"learn to cook pasta", "the go board game rules"}},
		{ID: "q3", Query: "dropped query", Positive: []string{"only positives"}},
	}
	m, err := run(t, "evaluate.rerank", nil, newEncoder(t, 64, ""), artifact(t, registry.KindRerank, registry.FileQueries, qs))
	if err != nil {
		t.Fatal(err)
	}
	if num(t, m, "queries") != 2 || num(t, m, "dropped") != 1 {
		t.Errorf("queries/dropped = %v/%v, want 2/1", m["queries"], m["dropped"])
	}
	if mp := num(t, m, "map"); mp <= 50 || mp > 100 {
		t.Errorf("map = %v: overlapping positives should rank high", mp)
	}
	num(t, m, "mrr10")
	_, err = run(t, "evaluate.rerank", &RerankParams{BatchSize: 8, MRRAt: 0}, newEncoder(t, 8, ""), artifact(t, registry.KindRerank, registry.FileQueries, qs))
	if err == nil || !strings.Contains(err.Error(), "mrr_at: 0; must be at least 1") {
		t.Errorf("mrr_at 0: error %v", err)
	}
}

func TestRetrievalStage(t *testing.T) {
	docs := []rows.Document{
		{ID: "a", Headline: "storm floods the coast", Sentences: []string{"A storm hit the coast.", "Floods followed the storm."}},
		{ID: "b", Headline: "team wins the cup final", Sentences: []string{"The team won the final.", "The cup is theirs."}},
		{ID: "c", Headline: "bank raises interest rates", Sentences: []string{"The bank raised rates.", "Interest is higher now."}},
		{ID: "d", Headline: "new phone released", Sentences: []string{"A new phone was released today."}},
		{ID: "e", Headline: "storm floods coast again", Sentences: []string{"A storm hit the coast.", "Floods followed the storm."}}, // duplicate body of a
	}
	data := artifact(t, registry.KindDocuments, registry.FileDocuments, docs)
	m, err := run(t, "evaluate.retrieval", &RetrievalParams{Query: "document", K: []int{1, 5}, MergeDuplicates: true, BatchSize: 3}, newEncoder(t, 64, ""), data)
	if err != nil {
		t.Fatal(err)
	}
	if num(t, m, "n") != 5 || num(t, m, "duplicates") != 1 || num(t, m, "r5") != 100 {
		t.Errorf("metrics %v: want n 5, duplicates 1, r5 100", m)
	}
	if r1 := num(t, m, "r1"); r1 < 80 {
		t.Errorf("r1 = %v: word overlap should find most headlines", r1)
	}
	// Without merging, a and e have identical document vectors; the
	// pessimistic tie rule cannot give both a rank of 1.
	m2, err := run(t, "evaluate.retrieval", &RetrievalParams{Query: "headline", K: []int{1}, MergeDuplicates: false, BatchSize: 3}, newEncoder(t, 64, ""), data)
	if err != nil {
		t.Fatal(err)
	}
	if r1 := num(t, m2, "r1"); r1 > 80 {
		t.Errorf("unmerged r1 = %v, want at most 80 (a/e tie)", r1)
	}
	for _, c := range []struct {
		p    *RetrievalParams
		want string
	}{
		{&RetrievalParams{Query: "title", K: []int{5}, BatchSize: 4}, `query: "title" is not one of document, headline`},
		{&RetrievalParams{Query: "document", K: []int{0}, BatchSize: 4}, "k: 0; must be at least 1"},
		{&RetrievalParams{Query: "document", K: []int{5}, BatchSize: 0}, "batch_size: 0; must be at least 1"},
	} {
		if _, err := run(t, "evaluate.retrieval", c.p, newEncoder(t, 8, ""), data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("params %+v: error %v, want %q", c.p, err, c.want)
		}
	}
	bad := artifact(t, registry.KindDocuments, registry.FileDocuments, []rows.Document{docs[0], {ID: "x", Headline: "h"}})
	if _, err := run(t, "evaluate.retrieval", nil, newEncoder(t, 8, ""), bad); err == nil || !strings.Contains(err.Error(), `row 2 (id "x"): no sentences`) {
		t.Errorf("document without sentences: error %v", err)
	}
	// A corpus without headlines (the Brown Corpus) has nothing to retrieve.
	noHead := artifact(t, registry.KindDocuments, registry.FileDocuments, []rows.Document{docs[0], {ID: "ca01", Sentences: []string{"a sentence"}}})
	if _, err := run(t, "evaluate.retrieval", nil, newEncoder(t, 8, ""), noHead); err == nil || !strings.Contains(err.Error(), `row 2 (id "ca01"): no headline`) {
		t.Errorf("document without headline: error %v", err)
	}
}

func TestCosineDensityStage(t *testing.T) {
	rs := stsRows()
	enc := newEncoder(t, 48, "")
	m, err := run(t, "evaluate.cosine_density", nil, enc, artifact(t, registry.KindSTS, registry.FilePairs, rs))
	if err != nil {
		t.Fatal(err)
	}
	if num(t, m, "n") != 12 {
		t.Errorf("n = %v, want the 12 stsb pairs", m["n"])
	}
	// Recompute from the encoder's vectors. Gold = words shared (0..5):
	// levels 0-1 .. 3-4 get 2 pairs each, 4-5 gets 4 (gold 4 and 5).
	var sys, gold []float64
	for _, r := range rs {
		if r.Task == "stsb" {
			v, _ := encoderAt(enc).Encode(context.Background(), []string{normalizeSpace(r.Sentence1), normalizeSpace(r.Sentence2)})
			sys, gold = append(sys, metrics.Cosine(v[0], v[1])), append(gold, r.Score)
		}
	}
	want, _ := metrics.CosineDensity(sys, gold)
	for i, l := range want {
		if n := num(t, m, "levels", l.Name(), "n"); n != float64(l.N) || n != float64([]int{2, 2, 2, 2, 4}[i]) {
			t.Errorf("level %s: n = %v, want %d", l.Name(), n, l.N)
		}
		if got := num(t, m, "levels", l.Name(), "mean"); math.Abs(got-l.Mean) > 1e-12 {
			t.Errorf("level %s: mean %v, want %v", l.Name(), got, l.Mean)
		}
		if got := num(t, m, "levels", l.Name(), "var"); math.Abs(got-l.Var) > 1e-12 {
			t.Errorf("level %s: var %v, want %v", l.Name(), got, l.Var)
		}
	}
	if lo, hi := num(t, m, "levels", "0-1", "mean"), num(t, m, "levels", "4-5", "mean"); lo >= hi {
		t.Errorf("level 0-1 mean %v not below level 4-5 mean %v", lo, hi)
	}
	if _, err := run(t, "evaluate.cosine_density", &DensityParams{Task: "sts99", BatchSize: 8}, newEncoder(t, 8, ""), artifact(t, registry.KindSTS, registry.FilePairs, rs)); err == nil || !strings.Contains(err.Error(), `task: "sts99" is not one of`) {
		t.Errorf("unknown task: error %v", err)
	}
}

func TestRegisterSchemas(t *testing.T) {
	r := registry.New()
	Register(r)
	for _, n := range []string{"evaluate.sts", "evaluate.rerank", "evaluate.retrieval", "evaluate.cosine_density"} {
		st, ok := r.Lookup(n)
		if !ok {
			t.Fatalf("%s not registered", n)
		}
		if _, ok := st.Input("encoder"); !ok {
			t.Errorf("%s has no encoder input", n)
		}
		if p, ok := st.Output("metrics"); !ok || p.Kind != registry.KindMetrics {
			t.Errorf("%s has no metrics output", n)
		}
		if ps, err := st.ParamSchema(); err != nil || len(ps) == 0 {
			t.Errorf("%s params: %v", n, err)
		}
	}
}

// readGz reads a gzip JSONL file of T from the data directory.
func readGz[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := rows.Decode[T](bufio.NewReader(zr), path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestVectorsCompact(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	in := [][]float32{
		{0, 0, 3, 0, 0, 0, negZero, 0}, // sparse, with a -0 that must survive
		{1, 2, 3, 4, 5, 6, 7, 0},       // dense
		make([]float32, 8),             // zero
	}
	v := &vectors{dim: 8}
	for _, x := range in {
		nz := 0
		for _, y := range x {
			if math.Float32bits(y) != 0 {
				nz++
			}
		}
		v.add(x, nz)
	}
	if v.dense[0] != nil || v.dense[1] == nil || v.dense[2] != nil {
		t.Errorf("storage: compact %v, %v, %v; want compact, dense, compact", v.dense[0] == nil, v.dense[1] == nil, v.dense[2] == nil)
	}
	buf := []float32{9, 9, 9, 9, 9, 9, 9, 9}
	for i, want := range in {
		got := v.at(i, buf)
		for k := range want {
			if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
				t.Errorf("vector %d dim %d: %v, want %v", i, k, got[k], want[k])
			}
		}
	}
}

// TestCompactSameMetrics runs every evaluate stage with a sparse encoder
// twice, vectors kept compact and kept dense: the metrics must be the same
// numbers to the bit.
func TestCompactSameMetrics(t *testing.T) {
	defer func() { compactVectors = true }()
	enc := newEncoder(t, 512, "sparse")
	sts := artifact(t, registry.KindSTS, registry.FilePairs, stsRows())
	var docs []rows.Document
	for i, r := range stsRows()[:40] {
		docs = append(docs, rows.Document{ID: strings.Repeat("d", i+1), Headline: r.Sentence2, Sentences: []string{r.Sentence1, r.Sentence2 + " extra"}})
	}
	news := artifact(t, registry.KindDocuments, registry.FileDocuments, docs)
	var qs []rows.RerankQuery
	for i, r := range stsRows()[:30] {
		qs = append(qs, rows.RerankQuery{ID: strings.Repeat("q", i+1), Query: r.Sentence1, Positive: []string{r.Sentence2}, Negative: []string{stsRows()[i+1].Sentence2, stsRows()[i+2].Sentence1}})
	}
	rr := artifact(t, registry.KindRerank, registry.FileQueries, qs)
	for _, c := range []struct {
		stage string
		data  registry.Artifact
	}{{"evaluate.sts", sts}, {"evaluate.cosine_density", sts}, {"evaluate.retrieval", news}, {"evaluate.rerank", rr}} {
		compactVectors = true
		a, err := run(t, c.stage, nil, enc, c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.stage, err)
		}
		compactVectors = false
		b, err := run(t, c.stage, nil, enc, c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.stage, err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("%s: compact vectors give\n%s\ndense give\n%s", c.stage, ja, jb)
		}
		if c.stage == "evaluate.sts" && !strings.Contains(string(ja), "uniformity") {
			t.Errorf("%s: no uniformity in %s", c.stage, ja)
		}
	}
}

func TestCosineDensityWritesFigure(t *testing.T) {
	r := registry.New()
	Register(r)
	st, _ := r.Lookup("evaluate.cosine_density")
	out := t.TempDir()
	env := &registry.Env{
		Params: &DensityParams{Task: "stsb", BatchSize: 8},
		Inputs: map[string]registry.Artifact{"encoder": {Kind: registry.KindEncoder, Dir: newEncoder(t, 48, "")},
			"data": artifact(t, registry.KindSTS, registry.FilePairs, stsRows())},
		Outputs: map[string]string{"metrics": out},
		Work:    t.TempDir(),
	}
	if err := st.Call(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, FileDensityPlot))
	if err != nil {
		t.Fatalf("no figure: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("figure is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("figure is %v", b)
	}
}
