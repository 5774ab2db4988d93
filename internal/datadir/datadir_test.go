package datadir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Without REPRO_DATA_DIR, the data directory beside the experiment's
// repository is searched first, then the user cache; REPRO_DATA_DIR, when
// set, is the only one.
func TestCandidates(t *testing.T) {
	top := t.TempDir()
	repoDir := filepath.Join(top, "checkout")
	os.MkdirAll(filepath.Join(repoDir, "experiments", "modules"), 0o755)
	os.WriteFile(filepath.Join(repoDir, "go.mod"), []byte("module x\n"), 0o644)
	t.Setenv(Env, "")
	t.Setenv("XDG_CACHE_HOME", filepath.Join(top, "cache"))
	t.Cleanup(func() { mu.Lock(); repo = ""; mu.Unlock() })

	UseExperiment(filepath.Join(repoDir, "experiments", "modules", "lm.hcl"))
	want := []string{filepath.Join(top, "shared", "data"), filepath.Join(top, "cache", "repro", "data")}
	if got := Candidates(); !slices.Equal(got, want) {
		t.Errorf("candidates %q, want %q", got, want)
	}
	t.Setenv(Env, "/elsewhere/data")
	if got := Candidates(); !slices.Equal(got, []string{"/elsewhere/data"}) {
		t.Errorf("with %s set: %q", Env, got)
	}
}

// A file outside any repository: its directory's parent stands for the
// repository (experiments/..).
func TestRepoRootWithoutMarker(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "proj", "experiments")
	os.MkdirAll(exp, 0o755)
	if got := RepoRoot(exp); got != filepath.Join(dir, "proj") && !fileExists(filepath.Join(got, ".git")) && !fileExists(filepath.Join(got, "go.mod")) {
		t.Errorf("RepoRoot(%s) = %s", exp, got)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
