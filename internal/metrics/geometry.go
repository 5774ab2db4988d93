package metrics

import (
	"fmt"
	"math"
)

// Alignment returns Wang & Isola's alignment loss with alpha 2, as SimCSE
// uses it: the mean over pairs of ||f(a_i) - f(b_i)||^2 where f normalises
// to unit length (torch F.normalize: a zero vector stays zero). SimCSE's
// positive pairs are the STS-B pairs with gold score > 4. Lower is better.
func Alignment(a, b [][]float32) (float64, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("alignment: %d left vectors but %d right", len(a), len(b))
	}
	if len(a) == 0 {
		return 0, fmt.Errorf("alignment: no positive pairs")
	}
	var sum float64
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return 0, fmt.Errorf("alignment: pair %d: vectors of %d and %d dimensions", i, len(a[i]), len(b[i]))
		}
		sum += sqDist(normalize(a[i]), normalize(b[i]))
	}
	return sum / float64(len(a)), nil
}

// Uniformity returns Wang & Isola's uniformity loss with t 2:
// log(mean over all pairs i<j of exp(-2 * ||f(x_i) - f(x_j)||^2)), f as in
// Alignment (this is torch.pdist(x).pow(2).mul(-2).exp().mean().log()).
// Lower is better. It needs at least two vectors.
//
// Cost is O(n^2 d): the squared distances come from the Gram matrix of the
// unit vectors, ||u_i||^2 + ||u_j||^2 - 2 u_i.u_j (see gram.go: blocked, or
// sparse for bag-of-words vectors), strips of rows in parallel; each row's
// terms are summed in column order and the rows in row order.
func Uniformity(x [][]float32) (float64, error) {
	n := len(x)
	if n < 2 {
		return 0, fmt.Errorf("uniformity: %d vector(s); it needs at least 2", n)
	}
	u, err := newUnitRows(x, "vector")
	if err != nil {
		return 0, fmt.Errorf("uniformity: %v", err)
	}
	rows := make([]float64, n)
	simStrips(u, u, true, func(i0, i1 int, s []float64, ld, j0 int) {
		for i := i0; i < i1; i++ {
			dots := s[(i-i0)*ld : (i-i0+1)*ld]
			var sum float64
			for j := i + 1; j < n; j++ {
				// Rounding can take the distance of (nearly) equal
				// vectors a hair below 0; a distance is not negative.
				d := math.Max(0, u.sq[i]+u.sq[j]-2*dots[j-j0])
				sum += math.Exp(-2 * d)
			}
			rows[i] = sum
		}
	})
	var sum float64
	for _, s := range rows {
		sum += s
	}
	pairs := float64(n) * float64(n-1) / 2
	return math.Log(sum / pairs), nil
}

// sqDist is the squared Euclidean distance, with four independent
// accumulators (a fixed order, so deterministic) that let the CPU overlap
// the additions.
func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}
