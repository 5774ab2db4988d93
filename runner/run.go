package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"repro/graph"
	"repro/registry"
	"repro/store"

	"golang.org/x/sync/semaphore"
)

// Options control a Run.
type Options struct {
	// Jobs is the most stages running at once (default runtime.NumCPU()).
	Jobs int
	// Devices lists where tensor stages may run: "cpu", "cuda:0", ... Each
	// GPU runs one tensor stage at a time. Without a GPU in the list,
	// tensor stages run on "cpu" (see CPUTensorJobs). Stages that are not
	// tensor stages always get "cpu".
	Devices []string
	// CPUTensorJobs is the most tensor stages running on the CPU at once
	// (default 1; see the package doc for why), not counting one light
	// stage (registry.StageType.Light) beside them when Jobs >= 2.
	CPUTensorJobs int
	// Backend names the tensor backend family declared for the run ("cpu"
	// default, "openblas", "cuda"): part of every tensor stage's key, and
	// recorded in each run's provenance.
	Backend string
	// AnyBackend lets a tensor stage be served from a result another
	// backend family computed (their bits differ; the user accepts it).
	// New results are still stored under this run's backend.
	AnyBackend bool
	// Version is the repro version recorded in each run's provenance.
	Version string
	// Scope names the experiment run (file, profile, variant) whose
	// last-run records Plan uses to explain staleness; "" records none.
	Scope string
	// Partial marks the runs as part of a single-stage ablation or variant.
	Partial bool
	// Targets restricts the run to these nodes and what they depend on
	// (none: every node).
	Targets []string
	// Executor runs the stages that must run (default: a Local executor on
	// the store, without device binding).
	Executor Executor
	// Events receives every state change. Calls are serialised, so the
	// function need not be safe for concurrent use; it should return
	// quickly.
	Events func(Event)
	// ProgressInterval is the least time between two progress events of a
	// stage (default 200ms).
	ProgressInterval time.Duration
	// Mirror, when not nil, is consulted on a cache miss: a stage whose key
	// it holds is imported from it (each output verified against its
	// digest) instead of run; a damaged mirror object is refused with an
	// EventWarning and the stage runs. See mirror.go.
	Mirror *store.Mirror

	pass int // how many passes ran before this one (corrupt inputs recomputed)
}

// maxPasses bounds the passes of one Run: a pass that quarantines a corrupt
// input object is followed by one that recomputes it and runs its
// dependant; a second corruption in a row (a disk going bad) is a failure.
const maxPasses = 3

// Status is the outcome of a node in a Run.
type Status int

const (
	StatusCached  Status = iota // found in the cache
	StatusRan                   // ran and stored
	StatusFailed                // failed or cancelled; nothing stored
	StatusSkipped               // not run: an input failed or was skipped, or the run was cancelled first
	StatusStopped               // not run, not needed: its repeat block's `until` stopped before its round
)

func (s Status) String() string {
	return [...]string{"cached", "ran", "failed", "skipped", "stopped"}[s]
}

// NodeResult is the outcome of one node.
type NodeResult struct {
	ID       string
	Type     string
	Source   string // where the node was declared ("file.hcl:12"), if known
	Key      string // "" when the node was skipped before its inputs were known
	Status   Status
	Outputs  map[string]registry.Artifact // cached or ran: the node's artifacts
	Duration time.Duration                // ran or failed: how long Run took
	Device   string
	Err      error
	Log      string // ran or failed: the stage's log file
	// Mirror is set on a cached node whose outputs were imported from
	// Options.Mirror in this run.
	Mirror bool
	// Warnings are problems that did not stop the node (a mirror object
	// refused: it ran instead).
	Warnings []string
}

// Result holds the outcome of every node a Run considered, in graph order.
type Result struct {
	Nodes []*NodeResult
	byID  map[string]*NodeResult
	// Loops says how each repeat block with `until` ended (see loop.go).
	Loops []LoopResult
}

// Node returns the outcome of the node with that ID, or nil.
func (r *Result) Node(id string) *NodeResult { return r.byID[id] }

// RunError summarises the nodes that failed or were skipped. Errors from
// Run unwrap to context.Canceled (or DeadlineExceeded) when the run was
// cancelled.
type RunError struct {
	Failed    []*NodeResult
	Skipped   []*NodeResult
	cancelled error
}

