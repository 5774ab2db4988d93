package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"repro/graph"
	"repro/registry"
	"repro/runner"
	"repro/store"
)

// ExitRefused is the exit status of a job whose key differs from the
// coordinator's: it did not run the stage.
const ExitRefused = 3

// RefusedError is a job that did not run because the key it computed from
// the declared stage differs from the coordinator's.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "refusing to run: " + e.Reason }

// Exec is the job's side: it runs the stage that the spec at specPath
// declares, stores its outputs in the shared object store and writes the
// outcome file (also when it fails, whenever the spec could be read). log
// receives the job's own messages and a copy of the stage's log (the
// scheduler's log of the job); job is the scheduler's job ID, for the
// outcome. bind selects the tensor backend for a tensor stage's device, as
// in a local run.
func Exec(ctx context.Context, reg *registry.Registry, specPath, job string, log io.Writer,
	bind func(registry.Device) (func(), error)) error {
	spec, err := ReadSpec(specPath)
	if err != nil {
		return err
	}
	// A job that runs again (requeued after preemption) starts afresh: an
	// outcome left by the attempt that was stopped is not this one's.
	if err := os.Remove(spec.Outcome); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	host, _ := os.Hostname()
	out := &Outcome{Node: spec.Node, Type: spec.Type, Version: spec.Version, Params: spec.Params,
		Seed: spec.Seed, Backend: spec.Backend, Host: host, Job: job, Started: time.Now()}
	if f, ok := log.(*os.File); ok {
		out.Log = f.Name()
	}
	if p := os.Getenv("REPRO_JOB_LOG"); p != "" {
		out.Log = p
	}
	err = run(ctx, reg, spec, out, log, bind)
	out.Finished = time.Now()
	if err != nil {
		out.Error = err.Error()
		var re *RefusedError
		out.Refused = errors.As(err, &re)
		fmt.Fprintf(log, "repro stage-exec: %s: %v\n", spec.Node, err)
	}
	if werr := WriteJSON(spec.Outcome, out); werr != nil {
		return errors.Join(err, fmt.Errorf("writing the outcome %s: %w", spec.Outcome, werr))
	}
	return err
}

