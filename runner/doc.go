// Package runner runs a pipeline (a Graph of stage instances) against a
// content-addressed cache, so that a stage runs only when something it
// depends on has changed. It knows nothing of HCL or of sentence
// embeddings: the CLI builds a Graph from the dsl's stages and renders what
// the runner reports.
//
// # Using it
//
//	c, err := runner.Open(".repro")                   // creates the cache if needed
//	defer c.Close()
//	plan, err := c.Plan(ctx, g, scope)                // what would run, and why
//	res, err := c.Run(ctx, g, runner.Options{Scope: scope, Events: show})
//	m := res.Node("eval").Outputs["metrics"].Path("metrics.json")
//	err = c.SaveReport(ctx, scope, reportJSON)        // LatestReport reads it back
//	runs, err := c.List(ctx)                          // repro cache ls
//	problems, err := c.Verify(ctx)                    // repro cache verify
//	stats, err := c.GC(ctx, runner.GCOptions{})       // repro cache gc
//	merged, idMaps, err := runner.Merge(variantGraphs, labels) // ablation grids
//	g.Dot(), g.Mermaid()                              // repro graph
//
// Run returns a *RunError (listing failed and skipped nodes with their log
// files) when any node did not finish; the CLI prints it and exits 1. After
// Ctrl-C the error also unwraps to context.Canceled.
//
// A scope is a string the CLI chooses per experiment run (file + profile +
// variant). The runner keeps, per scope and node ID, the key, parameters,
// input digests and version of the node's last finished or cached run;
// Plan compares against it to say why a node is stale ("parameter top_k
// changed (3 -> 4)"), and GC keeps what those records name.
//
// # Keys
//
//	key = BLAKE3(type name, type version, canonical parameters,
//	             input port -> input artifact DIGEST, seed if Type.Seeded)
//
// Input digests, not upstream keys: when an upstream stage re-runs and
// writes the same bytes, its dependants stay cached (early cut-off). The
// node ID is not in the key, so renaming a stage costs nothing. Canonical
// parameters are the complete cty object (defaults filled by the dsl) as
// JSON with sorted keys, and numbers normalised to what the stage decodes
// (see CanonicalParams).
//
// # Store and crash safety
//
// Layout of a cache directory:
//
//	index.db              SQLite index (WAL): runs, outputs, objects, last_runs, reports
//	objects/ab/<digest>/  finished artifacts, one directory per output, read-only files
//	tmp/<key>-<random>/   outputs being written by a running stage
//	work/<key>/           Env.Work: resumable state, removed once the run is stored
//	logs/<key>.log        the log of the latest attempt at that key
//	locks/<key>, locks/gc flock files
//
// A stage writes its outputs under tmp/. When it returns nil, each output
// is walked: every file is hashed and fsynced (and its directory), the
// digest is BLAKE3 of a manifest of relative paths, sizes and per-file
// BLAKE3 hashes (DigestDir), and the directory is renamed to
// objects/<2 hex>/<digest> (if that exists, same digest means same
// content, and the copy is dropped). Only then does ONE SQLite transaction
// record the run, its outputs and its scope record. A kill at any moment
// leaves either no row (the stage re-runs; an orphan object or temp dir is
// harmless and removed by GC) or the complete row with durable objects.
// Objects are never modified in place, so nothing half-written is ever
// under objects/. Cached lookups trust the index's digests and only stat
// the object directories: nothing is re-hashed on the hot path.
//
// SQLite runs with synchronous=NORMAL rather than FULL: in WAL mode NORMAL
// loses no committed transaction on a process crash and never corrupts the
// database; a power loss may roll back the last commits, which here only
// means re-running a stage whose fsynced outputs are then found already
// stored. FULL would add an fsync per stage for nothing.
//
// # Concurrency
//
// Two processes on one cache: each key has an flock lock (locks/<key>),
// taken before a stage runs and held until it is recorded; a process that
// finds it taken waits, then re-reads the index and usually finds the
// result cached. The kernel drops flock locks when a process dies, so kill
// -9 cannot leave a stale lock. Run holds a shared lock on locks/gc and GC
// an exclusive one, so GC never removes what a running pipeline uses.
//
// Within a Run, independent nodes run in parallel up to Options.Jobs
// (default runtime.NumCPU()). Tensor stages run one at a time per GPU
// named in Options.Devices; without a GPU they run on "cpu", at most
// Options.CPUTensorJobs at once, default 1: the tensor backend already
// spreads each matrix operation over every core, so two tensor stages at
// once on a small machine only split the same cores, double peak memory
// and thrash the caches, while finishing one first also unblocks its
// dependants earlier. Non-tensor stages (data preparation, text
// processing) still run beside a tensor stage.
//
// A failing stage does not stop the stages that do not depend on it; its
// dependants are skipped. A panic in a stage is recovered and reported as
// that stage's failure, with the stack in its log. On cancellation running
// stages get the cancelled context, Run waits for them, removes their
// temporary outputs and records nothing for them; a stage that returns
// nil after cancellation is also treated as cancelled, since it may have
// cut its work short.
//
// # Events
//
// Options.Events receives EventWaiting, EventCached, EventRunning (start,
// then the stage's own progress: done/total/status with an ETA from the
// rate since its first report, throttled to one per ProgressInterval),
// EventDone, EventFailed and EventSkipped. Calls are serialised.
//
// # Garbage collection
//
// GC keeps by default: runs named by any scope's last-run records (the
// latest state of every experiment, so switching back to it costs
// nothing), every run younger than DefaultKeepNewer (a week), and for the
// kept runs a producer of each of their inputs. Everything else is
// forgotten in one transaction first, then unreferenced objects, abandoned
// temp dirs, stale work dirs, logs and lock files are deleted.
//
// # Variant grids
//
// Merge folds the graphs of an ablation grid into one: nodes with the same
// ID and the same static identity (type, version, parameters, seed and
// identical upstream nodes) are shared; the variants' differing nodes are
// named "ID@label" ("train@top_k=3").
package runner
