package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ImportStats counts what Import did.
type ImportStats struct {
	Runs    int   // runs recorded here
	Present int   // runs skipped: this cache has the key already
	Objects int   // objects copied (an object this cache holds intact is reused)
	Bytes   int64 // bytes copied
}

// Import copies recorded runs of src into c: the index row of each run
// match accepts (every run when match is nil), its output objects and its
// log. It is how one cache serves another without re-running a stage -- a
// pretraining computed in one cache directory, used from a second -- and
// it keeps the cache's promises: each object is copied to tmp/, re-hashed
// and sealed here, and a run whose copy does not hash to its recorded
// digest is refused (the source is damaged: `repro cache verify` it), so
// nothing unverified is ever served. Each run is recorded in one
// transaction after all of its objects are in place; a key this cache
// holds already is left as it is. onRun, when not nil, is told each run as
// it is imported (imported false: skipped).
func (c *Store) Import(ctx context.Context, src *Store, match func(*RunInfo) bool, onRun func(r *RunInfo, imported bool)) (ImportStats, error) {
	var st ImportStats
	if c.readOnly || c.db == nil {
		return st, errors.New("import: the destination cache is not open for writing")
	}
	if src.db == nil {
		return st, ErrNoIndex
	}
	if filepath.Clean(c.dir) == filepath.Clean(src.dir) {
		return st, fmt.Errorf("import: %s is this cache", src.dir)
	}
	// Shared, as a run holds it: gc (exclusive) must not remove an
	// object between its copy and the row that references it.
	gl, err := c.LockStore(ctx, false)
	if err != nil {
		return st, err
	}
	defer gl.Unlock()
	sl, err := src.LockStore(ctx, false)
	if err != nil {
		return st, err
	}
	defer sl.Unlock()
	runs, err := src.List(ctx)
	if err != nil {
		return st, fmt.Errorf("import: reading %s: %w", src.dir, err)
	}
	for _, r := range runs {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if match != nil && !match(r) {
			continue
		}
		imported, err := c.importRun(ctx, src, r, &st)
		if err != nil {
			return st, fmt.Errorf("import: run %s (%s): %w", r.Key, r.NodeID, err)
		}
		if onRun != nil {
			onRun(r, imported)
		}
	}
	return st, nil
}

func (c *Store) importRun(ctx context.Context, src *Store, r *RunInfo, st *ImportStats) (bool, error) {
	// The key lock, as a run takes it: a stage computing this key right
	// now in this cache finishes first, and then the key is present.
	lock, err := c.LockKey(ctx, r.Key, nil)
	if err != nil {
		return false, err
	}
	defer lock.Unlock()
	if _, ok, err := c.Lookup(ctx, r.Key); err != nil {
		return false, err
	} else if ok {
		st.Present++
		return false, nil
	}
	run := &Run{Key: r.Key, Type: r.Type, NodeID: r.NodeID, Version: r.Version, Params: r.Params,
		Inputs: r.Inputs, Seed: r.Seed, Seeded: r.Seeded, Duration: r.Duration, Device: r.Device,
		Backend: r.Backend, ReproVersion: r.ReproVersion, Partial: r.Partial, Host: r.Host}
	for port, a := range r.Outputs {
		size, copied, err := c.importObject(src, r.Key, a.Digest)
		if err != nil {
			return false, fmt.Errorf("output %q: %w", port, err)
		}
		if copied {
			st.Objects++
			st.Bytes += size
		}
		run.Outputs = append(run.Outputs, Output{Port: port, Kind: string(a.Kind), Digest: a.Digest, Size: size})
	}
	if err := c.Record(ctx, run); err != nil {
		return false, err
	}
	st.Runs++
	// The log is provenance, not content: copied when there is one.
	if in, err := os.Open(src.LogPath(r.Key)); err == nil {
		defer in.Close()
		if err := os.MkdirAll(filepath.Dir(c.LogPath(r.Key)), 0o755); err == nil {
			if out, err := os.OpenFile(c.LogPath(r.Key), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
				io.Copy(out, in)
				out.Close()
			}
		}
	}
	return true, nil
}

// importObject makes the object with that digest present and intact here,
// copying it from src when it is not; it returns the object's size and
// whether it was copied.
func (c *Store) importObject(src *Store, key, digest string) (int64, bool, error) {
	if !validDigest(digest) {
		return 0, false, fmt.Errorf("%q is not a digest", digest)
	}
	// One hash tells both that the copy here is intact and its size.
	if got, size, err := DigestDir(c.ObjectPath(digest)); err == nil && got == digest {
		return size, false, nil
	}
	tmp := c.TempDir(key)
	if err := copyTree(src.ObjectPath(digest), tmp); err != nil {
		RemoveAll(tmp)
		return 0, false, fmt.Errorf("copying from %s: %w", src.dir, err)
	}
	// Hashed before PutObject so that a damaged copy never enters
	// objects/, even under its own digest.
	got, size, err := DigestDir(tmp)
	if err != nil {
		RemoveAll(tmp)
		return 0, false, err
	}
	if got != digest {
		RemoveAll(tmp)
		return 0, false, fmt.Errorf("the source's object %s does not match its digest (it hashes to %s): run `repro cache verify` on %s", digest, got, src.dir)
	}
	stored, size, err := c.PutObject(tmp)
	if err != nil {
		RemoveAll(tmp)
		return 0, false, err
	}
	if stored != digest { // the tree changed between the two hashes
		return 0, false, fmt.Errorf("object %s changed while it was copied", digest)
	}
	return size, true, nil
}

// copyTree copies the regular files and directories under src to dst (not
// existing yet); anything else is refused, as in an artifact.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type().IsRegular():
			return copyFile(p, to)
		default:
			return fmt.Errorf("%s: not a regular file or directory", p)
		}
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
