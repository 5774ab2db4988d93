package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"repro/graph"
	"repro/registry"
	"repro/store"
)

// Executor runs one stage instance somewhere and reports the objects it
// stored. The scheduler has already decided that the job must run, holds
// the lock of its key, and records the outcome in the index afterwards: an
// executor writes the job's outputs into the store as objects
// (store.PutObject) and never writes the index. That split is the seam a
// cluster executor plugs into: its job runs elsewhere, writes objects into
// a shared store, and only the coordinating process touches SQLite.
type Executor interface {
	Execute(ctx context.Context, job *Job) (*Outcome, error)
}

// Job is one stage run to execute.
type Job struct {
	Node   *graph.Node
	Key    string
	Params []byte // canonical parameters (what the key hashed)
	Inputs map[string]registry.Artifact
	// Device is where it runs ("cpu", "cuda:N") and the run's declared
	// tensor backend family.
	Device registry.Device
	// Log is the file the stage's log goes to.
	Log      string
	Progress registry.Progress
}

// Outcome is what an executed job stored.
type Outcome struct {
	Outputs []store.Output
	// Duration of the stage itself (0: the scheduler's wall time is used).
	Duration time.Duration
	// Device and Host say where the stage ran when the executor chose it
	// (a cluster job); "" keeps the scheduler's device and this host.
	Device, Host string
}

// Local runs stages in this process.
//
// Tensor operators dispatch through one process-wide backend
// (internal/tensor/backend.Current), so a process computes on one device
// at a time: when Bind is set, Local binds each tensor stage's device (and
// backend family) before it starts, and a stage that needs another binding
// waits until every stage using the current one has finished. Tensor
// stages on the CPU with the same CPU backend share one binding and run
// at once when the scheduler lets them (a light stage beside a heavy one):
// the CPU backends are safe to call from several goroutines and give the
// same bits whatever runs beside them (fixed partitions and reduction
// orders, no global generator: dropout draws from each model's own
// *rand.Rand), and the tensor package's buffer free lists
// (internal/tensor/arena.go) hand each buffer to one holder at a time and
// never let a value depend on which buffer it got (zeroed, or written
// whole before it is read). Stages on several GPUs at once need one process
// per GPU -- the stage mode that a cluster executor runs -- rather than
// threads sharing a global. Non-tensor stages run beside them freely.
type Local struct {
	Store *store.Store
	// Bind, when set, is called before a tensor stage runs with the device
	// the scheduler assigned; it selects the tensor backend for it and
	// returns a function that releases it.
	Bind func(registry.Device) (release func(), err error)
	// Requests, when set, is the language-model request cache the stages
	// get instead of the store's index (a cluster job's journal).
	Requests registry.RequestStore
	// LogCopy, when set, also receives everything written to each stage's
	// log (a cluster job copies it to the job's own log).
	LogCopy io.Writer

	// The current binding: its device, how many stages use it, and how to
	// release it; stages that wait for a binding take tickets and are
	// served in order.
	bmu              sync.Mutex
	bcond            *sync.Cond
	bdev             registry.Device
	busers           int
	brelease         func()
	bticket, bserved int
}

// shareable reports whether stages on d may share one binding: the CPU,
// with a CPU backend (the CUDA backend's device state is not shared).
func shareable(d registry.Device) bool {
	return (d.Name == "cpu" || d.Name == "") && d.Backend != "cuda"
}

// bind binds d for one stage and returns the stage's release. A stage
// joins the current binding when it is d's and shareable and no stage
// waits; otherwise it waits its turn (first come, first served), then
// joins the binding then current if it can, or binds d once the current
// one is released. So a stage that needs a GPU is not starved by CPU
// stages that keep sharing.
func (l *Local) bind(d registry.Device) (func(), error) {
	l.bmu.Lock()
	defer l.bmu.Unlock()
	if l.bcond == nil {
		l.bcond = sync.NewCond(&l.bmu)
	}
	joins := func() bool { return l.busers > 0 && shareable(d) && l.bdev == d }
	if !(joins() && l.bserved == l.bticket) {
		turn := l.bticket
		l.bticket++
		for l.bserved != turn || (l.busers > 0 && !joins()) {
			l.bcond.Wait()
		}
		l.bserved++
		l.bcond.Broadcast() // the next ticket may join what this one binds
	}
	if l.busers == 0 {
		release, err := l.Bind(d)
		if err != nil {
			return nil, err
		}
		l.bdev, l.brelease = d, release
	}
	l.busers++
	return func() {
		l.bmu.Lock()
		defer l.bmu.Unlock()
		l.busers--
		if l.busers == 0 {
			l.brelease()
			l.brelease = nil
			l.bcond.Broadcast()
		}
	}, nil
}

