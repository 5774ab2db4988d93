package slurm

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"repro/graph"
	"repro/runner"
	"repro/runner/remote"
	"repro/store"

	"github.com/zeebo/blake3"
)

// stateDir holds, under the cache, the coordinator lock and one directory
// per coordinator run with its jobs' specs, scripts, outcomes, progress
// files and request journals (slurm/<run>/). A run's directory is removed
// once all its jobs have ended and been adopted; a coordinator that
// crashed leaves it for the next one.
const stateDir = "slurm"

// Executor runs stages as Slurm jobs; see the package documentation.
type Executor struct {
	st    *store.Store
	cfg   Config
	cli   *cli
	lock  *coordLock
	runID string
	dir   string
	repro string
	cwd   string

	// Adopted says what Open found of an earlier coordinator's jobs.
	Adopted AdoptReport

	mu        sync.Mutex
	nsub      int
	handles   []*handle            // every job known to this coordinator, polled until final
	byNode    map[string]*handle   // this pass: node ID -> its job
	adoptable map[string][]*handle // identity -> jobs of earlier coordinators still live, unclaimed
	identity  map[string]string    // this pass: node ID -> identity
	pass      *runner.Pass
	queueErr  error
	stop      chan struct{}
	stopped   chan struct{}
}

// AdoptReport is what Open did with the jobs an earlier coordinator of
// the cache left behind.
type AdoptReport struct {
	Recorded int // finished jobs whose runs were recorded in the index
	Live     int // jobs still queued or running, to be claimed by this run
	Answers  int // language-model answers merged from their journals
	Dirs     int // earlier coordinators' run directories found
}

// handle is one job (or array task) and what is known of it.
type handle struct {
	id       string // "123", "123_4"
	node     string
	identity string
	dir      string // the run directory of its spec
	stem     string // "<sub>" or "<sub>.<task>"
	spec     *remote.Spec
	adopted  bool
	ahead    bool // submitted before its inputs existed (Key unknown)

	// Guarded by Executor.mu.
	q         queued
	inQueue   bool
	goneAt    time.Time // first seen ended (or gone) without an outcome
	out       *remote.Outcome
	final     bool
	failure   string // set when final without an OK outcome
	merged    bool   // journal merged into the index
	recorded  bool   // run recorded (by us or by the scheduler)
	claimed   bool   // Execute took it
	cancelled bool   // we cancelled it
	prog      *remote.Progress
	notify    chan struct{}
}

func (h *handle) path(suffix string) string { return filepath.Join(h.dir, h.stem+suffix) }

// changed wakes whoever waits on h; the caller holds Executor.mu.
func (h *handle) changed() {
	close(h.notify)
	h.notify = make(chan struct{})
}

// Open makes the Slurm executor of the cache st: it takes the
// coordinator lock (a second coordinator on the same cache gets a
// *BusyError naming the first), checks that Slurm answers, and adopts what
// an earlier coordinator left: finished jobs' runs are recorded and their
// request journals merged, jobs still queued or running are kept for this
// run to claim. Close releases it all.
func Open(ctx context.Context, st *store.Store, cfg Config) (*Executor, error) {
	if err := CheckFlags(cfg.Flags, "sbatch flags"); err != nil {
		return nil, err
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 3 * time.Second
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 60 * time.Second
	}
	if cfg.Ahead == 0 {
		cfg.Ahead = 1000
	}
	c := &cli{env: cfg.Env}
	if cfg.MaxArray <= 0 {
		cfg.MaxArray = c.maxArraySize(ctx)
	}
	repro := cfg.Repro
	if repro == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding the repro executable for the jobs: %w", err)
		}
		repro = exe
	}
	if abs, err := filepath.Abs(repro); err == nil {
		repro = abs
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	lock, err := lockCoordinator(st.Dir())
	if err != nil {
		return nil, err
	}
	e := &Executor{st: st, cfg: cfg, cli: c, lock: lock, repro: repro, cwd: cwd,
		byNode: map[string]*handle{}, adoptable: map[string][]*handle{},
		stop: make(chan struct{}), stopped: make(chan struct{})}
	e.runID = fmt.Sprintf("%s-%d", time.Now().UTC().Format("20060102T150405.000"), os.Getpid())
	e.dir = filepath.Join(st.Dir(), stateDir, e.runID)
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		lock.unlock()
		return nil, err
	}
	q, err := e.cli.queue(ctx)
	if err != nil {
		os.Remove(e.dir)
		lock.unlock()
		return nil, fmt.Errorf("slurm: %w", err)
	}
	if err := e.adopt(ctx, q); err != nil {
		os.Remove(e.dir)
		lock.unlock()
		return nil, err
	}
	go e.pollLoop()
	return e, nil
}

