package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-sqlite3" // also registers the "sqlite3" database/sql driver
	"repro/registry"
)

// Store is an open cache directory: the content-addressed object store, the
// SQLite index of stage runs, per-key locks, logs and work directories.
// Several goroutines and several processes may use one cache at once.
type Store struct {
	dir      string
	db       *sql.DB
	host     string
	readOnly bool
}

// Layout of a cache directory.
const (
	indexFile  = "index.db"
	objectsDir = "objects" // objects/<2 hex>/<digest>/: finished artifacts
	tmpDir     = "tmp"     // outputs being written; never read from
	workDir    = "work"    // work/<key>/: Env.Work, survives crashes
	logsDir    = "logs"    // logs/<key>.log: one per stage run attempt
	locksDir   = "locks"   // locks/<key>: per-key flock; locks/gc: store-wide
)

// schemaVersion is stored in PRAGMA user_version. Version 2 added
// file_hashes (the stat cache of external inputs); a version-1 index is
// upgraded in place (the schema only adds tables).
const schemaVersion = 2

const schema = `
CREATE TABLE IF NOT EXISTS runs (
	key           TEXT PRIMARY KEY,
	stage_type    TEXT NOT NULL,
	version       INTEGER NOT NULL,
	node_id       TEXT NOT NULL,
	params        TEXT NOT NULL,
	inputs        TEXT NOT NULL,
	seed          INTEGER NOT NULL,
	seeded        INTEGER NOT NULL,
	duration_ns   INTEGER NOT NULL,
	device        TEXT NOT NULL,
	backend       TEXT NOT NULL,
	repro_version TEXT NOT NULL,
	host          TEXT NOT NULL,
	partial       INTEGER NOT NULL,
	created_ns    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outputs (
	key    TEXT NOT NULL REFERENCES runs(key) ON DELETE CASCADE,
	port   TEXT NOT NULL,
	kind   TEXT NOT NULL,
	digest TEXT NOT NULL,
	PRIMARY KEY (key, port)
);
CREATE INDEX IF NOT EXISTS outputs_digest ON outputs(digest);
CREATE TABLE IF NOT EXISTS objects (
	digest     TEXT PRIMARY KEY,
	size       INTEGER NOT NULL,
	created_ns INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS last_runs (
	scope      TEXT NOT NULL,
	node_id    TEXT NOT NULL,
	key        TEXT NOT NULL,
	stage_type TEXT NOT NULL,
	version    INTEGER NOT NULL,
	params     TEXT NOT NULL,
	inputs     TEXT NOT NULL,
	seed       INTEGER NOT NULL,
	seeded     INTEGER NOT NULL,
	updated_ns INTEGER NOT NULL,
	PRIMARY KEY (scope, node_id)
);
CREATE TABLE IF NOT EXISTS reports (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	scope      TEXT NOT NULL,
	created_ns INTEGER NOT NULL,
	body       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS reports_scope ON reports(scope, id);
CREATE TABLE IF NOT EXISTS file_hashes (
	path     TEXT PRIMARY KEY,
	size     INTEGER NOT NULL,
	mtime_ns INTEGER NOT NULL,
	ctime_ns INTEGER NOT NULL,
	ino      INTEGER NOT NULL,
	dev      INTEGER NOT NULL,
	hash     TEXT NOT NULL
);
`

// Open opens the cache in dir for writing, creating the directory and the
// index when they do not exist.
func Open(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{objectsDir, tmpDir, workDir, logsDir, locksDir} {
		if err := os.MkdirAll(filepath.Join(abs, d), 0o755); err != nil {
			return nil, fmt.Errorf("cache %s: %w", abs, err)
		}
	}
	// WAL: readers never block the writer, and a commit is one append.
	// synchronous=NORMAL: in WAL mode a commit survives any process crash
	// (kill -9) and the database is never corrupted; only a power loss can
	// roll back the last commits. Because artifacts are fsynced before
	// their run is recorded, such a rollback only means a stage runs again,
	// so FULL's fsync per commit would buy nothing. _txlock=immediate takes
	// the write lock at BEGIN, so two writers wait on the busy timeout
	// instead of failing on a lock upgrade.
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_busy_timeout", "30000")
	q.Set("_txlock", "immediate")
	q.Set("_foreign_keys", "on")
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(abs, indexFile)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", abs, err)
	}
	c := &Store{dir: abs, db: db}
	c.host, _ = os.Hostname()
	if err := retryBusy(c.migrate); err != nil {
		db.Close()
		return nil, fmt.Errorf("cache %s: %w", filepath.Join(abs, indexFile), err)
	}
	return c, nil
}

