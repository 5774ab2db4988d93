// Package remote is the protocol between a coordinating repro and a stage
// run in another process on another machine -- a batch job under Slurm
// today, any scheduler's job tomorrow. It holds no scheduler code: package
// runner/slurm submits and watches jobs; this package says what a job is
// given and what it gives back, and runs the job's side.
//
// A job is given a Spec (a JSON file on the shared file system): the stage
// as declared -- type, version, canonical parameters, seed -- the tensor
// backend family declared for the run, and for each input either the
// digest of an object already stored or the outcome file of the job that
// will compute it (so a job can be submitted before its inputs exist,
// depending on their jobs). The job, `repro stage-exec SPEC`, rebuilds the
// stage from that declaration with its own registry, reads the input
// digests, hashes its external files, and computes the key itself: never
// from anything about the machine it landed on. When the coordinator knew
// the key, a different one means the job's repro is not the coordinator's
// (another stage version, another parameter encoding) and the job refuses
// to run. It verifies its input objects, runs the stage with the same code
// as a local run (runner.Local), seals its outputs into the shared object
// store (atomic rename), and writes an Outcome: the complete provenance of
// the run, which the coordinator records in the index. A job never opens
// the index (SQLite over NFS is unsafe): the coordinator is its only
// writer.
//
// A stage that commits as it goes -- the language-model request cache --
// gets a Journal instead of the index: lookups go to a read-only snapshot
// of the cache the coordinator wrote before submitting the job, and each
// new answer is appended (and fsynced) to a journal file beside the job,
// which the coordinator merges into the index when the job ends, or when
// the next coordinator adopts it after a crash. A job that is requeued
// (preemption) re-reads its journal and sends nothing twice. Jobs running
// at once (a grid's cells) share their requests through the cache
// directory (store.SharedRequests): a job claims a request in a file
// before sending it, another job that needs it waits, and reads the answer
// the holder publishes beside the claim, so a shared request is paid once.
//
// Progress goes to a small JSON file the coordinator polls.
package remote
