package metrics

import (
	"fmt"
	"math"
	"runtime"
	"sync"
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
	qn := normalizeAll(queries)
	cn := normalizeAll(candidates)
	ranks := make([]int, n)
	parallelRows(n, func(i int) {
		scores := make([]float64, n)
		for j := range cn {
			scores[j] = dot64(qn[i], cn[j])
		}
		best := math.Inf(-1)
		for j := range scores {
			if j == i || (class != nil && class[j] == class[i]) {
				best = math.Max(best, scores[j])
			}
		}
		rank := 1
		for j, s := range scores {
			correct := j == i || (class != nil && class[j] == class[i])
			if !correct && s >= best {
				rank++
			}
		}
		ranks[i] = rank
	})
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

// normalizeAll returns float64 copies of vs scaled to unit length (zero
// vectors stay zero, like torch.nn.functional.normalize), so a cosine is
// one dot product.
func normalizeAll(vs [][]float32) [][]float64 {
	out := make([][]float64, len(vs))
	for i, v := range vs {
		out[i] = normalize(v)
	}
	return out
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

// dot64 is a dot product with four independent accumulators (fixed order,
// so deterministic), which lets the CPU overlap the multiply-adds.
func dot64(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// parallelRows calls f(i) for i in [0, n) on GOMAXPROCS goroutines. f must
// write only to state owned by row i, so results do not depend on
// scheduling.
func parallelRows(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	next := make(chan int, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
