package plot

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Group is one density curve: a name (e.g. the gold-similarity level "3-4")
// and its sample (e.g. the cosine similarities of the STS-B pairs in it).
type Group struct {
	Name   string
	Values []float64
}

// GridPoints is the number of points each density curve is evaluated at.
// 512 points over a cosine range of [-1, 1] are 0.004 apart, far finer than
// any bandwidth Silverman's rule gives for a few hundred pairs.
const GridPoints = 512

// Density writes kernel density estimates of the groups to path (a .png
// file), one curve per group on a shared axis over [min, max] of all values
// of all groups (the paper's Figure 5 style). Each curve is a Gaussian-kernel
// KDE with Silverman's rule-of-thumb bandwidth (see Silverman). A group whose
// bandwidth is zero (a single value, or all values equal) falls back to
// FallbackBandwidth of the x range so it shows as a narrow peak rather than
// vanishing. An empty group draws no curve; its legend entry says "(no data)".
// The y label is "density".
func Density(path string, title, xLabel string, groups []Group) error {
	if err := checkPath(path); err != nil {
		return err
	}
	if len(groups) == 0 {
		return fmt.Errorf("plot: density plot %s: no groups", path)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, g := range groups {
		for j, v := range g.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("plot: density plot %s: group %d (%q): value %d is %v; values must be finite",
					path, i, g.Name, j, v)
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return fmt.Errorf("plot: density plot %s: every group is empty", path)
	}
	if lo == hi {
		// Every value is the same: widen the axis so the peak has a shape.
		lo, hi = lo-0.5, hi+0.5
	}
	xs := Grid(lo, hi, GridPoints)

	p := newPlot(title, xLabel, "density")
	ymax := 0.0
	for i, g := range groups {
		name := g.Name
		if name == "" {
			name = fmt.Sprintf("group %d", i+1)
		}
		if len(g.Values) == 0 {
			p.Legend.Add(name + " (no data)")
			continue
		}
		h := Silverman(g.Values)
		if h == 0 {
			h = FallbackBandwidth * (hi - lo)
		}
		ys := KDE(g.Values, h, xs)
		pts := make(plotter.XYs, len(xs))
		for k := range xs {
			pts[k] = plotter.XY{X: xs[k], Y: ys[k]}
			ymax = math.Max(ymax, ys[k])
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("plot: density plot %s: group %d (%q): %w", path, i, g.Name, err)
		}
		l.LineStyle = draw.LineStyle{Color: seriesColor(i), Width: vg.Points(1.5), Dashes: dashes(i)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (n=%d)", name, len(g.Values)), l)
	}
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min = 0
	p.Y.Max = ymax * 1.05
	if frac := legendHeadroom(p); frac > 0 {
		p.Y.Max /= 1 - frac
	}
	return render(p, path)
}

// FallbackBandwidth is the bandwidth, as a fraction of the plotted x range,
// used for a group whose Silverman bandwidth is zero. 1% of the range spans
// about five grid points, so the peak is resolved and still reads as "all
// values here".
const FallbackBandwidth = 0.01

// Grid returns n evenly spaced points from lo to hi inclusive (n >= 2).
func Grid(lo, hi float64, n int) []float64 {
	xs := make([]float64, n)
	for k := range xs {
		// Computed from both ends so the last point is exactly hi.
		t := float64(k) / float64(n-1)
		xs[k] = lo*(1-t) + hi*t
	}
	return xs
}

// Silverman returns Silverman's rule-of-thumb bandwidth for a Gaussian
// kernel (Silverman 1986, eq. 3.31; R's bw.nrd0):
//
//	h = 0.9 * min(s, IQR/1.34) * n^(-1/5)
//
// where s is the sample standard deviation (n-1 denominator) and IQR the
// interquartile range with linearly interpolated quantiles (R type 7, NumPy's
// default). Taking the minimum keeps heavy-tailed or bimodal samples from
// being oversmoothed. When the IQR is zero but s is not (many ties), s alone
// is used, as R does. It returns 0 when the sample has fewer than two values
// or no spread; callers choose their own fallback.
func Silverman(sample []float64) float64 {
	n := len(sample)
	if n < 2 {
		return 0
	}
	sorted := slices.Clone(sample)
	slices.Sort(sorted)
	if sorted[0] == sorted[n-1] {
		// Checked exactly: the mean of equal values need not equal them in
		// floating point, which would leave a spurious 1e-17 spread.
		return 0
	}
	var mean float64
	for _, v := range sample {
		mean += v
	}
	mean /= float64(n)
	var ss float64
	for _, v := range sample {
		ss += (v - mean) * (v - mean)
	}
	s := math.Sqrt(ss / float64(n-1))

	iqr := quantile(sorted, 0.75) - quantile(sorted, 0.25)

	spread := s
	if iqr > 0 {
		spread = math.Min(s, iqr/1.34)
	}
	if spread == 0 {
		return 0
	}
	return 0.9 * spread * math.Pow(float64(n), -0.2)
}

// quantile is the type-7 (linear interpolation) quantile of a sorted sample.
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(i)
	return sorted[i] + frac*(sorted[i+1]-sorted[i])
}

// KDE evaluates the Gaussian kernel density estimate of sample with
// bandwidth h at each point of xs:
//
//	f(x) = 1/(n h) * sum_i phi((x - x_i) / h),  phi(z) = exp(-z^2/2) / sqrt(2 pi)
//
// It returns all zeros for an empty sample or a bandwidth that is not
// positive (no density can be formed; Density never asks for one).
func KDE(sample []float64, h float64, xs []float64) []float64 {
	out := make([]float64, len(xs))
	if len(sample) == 0 || !(h > 0) {
		return out
	}
	norm := 1 / (float64(len(sample)) * h * math.Sqrt(2*math.Pi))
	for k, x := range xs {
		var sum float64
		for _, v := range sample {
			z := (x - v) / h
			sum += math.Exp(-0.5 * z * z)
		}
		out[k] = sum * norm
	}
	return out
}

// SimilarityLevels splits model similarities into the five gold-score levels
// of the paper's Figure 5 (Appendix C, following SimCSE): "0-1", "1-2",
// "2-3", "3-4", "4-5". Levels are half-open [k, k+1) except the last, which
// includes 5, so every STS-B score in [0, 5] lands in exactly one level.
// gold and sim are parallel (one entry per STS pair); a length mismatch or a
// gold score outside [0, 5] is an error naming the index.
func SimilarityLevels(gold, sim []float64) ([]Group, error) {
	if len(gold) != len(sim) {
		return nil, fmt.Errorf("plot: similarity levels: %d gold scores but %d similarities", len(gold), len(sim))
	}
	groups := make([]Group, 5)
	for k := range groups {
		groups[k].Name = fmt.Sprintf("%d-%d", k, k+1)
	}
	for i, g := range gold {
		if !(g >= 0 && g <= 5) {
			return nil, fmt.Errorf("plot: similarity levels: gold score %d is %v; want a value in [0, 5]", i, g)
		}
		k := min(int(g), 4)
		groups[k].Values = append(groups[k].Values, sim[i])
	}
	return groups, nil
}