// Close stops watching the queue, records finished jobs that no stage
// claimed, merges their journals, removes run directories whose jobs have
// all ended and releases the coordinator lock. Jobs it cancelled get a few
// seconds to end first, so that their answers are merged now.
func (e *Executor) Close() error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		e.mu.Lock()
		waiting := false
		for _, h := range e.handles {
			if h.cancelled && !h.final {
				waiting = true
			}
		}
		e.mu.Unlock()
		if !waiting {
			break
		}
		time.Sleep(e.cfg.Poll)
	}
	close(e.stop)
	<-e.stopped
	ctx := context.Background()
	e.mu.Lock()
	handles := slices.Clone(e.handles)
	e.mu.Unlock()
	var errs []error
	live := map[string]bool{}
	for _, h := range handles {
		e.mu.Lock()
		final := h.final
		e.mu.Unlock()
		if !final {
			live[h.dir] = true
			continue
		}
		if err := e.settle(ctx, h); err != nil {
			errs = append(errs, err)
			live[h.dir] = true // keep the journal for the next coordinator
		}
	}
	dirs := map[string]bool{e.dir: true}
	for _, h := range handles {
		dirs[h.dir] = true
	}
	for d := range dirs {
		if !live[d] {
			store.RemoveAll(d)
		}
	}
	e.lock.unlock()
	return errors.Join(errs...)
}

// settle merges a final job's journal and records its run if it finished
// and nobody recorded it.
func (e *Executor) settle(ctx context.Context, h *handle) error {
	e.mu.Lock()
	merged, recorded, out := h.merged, h.recorded, h.out
	e.mu.Unlock()
	if !merged {
		n, err := e.mergeJournal(ctx, h)
		if err != nil {
			return err
		}
		e.mu.Lock()
		h.merged = true
		if h.adopted {
			e.Adopted.Answers += n
		}
		e.mu.Unlock()
	}
	if !recorded && out != nil && out.OK() {
		if err := e.record(ctx, h.spec, out); err != nil {
			return err
		}
		e.mu.Lock()
		h.recorded = true
		e.mu.Unlock()
	}
	return nil
}

