package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestKendallTauBGolden compares with scipy.stats.kendalltau
// (testdata/gen_kendall.py).
func TestKendallTauBGolden(t *testing.T) {
	t.Parallel()
	var cases []struct {
		X, Y []float64
		Tau  *float64
	}
	b, err := os.ReadFile("testdata/kendall.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		got := KendallTauB(c.X, c.Y)
		switch {
		case c.Tau == nil:
			if !math.IsNaN(got) {
				t.Errorf("case %d: %v, want NaN (undefined)", i, got)
			}
		case math.Abs(got-*c.Tau) > 1e-12:
			t.Errorf("case %d: %.15f, want %.15f", i, got, *c.Tau)
		}
	}
}

func TestAgreementOf(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	ab := &Ablation{
		Name:    "augmentation",
		Columns: []string{"A", "B"},
		Rows: []AblRow{
			{Label: "x", Values: []float64{1, 10}, Paper: []float64{5, 1}},
			{Label: "y", Values: []float64{2, 20}, Paper: []float64{6, 1}}, // B: the paper ties x and y
			{Label: "z", Values: []float64{3, 15}, Paper: []float64{4, 3}},
			{Label: "w", Values: []float64{nan, 1}, Paper: []float64{9, nan}}, // no comparable cell
		},
	}
	a := AgreementOf(ab)
	if a == nil {
		t.Fatal("no agreement")
	}
	// A: pairs (x,y) paper 5<6 ours 1<2 agree; (x,z) paper 5>4 ours 1<3
	// disagree; (y,z) 6>4 vs 2<3 disagree. B: (x,y) tied in the paper;
	// (x,z) 1<3 and 10<15 agree; (y,z) 1<3 but 20>15 disagree.
	if a.Orderings != 5 || a.Agree != 2 {
		t.Errorf("orderings %d, agree %d; want 5 and 2", a.Orderings, a.Agree)
	}
	if c := a.Columns[0]; c.Cells != 3 || c.Orderings != 3 || c.Agree != 1 || math.Abs(c.Tau-(-1.0/3)) > 1e-12 {
		t.Errorf("column A %+v", c)
	}
	if c := a.Columns[1]; c.Cells != 3 || c.Orderings != 2 || c.Agree != 1 || math.Abs(c.Tau-KendallTauB([]float64{10, 20, 15}, []float64{1, 1, 3})) > 1e-12 {
		t.Errorf("column B %+v", c)
	}
	if want := (a.Columns[0].Tau + a.Columns[1].Tau) / 2; math.Abs(a.Tau-want) > 1e-12 {
		t.Errorf("tau %v, want the mean %v", a.Tau, want)
	}
	if math.Abs(a.Share()-0.4) > 1e-12 || a.Below() {
		t.Errorf("share %v, below %v without a minimum", a.Share(), a.Below())
	}
	a.Min = 0.5
	if !a.Below() || !strings.Contains(a.String(), "2 of 5 orderings agree with the paper (40%)") || !strings.Contains(a.String(), "minimum 50%: BELOW") {
		t.Errorf("below minimum: %s", a)
	}
	a.Min = 0.4
	if a.Below() || !strings.Contains(a.String(), "minimum 40%: ok") {
		t.Errorf("at minimum: %s", a)
	}
	if AgreementOf(&Ablation{Columns: []string{"A"}, Rows: []AblRow{{Label: "x", Values: []float64{1}}}}) != nil {
		t.Error("an ablation without paper values has an agreement")
	}
	// JSON round trip with an undefined tau.
	one := &Ablation{Columns: []string{"A"}, Rows: []AblRow{{Label: "x", Values: []float64{1}, Paper: []float64{2}}}}
	ag := AgreementOf(one)
	if !math.IsNaN(ag.Tau) || ag.Orderings != 0 || !math.IsNaN(ag.Share()) {
		t.Fatalf("single cell: %+v", ag)
	}
	ag.Min = 0.5
	if !ag.Below() {
		t.Error("a minimum with nothing to compare must not pass")
	}
	js, err := json.Marshal(ag)
	if err != nil {
		t.Fatal(err)
	}
	var back Agreement
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.Tau) || !math.IsNaN(back.Columns[0].Tau) || back.Min != 0.5 {
		t.Errorf("round trip %s -> %+v", js, back)
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	mk := func(name string, agree, n int, tau, min float64) *Ablation {
		return &Ablation{Name: name, Agreement: &Agreement{Orderings: n, Agree: agree, Tau: tau, Min: min}}
	}
	s := Summarize([]*Ablation{mk("t4", 10, 20, 0.2, 0), mk("t5", 20, 28, 0.6, 0.8), {Name: "fig4"}, nil})
	if s.Ablations != 2 || s.Agree != 30 || s.Orderings != 48 || math.Abs(s.Tau-0.4) > 1e-12 || len(s.Below) != 1 || s.Below[0] != "t5" {
		t.Errorf("summary %+v", s)
	}
	var b bytes.Buffer
	WriteSummary(&b, "paser", "mini", s)
	want := "paser (profile mini): 2 ablations with paper values, 30 of 48 orderings agree (62%), mean Kendall tau-b 0.40; below their minimum: t5\n"
	if b.String() != want {
		t.Errorf("summary line\n%q\nwant\n%q", b.String(), want)
	}
}

