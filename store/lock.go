//go:build unix

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Lock is an flock(2) lock on a file under locks/. The kernel releases
// it when the process dies, so kill -9 can never leave a stale lock; a lock
// is per open file, so two goroutines of one process exclude each other too.
type Lock struct{ f *os.File }

// lockFile takes the lock on path, shared or exclusive, waiting until it is
// free or ctx is done. flock has no timeout, so waiting polls a
// non-blocking attempt; onWait is called once if the first attempt fails.
func lockFile(ctx context.Context, path string, exclusive bool, onWait func()) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	delay := time.Millisecond
	for first := true; ; first = false {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return &Lock{f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if first && onWait != nil {
			onWait()
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// Unlock releases the lock (closing the file releases it). It may be
// called more than once.
func (l *Lock) Unlock() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// LockKey takes the exclusive lock of a stage key, held while the stage runs
// and until its run is recorded, so that two processes never compute one
// key at once. onWait, if not nil, is called once when another holder makes
// it wait.
func (c *Store) LockKey(ctx context.Context, key string, onWait func()) (*Lock, error) {
	return lockFile(ctx, filepath.Join(c.dir, locksDir, key), true, onWait)
}

// LockStore takes the store-wide lock: shared by every pipeline run and by
// Verify, exclusive for GC, so GC never removes what a run is about to use.
func (c *Store) LockStore(ctx context.Context, exclusive bool) (*Lock, error) {
	if c.readOnly {
		if exclusive {
			return nil, fmt.Errorf("cache %s is open read-only", c.dir)
		}
		return &Lock{}, nil // a reader of a read-only cache cannot lock it, and needs not
	}
	return lockFile(ctx, filepath.Join(c.dir, locksDir, "gc"), exclusive, nil)
}
