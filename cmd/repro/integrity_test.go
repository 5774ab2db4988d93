package main

import (
	"io/fs"
	"os"
	"path/filepath"
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

// findObject returns the directory of the cached object holding a file
// named name whose content contains marker.
func findObject(t *testing.T, cache, name, marker string) string {
	t.Helper()
	var found string
	filepath.WalkDir(filepath.Join(cache, "objects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), marker) {
				found = filepath.Dir(p)
			}
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no object with %s containing %q", name, marker)
	}
	return found
}

// overwrite changes bytes in the middle of a stored (read-only) file.
func overwrite(t *testing.T, path string, at int64, data []byte) {
	t.Helper()
	os.Chmod(path, 0o644)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, at); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func stsbOf(t *testing.T, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 4 && f[0] == "TF-IDF" && f[1] == "STS-B" {
			return f[3]
		}
	}
	t.Fatalf("no TF-IDF STS-B row in:\n%s", out)
	return ""
}

// Objects are verified when read: a damaged encoder under a stage that
// runs, or a damaged metrics.json under the report, is quarantined and
// recomputed from its stage; no number computed from it is reported or
// cached.
func TestCorruptObjectsAreRecomputed(t *testing.T) {
	file := workspace(t)
	cache := os.Getenv("REPRO_CACHE")
	code, out, errs := repro(t, "run", file)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	want := stsbOf(t, out)

	// 1. Damage the TF-IDF encoder, then run a variant that evaluates it
	// again.
	enc := findObject(t, cache, "encoder.json", "tfidf")
	var big string
	filepath.WalkDir(enc, func(p string, d fs.DirEntry, err error) error {
		if fi, _ := d.Info(); err == nil && !d.IsDir() && (big == "" || fi.Size() > 1000) {
			big = p
		}
		return nil
	})
	overwrite(t, big, 200, []byte("\x00\x00\x00\x00garbage\x00\x00\x00\x00"))
	code, out, errs = repro(t, "run", file, "--set", "stage.eval.batch_size=128")
	if code != 0 {
		t.Fatalf("variant run after damage: exit %d\n%s%s", code, out, errs)
	}
	if got := stsbOf(t, out); got != want {
		t.Errorf("variant run on a damaged encoder reports %s, want %s (recomputed)", got, want)
	}
	if !strings.Contains(out, "corrupt") || !strings.Contains(out, "done     tfidf") {
		t.Errorf("the run should say the input was corrupt and recompute tfidf:\n%s", out)
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, "quarantine")); len(ents) == 0 {
		t.Error("nothing in quarantine/")
	}
	if code, out, _ := repro(t, "cache", "verify"); code != 0 {
		t.Errorf("cache verify after recomputation: exit %d\n%s", code, out)
	}

	// 2. Edit a metrics.json: the next plain run must not report the edit.
	m := findObject(t, cache, "metrics.json", `"stsb"`)
	p := filepath.Join(m, "metrics.json")
	b, _ := os.ReadFile(p)
	i := strings.Index(string(b), "\n  \"stsb\": ")
	if i < 0 {
		t.Fatalf("no top-level stsb in %s", b)
	}
	j := i + strings.Index(string(b[i:]), ",")
	edited := string(b[:i]) + "\n  \"stsb\": 99.99" + string(b[j:])
	if edited == string(b) {
		t.Fatal("the edit changed nothing")
	}
	os.Chmod(p, 0o644)
	os.WriteFile(p, []byte(edited), 0o644)
	code, out, errs = repro(t, "run", file)
	if code != 0 {
		t.Fatalf("run after editing metrics: exit %d\n%s%s", code, out, errs)
	}
	if got := stsbOf(t, out); got != want {
		t.Errorf("after editing metrics.json the run reports %s, want %s", got, want)
	}
	_, res, _ := repro(t, "results", file, "--json")
	if strings.Contains(res, "99.99") {
		t.Error("the edited value was saved in the report")
	}
}
