package report

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func sample(profile string) *Report {
	return &Report{Experiment: "simcse", Table: "Table 1: unsupervised STS", Profile: profile, Cells: []Cell{
		{Name: "unsup_sts12", Row: "SimCSE-BERT-base (unsup)", Column: "STS12", Paper: 68.40, HasPaper: true, Tolerance: 1, Ours: 68.9, HasOurs: true},
		{Name: "unsup_sts13", Row: "SimCSE-BERT-base (unsup)", Column: "STS13", Paper: 82.41, HasPaper: true, Tolerance: 1, Ours: 79.0, HasOurs: true},
		{Name: "unsup_avg", Row: "SimCSE-BERT-base (unsup)", Column: "Avg", Paper: 76.25, HasPaper: true, Tolerance: 1, Missing: "stage eval failed"},
		{Name: "uniformity", Row: "SimCSE-BERT-base (unsup)", Column: "uniformity", LowerIsBetter: true, Ours: -2.1, HasOurs: true},
	}}
}

func TestJudgePaper(t *testing.T) {
	t.Parallel()
	js := Judge(sample(""), nil, JudgeOptions{})
	want := []Verdict{OK, BelowPaper, Missing, NoPaper}
	for i, j := range js {
		if j.Verdict != want[i] {
			t.Errorf("%s: verdict %q, want %q", j.Name, j.Verdict, want[i])
		}
	}
	var buf bytes.Buffer
	WriteText(&buf, sample(""), js)
	golden(t, "paper.txt", buf.Bytes())
}

// Above the paper by more than the tolerance fails too, as an improvement
// (its own class), unless improvements are allowed.
func TestJudgeAbovePaper(t *testing.T) {
	t.Parallel()
	r := sample("")
	r.Cells[0].Ours = 90 // paper 68.40, tolerance 1
	j := Judge(r, nil, JudgeOptions{})[0]
	if j.Verdict != AbovePaper || j.Class() != Improvement || !j.Failing() {
		t.Errorf("above paper: %q class %v failing %v", j.Verdict, j.Class(), j.Failing())
	}
	j = Judge(r, nil, JudgeOptions{AllowImprovement: true})[0]
	if j.Verdict != AbovePaper || j.Class() != Pass || j.Failing() {
		t.Errorf("allowed: %q class %v", j.Verdict, j.Class())
	}
}

// A pending cell (a row only the paper reports) is shown, never judged.
func TestJudgePending(t *testing.T) {
	t.Parallel()
	for _, prof := range []string{"", "mini"} {
		r := &Report{Experiment: "syncse", Profile: prof, Cells: []Cell{
			{Name: "dino[Avg]", Row: "DINO", Column: "Avg", Paper: 75.20, HasPaper: true, Tolerance: 1, Pending: "the paper's value"},
		}}
		js := Judge(r, &Baseline{Cells: map[string]BaselineCell{}}, JudgeOptions{})
		if js[0].Verdict != Pending || js[0].Failing() || js[0].Class() != Skipped {
			t.Errorf("profile %q: verdict %q", prof, js[0].Verdict)
		}
		var tally Tally
		tally.Add(js[0])
		if tally.Checked != 0 || tally.Pending != 1 {
			t.Errorf("pending counted as checked: %+v", tally)
		}
		var buf bytes.Buffer
		WriteText(&buf, r, js)
		if !strings.Contains(buf.String(), "75.20") || !strings.Contains(buf.String(), "pending: the paper's value") {
			t.Errorf("profile %q:\n%s", prof, buf.String())
		}
	}
}

// Against a baseline on another backend (or without knowing the run's),
// the recorded tolerance applies, and a change beyond it fails either way.
func TestJudgeBaselineTolerance(t *testing.T) {
	t.Parallel()
	bl := &Baseline{Backend: "cpu", Seeds: []int64{42}, Cells: map[string]BaselineCell{
		"unsup_sts12": {Value: 70, Tolerance: 0.5}, // ours 68.9: regressed
		"unsup_sts13": {Value: 78.8, Tolerance: 0.5},
		"uniformity":  {Value: -1.5, Tolerance: 0.2}, // ours -2.1, lower is better: improved
	}}
	r := sample("mini")
	r.Backend = "cuda"
	js := Judge(r, bl, JudgeOptions{})
	want := []Verdict{Regressed, OK, Missing, Improved}
	wantClass := []Class{Regression, Pass, Error, Improvement}
	for i, j := range js {
		if j.Verdict != want[i] || j.Class() != wantClass[i] {
			t.Errorf("%s: verdict %q class %v, want %q %v", j.Name, j.Verdict, j.Class(), want[i], wantClass[i])
		}
		if j.Verdict != Missing && j.Mode != ModeTolerance {
			t.Errorf("%s: mode %q, want tolerance", j.Name, j.Mode)
		}
	}
	if _, why := Exactness(r, bl); why != "baseline recorded on cpu, this run on cuda" {
		t.Errorf("why = %q", why)
	}
	var buf bytes.Buffer
	WriteText(&buf, r, js)
	golden(t, "mini.txt", buf.Bytes())
	if v := Judge(sample("mini"), nil, JudgeOptions{})[0]; v.Verdict != NoBaseline || !v.Failing() {
		t.Errorf("no baseline: verdict %q", v.Verdict)
	}
	if j := Judge(r, bl, JudgeOptions{AllowImprovement: true})[3]; j.Class() != Pass || !j.Allowed {
		t.Errorf("allowed improvement: %+v", j)
	}
}

