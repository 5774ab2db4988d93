package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
	"repro/internal/report"
)

// gateDeviations are gate.hcl's with a deviation at top level (every
// profile) and one in the mini profile.
func gateDeviations(t *testing.T) string {
	t.Helper()
	file := workspace(t)
	src, err := os.ReadFile("testdata/gate.hcl")
	if err != nil {
		t.Fatal(err)
	}
	hcl := string(src) + `
deviation "tfidf_row" {
  what   = "the TF-IDF row's corpus"
  paper  = "no TF-IDF row"
  ours   = "TF-IDF fitted on STS-B train"
  why    = "a row every machine can compute"
  tables = ["STS-B test"]
}
`
	hcl = strings.Replace(hcl, "profile \"mini\" {\n", `profile "mini" {
  deviation "fewer_terms" {
    what = "TF-IDF's vocabulary in this profile"
    paper = "no TF-IDF row"
    ours = "1,000 terms"
    why = "smaller"
  }
`, 1)
	if err := os.WriteFile(file, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// textEndsWithDeviations: the last block of out is the deviation list,
// naming each of names.
func textEndsWithDeviations(t *testing.T, what, out string, names ...string) {
	t.Helper()
	i := strings.LastIndex(out, "\ndeviations from the paper (")
	if i < 0 {
		t.Errorf("%s: no deviation list:\n%s", what, out)
		return
	}
	tail := strings.TrimRight(out[i+1:], "\n")
	for _, l := range strings.Split(tail, "\n")[1:] {
		if !strings.HasPrefix(l, "  ") {
			t.Errorf("%s: %q follows the deviation list:\n%s", what, l, out)
		}
	}
	for _, n := range names {
		if !strings.Contains(tail, "  "+n+" ") && !strings.Contains(tail, "  "+n+":") {
			t.Errorf("%s: the deviation list lacks %s:\n%s", what, n, tail)
		}
	}
}

// markdownEndsWithDeviations: the last block of md is the bullet list of
// deviations, naming each of whats.
func markdownEndsWithDeviations(t *testing.T, what, md string, whats ...string) {
	t.Helper()
	i := strings.LastIndex(md, "\n**Deviations from the paper**\n\n")
	if i < 0 {
		t.Errorf("%s: no deviation list:\n%s", what, md)
		return
	}
	tail := strings.TrimRight(md[i+len("\n**Deviations from the paper**\n\n"):], "\n")
	for _, l := range strings.Split(tail, "\n") {
		if !strings.HasPrefix(l, "- **") {
			t.Errorf("%s: %q follows the deviation list:\n%s", what, l, md)
		}
	}
	for _, w := range whats {
		if !strings.Contains(tail, "**"+w+"**") {
			t.Errorf("%s: the deviation list lacks %q:\n%s", what, w, tail)
		}
	}
}

// jsonEndsWithDeviations: obj's last key is "deviations", a list of the
// deviations named names, in order.
func jsonEndsWithDeviations(t *testing.T, what string, obj []byte, names ...string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	var last string
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
		case string:
			if depth == 1 && dec.More() {
				last = v
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
		}
	}
	var got struct {
		Deviations []struct{ Name string } `json:"deviations"`
	}
	if err := json.Unmarshal(obj, &got); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, obj)
	}
	var gotNames []string
	for _, d := range got.Deviations {
		gotNames = append(gotNames, d.Name)
	}
	if last != "deviations" || strings.Join(gotNames, " ") != strings.Join(names, " ") {
		t.Errorf("%s: last key %q, deviations %v; want deviations %v last:\n%s", what, last, gotNames, names, obj)
	}
}

