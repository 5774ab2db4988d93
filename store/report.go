package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrNoReport is returned by LatestReport when the scope has none.
var ErrNoReport = errors.New("no report recorded")

// SaveReport stores a report (a JSON document the CLI produces after a run)
// as the scope's latest. Older reports are kept, for history.
func (c *Store) SaveReport(ctx context.Context, scope string, report []byte) error {
	if !json.Valid(report) {
		return fmt.Errorf("report for %q is not valid JSON", scope)
	}
	_, err := c.db.ExecContext(ctx, "INSERT INTO reports (scope, created_ns, body) VALUES (?,?,?)",
		scope, time.Now().UnixNano(), string(report))
	return err
}

// LatestReport returns the scope's most recent report and when it was
// saved, or ErrNoReport.
func (c *Store) LatestReport(ctx context.Context, scope string) ([]byte, time.Time, error) {
	var body string
	var ns int64
	err := c.db.QueryRowContext(ctx, "SELECT body, created_ns FROM reports WHERE scope = ? ORDER BY id DESC LIMIT 1", scope).Scan(&body, &ns)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, time.Time{}, fmt.Errorf("scope %q: %w", scope, ErrNoReport)
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	return []byte(body), time.Unix(0, ns), nil
}
