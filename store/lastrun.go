package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// LastInput is one input of a node as it was when the node last ran.
type LastInput struct {
	Node   string `json:"node"`
	Output string `json:"output"`
	Digest string `json:"digest"`
}

// LastRun is what a scope remembers of a node's latest finished (or found
// cached) run, to explain later why the node is stale.
type LastRun struct {
	NodeID  string
	Key     string
	Type    string
	Version int
	Params  json.RawMessage
	Inputs  map[string]LastInput
	Seed    int64
	Seeded  bool
}

type execer interface {
	Exec(query string, args ...any) (sql.Result, error)
}

func putLastRun(tx execer, scope string, r *LastRun, now int64) error {
	inputs, _ := json.Marshal(r.Inputs)
	if r.Inputs == nil {
		inputs = []byte("{}")
	}
	_, err := tx.Exec(`INSERT OR REPLACE INTO last_runs
		(scope, node_id, key, stage_type, version, params, inputs, seed, seeded, updated_ns)
		VALUES (?,?,?,?,?,?,?,?,?,?)`,
		scope, r.NodeID, r.Key, r.Type, r.Version, string(r.Params), string(inputs), r.Seed, r.Seeded, now)
	return err
}

// putLastRuns writes several records in one transaction and, when keep is
// not nil, forgets the scope's records of nodes not in keep (nodes removed
// from the experiment), so they no longer keep objects alive in GC.
func (c *Store) PutLastRuns(ctx context.Context, scope string, rs []*LastRun, keep []string) error {
	if scope == "" || (len(rs) == 0 && keep == nil) {
		return nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := time.Now().UnixNano()
	for _, r := range rs {
		if err := putLastRun(tx, scope, r, now); err != nil {
			return err
		}
	}
	if keep != nil {
		ids, _ := json.Marshal(keep)
		if _, err := tx.Exec(`DELETE FROM last_runs WHERE scope = ? AND node_id NOT IN (SELECT value FROM json_each(?))`,
			scope, string(ids)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// lastRuns returns the scope's records by node ID.
func (c *Store) LastRuns(ctx context.Context, scope string) (map[string]*LastRun, error) {
	out := map[string]*LastRun{}
	if scope == "" {
		return out, nil
	}
	rows, err := c.db.QueryContext(ctx, `SELECT node_id, key, stage_type, version, params, inputs, seed, seeded
		FROM last_runs WHERE scope = ?`, scope)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r LastRun
		var params, inputs string
		if err := rows.Scan(&r.NodeID, &r.Key, &r.Type, &r.Version, &params, &inputs, &r.Seed, &r.Seeded); err != nil {
			return nil, err
		}
		r.Params = json.RawMessage(params)
		if err := json.Unmarshal([]byte(inputs), &r.Inputs); err != nil {
			return nil, fmt.Errorf("last run of %s in scope %q: %v", r.NodeID, scope, err)
		}
		out[r.NodeID] = &r
	}
	return out, rows.Err()
}

// ScopeInfo summarises one scope's state: how many nodes it records, how
// many reports it saved, and when it last changed.
type ScopeInfo struct {
	Scope   string
	Nodes   int
	Reports int
	Updated time.Time
}

// Scopes lists every scope with recorded state, most recently updated
// first.
func (c *Store) Scopes(ctx context.Context) ([]ScopeInfo, error) {
	rows, err := c.db.QueryContext(ctx, `
		SELECT scope, SUM(nodes), SUM(reports), MAX(updated) FROM (
			SELECT scope, COUNT(*) AS nodes, 0 AS reports, MAX(updated_ns) AS updated FROM last_runs GROUP BY scope
			UNION ALL
			SELECT scope, 0, COUNT(*), MAX(created_ns) FROM reports GROUP BY scope
		) GROUP BY scope ORDER BY MAX(updated) DESC, scope`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ScopeInfo
	for rows.Next() {
		var s ScopeInfo
		var ns int64
		if err := rows.Scan(&s.Scope, &s.Nodes, &s.Reports, &ns); err != nil {
			return nil, err
		}
		s.Updated = time.Unix(0, ns)
		out = append(out, s)
	}
	return out, rows.Err()
}

// ForgetScope drops a scope's last-run records and saved reports, so GC no
// longer keeps what only it referenced. It returns how many records and
// reports it dropped.
func (c *Store) ForgetScope(ctx context.Context, scope string) (records, reports int64, err error) {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback()
	r1, err := tx.Exec("DELETE FROM last_runs WHERE scope = ?", scope)
	if err != nil {
		return 0, 0, err
	}
	r2, err := tx.Exec("DELETE FROM reports WHERE scope = ?", scope)
	if err != nil {
		return 0, 0, err
	}
	records, _ = r1.RowsAffected()
	reports, _ = r2.RowsAffected()
	return records, reports, tx.Commit()
}
