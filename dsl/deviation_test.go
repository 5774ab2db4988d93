package dsl

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestDeviations: a profile's report lists the file's deviations, then its
// own; attributes evaluate with locals; a declared stand-in loads in the
// paper profile, and an undeclared one only outside it.
func TestDeviations(t *testing.T) {
	t.Parallel()
	deviationSrc := string(mustRead(t, "testdata/deviations.hcl"))
	cfg := mustLoad(t, "testdata/deviations.hcl", []byte(deviationSrc), Options{})
	if len(cfg.Deviations) != 1 {
		t.Fatalf("paper profile: %d deviations, want 1", len(cfg.Deviations))
	}
	d := cfg.Deviations[0]
	if d.Name != "news" || d.Profile != "" || d.What != "news corpus" || d.Paper != "MIND" || d.Ours != "BBC News" ||
		d.Why != "the data directory has no MIND" || d.Evidence != "infocse.md section 4" ||
		!slices.Equal(d.Tables, []string{"Table 1", "Table 3"}) || !slices.Equal(d.StandIns, []string{"bbc"}) || d.Range.Start.Line != 16 {
		t.Errorf("deviation %+v", d)
	}
	mini := mustLoad(t, "testdata/deviations.hcl", []byte(deviationSrc), Options{Profile: "mini"})
	if len(mini.Deviations) != 2 || mini.Deviations[1].Name != "small" || mini.Deviations[1].Profile != "mini" {
		t.Errorf("mini deviations %+v", mini.Deviations)
	}
	if ci := mustLoad(t, "testdata/deviations.hcl", []byte(deviationSrc), Options{Profile: "ci"}); len(ci.Deviations) != 1 {
		t.Errorf("ci deviations %+v", ci.Deviations)
	}
	// Without the declaration only the paper profile refuses.
	undeclared := []byte(deviationSrc[:len(deviationSrc)-len(`profile "ci" {}`)-1])
	undeclared = []byte(strings.Replace(string(undeclared), `  stand_ins = ["bbc"]`+"\n", "", 1))
	mustLoad(t, "testdata/deviations.hcl", undeclared, Options{Profile: "mini"})
	l := NewLoader(testRegistry())
	if cfg, diags := l.LoadSource("testdata/deviations.hcl", undeclared, Options{}); cfg != nil || !diags.HasErrors() || diags[0].Summary != "Undeclared stand-in" || diags[0].Subject.Start.Line != 11 {
		t.Errorf("undeclared stand-in in the paper profile: %v", diags)
	}
}

// TestDeviationProfiles: a top-level deviation with profiles is reported by
// the profiles it lists ("paper": the default profile) and by no other; a
// profile extending a listed one is not listed (ci extends mini), while it
// still inherits its parent's own deviations; a paper-only deviation
// declares the paper profile's stand-ins.
func TestDeviationProfiles(t *testing.T) {
	t.Parallel()
	src := mustRead(t, "testdata/deviation_profiles.hcl")
	for _, c := range []struct {
		profile string
		want    []string
	}{
		{"", []string{"everywhere", "paper_only", "paper_and_mini"}},
		{"mini", []string{"everywhere", "paper_and_mini", "small"}},
		{"ci", []string{"everywhere", "ci_only", "small"}},
	} {
		cfg := mustLoad(t, "testdata/deviation_profiles.hcl", src, Options{Profile: c.profile})
		var got []string
		for _, d := range cfg.Deviations {
			got = append(got, d.Name)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("profile %q: deviations %v, want %v", c.profile, got, c.want)
		}
		for _, d := range cfg.Deviations {
			want := map[string][]string{"paper_only": {"paper"}, "paper_and_mini": {"mini", "paper"}, "ci_only": {"ci"}}[d.Name]
			if !slices.Equal(d.Profiles, want) || (d.Name == "small") != (d.Profile == "mini") {
				t.Errorf("profile %q: deviation %s: profiles %v, declared by %q", c.profile, d.Name, d.Profiles, d.Profile)
			}
		}
	}
}

// devLine is a deviation as TestModuleDeviations compares it: name, the
// declaring profile, instances and source.
func devLine(d *Deviation) string {
	s := d.Name
	if d.Profile != "" {
		s += "@" + d.Profile
	}
	if len(d.Modules) > 0 {
		s += " [" + strings.Join(d.Modules, ",") + " " + d.Source + "]"
	}
	return s
}

