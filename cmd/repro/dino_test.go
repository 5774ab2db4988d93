package main

import "testing"

// TestDINOValues: DINO's bad parameters (a template without the x1
// placeholder, a negative lambda, labels without instructions, a count of
// 0, inverted smoothing) are reported before anything runs, each at its
// line.
func TestDINOValues(t *testing.T) {
	code, _, errs := repro(t, "validate", "testdata/dino_values.hcl")
	if code != 1 {
		t.Errorf("validate dino_values.hcl: exit %d, want 1", code)
	}
	golden(t, "dino_values.golden", errs)
}
