package main

import (
	"math"
	"slices"
	"testing"
)

// TestDINOPaperSettings: DINO's paper profile trains Sentence-RoBERTa as
// sentence-transformers' fit does -- warm-up 10% of the updates the run
// makes (a ratio, not a count tuned to the paper's data sizes) and weight
// decay 0.01 -- and Table 2 carries the paper's values, so its agreement
// is computed; the mini and ci profiles keep what they were recorded with.
func TestDINOPaperSettings(t *testing.T) {
	x := loadShipped(t, "dino", "", "", nil)
	for _, s := range []string{`sroberta["x2"]`, `sroberta["x1x2"]`} {
		for p, want := range map[string]any{"warmup": 0.0, "warmup_ratio": 0.1, "weight_decay": 0.01} {
			if got := stageParam(t, x, "", s, p); got != want {
				t.Errorf("paper profile: %s %s = %v, want %v", s, p, got, want)
			}
		}
	}
	for prof, warmup := range map[string]float64{"mini": 10, "ci": 2} {
		m := loadShipped(t, "dino", prof, "", nil)
		for _, s := range []string{`sroberta["x2"]`, `sroberta["x1x2"]`} {
			for p, want := range map[string]any{"warmup": warmup, "warmup_ratio": 0.0, "weight_decay": 0.0} {
				if got := stageParam(t, m, "", s, p); got != want {
					t.Errorf("%s: %s %s = %v, recorded with %v", prof, s, p, got, want)
				}
			}
		}
	}
	for _, d := range deviationNames(x) {
		if d == "warmup_steps" || d == "weight_decay" || d == "table2_values" {
			t.Errorf("deviation %q is still declared", d)
		}
	}

	// Table 2 as dino.md prints it: STS12-16 (avg), STSb, SICK; no Avg.
	a := loadShipped(t, "dino", "", "table2", nil)
	want := map[string][]float64{
		"DINO (STS-L-x2)":    {76.09, 77.82, 68.09},
		"lambda = 0":         {65.50, 70.71, 67.60},
		"lambda = 200":       {75.40, 77.49, 66.83},
		"no label smoothing": {74.50, 76.26, 66.23},
		"no augmentation":    {70.90, 73.81, 63.98},
	}
	paper := a.Config.Ablation.Paper
	if len(paper) != len(want) || len(a.Config.Variants) != len(want) {
		t.Fatalf("Table 2: %d variants, paper values for %d (%v), want %d", len(a.Config.Variants), len(paper), paper, len(want))
	}
	for _, v := range a.Config.Variants {
		got, w := paper[v.Name], want[v.Name]
		if len(got) != 4 || !slices.Equal(got[:3], w) || !math.IsNaN(got[3]) {
			t.Errorf("Table 2 %q: paper %v, want %v and no Avg", v.Name, got, w)
		}
	}
	// Its first row is the default pipeline: Table 1's STS-L-x2 row.
	for _, e := range x.Config.Expects {
		if e.Block == "dino_x2" && e.Key == "STS-B" && e.Paper != want["DINO (STS-L-x2)"][1] {
			t.Errorf("Table 1 STS-B %v, Table 2's first row %v", e.Paper, want["DINO (STS-L-x2)"][1])
		}
	}
}