// Execute runs the job's stage with its outputs in a fresh temporary
// directory, then seals each output into the store.
func (l *Local) Execute(ctx context.Context, job *Job) (*Outcome, error) {
	n := job.Node
	tmp := l.Store.TempDir(job.Key)
	defer store.RemoveAll(tmp) // after success the outputs have been renamed away
	outputs := map[string]string{}
	for _, p := range n.Type.Outputs {
		d := filepath.Join(tmp, p.Name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		outputs[p.Name] = d
	}
	work := l.Store.WorkDir(job.Key)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	// A re-run keeps the log of the attempt before it (a failure's log is
	// what the user needs after retrying).
	prev, err := store.KeepLog(job.Log)
	if err != nil {
		return nil, err
	}
	lf, err := os.Create(job.Log)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	var logf io.Writer = lf
	if l.LogCopy != nil {
		logf = io.MultiWriter(lf, l.LogCopy)
	}
	fmt.Fprintf(logf, "# stage %s (%s v%d) key %s device %s started %s\n",
		n.ID, n.Type.Name, n.Type.Version, job.Key, job.Device.Name, time.Now().Format(time.RFC3339))
	if prev != "" {
		fmt.Fprintf(logf, "# the previous attempt's log: %s\n", prev)
	}
	if n.Type.Tensor && l.Bind != nil {
		release, err := l.bind(job.Device)
		if err != nil {
			fmt.Fprintf(logf, "# FAILED: device %s: %v\n", job.Device.Name, err)
			return nil, fmt.Errorf("device %s: %w", job.Device.Name, err)
		}
		defer release()
	}
	requests := l.Requests
	if requests == nil {
		if requests, err = l.Store.Requests(); err != nil {
			return nil, err
		}
	}
	env := &registry.Env{
		Requests:  requests,
		Stage:     n.ID,
		StageKey:  job.Key,
		Inputs:    job.Inputs,
		Outputs:   outputs,
		Work:      work,
		Seed:      n.Seed,
		Device:    job.Device,
		Progress:  job.Progress,
		Log:       slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		LogWriter: logf,
	}
	start := time.Now()
	err = callStage(ctx, n, env, logf)
	dur := time.Since(start)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err == nil {
		err = checkOutputs(outputs)
	}
	if err != nil {
		fmt.Fprintf(logf, "# FAILED after %s: %v\n", dur.Round(time.Millisecond), err)
		return nil, err
	}
	out := &Outcome{Duration: dur}
	for _, p := range n.Type.Outputs {
		digest, size, err := l.Store.PutObject(outputs[p.Name])
		if err != nil {
			return nil, fmt.Errorf("storing output %q: %w", p.Name, err)
		}
		out.Outputs = append(out.Outputs, store.Output{Port: p.Name, Kind: string(p.Kind), Digest: digest, Size: size})
	}
	store.RemoveAll(work)
	fmt.Fprintf(logf, "# done in %s\n", dur.Round(time.Millisecond))
	return out, nil
}

// callStage decodes the parameters and calls the stage's Run, turning a
// panic into an error with the stack written to the stage's log.
func callStage(ctx context.Context, n *graph.Node, env *registry.Env, log io.Writer) (err error) {
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
	return n.Type.Call(ctx, env)
}

// checkOutputs refuses outputs left empty: every artifact kind holds at
// least one file, so an empty output is a bug in the stage, and caching it
// would hide the bug until a downstream stage trips on it.
func checkOutputs(outputs map[string]string) error {
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
