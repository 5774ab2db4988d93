package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
	"repro/internal/report"
)

var update = flag.Bool("update", false, "rewrite golden files")

// repro runs the CLI in-process and returns its exit code and output.
func repro(t *testing.T, args ...string) (exitStatus, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := exitStatus(run(args, &out, &errb))
	return code, out.String(), errb.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// workspace copies the test experiment into a temporary project layout
// (experiments/, results/) with its own cache, and points the data
// directory at the real data.
func workspace(t *testing.T) string {
	t.Helper()
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	t.Setenv("CI", "true")
	root := t.TempDir()
	for _, d := range []string{"experiments", "results"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.ReadFile("testdata/tfidf.hcl")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "experiments", "tfidf.hcl")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("REPRO_CACHE", filepath.Join(root, "cache"))
	return file
}

func TestRunThenCachedThenPlanWhy(t *testing.T) {
	file := workspace(t)
	code, out, errs := repro(t, "run", file)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"done     eval (evaluate.sts)", "TF-IDF", "STS-B", "56.00"} {
		if !strings.Contains(out, want) {
			t.Errorf("run output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = repro(t, "run", file)
	if code != 0 || strings.Contains(out, "done ") || strings.Count(out, "cached ") != 4 {
		t.Errorf("second run should find all 4 stages cached (exit %d):\n%s", code, out)
	}
	code, out, errs = repro(t, "plan", file, "--set", "stage.tfidf.max_features=1500")
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = l
		}
	}
	for stage, want := range map[string]string{
		"corpus": "cached", "sts": "cached",
		"tfidf": "parameter max_features changed (2000 -> 1500)",
		"eval":  "input encoder changed (upstream tfidf will run)",
	} {
		if !strings.Contains(lines[stage], want) {
			t.Errorf("plan line for %s = %q, want it to contain %q", stage, lines[stage], want)
		}
	}
	if code, out, _ := repro(t, "cache", "verify"); code != 0 {
		t.Errorf("cache verify: exit %d: %s", code, out)
	}
}

func TestCheckBaselineAndRegression(t *testing.T) {
	file := workspace(t)
	// No baseline yet: an error, not a pass.
	if code, out, _ := repro(t, "run", file, "--profile", "mini"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if code, out, _ := repro(t, "check", file, "--profile", "mini"); code != 1 || !strings.Contains(out, "no baseline") {
		t.Fatalf("check without baseline: exit %d, want 1:\n%s", code, out)
	}
	code, out, errs := repro(t, "baseline", file, "--profile", "mini", "--seeds", "42,7")
	if code != 0 {
		t.Fatalf("baseline: exit %d\n%s\n%s", code, out, errs)
	}
	bl, err := report.ReadBaseline(filepath.Join(filepath.Dir(filepath.Dir(file)), "results", "clitest.mini.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c := bl.Cells["stsb"]; c.Tolerance != 0.5 || len(c.SeedValues) != 2 || c.Value < 30 {
		t.Errorf("baseline cell %+v: want two seeds (TF-IDF is unseeded, so equal values and the 0.5 floor)", c)
	}
	if code, out, _ := repro(t, "check", file, "--profile", "mini"); code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("check on the recorded baseline: exit %d, want 0:\n%s", code, out)
	}
	// A deliberately worse result fails with exit code 2 and names the cell.
	code, out, _ = repro(t, "results", file, "--profile", "mini", "--json")
	if code != 0 {
		t.Fatalf("results --json: exit %d", code)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	rep.Cells[0].Ours -= 3
	worse := filepath.Join(t.TempDir(), "worse.json")
	b, _ := json.Marshal(rep)
	if err := os.WriteFile(worse, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = repro(t, "check", file, "--profile", "mini", "--report", worse)
	if code != 2 || !strings.Contains(out, "TF-IDF / STS-B: regressed") {
		t.Fatalf("check on a worse report: exit %d, want 2:\n%s", code, out)
	}
	// The paper profile is judged against the paper's numbers.
	if code, out, _ := repro(t, "check", file); code != 1 || !strings.Contains(out, "no recorded results") {
		t.Errorf("check of a profile never run: exit %d, want 1:\n%s", code, out)
	}
}

// TestGoldenOutputs: commands whose output is a golden file (testdata/;
// go test -update rewrites it), with their exit code.
func TestGoldenOutputs(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   []string
		code   exitStatus
		stderr bool   // the golden file holds stderr, not stdout
		outHas string // stdout says this too
	}{
		// Every error of the file, each at its line; a valid file beside
		// it is ok.
		{"errors.golden", []string{"validate", "testdata/errors.hcl", "testdata/tfidf.hcl"}, exitFailure, true, "testdata/tfidf.hcl: ok"},
		// Well-typed values a stage type refuses are found by validate
		// too, each at its line, before anything runs.
		{"values.golden", []string{"validate", "testdata/values.hcl"}, exitFailure, true, ""},
		// DINO's bad parameters (a template without the x1 placeholder, a
		// negative lambda, labels without instructions, a count of 0,
		// inverted smoothing), each at its line.
		{"dino_values.golden", []string{"validate", "testdata/dino_values.hcl"}, exitFailure, true, ""},
		{"graph.mmd", []string{"graph", "testdata/tfidf.hcl", "--format", "mermaid"}, exitOK, false, ""},
		{"stages_tfidf.txt", []string{"stages", "encode.tfidf"}, exitOK, false, ""},
	} {
		code, out, errs := repro(t, tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args, code, tc.code, out, errs)
		}
		if !strings.Contains(out, tc.outHas) {
			t.Errorf("%v: stdout lacks %q:\n%s", tc.args, tc.outHas, out)
		}
		got := out
		if tc.stderr {
			got = errs
		}
		golden(t, tc.golden, got)
	}
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "testdata/tfidf.hcl", "--set", "stage.nope.max_features=3"}, "--set"},
		{[]string{"run", "testdata/tfidf.hcl", "--profile", "huge"}, "huge"},
		{[]string{"run", "testdata/tfidf.hcl", "-var", "novalue"}, "want name=value"},
		{[]string{"run", "testdata/missing.hcl"}, "missing.hcl"},
		{[]string{"graph", "testdata/tfidf.hcl", "--format", "png"}, "want dot or mermaid"},
		{[]string{"run", "testdata/tfidf.hcl", "--bogus"}, "unknown flag"},
		{[]string{"stages", "evaluate.stss"}, `unknown stage type "evaluate.stss". Did you mean "evaluate.sts"?`},
	} {
		code, out, errs := repro(t, tc.args...)
		if code != 1 || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%v: exit %d, output lacks %q:\n%s%s", tc.args, code, tc.want, out, errs)
		}
	}
}

