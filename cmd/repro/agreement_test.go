package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
)

// agreementFixture copies testdata/agreement.hcl into a fresh experiments/
// directory with its own cache, and returns its path and text.
func agreementFixture(t *testing.T) (string, []byte) {
	t.Helper()
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	t.Setenv("CI", "true")
	root := t.TempDir()
	file := filepath.Join(root, "experiments", "agreement.hcl")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/agreement.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("REPRO_CACHE", filepath.Join(root, "cache"))
	return file, src
}

// TestCheckAgreement: an ablation grid is judged by the share of the
// paper's orderings it reproduces against min_agreement, one grid at a
// time or all together with a summary line.
func TestCheckAgreement(t *testing.T) {
	file, _ := agreementFixture(t)

	code, out, errs := repro(t, "check", file, "--ablations")
	if code != 1 || !strings.Contains(out, "ablation features: no recorded grid (run `repro run "+file+" --ablation features`)") {
		t.Errorf("before any run: exit %d\n%s%s", code, out, errs)
	}
	for _, ab := range []string{"features", "strict", "nopaper"} {
		code, out, errs := repro(t, "run", file, "--ablation", ab)
		if code != 0 {
			t.Fatalf("run --ablation %s: exit %d\n%s\n%s", ab, code, out, errs)
		}
		if ab == "features" && !strings.Contains(out, "agreement: 2 of 3 orderings agree with the paper (67%), Kendall tau-b 0.33; minimum 50%: ok") {
			t.Errorf("run output lacks the agreement line:\n%s", out)
		}
	}
	for ab, want := range map[string]struct {
		code exitStatus
		line string
	}{
		"features": {0, "ablation features: 2 of 3 orderings agree with the paper (67%), Kendall tau-b 0.33; minimum 50%: ok"},
		"strict":   {2, "ablation strict: 2 of 3 orderings agree with the paper (67%), Kendall tau-b 0.33; minimum 90%: BELOW"},
		"nopaper":  {1, "ERROR ablation nopaper: no paper values; check judges an ablation by its agreement"},
	} {
		code, out, _ := repro(t, "check", file, "--ablation", ab)
		if code != want.code || !strings.Contains(out, want.line) {
			t.Errorf("check --ablation %s: exit %d (want %d)\n%s", ab, code, want.code, out)
		}
	}
	code, out, _ = repro(t, "check", file, "--ablations")
	want := "agreement (profile paper): 2 ablations with paper values, 4 of 6 orderings agree (67%), mean Kendall tau-b 0.33; below their minimum: strict"
	if code != 2 || !strings.Contains(out, want) || !strings.Contains(out, "ablation nopaper: no paper values") {
		t.Errorf("check --ablations: exit %d\n%s\nwant the line %q", code, out, want)
	}
}

