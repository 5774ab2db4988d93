package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
)

// TestModuleCacheHitAcrossExperiments: two experiment files use one module
// stage (testdata/modules/shared.hcl's TF-IDF encoder, with its own ci
// profile); after the first runs, the second finds the shared stages in the
// cache and runs only its own.
func TestModuleCacheHitAcrossExperiments(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	t.Setenv("CI", "true")
	root := t.TempDir()
	dir := filepath.Join(root, "experiments")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"shared.hcl", "stsb.hcl", "sickr.hcl"} {
		b, err := os.ReadFile(filepath.Join("testdata", "modules", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("REPRO_CACHE", filepath.Join(root, "cache"))

	code, out, errs := repro(t, "run", filepath.Join(dir, "stsb.hcl"), "--profile", "ci")
	if code != 0 {
		t.Fatalf("first experiment: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"done     module.shared.corpus", "done     module.shared.tfidf", "done     eval"} {
		if !strings.Contains(out, want) {
			t.Errorf("first run lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = repro(t, "run", filepath.Join(dir, "sickr.hcl"), "--profile", "ci")
	if code != 0 {
		t.Fatalf("second experiment: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"cached   module.shared.corpus", "cached   module.shared.tfidf", "done     data", "done     eval"} {
		if !strings.Contains(out, want) {
			t.Errorf("second run lacks %q:\n%s", want, out)
		}
	}
	// The module's ci profile applied: without it the encoder is another
	// stage (2000 features), which plan says will run.
	code, out, errs = repro(t, "plan", filepath.Join(dir, "sickr.hcl"))
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	status := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			status[f[0]] = l
		}
	}
	if !strings.Contains(status["module.shared.corpus"], "cached") || !strings.Contains(status["module.shared.tfidf"], "will run") {
		t.Errorf("plan without the ci profile:\n%s", out)
	}
}
