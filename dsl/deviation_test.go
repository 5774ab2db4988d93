package dsl

import (
	"slices"
	"strings"
	"testing"
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
