package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"repro/registry"
)

// A stage that runs as a cluster job must not open the index (SQLite over a
// network file system is unsafe, and only the coordinator writes it), yet a
// stage that sends language-model requests must find the answers already
// paid for. The coordinator therefore hands such a job a snapshot: a
// separate SQLite file holding only the request table, written once before
// the job is submitted and never changed after (so the job opens it as
// immutable, which needs no locking). New answers go to a journal beside
// the job (package runner/remote) that the coordinator merges with
// PutRequests.

// SnapshotRequests writes every stored language-model answer into a new
// SQLite file at path (replacing it atomically) and returns how many.
func (c *Store) SnapshotRequests(ctx context.Context, path string) (int, error) {
	if _, err := c.Requests(); err != nil { // creates the table if need be
		return 0, err
	}
	tmp := path + ".tmp-" + randomSuffix()
	defer os.Remove(tmp)
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS snap", tmp); err != nil {
		return 0, fmt.Errorf("request snapshot %s: %w", path, err)
	}
	n, err := func() (int, error) {
		defer conn.ExecContext(context.WithoutCancel(ctx), "DETACH DATABASE snap")
		if _, err := conn.ExecContext(ctx, snapshotSchema); err != nil {
			return 0, err
		}
		// Columns by name: an index that gained columns by migration has
		// them in the same order, but naming them does not depend on it.
		res, err := conn.ExecContext(ctx, `INSERT INTO snap.llm_requests (`+requestFields+`) SELECT `+requestFields+` FROM main.llm_requests`)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return int(n), err
	}()
	if err != nil {
		return 0, fmt.Errorf("request snapshot %s: %w", path, err)
	}
	if err := syncFile(tmp); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, err
	}
	return n, syncDir(filepath.Dir(path))
}

// snapshotSchema is the request table in the attached snapshot (claims are
// not copied: a job that reads a snapshot writes a journal, not the index).
const snapshotSchema = "CREATE TABLE snap.llm_requests " + requestsColumns

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// RequestSnapshot is a read-only request store over a file written by
// SnapshotRequests.
type RequestSnapshot struct {
	requestStore
}

// OpenRequestSnapshot opens a snapshot that SnapshotRequests wrote. It is
// opened immutable: nothing writes it after it is made, and no lock or
// shared memory is needed, so it is safe on a network file system.
func OpenRequestSnapshot(path string) (*RequestSnapshot, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("request snapshot: %w", err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		return nil, fmt.Errorf("request snapshot %s: %w", path, err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'llm_requests'").Scan(&n); err != nil || n == 0 {
		db.Close()
		if err == nil {
			err = fmt.Errorf("no llm_requests table")
		}
		return nil, fmt.Errorf("request snapshot %s: %w", path, err)
	}
	return &RequestSnapshot{requestStore{db: db}}, nil
}

// PutRequest refuses: a snapshot is never written.
func (s *RequestSnapshot) PutRequest(context.Context, registry.StoredRequest) error {
	return fmt.Errorf("a request snapshot is read-only")
}

// Close closes the snapshot.
func (s *RequestSnapshot) Close() error { return s.db.Close() }

// PutRequests stores answers in one transaction -- the coordinator merging
// a cluster job's journal -- keeping the first answer of a key already
// stored, and returns how many were new. Merging the same journal twice
// (a coordinator that crashed while merging) stores nothing twice.
func (c *Store) PutRequests(ctx context.Context, rs []registry.StoredRequest) (int, error) {
	if len(rs) == 0 {
		return 0, nil
	}
	if _, err := c.Requests(); err != nil {
		return 0, err
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	now := time.Now().UnixNano()
	added := 0
	for _, r := range rs {
		if !validDigest(r.Key) {
			return 0, fmt.Errorf("request key %q is not 64 hex digits", r.Key)
		}
		res, err := tx.ExecContext(ctx, insertRequest, requestArgs(r, now)...)
		if err != nil {
			return 0, err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			added++
		}
	}
	return added, tx.Commit()
}
