package runner

import (
	"sync"
	"time"

	"repro/registry"
)

// EventKind says what happened to a node.
type EventKind int

const (
	// EventWaiting: the node waits for its inputs, a free job slot or
	// device, or another process computing the same key (Status says which).
	EventWaiting EventKind = iota
	// EventCached: the node's key is in the cache; nothing runs. Status
	// is "mirror" when its outputs were imported from Options.Mirror.
	EventCached
	// EventRunning: the stage started (Device and Log set).
	EventRunning
	// EventProgress: the running stage reported progress (Done, Total,
	// Status, ETA, Elapsed set).
	EventProgress
	// EventDone: the stage finished and its outputs are stored (Elapsed set).
	EventDone
	// EventFailed: the stage failed or was cancelled (Err and Log set).
	EventFailed
	// EventSkipped: an input's stage failed or was skipped, so this node
	// could not run.
	EventSkipped
	// EventStopped: the node is in a round of a repeat block that its
	// `until` ended before (Err says why); it is not needed.
	EventStopped
	// EventDecided: a repeat block with `until` stopped; Node is the
	// block's name and Status its decision (values by round, the selected
	// round), Err set when it could not decide.
	EventDecided
	// EventWarning: something went wrong that does not stop the node (a
	// damaged mirror object refused: the stage runs instead); Status
	// says what.
	EventWarning
)

func (k EventKind) String() string {
	switch k {
	case EventWaiting:
		return "waiting"
	case EventCached:
		return "cached"
	case EventRunning:
		return "running"
	case EventProgress:
		return "progress"
	case EventDone:
		return "done"
	case EventFailed:
		return "failed"
	case EventSkipped:
		return "skipped"
	case EventStopped:
		return "stopped"
	case EventDecided:
		return "decided"
	case EventWarning:
		return "warning"
	}
	return "unknown"
}

// Event is one change of a node's state, for a progress display.
type Event struct {
	Kind   EventKind
	Node   string // node ID
	Type   string // stage type name
	Key    string // "" while inputs are not yet known
	Device string // running: where it runs
	// Progress as the stage reports it: Done of Total units (Total <= 0:
	// unknown), a short Status, and ETA estimated from the rate since the
	// first report (0 = unknown).
	Done, Total int
	Status      string
	ETA         time.Duration
	Elapsed     time.Duration // time since the stage started (done/failed: its duration)
	Err         error         // failed, skipped
	Log         string        // path of the stage's log file (running, done, failed)
	Time        time.Time
	// Outputs are the node's output digests by port (cached, done).
	Outputs map[string]string
}

// emitter serialises calls of the user's callback, so it need not be safe
// for concurrent use.
type emitter struct {
	mu sync.Mutex
	fn func(Event)
}

func (e *emitter) emit(ev Event) {
	if e == nil || e.fn == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fn(ev)
}

// progress implements registry.Progress for one running stage: it turns
// Update calls into EventProgress events, at most one per interval (the last
// unit is always reported), and estimates the time left from the rate
// observed since the first Update, which leaves out the stage's set-up.
type progress struct {
	em       *emitter
	base     Event
	start    time.Time
	interval time.Duration

	mu        sync.Mutex
	stopped   bool // the stage returned: late updates are dropped
	firstAt   time.Time
	firstDone int
	lastEmit  time.Time
}

func (p *progress) Update(done, total int, status string) {
	now := time.Now()
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	if p.firstAt.IsZero() {
		p.firstAt, p.firstDone = now, done
	}
	final := total > 0 && done >= total
	if !final && !p.lastEmit.IsZero() && now.Sub(p.lastEmit) < p.interval {
		p.mu.Unlock()
		return
	}
	p.lastEmit = now
	var eta time.Duration
	if total > 0 && done > p.firstDone && done < total {
		rate := float64(done-p.firstDone) / now.Sub(p.firstAt).Seconds()
		eta = time.Duration(float64(total-done) / rate * float64(time.Second))
	}
	p.mu.Unlock()
	ev := p.base
	ev.Kind = EventProgress
	ev.Done, ev.Total, ev.Status, ev.ETA = done, total, status, eta
	ev.Elapsed = now.Sub(p.start)
	ev.Time = now
	p.em.emit(ev)
}

// stop drops any later Update (from a goroutine the stage left behind), so
// no progress event follows the stage's done or failed event.
func (p *progress) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
}

// outputDigests is a node's outputs as port -> digest, for an event.
func outputDigests(outs map[string]registry.Artifact) map[string]string {
	m := make(map[string]string, len(outs))
	for p, a := range outs {
		m[p] = a.Digest
	}
	return m
}
