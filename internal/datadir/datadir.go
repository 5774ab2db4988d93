// Package datadir finds the directory that holds the datasets.
//
// REPRO_DATA_DIR, when set, is the only one. Otherwise two are searched,
// in order: shared/data beside the repository that holds the experiment
// being run (../shared/data from the repository root, the layout of this
// project's checkouts and of CI), and the per-user cache directory
// (os.UserCacheDir()/repro/data, where `repro data pull` puts files). So
// the binary run directly, from any directory, finds the same data as
// `make`, which sets REPRO_DATA_DIR to ../shared/data.
package datadir

import (
	"os"
	"path/filepath"
	"sync"
)

// Env is the environment variable naming the data directory.
const Env = "REPRO_DATA_DIR"

var (
	mu   sync.Mutex
	repo string // the repository root of the experiment being run ("" unknown)
)

// UseExperiment records the experiment file whose repository's
// ../shared/data is searched: the repository root is the nearest ancestor
// of the file's directory holding go.mod or .git (else the file's parent
// directory's parent, experiments/..).
func UseExperiment(file string) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return
	}
	root := RepoRoot(filepath.Dir(abs))
	mu.Lock()
	repo = root
	mu.Unlock()
}

// RepoRoot is the nearest ancestor of dir (dir included) holding go.mod or
// .git; without one, dir's parent (an experiments/ folder's repository).
func RepoRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		for _, marker := range []string{"go.mod", ".git"} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		if filepath.Dir(d) == d {
			return filepath.Dir(dir)
		}
	}
}

// Candidates returns the directories searched for data files, in order.
func Candidates() []string {
	if d := os.Getenv(Env); d != "" {
		return []string{d}
	}
	var ds []string
	mu.Lock()
	r := repo
	mu.Unlock()
	if r != "" {
		ds = append(ds, filepath.Join(filepath.Dir(r), "shared", "data"))
	}
	if c, err := os.UserCacheDir(); err == nil {
		ds = append(ds, filepath.Join(c, "repro", "data"))
	}
	return ds
}
