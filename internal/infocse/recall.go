package infocse

import (
	"context"
	"fmt"

	"repro/internal/encoder"
	"repro/internal/metrics"
	"repro/internal/rows"
)

// Headlines is a labelled retrieval set prepared once for repeated
// evaluation during training: InfoCSE selects its models by recall@k of
// the headline among the set's headlines (Appendix C: early stopping on
// R@5), and the same protocol as evaluate.retrieval (document = mean of
// its sentence vectors, cosine or the inner product, pessimistic ties).
type Headlines struct {
	texts []string // distinct sentences and headlines, first-seen order
	docs  [][]int  // each document's sentences, as indices into texts
	heads []int    // each document's headline, as an index into texts
}

// NewHeadlines checks docs (every document needs a headline and a
// sentence) and collects their distinct texts. what names the set in
// errors ("validation").
func NewHeadlines(docs []rows.Document, what string) (*Headlines, error) {
	if len(docs) < 2 {
		return nil, fmt.Errorf("%s: %d document(s): headline retrieval needs at least 2", what, len(docs))
	}
	h := &Headlines{docs: make([][]int, len(docs)), heads: make([]int, len(docs))}
	index := map[string]int{}
	add := func(s string) int {
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = len(h.texts)
		h.texts = append(h.texts, s)
		return len(h.texts) - 1
	}
	for i, d := range docs {
		if d.Headline == "" {
			return nil, fmt.Errorf("%s: document %d (id %q) has no headline: headline retrieval needs (document, headline) pairs", what, i+1, d.ID)
		}
		if len(d.Sentences) == 0 {
			return nil, fmt.Errorf("%s: document %d (id %q) has no sentences", what, i+1, d.ID)
		}
		h.heads[i] = add(d.Headline)
		for _, s := range d.Sentences {
			h.docs[i] = append(h.docs[i], add(s))
		}
	}
	return h, nil
}

// Recall encodes the set with enc and returns recall@k x 100 of each
// document's headline among all headlines, ranked by cosine.
func (h *Headlines) Recall(ctx context.Context, enc encoder.Encoder, k int) (float64, error) {
	return h.RecallBy(ctx, enc, k, Cosine)
}

// RecallBy is Recall ranked by sim: Cosine, or Dot (the inner product the
// paper trains and clusters with, eq. 1 and 2).
func (h *Headlines) RecallBy(ctx context.Context, enc encoder.Encoder, k int, sim Similarity) (float64, error) {
	retrieval := metrics.Retrieval
	switch sim {
	case Cosine:
	case Dot:
		retrieval = metrics.RetrievalDot
	default:
		return 0, fmt.Errorf("headline recall: similarity %q: want %q or %q", sim, Dot, Cosine)
	}
	vs, err := enc.Encode(ctx, h.texts)
	if err != nil {
		return 0, err
	}
	if len(vs) != len(h.texts) {
		return 0, fmt.Errorf("headline recall: the encoder returned %d vectors for %d texts", len(vs), len(h.texts))
	}
	q, c := make([][]float32, len(h.docs)), make([][]float32, len(h.docs))
	for i, idx := range h.docs {
		sv := make([][]float32, len(idx))
		for j, t := range idx {
			sv[j] = vs[t]
		}
		if q[i], err = metrics.MeanVector(sv); err != nil {
			return 0, fmt.Errorf("headline recall: document %d: %v", i+1, err)
		}
		c[i] = vs[h.heads[i]]
	}
	res, err := retrieval(q, c, []int{k}, nil)
	if err != nil {
		return 0, fmt.Errorf("headline recall: %v", err)
	}
	return res.Recall[k], nil
}