// mergeJournal copies a job's new language-model answers into the index.
func (e *Executor) mergeJournal(ctx context.Context, h *handle) (int, error) {
	rs, err := remote.ReadJournal(h.path(".requests.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil && len(rs) == 0 {
		return 0, err
	}
	return e.st.PutRequests(ctx, rs)
}

// record writes a finished job's run into the index (a run no stage of
// this pass claimed: an adopted job, or one that finished after its node
// was found cached). Its objects must be there.
func (e *Executor) record(ctx context.Context, spec *remote.Spec, o *remote.Outcome) error {
	for _, out := range o.Outputs {
		if _, err := os.Stat(e.st.ObjectPath(out.Digest)); err != nil {
			return nil // gone (gc?): nothing to record; the stage runs again when needed
		}
	}
	if outs, err := e.st.Outputs(ctx, o.Key); err == nil && outs != nil {
		return nil // recorded already
	}
	partial := spec != nil && spec.Partial
	return e.st.Record(ctx, &store.Run{
		Key: o.Key, Type: o.Type, NodeID: o.Node, Version: o.Version, Params: o.Params,
		Inputs: o.Inputs, Seed: o.Seed, Seeded: o.Seeded, Duration: o.Duration,
		Device: o.Device, Backend: o.Backend, ReproVersion: e.cfg.Version, Partial: partial,
		Outputs: o.Outputs, Host: o.Host,
	})
}

// identityOf is a node's static identity (graph.Identities) with the
// backend: what a later coordinator matches a still-running job by.
func identityOf(static, backend string) string {
	sum := blake3.Sum256([]byte(static + "\x00" + backend))
	return hex.EncodeToString(sum[:])
}

// Start submits every stage the pass will run (see Layout) except those
// decided at run time (Deferred: rounds of repeat ... until), claiming jobs
// an earlier coordinator left running for the same nodes instead of
// submitting them again. A submission that fails leaves its stages (and
// what depends on them) to Execute, which submits them one by one and
// reports the error per stage.
func (e *Executor) Start(ctx context.Context, pass *runner.Pass) error {
	ids, err := pass.Graph.Identities()
	if err != nil {
		return err
	}
	if pass.Backend == "" {
		p := *pass
		p.Backend = "cpu" // what keys mean by none; identities must agree
		pass = &p
	}
	e.mu.Lock()
	e.pass = pass
	e.byNode = map[string]*handle{}
	e.identity = map[string]string{}
	for id, s := range ids {
		e.identity[id] = identityOf(s, pass.Backend)
	}
	claimed := map[string]string{}
	for _, pe := range pass.Plan {
		if pe.Status != runner.PlanRun {
			continue
		}
		ident := e.identity[pe.ID]
		for len(e.adoptable[ident]) > 0 {
			h := e.adoptable[ident][0]
			e.adoptable[ident] = e.adoptable[ident][1:]
			if h.final && (h.out == nil || !h.out.OK()) {
				continue
			}
			e.byNode[pe.ID] = h
			claimed[pe.ID] = h.id
			break
		}
	}
	e.mu.Unlock()
	jobs := Layout(pass.Graph, pass.Plan, LayoutOptions{Backend: pass.Backend, Adopted: claimed, MaxArray: e.cfg.MaxArray,
		Later: Deferred(pass.Graph, pass.Plan)})
	entries := map[string]runner.PlanEntry{}
	for _, pe := range pass.Plan {
		entries[pe.ID] = pe
	}
	// A job whose submission failed, or that is beyond the bound, is left
	// to Execute, and so is everything depending on it.
	failed := map[*PlannedJob]bool{}
	tasks := 0
	for _, j := range jobs {
		blocked := tasks+len(j.Nodes) > e.cfg.Ahead
		for _, d := range j.After {
			if failed[d.Job] {
				blocked = true
			}
		}
		if blocked {
			failed[j] = true
			continue
		}
		tasks += len(j.Nodes)
		if err := e.submit(ctx, j, entries, nil); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failed[j] = true
		}
	}
	return nil
}

