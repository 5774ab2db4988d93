package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// List returns every recorded run, newest first, with its outputs and size.
func (c *Store) List(ctx context.Context) ([]*RunInfo, error) {
	rows, err := c.db.QueryContext(ctx, "SELECT "+runColumns+" FROM runs ORDER BY created_ns DESC, key")
	if err != nil {
		return nil, err
	}
	var runs []*RunInfo
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		runs = append(runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, r := range runs {
		if err := c.fillOutputs(ctx, r); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// Problem is one inconsistency Verify found.
type Problem struct {
	Digest string   // the object concerned ("" for the index itself)
	Path   string   // its directory, or the index file
	Keys   []string // runs whose outputs reference it
	Reason string
	// Index marks a damaged index (PRAGMA integrity_check failed).
	Index bool
}

func (p Problem) String() string {
	s := fmt.Sprintf("%s: %s", p.Path, p.Reason)
	if len(p.Keys) > 0 {
		s += fmt.Sprintf(" (used by run(s) %s)", strings.Join(p.Keys, ", "))
	}
	return s
}

// Verify re-hashes every object in the store and reports any whose content
// does not match its digest (including objects that no run references:
// a complete object under objects/ must always be intact), and every index
// row that points to a missing object. Temporary directories are not
// objects and are ignored. An empty result means the cache is sound.
func (c *Store) Verify(ctx context.Context) ([]Problem, error) {
	gl, err := c.LockStore(ctx, false)
	if err != nil {
		return nil, err
	}
	defer gl.Unlock()
	// The index first: a damaged page makes every answer below suspect.
	if bad := c.integrity(ctx); len(bad) > 0 {
		return []Problem{{Path: filepath.Join(c.dir, indexFile), Index: true,
			Reason: "the index is damaged: " + strings.Join(bad, "; ")}}, nil
	}
	refs := map[string][]string{}
	rows, err := c.db.QueryContext(ctx, "SELECT digest, key FROM outputs ORDER BY key")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var d, k string
		if err := rows.Scan(&d, &k); err != nil {
			rows.Close()
			return nil, err
		}
		refs[d] = append(refs[d], k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	onDisk, err := c.Objects()
	if err != nil {
		return nil, err
	}
	var probs []Problem
	for _, d := range onDisk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := c.ObjectPath(d)
		got, _, err := DigestDir(p)
		switch {
		case err != nil:
			probs = append(probs, Problem{Digest: d, Path: p, Keys: refs[d], Reason: "cannot be read: " + err.Error()})
		case got != d:
			probs = append(probs, Problem{Digest: d, Path: p, Keys: refs[d], Reason: "content does not match its digest (now " + got + ")"})
		}
	}
	present := map[string]bool{}
	for _, d := range onDisk {
		present[d] = true
	}
	var missing []string
	for d := range refs {
		if !present[d] {
			missing = append(missing, d)
		}
	}
	sort.Strings(missing)
	for _, d := range missing {
		probs = append(probs, Problem{Digest: d, Path: c.ObjectPath(d), Keys: refs[d], Reason: "missing from the store"})
	}
	return probs, nil
}

// Objects lists the digests of the objects on disk, sorted. Entries that
// are not well-formed object names are ignored.
func (c *Store) Objects() ([]string, error) {
	root := filepath.Join(c.dir, objectsDir)
	fans, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range fans {
		if !f.IsDir() || len(f.Name()) != 2 {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(root, f.Name()))
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if e.IsDir() && validDigest(e.Name()) && strings.HasPrefix(e.Name(), f.Name()) {
				out = append(out, e.Name())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// DefaultKeepNewer is how long GC keeps runs that no scope's last-run
// record reaches: a week covers switching between branches or profiles for
// a while without recomputing.
const DefaultKeepNewer = 7 * 24 * time.Hour

// GCOptions say which runs GC keeps.
type GCOptions struct {
	// KeepNewer keeps every run recorded within this duration. Zero means
	// DefaultKeepNewer; a negative value keeps none by age.
	KeepNewer time.Duration
	// DropLastRuns, when set, does not keep the runs that the scopes'
	// last-run records reference (and forgets those records).
	DropLastRuns bool
	// DryRun counts the runs and objects that would be removed (and the
	// bytes freed) and removes nothing.
	DryRun bool
}

// GCStats says what GC removed (or would remove, in a dry run).
type GCStats struct {
	RunsRemoved    int
	ObjectsRemoved int
	BytesFreed     int64
	TempRemoved    int // temporary output directories and work directories
	LogsRemoved    int
}

// GC removes the runs not worth keeping, the objects no remaining run
// references, and leftovers of interrupted runs. By default it keeps the
// runs that some scope's last-run record names (the latest state of every
// experiment run against this cache), every run of the last
// DefaultKeepNewer, and, transitively, the runs that produced their inputs
// (so a kept stage's provenance stays resolvable). It waits for running
// pipelines on this cache to finish and blocks new ones while it works.
func (c *Store) GC(ctx context.Context, opts GCOptions) (*GCStats, error) {
	gl, err := c.LockStore(ctx, true)
	if err != nil {
		return nil, err
	}
	defer gl.Unlock()
	if !opts.DryRun {
		// Nobody uses the cache: published answers go into the index.
		if _, err := c.settleAnswers(ctx, true); err != nil {
			return nil, err
		}
	}
	keepNewer := opts.KeepNewer
	if keepNewer == 0 {
		keepNewer = DefaultKeepNewer
	}
	cutoff := time.Now().Add(-keepNewer).UnixNano()
	if keepNewer < 0 {
		cutoff = time.Now().Add(time.Hour).UnixNano()
	}
	runs, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	keep, err := c.gcRoots(ctx, runs, cutoff, opts.DropLastRuns)
	if err != nil {
		return nil, err
	}
	closeOverInputs(runs, keep)
	return c.sweep(ctx, runs, keep, cutoff, opts)
}

// gcRoots are the runs GC keeps for their own sake: those recorded since
// cutoff and, unless dropLastRuns, those a scope's last-run record names.
func (c *Store) gcRoots(ctx context.Context, runs []*RunInfo, cutoff int64, dropLastRuns bool) (map[string]bool, error) {
	keep := map[string]bool{}
	for _, r := range runs {
		if r.Time.UnixNano() >= cutoff {
			keep[r.Key] = true
		}
	}
	if dropLastRuns {
		return keep, nil
	}
	rows, err := c.db.QueryContext(ctx, "SELECT DISTINCT key FROM last_runs")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		keep[k] = true
	}
	return keep, rows.Err()
}

// closeOverInputs adds to keep what its runs' inputs need: every input
// digest of a kept run must stay resolvable to a kept run that produced
// it. One producer is enough: an input already produced by a kept run pins
// nothing more, and otherwise the newest producer (runs are listed newest
// first) is kept.
func closeOverInputs(runs []*RunInfo, keep map[string]bool) {
	producers := map[string][]string{} // digest -> keys, newest first
	for _, r := range runs {
		for _, a := range r.Outputs {
			producers[a.Digest] = append(producers[a.Digest], r.Key)
		}
	}
	byKey := map[string]*RunInfo{}
	for _, r := range runs {
		byKey[r.Key] = r
	}
	produced := map[string]bool{} // digests produced by kept runs
	var queue []string
	for _, r := range runs {
		if keep[r.Key] {
			queue = append(queue, r.Key)
			for _, a := range r.Outputs {
				produced[a.Digest] = true
			}
		}
	}
	for len(queue) > 0 {
		r := byKey[queue[0]]
		queue = queue[1:]
		if r == nil {
			continue
		}
		for _, d := range sortedValues(r.Inputs) {
			if produced[d] || len(producers[d]) == 0 {
				continue
			}
			p := producers[d][0]
			keep[p] = true
			queue = append(queue, p)
			for _, a := range byKey[p].Outputs {
				produced[a.Digest] = true
			}
		}
	}
}

// sweep removes (or, in a dry run, counts) the runs outside keep, the
// objects no kept run references, and the leftovers of interrupted runs.
func (c *Store) sweep(ctx context.Context, runs []*RunInfo, keep map[string]bool, cutoff int64, opts GCOptions) (*GCStats, error) {
	st := &GCStats{}
	var drop []string
	live := map[string]bool{}
	for _, r := range runs {
		if keep[r.Key] {
			for _, a := range r.Outputs {
				live[a.Digest] = true
			}
		} else {
			drop = append(drop, r.Key)
		}
	}
	st.RunsRemoved = len(drop)
	onDisk, err := c.Objects()
	if err != nil {
		return nil, err
	}
	var deadObjects []string
	for _, d := range onDisk {
		if !live[d] {
			deadObjects = append(deadObjects, d)
			st.BytesFreed += dirSize(c.ObjectPath(d))
		}
	}
	st.ObjectsRemoved = len(deadObjects)
	if opts.DryRun {
		c.leftovers(runs, keep, cutoff, true, st)
		return st, nil
	}
	if err := c.forgetRuns(ctx, drop, opts.DropLastRuns); err != nil {
		return nil, err
	}
	for _, d := range deadObjects {
		if err := RemoveAll(c.ObjectPath(d)); err != nil {
			return st, err
		}
	}
	c.leftovers(runs, keep, cutoff, false, st)
	return st, nil
}

// forgetRuns deletes the dropped runs' index rows (and with lastRuns every
// last-run record) and the objects' rows nothing references any more. It
// runs before any object is removed: an object must never be referenced
// by the index after it is gone, whatever moment a crash picks.
func (c *Store) forgetRuns(ctx context.Context, drop []string, lastRuns bool) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, k := range drop {
		if _, err := tx.Exec("DELETE FROM outputs WHERE key = ?", k); err != nil {
			return err
		}
		if _, err := tx.Exec("DELETE FROM runs WHERE key = ?", k); err != nil {
			return err
		}
	}
	if lastRuns {
		if _, err := tx.Exec("DELETE FROM last_runs"); err != nil {
			return err
		}
	}
	if _, err := tx.Exec("DELETE FROM objects WHERE digest NOT IN (SELECT digest FROM outputs)"); err != nil {
		return err
	}
	return tx.Commit()
}

func sortedValues(m map[string]string) []string {
	vs := make([]string, 0, len(m))
	for _, v := range m {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	return vs
}

func removeEntries(dir string, dry bool, pick func(string, os.FileInfo) bool) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !pick(e.Name(), fi) {
			continue
		}
		if dry || RemoveAll(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// integrity runs SQLite's integrity check; it returns what it found wrong
// (nothing for a sound index).
func (c *Store) integrity(ctx context.Context) []string {
	rows, err := c.db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return []string{err.Error()}
	}
	defer rows.Close()
	var bad []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return append(bad, err.Error())
		}
		if s != "ok" {
			bad = append(bad, s)
		}
	}
	if err := rows.Err(); err != nil {
		bad = append(bad, err.Error())
	}
	if len(bad) > 3 {
		bad = append(bad[:3], fmt.Sprintf("and %d more", len(bad)-3))
	}
	return bad
}

// Repair acts on Verify's problems so that the next run recomputes what
// was damaged: a corrupt object is quarantined and the runs that produced
// it forgotten; runs pointing at a missing object are forgotten; a damaged
// index is moved aside (index.db.damaged-<time>) and a fresh one started
// (objects stay: a re-run finds and re-verifies them by digest, but
// provenance, last runs and reports of the old index are lost). It returns
// what it did, one line per action.
func (c *Store) Repair(ctx context.Context, probs []Problem) ([]string, error) {
	if c.readOnly {
		return nil, fmt.Errorf("cache %s is open read-only", c.dir)
	}
	var done []string
	for _, p := range probs {
		switch {
		case p.Index:
			stamp := time.Now().UTC().Format("20060102T150405")
			c.db.Close()
			for _, suffix := range []string{"", "-wal", "-shm"} {
				from := filepath.Join(c.dir, indexFile+suffix)
				if _, err := os.Stat(from); err == nil {
					if err := os.Rename(from, filepath.Join(c.dir, indexFile+".damaged-"+stamp+suffix)); err != nil {
						return done, err
					}
				}
			}
			fresh, err := Open(c.dir)
			if err != nil {
				return done, err
			}
			c.db = fresh.db
			done = append(done, fmt.Sprintf("moved the damaged index to %s and started a fresh one", indexFile+".damaged-"+stamp))
			if n, err := c.salvageRequests(ctx, filepath.Join(c.dir, indexFile+".damaged-"+stamp)); n > 0 || err == nil {
				done = append(done, fmt.Sprintf("copied %d language-model answer(s) from the damaged index", n))
			}
			return done, nil // the old index's other problems went with it
		default:
			keys, err := c.Quarantine(ctx, p.Digest, p.Reason)
			if err != nil {
				return done, err
			}
			done = append(done, fmt.Sprintf("%s: quarantined; forgot %d run(s) that stored it", p.Path, len(keys)))
		}
	}
	return done, nil
}

// leftovers removes (or, dry, counts) what interrupted runs left behind,
// logs of forgotten runs, and quarantined objects older than the cutoff.
func (c *Store) leftovers(runs []*RunInfo, keep map[string]bool, cutoff int64, dry bool, st *GCStats) {
	// Leftovers of interrupted runs. No run holds the store lock now, so
	// every temporary directory is abandoned. Work directories of keys not
	// yet recorded may hold a resumable checkpoint: keep those while young.
	recorded := map[string]bool{}
	for _, r := range runs {
		recorded[r.Key] = keep[r.Key]
	}
	st.TempRemoved += removeEntries(filepath.Join(c.dir, tmpDir), dry, func(string, os.FileInfo) bool { return true })
	st.TempRemoved += removeEntries(filepath.Join(c.dir, workDir), dry, func(name string, fi os.FileInfo) bool {
		_, isRun := recorded[name]
		return isRun || fi.ModTime().UnixNano() < cutoff
	})
	st.LogsRemoved = removeEntries(filepath.Join(c.dir, logsDir), dry, func(name string, fi os.FileInfo) bool {
		k := strings.TrimSuffix(name, ".log")
		kept, isRun := recorded[k]
		if isRun {
			return !kept
		}
		return fi.ModTime().UnixNano() < cutoff // logs of failed runs
	})
	st.TempRemoved += removeEntries(filepath.Join(c.dir, quarantineDir), dry, func(_ string, fi os.FileInfo) bool {
		return fi.ModTime().UnixNano() < cutoff
	})
	removeEntries(filepath.Join(c.dir, locksDir), dry, func(name string, _ os.FileInfo) bool { return name != "gc" })
}
