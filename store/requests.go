package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"repro/registry"
)

// The request cache: language-model answers by request key, in the index
// (index.db) beside the stage runs, in a table of their own.
//
// Stage keys and request keys are different things: a stage re-runs when
// its parameters or inputs change, yet every request it repeats is found
// here. Each answer is committed in its own transaction as it arrives (WAL,
// synchronous=NORMAL: durable against a process crash, see Open), so a
// kill -9 loses no answer that was stored. GC never touches the table;
// DropRequests is the only way answers leave it.
//
// Stages reach the table through registry.Env.Requests, an interface the
// executor fills (runner.Local: this table). When stages run in other
// processes (a cluster executor) and only the coordinating process may
// write the index, the executor can hand them a journal instead -- answers
// appended to a file beside the job, merged into this table by the
// coordinator with PutRequest -- without any stage changing.
const requestsSchema = `
CREATE TABLE IF NOT EXISTS llm_requests ` + requestsColumns + `;
CREATE INDEX IF NOT EXISTS llm_requests_model ON llm_requests(provider, model);
`

// requestsColumns is the request table's columns (also those of a
// snapshot, see snapshot.go).
const requestsColumns = `(
	key               TEXT PRIMARY KEY,
	provider          TEXT NOT NULL,
	model             TEXT NOT NULL,
	request           TEXT NOT NULL,
	response          TEXT NOT NULL,
	prompt_tokens     INTEGER NOT NULL,
	completion_tokens INTEGER NOT NULL,
	duration_ns       INTEGER NOT NULL,
	created_ns        INTEGER NOT NULL
)`

// insertRequest stores one answer, keeping the first of a key.
const insertRequest = `INSERT OR IGNORE INTO llm_requests
	(key, provider, model, request, response, prompt_tokens, completion_tokens, duration_ns, created_ns)
	VALUES (?,?,?,?,?,?,?,?,?)`

// requestStore is the registry.RequestStore of a cache.
type requestStore struct {
	db *sql.DB
}

// Requests returns the cache's request store, creating its table when the
// index does not have it yet. On a store opened read-only nothing is
// created: without the table, every lookup finds nothing, and storing is
// an error.
func (c *Store) Requests() (registry.RequestStore, error) {
	if c.db == nil {
		return nil, ErrNoIndex
	}
	if c.readOnly {
		ok, err := c.hasRequests()
		if err != nil {
			return nil, fmt.Errorf("request cache in %s: %w", c.dir, err)
		}
		if !ok {
			return noRequests{}, nil
		}
		return &requestStore{db: c.db}, nil
	}
	if err := retryBusy(func() error { _, err := c.db.Exec(requestsSchema); return err }); err != nil {
		return nil, fmt.Errorf("request cache in %s: %w", c.dir, err)
	}
	return &requestStore{db: c.db}, nil
}

func (c *Store) hasRequests() (bool, error) {
	var n int
	err := c.db.QueryRow("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'llm_requests'").Scan(&n)
	return n > 0, err
}

// noRequests is the request store of a read-only cache that has never
// stored an answer.
type noRequests struct{}

func (noRequests) LookupRequest(context.Context, string) ([]byte, bool, error) {
	return nil, false, nil
}
func (noRequests) PutRequest(context.Context, registry.StoredRequest) error {
	return fmt.Errorf("the cache is open read-only")
}

func (s *requestStore) LookupRequest(ctx context.Context, key string) ([]byte, bool, error) {
	var resp string
	err := s.db.QueryRowContext(ctx, "SELECT response FROM llm_requests WHERE key = ?", key).Scan(&resp)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return []byte(resp), true, nil
}

func (s *requestStore) PutRequest(ctx context.Context, r registry.StoredRequest) error {
	if !validDigest(r.Key) {
		return fmt.Errorf("request key %q is not 64 hex digits", r.Key)
	}
	_, err := s.db.ExecContext(ctx, insertRequest,
		r.Key, r.Provider, r.Model, string(r.Request), string(r.Response), r.PromptTokens, r.CompletionTokens,
		int64(r.Duration), time.Now().UnixNano())
	return err
}

// RequestStats summarises the stored answers of one provider and model.
type RequestStats struct {
	Provider, Model                string
	Requests                       int
	PromptTokens, CompletionTokens int64
	Duration                       time.Duration // summed time waiting for the answers
	First, Last                    time.Time
}

// RequestStats returns per provider and model the number of stored
// answers and their tokens, sorted by provider and model.
func (c *Store) RequestStats(ctx context.Context) ([]RequestStats, error) {
	if ok, err := c.hasRequests(); err != nil || !ok {
		return nil, err
	}
	rows, err := c.db.QueryContext(ctx, `SELECT provider, model, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens),
		SUM(duration_ns), MIN(created_ns), MAX(created_ns) FROM llm_requests GROUP BY provider, model ORDER BY provider, model`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RequestStats
	for rows.Next() {
		var s RequestStats
		var dur, first, last int64
		if err := rows.Scan(&s.Provider, &s.Model, &s.Requests, &s.PromptTokens, &s.CompletionTokens, &dur, &first, &last); err != nil {
			return nil, err
		}
		s.Duration, s.First, s.Last = time.Duration(dur), time.Unix(0, first), time.Unix(0, last)
		out = append(out, s)
	}
	return out, rows.Err()
}

// DropRequests deletes stored answers -- those of one model when model is
// not "" (of one provider when provider is not ""), else all -- and says how
// many. Nothing else ever deletes them: dropped answers are paid again.
func (c *Store) DropRequests(ctx context.Context, provider, model string) (int, error) {
	if _, err := c.Requests(); err != nil {
		return 0, err
	}
	q := "DELETE FROM llm_requests WHERE 1 = 1"
	var args []any
	if provider != "" {
		q += " AND provider = ?"
		args = append(args, provider)
	}
	if model != "" {
		q += " AND model = ?"
		args = append(args, model)
	}
	res, err := c.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// salvageRequests copies into this index the answers that the index file
// at path (one Repair moved aside) still yields, so that replacing a
// damaged index does not throw away what was paid for. It reads as far as
// the damage allows and returns how many it copied.
func (c *Store) salvageRequests(ctx context.Context, path string) (int, error) {
	src, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer src.Close()
	rows, err := src.QueryContext(ctx, `SELECT key, provider, model, request, response, prompt_tokens,
		completion_tokens, duration_ns, created_ns FROM llm_requests`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	if _, err := c.Requests(); err != nil {
		return 0, err
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	n := 0
	for rows.Next() {
		var key, provider, model, req, resp string
		var pt, ct, dur, created int64
		if err := rows.Scan(&key, &provider, &model, &req, &resp, &pt, &ct, &dur, &created); err != nil {
			break
		}
		if !validDigest(key) {
			continue
		}
		if _, err := tx.Exec(insertRequest, key, provider, model, req, resp, pt, ct, dur, created); err != nil {
			return 0, err
		}
		n++
	}
	// rows.Err() is the damage: what was read before it is kept.
	return n, tx.Commit()
}
