package report

import (
	"fmt"
	"math"
)

// The verdict rules, in one place so `repro run`, `repro results` and
// `repro check` agree.
//
// Paper profile (no profile): |ours - paper| <= the expect block's
// tolerance is "ok"; below is "below paper" (a regression), above is "above
// paper" (an improvement: a reproduction that beats the paper by more than
// the stated tolerance is as suspicious as one that falls short, so it fails
// too, with its own exit status, unless improvements are allowed). A cell
// the paper prints no value for is "no paper value", counted apart.
//
// Other profiles, against the baseline recorded under results/:
//   - Exact: the run and the baseline's first seed used the same seed on a
//     deterministic backend family (cpu; runs are bit-identical run after
//     run and across AVX2 and AVX-512 hosts), so any difference at all is a
//     change. Counts (`count = true`) are exact on every backend.
//   - Tolerance: where bits cannot be expected to match (another backend
//     family, a GPU, another seed, --any-backend), within the recorded
//     tolerance (spread over seeds) is "ok".
//   - A change either way fails: worse (lower, or higher when lower is
//     better) is "regressed", better is "improved"; `repro baseline`
//     records an intended change.
//   - A cell recorded --exact-only is "not comparable" off the exact path,
//     counted apart, never "within tolerance".
//   - A baseline cell that says why it is not exact (not_exact: recorded
//     before a fix made its computation deterministic) gets its tolerance
//     on the exact path too, and the output says why.
//   - A cell with no value (its stage failed or never ran) is "missing", a
//     cell the baseline lacks "no baseline": errors.
//   - A pending cell (only the paper gives it) is "pending", counted apart.
//   - A baseline cell marked stale (an input changed and the profile could
//     not be re-run yet) is "stale", counted apart and named in the output.

// Verdict is the judgement of one cell.
type Verdict string

// Verdicts.
const (
	OK            Verdict = "ok"
	BelowPaper    Verdict = "below paper"
	AbovePaper    Verdict = "above paper"
	Regressed     Verdict = "regressed"
	Improved      Verdict = "improved"
	Missing       Verdict = "missing"
	NoBaseline    Verdict = "no baseline"
	Pending       Verdict = "pending"        // a cell we do not compute (Cell.Pending)
	NoPaper       Verdict = "no paper value" // paper profile: nothing to judge against
	NotComparable Verdict = "not comparable" // an exact-only cell off the exact path
	Stale         Verdict = "stale"          // the baseline says its value is out of date (BaselineCell.Stale)
)

// Class is what a verdict means for a gate.
type Class int

// Classes, in increasing severity for an exit status.
const (
	Pass        Class = iota // judged and within bounds
	Skipped                  // pending, no paper value, not comparable: counted apart
	Improvement              // beyond tolerance upward (or above the paper)
	Regression               // beyond tolerance downward (or below the paper)
	Error                    // missing value, no baseline
)

func (c Class) String() string {
	switch c {
	case Pass:
		return "pass"
	case Skipped:
		return "skipped"
	case Improvement:
		return "improvement"
	case Regression:
		return "regression"
	}
	return "error"
}

// Mode is how a cell was compared.
type Mode string

// Modes.
const (
	ModePaper     Mode = "paper"     // against the paper within the expect block's tolerance
	ModeExact     Mode = "exact"     // against the baseline, bit for bit
	ModeTolerance Mode = "tolerance" // against the baseline within its recorded tolerance
)

// Deterministic says whether a backend family gives bit-identical results
// for the same seed on any host: the pure-Go CPU kernels do (fixed-order
// reductions); OpenBLAS picks kernels per CPU and CUDA per GPU.
func Deterministic(backend string) bool { return backend == "cpu" }

// JudgeOptions change how check treats a change.
type JudgeOptions struct {
	// AllowImprovement passes cells beyond tolerance in the better
	// direction (reported, not failing).
	AllowImprovement bool
}

// Judged is a cell with its verdict and what it was compared with.
type Judged struct {
	Cell
	Verdict  Verdict
	Baseline *BaselineCell
	// Mode is how the cell was compared ("" when it was not: pending,
	// missing, no baseline, no paper value, not comparable).
	Mode Mode
	// Reference is the value compared with (the paper's or the
	// baseline's), Tol the tolerance applied (0 in exact mode).
	Reference float64
	Tol       float64
	// Allowed marks an improvement passed by JudgeOptions.AllowImprovement.
	Allowed bool
}

// Class is the verdict's meaning for a gate.
func (j Judged) Class() Class {
	switch j.Verdict {
	case OK:
		return Pass
	case Pending, NoPaper, NotComparable, Stale:
		return Skipped
	case AbovePaper, Improved:
		if j.Allowed {
			return Pass
		}
		return Improvement
	case BelowPaper, Regressed:
		return Regression
	}
	return Error
}

// Failing says whether the cell fails `repro check`.
func (j Judged) Failing() bool { return j.Class() > Skipped }

// Diff is ours minus the reference (NaN when the cell was not compared).
func (j Judged) Diff() float64 {
	if j.Mode == "" || !j.HasOurs {
		return math.NaN()
	}
	return j.Ours - j.Reference
}

