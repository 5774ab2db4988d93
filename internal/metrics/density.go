package metrics

import (
	"fmt"
	"math"
)

// DensityLevel summarises the system similarities of the pairs whose gold
// score falls in [Lo, Hi) (the top level includes Hi).
type DensityLevel struct {
	Lo, Hi float64
	N      int
	Mean   float64 // NaN when N == 0
	Var    float64 // population variance (numpy's np.var, ddof 0); NaN when N == 0
}

// Name is the level's label as PaSeR's Table 10 prints it ("0-1").
func (l DensityLevel) Name() string { return fmt.Sprintf("%g-%g", l.Lo, l.Hi) }

// CosineDensity computes PaSeR's Appendix C statistics (Table 10): "split the
// STS-B dataset into five similarity levels according to their labeled
// scores" and report the mean and variance of the cosine similarities in
// each. The paper does not state the bucket edges; its levels are labelled
// 0-1, 1-2, 2-3, 3-4, 4-5, so a gold score g goes to level floor(g), with
// g == 5 joining the 4-5 level: [0,1), [1,2), [2,3), [3,4), [4,5]. The
// variance is the population variance (ddof 0), numpy's default, which is
// what such analysis scripts compute with np.var. A gold score outside
// [0, 5] or a NaN is an error naming the pair's index.
func CosineDensity(sys, gold []float64) ([]DensityLevel, error) {
	if len(sys) != len(gold) {
		return nil, fmt.Errorf("cosine density: %d similarities but %d gold scores", len(sys), len(gold))
	}
	const levels = 5
	groups := make([][]float64, levels)
	for i, g := range gold {
		if math.IsNaN(g) || g < 0 || g > levels {
			return nil, fmt.Errorf("cosine density: pair %d: gold score %g outside [0, 5]", i, g)
		}
		if math.IsNaN(sys[i]) {
			return nil, fmt.Errorf("cosine density: pair %d: similarity is NaN", i)
		}
		l := min(int(math.Floor(g)), levels-1)
		groups[l] = append(groups[l], sys[i])
	}
	out := make([]DensityLevel, levels)
	for l, vs := range groups {
		d := DensityLevel{Lo: float64(l), Hi: float64(l + 1), N: len(vs), Mean: math.NaN(), Var: math.NaN()}
		if len(vs) > 0 {
			d.Mean = mean(vs)
			var ss float64
			for _, v := range vs {
				ss += (v - d.Mean) * (v - d.Mean)
			}
			d.Var = ss / float64(len(vs))
		}
		out[l] = d
	}
	return out, nil
}
