package main

import (
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
)

// planKeys reads plan's STAGE and KEY columns.
func planKeys(t *testing.T, out string) map[string]string {
	t.Helper()
	keys := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 4 && f[0] != "STAGE" && f[1] != "of" {
			keys[f[0]] = f[2]
		}
	}
	return keys
}

// --set and --target reach a module's stages as plan names them
// (module.M.STAGE); a --set changes that stage's key only; what names
// nothing is reported at the flag (testdata/module_paths.golden).
func TestSetAndTargetIntoModules(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	const file = "testdata/modules/stsb.hcl"
	code, out, errs := repro(t, "plan", file, "--profile", "ci")
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	base := planKeys(t, out)
	code, out, errs = repro(t, "plan", file, "--profile", "ci", "--set", `module.shared.corpus.splits=["test"]`)
	if code != 0 {
		t.Fatalf("plan --set: exit %d: %s", code, errs)
	}
	set := planKeys(t, out)
	if set["module.shared.corpus"] == base["module.shared.corpus"] || set["data"] != base["data"] {
		t.Errorf("--set module.shared.corpus.splits: corpus %s -> %s (must change), data %s -> %s (must not)",
			base["module.shared.corpus"], set["module.shared.corpus"], base["data"], set["data"])
	}
	code, out, errs = repro(t, "plan", file, "--profile", "ci", "--target", "module.shared.tfidf")
	if code != 0 {
		t.Fatalf("plan --target: exit %d: %s", code, errs)
	}
	if got := planKeys(t, out); len(got) != 2 || got["module.shared.corpus"] == "" || got["module.shared.tfidf"] == "" {
		t.Errorf("--target module.shared.tfidf plans %v, want the module's corpus and tfidf", got)
	}
	var all strings.Builder
	for _, args := range [][]string{
		{"--set", "module.shard.tfidf.max_features=1", "--set", "module.shared.tfidff.max_features=1", "--set", "module.shared.tfidf.max_feature=1"},
		{"--target", "module.shared.nope"},
		{"--target", "module.nope.tfidf"},
	} {
		code, _, errs := repro(t, append([]string{"plan", file, "--profile", "ci"}, args...)...)
		if code != exitFailure {
			t.Errorf("%v: exit %d, want %d", args, code, exitFailure)
		}
		all.WriteString("$ repro plan " + file + " --profile ci " + strings.Join(args, " ") + "\n" + errs + "\n")
	}
	golden(t, "module_paths.golden", all.String())
}

// Local values holding stage references give the graph and the plan that
// writing the references out gives.
func TestLocalsHoldingReferences(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	for _, cmd := range []string{"graph", "plan"} {
		code, want, errs := repro(t, cmd, "testdata/modules/stsb.hcl", "--profile", "ci")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", cmd, code, errs)
		}
		code, got, errs := repro(t, cmd, "testdata/modules/stsb_locals.hcl", "--profile", "ci")
		if code != 0 {
			t.Fatalf("%s with locals: exit %d: %s", cmd, code, errs)
		}
		if got != want {
			t.Errorf("%s with locals:\n%s\nwritten out:\n%s", cmd, got, want)
		}
	}
	if code, out, _ := repro(t, "fmt", "--check", "testdata/modules/stsb_locals.hcl", "../../dsl/testdata/locals/refs.hcl", "../../dsl/testdata/modules/paths/main.hcl"); code != 0 {
		t.Errorf("fixtures are not formatted:\n%s", out)
	}
}
