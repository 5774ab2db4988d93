package metrics

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
)

// STS task names, as rows.STSPair.Task spells them.
var (
	// STSYears are the SemEval STS tasks whose score is Spearman over the
	// concatenation of all their subsets (SimCSE's "all" setting).
	STSYears = []string{"sts12", "sts13", "sts14", "sts15", "sts16"}
	// STSSeven are the seven columns whose rounded mean is the papers' Avg.
	STSSeven = []string{"sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"}
)

// splitTasks name their subset by the split (train/dev/test); a score over
// rows of several splits would mix the evaluation set with training data.
var splitTasks = map[string]bool{"stsb": true, "sickr": true}

// ScoredPair is one STS pair after encoding: the system's similarity (the
// cosine of the two sentence vectors) and the gold score.
type ScoredPair struct {
	Task   string
	Subset string
	Sys    float64
	Gold   float64
}

// Correlation holds the correlations of one group of pairs, in percent.
type Correlation struct {
	Spearman float64
	Pearson  float64
	N        int
}

// TaskResult is one task's result: over all its pairs, and per subset.
type TaskResult struct {
	Correlation
	Subsets map[string]Correlation
}

// STSResult is the outcome of the STS protocol, in percent (x100).
type STSResult struct {
	Tasks map[string]TaskResult
	// Avg is the mean of the seven STSSeven Spearman values, each first
	// rounded to two decimals (SimCSE formats each with "%.2f" and averages
	// the printed values). HasAvg is false unless all seven are present.
	Avg    float64
	HasAvg bool
	// STS12to16 is the same mean over the five STSYears only (DINO's
	// "STS12-16" column); HasSTS12to16 is false unless all five are present.
	STS12to16    float64
	HasSTS12to16 bool
}

// STS evaluates scored pairs as SimCSE's evaluation does (the "all" setting
// the papers report): a task's score is Spearman's correlation between
// system and gold over the concatenation of all its pairs (all subsets of a
// year; the single split of stsb or sickr), in percent. Per-subset values
// are reported beside it. It is an error for stsb or sickr to have pairs of
// more than one split, and for any correlation to be undefined (fewer than
// two pairs, or constant system or gold scores); the error names the task
// and subset.
func STS(pairs []ScoredPair) (STSResult, error) {
	type group struct{ sys, gold []float64 }
	tasks := map[string]*group{}
	subsets := map[string]map[string]*group{}
	for _, p := range pairs {
		if tasks[p.Task] == nil {
			tasks[p.Task] = &group{}
			subsets[p.Task] = map[string]*group{}
		}
		t := tasks[p.Task]
		t.sys = append(t.sys, p.Sys)
		t.gold = append(t.gold, p.Gold)
		s := subsets[p.Task][p.Subset]
		if s == nil {
			s = &group{}
			subsets[p.Task][p.Subset] = s
		}
		s.sys = append(s.sys, p.Sys)
		s.gold = append(s.gold, p.Gold)
	}
	res := STSResult{Tasks: map[string]TaskResult{}}
	for _, name := range slices.Sorted(maps.Keys(tasks)) {
		if splitTasks[name] && len(subsets[name]) > 1 {
			return STSResult{}, fmt.Errorf("task %s: pairs from %d splits %v; an STS evaluation takes one split", name, len(subsets[name]), slices.Sorted(maps.Keys(subsets[name])))
		}
		g := tasks[name]
		c, err := correlate(g.sys, g.gold)
		if err != nil {
			return STSResult{}, fmt.Errorf("task %s: %v", name, err)
		}
		tr := TaskResult{Correlation: c, Subsets: map[string]Correlation{}}
		for _, sn := range slices.Sorted(maps.Keys(subsets[name])) {
			sg := subsets[name][sn]
			sc, err := correlate(sg.sys, sg.gold)
			if err != nil {
				return STSResult{}, fmt.Errorf("task %s, subset %s: %v", name, sn, err)
			}
			tr.Subsets[sn] = sc
		}
		res.Tasks[name] = tr
	}
	res.Avg, res.HasAvg = roundedMean(res.Tasks, STSSeven)
	res.STS12to16, res.HasSTS12to16 = roundedMean(res.Tasks, STSYears)
	return res, nil
}

// correlate returns Spearman and Pearson in percent, or an error saying why
// they are undefined.
func correlate(sys, gold []float64) (Correlation, error) {
	switch {
	case len(sys) < 2:
		return Correlation{}, fmt.Errorf("%d pair(s): a correlation needs at least 2", len(sys))
	case constant(gold):
		return Correlation{}, fmt.Errorf("all %d gold scores are equal (%g): correlation undefined", len(gold), gold[0])
	case constant(sys):
		return Correlation{}, fmt.Errorf("all %d similarities are equal (%g): correlation undefined (does the encoder map every sentence to the same direction?)", len(sys), sys[0])
	}
	c := Correlation{Spearman: 100 * Spearman(sys, gold), Pearson: 100 * Pearson(sys, gold), N: len(sys)}
	if math.IsNaN(c.Spearman) || math.IsNaN(c.Pearson) {
		return Correlation{}, fmt.Errorf("correlation is NaN (a similarity or gold score is NaN)")
	}
	return c, nil
}

// Round2 rounds v to two decimals exactly as Python's "%.2f" does: the
// correctly rounded decimal of v's exact binary value.
func Round2(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64)
	return r
}

func roundedMean(tasks map[string]TaskResult, names []string) (float64, bool) {
	var s float64
	for _, n := range names {
		t, ok := tasks[n]
		if !ok {
			return 0, false
		}
		s += Round2(t.Spearman)
	}
	return s / float64(len(names)), true
}
