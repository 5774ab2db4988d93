package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// Claims on language-model requests in flight. Two runs on one cache that
// share requests (a grid's cells, a larger and a smaller run) would each
// pay for the shared ones; instead, a process claims a request in the
// index (llm_claims) before sending it, and the others wait for its answer.
//
// A claim must not outlive its process, or a kill -9 would leave its
// requests claimed forever. Two checks see to that:
//   - liveness: a claim names its host and pid; on the same host, a claim
//     whose process is gone is taken over at once;
//   - a lease: a claim expires ClaimLease after it was last renewed, and
//     its holder renews all its claims every ClaimLease/3 while it holds
//     any. A holder on another host that died (or a pid reused by another
//     process) stops renewing, and its claims lapse.

// ClaimLease is how long a claim lasts without renewal (a variable for
// tests).
var ClaimLease = 30 * time.Second

// claims are the claims of one request store: its owner token, host and
// pid, the keys it holds, and the renewal goroutine while it holds any.
type claims struct {
	db    *sql.DB
	owner string
	host  string
	pid   int

	mu       sync.Mutex
	held     map[string]bool
	renewing bool
}

func newClaims(db *sql.DB, host string) *claims {
	return &claims{db: db, owner: host + ":" + fmt.Sprint(os.Getpid()) + ":" + randomSuffix(), host: host, pid: os.Getpid(),
		held: map[string]bool{}}
}

// claim takes key unless another live holder has it.
func (c *claims) claim(ctx context.Context, key string) (bool, error) {
	var got bool
	err := retryBusy(func() error {
		var err error
		got, err = c.tryClaim(ctx, key)
		return err
	})
	if err != nil || !got {
		return false, err
	}
	c.mu.Lock()
	c.held[key] = true
	if !c.renewing {
		c.renewing = true
		go c.renew()
	}
	c.mu.Unlock()
	return true, nil
}

func (c *claims) tryClaim(ctx context.Context, key string) (bool, error) {
	tx, err := c.db.BeginTx(ctx, nil) // immediate (see Open): the look and the write are one
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	now := time.Now().UnixNano()
	var owner, host string
	var pid int
	var expires int64
	err = tx.QueryRowContext(ctx, "SELECT owner, host, pid, expires_ns FROM llm_claims WHERE key = ?", key).Scan(&owner, &host, &pid, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return false, err
	case owner == c.owner, expires < now, host == c.host && !alive(pid):
		// Ours already, lapsed, or its process is gone.
	default:
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO llm_claims (key, owner, host, pid, expires_ns) VALUES (?,?,?,?,?)
		ON CONFLICT(key) DO UPDATE SET owner = excluded.owner, host = excluded.host, pid = excluded.pid, expires_ns = excluded.expires_ns`,
		key, c.owner, c.host, c.pid, now+int64(ClaimLease)); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// release gives up key if this store still holds it.
func (c *claims) release(ctx context.Context, key string) error {
	c.mu.Lock()
	delete(c.held, key)
	c.mu.Unlock()
	return retryBusy(func() error {
		_, err := c.db.ExecContext(ctx, "DELETE FROM llm_claims WHERE key = ? AND owner = ?", key, c.owner)
		return err
	})
}

// renew extends this store's claims every ClaimLease/3 while it holds any.
func (c *claims) renew() {
	for {
		time.Sleep(ClaimLease / 3)
		c.mu.Lock()
		if len(c.held) == 0 {
			c.renewing = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		if err := c.renewNow(); err != nil {
			// The index is closed or failing: the claims lapse, and at
			// worst another run sends what this one is sending.
			c.mu.Lock()
			c.renewing = false
			c.mu.Unlock()
			return
		}
	}
}

// renewNow extends every claim of this store by a lease from now.
func (c *claims) renewNow() error {
	return retryBusy(func() error {
		_, err := c.db.Exec("UPDATE llm_claims SET expires_ns = ? WHERE owner = ?", time.Now().Add(ClaimLease).UnixNano(), c.owner)
		return err
	})
}

// alive reports whether process pid exists on this host (EPERM: it exists
// but belongs to another user).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
