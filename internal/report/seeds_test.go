package report

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func grid(name string, vals ...[]float64) *Ablation {
	paper := [][]float64{{10, 1}, {20, 2}, {30, 3}}
	a := &Ablation{Name: name, Title: "Table X", Columns: []string{"A", "B"}}
	for i, v := range vals {
		a.Rows = append(a.Rows, AblRow{Label: string(rune('p' + i)), Values: v, Paper: paper[i]})
	}
	a.Agreement = AgreementOf(a)
	a.Agreement.Min = 0.6
	return a
}

// TestMeanOverSeeds: cells are the means with the sample sd; the agreement
// is the means' (not the average of the seeds' agreements); each seed's own
// agreement is kept; a cell one seed misses is missing.
func TestMeanOverSeeds(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	// Column A: seed 42 orders p < q < r except q > r by 0.1; seed 1 orders
	// r > q by 1: the means order all three as the paper does.
	s42 := grid("g", []float64{1, 5}, []float64{3.1, 4}, []float64{3.0, nan})
	s1 := grid("g", []float64{2, 6}, []float64{3.0, 7}, []float64{4.0, 8})
	m, err := MeanOverSeeds([]*Ablation{s42, s1}, []int64{42, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{1.5, 5.5}, {3.05, 5.5}, {3.5, nan}}
	wantSD := [][]float64{{math.Sqrt(0.5), math.Sqrt(0.5)}, {math.Sqrt(0.005), math.Sqrt(4.5)}, {math.Sqrt(0.5), nan}}
	for r, row := range m.Rows {
		for c := range row.Values {
			if !near(row.Values[c], want[r][c]) || !near(row.SD[c], wantSD[r][c]) {
				t.Errorf("row %s col %d: %v ± %v, want %v ± %v", row.Label, c, row.Values[c], row.SD[c], want[r][c], wantSD[r][c])
			}
		}
	}
	// A: 3 of 3 on the means; B: p and q tie in ours (5.5) -> 0 of 1 (r missing).
	if a := m.Agreement; a.Orderings != 4 || a.Agree != 3 || a.Min != 0.6 {
		t.Errorf("agreement %+v, want 3 of 4 with the minimum 0.6 carried", a)
	}
	if len(m.SeedAgreement) != 2 || m.SeedAgreement[0].Agree != 2 || m.SeedAgreement[0].Orderings != 4 ||
		m.SeedAgreement[1].Agree != 6 || m.SeedAgreement[1].Orderings != 6 {
		t.Errorf("per-seed agreements %+v %+v, want 2 of 4 and 6 of 6", m.SeedAgreement[0], m.SeedAgreement[1])
	}

	// Stable: A's p<q and p<r under both seeds (both agree), q/r flips; B's
	// p/q flips; the pairs with B's r are not under every seed.
	if st := m.Stable; st == nil || st.Of != 4 || st.Orderings != 2 || st.Agree != 2 {
		t.Errorf("stable %+v, want 2 of 4 ordered alike, both agreeing", m.Stable)
	}

	var b bytes.Buffer
	WriteAblationText(&b, m)
	for _, line := range []string{
		"ablation Table X (mean over seeds 42, 1)",
		"3.05±0.07 (20.00)",
		"cells: ours: mean±sd over the seeds (paper)",
		"agreement: 3 of 4 orderings agree with the paper (75%)",
		"seed 42 alone: 2 of 4 orderings agree with the paper (50%)",
		"2 of the 4 orderings are ordered alike by every seed; 2 of those agree with the paper (100%)",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, b.String())
		}
	}
	if strings.Contains(b.String(), "alone: 2 of 4 orderings agree with the paper (50%), Kendall tau-b 0.00; minimum") {
		t.Errorf("a seed's own line is judged against the minimum, which applies to the mean:\n%s", b.String())
	}

	// The summary sums the stable orderings of the grids combined over seeds.
	var sum bytes.Buffer
	WriteSummary(&sum, "x", "mini", Summarize([]*Ablation{m, m}))
	if want := "x (profile mini): 4 of the 8 orderings are ordered alike by every seed; 4 of those agree with the paper (100%)"; !strings.Contains(sum.String(), want) {
		t.Errorf("summary:\n%s\nwant %q", sum.String(), want)
	}

	// JSON keeps sd (null for NaN) and the seeds.
	js, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Ablation
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Seeds) != 2 || !math.IsNaN(back.Rows[2].SD[1]) || !near(back.Rows[1].SD[1], math.Sqrt(4.5)) || len(back.SeedAgreement) != 2 {
		t.Errorf("JSON round trip lost the seeds or sd: %s", js)
	}
}

// TestMeanOverSeedsRefusesDifferentGrids: grids of different variants or
// columns are not one ablation under two seeds.
func TestMeanOverSeedsRefusesDifferentGrids(t *testing.T) {
	t.Parallel()
	a := grid("g", []float64{1, 1}, []float64{2, 2}, []float64{3, 3})
	b := grid("g", []float64{1, 1}, []float64{2, 2})
	if _, err := MeanOverSeeds([]*Ablation{a, b}, []int64{42, 1}); err == nil || !strings.Contains(err.Error(), "seed 1's grid of ablation g") {
		t.Errorf("different variants: %v", err)
	}
	c := grid("g", []float64{1, 1}, []float64{2, 2}, []float64{3, 3})
	c.Columns = []string{"A", "C"}
	if _, err := MeanOverSeeds([]*Ablation{a, c}, []int64{42, 1}); err == nil {
		t.Error("different columns combined")
	}
	if _, err := MeanOverSeeds([]*Ablation{a}, []int64{42, 1}); err == nil {
		t.Error("one grid for two seeds combined")
	}
}

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) < 1e-9
}

// TestMeanOverSeedsKeepsTheResolution: the paper's resolution the seeds'
// grids were read with is applied to the means.
func TestMeanOverSeedsKeepsTheResolution(t *testing.T) {
	t.Parallel()
	s42 := grid("g", []float64{1, 5}, []float64{3, 4}, []float64{2, 6})
	s1 := grid("g", []float64{2, 6}, []float64{3, 7}, []float64{4, 8})
	for _, g := range []*Ablation{s42, s1} {
		g.Declare(0.6, []float64{10, 1}) // the paper's cells are 10 (A) and 1 (B) apart
	}
	m, err := MeanOverSeeds([]*Ablation{s42, s1}, []int64{42, 1})
	if err != nil {
		t.Fatal(err)
	}
	// Only p/r is an ordering in each column (20 and 2 apart); the means
	// (A 1.5, 3, 3; B 5.5, 5.5, 7) order both as the paper. The other four
	// pairs are near-ties, of which B's q/r is 1.5 apart in ours: separated.
	r := m.Agreement.Resolved
	if r == nil || !slices.Equal(r.Resolution, []float64{10, 1}) || r.Orderings != 2 || r.Agree != 2 || r.NearTies != 4 || r.Separated != 1 || m.Agreement.Min != 0.6 {
		t.Errorf("resolved on the means %+v (min %v), want 2 of 2, 4 near-ties, 1 separated, min 0.6", r, m.Agreement.Min)
	}
}
