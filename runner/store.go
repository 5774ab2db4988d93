package runner

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
	"time"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" database/sql driver
	"repro/registry"
)

// Cache is an open cache directory: the content-addressed object store, the
// SQLite index of stage runs, per-key locks, logs and work directories.
// Several goroutines and several processes may use one cache at once.
type Cache struct {
	dir  string
	db   *sql.DB
	host string
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

// schemaVersion is stored in PRAGMA user_version.
const schemaVersion = 1

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
`

// Open opens the cache in dir, creating the directory and the index when
// they do not exist.
func Open(dir string) (*Cache, error) {
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
	dsn := "file:" + filepath.Join(abs, indexFile) + "?" + q.Encode()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", abs, err)
	}
	c := &Cache{dir: abs, db: db}
	c.host, _ = os.Hostname()
	if err := c.migrate(); err != nil {
		db.Close()
		return nil, fmt.Errorf("cache %s: %w", filepath.Join(abs, indexFile), err)
	}
	return c, nil
}

func (c *Cache) migrate() error {
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
func (c *Cache) Close() error { return c.db.Close() }

// Dir is the absolute path of the cache directory.
func (c *Cache) Dir() string { return c.dir }

func (c *Cache) objectPath(digest string) string {
	return filepath.Join(c.dir, objectsDir, digest[:2], digest)
}

func (c *Cache) logPath(key string) string {
	return filepath.Join(c.dir, logsDir, key+".log")
}

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
func (c *Cache) Lookup(ctx context.Context, key string) (info *RunInfo, ok bool, err error) {
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

func (c *Cache) fillOutputs(ctx context.Context, r *RunInfo) error {
	rows, err := c.db.QueryContext(ctx, `SELECT o.port, o.kind, o.digest, COALESCE(b.size, 0)
		FROM outputs o LEFT JOIN objects b ON b.digest = o.digest WHERE o.key = ?`, r.Key)
	if err != nil {
		return err
	}
	defer rows.Close()
	r.Outputs = map[string]registry.Artifact{}
	r.Log = c.logPath(r.Key)
	for rows.Next() {
		var port, kind, digest string
		var size int64
		if err := rows.Scan(&port, &kind, &digest, &size); err != nil {
			return err
		}
		r.Outputs[port] = registry.Artifact{Kind: registry.Kind(kind), Dir: c.objectPath(digest), Digest: digest}
		r.Size += size
	}
	return rows.Err()
}

// outputDigests returns port -> digest of a recorded run (nil when the key is
// not recorded): the hot path of a cached run, one indexed query.
func (c *Cache) outputDigests(ctx context.Context, key string) (map[string]registry.Artifact, error) {
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
		out[port] = registry.Artifact{Kind: registry.Kind(kind), Dir: c.objectPath(digest), Digest: digest}
	}
	return out, rows.Err()
}

// storedOutput is one sealed output waiting to be recorded.
type storedOutput struct {
	port, kind, digest string
	size               int64
}

// putObject seals the directory src (fsync, digest) and renames it into
// the store. When an object with the same digest already exists, src is
// removed and the existing one is used: same digest, same content.
func (c *Cache) putObject(src string) (digest string, size int64, err error) {
	digest, size, err = sealDir(src)
	if err != nil {
		return "", 0, err
	}
	dst := c.objectPath(digest)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", 0, err
	}
	if err := os.Rename(src, dst); err != nil {
		if _, statErr := os.Stat(dst); statErr != nil {
			return "", 0, fmt.Errorf("storing artifact: %w", err)
		}
		// Another run stored the same content first.
		if err := removeAll(src); err != nil {
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
func removeAll(p string) error {
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

// runRecord is everything one finished stage run writes to the index.
type runRecord struct {
	key, stageType, nodeID string
	version                int
	params                 []byte
	inputs                 map[string]string
	seed                   int64
	seeded                 bool
	duration               time.Duration
	device, backend        string
	reproVersion           string
	partial                bool
	outputs                []storedOutput
	scope                  string
	lastInputs             map[string]lastInput
}

// record writes a finished run, its outputs, their objects and (when a
// scope is given) the node's last-run record in ONE transaction: a crash
// leaves all of it or none of it.
func (c *Cache) record(ctx context.Context, r *runRecord) error {
	inputs, _ := json.Marshal(nonNil(r.inputs))
	now := time.Now().UnixNano()
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = tx.Exec(`INSERT OR REPLACE INTO runs (`+runColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.key, r.stageType, r.version, r.nodeID, string(r.params), string(inputs), r.seed, r.seeded,
		int64(r.duration), r.device, r.backend, r.reproVersion, c.host, r.partial, now)
	if err != nil {
		return err
	}
	for _, o := range r.outputs {
		if _, err := tx.Exec(`INSERT OR REPLACE INTO outputs (key, port, kind, digest) VALUES (?,?,?,?)`,
			r.key, o.port, o.kind, o.digest); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT OR IGNORE INTO objects (digest, size, created_ns) VALUES (?,?,?)`,
			o.digest, o.size, now); err != nil {
			return err
		}
	}
	if r.scope != "" {
		lr := lastRun{NodeID: r.nodeID, Key: r.key, Type: r.stageType, Version: r.version,
			Params: r.params, Inputs: r.lastInputs, Seed: r.seed, Seeded: r.seeded}
		if err := putLastRun(tx, r.scope, &lr, now); err != nil {
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