// TestResolvedOf counts against the paper's resolution by hand: pairs the
// paper sets no further apart than it are near-ties (whatever ours does),
// the rest its orderings.
func TestResolvedOf(t *testing.T) {
	t.Parallel()
	ab := &Ablation{
		Name:    "pooling",
		Columns: []string{"A", "B"},
		Rows: []AblRow{
			{Label: "x", Values: []float64{1, 10}, Paper: []float64{5.0, 1}},
			{Label: "y", Values: []float64{2, 20}, Paper: []float64{5.1, 1}},
			{Label: "z", Values: []float64{3, 10.5}, Paper: []float64{4.0, 3}},
		},
	}
	ab.Agreement = AgreementOf(ab)
	// A (0.1): x/y 0.1 apart in the paper (5.1 - 5.0 is not exactly 0.1 in
	// binary) is a near-tie, ours 1 apart: separated; x/z and y/z are
	// orderings ours reverses. B (1): x/y tie in the paper, ours 10 apart:
	// separated; x/z agrees (ours only 0.5 apart: ours is read by sign, as in
	// the plain count); y/z reversed.
	ab.Declare(0.5, []float64{0.1, 1})
	r := ab.Agreement.Resolved
	if r == nil || r.Orderings != 4 || r.Agree != 1 || r.NearTies != 2 || r.Separated != 2 {
		t.Fatalf("resolved %+v, want 1 of 4, 2 near-ties, 2 separated", r)
	}
	if ab.Agreement.Min != 0.5 || ab.Agreement.Orderings != 5 || ab.Agreement.Agree != 2 {
		t.Errorf("the plain count changed or the minimum was lost: %+v", ab.Agreement)
	}
	want := "beyond the paper's resolution (A 0.1, B 1): 1 of 4 orderings agree (25%); 2 near-ties, 2 of them further apart in ours"
	if ls := ab.AgreementLines(); len(ls) != 1 || ls[0] != want || strings.Contains(ab.Agreement.String(), "resolution") {
		t.Errorf("lines %q\nwant one line %q, and none in the agreement line %q", ls, want, ab.Agreement)
	}
	// One value serves every column.
	ab.Declare(0, []float64{0.5})
	if r := ab.Agreement.Resolved; !slices.Equal(r.Resolution, []float64{0.5, 0.5}) || r.Orderings != 4 || r.NearTies != 2 ||
		!strings.Contains(ab.AgreementLines()[0], "resolution (0.5): 1 of 4") {
		t.Errorf("one for every column: %+v %s", r, ab.Agreement)
	}
	// A resolution of 0 is the plain count (x/y in A, a near-tie above,
	// agrees by sign): exact ties are the near-ties.
	ab.Declare(0, []float64{0})
	if r := ab.Agreement.Resolved; r.Orderings != ab.Agreement.Orderings || r.Agree != ab.Agreement.Agree || r.NearTies != 1 {
		t.Errorf("resolution 0: %+v against %+v", r, ab.Agreement)
	}
	// Not declared: nothing, and the line is the plain one.
	ab.Declare(0, nil)
	if ab.Agreement.Resolved != nil || len(ab.AgreementLines()) != 0 {
		t.Errorf("undeclared: %s", ab.Agreement)
	}
	// JSON round trip.
	ab.Declare(0.5, []float64{0.1, 1})
	js, err := json.Marshal(ab.Agreement)
	if err != nil {
		t.Fatal(err)
	}
	var back Agreement
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.Resolved == nil || back.Resolved.Share() != ab.Agreement.Resolved.Share() || !slices.Equal(back.Resolved.Columns, ab.Columns) {
		t.Errorf("round trip %s -> %+v", js, back.Resolved)
	}
	// The summary sums the ablations that declare one.
	other := &Ablation{Name: "t4", Agreement: &Agreement{Orderings: 10, Agree: 7, Tau: 0.5,
		Resolved: &Resolved{Orderings: 6, Agree: 5, NearTies: 4, Separated: 1}}}
	plain := &Ablation{Name: "t5", Agreement: &Agreement{Orderings: 3, Agree: 3, Tau: 1}}
	var b bytes.Buffer
	WriteSummary(&b, "paser", "mini", Summarize([]*Ablation{ab, other, plain}))
	if want := "paser (profile mini): beyond the paper's resolution (2 ablations declare one), 6 of 10 orderings agree (60%); 6 near-ties, 3 of them further apart in ours\n"; !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nwant the line %q", b.String(), want)
	}
}
