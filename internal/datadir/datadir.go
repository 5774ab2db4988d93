// Package datadir finds the directory that holds the datasets: the
// REPRO_DATA_DIR environment variable, then the per-user cache directory
// (os.UserCacheDir()/repro/data).
package datadir

import (
	"os"
	"path/filepath"
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
