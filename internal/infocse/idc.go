package infocse

import (
	"fmt"
	"math"
	"sort"
)

// Similarity is the weight of an edge between two sentences.
type Similarity string

const (
	// Dot is the inner product <f(s_i), f(s_j)> (the paper's eq. 2).
	Dot Similarity = "dot"
	// Cosine is the inner product of the L2-normalised vectors.
	Cosine Similarity = "cosine"
)

// ParseSimilarity checks a similarity name.
func ParseSimilarity(s string) (Similarity, error) {
	switch Similarity(s) {
	case Dot, Cosine:
		return Similarity(s), nil
	}
	return "", fmt.Errorf("similarity %q: want %q or %q", s, Dot, Cosine)
}

// Pair is a positive pair of sentences of one document, by index, I < J.
type Pair struct{ I, J int }

// vectors64 checks that vs are non-empty rows of one dimension with finite
// values and returns them in float64, L2-normalised for Cosine (a zero
// vector stays zero).
func vectors64(vs [][]float32, sim Similarity) ([][]float64, error) {
	if len(vs) == 0 {
		return nil, nil
	}
	dim := len(vs[0])
	if dim == 0 {
		return nil, fmt.Errorf("vector 0 is empty")
	}
	out := make([][]float64, len(vs))
	for i, v := range vs {
		if len(v) != dim {
			return nil, fmt.Errorf("vector %d has %d dimensions, vector 0 has %d", i, len(v), dim)
		}
		r := make([]float64, dim)
		var ss float64
		for k, x := range v {
			f := float64(x)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("vector %d: component %d is %v", i, k, x)
			}
			r[k] = f
			ss += f * f
		}
		if sim == Cosine && ss > 0 {
			n := math.Sqrt(ss)
			for k := range r {
				r[k] /= n
			}
		}
		out[i] = r
	}
	return out, nil
}

func dot(a, b []float64) float64 {
	var s float64
	for k, x := range a {
		s += x * b[k]
	}
	return s
}

// Partition is the paper's partition-based clustering of one document's
// sentences (eq. 2-3, Algorithm 2): w_ij = sim(v_i, v_j); the edge {i, j}
// is kept when j is among the k highest-weighted neighbours of i or i among
// those of j; the clusters are the connected components of what is kept.
// Ties in the top-k go to the lower index. Clusters come ordered by their
// lowest index, each listing its members in ascending order. One vector
// gives one singleton cluster; none gives none. k >= len(vs)-1 keeps every
// edge (one cluster).
func Partition(vs [][]float32, k int, sim Similarity) ([][]int, error) {
	if k < 1 {
		return nil, fmt.Errorf("partition: top-k %d must be at least 1", k)
	}
	if _, err := ParseSimilarity(string(sim)); err != nil {
		return nil, fmt.Errorf("partition: %v", err)
	}
	x, err := vectors64(vs, sim)
	if err != nil {
		return nil, fmt.Errorf("partition: %v", err)
	}
	n := len(x)
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			s := dot(x[i], x[j])
			w[i][j], w[j][i] = s, s
		}
	}
	uf := newUnionFind(n)
	others := make([]int, 0, n)
	for i := 0; i < n; i++ {
		others = others[:0]
		for j := 0; j < n; j++ {
			if j != i {
				others = append(others, j)
			}
		}
		row := w[i]
		// Stable on index order: equal weights keep the lower index first.
		sort.SliceStable(others, func(a, b int) bool { return row[others[a]] > row[others[b]] })
		for _, j := range others[:min(k, len(others))] {
			uf.union(i, j) // an undirected edge: "j in top-k(i)" or "i in top-k(j)"
		}
	}
	return uf.components(), nil
}

// ClusterPairs lists every unordered pair inside each cluster once (eq. 4),
// cluster by cluster, in index order within a cluster (members must be
// ascending, as Partition and GroupByCluster give them).
func ClusterPairs(clusters [][]int) []Pair {
	var out []Pair
	for _, c := range clusters {
		for a := 0; a < len(c); a++ {
			for b := a + 1; b < len(c); b++ {
				out = append(out, Pair{I: c[a], J: c[b]})
			}
		}
	}
	return out
}

// Stats counts what a clustering of a corpus produced.
type Stats struct {
	Documents  int `json:"documents"`  // documents seen
	Skipped    int `json:"skipped"`    // documents with fewer than two sentences: no pair possible
	NoPairs    int `json:"no_pairs"`   // documents of two or more sentences that gave no pair (all singletons)
	Sentences  int `json:"sentences"`  // sentences of the documents clustered
	Clusters   int `json:"clusters"`   // clusters over all clustered documents
	Singletons int `json:"singletons"` // clusters of one sentence
	Pairs      int `json:"pairs"`      // positive pairs
	Largest    int `json:"largest"`    // sentences in the largest cluster
}

// Add records one document's clusters (nil clusters for a skipped one).
func (s *Stats) Add(sentences int, clusters [][]int, pairs int) {
	s.Documents++
	if sentences < 2 {
		s.Skipped++
		return
	}
	s.Sentences += sentences
	s.Clusters += len(clusters)
	for _, c := range clusters {
		if len(c) == 1 {
			s.Singletons++
		}
		s.Largest = max(s.Largest, len(c))
	}
	s.Pairs += pairs
	if pairs == 0 {
		s.NoPairs++
	}
}

// ClustersPerDocument is the mean number of clusters of a clustered
// document (0 when none was).
func (s Stats) ClustersPerDocument() float64 {
	if d := s.Documents - s.Skipped; d > 0 {
		return float64(s.Clusters) / float64(d)
	}
	return 0
}

// unionFind is a disjoint-set forest with path halving; the root of a set
// is always its lowest member, so components need no further sorting.
type unionFind struct{ parent []int }

func newUnionFind(n int) *unionFind {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return &unionFind{parent: p}
}

func (u *unionFind) find(i int) int {
	for u.parent[i] != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = u.parent[i]
	}
	return i
}

func (u *unionFind) union(i, j int) {
	ri, rj := u.find(i), u.find(j)
	if ri != rj {
		u.parent[max(ri, rj)] = min(ri, rj)
	}
}

// components returns the sets ordered by their lowest member, members
// ascending.
func (u *unionFind) components() [][]int {
	roots := make([]int, len(u.parent))
	for i := range roots {
		roots[i] = u.find(i)
	}
	return groupBy(roots)
}
