// Package datadirtest finds the data directory for tests. It is apart from
// package datadir so that nothing but tests links package testing.
package datadirtest

import (
	"os"
	"path/filepath"
	"testing"

	"repro/internal/datadir"
)

// Dir returns the data directory for tests: REPRO_DATA_DIR, or else a
// shared/data directory found beside an ancestor of the working directory
// (the layout of this project's checkouts). When none is found the test is
// skipped, unless REPRO_REQUIRE_DATA=1 (set by CI), where it fails.
func Dir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv(datadir.Env); d != "" {
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
		t.Fatalf("no data directory: set %s", datadir.Env)
	}
	t.Skipf("no data directory: set %s to run this test", datadir.Env)
	return ""
}
