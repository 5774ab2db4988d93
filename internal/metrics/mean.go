package metrics

import (
	"maps"
	"slices"
)

// SubsetMean is the "mean" setting of DINO's Table 5 (the evaluation of
// DeCLUTR and CLEAR): a task's score is the plain mean of the Spearman
// correlations of its subsets, in percent, instead of one Spearman over
// their concatenation.
//
// The subsets are summed in name order: a sum over the map in Go's random
// iteration order differed in the last bits from run to run (found by the
// exact baseline check).
func (t TaskResult) SubsetMean() float64 {
	var s float64
	for _, name := range slices.Sorted(maps.Keys(t.Subsets)) {
		s += t.Subsets[name].Spearman
	}
	return s / float64(len(t.Subsets))
}

// MeanSetting returns every task's SubsetMean, and the mean of the five
// STSYears' values each rounded to two decimals (Table 5's Avg.; ok false
// unless all five are present).
func (r STSResult) MeanSetting() (tasks map[string]float64, avg float64, ok bool) {
	tasks = map[string]float64{}
	for name, t := range r.Tasks {
		tasks[name] = t.SubsetMean()
	}
	var s float64
	for _, n := range STSYears {
		v, present := tasks[n]
		if !present {
			return tasks, 0, false
		}
		s += Round2(v)
	}
	return tasks, s / float64(len(STSYears)), true
}
