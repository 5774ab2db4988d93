package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/experiment"
	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
	"repro/registry/builtin"
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

// TestPaperPagesListDeviations: each experiment's page under docs/papers
// says, in its "Deviations (paper profile)" paragraph, which deviations
// the paper profile declares now -- by name, in the file's order; those of
// the modules it runs are named on the modules' own pages -- and
// links the generated list (docs/results, TestDocsUpToDate): a deviation
// added or removed in the file fails here until the page says so.
func TestPaperPagesListDeviations(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	files, err := filepath.Glob("../../experiments/*.hcl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiments: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".hcl")
		want := "Declared deviations: " + paperDeviationNames(t, file) + " ([generated list](../results/" + name + ".md#" + anchor(paperDeviationsHeading) + "))."
		page := filepath.Join("..", "..", "docs", "papers", name+".md")
		src, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var par string
		for _, l := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(l, "**Deviations (paper profile).**") {
				par = l
				break
			}
		}
		if par == "" {
			t.Errorf("%s: no paragraph starts with **Deviations (paper profile).**", page)
		} else if !strings.HasSuffix(par, want) {
			got := par
			if i := strings.Index(par, "Declared deviations:"); i >= 0 {
				got = par[i:]
			}
			t.Errorf("%s: the paper profile's deviations paragraph ends\n  %s\nwant\n  %s", page, got, want)
		}
	}
}

// paperDeviationNames are the deviations file's paper profile declares
// itself, "`name`, ..." in the file's order, or "none"; a module's are on
// the module's own page.
func paperDeviationNames(t *testing.T, file string) string {
	t.Helper()
	x, _, _, err := experiment.Load(builtin.Default(), file, experiment.Options{})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var names []string
	for _, d := range x.Deviations() {
		if len(d.Modules) == 0 {
			names = append(names, "`"+d.Name+"`")
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