func (e *RunError) Error() string {
	var b strings.Builder
	if e.cancelled != nil {
		fmt.Fprintf(&b, "run cancelled (%v); ", e.cancelled)
	}
	fmt.Fprintf(&b, "%d stage(s) failed, %d skipped", len(e.Failed), len(e.Skipped))
	for _, f := range e.Failed {
		fmt.Fprintf(&b, "\n  %s (%s%s): %v\n    log: %s", f.ID, f.Type, at(f.Source), f.Err, f.Log)
	}
	for _, s := range e.Skipped {
		fmt.Fprintf(&b, "\n  %s (%s%s): skipped: %v", s.ID, s.Type, at(s.Source), s.Err)
	}
	return b.String()
}

func (e *RunError) Unwrap() error { return e.cancelled }

func at(source string) string {
	if source == "" {
		return ""
	}
	return ", " + source
}

// nodeState is a node during a Run; done closes when its outcome is final.
type nodeState struct {
	node *graph.Node
	res  NodeResult
	done chan struct{}
}

type scheduler struct {
	st        *store.Store
	executor  Executor
	opts      Options
	states    map[string]*nodeState
	em        *emitter
	jobs      *semaphore.Weighted // slots of Options.Jobs; a stage takes Resources.CPUs of them
	cpuTensor chan struct{}
	cpuLight  chan struct{} // the lane of one light tensor stage beside cpuTensor's
	gpus      chan string   // free GPUs
	hasGPU    bool
	loops     []*loopRun // repeat blocks decided at run time (loop.go)

	mu       sync.Mutex
	lastRecs []*store.LastRun // cached nodes, written together at the end
	again    bool             // a corrupt input was quarantined: run another pass
}

// Run runs every node of g whose key is not in the cache, in dependency
// order, independent nodes in parallel. A failing stage does not stop the
// stages that do not depend on it. It returns a *RunError when any node
// failed or was skipped; the Result is complete in every case except an
// invalid graph or an unusable cache.
func Run(ctx context.Context, st *store.Store, g *graph.Graph, opts Options) (*Result, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	nodes, loops := g.Nodes, g.Loops
	if len(opts.Targets) > 0 {
		sub, err := g.Upstream(opts.Targets...)
		if err != nil {
			return nil, err
		}
		nodes, loops = sub.Nodes, sub.Loops
	}
	if opts.pass == 0 {
		if err := checkStart(nodes); err != nil {
			return nil, err
		}
	}
	if opts.Executor == nil {
		opts.Executor = &Local{Store: st}
	}
	if opts.Jobs <= 0 {
		opts.Jobs = runtime.NumCPU()
	}
	if opts.CPUTensorJobs <= 0 {
		opts.CPUTensorJobs = 1
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = 200 * time.Millisecond
	}
	s := &scheduler{
		st: st, executor: opts.Executor, opts: opts, states: map[string]*nodeState{},
		em:        &emitter{fn: opts.Events},
		jobs:      semaphore.NewWeighted(int64(opts.Jobs)),
		cpuTensor: make(chan struct{}, opts.CPUTensorJobs),
		cpuLight:  make(chan struct{}, 1),
	}
	var gpus []string
	for _, d := range opts.Devices {
		if d != "cpu" && d != "" {
			gpus = append(gpus, d)
		}
	}
	s.gpus = make(chan string, len(gpus))
	for _, d := range gpus {
		s.gpus <- d
	}
	s.hasGPU = len(gpus) > 0

	// A shared lock on the whole store for the run's duration: GC takes it
	// exclusively, so it never deletes what a run is about to use.
	gl, err := st.LockStore(ctx, false)
	if err != nil {
		return nil, err
	}
	defer gl.Unlock()

	for _, n := range nodes {
		s.states[n.ID] = &nodeState{node: n, res: NodeResult{ID: n.ID, Type: n.Type.Name, Source: n.Source}, done: make(chan struct{})}
	}
	cluster, _ := opts.Executor.(Cluster)
	if cluster != nil {
		if err := s.startCluster(ctx, cluster, nodes, loops); err != nil {
			return nil, err
		}
	}
	for _, n := range nodes {
		s.em.emit(Event{Kind: EventWaiting, Node: n.ID, Type: n.Type.Name, Status: "inputs"})
	}
	s.startLoops(loops)
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func(ns *nodeState) {
			defer wg.Done()
			defer close(ns.done)
			s.exec(ctx, ns)
			if cluster != nil {
				cluster.Release(ns.node.ID)
			}
		}(s.states[n.ID])
	}
	wg.Wait()
	if cluster != nil {
		cluster.Stop()
	}
	if s.again && ctx.Err() == nil && opts.pass+1 < maxPasses {
		// The quarantined objects' producers are no longer cached: this
		// pass recomputes them and runs what waited for them; the rest is
		// found cached. The scope's records are written by that pass.
		if err := st.PutLastRuns(context.WithoutCancel(ctx), opts.Scope, s.lastRecs, nil); err != nil {
			return nil, fmt.Errorf("recording last runs: %w", err)
		}
		gl.Unlock()
		next := opts
		next.pass++
		return Run(ctx, st, g, next)
	}

	res := &Result{byID: map[string]*NodeResult{}, Loops: s.loopResults()}
	rerr := &RunError{cancelled: ctx.Err()}
	for _, n := range nodes {
		r := &s.states[n.ID].res
		res.Nodes = append(res.Nodes, r)
		res.byID[n.ID] = r
		switch r.Status {
		case StatusFailed:
			rerr.Failed = append(rerr.Failed, r)
		case StatusSkipped:
			rerr.Skipped = append(rerr.Skipped, r)
		}
	}
	// After a complete, successful run of the whole graph the scope's
	// records are exactly its nodes: forget nodes removed from it.
	var keep []string
	complete := len(rerr.Failed) == 0 && len(rerr.Skipped) == 0 && len(opts.Targets) == 0
	if complete {
		for _, n := range nodes {
			if s.states[n.ID].res.Status != StatusStopped {
				keep = append(keep, n.ID)
			}
		}
	}
	// Use a fresh context: the records of what did finish are worth keeping
	// even after a Ctrl-C.
	if err := st.PutLastRuns(context.WithoutCancel(ctx), opts.Scope, s.lastRecs, keep); err != nil {
		return res, fmt.Errorf("recording last runs: %w", err)
	}
	if len(rerr.Failed) > 0 || len(rerr.Skipped) > 0 || rerr.cancelled != nil {
		return res, rerr
	}
	return res, nil
}

