package main

import (
	"strings"
	"testing"
)

// A --set run is its own variant: it does not replace the profile's saved
// report, baseline judgement, plan or GC roots (issue: "a --set run
// replaces the profile's saved state").
func TestSetRunKeepsProfileState(t *testing.T) {
	file := workspace(t)
	if code, out, errs := repro(t, "run", file, "--profile", "mini"); code != 0 {
		t.Fatalf("run mini: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := repro(t, "baseline", file, "--profile", "mini", "--seeds", "42"); code != 0 {
		t.Fatalf("baseline: exit %d\n%s%s", code, out, errs)
	}
	_, plain, _ := repro(t, "results", file, "--profile", "mini", "--json")
	if code, out, errs := repro(t, "run", file, "--profile", "mini", "--set", "stage.tfidf.max_features=50"); code != 0 {
		t.Fatalf("run --set: exit %d\n%s%s", code, out, errs)
	}
	_, variant, _ := repro(t, "results", file, "--profile", "mini", "--set", "stage.tfidf.max_features=50", "--json")
	if variant == plain || !strings.Contains(variant, `"ours"`) {
		t.Fatalf("the --set variant should have its own report")
	}
	if _, again, _ := repro(t, "results", file, "--profile", "mini", "--json"); again != plain {
		t.Errorf("results --profile mini changed after a --set run:\n%s\nwas\n%s", again, plain)
	}
	if code, out, _ := repro(t, "check", file, "--profile", "mini"); code != 0 {
		t.Errorf("check --profile mini after a --set run: exit %d\n%s", code, out)
	}
	if code, out, _ := repro(t, "plan", file, "--profile", "mini"); code != 0 || !strings.Contains(out, "0 of 4 stage(s) will run") || strings.Contains(out, "max_features") {
		t.Errorf("plan --profile mini after a --set run: exit %d\n%s", code, out)
	}
	// GC (ignoring age) keeps what either variant references.
	if code, out, errs := repro(t, "cache", "gc", "--keep-newer", "-1s"); code != 0 || !strings.Contains(out, "removed 0 run(s)") {
		t.Errorf("gc: exit %d\n%s%s", code, out, errs)
	}
	if _, out, _ := repro(t, "plan", file, "--profile", "mini"); !strings.Contains(out, "0 of 4 stage(s) will run") {
		t.Errorf("plan after gc:\n%s", out)
	}
	_, out, _ := repro(t, "cache", "scopes")
	if !strings.Contains(out, "#profile=mini\n") || !strings.Contains(out, "#profile=mini#set=stage.tfidf.max_features=50") {
		t.Errorf("cache scopes:\n%s", out)
	}
	// Forgetting the variant lets GC drop what only it needed (its TF-IDF
	// and evaluation).
	if code, out, errs := repro(t, "cache", "forget", file, "--profile", "mini", "--set", "stage.tfidf.max_features=50"); code != 0 {
		t.Fatalf("forget: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := repro(t, "cache", "gc", "--keep-newer", "-1s"); code != 0 || !strings.Contains(out, "removed 2 run(s)") {
		t.Errorf("gc after forget: exit %d\n%s", code, out)
	}
	if code, _, errs := repro(t, "cache", "forget", file, "--profile", "mini", "--set", "stage.tfidf.max_features=50"); code != 1 || !strings.Contains(errs, "keeps no state") {
		t.Errorf("forgetting twice: exit %d\n%s", code, errs)
	}
	// A -var equal to the default is the plain variant.
	if _, out, _ := repro(t, "plan", file, "--profile", "mini", "-var", "seed=42"); !strings.Contains(out, "0 of 4 stage(s) will run") {
		t.Errorf("plan -var seed=42 (the default):\n%s", out)
	}
}