// The same seed on cpu is exact: a difference far inside the recorded
// tolerance is a change, and so is one upward; +1000 on a count is caught
// on every backend.
func TestJudgeBaselineExact(t *testing.T) {
	t.Parallel()
	seed := int64(42)
	mk := func(backend string, sts, kept float64) *Report {
		return &Report{Experiment: "gense", Profile: "ci", Backend: backend, Seed: &seed, Cells: []Cell{
			{Name: "sts12", Row: "GenSE", Column: "STS12", Ours: sts, HasOurs: true},
			{Name: "kept", Row: "quality check", Column: "kept", Ours: kept, HasOurs: true, Count: true},
		}}
	}
	bl := &Baseline{Backend: "cpu", Seeds: []int64{42, 1, 2}, Cells: map[string]BaselineCell{
		"sts12": {Value: 20.14, Tolerance: 17.6},
		"kept":  {Value: 585, Tolerance: 0, Count: true},
	}}
	for _, c := range []struct {
		name      string
		r         *Report
		want      [2]Verdict
		wantExact bool
	}{
		{"identical", mk("cpu", 20.14, 585), [2]Verdict{OK, OK}, true},
		{"last bit", mk("cpu", math.Nextafter(20.14, 30), 585), [2]Verdict{Improved, OK}, true},
		{"far up", mk("cpu", 90, 1585), [2]Verdict{Improved, Improved}, true},
		{"down", mk("cpu", 20.13, 584), [2]Verdict{Regressed, Regressed}, true},
		{"cuda within tolerance", mk("cuda", 30, 585), [2]Verdict{OK, OK}, false},
		{"cuda count", mk("cuda", 20.14, 1585), [2]Verdict{OK, Improved}, false},
		{"openblas", mk("openblas", 21, 585), [2]Verdict{OK, OK}, false},
	} {
		exact, _ := Exactness(c.r, bl)
		if exact != c.wantExact {
			t.Errorf("%s: exact %v", c.name, exact)
		}
		js := Judge(c.r, bl, JudgeOptions{})
		for i, j := range js {
			if j.Verdict != c.want[i] {
				t.Errorf("%s: %s verdict %q, want %q", c.name, j.Name, j.Verdict, c.want[i])
			}
		}
		if js[1].Mode != ModeExact {
			t.Errorf("%s: a count is compared in mode %q", c.name, js[1].Mode)
		}
	}
	// Another seed is not the recorded value: the tolerance applies.
	other := int64(1)
	r := mk("cpu", 25, 585)
	r.Seed = &other
	if exact, why := Exactness(r, bl); exact || why != "baseline recorded at seed 42, this run at seed 1" {
		t.Errorf("seed 1: exact %v (%s)", exact, why)
	}
	if r.AnyBackend = true; true {
		r.Seed = &seed
		if exact, _ := Exactness(r, bl); exact {
			t.Error("--any-backend run judged exactly")
		}
	}
	// A cell recorded before its computation was made deterministic
	// says so and gets its tolerance on the exact path.
	bl.Cells["sts12"] = BaselineCell{Value: 20.14, Tolerance: 0.5, NotExact: "recorded in map order"}
	if j := Judge(mk("cpu", 20.14+1e-13, 585), bl, JudgeOptions{})[0]; j.Verdict != OK || j.Mode != ModeTolerance {
		t.Errorf("not-exact cell on cpu: %q %q", j.Verdict, j.Mode)
	}
	// A stale cell (its inputs changed, not re-recorded yet) is counted
	// apart and not judged, on any path.
	bl.Cells["sts12"] = BaselineCell{Value: 20.14, Stale: "GenSE's triplets changed"}
	if j := Judge(mk("cpu", 30, 585), bl, JudgeOptions{})[0]; j.Verdict != Stale || j.Failing() {
		t.Errorf("stale cell: %q failing %v", j.Verdict, j.Failing())
	}
	// An exact-only cell off the exact path is not comparable, counted
	// apart; on it, it is exact.
	bl.Cells["sts12"] = BaselineCell{Value: 20.14, ExactOnly: true}
	js := Judge(mk("cuda", 20.14, 585), bl, JudgeOptions{})
	var tally Tally
	for _, j := range js {
		tally.Add(j)
	}
	if js[0].Verdict != NotComparable || tally.Checked != 1 || tally.NotComparable != 1 {
		t.Errorf("exact-only off cpu: %q, %+v", js[0].Verdict, tally)
	}
	if j := Judge(mk("cpu", 20.15, 585), bl, JudgeOptions{})[0]; j.Verdict != Improved || j.Mode != ModeExact {
		t.Errorf("exact-only on cpu: %q %q", j.Verdict, j.Mode)
	}
}

