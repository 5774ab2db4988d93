package main

import (
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/report"
)

// gateWorkspace is workspace with testdata/gate.hcl (a count and a pending
// cell beside the STS-B one), run in the mini profile and recorded under
// two seeds. It returns the file and the recorded report as JSON.
func gateWorkspace(t *testing.T) (string, report.Report) {
	t.Helper()
	file := workspace(t)
	src, err := os.ReadFile("testdata/gate.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := repro(t, "baseline", file, "--profile", "mini", "--seeds", "42,7"); code != 0 {
		t.Fatalf("baseline: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := repro(t, "run", file, "--profile", "mini"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ := repro(t, "results", file, "--profile", "mini", "--json")
	if code != 0 {
		t.Fatalf("results --json: exit %d", code)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Backend != "cpu" || rep.Seed == nil || *rep.Seed != 42 {
		t.Fatalf("the report does not say how it was made: backend %q seed %v", rep.Backend, rep.Seed)
	}
	return file, rep
}

// edited writes rep with edit applied to the named cell and returns the
// file's path, for check --report.
func edited(t *testing.T, rep report.Report, edit func(r *report.Report, c *report.Cell)) string {
	t.Helper()
	r := rep
	r.Cells = append([]report.Cell(nil), rep.Cells...)
	for i := range r.Cells {
		if r.Cells[i].Name == "stsb" {
			edit(&r, &r.Cells[i])
		}
	}
	path := filepath.Join(t.TempDir(), "edited.json")
	b, _ := json.Marshal(r)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The gate a CI maintainer tried to fool: on the recorded seed and backend
// every difference is a change, upward ones included, with their own exit
// status; another backend gets the recorded tolerance and says so; counts
// and pending cells are counted apart from checked ones.
func TestCheckGate(t *testing.T) {
	file, rep := gateWorkspace(t)
	code, out, _ := repro(t, "check", file, "--profile", "mini")
	if code != 0 || !strings.Contains(out, "ok (2 checked (all exact), 1 pending; profile mini; exact: seed 42 on cpu: bit for bit)") {
		t.Fatalf("check of the run just recorded: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		name string
		edit func(r *report.Report, c *report.Cell)
		args []string
		code exitStatus
		want string
	}{
		{"last bit up", func(_ *report.Report, c *report.Cell) { c.Ours = math.Nextafter(c.Ours, 100) }, nil,
			exitImprovement, "TF-IDF / STS-B: improved: ours "},
		{"far up", func(_ *report.Report, c *report.Cell) { c.Ours += 40 }, nil, exitImprovement, "+40.00, exact"},
		{"far up, allowed", func(_ *report.Report, c *report.Cell) { c.Ours += 40 }, []string{"--allow-improvement"}, exitOK, "ok (2 checked"},
		{"last bit down", func(_ *report.Report, c *report.Cell) { c.Ours = math.Nextafter(c.Ours, 0) }, nil,
			exitRegression, "TF-IDF / STS-B: regressed: ours "},
		{"another backend, inside the tolerance", func(r *report.Report, c *report.Cell) { r.Backend = "cuda"; c.Ours += 0.3 }, nil,
			exitOK, "tolerance: baseline recorded on cpu, this run on cuda"},
		{"another backend, beyond it", func(r *report.Report, c *report.Cell) { r.Backend = "cuda"; c.Ours += 3 }, nil,
			exitImprovement, "+3.00, tolerance 0.5"},
		{"another seed", func(r *report.Report, c *report.Cell) { s := int64(7); r.Seed = &s; c.Ours -= 0.2 }, nil,
			exitOK, "baseline recorded at seed 42, this run at seed 7"},
	} {
		code, out, _ := repro(t, append([]string{"check", file, "--profile", "mini", "--report", edited(t, rep, c.edit)}, c.args...)...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d (want %d), output lacks %q:\n%s", c.name, code, c.code, c.want, out)
		}
	}
	// A count is exact on every backend: one pair more on a GPU fails.
	path := edited(t, rep, func(r *report.Report, _ *report.Cell) {
		r.Backend = "cuda"
		for i := range r.Cells {
			if r.Cells[i].Name == "pairs" {
				r.Cells[i].Ours++
			}
		}
	})
	if code, out, _ := repro(t, "check", file, "--profile", "mini", "--report", path); code != exitImprovement ||
		!strings.Contains(out, "TF-IDF / pairs: improved: ours 1380, baseline 1379, diff +1, exact (a count)") {
		t.Errorf("a count one up on cuda: exit %d\n%s", code, out)
	}
}

// --json and --junit carry what the human output says, from the same
// values; several files end with one summary line.
func TestCheckJSONAndJUnit(t *testing.T) {
	file, rep := gateWorkspace(t)
	worse := edited(t, rep, func(_ *report.Report, c *report.Cell) { c.Ours -= 3 })
	junit := filepath.Join(t.TempDir(), "check.xml")
	code, out, _ := repro(t, "check", file, "--profile", "mini", "--report", worse, "--json", "--junit", junit)
	if code != exitRegression {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var res struct {
		FormatVersion string `json:"format_version"`
		Files         []struct {
			File, Status, Comparison string
			Cells                    []struct {
				Name, Verdict, Mode, Class, Against     string
				Value, Reference, Tolerance, Difference *float64
				Count                                   bool
				Why                                     string
			}
			Tally report.Tally
		}
		Summary struct {
			Files, Regressed int
			Cells            report.Tally
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.FormatVersion == "" || len(res.Files) != 1 || res.Files[0].Status != "regressed" || res.Summary.Regressed != 1 {
		t.Fatalf("json: %+v", res)
	}
	byName := map[string]int{}
	for i, c := range res.Files[0].Cells {
		byName[c.Name] = i
	}
	s := res.Files[0].Cells[byName["stsb"]]
	if s.Verdict != "regressed" || s.Mode != "exact" || s.Class != "regression" || s.Against != "baseline" ||
		s.Value == nil || s.Reference == nil || *s.Difference > -2.99 || *s.Tolerance != 0 {
		t.Errorf("stsb cell: %+v", s)
	}
	if p := res.Files[0].Cells[byName["bert"]]; p.Verdict != "pending" || p.Value != nil || p.Why != "copied from the paper" {
		t.Errorf("pending cell: %+v", p)
	}
	if c := res.Files[0].Cells[byName["pairs"]]; !c.Count || c.Verdict != "ok" {
		t.Errorf("count cell: %+v", c)
	}
	if tl := res.Summary.Cells; tl.Checked != 2 || tl.Exact != 2 || tl.Pending != 1 || tl.Regressed != 1 {
		t.Errorf("tally %+v", tl)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Skipped  int    `xml:"skipped,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("junit: %v\n%s", err, b)
	}
	if len(suites.Suites) != 1 || suites.Suites[0].Tests != 3 || suites.Suites[0].Failures != 1 || suites.Suites[0].Skipped != 1 {
		t.Errorf("junit:\n%s", b)
	}

	// Two files: a line each, the file named once per line, and a summary.
	other := filepath.Join(filepath.Dir(file), "never_run.hcl")
	src, _ := os.ReadFile(file)
	if err := os.WriteFile(other, []byte(strings.Replace(string(src), `"clitest"`, `"never"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = repro(t, "check", file, other, "--profile", "mini")
	if code != exitFailure {
		t.Errorf("two files, one never run: exit %d\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if last != "check: 2 files: 1 ok, 1 with errors; cells: 2 checked (all exact), 1 pending" {
		t.Errorf("summary line %q\n%s", last, out)
	}
	for _, l := range lines {
		if strings.Count(l, other+": ") > 1 || strings.Count(l, file+": ") > 1 {
			t.Errorf("a file named twice on one line: %q", l)
		}
	}
}

// Recording refuses a tolerance wider than the value it guards, and
// writes nothing.
func TestBaselineRefusesWide(t *testing.T) {
	file := workspace(t)
	src, err := os.ReadFile("testdata/gate.hcl")
	if err != nil {
		t.Fatal(err)
	}
	// TF-IDF's max_features follows the seed: the two seeds' STS-B values
	// then differ, and a ceiling of 0.01 is below their spread.
	hcl := strings.Replace(string(src), "  count  = true\n}", "  count  = true\n}\n", 1)
	hcl = strings.Replace(hcl, "  tolerance = 5\n", "  tolerance = 5\n  max_tolerance = 0.01\n", 1)
	hcl = strings.Replace(hcl, "    max_features = 1000\n", "    max_features = 500 + var.seed * 10\n", 1)
	if err := os.WriteFile(file, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := repro(t, "baseline", file, "--profile", "mini", "--seeds", "42,7")
	if code != 1 || !strings.Contains(errs, "stsb: tolerance") || !strings.Contains(errs, "above the declared max_tolerance 0.01") {
		t.Errorf("baseline with a spread above its ceiling: exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(file)), "results", "clitest.mini.json")); !os.IsNotExist(err) {
		t.Errorf("a refused baseline was written (%v)", err)
	}
}

// results --recorded shows the baseline recorded under results/ as the
// paper-shaped table a run prints, with nothing run or cached here; run's
// own table fits 100 columns, its per-cell detail behind --verbose.
func TestResultsRecorded(t *testing.T) {
	file, _ := gateWorkspace(t)
	t.Setenv("REPRO_CACHE", filepath.Join(t.TempDir(), "empty"))
	code, out, errs := repro(t, "results", file, "--profile", "mini", "--recorded")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"clitest: STS-B test (profile mini)", "pairs", "1379", "BERT (the paper's row)", "(47.29)", "recorded ", "on cpu, seeds [42 7]"} {
		if !strings.Contains(out, want) {
			t.Errorf("results --recorded lacks %q:\n%s", want, out)
		}
	}
	if code, _, errs := repro(t, "results", file, "--recorded"); code != 1 || !strings.Contains(errs, "give --profile") {
		t.Errorf("--recorded without a profile: exit %d %s", code, errs)
	}
	code, out, _ = repro(t, "run", file, "--profile", "mini")
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 100 && !strings.HasPrefix(l, "[") && !strings.HasPrefix(l, "report: ") {
			t.Errorf("a line of %d characters:\n%s", len(l), l)
		}
	}
	if code != 0 || !strings.Contains(out, "verdicts: 2 ok, 1 pending") || strings.Contains(out, "baseline  tol") {
		t.Errorf("run's table: exit %d\n%s", code, out)
	}
	if _, out, _ = repro(t, "run", file, "--profile", "mini", "--verbose"); !strings.Contains(out, "exact") {
		t.Errorf("run --verbose lacks the per-cell detail:\n%s", out)
	}
}
