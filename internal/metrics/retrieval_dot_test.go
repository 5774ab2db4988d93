package metrics

import (
	"testing"
)

// TestRetrievalDotRanksByInnerProduct: a candidate with a large norm wins
// under the inner product and loses under the cosine, so the two protocols
// rank query 0's counterpart 2nd and 1st.
func TestRetrievalDotRanksByInnerProduct(t *testing.T) {
	q := [][]float32{{1, 0}, {0, 1}}
	c := [][]float32{{1, 0.1}, {3, 3}}
	cos, err := Retrieval(q, c, []int{1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dot, err := RetrievalDot(q, c, []int{1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// cosine: q0 ranks c0 (0.995) over c1 (0.707); q1 ranks c1 (0.707)
	// over c0 (0.0995). dot: q0 ranks c1 (3) over c0 (1); q1 ranks c1 (3)
	// over c0 (0.1).
	if cos.Recall[1] != 100 || cos.MeanRank != 1 {
		t.Errorf("cosine: recall@1 %v, mean rank %v; want 100, 1", cos.Recall[1], cos.MeanRank)
	}
	if dot.Recall[1] != 50 || dot.MeanRank != 1.5 {
		t.Errorf("dot: recall@1 %v, mean rank %v; want 50, 1.5", dot.Recall[1], dot.MeanRank)
	}
}

// TestRetrievalDotMatchesPerPair compares RetrievalDot with plain inner
// products per pair, through the dense and the sparse path. Serial: it sets
// forcePath.
func TestRetrievalDotMatchesPerPair(t *testing.T) {
	defer func(p simPath) { forcePath = p }(forcePath)
	sets := map[string][2][][]float32{
		"dense":  {randomVectors(97, 40, 3), randomVectors(97, 40, 4)},
		"sparse": {sparseVectors(97, 300, 10, 3), sparseVectors(97, 300, 10, 4)},
	}
	for name, s := range sets {
		q, c := s[0], s[1]
		want := make([]int, len(q))
		scores := make([]float64, len(c))
		for i, v := range q {
			for j, w := range c {
				var d float64
				for k := range v {
					d += float64(v[k]) * float64(w[k])
				}
				scores[j] = d
			}
			want[i] = pessimisticRank(scores, i, nil)
		}
		var sum float64
		for _, r := range want {
			sum += float64(r)
		}
		for _, path := range []simPath{pathAuto, pathDense, pathSparse} {
			forcePath = path
			res, err := RetrievalDot(q, c, []int{1, 5}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.MeanRank != sum/float64(len(want)) {
				t.Errorf("%s path %d: mean rank %v, per-pair %v", name, path, res.MeanRank, sum/float64(len(want)))
			}
		}
	}
}
