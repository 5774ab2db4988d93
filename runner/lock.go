//go:build unix

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// fileLock is an flock(2) lock on a file under locks/. The kernel releases
// it when the process dies, so kill -9 can never leave a stale lock; a lock
// is per open file, so two goroutines of one process exclude each other too.
type fileLock struct{ f *os.File }

// lockFile takes the lock on path, shared or exclusive, waiting until it is
// free or ctx is done. flock has no timeout, so waiting polls a
// non-blocking attempt; onWait is called once if the first attempt fails.
func lockFile(ctx context.Context, path string, exclusive bool, onWait func()) (*fileLock, error) {
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
			return &fileLock{f}, nil
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

// unlock releases the lock (closing the file releases it).
func (l *fileLock) unlock() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
