package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Tolerance is the band a recorded cell allows on another backend: three
// standard deviations over the seeds, at least floor, but the floor never
// above half the value's magnitude (a rate of exactly 0 on every seed is
// 0, not 0 +- 0.005). floor is on the 0-100 scale of the papers'
// percentages; a cell whose seed values all lie within [-1.5, 1.5] is a
// unit-scale statistic (a cosine, alignment, uniformity) and gets floor/100
// instead, so that 0.5 does not wave through any change of a value that
// lives between 0 and 1. Rounded up to 3 significant digits.
func Tolerance(vals []float64, std, floor float64) float64 {
	unit := true
	for _, v := range vals {
		if math.Abs(v) > 1.5 {
			unit = false
		}
	}
	if unit {
		floor /= 100
	}
	if len(vals) > 0 {
		floor = math.Min(floor, math.Abs(vals[0])/2)
	}
	tol := math.Max(3*std, floor)
	if tol <= 0 || math.IsNaN(tol) || math.IsInf(tol, 0) {
		return tol
	}
	scale := math.Pow(10, 2-math.Floor(math.Log10(tol)))
	return math.Ceil(tol*scale-1e-9) / scale
}

// RecordOptions are how a baseline is recorded from seeded runs.
type RecordOptions struct {
	// Floor is the smallest tolerance (see Tolerance).
	Floor float64
	// Backend is the backend family the runs used.
	Backend string
	// ExactOnly names cells to record as exact-only although their seeds
	// disagree by more than their value (BaselineCell.ExactOnly).
	ExactOnly []string
}

// WideError lists the cells whose tolerance would be larger than the value
// it guards or than the cell's declared ceiling: a baseline that records
// them could not catch the change it exists for.
type WideError struct{ Cells []WideCell }

// WideCell is one refused cell.
type WideCell struct {
	Name                  string
	Value, Tolerance, Max float64 // Max 0: the ceiling is the value itself
}

func (e *WideError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d cell(s) would record a tolerance wider than what it guards:", len(e.Cells))
	for _, c := range e.Cells {
		if c.Max > 0 {
			fmt.Fprintf(&b, "\n  %s: tolerance %.3g is above the declared max_tolerance %.3g (value %.4g)", c.Name, c.Tolerance, c.Max, c.Value)
		} else {
			fmt.Fprintf(&b, "\n  %s: tolerance %.3g is larger than the value %.4g (its seeds disagree by more than it measures)", c.Name, c.Tolerance, c.Value)
		}
	}
	b.WriteString("\nmake the profile measure them (more updates or data, so the seeds agree), or record them as --exact-only " +
		"(checked bit for bit on the same seed and backend, reported as not comparable elsewhere)")
	return b.String()
}

// BaselineFromRuns builds a baseline from reports of the same experiment and
// profile run with different seeds. The recorded value is the first report's
// (the default seed, which CI reproduces bit for bit on CPU); the tolerance,
// used only where bits cannot be expected to match (another backend), is
// Tolerance over the seeds, 0 for counts. A tolerance wider than the value
// or the cell's max_tolerance is refused (*WideError) unless the cell is
// named in ExactOnly.
func BaselineFromRuns(reports []*Report, seeds []int64, o RecordOptions) (*Baseline, error) {
	if len(reports) == 0 {
		return nil, fmt.Errorf("no runs to record")
	}
	first := reports[0]
	backend := o.Backend
	if backend == "" {
		backend = first.Backend
	}
	bl := &Baseline{Experiment: first.Experiment, Profile: first.Profile, Backend: backend,
		Recorded: time.Now().UTC().Format(time.RFC3339), Seeds: seeds, Cells: map[string]BaselineCell{}}
	exactOnly := map[string]bool{}
	for _, n := range o.ExactOnly {
		exactOnly[n] = true
	}
	var cells []Cell
	for _, c := range first.Cells {
		if c.Pending != "" {
			continue // only the paper gives it: nothing to record (check calls it pending)
		}
		cells = append(cells, c)
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].Name < cells[j].Name })
	wide := &WideError{}
	for _, cell := range cells {
		var vals []float64
		for _, r := range reports {
			for _, c := range r.Cells {
				if c.Name == cell.Name && c.HasOurs {
					vals = append(vals, c.Ours)
				}
			}
		}
		if len(vals) == 0 || !cell.HasOurs {
			return nil, fmt.Errorf("cell %s has no value in the first run", cell.Name)
		}
		std := stdDev(vals)
		bc := BaselineCell{Value: vals[0], SeedValues: vals, Std: std, Count: cell.Count}
		switch {
		case cell.Count:
			bc.Tolerance = 0
		case exactOnly[cell.Name]:
			bc.ExactOnly = true
			delete(exactOnly, cell.Name)
		default:
			bc.Tolerance = Tolerance(vals, std, o.Floor)
			if bc.Tolerance > math.Abs(bc.Value) || (cell.MaxTolerance > 0 && bc.Tolerance > cell.MaxTolerance) {
				wide.Cells = append(wide.Cells, WideCell{Name: cell.Name, Value: bc.Value, Tolerance: bc.Tolerance, Max: cell.MaxTolerance})
			}
		}
		bl.Cells[cell.Name] = bc
	}
	if len(exactOnly) > 0 {
		var names []string
		for n := range exactOnly {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("--exact-only names no recorded cell: %s", strings.Join(names, ", "))
	}
	if len(wide.Cells) > 0 {
		return nil, wide
	}
	return bl, nil
}

func stdDev(vals []float64) float64 {
	if len(vals) < 2 {
		return 0
	}
	var m float64
	for _, v := range vals {
		m += v
	}
	m /= float64(len(vals))
	var s float64
	for _, v := range vals {
		s += (v - m) * (v - m)
	}
	return math.Sqrt(s / float64(len(vals)-1))
}
