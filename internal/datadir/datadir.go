// Package datadir finds the directory that holds the datasets: the
// REPRO_DATA_DIR environment variable, then the per-user cache directory
// (os.UserCacheDir()/repro/data).
package datadir

import (
	"os"
	"path/filepath"
	"testing"
)

// Env is the environment variable naming the data directory.
const Env = "REPRO_DATA_DIR"

// Candidates returns the directories searched for data files, in order.
func Candidates() []string {
	var ds []string
	if d := os.Getenv(Env); d != "" {
		ds = append(ds, d)
	}
	if c, err := os.UserCacheDir(); err == nil {
		ds = append(ds, filepath.Join(c, "repro", "data"))
	}
	return ds
}

// Find returns the first candidate directory holding rel, or "" when none does.
func Find(rel string) string {
	for _, d := range Candidates() {
		if _, err := os.Stat(filepath.Join(d, rel)); err == nil {
			return d
		}
	}
	return ""
}

// ForTest returns the data directory for tests: REPRO_DATA_DIR, or else a
// shared/data directory found beside an ancestor of the working directory
// (the layout of this project's checkouts). When none is found the test is
// skipped, unless REPRO_REQUIRE_DATA=1 (set by CI), where it fails.
func ForTest(t testing.TB) string {
	t.Helper()
	if d := os.Getenv(Env); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
		return d
	}
	wd, err := os.Getwd()
	if err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			cand := filepath.Join(filepath.Dir(dir), "shared", "data")
			if st, err := os.Stat(filepath.Join(cand, "README.md")); err == nil && !st.IsDir() {
				return cand
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if os.Getenv("REPRO_REQUIRE_DATA") == "1" {
		t.Fatalf("no data directory: set %s", Env)
	}
	t.Skipf("no data directory: set %s to run this test", Env)
	return ""
}
