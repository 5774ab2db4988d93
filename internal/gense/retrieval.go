package gense

import (
	"fmt"
	"strings"

	"repro/internal/retrieve"
)

// The retrieval baseline of Table 8 (Thakur et al. 2021a, as GenSE
// describes it in section 3.5): BM25 over the unlabeled corpus proposes
// partners for each unlabeled sentence, an NLI cross-encoder labels the
// pairs, and the pairs it calls entailment with enough confidence are
// kept. Retrieval yields no contradictions, so the kept pairs are
// positives only.

// RetrievedPair is one candidate pair: a query sentence and a corpus
// sentence BM25 ranked among its top k.
type RetrievedPair struct {
	Anchor  string  `json:"anchor"`
	Partner string  `json:"partner"`
	Rank    int     `json:"rank"` // 1 = BM25's best for this anchor
	BM25    float64 `json:"bm25"`
}

// RetrievalCounts tallies the candidate search.
type RetrievalCounts struct {
	Queries int `json:"queries"`
	// NoHit counts queries for which BM25 found no partner (no shared
	// word with any other distinct sentence).
	NoHit int `json:"no_hit"`
	// Repeated counts pairs dropped because the same two sentences were
	// already a candidate, either way round ({v, u} after {u, v}, or a
	// duplicate query finding the same partner again).
	Repeated   int `json:"repeated"`
	Candidates int `json:"candidates"`
}

// RetrievePairs searches corpus for each query: its top k documents by
// BM25, skipping every document whose text equals the query's (the
// sentence itself and its exact duplicates, compared after trimming
// spaces). A pair already found, either way round, is dropped, so each
// unordered pair is labelled once. Queries and pairs keep their order.
func RetrievePairs(queries, corpus []string, p retrieve.Params, k int) ([]RetrievedPair, RetrievalCounts, error) {
	c := RetrievalCounts{Queries: len(queries)}
	if k <= 0 {
		return nil, c, fmt.Errorf("top_k = %d: retrieve at least one candidate per sentence", k)
	}
	if len(queries) == 0 {
		return nil, c, fmt.Errorf("no sentences to find partners for")
	}
	ix, err := retrieve.NewIndex(corpus, p)
	if err != nil {
		return nil, c, err
	}
	norm := make([]string, len(corpus))
	for i, s := range corpus {
		norm[i] = strings.TrimSpace(s)
	}
	type pair struct{ a, b string }
	seen := map[pair]bool{}
	var out []RetrievedPair
	s := ix.NewSearcher()
	for _, q := range queries {
		qn := strings.TrimSpace(q)
		hits := s.Search(q, k, func(d int) bool { return norm[d] == qn })
		if len(hits) == 0 {
			c.NoHit++
		}
		for r, h := range hits {
			v := norm[h.Doc]
			if seen[pair{v, qn}] || seen[pair{qn, v}] {
				c.Repeated++
				continue
			}
			seen[pair{qn, v}] = true
			out = append(out, RetrievedPair{Anchor: qn, Partner: v, Rank: r + 1, BM25: h.Score})
		}
	}
	c.Candidates = len(out)
	return out, c, nil
}

// LabelCounts tallies the cross-encoder's labels of retrieved pairs.
type LabelCounts struct {
	Threshold float64 `json:"threshold"`
	Labelled  int     `json:"labelled"`
	Kept      int     `json:"kept"`
	// PassRate is Kept / Labelled; MeanPTrue the mean normalised
	// P(entailment) over the labelled pairs.
	PassRate  float64 `json:"pass_rate"`
	MeanPTrue float64 `json:"mean_p_true"`
}

// KeepEntailed decides, for each pair's normalised entailment probability,
// whether it reaches threshold, and tallies the decisions.
func KeepEntailed(pTrue []float64, threshold float64) ([]bool, LabelCounts) {
	c := LabelCounts{Threshold: threshold, Labelled: len(pTrue)}
	keep := make([]bool, len(pTrue))
	var sum float64
	for i, pt := range pTrue {
		sum += pt
		if keep[i] = pt >= threshold; keep[i] {
			c.Kept++
		}
	}
	if c.Labelled > 0 {
		c.PassRate = float64(c.Kept) / float64(c.Labelled)
		c.MeanPTrue = sum / float64(c.Labelled)
	}
	return keep, c
}