func run(ctx context.Context, reg *registry.Registry, spec *Spec, out *Outcome, log io.Writer,
	bind func(registry.Device) (func(), error)) error {
	t, ok := reg.Lookup(spec.Type)
	if !ok {
		return &RefusedError{fmt.Sprintf("this repro has no stage type %q (is the cluster's repro binary the coordinator's?)", spec.Type)}
	}
	if t.Version != spec.Version {
		return &RefusedError{fmt.Sprintf("stage type %s is version %d here, version %d for the coordinator (the cluster's repro binary differs)",
			t.Name, t.Version, spec.Version)}
	}
	out.Seeded = t.Seeded
	pv, err := t.ParamsFromJSON(spec.Params)
	if err != nil {
		return &RefusedError{fmt.Sprintf("parameters of %s: %v", t.Name, err)}
	}
	canon, err := graph.CanonicalParams(pv)
	if err != nil {
		return &RefusedError{err.Error()}
	}
	if !bytes.Equal(canon, spec.Params) {
		return &RefusedError{fmt.Sprintf("the parameters do not read back as declared (%s became %s)", spec.Params, canon)}
	}
	node := &graph.Node{ID: spec.Node, Type: t, Params: pv, Seed: spec.Seed, Source: spec.Source}

	st, err := store.OpenObjects(spec.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	// Hold the store lock shared, as a local run does, so that a `repro
	// cache gc` meanwhile does not remove the job's temporary outputs. A
	// file system without locks only loses that protection.
	if gl, err := st.LockStore(ctx, false); err == nil {
		defer gl.Unlock()
	}
	inputs := map[string]registry.Artifact{}
	digests := map[string]string{}
	for _, port := range slices.Sorted(maps.Keys(spec.Inputs)) {
		in := spec.Inputs[port]
		d := in.Digest
		if in.From != "" {
			up, err := ReadOutcome(in.From)
			if err != nil {
				return fmt.Errorf("input %q: the outcome of stage %q: %w", port, in.Node, err)
			}
			if !up.OK() {
				return fmt.Errorf("input %q: stage %q did not finish: %s", port, in.Node, up.Error)
			}
			for _, o := range up.Outputs {
				if o.Port == in.Output {
					d = o.Digest
				}
			}
			if d == "" {
				return fmt.Errorf("input %q: stage %q stored no output %q", port, in.Node, in.Output)
			}
		}
		inputs[port] = registry.Artifact{Kind: registry.Kind(in.Kind), Dir: st.ObjectPath(d), Digest: d}
		digests[port] = d
	}
	// Files outside the store enter the key by content, hashed here: the
	// job reads them, so the job's bytes are what its key must say.
	ext, err := runner.ExternalInputs(ctx, st, node)
	if err != nil {
		return err
	}
	for name, in := range ext {
		digests[name] = in.Digest
	}
	key := graph.KeyOf(node, canon, digests, spec.Backend)
	out.Inputs = digests
	if spec.Key != "" && key != spec.Key {
		return &RefusedError{fmt.Sprintf("the key computed here from the declared stage, backend and inputs is %s, the coordinator's is %s", key, spec.Key)}
	}
	out.Key = key
	fmt.Fprintf(log, "repro stage-exec: stage %s (%s v%d) key %s on %s\n", spec.Node, t.Name, t.Version, key, out.Host)
	// The stage will read its inputs: they must be what their digests say.
	for _, port := range slices.Sorted(maps.Keys(inputs)) {
		if err := st.VerifyObject(inputs[port].Digest); err != nil {
			var ce *store.CorruptError
			if errors.As(err, &ce) {
				st.Quarantine(ctx, ce.Digest, ce.Error())
			}
			return fmt.Errorf("input %q: %w", port, err)
		}
	}

	journal, err := OpenJournal(spec.Journal, spec.Requests)
	if err != nil {
		return err
	}
	defer journal.Close()
	if spec.Requests != "" {
		// A stage that sends requests: concurrent jobs share them.
		journal.Share(st.SharedRequests())
	}
	device := "cpu"
	if spec.GPUs > 0 && os.Getenv("CUDA_VISIBLE_DEVICES") != "" {
		// The scheduler exposes the GPUs it gave the job, renumbered from 0.
		device = "cuda:0"
	}
	out.Device = device
	prog := &progressFile{path: spec.Progress}
	local := &runner.Local{Store: st, Bind: bind, Requests: journal, LogCopy: log}
	res, err := local.Execute(ctx, &runner.Job{
		Node: node, Key: key, Params: canon, Inputs: inputs,
		Device:   registry.Device{Name: device, Backend: spec.Backend},
		Log:      st.LogPath(key),
		Progress: prog,
	})
	prog.flush()
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // a stage that returns nil after cancellation may have cut its work short
	}
	if err != nil {
		return err
	}
	out.Duration, out.Outputs = res.Duration, res.Outputs
	if out.Log != "" {
		if f, err := os.OpenFile(st.LogPath(key), os.O_WRONLY|os.O_APPEND, 0); err == nil {
			fmt.Fprintf(f, "# ran as job %s on %s; the job's log: %s\n", out.Job, out.Host, out.Log)
			f.Close()
		}
	}
	return nil
}

// progressFile implements registry.Progress by keeping the latest update
// in a small JSON file, rewritten at most once a second (and at the end),
// which the coordinator polls.
type progressFile struct {
	path string

	mu      sync.Mutex
	last    Progress
	written time.Time
	dirty   bool
}

func (p *progressFile) Update(done, total int, status string) {
	if p.path == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = Progress{Done: done, Total: total, Status: status, Time: time.Now()}
	p.dirty = true
	if time.Since(p.written) >= time.Second || (total > 0 && done >= total) {
		p.writeLocked()
	}
}

func (p *progressFile) flush() {
	if p.path == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dirty {
		p.writeLocked()
	}
}

func (p *progressFile) writeLocked() {
	if WriteJSON(p.path, p.last) == nil {
		p.written, p.dirty = time.Now(), false
	}
}
