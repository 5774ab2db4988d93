package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// OpenObjects opens the cache in dir without its index: the object store
// alone, as a stage job on a cluster node uses it. Such a store puts
// objects (PutObject), verifies them, quarantines a damaged one (moving it
// out of objects/, which the coordinator sees as a cache miss) and hashes
// external files (without the stat cache); it never opens SQLite, which is
// unsafe over a network file system and is written by the coordinating
// process alone. Methods that need the index fail with ErrNoIndex.
//
// The cache must exist (the coordinator created it): a job pointed at a
// wrong directory fails instead of filling a new one nobody reads.
func OpenObjects(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(filepath.Join(abs, objectsDir)); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s has no %s/ directory", ErrNoCache, abs, objectsDir)
	}
	for _, d := range []string{tmpDir, workDir, logsDir} {
		if err := os.MkdirAll(filepath.Join(abs, d), 0o755); err != nil {
			return nil, fmt.Errorf("cache %s: %w", abs, err)
		}
	}
	c := &Store{dir: abs}
	c.host, _ = os.Hostname()
	return c, nil
}

// ErrNoIndex says that a store opened with OpenObjects was asked for
// something only the index holds.
var ErrNoIndex = errors.New("this process has no access to the cache's index (a stage job writes objects only)")

// HasIndex reports whether the store has its SQLite index open (false for
// OpenObjects).
func (c *Store) HasIndex() bool { return c.db != nil }
