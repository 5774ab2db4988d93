package slurm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// One coordinator per cache: it alone writes the index, submits and
// cancels the cache's jobs, and adopts what a crashed one left. The lock is
// an flock(2) on slurm/coordinator.lock (released by the kernel when the
// process dies, so kill -9 leaves nothing stale; on NFS the Linux client
// maps it to a POSIX lock that the server arbitrates between hosts), and
// slurm/coordinator.json says who holds it.

// Holder describes the coordinator holding a cache.
type Holder struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Since   time.Time `json:"since"`
	Command string    `json:"command"`
}

// BusyError is a cache another coordinator holds.
type BusyError struct {
	Cache  string
	Holder *Holder // nil when it could not be read
}

func (e *BusyError) Error() string {
	if e.Holder == nil {
		return fmt.Sprintf("another repro coordinates the Slurm jobs of cache %s (its %s is locked)", e.Cache, filepath.Join(stateDir, "coordinator.lock"))
	}
	h := e.Holder
	return fmt.Sprintf("another repro coordinates the Slurm jobs of cache %s: pid %d on host %s, since %s (%s); wait for it, or stop it (its jobs are cancelled) before starting another",
		e.Cache, h.PID, h.Host, h.Since.Format(time.RFC3339), h.Command)
}

type coordLock struct{ f *os.File }

func lockCoordinator(cache string) (*coordLock, error) {
	dir := filepath.Join(cache, stateDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "coordinator.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			be := &BusyError{Cache: cache}
			var h Holder
			if b, rerr := os.ReadFile(filepath.Join(dir, "coordinator.json")); rerr == nil && json.Unmarshal(b, &h) == nil {
				be.Holder = &h
			}
			return nil, be
		}
		return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	host, _ := os.Hostname()
	h := Holder{Host: host, PID: os.Getpid(), Since: time.Now(), Command: strings.Join(os.Args, " ")}
	b, _ := json.MarshalIndent(h, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "coordinator.json"), append(b, '\n'), 0o644); err != nil {
		f.Close()
		return nil, err
	}
	return &coordLock{f}, nil
}

func (l *coordLock) unlock() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