func (s *scheduler) exec(ctx context.Context, ns *nodeState) {
	n := ns.node
	r := &ns.res
	if !s.gate(ctx, ns) {
		return // a round its repeat block's `until` did not need
	}
	// Wait for every upstream node; their done channels always close.
	inputs := map[string]registry.Artifact{}
	digests := map[string]string{}
	lastInputs := map[string]store.LastInput{}
	for _, port := range sortedPorts(n.Inputs) {
		e, err := s.edge(ctx, n, n.Inputs[port])
		if err != nil {
			s.skip(ns, fmt.Errorf("input %q: %v", port, err))
			return
		}
		up := s.states[e.Node]
		<-up.done
		if up.res.Status == StatusFailed || up.res.Status == StatusSkipped {
			s.skip(ns, fmt.Errorf("input %q: stage %q %s", port, e.Node, up.res.Status))
			return
		}
		a, ok := up.res.Outputs[e.Output]
		if !ok {
			s.skip(ns, fmt.Errorf("input %q: stage %q stored no output %q", port, e.Node, e.Output))
			return
		}
		inputs[port] = a
		digests[port] = a.Digest
		lastInputs[port] = store.LastInput{Node: e.Node, Output: e.Output, Digest: a.Digest}
	}
	if err := ctx.Err(); err != nil {
		s.skip(ns, err)
		return
	}
	ext, err := externals(ctx, s.st, n)
	if err != nil {
		s.failOrSkip(ctx, ns, err)
		return
	}
	for name, in := range ext {
		digests[name] = in.Digest
		lastInputs[name] = in
	}
	params, err := graph.CanonicalParams(n.Params)
	if err != nil {
		s.fail(ns, err)
		return
	}
	r.Key = graph.KeyOf(n, params, digests, s.opts.Backend)
	lr := &store.LastRun{NodeID: n.ID, Key: r.Key, Type: n.Type.Name, Version: n.Type.Version,
		Params: params, Inputs: lastInputs, Seed: n.Seed, Seeded: n.Type.Seeded}
	if s.cached(ctx, ns, lr) {
		return
	}
	if s.opts.AnyBackend && n.Type.Tensor {
		for _, b := range graph.Backends {
			if b == s.opts.Backend {
				continue
			}
			alt := *lr
			alt.Key = graph.KeyOf(n, params, digests, b)
			if outs, err := s.st.Outputs(ctx, alt.Key); err == nil && outs != nil && objectsPresent(outs) {
				r.Key = alt.Key
				s.cached(ctx, ns, &alt)
				return
			}
		}
	}

	// Another process may be computing the same key: wait for it, then
	// look again.
	lock, err := s.st.LockKey(ctx, r.Key, func() {
		s.em.emit(Event{Kind: EventWaiting, Node: n.ID, Type: n.Type.Name, Key: r.Key, Status: "another process is running this stage"})
	})
	if err != nil {
		s.failOrSkip(ctx, ns, err)
		return
	}
	defer lock.Unlock()
	if s.cached(ctx, ns, lr) {
		return
	}
	if s.fromMirror(ctx, ns, lr) {
		return
	}
	// The stage will read its inputs: make sure they are what their digests
	// say, so that no number computed from a damaged object is stored.
	if !s.verifyInputs(ctx, ns, inputs) {
		return
	}

	if _, ok := s.executor.(Cluster); ok {
		// The cluster's scheduler places the job: no local device or slots.
		s.runStage(ctx, ns, inputs, params, lr)
		return
	}
	need := n.Needs()
	device := "cpu"
	switch {
	case need.GPUs > 0 && s.hasGPU:
		select {
		case device = <-s.gpus:
			defer func(d string) { s.gpus <- d }(device)
		case <-ctx.Done():
			s.skip(ns, ctx.Err())
			return
		}
	case n.Type.Tensor && n.Type.Light && s.opts.Jobs >= 2:
		// A light stage (an evaluation) takes its own lane, so that it
		// runs beside a long training stage instead of after it; when
		// that lane is taken it may take the tensor lane, if free.
		lane := s.cpuLight
		select {
		case s.cpuLight <- struct{}{}:
		default:
			select {
			case s.cpuLight <- struct{}{}:
			case s.cpuTensor <- struct{}{}:
				lane = s.cpuTensor
			case <-ctx.Done():
				s.skip(ns, ctx.Err())
				return
			}
		}
		defer func() { <-lane }()
	case n.Type.Tensor:
		select {
		case s.cpuTensor <- struct{}{}:
			defer func() { <-s.cpuTensor }()
		case <-ctx.Done():
			s.skip(ns, ctx.Err())
			return
		}
	}
	// A stage takes as many of the -j slots as cores it declares (at most
	// all of them). The weighted semaphore serves waiters in order, so a
	// wide stage is not starved by narrow ones, and no two stages can each
	// hold part of what the other needs.
	slots := int64(min(need.CPUs, s.opts.Jobs))
	if err := s.jobs.Acquire(ctx, slots); err != nil {
		s.skip(ns, ctx.Err())
		return
	}
	defer s.jobs.Release(slots)
	r.Device = device
	s.runStage(ctx, ns, inputs, params, lr)
}