// ErrNoCache says a read-only open found no cache.
var ErrNoCache = errors.New("no cache here")

// OpenReadOnly opens an existing cache for reading only: it creates
// nothing (a mistyped --cache-dir is an error, not a new empty cache) and
// works on a cache the user cannot write (a shared one, a read-only mount).
// When the directory is not writable SQLite cannot keep its WAL index
// beside the database, so the index is opened as immutable: correct as long
// as nobody writes the cache meanwhile, which is what a read-only cache
// means.
func OpenReadOnly(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	idx := filepath.Join(abs, indexFile)
	if _, err := os.Stat(idx); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s has no %s (nothing has run with this cache; check --cache-dir or $REPRO_CACHE)", ErrNoCache, abs, indexFile)
		}
		return nil, fmt.Errorf("cache %s: %w", abs, err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("_busy_timeout", "30000")
	if syscall.Access(abs, 2 /* W_OK */) != nil {
		q.Set("immutable", "1")
	}
	db, err := sql.Open("sqlite3", "file:"+idx+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", abs, err)
	}
	c := &Store{dir: abs, db: db, readOnly: true}
	c.host, _ = os.Hostname()
	var v int
	if err := retryBusy(func() error { return db.QueryRow("PRAGMA user_version").Scan(&v) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("cache %s: %w", idx, err)
	}
	if v < 1 || v > schemaVersion {
		db.Close()
		return nil, fmt.Errorf("cache %s: index schema version %d, this repro reads 1 to %d", idx, v, schemaVersion)
	}
	return c, nil
}

// ReadOnly reports whether the store was opened with OpenReadOnly.
func (c *Store) ReadOnly() bool { return c.readOnly }

// retryBusy calls f until it does not fail with SQLITE_BUSY, for up to the
// busy timeout. The first statement on a new connection switches a fresh
// database to WAL, which needs a lock that SQLite does not wait for with the
// busy handler; two processes opening a new cache at the same moment can
// see it (seen: "database is locked" from the first query of the second).
func retryBusy(f func() error) error {
	deadline := time.Now().Add(30 * time.Second)
	delay := time.Millisecond
	for {
		err := f()
		var se sqlite3.Error
		if err == nil || !errors.As(err, &se) || se.Code != sqlite3.ErrBusy || time.Now().After(deadline) {
			return err
		}
		time.Sleep(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
}

func (c *Store) migrate() error {
	var v int
	if err := c.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v == schemaVersion {
		return nil
	}
	if v > schemaVersion {
		return fmt.Errorf("index schema version %d is newer than this repro (%d)", v, schemaVersion)
	}
	tx, err := c.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(schema); err != nil {
		return err
	}
	if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the index.
func (c *Store) Close() error {
	if c.db == nil {
		return nil
	}
	// Answers that cluster jobs published (requests/answers/) go into the
	// index once nobody uses the cache; an error leaves them for later.
	c.settleAnswers(context.Background(), false)
	return c.db.Close()
}

// Dir is the absolute path of the cache directory.
func (c *Store) Dir() string { return c.dir }

// ObjectPath is the directory of the object with that digest.
func (c *Store) ObjectPath(digest string) string {
	return filepath.Join(c.dir, objectsDir, digest[:2], digest)
}

// LogPath is the log file of the latest attempt at a key.
func (c *Store) LogPath(key string) string {
	return filepath.Join(c.dir, logsDir, key+".log")
}

// KeepLog moves an earlier attempt's log at path (logs/<key>.log) aside to
// logs/<key>.<time>.log, named by when it was last written, so that a new
// attempt does not overwrite the log of one that failed. It returns the
// new name, or "" when there was no log. gc removes kept logs as it does
// the logs of failed runs, once older than its cutoff.
func KeepLog(path string) (string, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	base := strings.TrimSuffix(path, ".log") + "." + fi.ModTime().UTC().Format("20060102T150405.000000000Z")
	kept := base + ".log"
	for i := 2; ; i++ {
		if _, err := os.Lstat(kept); errors.Is(err, os.ErrNotExist) {
			break
		}
		kept = fmt.Sprintf("%s-%d.log", base, i)
	}
	if err := os.Rename(path, kept); err != nil {
		return "", err
	}
	return kept, nil
}

// TempDir names a fresh directory under tmp/ for the outputs of an attempt
// at key (not created). Nothing is ever read from tmp/: a finished output is
// sealed and renamed into objects/ by PutObject; GC removes what is left.
func (c *Store) TempDir(key string) string {
	return filepath.Join(c.dir, tmpDir, key+"-"+randomSuffix())
}

// WorkDir is the directory a stage attempt at key may keep resumable state
// in (Env.Work): it survives a crash and is removed once the run is stored.
func (c *Store) WorkDir(key string) string {
	return filepath.Join(c.dir, workDir, key)
}

// Host is the host name recorded with every run.
func (c *Store) Host() string { return c.host }

// RunInfo is the provenance of one recorded stage run.
type RunInfo struct {
	Key          string
	Type         string
	Version      int
	NodeID       string // the node ID of the run that computed it
	Params       json.RawMessage
	Inputs       map[string]string // input port -> digest
	Outputs      map[string]registry.Artifact
	Seed         int64
	Seeded       bool
	Duration     time.Duration
	Device       string
	Backend      string
	ReproVersion string
	Host         string
	Partial      bool
	Time         time.Time
	Size         int64 // total bytes of the output objects
	Log          string
}

const runColumns = `key, stage_type, version, node_id, params, inputs, seed, seeded,
	duration_ns, device, backend, repro_version, host, partial, created_ns`

func scanRun(sc interface{ Scan(...any) error }) (*RunInfo, error) {
	var r RunInfo
	var params, inputs string
	var dur, created int64
	err := sc.Scan(&r.Key, &r.Type, &r.Version, &r.NodeID, &params, &inputs, &r.Seed, &r.Seeded,
		&dur, &r.Device, &r.Backend, &r.ReproVersion, &r.Host, &r.Partial, &created)
	if err != nil {
		return nil, err
	}
	r.Params = json.RawMessage(params)
	if err := json.Unmarshal([]byte(inputs), &r.Inputs); err != nil {
		return nil, fmt.Errorf("run %s: inputs column: %v", r.Key, err)
	}
	r.Duration = time.Duration(dur)
	r.Time = time.Unix(0, created)
	return &r, nil
}

// Lookup returns the recorded run with that key, with its output artifacts;
// ok is false when the key is not in the index.
func (c *Store) Lookup(ctx context.Context, key string) (info *RunInfo, ok bool, err error) {
	r, err := scanRun(c.db.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE key = ?", key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := c.fillOutputs(ctx, r); err != nil {
		return nil, false, err
	}
	return r, true, nil
}

func (c *Store) fillOutputs(ctx context.Context, r *RunInfo) error {
	rows, err := c.db.QueryContext(ctx, `SELECT o.port, o.kind, o.digest, COALESCE(b.size, 0)
		FROM outputs o LEFT JOIN objects b ON b.digest = o.digest WHERE o.key = ?`, r.Key)
	if err != nil {
		return err
	}
	defer rows.Close()
	r.Outputs = map[string]registry.Artifact{}
	r.Log = c.LogPath(r.Key)
	for rows.Next() {
		var port, kind, digest string
		var size int64
		if err := rows.Scan(&port, &kind, &digest, &size); err != nil {
			return err
		}
		r.Outputs[port] = registry.Artifact{Kind: registry.Kind(kind), Dir: c.ObjectPath(digest), Digest: digest}
		r.Size += size
	}
	return rows.Err()
}

// Outputs returns the output artifacts of a recorded run by port (nil when
// the key is not recorded): the hot path of a cached run, one indexed query.
func (c *Store) Outputs(ctx context.Context, key string) (map[string]registry.Artifact, error) {
	rows, err := c.db.QueryContext(ctx, "SELECT port, kind, digest FROM outputs WHERE key = ?", key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out map[string]registry.Artifact
	for rows.Next() {
		var port, kind, digest string
		if err := rows.Scan(&port, &kind, &digest); err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]registry.Artifact{}
		}
		out[port] = registry.Artifact{Kind: registry.Kind(kind), Dir: c.ObjectPath(digest), Digest: digest}
	}
	return out, rows.Err()
}

// Output is one sealed output (an object in the store) of a run to record.
type Output struct {
	Port, Kind, Digest string
	Size               int64
}

// putObject seals the directory src (fsync, digest) and renames it into
// the store. When an object with the same digest already exists, src is
// removed and the existing one is used: same digest, same content.
func (c *Store) PutObject(src string) (digest string, size int64, err error) {
	digest, size, err = sealDir(src)
	if err != nil {
		return "", 0, err
	}
	dst := c.ObjectPath(digest)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", 0, err
	}
	if err := os.Rename(src, dst); err != nil {
		if _, statErr := os.Stat(dst); statErr != nil {
			return "", 0, fmt.Errorf("storing artifact: %w", err)
		}
		// The same content is stored already -- unless that copy has been
		// damaged since: then it goes to quarantine and ours takes its
		// place.
		if verr := c.VerifyObject(digest); verr != nil {
			if _, qerr := c.Quarantine(context.Background(), digest, verr.Error()); qerr != nil {
				return "", 0, qerr
			}
			if err := os.Rename(src, dst); err != nil {
				return "", 0, fmt.Errorf("storing artifact: %w", err)
			}
			return digest, size, syncDir(filepath.Dir(dst))
		}
		if err := RemoveAll(src); err != nil {
			return "", 0, err
		}
		return digest, size, nil
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return "", 0, err
	}
	return digest, size, nil
}

// removeAll removes a tree whose files were made read-only by sealDir (as
// root or as the owner this is not needed for files, but directories we
// may have made read-only must be writable to be emptied).
func RemoveAll(p string) error {
	err := os.RemoveAll(p)
	if err == nil {
		return nil
	}
	filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(q, 0o755)
		}
		return nil
	})
	return os.RemoveAll(p)
}

