package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"repro/registry"
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
	// (default 1; see the package doc for why).
	CPUTensorJobs int
	// Backend names the tensor backend ("cpu", "openblas", "cuda"); it is
	// recorded in each run's provenance.
	Backend string
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
	// Events receives every state change. Calls are serialised, so the
	// function need not be safe for concurrent use; it should return
	// quickly.
	Events func(Event)
	// ProgressInterval is the least time between two progress events of a
	// stage (default 200ms).
	ProgressInterval time.Duration
}

// Status is the outcome of a node in a Run.
type Status int

const (
	StatusCached  Status = iota // found in the cache
	StatusRan                   // ran and stored
	StatusFailed                // failed or cancelled; nothing stored
	StatusSkipped               // not run: an input failed or was skipped, or the run was cancelled first
)

func (s Status) String() string {
	return [...]string{"cached", "ran", "failed", "skipped"}[s]
}

// NodeResult is the outcome of one node.
type NodeResult struct {
	ID       string
	Type     string
	Key      string // "" when the node was skipped before its inputs were known
	Status   Status
	Outputs  map[string]registry.Artifact // cached or ran: the node's artifacts
	Duration time.Duration                // ran or failed: how long Run took
	Device   string
	Err      error
	Log      string // ran or failed: the stage's log file
}

// Result holds the outcome of every node a Run considered, in graph order.
type Result struct {
	Nodes []*NodeResult
	byID  map[string]*NodeResult
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
		fmt.Fprintf(&b, "\n  %s (%s): %v\n    log: %s", f.ID, f.Type, f.Err, f.Log)
	}
	for _, s := range e.Skipped {
		fmt.Fprintf(&b, "\n  %s (%s): skipped: %v", s.ID, s.Type, s.Err)
	}
	return b.String()
}

func (e *RunError) Unwrap() error { return e.cancelled }

// nodeState is a node during a Run; done closes when its outcome is final.
type nodeState struct {
	node *Node
	res  NodeResult
	done chan struct{}
}

type scheduler struct {
	c         *Cache
	opts      Options
	states    map[string]*nodeState
	em        *emitter
	jobs      chan struct{}
	cpuTensor chan struct{}
	gpus      chan string // free GPUs
	hasGPU    bool

	mu       sync.Mutex
	lastRecs []*lastRun // cached nodes, written together at the end
}

// Run runs every node of g whose key is not in the cache, in dependency
// order, independent nodes in parallel. A failing stage does not stop the
// stages that do not depend on it. It returns a *RunError when any node
// failed or was skipped; the Result is complete in every case except an
// invalid graph or an unusable cache.
func (c *Cache) Run(ctx context.Context, g *Graph, opts Options) (*Result, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	nodes := g.Nodes
	if len(opts.Targets) > 0 {
		var err error
		if nodes, err = g.Upstream(opts.Targets...); err != nil {
			return nil, err
		}
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
		c: c, opts: opts, states: map[string]*nodeState{},
		em:        &emitter{fn: opts.Events},
		jobs:      make(chan struct{}, opts.Jobs),
		cpuTensor: make(chan struct{}, opts.CPUTensorJobs),
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
	gl, err := lockFile(ctx, filepath.Join(c.dir, locksDir, "gc"), false, nil)
	if err != nil {
		return nil, err
	}
	defer gl.unlock()

	for _, n := range nodes {
		s.states[n.ID] = &nodeState{node: n, res: NodeResult{ID: n.ID, Type: n.Type.Name}, done: make(chan struct{})}
	}
	for _, n := range nodes {
		s.em.emit(Event{Kind: EventWaiting, Node: n.ID, Type: n.Type.Name, Status: "inputs"})
	}
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func(st *nodeState) {
			defer wg.Done()
			defer close(st.done)
			s.exec(ctx, st)
		}(s.states[n.ID])
	}
	wg.Wait()

	res := &Result{byID: map[string]*NodeResult{}}
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
			keep = append(keep, n.ID)
		}
	}
	// Use a fresh context: the records of what did finish are worth keeping
	// even after a Ctrl-C.
	if err := c.putLastRuns(context.WithoutCancel(ctx), opts.Scope, s.lastRecs, keep); err != nil {
		return res, fmt.Errorf("recording last runs: %w", err)
	}
	if len(rerr.Failed) > 0 || len(rerr.Skipped) > 0 || rerr.cancelled != nil {
		return res, rerr
	}
	return res, nil
}

