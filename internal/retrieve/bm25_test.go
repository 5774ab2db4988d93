package retrieve

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

type golden struct {
	Corpus   []string           `json:"corpus"`
	Queries  []string           `json:"queries"`
	AvgDL    float64            `json:"avgdl"`
	IDF      map[string]float64 `json:"idf"`
	Settings []struct {
		K1     float64     `json:"k1"`
		B      float64     `json:"b"`
		Scores [][]float64 `json:"scores"`
	} `json:"settings"`
}

func readGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/bm25_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGoldenScores compares every score with testdata/bm25_golden.py's, an
// independent numpy implementation of the formula over a dense matrix.
func TestGoldenScores(t *testing.T) {
	t.Parallel()
	g := readGolden(t)
	for _, s := range g.Settings {
		ix, err := NewIndex(g.Corpus, Params{K1: s.K1, B: s.B})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(ix.AvgDL()-g.AvgDL) > 1e-12 {
			t.Errorf("avgdl %v, want %v", ix.AvgDL(), g.AvgDL)
		}
		for term, want := range g.IDF {
			if got := ix.IDF(term); math.Abs(got-want) > 1e-12 {
				t.Errorf("idf(%q) = %v, want %v", term, got, want)
			}
		}
		for qi, q := range g.Queries {
			got := ix.Scores(q)
			for d, want := range s.Scores[qi] {
				if math.Abs(got[d]-want) > 1e-9 {
					t.Errorf("k1=%v b=%v query %q doc %d: %v, want %v", s.K1, s.B, q, d, got[d], want)
				}
			}
			// Search is the top of the same scores.
			hits := ix.NewSearcher().Search(q, 3, nil)
			want := topK(s.Scores[qi], 3)
			if len(hits) != len(want) {
				t.Fatalf("query %q: %d hits, want %d", q, len(hits), len(want))
			}
			for i, h := range hits {
				if h.Doc != want[i] || math.Abs(h.Score-s.Scores[qi][want[i]]) > 1e-9 {
					t.Errorf("k1=%v b=%v query %q hit %d: %+v, want doc %d (%v)", s.K1, s.B, q, i, h, want[i], s.Scores[qi][want[i]])
				}
			}
		}
	}
}

// topK is the exhaustive ranking: positive scores, best first, ties by
// lower index.
func topK(scores []float64, k int) []int {
	var idx []int
	for d, s := range scores {
		if s > 0 {
			idx = append(idx, d)
		}
	}
	for i := range idx {
		for j := i + 1; j < len(idx); j++ {
			a, b := idx[i], idx[j]
			if scores[b] > scores[a] || (scores[b] == scores[a] && b < a) {
				idx[i], idx[j] = b, a
			}
		}
	}
	if len(idx) > k {
		idx = idx[:k]
	}
	return idx
}

func TestSearchSkipAndTies(t *testing.T) {
	t.Parallel()
	docs := []string{"the cat sat", "the cat sat", "a dog ran", "the cat sat on the cat mat"}
	ix, err := NewIndex(docs, DefaultParams)
	if err != nil {
		t.Fatal(err)
	}
	s := ix.NewSearcher()
	hits := s.Search("the cat sat", 10, nil)
	if len(hits) != 3 || hits[0].Doc != 0 || hits[1].Doc != 1 || hits[0].Score != hits[1].Score {
		t.Fatalf("hits %+v: want docs 0 and 1 tied first, 3 after, 2 absent (no shared term)", hits)
	}
	// Skipping the query itself and its duplicate leaves the third.
	hits = s.Search("the cat sat", 10, func(d int) bool { return docs[d] == "the cat sat" })
	if len(hits) != 1 || hits[0].Doc != 3 {
		t.Fatalf("hits with skip %+v, want only doc 3", hits)
	}
	// The searcher's buffer is clean between queries.
	a := s.Search("dog", 5, nil)
	b := ix.NewSearcher().Search("dog", 5, nil)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("reused searcher %+v, fresh %+v", a, b)
	}
	if got := s.Search("unicorn", 5, nil); len(got) != 0 {
		t.Fatalf("a query with no indexed term found %+v", got)
	}
	if got := s.Search("cat", 0, nil); got != nil {
		t.Fatalf("k = 0 found %+v", got)
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	got := Tokens("The hotel's 300 rooms -- Zürich, e.g. U.S.!")
	want := []string{"the", "hotel", "s", "300", "rooms", "zürich", "e", "g", "u", "s"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Tokens = %q, want %q", got, want)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		docs []string
		p    Params
		want string
	}{
		{nil, DefaultParams, "empty corpus"},
		{[]string{"...", " "}, DefaultParams, "none of the 2 documents has a word"},
		{[]string{"a b"}, Params{K1: -1, B: 0.5}, "k1 = -1"},
		{[]string{"a b"}, Params{K1: math.NaN(), B: 0.5}, "k1 = NaN"},
		{[]string{"a b"}, Params{K1: 1, B: 1.5}, "b = 1.5 is outside [0, 1]"},
	} {
		_, err := NewIndex(c.docs, c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewIndex(%q, %+v) = %v, want an error containing %q", c.docs, c.p, err, c.want)
		}
	}
}

func BenchmarkSearch(b *testing.B) {
	g := readGoldenB(b)
	var docs []string
	for i := 0; i < 2000; i++ {
		docs = append(docs, g.Corpus[i%len(g.Corpus)]+" "+strings.Repeat("w", 1+i%7))
	}
	ix, err := NewIndex(docs, DefaultParams)
	if err != nil {
		b.Fatal(err)
	}
	s := ix.NewSearcher()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Search(docs[i%len(docs)], 3, nil)
	}
}

func readGoldenB(b *testing.B) golden {
	raw, err := os.ReadFile("testdata/bm25_golden.json")
	if err != nil {
		b.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(raw, &g); err != nil {
		b.Fatal(err)
	}
	return g
}

// AvgDL is the mean document length in tokens.
func (ix *Index) AvgDL() float64 { return ix.avgdl }