// TestCheckAgreementMinimumFromFile: the minimum check applies is the one
// the file declares now; raising it after the grid ran turns ok into BELOW
// without a re-run (the grid itself stays cached).
func TestCheckAgreementMinimumFromFile(t *testing.T) {
	file, src := agreementFixture(t)
	if code, out, errs := repro(t, "run", file, "--ablation", "features"); code != 0 {
		t.Fatalf("run --ablation features: exit %d\n%s\n%s", code, out, errs)
	}
	// The grid recorded above is seed 42's; under another seed the hint
	// names the run that would record it, with the same -var.
	code, out, _ := repro(t, "check", file, "--ablations", "--var", "seed=7")
	if want := "ablation features: no recorded grid (run `repro run " + file + " --var seed=7 --ablation features`)"; code != 1 || !strings.Contains(out, want) {
		t.Errorf("check --ablations --var seed=7: exit %d\n%s\nwant %q", code, out, want)
	}
	raised := strings.Replace(string(src), "min_agreement = 0.5", "min_agreement = 0.8", 1)
	if raised == string(src) {
		t.Fatal("testdata/agreement.hcl no longer declares min_agreement = 0.5 for features")
	}
	if err := os.WriteFile(file, []byte(raised), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = repro(t, "check", file, "--ablation", "features")
	if want := "(67%), Kendall tau-b 0.33; minimum 80%: BELOW"; code != 2 || !strings.Contains(out, want) {
		t.Errorf("check after raising the minimum: exit %d (want 2)\n%s\nwant %q", code, out, want)
	}
	code, out, _ = repro(t, "results", file, "--ablation", "features")
	if want := "minimum 80%: BELOW"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("results after raising the minimum shows the recorded one: exit %d\n%s\nwant %q", code, out, want)
	}
	if code, out, _ := repro(t, "plan", file, "--ablation", "features"); code != 0 || !strings.Contains(out, "0 of") {
		t.Errorf("a raised minimum made the grid re-run: exit %d\n%s", code, out)
	}
	// So is the paper's resolution: declared after the run, check and
	// results count against it, and nothing re-runs. The "paper" sets
	// 100/400 and 100/2000 10 apart (near-ties, ours 14.7 and 32.6 apart)
	// and 400/2000 20 apart (ours agree).
	paper := `paper  = { "100" = [30], "400" = [20], "2000" = [40] }`
	declared := strings.Replace(raised, paper, paper+"\n  paper_resolution = 10", 1)
	if declared == raised {
		t.Fatal("testdata/agreement.hcl no longer declares the features grid's paper values as " + paper)
	}
	if err := os.WriteFile(file, []byte(declared), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "minimum 80%: BELOW\n" // then, on a line of its own:
	want2 := "beyond the paper's resolution (10): 1 of 1 orderings agree (100%); 2 near-ties, 2 of them further apart in ours\n"
	for _, cmd := range []string{"check", "results"} {
		code, out, _ = repro(t, cmd, file, "--ablation", "features")
		if !strings.Contains(out, want) || !strings.Contains(out, want2) || code != map[string]exitStatus{"check": 2, "results": 0}[cmd] {
			t.Errorf("%s after declaring the resolution: exit %d\n%s\nwant %q and %q", cmd, code, out, want, want2)
		}
	}
	code, out, _ = repro(t, "check", file, "--ablations")
	if want := "agreement (profile paper): beyond the paper's resolution (1 ablation declares one), 1 of 1 orderings agree (100%); 2 near-ties, 2 of them further apart in ours"; !strings.Contains(out, want) {
		t.Errorf("check --ablations after declaring the resolution: exit %d\n%s\nwant %q", code, out, want)
	}
	if code, out, _ := repro(t, "plan", file, "--ablation", "features"); code != 0 || !strings.Contains(out, "0 of") {
		t.Errorf("a declared resolution made the grid re-run: exit %d\n%s", code, out)
	}
}

// TestSeedsCombineGrids: run --seeds records one grid per seed and prints
// them combined; results and check --seeds read the recorded ones back;
// --seeds without an ablation, beside -var seed, or naming a seed never
// recorded is refused with the cause.
func TestSeedsCombineGrids(t *testing.T) {
	file, _ := agreementFixture(t)

	code, out, errs := repro(t, "run", file, "--ablation", "features", "--seeds", "42,7")
	// TF-IDF is unseeded: both seeds give the same cells, sd 0.
	for _, line := range []string{"== seed 42 ==", "== seed 7 ==", "ablation features (mean over seeds 42, 7)",
		"±0.00", "agreement: 2 of 3 orderings agree with the paper (67%)", "seed 7 alone: 2 of 3 orderings agree"} {
		if !strings.Contains(out, line) {
			t.Errorf("run --seeds: exit %d, output lacks %q\n%s%s", code, line, out, errs)
		}
	}
	code, out, _ = repro(t, "results", file, "--ablation", "features", "--seeds", "7,42")
	if code != 0 || !strings.Contains(out, "(mean over seeds 7, 42)") {
		t.Errorf("results --seeds: exit %d\n%s", code, out)
	}
	code, out, _ = repro(t, "check", file, "--ablation", "features", "--seeds", "42,7")
	if code != 0 || !strings.Contains(out, "minimum 50%: ok") || !strings.Contains(out, "3 of the 3 orderings are ordered alike by every seed; 2 of those agree") {
		t.Errorf("check --ablation --seeds: exit %d\n%s", code, out)
	}
	// strict and nopaper were never run under either seed; nopaper has no
	// paper values, so nothing is combined for it and its absence is no error.
	code, out, _ = repro(t, "check", file, "--ablations", "--seeds", "42,7")
	if want := "ablation strict: no recorded grid (run `repro run " + file + " --ablation strict --seeds 42,7`)"; code != 1 || !strings.Contains(out, want) ||
		!strings.Contains(out, "ablation nopaper: no paper values") || strings.Contains(out, "ablation nopaper: no recorded grid") {
		t.Errorf("check --ablations --seeds: exit %d\n%s\nwant %q", code, out, want)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"results", file, "--seeds", "42,7"}, "--seeds combines an ablation's grids over seeds: give --ablation NAME"},
		{[]string{"results", file, "--ablation", "features", "--seeds", "42,7", "--var", "seed=3"}, "--seeds and -var seed=3 both set the seed"},
		{[]string{"results", file, "--ablation", "features", "--seeds", "42,9"}, "seed 9:"},
		{[]string{"run", file, "--seeds", "42"}, "give --ablation NAME"},
	} {
		code, out, errs := repro(t, c.args...)
		if code != 1 || !strings.Contains(out+errs, c.msg) {
			t.Errorf("%v: exit %d, want 1 and %q\n%s%s", c.args, code, c.msg, out, errs)
		}
	}
}
