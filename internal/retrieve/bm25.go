// Package retrieve is lexical retrieval over a corpus of short texts: an
// Okapi BM25 inverted index (Robertson and Zaragoza's formula with the
// idf Lucene and Elasticsearch use), as Thakur et al. (2021a, AugSBERT) use
// it to find candidate partners for unlabeled sentences -- the retrieval
// baseline of GenSE's Table 8.
//
// Design choices:
//
//   - Analysis is Tokens: lower-case, maximal runs of letters and digits,
//     no stop words and no stemming -- close to Elasticsearch's standard
//     analyzer, which AugSBERT's BM25 ran with; the same function analyses
//     documents and queries.
//   - The index is inverted: per term a postings list of (document, term
//     frequency) in document order, plus every document's length. A query
//     touches only the postings of its own terms, accumulating scores in a
//     dense array, so a search costs the postings it reads, not the corpus.
//   - score(q, d) = sum over the query's tokens t (a repeated token counts
//     each time) of idf(t) * tf(t,d)*(k1+1) / (tf(t,d) + k1*(1 - b +
//     b*|d|/avgdl)), idf(t) = ln(1 + (N - n_t + 0.5)/(n_t + 0.5)): Lucene's
//     idf, never negative, so a very common term still adds a little
//     rather than pushing a document down. Lucene's lossy one-byte length
//     encoding is not copied: lengths are exact.
//   - Results are deterministic: scores are summed in the query's token
//     order, ties are broken by the lower document index.
package retrieve

import (
	"container/heap"
	"fmt"
	"math"
	"strings"
	"unicode"
)

// Tokens analyses a text: lower-cased maximal runs of letters and digits.
func Tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Params are BM25's two free parameters.
type Params struct {
	K1 float64 // term-frequency saturation (Elasticsearch's default 1.2)
	B  float64 // length normalisation in [0, 1] (Elasticsearch's default 0.75)
}

// DefaultParams are Elasticsearch's (and Lucene's) defaults, the setting
// AugSBERT's BM25 ran with.
var DefaultParams = Params{K1: 1.2, B: 0.75}

// Check validates the parameters.
func (p Params) Check() error {
	if math.IsNaN(p.K1) || math.IsInf(p.K1, 0) || p.K1 < 0 {
		return fmt.Errorf("bm25: k1 = %v must be a finite number >= 0", p.K1)
	}
	if math.IsNaN(p.B) || p.B < 0 || p.B > 1 {
		return fmt.Errorf("bm25: b = %v is outside [0, 1]", p.B)
	}
	return nil
}

type posting struct {
	doc int32
	tf  int32
}

// Index is an Okapi BM25 inverted index over a fixed corpus.
type Index struct {
	params   Params
	postings map[string][]posting
	lengths  []int32
	avgdl    float64
}

// NewIndex analyses and indexes docs. An empty corpus, or one in which no
// document has a single token, is an error: there is nothing to retrieve.
func NewIndex(docs []string, p Params) (*Index, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("bm25: empty corpus (no documents to index)")
	}
	if len(docs) > math.MaxInt32 {
		return nil, fmt.Errorf("bm25: %d documents is more than the index holds", len(docs))
	}
	ix := &Index{params: p, postings: map[string][]posting{}, lengths: make([]int32, len(docs))}
	var total int64
	for d, text := range docs {
		toks := Tokens(text)
		ix.lengths[d] = int32(len(toks))
		total += int64(len(toks))
		tf := map[string]int32{}
		var order []string
		for _, t := range toks {
			if tf[t] == 0 {
				order = append(order, t)
			}
			tf[t]++
		}
		for _, t := range order {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(d), tf: tf[t]})
		}
	}
	if total == 0 {
		return nil, fmt.Errorf("bm25: none of the %d documents has a word (letters or digits) to index", len(docs))
	}
	ix.avgdl = float64(total) / float64(len(docs))
	return ix, nil
}

// IDF is the inverse document frequency of term.
func (ix *Index) IDF(term string) float64 {
	n := float64(len(ix.postings[term]))
	return math.Log(1 + (float64(len(ix.lengths))-n+0.5)/(n+0.5))
}

// Scores returns the BM25 score of query against every document (zero for
// documents that share no term with it): the exhaustive form of Search,
// for tests and small corpora.
func (ix *Index) Scores(query string) []float64 {
	out := make([]float64, len(ix.lengths))
	ix.accumulate(Tokens(query), out, nil)
	return out
}

// accumulate adds the query's term contributions into acc; touched, when
// non-nil, collects each document the first time it gets a contribution.
func (ix *Index) accumulate(query []string, acc []float64, touched *[]int32) {
	k1, b := ix.params.K1, ix.params.B
	for _, t := range query {
		ps := ix.postings[t]
		if len(ps) == 0 {
			continue
		}
		idf := ix.IDF(t)
		for _, p := range ps {
			tf := float64(p.tf)
			norm := k1 * (1 - b + b*float64(ix.lengths[p.doc])/ix.avgdl)
			if touched != nil && acc[p.doc] == 0 {
				*touched = append(*touched, p.doc)
			}
			acc[p.doc] += idf * tf * (k1 + 1) / (tf + norm)
		}
	}
}

// Hit is one retrieved document.
type Hit struct {
	Doc   int
	Score float64
}

// Searcher runs queries against an index, reusing its score buffer; it is
// not safe for concurrent use (make one per goroutine).
type Searcher struct {
	ix      *Index
	acc     []float64
	touched []int32
}

// NewSearcher returns a searcher over ix.
func (ix *Index) NewSearcher() *Searcher {
	return &Searcher{ix: ix, acc: make([]float64, len(ix.lengths))}
}

// Search returns up to k documents with the highest positive scores for
// query, best first (ties: lower document index first), skipping those for
// which skip (when non-nil) returns true.
func (s *Searcher) Search(query string, k int, skip func(doc int) bool) []Hit {
	if k <= 0 {
		return nil
	}
	s.touched = s.touched[:0]
	s.ix.accumulate(Tokens(query), s.acc, &s.touched)
	h := &hitHeap{}
	for _, d := range s.touched {
		sc := s.acc[d]
		s.acc[d] = 0
		if sc <= 0 || (skip != nil && skip(int(d))) {
			continue
		}
		hit := Hit{Doc: int(d), Score: sc}
		if h.Len() < k {
			heap.Push(h, hit)
		} else if better(hit, (*h)[0]) {
			(*h)[0] = hit
			heap.Fix(h, 0)
		}
	}
	out := make([]Hit, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(Hit)
	}
	return out
}

// better orders hits: higher score, then lower document index.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Doc < b.Doc
}

// hitHeap is a min-heap under better: its root is the worst hit kept.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
