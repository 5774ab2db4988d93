package metrics

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"

	"repro/internal/datadir/datadirtest"
)

// Real data through the blocked and sparse similarity code, against the
// per-pair implementations it replaced (refUniformity, refRanks): TF-IDF
// vectors (8192 dimensions, the sparse path) and a 768-d Gaussian random
// projection of them (the dense path) of the STS-B test sentences and of
// the BBC documents and headlines. The per-pair references are slow (42 s
// and 48 s at full size and 8192-d), so the test runs them on prefixes;
// REPRO_METRICS_FULL=1 runs them on everything (the numbers in the report).

// fitTFIDF returns a TF-IDF bag of words in the manner of the encode.tfidf
// stage (word tokens, the maxFeatures most frequent terms, smooth idf,
// L2-normalised rows), fitted on corpus.
func fitTFIDF(corpus []string, maxFeatures int) func(texts []string) [][]float32 {
	tok := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	tf, df := map[string]int{}, map[string]int{}
	for _, s := range corpus {
		seen := map[string]bool{}
		for _, w := range tok(s) {
			tf[w]++
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
	}
	terms := make([]string, 0, len(tf))
	for w := range tf {
		terms = append(terms, w)
	}
	sort.Slice(terms, func(i, j int) bool {
		if tf[terms[i]] != tf[terms[j]] {
			return tf[terms[i]] > tf[terms[j]]
		}
		return terms[i] < terms[j]
	})
	terms = terms[:min(maxFeatures, len(terms))]
	col := map[string]int{}
	for i, w := range terms {
		col[w] = i
	}
	return func(texts []string) [][]float32 { return tfidfEncode(texts, col, df, len(corpus), maxFeatures) }
}

func tfidfEncode(texts []string, col, df map[string]int, docs, maxFeatures int) [][]float32 {
	tok := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float64, maxFeatures)
		for _, w := range tok(s) {
			if k, ok := col[w]; ok {
				v[k] += math.Log(float64(1+docs)/float64(1+df[w])) + 1
			}
		}
		var ss float64
		for _, x := range v {
			ss += x * x
		}
		out[i] = make([]float32, maxFeatures)
		for k, x := range v {
			if x != 0 {
				out[i][k] = float32(x / math.Sqrt(ss))
			}
		}
	}
	return out
}

// project multiplies each vector by a fixed Gaussian dim x len(v) matrix:
// dense vectors with the statistics of the TF-IDF ones.
func project(vs [][]float32, dim int) [][]float32 {
	rng := rand.New(rand.NewPCG(42, 1))
	p := make([][]float64, len(vs[0])) // p[k] is column k
	for k := range p {
		p[k] = make([]float64, dim)
		for r := range p[k] {
			p[k][r] = rng.NormFloat64()
		}
	}
	out := make([][]float32, len(vs))
	acc := make([]float64, dim)
	for i, v := range vs {
		clear(acc)
		for k, x := range v {
			if x != 0 {
				for r, pr := range p[k] {
					acc[r] += float64(x) * pr
				}
			}
		}
		out[i] = make([]float32, dim)
		for r, s := range acc {
			out[i][r] = float32(s)
		}
	}
	return out
}

func readSTSBTest(t *testing.T) []string {
	t.Helper()
	path := filepath.Join(datadirtest.Dir(t), "sts", "STSB", "test.tsv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var out []string
	seen := map[string]bool{}
	for line := 1; sc.Scan(); line++ {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) != 3 {
			t.Fatalf("%s:%d: %d fields", path, line, len(fs))
		}
		if line == 1 {
			continue
		}
		for _, s := range fs[1:] {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

type bbcRow struct {
	Headline  string   `json:"headline"`
	Sentences []string `json:"sentences"`
	DupOf     string   `json:"dup_of"`
}

func readBBC(t *testing.T) []bbcRow {
	t.Helper()
	path := filepath.Join(datadirtest.Dir(t), "news", "bbc.jsonl.gz")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	dec := json.NewDecoder(z)
	var out []bbcRow
	for dec.More() {
		var r bbcRow
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("%s: row %d: %v", path, len(out)+1, err)
		}
		if r.DupOf == "" {
			out = append(out, r)
		}
	}
	return out
}

// prefix returns the first n vectors, or all with REPRO_METRICS_FULL=1.
func prefix(vs [][]float32, n int) [][]float32 {
	if os.Getenv("REPRO_METRICS_FULL") == "1" || n > len(vs) {
		return vs
	}
	return vs[:n]
}

func TestRealUniformityMatchesPerPair(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("per-pair reference on real data")
	}
	sents := readSTSBTest(t)
	sparse := fitTFIDF(sents, 8192)(sents)
	dense := project(sparse, 768)
	for _, c := range []struct {
		name string
		x    [][]float32
	}{
		{"tf-idf 8192-d", prefix(sparse, 400)},
		{"projected 768-d", prefix(dense, 1000)},
	} {
		got, err := Uniformity(c.x)
		if err != nil {
			t.Fatal(err)
		}
		want := refUniformity(c.x)
		t.Logf("STS-B test, %s, %d sentences: uniformity %.15f, per-pair %.15f, deviation %.2g", c.name, len(c.x), got, want, math.Abs(got-want))
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: uniformity %.15g, per-pair %.15g", c.name, got, want)
		}
	}
}

func TestRealRetrievalMatchesPerPair(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("per-pair reference on real data")
	}
	docs := readBBC(t)
	var corpus, heads []string
	for _, d := range docs {
		corpus = append(corpus, d.Sentences...)
		heads = append(heads, d.Headline)
	}
	corpus = append(corpus, heads...)
	enc := fitTFIDF(corpus, 8192)
	docVecs := make([][]float32, len(docs))
	for i, d := range docs {
		v, err := MeanVector(enc(d.Sentences))
		if err != nil {
			t.Fatal(err)
		}
		docVecs[i] = v
	}
	headVecs := enc(heads)
	both := project(append(append([][]float32(nil), docVecs...), headVecs...), 768)
	for _, c := range []struct {
		name string
		q, c [][]float32
	}{
		{"tf-idf 8192-d", prefix(docVecs, 300), prefix(headVecs, 300)},
		{"projected 768-d", prefix(both[:len(docs)], 1000), prefix(both[len(docs):], 1000)},
	} {
		want := refRanks(c.q, c.c, nil)
		got, err := retrievalRanks(c.q, c.c, nil)
		if err != nil {
			t.Fatal(err)
		}
		differ, r5 := 0, 0
		for i := range want {
			if got[i] != want[i] {
				differ++
			}
			if got[i] <= 5 {
				r5++
			}
		}
		t.Logf("BBC document->headline, %s, %d documents: recall@5 %.2f; %d of %d ranks differ from the per-pair implementation", c.name, len(c.q), 100*float64(r5)/float64(len(got)), differ, len(got))
		if differ > 0 {
			t.Errorf("%s: %d ranks differ from the per-pair implementation", c.name, differ)
		}
	}
}
