package report

import (
	"bytes"
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
	js := Judge(sample(""), nil)
	want := []Verdict{OK, BelowPaper, Missing, OK}
	for i, j := range js {
		if j.Verdict != want[i] {
			t.Errorf("%s: verdict %q, want %q", j.Name, j.Verdict, want[i])
		}
	}
	var buf bytes.Buffer
	WriteText(&buf, sample(""), js)
	golden(t, "paper.txt", buf.Bytes())
}

// A pending cell (a row only the paper reports) is shown, never judged.
func TestJudgePending(t *testing.T) {
	for _, prof := range []string{"", "mini"} {
		r := &Report{Experiment: "syncse", Profile: prof, Cells: []Cell{
			{Name: "dino[Avg]", Row: "DINO", Column: "Avg", Paper: 75.20, HasPaper: true, Tolerance: 1, Pending: "the paper's value"},
		}}
		js := Judge(r, &Baseline{Cells: map[string]BaselineCell{}})
		if js[0].Verdict != Pending || js[0].Verdict.Failing() {
			t.Errorf("profile %q: verdict %q", prof, js[0].Verdict)
		}
		var buf bytes.Buffer
		WriteText(&buf, r, js)
		if !strings.Contains(buf.String(), "75.20") || !strings.Contains(buf.String(), "pending: the paper's value") {
			t.Errorf("profile %q:\n%s", prof, buf.String())
		}
	}
}

func TestJudgeBaseline(t *testing.T) {
	bl := &Baseline{Cells: map[string]BaselineCell{
		"unsup_sts12": {Value: 70, Tolerance: 0.5}, // ours 68.9: regressed
		"unsup_sts13": {Value: 78.8, Tolerance: 0.5},
		"uniformity":  {Value: -1.5, Tolerance: 0.2}, // ours -2.1, lower is better: improved
	}}
	js := Judge(sample("mini"), bl)
	want := []Verdict{Regressed, OK, Missing, Improved}
	for i, j := range js {
		if j.Verdict != want[i] {
			t.Errorf("%s: verdict %q, want %q", j.Name, j.Verdict, want[i])
		}
		if j.Verdict.Failing() != (want[i] == Regressed || want[i] == Missing) {
			t.Errorf("%s: Failing() = %v", j.Name, j.Verdict.Failing())
		}
	}
	var buf bytes.Buffer
	WriteText(&buf, sample("mini"), js)
	golden(t, "mini.txt", buf.Bytes())
	if v := Judge(sample("mini"), nil)[0].Verdict; v != NoBaseline || !v.Failing() {
		t.Errorf("no baseline: verdict %q", v)
	}
}

func TestBaselineFromRuns(t *testing.T) {
	mk := func(v float64) *Report {
		return &Report{Experiment: "x", Profile: "mini", Cells: []Cell{{Name: "a", Ours: v, HasOurs: true}}}
	}
	bl, err := BaselineFromRuns([]*Report{mk(50), mk(51), mk(49)}, []int64{1, 2, 3}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	c := bl.Cells["a"]
	if c.Value != 50 || math.Abs(c.Std-1) > 1e-12 || c.Tolerance != 3 {
		t.Errorf("baseline cell %+v, want value 50, std 1, tolerance 3", c)
	}
	bl, _ = BaselineFromRuns([]*Report{mk(50), mk(50)}, nil, 0.5)
	if bl.Cells["a"].Tolerance != 0.5 {
		t.Errorf("floor not applied: %+v", bl.Cells["a"])
	}
	// A pending cell (only the paper's value) is not recorded; a cell
	// without a value that is not pending is an error.
	r := mk(50)
	r.Cells = append(r.Cells, Cell{Name: "p", Pending: "the paper's value only"})
	bl, err = BaselineFromRuns([]*Report{r}, nil, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := bl.Cells["p"]; ok || len(bl.Cells) != 1 {
		t.Errorf("pending cell recorded: %+v", bl.Cells)
	}
	r.Cells = append(r.Cells, Cell{Name: "q"})
	if _, err := BaselineFromRuns([]*Report{r}, nil, 0.5); err == nil {
		t.Error("a cell without value or reason: no error")
	}
}

func TestTolerance(t *testing.T) {
	for _, c := range []struct {
		vals      []float64
		std, want float64
	}{
		{[]float64{50, 51}, 0.1, 0.5},              // floor on the 0-100 scale
		{[]float64{48.67, 53.72}, 3.573, 10.8},     // 3 sd, rounded up to 3 digits
		{[]float64{0.918, 0.901}, 0.0119, 0.0357},  // unit scale: 3 sd
		{[]float64{0.954, 0.950}, 0.00027, 0.005},  // unit scale: floor/100
		{[]float64{-0.796, -0.833}, 0.026, 0.0780}, // negative unit-scale values
	} {
		if got := Tolerance(c.vals, c.std, 0.5); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Tolerance(%v, %g) = %g, want %g", c.vals, c.std, got, c.want)
		}
	}
}

func TestMarkdownAndAblationJSON(t *testing.T) {
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
