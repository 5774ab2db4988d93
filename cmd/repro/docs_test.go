package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The committed docs/results pages are what `repro docs` writes from
// results/*.json: a number in the docs cannot drift from a recorded
// baseline (regenerate with `make docs`).
func TestDocsUpToDate(t *testing.T) {
	files, err := filepath.Glob("../../experiments/*.hcl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiments: %v", err)
	}
	args := append([]string{"docs"}, files...)
	args = append(args, "--out", "../../docs/results", "--check")
	if code, out, errs := repro(t, args...); code != 0 {
		t.Errorf("docs --check: exit %d\n%s%s", code, out, errs)
	}
	// A page edited by hand is caught, named.
	dir := t.TempDir()
	if code, _, errs := repro(t, "docs", "../../experiments/t5.hcl", "--out", dir); code != 0 {
		t.Fatalf("docs: exit %d %s", code, errs)
	}
	page := filepath.Join(dir, "t5.md")
	b, _ := os.ReadFile(page)
	os.WriteFile(page, []byte(strings.Replace(string(b), "|", "| 99.99 |", 1)), 0o644)
	if code, _, errs := repro(t, "docs", "../../experiments/t5.hcl", "--out", dir, "--check"); code != 1 || !strings.Contains(errs, page) {
		t.Errorf("an edited page: exit %d %s", code, errs)
	}
}
