package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
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
CREATE TABLE IF NOT EXISTS llm_claims (
	key        TEXT PRIMARY KEY,
	owner      TEXT NOT NULL,
	host       TEXT NOT NULL,
	pid        INTEGER NOT NULL,
	expires_ns INTEGER NOT NULL
);
`

// requestsColumns is the request table's columns (also those of a
// snapshot, see snapshot.go). failure, stage and stage_key came later: an
// index from before them gains them (migrateRequests), appended in this
// order.
const requestsColumns = `(
	key               TEXT PRIMARY KEY,
	provider          TEXT NOT NULL,
	model             TEXT NOT NULL,
	request           TEXT NOT NULL,
	response          TEXT NOT NULL,
	prompt_tokens     INTEGER NOT NULL,
	completion_tokens INTEGER NOT NULL,
	duration_ns       INTEGER NOT NULL,
	created_ns        INTEGER NOT NULL,
	failure           TEXT NOT NULL DEFAULT '',
	stage             TEXT NOT NULL DEFAULT '',
	stage_key         TEXT NOT NULL DEFAULT ''
)`

// addedRequestColumns are the columns added to llm_requests after its
// first version, with their definitions, in order.
var addedRequestColumns = [][2]string{
	{"failure", "TEXT NOT NULL DEFAULT ''"},
	{"stage", "TEXT NOT NULL DEFAULT ''"},
	{"stage_key", "TEXT NOT NULL DEFAULT ''"},
}

// requestFields lists the columns in the order insertRequest binds them.
const requestFields = `key, provider, model, request, response, prompt_tokens, completion_tokens, duration_ns, created_ns,
	failure, stage, stage_key`

// insertRequest stores one answer, keeping the first of a key.
const insertRequest = `INSERT OR IGNORE INTO llm_requests (` + requestFields + `) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`

// requestStore is the registry.RequestStore of a cache; on a writable
// index it also claims requests in flight (registry.RequestClaimer).
type requestStore struct {
	db     *sql.DB
	claims *claims // nil: read-only, nothing is claimed
	// shared are the file claims and answers that cluster jobs, which
	// cannot open the index, see and use (shared.go); nil with claims.
	shared *SharedRequests
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
	if err := c.migrateRequests(); err != nil {
		return nil, fmt.Errorf("request cache in %s: %w", c.dir, err)
	}
	return &requestStore{db: c.db, claims: newClaims(c.db, c.host), shared: c.SharedRequests()}, nil
}

// migrateRequests creates the request tables, and adds to an index made
// before them the columns added since.
func (c *Store) migrateRequests() error {
	return retryBusy(func() error {
		if _, err := c.db.Exec(requestsSchema); err != nil {
			return err
		}
		have, err := columnsOf(c.db, "main", "llm_requests")
		if err != nil {
			return err
		}
		for _, col := range addedRequestColumns {
			if have[col[0]] {
				continue
			}
			// Another process may add it between the look and the ALTER.
			if _, err := c.db.Exec("ALTER TABLE llm_requests ADD COLUMN " + col[0] + " " + col[1]); err != nil &&
				!strings.Contains(err.Error(), "duplicate column") {
				return err
			}
		}
		return nil
	})
}

// columnsOf names the columns of a table.
func columnsOf(q interface {
	Query(string, ...any) (*sql.Rows, error)
}, schema, table string) (map[string]bool, error) {
	rows, err := q.Query("SELECT name FROM pragma_table_info(?, ?)", table, schema)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[n] = true
	}
	return out, rows.Err()
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
		if s.shared != nil {
			// Answered by a cluster job, whose journal is not merged yet.
			return s.shared.Answer(key)
		}
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
	if _, err := s.db.ExecContext(ctx, insertRequest, requestArgs(r, time.Now().UnixNano())...); err != nil {
		return err
	}
	if s.shared != nil {
		// A cluster job may be waiting on this run's claim: it reads the
		// answer from a file, not the index.
		return s.shared.PutAnswer(r)
	}
	return nil
}

func requestArgs(r registry.StoredRequest, created int64) []any {
	return []any{r.Key, r.Provider, r.Model, string(r.Request), string(r.Response), r.PromptTokens, r.CompletionTokens,
		int64(r.Duration), created, r.Failure, r.Stage, r.StageKey}
}

// ClaimRequest implements registry.RequestClaimer (see claims).
func (s *requestStore) ClaimRequest(ctx context.Context, key string) (bool, error) {
	if s.claims == nil {
		return true, nil
	}
	ok, err := s.claims.claim(ctx, key)
	if err != nil || !ok {
		return ok, err
	}
	// The file claim too, where cluster jobs see it (and this run sees
	// theirs).
	ok, err = s.shared.Claim(ctx, key)
	if err != nil || !ok {
		return false, errors.Join(err, s.claims.release(context.WithoutCancel(ctx), key))
	}
	return true, nil
}

// ReleaseRequest implements registry.RequestClaimer.
func (s *requestStore) ReleaseRequest(ctx context.Context, key string) error {
	if s.claims == nil {
		return nil
	}
	return errors.Join(s.shared.Release(ctx, key), s.claims.release(ctx, key))
}

// RequestStats summarises the stored answers of one provider and model.
type RequestStats struct {
	Provider, Model                string
	Requests                       int
	Failures                       int // of Requests, answers the stage could not parse
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
	fail := "0"
	if ok, err := c.hasRequestColumn("failure"); err != nil {
		return nil, err
	} else if ok {
		fail = "SUM(failure != '')"
	}
	rows, err := c.db.QueryContext(ctx, `SELECT provider, model, COUNT(*), `+fail+`, SUM(prompt_tokens), SUM(completion_tokens),
		SUM(duration_ns), MIN(created_ns), MAX(created_ns) FROM llm_requests GROUP BY provider, model ORDER BY provider, model`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RequestStats
	for rows.Next() {
		var s RequestStats
		var dur, first, last int64
		if err := rows.Scan(&s.Provider, &s.Model, &s.Requests, &s.Failures, &s.PromptTokens, &s.CompletionTokens, &dur, &first, &last); err != nil {
			return nil, err
		}
		s.Duration, s.First, s.Last = time.Duration(dur), time.Unix(0, first), time.Unix(0, last)
		out = append(out, s)
	}
	return out, rows.Err()
}

// hasRequestColumn reports whether the request table has a column (a
// read-only index from before it was added does not).
func (c *Store) hasRequestColumn(name string) (bool, error) {
	cols, err := columnsOf(c.db, "main", "llm_requests")
	return cols[name], err
}

// RequestFilter selects stored answers. Every field set narrows; the zero
// filter selects all.
type RequestFilter struct {
	Provider, Model string
	// Stage is a stage's node ID, or the first 8 or more hex digits of its
	// stage key: the answers that stage run stored.
	Stage string
	// Key is a request key or its first 8 or more hex digits.
	Key string
	// Failed selects only the answers recorded as failures.
	Failed bool
}

func (f RequestFilter) where() (string, []any, error) {
	q := "1 = 1"
	var args []any
	if f.Provider != "" {
		q += " AND provider = ?"
		args = append(args, f.Provider)
	}
	if f.Model != "" {
		q += " AND model = ?"
		args = append(args, f.Model)
	}
	if f.Stage != "" {
		if len(f.Stage) >= 8 && strings.Trim(f.Stage, "0123456789abcdef") == "" {
			q += " AND (stage = ? OR substr(stage_key, 1, ?) = ?)"
			args = append(args, f.Stage, len(f.Stage), f.Stage)
		} else {
			q += " AND stage = ?"
			args = append(args, f.Stage)
		}
	}
	if f.Key != "" {
		if len(f.Key) < 8 || len(f.Key) > 64 || strings.Trim(f.Key, "0123456789abcdef") != "" {
			return "", nil, fmt.Errorf("request key %q: give 8 to 64 hex digits", f.Key)
		}
		q += " AND substr(key, 1, ?) = ?"
		args = append(args, len(f.Key), f.Key)
	}
	if f.Failed {
		q += " AND failure != ''"
	}
	return q, args, nil
}

// DropRequests deletes the stored answers f selects and says how many.
// Nothing else ever deletes them: dropped answers are paid again.
func (c *Store) DropRequests(ctx context.Context, f RequestFilter) (int, error) {
	if _, err := c.Requests(); err != nil {
		return 0, err
	}
	where, args, err := f.where()
	if err != nil {
		return 0, err
	}
	// Their published copies go too, or settling them would bring the
	// dropped answers back (shared.go).
	keys, err := c.requestKeys(ctx, where, args)
	if err != nil {
		return 0, err
	}
	res, err := c.db.ExecContext(ctx, "DELETE FROM llm_requests WHERE "+where, args...)
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		if err := os.Remove(c.SharedRequests().answerPath(k)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// requestKeys lists the keys of the stored answers a filter selects.
func (c *Store) requestKeys(ctx context.Context, where string, args []any) ([]string, error) {
	rows, err := c.db.QueryContext(ctx, "SELECT key FROM llm_requests WHERE "+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		if validDigest(k) {
			keys = append(keys, k)
		}
	}
	return keys, rows.Err()
}

// RequestFailure is one stored answer recorded as a failure.
type RequestFailure struct {
	Key, Provider, Model string
	Stage, StageKey      string
	Failure              string
	Answer               string // the unusable answer's content
	Created              time.Time
}

// RequestFailures lists the stored failures f selects (f.Failed implied),
// oldest first.
func (c *Store) RequestFailures(ctx context.Context, f RequestFilter) ([]RequestFailure, error) {
	if ok, err := c.hasRequests(); err != nil || !ok {
		return nil, err
	}
	if ok, err := c.hasRequestColumn("failure"); err != nil || !ok {
		return nil, err
	}
	f.Failed = true
	where, args, err := f.where()
	if err != nil {
		return nil, err
	}
	rows, err := c.db.QueryContext(ctx, `SELECT key, provider, model, stage, stage_key, failure, response, created_ns
		FROM llm_requests WHERE `+where+` ORDER BY created_ns, key`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RequestFailure
	for rows.Next() {
		var r RequestFailure
		var resp string
		var created int64
		if err := rows.Scan(&r.Key, &r.Provider, &r.Model, &r.Stage, &r.StageKey, &r.Failure, &resp, &created); err != nil {
			return nil, err
		}
		var body struct {
			Content string `json:"content"`
		}
		if json.Unmarshal([]byte(resp), &body) == nil {
			r.Answer = body.Content
		}
		r.Created = time.Unix(0, created)
		out = append(out, r)
	}
	return out, rows.Err()
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
	// An index from before the added columns lacks them: read it with
	// their defaults.
	cols := "key, provider, model, request, response, prompt_tokens, completion_tokens, duration_ns, created_ns"
	if have, err := columnsOf(src, "main", "llm_requests"); err == nil && have["failure"] && have["stage"] && have["stage_key"] {
		cols += ", failure, stage, stage_key"
	} else {
		cols += ", '', '', ''"
	}
	rows, err := src.QueryContext(ctx, "SELECT "+cols+" FROM llm_requests")
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
		var key, provider, model, req, resp, failure, stage, stageKey string
		var pt, ct, dur, created int64
		if err := rows.Scan(&key, &provider, &model, &req, &resp, &pt, &ct, &dur, &created, &failure, &stage, &stageKey); err != nil {
			break
		}
		if !validDigest(key) {
			continue
		}
		if _, err := tx.Exec(insertRequest, key, provider, model, req, resp, pt, ct, dur, created, failure, stage, stageKey); err != nil {
			return 0, err
		}
		n++
	}
	// rows.Err() is the damage: what was read before it is kept.
	return n, tx.Commit()
}