// submit writes the specs and script of a planned job and submits it.
// inputs, when not nil, are the concrete inputs of a single stage whose
// upstream is done (a submission from Execute).
func (e *Executor) submit(ctx context.Context, j *PlannedJob, entries map[string]runner.PlanEntry, job *runner.Job) error {
	e.mu.Lock()
	e.nsub++
	sub := e.nsub
	pass := e.pass
	e.mu.Unlock()
	stem := fmt.Sprint(sub)
	var handles []*handle
	sendsRequests := false
	for _, n := range j.Nodes {
		sendsRequests = sendsRequests || n.Type.Requests != nil
	}
	snapshot := ""
	if sendsRequests {
		snapshot = filepath.Join(e.dir, stem+".requests.db")
		if _, err := e.st.SnapshotRequests(ctx, snapshot); err != nil {
			return err
		}
	}
	for t, n := range j.Nodes {
		h := &handle{node: n.ID, identity: e.identity[n.ID], dir: e.dir, stem: stem, notify: make(chan struct{})}
		if j.Array() {
			h.stem = fmt.Sprintf("%s.%d", stem, t)
		}
		params, err := graph.CanonicalParams(n.Params)
		if err != nil {
			return err
		}
		spec := &remote.Spec{Node: n.ID, Source: n.Source, Type: n.Type.Name, Version: n.Type.Version,
			Params: params, Seed: n.Seed, Backend: pass.Backend, Identity: h.identity, GPUs: j.GPUs,
			Store: e.st.Dir(), Outcome: h.path(".outcome.json"), Progress: h.path(".progress.json"),
			Journal: h.path(".requests.jsonl"), Requests: snapshot, Partial: pass.Partial,
			Inputs: map[string]remote.Input{}}
		if job != nil {
			spec.Key = job.Key
			for port, a := range job.Inputs {
				spec.Inputs[port] = remote.Input{Kind: string(a.Kind), Digest: a.Digest, Node: n.Inputs[port].Node}
			}
		} else {
			spec.Key = entries[n.ID].Key
			for port, edge := range n.Inputs {
				in, err := e.input(ctx, pass, entries, n, port, edge)
				if err != nil {
					return err
				}
				spec.Inputs[port] = in
			}
		}
		h.ahead = spec.Key == ""
		h.spec = spec
		if err := remote.WriteJSON(h.path(".spec.json"), spec); err != nil {
			return err
		}
		handles = append(handles, h)
	}
	script := filepath.Join(e.dir, stem+".sh")
	if err := os.WriteFile(script, []byte(e.script(j, stem)), 0o755); err != nil {
		return err
	}
	logName := "slurm-%j.out"
	if j.Array() {
		logName = "slurm-%A_%a.out"
	}
	args := []string{
		"--job-name=" + j.Name(),
		"--comment=repro:" + e.runID + "/" + stem,
		"--output=" + filepath.Join(e.st.Dir(), "logs", logName),
		"--open-mode=append", // a requeued job appends to its log
		"--chdir=" + e.cwd,
		"--kill-on-invalid-dep=yes", // a job whose input failed is cancelled, not left pending forever
	}
	if dep := j.Dependency(); dep != "" {
		args = append(args, "--dependency="+dep)
	}
	args = append(args, j.ResourceArgs()...)
	args = append(args, e.cfg.SiteArgs()...)
	id, err := e.cli.submit(ctx, args, script)
	if err != nil {
		return err
	}
	j.id = id
	_ = os.WriteFile(filepath.Join(e.dir, stem+".jobid"), []byte(id+"\n"), 0o644)
	e.mu.Lock()
	for t, h := range handles {
		h.id = id
		if j.Array() {
			h.id = fmt.Sprintf("%s_%d", id, t)
		}
		e.handles = append(e.handles, h)
		e.byNode[h.node] = h
	}
	e.mu.Unlock()
	return nil
}

// input is one input of an ahead spec: the digest of a cached upstream
// output, or the outcome file of the upstream's job.
func (e *Executor) input(ctx context.Context, pass *runner.Pass, entries map[string]runner.PlanEntry, n *graph.Node, port string, edge graph.Edge) (remote.Input, error) {
	up := pass.Graph.Node(edge.Node)
	kind := ""
	if up != nil {
		if p, ok := up.Type.Output(edge.Output); ok {
			kind = string(p.Kind)
		}
	}
	in := remote.Input{Kind: kind, Node: edge.Node, Output: edge.Output}
	pe := entries[edge.Node]
	if pe.Status == runner.PlanCached && pe.Key != "" {
		outs, err := e.st.Outputs(ctx, pe.Key)
		if err != nil {
			return in, err
		}
		a, ok := outs[edge.Output]
		if !ok {
			return in, fmt.Errorf("stage %q: input %q: stage %q has no output %q in the cache", n.ID, port, edge.Node, edge.Output)
		}
		in.Digest = a.Digest
		return in, nil
	}
	e.mu.Lock()
	h := e.byNode[edge.Node]
	e.mu.Unlock()
	if h == nil {
		return in, fmt.Errorf("stage %q: input %q: stage %q has no job", n.ID, port, edge.Node)
	}
	in.From = h.path(".outcome.json")
	return in, nil
}