// Run is everything one finished stage run writes to the index.
type Run struct {
	Key, Type, NodeID string
	Version           int
	Params            []byte            // canonical JSON
	Inputs            map[string]string // input port -> digest
	Seed              int64
	Seeded            bool
	Duration          time.Duration
	Device, Backend   string
	ReproVersion      string
	Partial           bool
	Outputs           []Output
	// Scope, when not "", also records the node's last-run record in that
	// scope, with LastInputs (which node and output each input came from).
	Scope      string
	LastInputs map[string]LastInput
	// Host is where the stage ran ("": this process's host). A cluster
	// job's run is recorded by the coordinator with the job's node.
	Host string
}

// record writes a finished run, its outputs, their objects and (when a
// scope is given) the node's last-run record in ONE transaction: a crash
// leaves all of it or none of it.
func (c *Store) Record(ctx context.Context, r *Run) error {
	if c.db == nil {
		return ErrNoIndex
	}
	inputs, _ := json.Marshal(nonNil(r.Inputs))
	now := time.Now().UnixNano()
	host := r.Host
	if host == "" {
		host = c.host
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = tx.Exec(`INSERT OR REPLACE INTO runs (`+runColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.Key, r.Type, r.Version, r.NodeID, string(r.Params), string(inputs), r.Seed, r.Seeded,
		int64(r.Duration), r.Device, r.Backend, r.ReproVersion, host, r.Partial, now)
	if err != nil {
		return err
	}
	for _, o := range r.Outputs {
		if _, err := tx.Exec(`INSERT OR REPLACE INTO outputs (key, port, kind, digest) VALUES (?,?,?,?)`,
			r.Key, o.Port, o.Kind, o.Digest); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT OR IGNORE INTO objects (digest, size, created_ns) VALUES (?,?,?)`,
			o.Digest, o.Size, now); err != nil {
			return err
		}
	}
	if r.Scope != "" {
		lr := LastRun{NodeID: r.NodeID, Key: r.Key, Type: r.Type, Version: r.Version,
			Params: r.Params, Inputs: r.LastInputs, Seed: r.Seed, Seeded: r.Seeded}
		if err := putLastRun(tx, r.Scope, &lr, now); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validDigest reports whether s looks like a digest or key (64 hex digits),
// so that names read from the file system are never trusted blindly.
func validDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// quarantineDir holds objects found corrupt, moved out of objects/ so that
// nothing can be served from them and a recomputed copy can take their
// place; GC removes them after DefaultKeepNewer.
const quarantineDir = "quarantine"

// CorruptError says that an object's content no longer matches its digest.
type CorruptError struct {
	Digest string
	Path   string
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("object %s is corrupt: %s", e.Path, e.Reason)
}

// VerifyObject re-hashes the object with that digest: nil when its content
// matches, a *CorruptError when not (a file changed, added or removed), or
// another error when it cannot be read at all.
func (c *Store) VerifyObject(digest string) error {
	p := c.ObjectPath(digest)
	got, _, err := DigestDir(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if _, statErr := os.Stat(p); statErr != nil {
			return &CorruptError{Digest: digest, Path: p, Reason: "missing from the store"}
		}
		return &CorruptError{Digest: digest, Path: p, Reason: "a file is missing: " + err.Error()}
	case err != nil:
		return &CorruptError{Digest: digest, Path: p, Reason: "cannot be read: " + err.Error()}
	case got != digest:
		return &CorruptError{Digest: digest, Path: p, Reason: "content does not match its digest (now " + got + ")"}
	}
	return nil
}

// Quarantine moves a corrupt object out of the store (to quarantine/) and
// forgets every run that produced it, in that order: once the object is
// gone from objects/ nothing can be served from it, and an index row left
// by a crash in between points at a missing object, which counts as a
// cache miss. The next run of those stages recomputes the object. It
// returns the keys of the runs forgotten.
func (c *Store) Quarantine(ctx context.Context, digest, reason string) ([]string, error) {
	if !validDigest(digest) {
		return nil, fmt.Errorf("quarantine: %q is not a digest", digest)
	}
	src := c.ObjectPath(digest)
	dst := filepath.Join(c.dir, quarantineDir, fmt.Sprintf("%s.%d", digest, time.Now().UnixNano()))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, err
	}
	if err := os.Rename(src, dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("quarantine %s: %w", src, err)
	}
	_ = os.WriteFile(dst+".why", []byte(reason+"\n"), 0o644)
	if c.db == nil {
		// A job without the index: the coordinator finds the object
		// missing, which is a cache miss, and forgets the runs then.
		return nil, nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.Query("SELECT DISTINCT key FROM outputs WHERE digest = ?", digest)
	if err != nil {
		return nil, err
	}
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return nil, err
		}
		keys = append(keys, k)
	}
	rows.Close()
	for _, k := range keys {
		if _, err := tx.Exec("DELETE FROM outputs WHERE key = ?", k); err != nil {
			return nil, err
		}
		if _, err := tx.Exec("DELETE FROM runs WHERE key = ?", k); err != nil {
			return nil, err
		}
	}
	if _, err := tx.Exec("DELETE FROM objects WHERE digest = ?", digest); err != nil {
		return nil, err
	}
	return keys, tx.Commit()
}
