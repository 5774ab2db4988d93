package infocse

import (
	"fmt"
	"math"
	"math/rand/v2"

	"repro/internal/tensor"
)

// KMeansResult is a clustering of points into K global clusters.
type KMeansResult struct {
	Centers    [][]float64
	Labels     []int // cluster of each point
	Iterations int   // Lloyd iterations run
	Converged  bool  // assignments stopped changing before the limit
	Inertia    float64
	Empty      int // clusters left without a point at the end
}

// KMeans clusters the rows of x into k clusters: k-means++ seeding
// (Arthur and Vassilvitskii 2007: the first center uniformly, each next
// one with probability proportional to the squared distance to the
// nearest center so far) from a PCG generator seeded with seed, then
// Lloyd iterations until no assignment changes or maxIter. With Cosine the
// rows are L2-normalised first (spherical data, Euclidean means). An
// empty cluster keeps its previous center.
func KMeans(x [][]float32, k int, sim Similarity, seed uint64, maxIter int) (KMeansResult, error) {
	if k < 1 {
		return KMeansResult{}, fmt.Errorf("k-means: %d clusters: need at least 1", k)
	}
	if _, err := ParseSimilarity(string(sim)); err != nil {
		return KMeansResult{}, fmt.Errorf("k-means: %v", err)
	}
	pts, err := vectors64(x, sim)
	if err != nil {
		return KMeansResult{}, fmt.Errorf("k-means: %v", err)
	}
	if len(pts) < k {
		return KMeansResult{}, fmt.Errorf("k-means: %d points for %d clusters: need at least as many points as clusters", len(pts), k)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6b6d65616e73)) // "kmeans"
	return lloyd(pts, seedPlusPlus(pts, k, rng), maxIter)
}

func sqdist(a, b []float64) float64 {
	var s float64
	for i, x := range a {
		d := x - b[i]
		s += d * d
	}
	return s
}

func seedPlusPlus(pts [][]float64, k int, rng *rand.Rand) [][]float64 {
	n := len(pts)
	centers := [][]float64{append([]float64(nil), pts[rng.IntN(n)]...)}
	d2 := make([]float64, n)
	for i, p := range pts {
		d2[i] = sqdist(p, centers[0])
	}
	for len(centers) < k {
		var total float64
		for _, d := range d2 {
			total += d
		}
		next := -1
		if total > 0 {
			r := rng.Float64() * total
			var acc float64
			for i, d := range d2 {
				acc += d
				if d > 0 && r < acc {
					next = i
					break
				}
			}
		}
		if next < 0 {
			// Every point sits on a center (or rounding left r past the
			// sum): take the first point not yet chosen, deterministically.
			for i, d := range d2 {
				if d > 0 {
					next = i
					break
				}
			}
			if next < 0 {
				next = rng.IntN(n) // all points identical: duplicate centers
			}
		}
		c := append([]float64(nil), pts[next]...)
		centers = append(centers, c)
		for i, p := range pts {
			d2[i] = math.Min(d2[i], sqdist(p, c))
		}
	}
	return centers
}

// lloyd alternates assignment (nearest center, ties to the lower index)
// and update (mean of the members, summed in point order).
func lloyd(pts, centers [][]float64, maxIter int) (KMeansResult, error) {
	if maxIter < 1 {
		return KMeansResult{}, fmt.Errorf("k-means: max iterations %d must be at least 1", maxIter)
	}
	n, k, dim := len(pts), len(centers), len(centers[0])
	for i, p := range pts {
		if len(p) != dim {
			return KMeansResult{}, fmt.Errorf("k-means: point %d has %d dimensions, centers %d", i, len(p), dim)
		}
	}
	labels := make([]int, n)
	for i := range labels {
		labels[i] = -1
	}
	res := KMeansResult{}
	next := make([]int, n)
	for it := 1; it <= maxIter; it++ {
		// Each point's nearest center is independent of the others, so
		// the assignment runs in parallel without changing any result.
		tensor.ParallelFor(n, 256, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				best, bd := 0, math.Inf(1)
				for c, ctr := range centers {
					if d := sqdist(pts[i], ctr); d < bd {
						best, bd = c, d
					}
				}
				next[i] = best
			}
		})
		changed := 0
		for i, best := range next {
			if labels[i] != best {
				labels[i] = best
				changed++
			}
		}
		res.Iterations = it
		if changed == 0 {
			res.Converged = true
			break
		}
		sums := make([][]float64, k)
		counts := make([]int, k)
		for c := range sums {
			sums[c] = make([]float64, dim)
		}
		for i, p := range pts {
			c := labels[i]
			counts[c]++
			for j, v := range p {
				sums[c][j] += v
			}
		}
		for c := range centers {
			if counts[c] == 0 {
				continue // an empty cluster keeps its center
			}
			for j := range sums[c] {
				centers[c][j] = sums[c][j] / float64(counts[c])
			}
		}
	}
	counts := make([]int, k)
	for i, p := range pts {
		counts[labels[i]]++
		res.Inertia += sqdist(p, centers[labels[i]])
	}
	for _, c := range counts {
		if c == 0 {
			res.Empty++
		}
	}
	res.Centers, res.Labels = centers, labels
	return res, nil
}

// GroupByCluster turns the global cluster labels of one document's
// sentences into that document's clusters (IDC with K-means): sentences
// sharing a label form one cluster; clusters are ordered by their first
// sentence, members ascending (as Partition's).
func GroupByCluster(labels []int) [][]int { return groupBy(labels) }

// groupBy groups indices by their key: groups in the order of their first
// index, indices ascending.
func groupBy(keys []int) [][]int {
	index := map[int]int{}
	var out [][]int
	for i, key := range keys {
		c, ok := index[key]
		if !ok {
			c = len(out)
			index[key] = c
			out = append(out, nil)
		}
		out[c] = append(out[c], i)
	}
	return out
}