func TestTallyString(t *testing.T) {
	t.Parallel()
	tl := Tally{Checked: 93, Exact: 93, Pending: 24}
	if got := tl.String(); got != "93 checked (all exact), 24 pending" {
		t.Errorf("got %q", got)
	}
	tl = Tally{Checked: 10, Exact: 4, Regressed: 1, Improved: 2, Errors: 1, NoPaper: 3, NotComparable: 1}
	if got := tl.String(); got != "10 checked (4 exact), 1 regressed, 2 improved beyond tolerance, 1 with errors, 3 without a paper value, 1 not comparable" {
		t.Errorf("got %q", got)
	}
}

func TestBaselineFromRuns(t *testing.T) {
	t.Parallel()
	mk := func(v float64) *Report {
		return &Report{Experiment: "x", Profile: "mini", Backend: "cpu", Cells: []Cell{{Name: "a", Ours: v, HasOurs: true}}}
	}
	o := RecordOptions{Floor: 0.5}
	bl, err := BaselineFromRuns([]*Report{mk(50), mk(51), mk(49)}, []int64{1, 2, 3}, o)
	if err != nil {
		t.Fatal(err)
	}
	c := bl.Cells["a"]
	if c.Value != 50 || math.Abs(c.Std-1) > 1e-12 || c.Tolerance != 3 || bl.Backend != "cpu" {
		t.Errorf("baseline %+v cell %+v, want value 50, std 1, tolerance 3, backend cpu", bl, c)
	}
	bl, _ = BaselineFromRuns([]*Report{mk(50), mk(50)}, nil, o)
	if bl.Cells["a"].Tolerance != 0.5 {
		t.Errorf("floor not applied: %+v", bl.Cells["a"])
	}
	// A pending cell (only the paper's value) is not recorded; a cell
	// without a value that is not pending is an error.
	r := mk(50)
	r.Cells = append(r.Cells, Cell{Name: "p", Pending: "the paper's value only"})
	bl, err = BaselineFromRuns([]*Report{r}, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := bl.Cells["p"]; ok || len(bl.Cells) != 1 {
		t.Errorf("pending cell recorded: %+v", bl.Cells)
	}
	r.Cells = append(r.Cells, Cell{Name: "q"})
	if _, err := BaselineFromRuns([]*Report{r}, nil, o); err == nil {
		t.Error("a cell without value or reason: no error")
	}
}

// A count is recorded with tolerance 0; a tolerance wider than the value
// (GenSE's ci STS12: 7.97 over seeds 7.97, 20.89, 30.70) or than the
// declared ceiling is refused, naming the cell, unless recorded exact-only.
func TestBaselineRefusesWideTolerances(t *testing.T) {
	t.Parallel()
	mk := func(sts, kept, rate float64) *Report {
		return &Report{Experiment: "gense", Profile: "ci", Backend: "cpu", Cells: []Cell{
			{Name: "prompt_nli[STS12]", Ours: sts, HasOurs: true},
			{Name: "kept", Ours: kept, HasOurs: true, Count: true},
			{Name: "rate", Ours: rate, HasOurs: true, MaxTolerance: 1},
		}}
	}
	runs := []*Report{mk(7.965198915613808, 585, 60), mk(20.88857355412702, 1, 61), mk(30.701457647666807, 1000, 59)}
	_, err := BaselineFromRuns(runs, []int64{42, 1, 2}, RecordOptions{Floor: 0.5})
	var wide *WideError
	if !errors.As(err, &wide) {
		t.Fatalf("want a *WideError, got %v", err)
	}
	if len(wide.Cells) != 2 || wide.Cells[0].Name != "prompt_nli[STS12]" || wide.Cells[1].Name != "rate" || wide.Cells[1].Max != 1 {
		t.Errorf("refused %+v", wide.Cells)
	}
	if msg := err.Error(); !strings.Contains(msg, "prompt_nli[STS12]: tolerance 34.3 is larger than the value 7.965") ||
		!strings.Contains(msg, "rate: tolerance 3 is above the declared max_tolerance 1") {
		t.Errorf("message:\n%s", msg)
	}
	runs[0].Cells[2].MaxTolerance, runs[1].Cells[2].MaxTolerance, runs[2].Cells[2].MaxTolerance = 0, 0, 0
	bl, err := BaselineFromRuns(runs, []int64{42, 1, 2}, RecordOptions{Floor: 0.5, ExactOnly: []string{"prompt_nli[STS12]"}})
	if err != nil {
		t.Fatal(err)
	}
	if c := bl.Cells["prompt_nli[STS12]"]; !c.ExactOnly || c.Tolerance != 0 {
		t.Errorf("exact-only cell %+v", c)
	}
	if c := bl.Cells["kept"]; !c.Count || c.Tolerance != 0 || c.Value != 585 {
		t.Errorf("count cell %+v", c)
	}
	if _, err := BaselineFromRuns(runs, nil, RecordOptions{ExactOnly: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown --exact-only cell: %v", err)
	}
}

func TestTolerance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		vals      []float64
		std, want float64
	}{
		{[]float64{50, 51}, 0.1, 0.5},              // floor on the 0-100 scale
		{[]float64{48.67, 53.72}, 3.573, 10.8},     // 3 sd, rounded up to 3 digits
		{[]float64{0.918, 0.901}, 0.0119, 0.0357},  // unit scale: 3 sd
		{[]float64{0.954, 0.950}, 0.00027, 0.005},  // unit scale: floor/100
		{[]float64{-0.796, -0.833}, 0.026, 0.0780}, // negative unit-scale values
		{[]float64{0, 0, 0}, 0, 0},                 // a rate of exactly 0: the floor is capped at half the value
		{[]float64{0.0033, 0.0031}, 0.0001, 0.00165},
	} {
		if got := Tolerance(c.vals, c.std, 0.5); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Tolerance(%v, %g) = %g, want %g", c.vals, c.std, got, c.want)
		}
	}
}