// TestReportsEndWithDeviations: every report of a profile -- run's table,
// its markdown report and its --json summary, results (text, --markdown,
// --json) and results --recorded (the baseline under results/, the same
// three) -- ends with the profile's deviation list: the file's, then the
// profile's own.
func TestReportsEndWithDeviations(t *testing.T) {
	file := gateDeviations(t)
	if code, out, errs := repro(t, "baseline", file, "--profile", "mini", "--seeds", "42"); code != 0 {
		t.Fatalf("baseline: exit %d\n%s%s", code, out, errs)
	}
	names := []string{"tfidf_row", "fewer_terms"}
	whats := []string{"the TF-IDF row's corpus", "TF-IDF's vocabulary in this profile"}

	code, out, errs := repro(t, "run", file, "--profile", "mini")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	// What follows the report: where its files are.
	table, files, _ := strings.Cut(out, "\nreport: ")
	textEndsWithDeviations(t, "run", table, names...)
	md, err := os.ReadFile(strings.TrimSpace(strings.SplitN(files, "\n", 2)[0]))
	if err != nil {
		t.Fatalf("run's markdown report: %v\n%s", err, out)
	}
	markdownEndsWithDeviations(t, "run's markdown report", string(md), whats...)

	_, out, _ = repro(t, "run", file, "--profile", "mini", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	jsonEndsWithDeviations(t, "run --json's summary", []byte(lines[len(lines)-1]), names...)

	for _, recorded := range []bool{false, true} {
		args := []string{"results", file, "--profile", "mini"}
		what := "results"
		if recorded {
			// Nothing in the cache: the baseline under results/ alone.
			t.Setenv("REPRO_CACHE", filepath.Join(t.TempDir(), "empty"))
			args, what = append(args, "--recorded"), "results --recorded"
		}
		code, out, errs := repro(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", what, code, out, errs)
		}
		textEndsWithDeviations(t, what, out, names...)
		_, out, _ = repro(t, append(args, "--markdown")...)
		markdownEndsWithDeviations(t, what+" --markdown", out, whats...)
		_, out, _ = repro(t, append(args, "--json")...)
		jsonEndsWithDeviations(t, what+" --json", []byte(out), names...)
	}
}

// TestPaperOnlyDeviations: the shipped files' deviations about what the
// paper profile does (profiles = ["paper"]) are in the paper profile's
// reports and in no mini or ci report, which do something else; InfoCSE's
// split, shared by mini, is not ci's, which declares its own.
func TestPaperOnlyDeviations(t *testing.T) {
	paperOnly := map[string][]string{
		"paser":   {"default_top_k", "np_vp_masking", "sup_pooling"},
		"gense":   {"small_sets", "c4_sentences", "transfer_tasks"},
		"infocse": {"idc_rounds", "retrieval_similarity", "mind_bodies"},
		"syncse":  {"scratch_cut"},
	}
	for name, only := range paperOnly {
		for _, profile := range []string{"", "mini", "ci"} {
			devs := deviationNames(loadShipped(t, name, profile, "", nil))
			for _, d := range only {
				if slices.Contains(devs, d) != (profile == "") {
					t.Errorf("%s profile %q: deviations %v; %q is the paper profile's only", name, profile, devs, d)
				}
			}
		}
	}
	for profile, want := range map[string]string{"": "split_sizes", "mini": "split_sizes", "ci": "ci_split"} {
		devs := deviationNames(loadShipped(t, "infocse", profile, "", nil))
		other := map[bool]string{true: "ci_split", false: "split_sizes"}[want == "split_sizes"]
		if !slices.Contains(devs, want) || slices.Contains(devs, other) {
			t.Errorf("infocse profile %q: deviations %v, want %s and not %s", profile, devs, want, other)
		}
	}
}

// TestModuleDeviationsGolden: the deviations of the modules an experiment
// runs end its reports after its own, each saying where it comes from
// (testdata/modules/deviations: tfidf.hcl used twice, one text for both
// instances unless it reads the instance's variable; unused.hcl, never
// read, adds none), filtered by the report's profile: run's table (paper
// and ci profiles), results --markdown and --json
// (testdata/module_deviations.golden; go test -update rewrites it).
func TestModuleDeviationsGolden(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	t.Setenv("CI", "true")
	dir := filepath.Join(t.TempDir(), "experiments")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"parent.hcl", "tfidf.hcl", "unused.hcl"} {
		b, err := os.ReadFile(filepath.Join("testdata", "modules", "deviations", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("REPRO_CACHE", filepath.Join(dir, "..", "cache"))
	file := filepath.Join(dir, "parent.hcl")
	var got strings.Builder
	tail := func(what, out, from string) {
		i := strings.LastIndex(out, from)
		if i < 0 {
			t.Errorf("%s: no %q in\n%s", what, from, out)
			return
		}
		fmt.Fprintf(&got, "==== %s\n%s", what, out[i:])
	}
	for _, profile := range []string{"", "ci"} {
		args := []string{"run", file}
		if profile != "" {
			args = append(args, "--profile", profile)
		}
		code, out, errs := repro(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
		table, _, _ := strings.Cut(out, "\nreport: ")
		tail(strings.Join(append([]string{"repro"}, args[:1]...), " ")+" (profile "+map[bool]string{true: "paper", false: profile}[profile == ""]+")", table+"\n", "deviations from the paper (")
	}
	code, out, errs := repro(t, "results", file, "--profile", "ci", "--markdown")
	if code != 0 {
		t.Fatalf("results --markdown: exit %d\n%s%s", code, out, errs)
	}
	tail("repro results --profile ci --markdown", out, "**Deviations from the paper**")
	code, out, errs = repro(t, "results", file, "--profile", "ci", "--json")
	if code != 0 {
		t.Fatalf("results --json: exit %d\n%s%s", code, out, errs)
	}
	var rep struct {
		Deviations json.RawMessage `json:"deviations"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("results --json: %v\n%s", err, out)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, rep.Deviations, "", "  "); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&got, "==== repro results --profile ci --json: deviations\n%s\n", pretty.String())
	golden(t, "module_deviations.golden", got.String())
}

// TestPaSeRProfilesDeclareWhatTheyKeep: paser.hcl's paper-only readings no
// longer print for mini and ci, so each setting of theirs that differs from
// the paper profile's is declared by a deviation of their own -- and one
// whose setting is the paper profile's is not (ci trains at the paper's n).
func TestPaSeRProfilesDeclareWhatTheyKeep(t *testing.T) {
	paper := loadShipped(t, "paser", "", "", nil)
	for _, profile := range []string{"mini", "ci"} {
		x := loadShipped(t, "paser", profile, "", nil)
		devs := deviationNames(x)
		for _, c := range []struct{ stage, param, deviation string }{
			{"mask", "top_k", "recorded_top_k"},
			{"nli_mask", "top_k", "recorded_top_k"},
			{"mask", "one_chunk", "recorded_np_vp"},
			{"train", "pooling", "pooling"},
			{"train_sup", "pooling", "pooling"},
			{"train", "n", "signal_n"},
			{"train", "max_steps", "scale"},
			{"nli", "source", "stand_in_data"},
			{"rerank", "source", "stand_in_data"},
		} {
			ours, theirs := stageParam(t, x, "", c.stage, c.param), stageParam(t, paper, "", c.stage, c.param)
			if differs := ours != theirs; differs != slices.Contains(devs, c.deviation) {
				t.Errorf("%s: %s.%s = %v (paper profile %v), deviations %v: want %q declared exactly when they differ",
					profile, c.stage, c.param, ours, theirs, devs, c.deviation)
			}
		}
		for _, d := range x.Config.Deviations {
			if d.Profile == "" && len(d.Modules) == 0 && slices.Contains(d.Profiles, "paper") {
				t.Errorf("%s prints the paper profile's %s", profile, d.Name)
			}
		}
	}
}

// TestShippedModuleDeviationTables: in every shipped experiment's reports,
// a module's deviation names its tables with the module's short name --
// syncse.hcl's mini and ci list gense.hcl's deviations with "GenSE Table
// 2" where gense.hcl writes "Table 2" -- and never as a bare "Table N" or
// "Figure N", which a reader takes for the experiment's own; the file's
// own deviations keep their names as written.
func TestShippedModuleDeviationTables(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	files, err := filepath.Glob("../../experiments/*.hcl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiments: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".hcl")
		for _, profile := range append([]string{""}, loadShipped(t, name, "", "", nil).Config.Profiles...) {
			for _, d := range loadShipped(t, name, profile, "", nil).Config.Deviations {
				for _, tab := range d.Tables {
					if len(d.Modules) > 0 && (strings.HasPrefix(tab, "Table") || strings.HasPrefix(tab, "Figure")) {
						t.Errorf("%s profile %q: %s of %s: table %q does not say whose", name, profile, d.Name, d.Source, tab)
					}
				}
			}
		}
	}
	for _, profile := range []string{"mini", "ci"} {
		x := loadShipped(t, "syncse", profile, "", nil)
		var gense, own int
		for _, d := range x.Config.Deviations {
			switch {
			case d.Source == "gense.hcl":
				gense++
				for _, tab := range d.Tables {
					if !strings.HasPrefix(tab, "GenSE Table ") && !strings.HasPrefix(tab, "GenSE Figure ") {
						t.Errorf("syncse %s: gense.hcl's %s names %q, want GenSE's", profile, d.Name, tab)
					}
				}
			case len(d.Modules) == 0 && slices.ContainsFunc(d.Tables, func(s string) bool { return strings.HasPrefix(s, "Table ") }):
				own++
			}
		}
		if gense == 0 || own == 0 {
			t.Errorf("syncse %s: %d deviations of gense.hcl, %d of its own naming a bare Table; want some of each", profile, gense, own)
		}
		var md bytes.Buffer
		report.WriteDeviationsMarkdown(&md, x.Deviations())
		if !strings.Contains(md.String(), "(`st5_rows` of `module.gense` (`gense.hcl`); GenSE Table 2)") {
			t.Errorf("syncse %s: the markdown list does not qualify st5_rows' table:\n%s", profile, md.String())
		}
	}
}
