package metrics

import (
	"fmt"
	"math"
)

// MeanVector returns the element-wise mean of vs (InfoCSE's document
// embedding: the average of its sentence embeddings), accumulated in float64.
// It is an error for vs to be empty or ragged.
func MeanVector(vs [][]float32) ([]float32, error) {
	if len(vs) == 0 {
		return nil, fmt.Errorf("mean of no vectors")
	}
	acc := make([]float64, len(vs[0]))
	for i, v := range vs {
		if len(v) != len(acc) {
			return nil, fmt.Errorf("vector %d has %d dimensions, vector 0 has %d", i, len(v), len(acc))
		}
		for j, x := range v {
			acc[j] += float64(x)
		}
	}
	out := make([]float32, len(acc))
	for j, s := range acc {
		out[j] = float32(s / float64(len(vs)))
	}
	return out, nil
}

// RetrievalResult is the outcome of the retrieval protocol.
type RetrievalResult struct {
	Recall map[int]float64 // k -> recall@k in percent
	N      int             // number of queries
	// MeanRank is the mean (pessimistic) rank of the true counterpart.
	MeanRank float64
}

// Retrieval computes recall@k for each k in ks: query i's true counterpart
// is candidate i, and it is retrieved at k when its rank among ALL
// candidates (by cosine) is at most k.
//
// Ties are counted pessimistically: the rank of the counterpart is 1 plus
// the number of wrong candidates scoring greater than OR EQUAL to it. So an
// encoder that collapses everything to one direction gets recall 0 rather
// than credit for an index order.
//
// class, when non-nil, has one entry per pair and marks duplicates: every
// candidate j with class[j] == class[i] also counts as a correct answer for
// query i (the best-scoring one is ranked), and none of them counts as a
// wrong candidate. With class nil only candidate i is correct.
func Retrieval(queries, candidates [][]float32, ks []int, class []int) (RetrievalResult, error) {
	return retrieval(queries, candidates, ks, class, false)
}

// RetrievalDot is Retrieval ranked by the inner product of the vectors as
// they are, not their cosine: InfoCSE trains and clusters with the inner
// product (its eq. 1 and 2), so its retrieval can rank with it too. For one
// query the two orders differ only through the candidates' norms.
func RetrievalDot(queries, candidates [][]float32, ks []int, class []int) (RetrievalResult, error) {
	return retrieval(queries, candidates, ks, class, true)
}

func retrieval(queries, candidates [][]float32, ks []int, class []int, dot bool) (RetrievalResult, error) {
	n := len(queries)
	if n == 0 {
		return RetrievalResult{}, fmt.Errorf("retrieval: no queries")
	}
	if len(candidates) != n {
		return RetrievalResult{}, fmt.Errorf("retrieval: %d queries but %d candidates (query i pairs with candidate i)", n, len(candidates))
	}
	if class != nil && len(class) != n {
		return RetrievalResult{}, fmt.Errorf("retrieval: %d classes for %d pairs", len(class), n)
	}
	for _, k := range ks {
		if k < 1 {
			return RetrievalResult{}, fmt.Errorf("retrieval: recall@%d: k must be at least 1", k)
		}
	}
	ranks, err := retrievalRanksBy(queries, candidates, class, dot)
	if err != nil {
		return RetrievalResult{}, fmt.Errorf("retrieval: %v", err)
	}
	res := RetrievalResult{Recall: map[int]float64{}, N: n}
	var sumRank float64
	for _, r := range ranks {
		sumRank += float64(r)
	}
	res.MeanRank = sumRank / float64(n)
	for _, k := range ks {
		hits := 0
		for _, r := range ranks {
			if r <= k {
				hits++
			}
		}
		res.Recall[k] = 100 * float64(hits) / float64(n)
	}
	return res, nil
}

// retrievalRanks returns each query's pessimistic rank (pessimisticRank)
// over all candidates by cosine, from the similarity matrix of gram.go.
func retrievalRanks(queries, candidates [][]float32, class []int) ([]int, error) {
	return retrievalRanksBy(queries, candidates, class, false)
}

// retrievalRanksBy is retrievalRanks by cosine (the unit vectors' inner
// product) or, with dot, by the inner product of the vectors as they are.
func retrievalRanksBy(queries, candidates [][]float32, class []int, dot bool) ([]int, error) {
	qu, err := newUnitRows(queries, "query")
	if err != nil {
		return nil, err
	}
	cu, err := newUnitRows(candidates, "candidate")
	if err != nil {
		return nil, err
	}
	if dot {
		qu.raw()
		cu.raw()
	}
	if qu.dim != cu.dim {
		return nil, fmt.Errorf("queries have %d dimensions, candidates %d", qu.dim, cu.dim)
	}
	ranks := make([]int, len(queries))
	simStrips(qu, cu, false, func(i0, i1 int, s []float64, ld, _ int) {
		for i := i0; i < i1; i++ {
			ranks[i] = pessimisticRank(s[(i-i0)*ld:(i-i0+1)*ld], i, class)
		}
	})
	return ranks, nil
}

// pessimisticRank is 1 plus the number of wrong candidates scoring at
// least as high as the best correct one (candidate i, and with class its
// duplicates).
func pessimisticRank(scores []float64, i int, class []int) int {
	correct := func(j int) bool { return j == i || (class != nil && class[j] == class[i]) }
	best := math.Inf(-1)
	for j, s := range scores {
		if correct(j) {
			best = math.Max(best, s)
		}
	}
	rank := 1
	for j, s := range scores {
		if !correct(j) && s >= best {
			rank++
		}
	}
	return rank
}

// normalize returns v / max(||v||, 1e-12) in float64: torch's
// F.normalize, whose eps keeps a zero vector zero.
func normalize(v []float32) []float64 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	norm := math.Max(math.Sqrt(ss), 1e-12)
	out := make([]float64, len(v))
	for j, x := range v {
		out[j] = float64(x) / norm
	}
	return out
}