func (s *scheduler) exec(ctx context.Context, st *nodeState) {
	n := st.node
	r := &st.res
	// Wait for every upstream node; their done channels always close.
	inputs := map[string]registry.Artifact{}
	digests := map[string]string{}
	lastInputs := map[string]lastInput{}
	for _, port := range sortedPorts(n.Inputs) {
		e := n.Inputs[port]
		up := s.states[e.Node]
		<-up.done
		if up.res.Status == StatusFailed || up.res.Status == StatusSkipped {
			s.skip(st, fmt.Errorf("input %q: stage %q %s", port, e.Node, up.res.Status))
			return
		}
		a, ok := up.res.Outputs[e.Output]
		if !ok {
			s.skip(st, fmt.Errorf("input %q: stage %q stored no output %q", port, e.Node, e.Output))
			return
		}
		inputs[port] = a
		digests[port] = a.Digest
		lastInputs[port] = lastInput{Node: e.Node, Output: e.Output, Digest: a.Digest}
	}
	if err := ctx.Err(); err != nil {
		s.skip(st, err)
		return
	}
	params, err := CanonicalParams(n.Params)
	if err != nil {
		s.fail(st, err)
		return
	}
	r.Key = keyOf(n, params, digests)
	lr := &lastRun{NodeID: n.ID, Key: r.Key, Type: n.Type.Name, Version: n.Type.Version,
		Params: params, Inputs: lastInputs, Seed: n.Seed, Seeded: n.Type.Seeded}
	if s.cached(ctx, st, lr) {
		return
	}

	// Another process may be computing the same key: wait for it, then
	// look again.
	lock, err := lockFile(ctx, filepath.Join(s.c.dir, locksDir, r.Key), true, func() {
		s.em.emit(Event{Kind: EventWaiting, Node: n.ID, Type: n.Type.Name, Key: r.Key, Status: "another process is running this stage"})
	})
	if err != nil {
		s.failOrSkip(ctx, st, err)
		return
	}
	defer lock.unlock()
	if s.cached(ctx, st, lr) {
		return
	}

	device := "cpu"
	if n.Type.Tensor {
		if s.hasGPU {
			select {
			case device = <-s.gpus:
				defer func(d string) { s.gpus <- d }(device)
			case <-ctx.Done():
				s.skip(st, ctx.Err())
				return
			}
		} else {
			select {
			case s.cpuTensor <- struct{}{}:
				defer func() { <-s.cpuTensor }()
			case <-ctx.Done():
				s.skip(st, ctx.Err())
				return
			}
		}
	}
	select {
	case s.jobs <- struct{}{}:
		defer func() { <-s.jobs }()
	case <-ctx.Done():
		s.skip(st, ctx.Err())
		return
	}
	r.Device = device
	s.runStage(ctx, st, inputs, params, lr)
}