// cached reports whether ns's key is in the index with every object
// present, and if so completes ns. An index row whose object has gone
// missing counts as a miss: the stage runs again and repairs the row.
func (s *scheduler) cached(ctx context.Context, ns *nodeState, lr *store.LastRun) bool {
	r := &ns.res
	outs, err := s.st.Outputs(ctx, r.Key)
	if err != nil || outs == nil || !objectsPresent(outs) {
		return false
	}
	r.Status, r.Outputs = StatusCached, outs
	s.mu.Lock()
	s.lastRecs = append(s.lastRecs, lr)
	s.mu.Unlock()
	s.em.emit(Event{Kind: EventCached, Node: r.ID, Type: r.Type, Key: r.Key, Outputs: outputDigests(outs)})
	return true
}

func objectsPresent(outs map[string]registry.Artifact) bool {
	for _, a := range outs {
		if _, err := os.Stat(a.Dir); err != nil {
			return false
		}
	}
	return true
}

// CorruptInputError says that a node's input object failed verification: it
// was quarantined (its producer's runs forgotten) and, unless this was the
// last pass, is recomputed by the next one.
type CorruptInputError struct {
	Port, Producer string
	Err            *store.CorruptError
	Quarantine     error // non-nil if moving it out of the store failed
}

func (e *CorruptInputError) Error() string {
	s := fmt.Sprintf("input %q (from stage %q): %v", e.Port, e.Producer, e.Err)
	if e.Quarantine != nil {
		return s + "; quarantine failed: " + e.Quarantine.Error()
	}
	return s + "; quarantined, to be recomputed from its stage"
}