// TestModuleDeviations: the deviations of the modules whose stages a
// profile runs follow the file's own, each with its instances and file; a
// module file used twice gives one entry per text (news and inner's
// random_init name both instances, size differs by `count`: an entry per
// instance, together); a module no
// stage reaches adds none; the profiles filter is the report's profile
// name (docs.hcl declares no ci: its paper_only holds only for the paper
// profile), and a module's profile block adds its own.
func TestModuleDeviations(t *testing.T) {
	t.Parallel()
	const file = "testdata/modules/deviations/parent.hcl"
	both := " [module.a,module.b docs.hcl]"
	inner := "random_init [module.a.module.inner,module.b.module.inner inner.hcl]"
	for _, c := range []struct {
		profile string
		want    []string
	}{
		{"", []string{"own", "news" + both, "size [module.a docs.hcl]", "size [module.b docs.hcl]", "paper_only" + both, inner}},
		{"mini", []string{"own", "news" + both, "size [module.a docs.hcl]", "size [module.b docs.hcl]", "mini_only" + both, "small@mini" + both, inner}},
		{"ci", []string{"own", "news" + both, "size [module.a docs.hcl]", "size [module.b docs.hcl]", inner}},
	} {
		cfg := loadFile(t, file, Options{Profile: c.profile})
		var got []string
		for _, d := range cfg.Deviations {
			got = append(got, devLine(d))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("profile %q: deviations\n  %s\nwant\n  %s", c.profile, strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
		}
		for _, d := range cfg.Deviations {
			if d.Name == "size" {
				want := map[string]string{"module.a": "the first 100", "module.b": "the first 200"}[d.Modules[0]]
				if d.Ours != want || d.Range.Filename != "testdata/modules/deviations/docs.hcl" {
					t.Errorf("profile %q: %s ours %q at %v, want %q in docs.hcl", c.profile, devLine(d), d.Ours, d.Range, want)
				}
			}
		}
	}
}

// writeModuleFixture copies testdata/modules/deviations into a temporary
// directory, applying edit (file -> old -> new), and returns parent.hcl's
// path there.
func writeModuleFixture(t *testing.T, edit map[string][2]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"parent.hcl", "docs.hcl", "inner.hcl", "unused.hcl"} {
		src := string(mustRead(t, filepath.Join("testdata/modules/deviations", name)))
		if e, ok := edit[name]; ok {
			if !strings.Contains(src, e[0]) {
				t.Fatalf("%s has no %q", name, e[0])
			}
			src = strings.Replace(src, e[0], e[1], 1)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "parent.hcl")
}

// TestModuleStandIns: in the paper profile a module's deviation declares
// the stand-ins of its own stages (docs.hcl's news: the BBC News its docs
// stage reads), so the including file need not; without it the module's
// stage is refused at its line in the module's file; and a module's
// declaration does not cover a stage of the including file.
func TestModuleStandIns(t *testing.T) {
	t.Parallel()
	loadErr := func(path string) hcl.Diagnostics {
		t.Helper()
		cfg, diags := NewLoader(testRegistry()).Load(path, Options{})
		if cfg != nil || !diags.HasErrors() {
			t.Fatalf("%s loads; want an undeclared stand-in", path)
		}
		return diags
	}
	// Declared by the module: loads (TestModuleDeviations loads it too).
	loadFile(t, writeModuleFixture(t, nil), Options{})

	undeclared := writeModuleFixture(t, map[string][2]string{"docs.hcl": {"  stand_ins = [\"bbc\"]\n", ""}})
	diags := loadErr(undeclared)
	if diags[0].Summary != "Undeclared stand-in" || filepath.Base(diags[0].Subject.Filename) != "docs.hcl" || diags[0].Subject.Start.Line != 12 ||
		!strings.Contains(diags[0].Detail, `"module.a.docs"`) || !strings.Contains(diags[0].Detail, "in the module's file or in the file that uses it") {
		t.Errorf("undeclared module stand-in: %v", diags)
	}
	// Outside the paper profile the stand-in needs no declaration.
	if cfg, diags := NewLoader(testRegistry()).Load(undeclared, Options{Profile: "mini"}); cfg == nil {
		t.Errorf("mini: %v", diags)
	}
	// The including file's declaration covers the module's stages.
	parentDeclares := writeModuleFixture(t, map[string][2]string{
		"docs.hcl":   {"  stand_ins = [\"bbc\"]\n", ""},
		"parent.hcl": {"  why    = \"CPU\"\n", "  why    = \"CPU\"\n  stand_ins = [\"bbc\"]\n"},
	})
	if cfg, diags := NewLoader(testRegistry()).Load(parentDeclares, Options{}); cfg == nil {
		t.Errorf("declared by the including file: %v", diags)
	}
	// A module's declaration is the module's: the parent's own BBC stage
	// is refused.
	parentReads := writeModuleFixture(t, map[string][2]string{"parent.hcl": {"profile \"mini\" {}", "stage \"news\" {\n  uses  = \"data.documents\"\n  split = \"bbc\"\n}\n\nprofile \"mini\" {}"}})
	diags = loadErr(parentReads)
	if diags[0].Summary != "Undeclared stand-in" || filepath.Base(diags[0].Subject.Filename) != "parent.hcl" || !strings.Contains(diags[0].Detail, `"news"`) {
		t.Errorf("the including file's own stand-in: %v", diags)
	}
}

// TestModuleDeviationErrors: a module's deviation is evaluated when the
// including file loads, so its errors are reported there, at the module's
// file:line, in every profile, even for a module no stage reaches.
func TestModuleDeviationErrors(t *testing.T) {
	t.Parallel()
	for name, edit := range map[string][2]string{
		"docs.hcl":   {"  why   = \"time\"\n", "  why   = \"  \"\n"},
		"unused.hcl": {"  why   = \"z\"\n", "  why   = \"z\"\n  profiles = [\"ci\"]\n"},
	} {
		path := writeModuleFixture(t, map[string][2]string{name: edit})
		for _, profile := range []string{"", "mini"} {
			cfg, diags := NewLoader(testRegistry()).Load(path, Options{Profile: profile})
			want := map[string]string{"docs.hcl": "Invalid why", "unused.hcl": "Unknown profile"}[name]
			if cfg != nil || !diags.HasErrors() || diags[0].Summary != want || filepath.Base(diags[0].Subject.Filename) != name {
				t.Errorf("%s, profile %q: %v; want %q in %s", name, profile, diags, want, name)
			}
		}
	}
}

// TestModuleDeviationTables: a module's deviation names the module's
// tables, so the including file's reports qualify them with the module's
// short name (its experiment title up to the colon: docs.hcl's "Docs"; the
// block's name without a title: inner.hcl's "inner"; the file's name
// without a block); a name that already says whose ("Parent Table 3",
// "Docs Table 4") is kept, and the file's own are printed as written.
func TestModuleDeviationTables(t *testing.T) {
	t.Parallel()
	tables := func(cfg *Config) map[string][]string {
		out := map[string][]string{}
		for _, d := range cfg.Deviations {
			out[d.Name] = d.Tables
		}
		return out
	}
	news := []string{"Docs Table 1", "Docs: news recall", "Parent Table 3", "Docs Table 4"}
	for _, c := range []struct {
		name    string
		edit    map[string][2]string
		profile string
		want    map[string][]string
	}{
		{"as written", nil, "", map[string][]string{"own": {"Table 1"}, "news": news, "random_init": {"inner Table 4"}}},
		{"a module's profile block", nil, "mini", map[string][]string{"own": {"Table 1"}, "news": news, "small": {"Docs Tables 1-2"}, "random_init": {"inner Table 4"}}},
		{"a title without a colon", map[string][2]string{"inner.hcl": {`experiment "inner" {}`, `experiment "inner" { title = "an encoder" }`}}, "",
			map[string][]string{"random_init": {"an encoder Table 4"}}},
		{"a title reading a variable", map[string][2]string{"docs.hcl": {`title = "Docs: a module that reads BBC News"`, `title = "Docs ${var.count}: a module"`}}, "",
			map[string][]string{"news": {"Docs 100 Table 1", "Docs 100: news recall", "Parent Table 3", "Docs Table 4"}}},
		{"no experiment block", map[string][2]string{"inner.hcl": {`experiment "inner" {}`, ``}}, "",
			map[string][]string{"random_init": {"inner Table 4"}}},
	} {
		file := "testdata/modules/deviations/parent.hcl"
		if c.edit != nil {
			file = writeModuleFixture(t, c.edit)
		}
		got := tables(loadFile(t, file, Options{Profile: c.profile}))
		for name, want := range c.want {
			if !slices.Equal(got[name], want) {
				t.Errorf("%s: %s's tables %q, want %q", c.name, name, got[name], want)
			}
		}
	}
}

// TestQualifyTables: the rule by itself.
func TestQualifyTables(t *testing.T) {
	t.Parallel()
	got := qualifyTables("GenSE", []string{"Table 2", "Tables 2-3", "Figure 2", "held-out perplexity", "DINO Table 1", "DINO Figure 3", "GenSE Table 8", "GenSE: loss", "GenSE"})
	want := []string{"GenSE Table 2", "GenSE Tables 2-3", "GenSE Figure 2", "GenSE: held-out perplexity", "DINO Table 1", "DINO Figure 3", "GenSE Table 8", "GenSE: loss", "GenSE"}
	if !slices.Equal(got, want) {
		t.Errorf("qualifyTables: %q, want %q", got, want)
	}
	if qualifyTables("GenSE", nil) != nil {
		t.Error("no tables: want nil")
	}
}