// Exactness says whether a run can be checked bit for bit against a
// baseline, and why (or why not), in words for the output.
func Exactness(r *Report, bl *Baseline) (bool, string) {
	if bl == nil {
		return false, "no baseline"
	}
	switch {
	case r.Backend == "":
		return false, "the run's backend was not recorded"
	case bl.Backend == "":
		return false, "the baseline's backend was not recorded"
	case r.Backend != bl.Backend:
		return false, fmt.Sprintf("baseline recorded on %s, this run on %s", bl.Backend, r.Backend)
	case !Deterministic(r.Backend):
		return false, fmt.Sprintf("%s results are not bit-reproducible across hosts", r.Backend)
	case r.AnyBackend:
		return false, "--any-backend may serve stages computed on another backend"
	}
	if r.Seed != nil && len(bl.Seeds) > 0 && *r.Seed != bl.Seeds[0] {
		return false, fmt.Sprintf("baseline recorded at seed %d, this run at seed %d", bl.Seeds[0], *r.Seed)
	}
	if r.Seed != nil {
		return true, fmt.Sprintf("seed %d on %s: bit for bit", *r.Seed, r.Backend)
	}
	return true, fmt.Sprintf("on %s: bit for bit", r.Backend)
}

// Judge judges every cell of r: against the paper when its profile is "",
// else against bl (which may be nil: every cell is then "no baseline").
func Judge(r *Report, bl *Baseline, o JudgeOptions) []Judged {
	exact, _ := Exactness(r, bl)
	out := make([]Judged, 0, len(r.Cells))
	for _, c := range r.Cells {
		j := Judged{Cell: c}
		switch {
		case c.Pending != "":
			j.Verdict = Pending
		case !c.HasOurs:
			j.Verdict = Missing
		case r.Profile == "":
			if !c.HasPaper {
				j.Verdict = NoPaper
				break
			}
			j.Mode, j.Reference, j.Tol = ModePaper, c.Paper, c.Tolerance
			j.Verdict = direction(c.Ours-c.Paper, c.Tolerance, false, BelowPaper, AbovePaper)
		default:
			if bl != nil {
				if v, ok := bl.Cells[c.Name]; ok {
					j.Baseline = &v
				}
			}
			bc := j.Baseline
			switch {
			case bc == nil:
				j.Verdict = NoBaseline
			case bc.Stale != "":
				j.Verdict = Stale
			case exact && bc.NotExact == "" || bc.Count || c.Count:
				j.Mode, j.Reference = ModeExact, bc.Value
				if c.Ours == bc.Value {
					j.Verdict = OK
				} else {
					j.Verdict = direction(c.Ours-bc.Value, 0, c.LowerIsBetter, Regressed, Improved)
				}
			case bc.ExactOnly:
				j.Verdict = NotComparable
			default:
				j.Mode, j.Reference, j.Tol = ModeTolerance, bc.Value, bc.Tolerance
				j.Verdict = direction(c.Ours-bc.Value, bc.Tolerance, c.LowerIsBetter, Regressed, Improved)
			}
		}
		if (j.Verdict == Improved || j.Verdict == AbovePaper) && o.AllowImprovement {
			j.Allowed = true
		}
		out = append(out, j)
	}
	return out
}

// direction is OK within tol, else worse or better by the sign of d (flipped
// when lower is better).
func direction(d, tol float64, lowerIsBetter bool, worse, better Verdict) Verdict {
	if lowerIsBetter {
		d = -d
	}
	switch {
	case tol > 0 && math.Abs(d) <= tol+1e-9:
		return OK
	case d == 0:
		return OK
	case d < 0:
		return worse
	}
	return better
}

// Tally counts judged cells by how they came out; a check's summary line.
type Tally struct {
	Checked       int `json:"checked"` // judged: passed, regressed or improved
	Exact         int `json:"exact"`   // of Checked, compared bit for bit
	Pending       int `json:"pending"`
	NoPaper       int `json:"no_paper_value"`
	NotComparable int `json:"not_comparable"`
	Stale         int `json:"stale"`
	Regressed     int `json:"regressed"`
	Improved      int `json:"improved"` // beyond tolerance upward and not allowed
	Errors        int `json:"errors"`   // missing values, no baseline
}

// Add counts one judged cell.
func (t *Tally) Add(j Judged) {
	switch j.Verdict {
	case Pending:
		t.Pending++
		return
	case NoPaper:
		t.NoPaper++
		return
	case NotComparable:
		t.NotComparable++
		return
	case Stale:
		t.Stale++
		return
	case Missing, NoBaseline:
		t.Errors++
		return
	}
	t.Checked++
	if j.Mode == ModeExact {
		t.Exact++
	}
	switch j.Class() {
	case Regression:
		t.Regressed++
	case Improvement:
		t.Improved++
	}
}

// Merge adds another tally.
func (t *Tally) Merge(o Tally) {
	t.Checked += o.Checked
	t.Exact += o.Exact
	t.Pending += o.Pending
	t.NoPaper += o.NoPaper
	t.NotComparable += o.NotComparable
	t.Stale += o.Stale
	t.Regressed += o.Regressed
	t.Improved += o.Improved
	t.Errors += o.Errors
}

// String is "93 checked (69 exact), 24 pending", naming only what occurs.
func (t Tally) String() string {
	s := fmt.Sprintf("%d checked", t.Checked)
	if t.Exact > 0 {
		if t.Exact == t.Checked {
			s += " (all exact)"
		} else {
			s += fmt.Sprintf(" (%d exact)", t.Exact)
		}
	}
	for _, p := range []struct {
		n    int
		what string
	}{{t.Regressed, "regressed"}, {t.Improved, "improved beyond tolerance"}, {t.Errors, "with errors"},
		{t.Pending, "pending"}, {t.NoPaper, "without a paper value"}, {t.NotComparable, "not comparable"}, {t.Stale, "stale"}} {
		if p.n > 0 {
			s += fmt.Sprintf(", %d %s", p.n, p.what)
		}
	}
	return s
}
