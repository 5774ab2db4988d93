// Package store is repro's cache: a content-addressed object store of
// artifacts, the SQLite index of stage runs (provenance), each experiment
// scope's last-run records and saved reports, per-key and store-wide locks,
// and its maintenance (list, verify, gc). It stores; it does not execute:
// package runner decides what runs, its executors run stages and write
// objects with PutObject, and only the coordinating process records runs in
// the index (Record), which a cluster executor relies on (SQLite over a
// network file system is unsafe; objects are plain renamed directories).
//
// # Layout
//
//	index.db              SQLite index (WAL): runs, outputs, objects, last_runs, reports,
//	                      llm_requests (language-model answers, see requests.go)
//	objects/ab/<digest>/  finished artifacts, one directory per output, read-only files
//	tmp/<key>-<random>/   outputs being written by a running stage
//	work/<key>/           Env.Work: resumable state, removed once the run is stored
//	logs/<key>.log        the log of the latest attempt at that key
//	logs/<key>.<time>.log an earlier attempt's log, kept by the next attempt
//	locks/<key>, locks/gc flock files
//	quarantine/<digest>.<ns> objects found damaged, with a .why note
//	logs/slurm-<job>.out  a cluster job's own log (runner/slurm)
//	slurm/                the cluster coordinator's lock and its jobs' specs,
//	                      outcomes and request journals (runner/slurm)
//	requests/claims/<key> language-model requests in flight, claimed by a
//	                      job or a run (shared.go: jobs cannot see llm_claims)
//	requests/answers/<key> their answers, published for those that waited;
//	                      merged into the index when the cache is idle
//
// The index also keeps file_hashes, the stat cache of external inputs
// (HashPath), and is opened read-only (OpenReadOnly) by commands that only
// read, so they work on a shared or read-only cache and create nothing.
//
// # Crash safety
//
// A stage writes its outputs under tmp/. When it succeeds, PutObject walks
// each output: every file is hashed and fsynced (and its directory), the
// digest is BLAKE3 of a manifest of relative paths, sizes and per-file
// BLAKE3 hashes (DigestDir), and the directory is renamed to
// objects/<2 hex>/<digest> (if that exists, same digest means same
// content, and the copy is dropped). Only then does ONE SQLite transaction
// (Record) write the run, its outputs and its scope record. A kill at any
// moment leaves either no row (the stage re-runs; an orphan object or temp
// dir is harmless and removed by GC) or the complete row with durable
// objects. Objects are never modified in place, so nothing half-written is
// ever under objects/.
//
// SQLite runs with synchronous=NORMAL rather than FULL: in WAL mode NORMAL
// loses no committed transaction on a process crash and never corrupts the
// database; a power loss may roll back the last commits, which here only
// means re-running a stage whose fsynced outputs are then found already
// stored. FULL would add an fsync per stage for nothing.
//
// # Concurrency
//
// Each key has an flock lock (LockKey), taken before a stage runs and held
// until it is recorded; a process that finds it taken waits, then re-reads
// the index and usually finds the result cached. The kernel drops flock
// locks when a process dies, so kill -9 cannot leave a stale lock. A run
// holds the store lock (LockStore) shared and GC takes it exclusively, so GC
// never removes what a running pipeline uses.
//
// # Mirror
//
// A mirror (mirror.go) is a read-only, content-addressed copy of recorded
// runs published with a repository: index.json (key, stage, type, version,
// parameters, input digests, provenance, outputs with digest, size and
// compressed size) and objects/<digest>.tar.gz. ImportMirrorObject brings
// one artifact into a cache only when what it unpacks to hashes to the
// recorded digest (through tmp/ and PutObject, as any output); a damaged
// archive is a *MirrorError and changes nothing. RefreshMirror publishes
// runs of a cache within a budget of compressed bytes (DefaultMirrorBudget,
// 128 MiB), refusing with a *BudgetError and changing nothing when over it.
//
// # Garbage collection
//
// GC keeps by default: runs named by any scope's last-run records (the
// latest state of every experiment, so switching back to it costs
// nothing), every run younger than DefaultKeepNewer (a week), and for the
// kept runs a producer of each of their inputs. Everything else is
// forgotten in one transaction first, then unreferenced objects, abandoned
// temp dirs, stale work dirs, logs and lock files are deleted.
package store