// verifyInputs re-hashes every input object of ns; a corrupt one is
// quarantined, ns is skipped (never run on it) and another pass is asked
// for. It reports whether all inputs are sound.
func (s *scheduler) verifyInputs(ctx context.Context, ns *nodeState, inputs map[string]registry.Artifact) bool {
	for _, port := range slices.Sorted(maps.Keys(inputs)) {
		a := inputs[port]
		err := s.st.VerifyObject(a.Digest)
		if err == nil {
			continue
		}
		var ce *store.CorruptError
		if !errors.As(err, &ce) {
			s.fail(ns, fmt.Errorf("input %q: %w", port, err))
			return false
		}
		_, qerr := s.st.Quarantine(context.WithoutCancel(ctx), a.Digest, ce.Error())
		cie := &CorruptInputError{Port: port, Producer: ns.node.Inputs[port].Node, Err: ce, Quarantine: qerr}
		if qerr != nil || s.opts.pass+1 >= maxPasses {
			s.fail(ns, cie)
			return false
		}
		s.mu.Lock()
		s.again = true
		s.mu.Unlock()
		s.em.emit(Event{Kind: EventWaiting, Node: ns.node.ID, Type: ns.node.Type.Name, Status: cie.Error()})
		s.skip(ns, cie)
		return false
	}
	return true
}

func (s *scheduler) skip(ns *nodeState, err error) {
	ns.res.Status, ns.res.Err = StatusSkipped, err
	s.em.emit(Event{Kind: EventSkipped, Node: ns.res.ID, Type: ns.res.Type, Key: ns.res.Key, Err: err})
}

func (s *scheduler) fail(ns *nodeState, err error) {
	ns.res.Status, ns.res.Err = StatusFailed, err
	s.em.emit(Event{Kind: EventFailed, Node: ns.res.ID, Type: ns.res.Type, Key: ns.res.Key, Err: err,
		Log: ns.res.Log, Elapsed: ns.res.Duration})
}

func (s *scheduler) failOrSkip(ctx context.Context, ns *nodeState, err error) {
	if ctx.Err() != nil {
		s.skip(ns, ctx.Err())
	} else {
		s.fail(ns, err)
	}
}

// runStage hands the stage to the executor and, if it succeeds, records
// the run in the index: the coordinator is the only writer of the index.
func (s *scheduler) runStage(ctx context.Context, ns *nodeState, inputs map[string]registry.Artifact, params []byte, lr *store.LastRun) {
	n, r := ns.node, &ns.res
	r.Log = s.st.LogPath(r.Key)
	base := Event{Node: n.ID, Type: n.Type.Name, Key: r.Key, Device: r.Device, Log: r.Log}
	running := base
	running.Kind = EventRunning
	s.em.emit(running)
	start := time.Now()
	prog := &progress{em: s.em, base: base, start: start, interval: s.opts.ProgressInterval}
	job := &Job{
		Node: n, Key: r.Key, Params: params, Inputs: inputs,
		Device:   registry.Device{Name: r.Device, Backend: s.opts.Backend},
		Log:      r.Log,
		Progress: prog,
	}
	out, err := s.executor.Execute(ctx, job)
	prog.stop()
	r.Duration = time.Since(start)
	if err == nil && ctx.Err() != nil {
		// A stage that returns nil after cancellation may have cut its
		// work short; storing it could cache a half result.
		err = ctx.Err()
	}
	if err != nil {
		s.fail(ns, err)
		return
	}
	if out.Duration > 0 {
		r.Duration = out.Duration
	}
	if out.Device != "" {
		r.Device = out.Device
	}
	rec := &store.Run{
		Key: r.Key, Type: n.Type.Name, NodeID: n.ID, Version: n.Type.Version,
		Params: params, Inputs: map[string]string{}, Seed: n.Seed, Seeded: n.Type.Seeded,
		Duration: r.Duration, Device: r.Device, Backend: s.opts.Backend, ReproVersion: s.opts.Version,
		Partial: s.opts.Partial, Scope: s.opts.Scope, LastInputs: lr.Inputs, Outputs: out.Outputs,
		Host: out.Host,
	}
	for p, in := range lr.Inputs {
		rec.Inputs[p] = in.Digest
	}
	r.Outputs = map[string]registry.Artifact{}
	for _, o := range out.Outputs {
		r.Outputs[o.Port] = registry.Artifact{Kind: registry.Kind(o.Kind), Dir: s.st.ObjectPath(o.Digest), Digest: o.Digest}
	}
	// The stage's work is done: record it even if Ctrl-C arrives now.
	if err := s.st.Record(context.WithoutCancel(ctx), rec); err != nil {
		s.fail(ns, fmt.Errorf("recording the run in %s: %w", s.st.Dir(), err))
		return
	}
	r.Status = StatusRan
	done := base
	done.Kind, done.Elapsed, done.Outputs = EventDone, r.Duration, outputDigests(r.Outputs)
	s.em.emit(done)
}

func sortedPorts(m map[string]graph.Edge) []string {
	ps := make([]string, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}