func TestMarkdownAndAblationJSON(t *testing.T) {
	t.Parallel()
	r := sample("mini")
	r.Ablation = &Ablation{Name: "top_k", Title: "Table 5", Columns: []string{"STS-B"}, Rows: []AblRow{{Label: "1", Values: []float64{70.1}}, {Label: "2", Values: []float64{math.NaN()}}}}
	var buf bytes.Buffer
	WriteMarkdown(&buf, r)
	golden(t, "table.md", buf.Bytes())
	b, err := r.Ablation.Rows[1].MarshalJSON()
	if err != nil || string(b) != `{"label":"2","values":[null]}` {
		t.Fatalf("NaN row JSON = %s, %v", b, err)
	}
	var back AblRow
	if err := back.UnmarshalJSON(b); err != nil || !math.IsNaN(back.Values[0]) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
}

// TestMarkdownGroupsTables: rows with different columns go into separate
// tables, in order; unit-scale values keep three decimals.
func TestMarkdownGroupsTables(t *testing.T) {
	t.Parallel()
	r := &Report{Cells: []Cell{
		{Name: "a[STS12]", Row: "unsup", Column: "STS12", Ours: 50, HasOurs: true, Paper: 70.2, HasPaper: true},
		{Name: "a[Avg]", Row: "unsup", Column: "Avg", Ours: 49, HasOurs: true},
		{Name: "b[STS12]", Row: "sup", Column: "STS12", Ours: 51, HasOurs: true},
		{Name: "b[Avg]", Row: "sup", Column: "Avg", HasOurs: false},
		{Name: "d[0-1]", Row: "density", Column: "0-1", Ours: 0.9182, HasOurs: true, Paper: 0.55, HasPaper: true},
	}}
	var buf bytes.Buffer
	WriteMarkdown(&buf, r)
	want := `|  | STS12 | Avg |
|---|---|---|
| unsup | 50.00 (70.20) | 49.00 |
| sup | 51.00 | - |

|  | 0-1 |
|---|---|
| density | 0.918 (0.550) |

Each cell: ours (paper).
`
	if got := buf.String(); got != want {
		t.Errorf("markdown:\n%s\nwant:\n%s", got, want)
	}
}
