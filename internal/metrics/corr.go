package metrics

import (
	"math"
	"sort"
)

// Cosine returns the cosine similarity of a and b, accumulated in float64.
// It is 0 when either vector is zero (see the package doc). It panics if the
// lengths differ, which is a programming error.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		panic("metrics: Cosine of vectors of different lengths")
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

// Pearson returns Pearson's correlation coefficient of x and y as
// scipy.stats.pearsonr does: NaN when either input is constant, when there
// are fewer than two values, or when a value is NaN. It panics if the
// lengths differ.
func Pearson(x, y []float64) float64 {
	if len(x) != len(y) {
		panic("metrics: Pearson of inputs of different lengths")
	}
	n := len(x)
	if n < 2 || constant(x) || constant(y) {
		return math.NaN()
	}
	mx, my := mean(x), mean(y)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	r := sxy / (math.Sqrt(sxx) * math.Sqrt(syy))
	// Rounding can push |r| a hair past 1; scipy clips likewise.
	return math.Max(-1, math.Min(1, r))
}

// Spearman returns Spearman's rank correlation of x and y as
// scipy.stats.spearmanr does: the Pearson correlation of the ranks, tied
// values getting the average of their ranks. NaN under the same conditions
// as Pearson.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) {
		panic("metrics: Spearman of inputs of different lengths")
	}
	if hasNaN(x) || hasNaN(y) {
		return math.NaN()
	}
	return Pearson(Rank(x), Rank(y))
}

// Rank returns the 1-based ranks of x with ties given the average of the
// ranks they span (scipy.stats.rankdata, method "average"). x must not hold
// NaN.
func Rank(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && x[idx[j]] == x[idx[i]] {
			j++
		}
		// Positions i..j-1 (0-based) share ranks i+1..j; their mean is (i+1+j)/2.
		avg := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			r[idx[k]] = avg
		}
		i = j
	}
	return r
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// constant reports whether all values are equal (scipy's test for its
// ConstantInputWarning). A NaN makes the input non-constant, and the NaN then
// propagates through the arithmetic as in scipy.
func constant(x []float64) bool {
	for _, v := range x[1:] {
		if v != x[0] {
			return false
		}
	}
	return true
}

func hasNaN(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}