// script is the job's shell script: it names the spec of its task and the
// job's log, and runs repro in stage mode.
func (e *Executor) script(j *PlannedJob, stem string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	fmt.Fprintf(&b, "# repro %s: %s\n", e.runID, strings.Join(nodeIDs(j.Nodes), ", "))
	if j.Array() {
		fmt.Fprintf(&b, "REPRO_JOB_ID=\"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"\n")
		fmt.Fprintf(&b, "spec=%s\"$SLURM_ARRAY_TASK_ID\"%s\n", shellQuote(filepath.Join(e.dir, stem)+"."), shellQuote(".spec.json"))
	} else {
		fmt.Fprintf(&b, "REPRO_JOB_ID=\"$SLURM_JOB_ID\"\n")
		fmt.Fprintf(&b, "spec=%s\n", shellQuote(filepath.Join(e.dir, stem+".spec.json")))
	}
	fmt.Fprintf(&b, "REPRO_JOB_LOG=%s\"$REPRO_JOB_ID\"%s\n", shellQuote(filepath.Join(e.st.Dir(), "logs", "slurm-")), shellQuote(".out"))
	b.WriteString("export REPRO_JOB_ID REPRO_JOB_LOG\n")
	fmt.Fprintf(&b, "exec %s stage-exec \"$spec\"\n", shellQuote(e.repro))
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func nodeIDs(ns []*graph.Node) []string {
	ids := make([]string, len(ns))
	for i, n := range ns {
		ids[i] = n.ID
	}
	return ids
}

// Execute runs one stage: it claims the job submitted for the node (ahead
// of time, or adopted from an earlier coordinator) or submits one, follows
// it in the queue -- its state and the stage's own progress go to
// job.Progress -- and returns its outputs once the job reports them. A job
// that ends otherwise is an error with its state, exit code and the tail
// of its log. On cancellation the job is cancelled (scancel).
func (e *Executor) Execute(ctx context.Context, job *runner.Job) (*runner.Outcome, error) {
	e.mu.Lock()
	h := e.byNode[job.Node.ID]
	if h != nil && h.claimed {
		h = nil // a second pass: that job was this node's in an earlier one
	}
	if h != nil {
		h.claimed = true
	}
	e.mu.Unlock()
	resubmitted := false
	resubmit := func(why string) error {
		if resubmitted {
			return fmt.Errorf("%s", why)
		}
		resubmitted = true
		j := &PlannedJob{N: 1, Nodes: []*graph.Node{job.Node}, Needs: job.Node.Needs()}
		if job.Device.Backend == "cuda" {
			j.GPUs = j.Needs.GPUs
		}
		if err := e.submit(ctx, j, nil, job); err != nil {
			return err
		}
		e.mu.Lock()
		h = e.byNode[job.Node.ID]
		h.claimed = true
		e.mu.Unlock()
		return nil
	}
	if h == nil {
		if err := resubmit(""); err != nil {
			return nil, err
		}
	}
	lastStatus := ""
	for {
		e.mu.Lock()
		notify, final, out, failure, q, prog, inQueue := h.notify, h.final, h.out, h.failure, h.q, h.prog, h.inQueue
		e.mu.Unlock()
		if final {
			if err := e.settleMerge(ctx, h); err != nil {
				return nil, err
			}
			if out != nil && out.OK() {
				if out.Key != job.Key {
					// A run of another key (an input read differently):
					// keep it, and run this one.
					e.settle(context.WithoutCancel(ctx), h)
					if err := resubmit(fmt.Sprintf("slurm job %s computed key %s, the coordinator expects %s", h.id, out.Key, job.Key)); err != nil {
						return nil, err
					}
					continue
				}
				for _, o := range out.Outputs {
					if _, err := os.Stat(e.st.ObjectPath(o.Digest)); err != nil {
						return nil, fmt.Errorf("slurm job %s reported output %q, which is not in the store: %v", h.id, o.Port, err)
					}
				}
				e.mu.Lock()
				h.recorded = true // the scheduler records it now
				e.mu.Unlock()
				return &runner.Outcome{Outputs: out.Outputs, Duration: out.Duration, Device: out.Device, Host: out.Host}, nil
			}
			if h.adopted || dependencyFailed(q) {
				// An earlier coordinator's job that did not finish, or a
				// job cancelled because another input of its array
				// failed: this node's inputs are all here, so run it now.
				if err := resubmit(e.failureText(h, out, failure, q)); err != nil {
					return nil, err
				}
				continue
			}
			return nil, errors.New(e.failureText(h, out, failure, q))
		}
		if status := e.status(h, q, inQueue, prog); status != lastStatus || prog != nil {
			done, total := 0, 0
			if prog != nil && q.State == "RUNNING" {
				done, total = prog.Done, prog.Total
			}
			job.Progress.Update(done, total, status)
			lastStatus = status
		}
		select {
		case <-ctx.Done():
			e.cancel(h)
			return nil, ctx.Err()
		case <-notify:
		}
	}
}

func (e *Executor) settleMerge(ctx context.Context, h *handle) error {
	e.mu.Lock()
	merged := h.merged
	e.mu.Unlock()
	if merged {
		return nil
	}
	if _, err := e.mergeJournal(context.WithoutCancel(ctx), h); err != nil {
		return fmt.Errorf("merging the language-model answers of slurm job %s: %w", h.id, err)
	}
	e.mu.Lock()
	h.merged = true
	e.mu.Unlock()
	return nil
}

func dependencyFailed(q queued) bool {
	return strings.HasPrefix(q.Reason, "Dependency") || q.Reason == "DependencyNeverSatisfied"
}

// status is the progress line of a job that has not ended.
func (e *Executor) status(h *handle, q queued, inQueue bool, prog *remote.Progress) string {
	e.mu.Lock()
	qerr := e.queueErr
	e.mu.Unlock()
	switch {
	case qerr != nil:
		return fmt.Sprintf("slurm job %s: cannot read the queue (%v); retrying", h.id, qerr)
	case !inQueue:
		return fmt.Sprintf("slurm job %s submitted", h.id)
	case q.State == "RUNNING":
		s := fmt.Sprintf("slurm job %s on %s", h.id, q.Node)
		if prog != nil && prog.Status != "" {
			s += ": " + prog.Status
		}
		return s
	case q.State == "PENDING" && q.Reason != "":
		return fmt.Sprintf("slurm job %s pending (%s)", h.id, q.Reason)
	}
	return fmt.Sprintf("slurm job %s %s", h.id, strings.ToLower(q.State))
}

// failureText says how a job ended without outputs: state, exit code,
// reason, the job's own error and the tail of its log.
func (e *Executor) failureText(h *handle, out *remote.Outcome, failure string, q queued) string {
	var b strings.Builder
	state := q.State
	if state == "" {
		state = "ended"
	}
	fmt.Fprintf(&b, "slurm job %s %s", h.id, state)
	if q.Node != "" {
		fmt.Fprintf(&b, " on %s", q.Node)
	}
	if q.Exit != "" {
		fmt.Fprintf(&b, ", exit code %s", q.Exit)
	}
	if q.Reason != "" {
		fmt.Fprintf(&b, " (%s)", q.Reason)
	}
	switch {
	case out != nil && out.Error != "":
		fmt.Fprintf(&b, ": %s", out.Error)
	case failure != "":
		fmt.Fprintf(&b, ": %s", failure)
	}
	log := e.jobLog(h)
	if tail := tailLines(log, 12); tail != "" {
		fmt.Fprintf(&b, "\n    job log %s:\n", log)
		for _, l := range strings.Split(tail, "\n") {
			fmt.Fprintf(&b, "      | %s\n", l)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// jobLog is the path of the job's own log (Slurm's --output).
func (e *Executor) jobLog(h *handle) string {
	return filepath.Join(e.st.Dir(), "logs", "slurm-"+h.id+".out")
}

// tailLines returns the last n lines of a file ("" if unreadable).
func tailLines(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const window = 64 << 10
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-window, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// cancel cancels a job that has not ended.
func (e *Executor) cancel(hs ...*handle) {
	var ids []string
	e.mu.Lock()
	for _, h := range hs {
		if h != nil && h.id != "" && !h.final && !h.cancelled {
			h.cancelled = true
			ids = append(ids, h.id)
		}
	}
	e.mu.Unlock()
	_ = e.cli.cancel(context.Background(), ids)
}

// Release cancels the job submitted ahead for a node that the scheduler
// is done with without having executed it (found cached, or an input
// failed).
func (e *Executor) Release(nodeID string) {
	e.mu.Lock()
	h := e.byNode[nodeID]
	unclaimed := h != nil && !h.claimed
	e.mu.Unlock()
	if unclaimed {
		e.cancel(h)
	}
}

// Stop ends a pass: every job of it that no stage claimed is cancelled.
func (e *Executor) Stop() {
	e.mu.Lock()
	var left []*handle
	for _, h := range e.byNode {
		if !h.claimed {
			left = append(left, h)
		}
	}
	e.byNode = map[string]*handle{}
	e.mu.Unlock()
	e.cancel(left...)
}

var _ runner.Cluster = (*Executor)(nil)