func TestFmt(t *testing.T) {
	dir := t.TempDir()
	messy := filepath.Join(dir, "messy.hcl")
	if err := os.WriteFile(messy, []byte("stage \"a\" {\n uses=\"data.sts\"\n    split  =   \"test\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := repro(t, "fmt", "--check", messy); code != 1 || !strings.Contains(out, "messy.hcl") {
		t.Errorf("fmt --check on a messy file: exit %d, out %q", code, out)
	}
	if code, _, errs := repro(t, "fmt", messy); code != 0 {
		t.Fatalf("fmt: exit %d: %s", code, errs)
	}
	got, _ := os.ReadFile(messy)
	if want := "stage \"a\" {\n  uses  = \"data.sts\"\n  split = \"test\"\n}\n"; string(got) != want {
		t.Errorf("formatted:\n%s\nwant:\n%s", got, want)
	}
	broken := filepath.Join(dir, "broken.hcl")
	os.WriteFile(broken, []byte("stage \"a\" {\n  uses = \n"), 0o644)
	if code, _, errs := repro(t, "fmt", broken); code != 1 || !strings.Contains(errs, "broken.hcl:") {
		t.Errorf("fmt on a broken file: exit %d, stderr %q", code, errs)
	}
	if code, out, _ := repro(t, "fmt", "--check", "../../experiments/simcse.hcl", "../../experiments/paser.hcl", "../../experiments/baselines.hcl", "../../experiments/syncse.hcl", "../../experiments/gense.hcl"); code != 0 {
		t.Errorf("the shipped experiments are not formatted (run repro fmt experiments/*.hcl):\n%s", out)
	}
}

// TestTarget: --target runs only the named stage and its upstream, leaves
// the table rows it cannot fill out, and names the stages when it is wrong.
func TestTarget(t *testing.T) {
	file := workspace(t)
	code, out, errs := repro(t, "run", file, "--target", "tfidf")
	if code != 0 {
		t.Fatalf("run --target: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"done     corpus", "done     tfidf", "partial run"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"eval (evaluate.sts)", "sts (data.sts)", "not in this run"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("output has %q, which --target tfidf leaves out:\n%s", unwanted, out)
		}
	}
	// The full run then finds the targeted stages cached.
	code, out, _ = repro(t, "plan", file)
	if code != 0 || !strings.Contains(out, "2 of 4 stage(s) will run") {
		t.Errorf("plan after --target: exit %d:\n%s", code, out)
	}
	code, _, errs = repro(t, "plan", file, "--target", "tfidff")
	if code != 1 || !strings.Contains(errs, `no stage "tfidff" (stages: corpus, sts, tfidf, eval)`) {
		t.Errorf("unknown target: exit %d: %s", code, errs)
	}
}

// A run whose stages need weights it was not given is refused before any
// stage starts (the data stages included), with every such stage at its
// line; the same holds for each experiment's paper profile run without its
// -var.
func TestRefusedBeforeStart(t *testing.T) {
	workspace(t)
	code, out, errs := repro(t, "run", "testdata/weights.hcl")
	if code != 1 || strings.Contains(out+errs, "running ") {
		t.Errorf("exit %d, want 1 and nothing run:\n%s%s", code, out, errs)
	}
	golden(t, "weights.golden", errs)
	if code, out, _ := repro(t, "plan", "testdata/weights.hcl"); code != 1 || !strings.Contains(out, "repro run would refuse to start: 3 stage(s) cannot work as declared\n\n  testdata/weights.hcl:29: stage \"gen\"") {
		t.Errorf("plan: exit %d, want 1 and the refusal shown:\n%s", code, out)
	}

	for _, f := range []string{"gense", "t5", "simcse", "paser", "dino", "syncse", "infocse", "lm"} {
		code, out, errs := repro(t, "run", "../../experiments/"+f+".hcl")
		all := out + errs
		if code != 1 || strings.Contains(all, "running ") || !strings.Contains(all, "the run cannot start (nothing ran)") || !strings.Contains(all, "-var ") {
			t.Errorf("%s.hcl paper profile: exit %d, want 1, a refusal naming its -var and nothing run:\n%s", f, code, all)
		}
	}
}

// TestBaselineTargetKeepsOtherCells: baseline --target re-records the cells
// of the named stages and keeps the rest of the recorded file as it was; it
// refuses with no recorded file or other seeds.
func TestBaselineTargetKeepsOtherCells(t *testing.T) {
	file := workspace(t)
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	second := `
stage "tfidf_small" {
  uses         = "encode.tfidf"
  corpus       = stage.corpus.sentences
  max_features = 300
}

stage "eval_small" {
  uses          = "evaluate.sts"
  encoder       = stage.tfidf_small.encoder
  data          = stage.sts.pairs
  align_uniform = false
}

expect "stsb_small" {
  row       = "TF-IDF, 300 features"
  column    = "STS-B"
  value     = stage.eval_small.metrics.stsb
  tolerance = 5
}
`
	if err := os.WriteFile(file, append(src, second...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := repro(t, "baseline", file, "--profile", "mini", "--seeds", "42", "--target", "eval"); code != 1 || !strings.Contains(errs, "record the whole experiment first") || strings.Contains(out, "== seed") {
		t.Fatalf("targeted baseline with none recorded: exit %d, want 1 before any run:\n%s%s", code, out, errs)
	}
	if code, out, errs := repro(t, "baseline", file, "--profile", "mini", "--seeds", "42", "--note", "both"); code != 0 {
		t.Fatalf("baseline: exit %d\n%s\n%s", code, out, errs)
	}
	path := filepath.Join(filepath.Dir(filepath.Dir(file)), "results", "clitest.mini.json")
	bl, err := report.ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	real := bl.Cells["stsb"].Value
	// Mark both cells: the targeted one must come back re-recorded, the
	// other as it was in the file.
	bl.Cells["stsb"] = report.BaselineCell{Value: -1, Tolerance: 1}
	bl.Cells["stsb_small"] = report.BaselineCell{Value: 1234, Tolerance: 1}
	if err := bl.Write(path); err != nil {
		t.Fatal(err)
	}
	code, out, errs := repro(t, "baseline", file, "--profile", "mini", "--seeds", "42", "--target", "eval")
	if code != 0 {
		t.Fatalf("baseline --target eval: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "kept 1 recorded cell(s) that --target's stages do not give: stsb_small") {
		t.Errorf("output does not name the kept cell:\n%s", out)
	}
	got, err := report.ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Cells["stsb"]; c.Value != real {
		t.Errorf("targeted cell = %v, want it re-recorded as %v", c.Value, real)
	}
	if c := got.Cells["stsb_small"]; c.Value != 1234 {
		t.Errorf("untargeted cell = %v, want the recorded 1234 kept", c.Value)
	}
	if got.Note != "both" {
		t.Errorf("note = %q, want the recorded note kept when --note is not given", got.Note)
	}
	code, out, errs = repro(t, "baseline", file, "--profile", "mini", "--seeds", "42,7", "--target", "eval")
	if code != 1 || !strings.Contains(errs, "pass --seeds 42)") {
		t.Errorf("targeted baseline with other seeds: exit %d, want 1 and a hint:\n%s%s", code, out, errs)
	}
}

// TestProfiles: repro profiles lists a file's profiles, one a line, as
// scripts/experiments.sh reads them.
func TestProfiles(t *testing.T) {
	code, out, errs := repro(t, "profiles", "../../experiments/baselines.hcl")
	if code != 0 || out != "mini\nci\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, _, _ := repro(t, "profiles", "no-such-file.hcl"); code != exitFailure {
		t.Errorf("a missing file: exit %d", code)
	}
}