// cached reports whether st's key is in the index with every object
// present, and if so completes st. An index row whose object has gone
// missing counts as a miss: the stage runs again and repairs the row.
func (s *scheduler) cached(ctx context.Context, st *nodeState, lr *lastRun) bool {
	r := &st.res
	outs, err := s.c.outputDigests(ctx, r.Key)
	if err != nil || outs == nil || !objectsPresent(outs) {
		return false
	}
	r.Status, r.Outputs = StatusCached, outs
	s.mu.Lock()
	s.lastRecs = append(s.lastRecs, lr)
	s.mu.Unlock()
	s.em.emit(Event{Kind: EventCached, Node: r.ID, Type: r.Type, Key: r.Key})
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

func (s *scheduler) skip(st *nodeState, err error) {
	st.res.Status, st.res.Err = StatusSkipped, err
	s.em.emit(Event{Kind: EventSkipped, Node: st.res.ID, Type: st.res.Type, Key: st.res.Key, Err: err})
}

func (s *scheduler) fail(st *nodeState, err error) {
	st.res.Status, st.res.Err = StatusFailed, err
	s.em.emit(Event{Kind: EventFailed, Node: st.res.ID, Type: st.res.Type, Key: st.res.Key, Err: err,
		Log: st.res.Log, Elapsed: st.res.Duration})
}

func (s *scheduler) failOrSkip(ctx context.Context, st *nodeState, err error) {
	if ctx.Err() != nil {
		s.skip(st, ctx.Err())
	} else {
		s.fail(st, err)
	}
}

// runStage runs the stage with its outputs in a fresh temporary directory
// and, if it succeeds, stores the outputs and records the run.
func (s *scheduler) runStage(ctx context.Context, st *nodeState, inputs map[string]registry.Artifact, params []byte, lr *lastRun) {
	n, r, c := st.node, &st.res, s.c
	tmp := filepath.Join(c.dir, tmpDir, r.Key+"-"+randomSuffix())
	defer removeAll(tmp) // after success the outputs have been renamed away
	outputs := map[string]string{}
	for _, p := range n.Type.Outputs {
		d := filepath.Join(tmp, p.Name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			s.fail(st, err)
			return
		}
		outputs[p.Name] = d
	}
	work := filepath.Join(c.dir, workDir, r.Key)
	if err := os.MkdirAll(work, 0o755); err != nil {
		s.fail(st, err)
		return
	}
	r.Log = c.logPath(r.Key)
	logf, err := os.Create(r.Log)
	if err != nil {
		s.fail(st, err)
		return
	}
	defer logf.Close()
	fmt.Fprintf(logf, "# stage %s (%s v%d) key %s device %s started %s\n",
		n.ID, n.Type.Name, n.Type.Version, r.Key, r.Device, time.Now().Format(time.RFC3339))

	start := time.Now()
	base := Event{Node: n.ID, Type: n.Type.Name, Key: r.Key, Device: r.Device, Log: r.Log}
	running := base
	running.Kind = EventRunning
	s.em.emit(running)
	prog := &progress{em: s.em, base: base, start: start, interval: s.opts.ProgressInterval}
	requests, err := c.Requests()
	if err != nil {
		s.fail(st, err)
		return
	}
	env := &registry.Env{
		Requests:  requests,
		Inputs:    inputs,
		Outputs:   outputs,
		Work:      work,
		Seed:      n.Seed,
		Device:    registry.Device{Name: r.Device},
		Progress:  prog,
		Log:       slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		LogWriter: logf,
	}
	err = callStage(ctx, n, env, logf)
	prog.stop()
	r.Duration = time.Since(start)
	if err == nil && ctx.Err() != nil {
		// A stage that returns nil after cancellation may have cut its
		// work short; storing it could cache a half result.
		err = ctx.Err()
	}
	if err == nil {
		err = checkOutputs(n, outputs)
	}
	if err != nil {
		fmt.Fprintf(logf, "# FAILED after %s: %v\n", r.Duration.Round(time.Millisecond), err)
		s.fail(st, err)
		return
	}

	rec := &runRecord{
		key: r.Key, stageType: n.Type.Name, nodeID: n.ID, version: n.Type.Version,
		params: params, inputs: map[string]string{}, seed: n.Seed, seeded: n.Type.Seeded,
		duration: r.Duration, device: r.Device, backend: s.opts.Backend, reproVersion: s.opts.Version,
		partial: s.opts.Partial, scope: s.opts.Scope, lastInputs: lr.Inputs,
	}
	for p, in := range lr.Inputs {
		rec.inputs[p] = in.Digest
	}
	r.Outputs = map[string]registry.Artifact{}
	for _, p := range n.Type.Outputs {
		digest, size, err := c.putObject(outputs[p.Name])
		if err != nil {
			s.fail(st, fmt.Errorf("storing output %q: %w", p.Name, err))
			return
		}
		rec.outputs = append(rec.outputs, storedOutput{port: p.Name, kind: string(p.Kind), digest: digest, size: size})
		r.Outputs[p.Name] = registry.Artifact{Kind: p.Kind, Dir: c.objectPath(digest), Digest: digest}
	}
	// The stage's work is done: record it even if Ctrl-C arrives now.
	if err := c.record(context.WithoutCancel(ctx), rec); err != nil {
		s.fail(st, fmt.Errorf("recording the run in %s: %w", filepath.Join(c.dir, indexFile), err))
		return
	}
	removeAll(work)
	fmt.Fprintf(logf, "# done in %s\n", r.Duration.Round(time.Millisecond))
	r.Status = StatusRan
	done := base
	done.Kind, done.Elapsed = EventDone, r.Duration
	s.em.emit(done)
}

// callStage decodes the parameters and calls the stage's Run, turning a
// panic into an error with the stack written to the stage's log.
func callStage(ctx context.Context, n *Node, env *registry.Env, log io.Writer) (err error) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(log, "# PANIC: %v\n%s", p, debug.Stack())
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	env.Params, err = n.Type.DecodeParams(n.Params)
	if err != nil {
		return err
	}
	return n.Type.Run(ctx, env)
}

// checkOutputs refuses outputs left empty: every artifact kind holds at
// least one file, so an empty output is a bug in the stage, and caching it
// would hide the bug until a downstream stage trips on it.
func checkOutputs(n *Node, outputs map[string]string) error {
	var empty []string
	for p, d := range outputs {
		ents, err := os.ReadDir(d)
		if err != nil {
			return fmt.Errorf("output %q: %w", p, err)
		}
		if len(ents) == 0 {
			empty = append(empty, p)
		}
	}
	if len(empty) > 0 {
		sort.Strings(empty)
		return fmt.Errorf("stage wrote nothing to output(s) %s", strings.Join(empty, ", "))
	}
	return nil
}
