package metrics

import (
	"fmt"
	"math"
	"sort"
)

// AveragePrecision returns the average precision of scores against binary
// relevance exactly as sklearn.metrics.average_precision_score computes it:
// the precision-recall curve has one point per DISTINCT score (tied scores
// enter together), and AP = sum over points of (R_k - R_{k-1}) * P_k. It is
// NaN when there is no relevant item.
func AveragePrecision(relevant []bool, scores []float64) float64 {
	if len(relevant) != len(scores) {
		panic("metrics: AveragePrecision of inputs of different lengths")
	}
	idx := descending(scores)
	var pos int
	for _, r := range relevant {
		if r {
			pos++
		}
	}
	if pos == 0 {
		return math.NaN()
	}
	var ap, prevRecall float64
	tp := 0
	for i := 0; i < len(idx); {
		// Take the whole block of items tied at this score as one threshold.
		j := i
		for j < len(idx) && scores[idx[j]] == scores[idx[i]] {
			if relevant[idx[j]] {
				tp++
			}
			j++
		}
		recall := float64(tp) / float64(pos)
		precision := float64(tp) / float64(j)
		ap += (recall - prevRecall) * precision
		prevRecall = recall
		i = j
	}
	return ap
}

// ReciprocalRankAtK returns 1/rank of the first relevant item among the top k
// when items are sorted by descending score, or 0 when none is in the top k.
// Ties keep input order (a stable sort), which is what MTEB's
// torch.argsort(-scores) yields on CPU for the short lists of a query; MTEB
// lists positives before negatives, so an exact tie favours the positive.
func ReciprocalRankAtK(relevant []bool, scores []float64, k int) float64 {
	if len(relevant) != len(scores) {
		panic("metrics: ReciprocalRankAtK of inputs of different lengths")
	}
	for rank, i := range descending(scores) {
		if rank >= k {
			break
		}
		if relevant[i] {
			return 1 / float64(rank+1)
		}
	}
	return 0
}

// descending returns the indices of scores sorted by decreasing score,
// stable on ties.
func descending(scores []float64) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx
}

// RerankQuery is one encoded reranking query.
type RerankQuery struct {
	Query    []float32
	Positive [][]float32
	Negative [][]float32
}

// RerankResult is the outcome of the reranking protocol, in percent.
type RerankResult struct {
	MAP     float64 // mean over kept queries of AveragePrecision (MTEB's main score)
	MRR     float64 // mean ReciprocalRankAtK
	K       int     // the k of MRR@k
	Queries int     // queries kept
	Dropped int     // queries without a positive or without a negative
}

// Rerank runs MTEB v1's RerankingEvaluator: queries with no positive or no
// negative candidate are dropped; each candidate (positives first, then
// negatives) is scored by its cosine with the query; AP and MRR@k are
// averaged over the kept queries. It is an error when no query is left.
func Rerank(qs []RerankQuery, k int) (RerankResult, error) {
	res := RerankResult{K: k}
	var sumAP, sumRR float64
	for _, q := range qs {
		if len(q.Positive) == 0 || len(q.Negative) == 0 {
			res.Dropped++
			continue
		}
		rel := make([]bool, 0, len(q.Positive)+len(q.Negative))
		sc := make([]float64, 0, cap(rel))
		for _, c := range q.Positive {
			rel = append(rel, true)
			sc = append(sc, Cosine(q.Query, c))
		}
		for _, c := range q.Negative {
			rel = append(rel, false)
			sc = append(sc, Cosine(q.Query, c))
		}
		sumAP += AveragePrecision(rel, sc)
		sumRR += ReciprocalRankAtK(rel, sc, k)
		res.Queries++
	}
	if res.Queries == 0 {
		return RerankResult{}, fmt.Errorf("reranking: none of %d queries has both a positive and a negative candidate", len(qs))
	}
	res.MAP = 100 * sumAP / float64(res.Queries)
	res.MRR = 100 * sumRR / float64(res.Queries)
	return res, nil
}
