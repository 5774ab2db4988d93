// Package runner decides what of a pipeline must run and runs it: it
// computes each node's key from its inputs' digests, looks the key up in the
// store (package store), explains why a node is stale (Plan), and schedules
// the rest in dependency order through an Executor, recording each finished
// run in the store. It knows nothing of HCL or of sentence embeddings: the
// application layer (package experiment) builds the graph (package graph)
// from the dsl's evaluation and renders what the runner reports.
//
// # Using it
//
//	st, err := store.Open(".repro")                    // creates the cache if needed
//	defer st.Close()
//	plan, err := runner.Plan(ctx, st, g, scope)        // what would run, and why
//	res, err := runner.Run(ctx, st, g, runner.Options{Scope: scope, Events: show})
//	m := res.Node("eval").Outputs["metrics"].Path("metrics.json")
//
// Run returns a *RunError (listing failed and skipped nodes with their log
// files) when any node did not finish; the CLI prints it and exits 1. After
// Ctrl-C the error also unwraps to context.Canceled.
//
// A scope is a string the application layer chooses per experiment run
// (file + profile + variant). The store keeps, per scope and node ID, the
// key, parameters, input digests and version of the node's last finished or
// cached run; Plan compares against it to say why a node is stale
// ("parameter top_k changed (3 -> 4)"), and GC keeps what those records name.
//
// # Executors
//
// The scheduler decides what must run; an Executor runs one stage and
// reports the objects it stored; the scheduler then records the run (one
// SQLite transaction). Local, the default, runs stages in this process; a
// Cluster executor (runner/slurm) runs them as batch jobs that write into a
// shared store (runner/remote is the job's side), while only this
// coordinating process writes the index. A Cluster sees each pass's plan
// first, to submit what will run ahead of its inputs, and its stages take
// no local device or -j slots.
//
// # Keys
//
// graph.Key states what a key holds. The runner supplies its inputs: the
// digests of the input artifacts and of the files outside the store that a
// stage reads (registry.StageType.Externals, hashed by content with a stat
// cache, store.HashPath), so a changed file re-runs the stage, a missing
// one fails it, and `repro plan` names the file.
//
// Before a stage runs, its input objects are re-hashed: a damaged one is
// quarantined (store.Quarantine), the run is skipped, and another pass of
// Run recomputes the object from its stage before running the dependant.
//
// # Concurrency
//
// Two processes on one cache: each key has a lock in the store
// (store.LockKey), taken before a stage runs and held until it is
// recorded; a process that finds it taken waits, then re-reads the index
// and usually finds the result cached. A run holds the store lock shared,
// so GC (exclusive) never removes what it uses.
//
// Within a Run, independent nodes run in parallel on Options.Jobs slots
// (default runtime.NumCPU()); a node takes as many slots as the cores its
// resources declare (graph.Node.Needs: a stage block's `resources { cpus
// = N }`, default 1). Devices: a node whose resources ask for a GPU gets
// one of the GPUs in Options.Devices ("cuda:0", ...), one stage per GPU at
// a time; without a GPU it runs on "cpu". Tensor stages on the CPU run at
// most Options.CPUTensorJobs at once, default 1: the tensor backend
// already spreads each matrix operation over every core, so two tensor
// stages at once on a small machine only split the same cores, double
// peak memory and thrash the caches, while finishing one first also
// unblocks its dependants earlier. Two kinds of stage still run beside a
// tensor stage: non-tensor stages (data preparation, text processing), and,
// when Jobs >= 2, one light tensor stage (registry.StageType.Light: the
// evaluations), in a lane of its own, so that a cell whose evaluation is
// ready does not wait for a long training to end (a run stopped early keeps
// it). The device is in the stage's Env and in the run's provenance; the
// Local executor binds the tensor backend to it, and tensor stages on the
// CPU share one binding (see Local for why that is safe and bit-identical,
// and why stages on different devices wait for each other).
//
// # The mirror
//
// Options.Mirror (a store.Mirror: recorded runs published with the
// repository) is consulted on a cache miss, under the key's lock: a node
// whose key it holds is imported, each output verified against its digest,
// recorded with the mirror's provenance, and reported cached (NodeResult.
// Mirror; EventCached with Status "mirror"); a damaged object is refused
// with an EventWarning and the stage runs. Plan says PlanMirror for such a
// node, also when its key waits for a deterministic stage that will run
// (ReasonMirror says what it assumes that stage writes). See mirror.go.
//
// A failing stage does not stop the stages that do not depend on it; its
// dependants are skipped. A panic in a stage is recovered and reported as
// that stage's failure, with the stack in its log. On cancellation running
// stages get the cancelled context, Run waits for them, removes their
// temporary outputs and records nothing for them; a stage that returns
// nil after cancellation is also treated as cancelled, since it may have
// cut its work short.
//
// # Rounds decided at run time
//
// A graph.Loop (a repeat block with `until`) is decided while the graph
// runs: a node of round r waits for the decision after round r-1 and does
// not run once the loop has stopped (StatusStopped, EventStopped; neither
// an error nor recorded), and a node outside the loop that reads its last
// round reads the selected (best) round instead. Result.Loops and the
// EventDecided event say how each loop ended; Plan (PlanDetailed) makes
// the same decision from what is cached. See loop.go.
//
// # Events
//
// Options.Events receives EventWaiting, EventCached, EventRunning (start,
// then the stage's own progress: done/total/status with an ETA from the
// rate since its first report, throttled to one per ProgressInterval),
// EventDone, EventFailed, EventSkipped and EventWarning. Calls are serialised.
package runner
