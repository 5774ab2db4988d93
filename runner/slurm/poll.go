package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"repro/runner/remote"
)

// pollLoop reads the queue every Config.Poll until Close.
func (e *Executor) pollLoop() {
	defer close(e.stopped)
	t := time.NewTicker(e.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			e.poll(context.Background())
		}
	}
}

// poll updates every job that has not ended: one squeue call for all of
// them, then each one's outcome and progress files.
func (e *Executor) poll(ctx context.Context) {
	e.mu.Lock()
	var live []*handle
	for _, h := range e.handles {
		if !h.final && h.id != "" {
			live = append(live, h)
		}
	}
	e.mu.Unlock()
	if len(live) == 0 {
		return
	}
	q, qerr := e.cli.queue(ctx)
	e.mu.Lock()
	e.queueErr = qerr
	e.mu.Unlock()
	now := time.Now()
	for _, h := range live {
		e.observe(ctx, h, q, qerr, now)
	}
}

// observe updates one job from the queue listing (q, or the error reading
// it) and its files, and wakes its waiter when something changed.
//
// A job has ended when it reported success (its outcome file), or when the
// queue shows it in a final state or no longer lists it. A job that ended
// without an outcome may still show one shortly: the file was written just
// before the job left the queue, and a network file system can hide a new
// file for a while. So it is declared failed only after a grace period:
// Config.Grace for a job that completed, was preempted (and may be
// requeued: PENDING again) or left the queue, a few polls for a failed,
// cancelled or timed-out one.
func (e *Executor) observe(ctx context.Context, h *handle, q map[string]queued, qerr error, now time.Time) {
	qj, in := lookup(q, h.id)
	if in && qj.State == "PENDING" && qerr == nil {
		// A waiting job has no outcome (a requeued one removes its old
		// one first): with thousands queued, a poll reads no file for them.
		e.mu.Lock()
		if !h.final && (h.q != qj || !h.inQueue) {
			h.q, h.inQueue, h.goneAt = qj, true, time.Time{}
			h.changed()
		}
		e.mu.Unlock()
		return
	}
	out, oerr := remote.ReadOutcome(h.path(".outcome.json"))
	if oerr != nil && !errors.Is(oerr, os.ErrNotExist) {
		out = nil // half a file cannot be: WriteJSON renames; an unreadable one is retried
	}
	var shown queued
	haveShown := false
	e.mu.Lock()
	wasQ, wasIn := h.q, h.inQueue
	missing := qerr == nil && !in && h.goneAt.IsZero() && (out == nil || !out.OK())
	e.mu.Unlock()
	if missing {
		// Gone from squeue (older than the cluster's MinJobAge, or purged):
		// ask the controller or the accounting database how it ended.
		shown, haveShown = e.cli.show(ctx, h.id)
	}
	var prog *remote.Progress
	if in && qj.State == "RUNNING" {
		prog = remote.ReadProgress(h.path(".progress.json"))
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if h.final {
		return
	}
	switch {
	case in:
		h.q, h.inQueue = qj, true
	case haveShown:
		h.q, h.inQueue = shown, true
	}
	if out != nil && out.OK() {
		h.out, h.final = out, true
		h.changed()
		return
	}
	ended := qerr == nil && (!in || terminal(qj.State))
	if qerr == nil && !in && haveShown && !terminal(shown.State) {
		ended = false // the controller still has it (a race with squeue)
	}
	if !ended {
		h.goneAt = time.Time{}
		changed := h.q != wasQ || h.inQueue != wasIn
		if prog != nil && (h.prog == nil || *prog != *h.prog) {
			h.prog = prog
			changed = true
		}
		if changed {
			h.changed()
		}
		return
	}
	if h.goneAt.IsZero() {
		h.goneAt = now
	}
	grace := e.cfg.Grace
	switch h.q.State {
	case "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE":
		grace = min(grace, 2*e.cfg.Poll+2*time.Second)
		if out != nil {
			grace = 0 // its error is what it says
		}
	}
	if now.Sub(h.goneAt) < grace {
		if h.q != wasQ || h.inQueue != wasIn {
			h.changed()
		}
		return
	}
	h.final = true
	h.out = out
	switch {
	case out != nil:
	case !in && !haveShown && h.q.State == "":
		h.failure = "Slurm no longer knows the job, and it left no outcome"
	case h.q.State == "COMPLETED":
		h.failure = fmt.Sprintf("the job ended without writing its outcome %s", h.path(".outcome.json"))
	default:
		h.failure = "the job ended without an outcome"
	}
	h.changed()
}

// lookup finds a job or array task in a queue listing. squeue lists an
// array's tasks one per line once they start, but an array cancelled or
// failed before any task started keeps one record under the array's ID
// ("17"), which then stands for each of its tasks.
func lookup(q map[string]queued, id string) (queued, bool) {
	if j, ok := q[id]; ok {
		return j, true
	}
	base, _, isTask := strings.Cut(id, "_")
	if !isTask {
		return queued{}, false
	}
	if j, ok := q[base]; ok {
		j.ID = id
		return j, true
	}
	return queued{}, false
}
