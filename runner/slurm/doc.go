// Package slurm is the Slurm executor: `repro run --executor slurm` runs
// each stage that must run as an sbatch job, with the cache on a file
// system the nodes share and this process -- the coordinator -- as the
// only writer of the index.
//
// Before each pass (runner.Cluster's Start) Layout turns the stages the
// plan says will run into jobs: one per stage, the cells of a grid as job
// arrays, each job depending on its inputs' jobs (afterok; aftercorr from
// one array to the next, cell by cell), and all of it is submitted at once,
// up to Config.Ahead tasks -- except what waits for a decision taken at
// run time (Deferred: the later rounds of repeat ... until and the readers
// of their result), which is submitted when the runner reaches it. The
// scheduler then calls Execute per stage as its inputs are stored; Execute
// claims that stage's job (or submits one) and waits for its outcome file.
// A job runs `repro stage-exec SPEC` (package runner/remote): the
// coordinator never trusts a node's idea of the key, and the node never
// trusts the coordinator's.
//
// Design choices:
//
//   - Only Slurm's client commands (sbatch, squeue, scancel, scontrol,
//     sacct when there is accounting): they are on every login node, and
//     the tests run them against a real throwaway cluster (slurmtest).
//   - One squeue call per poll for every job; pending jobs cost no file
//     read. A job's success is its outcome file; its failure is what the
//     queue says, after a grace period for a network file system's
//     attribute cache.
//   - State on the shared file system, not in memory: slurm/<run>/ holds
//     each job's spec, script, outcome, progress and journal, and a job's
//     comment names them. A coordinator that dies leaves jobs running and
//     that directory; the next one adopts both (records what finished,
//     claims what runs by the node's static identity), so a crash loses
//     nothing and nothing runs twice. slurm/coordinator.lock (flock) keeps
//     one coordinator per cache; slurm/coordinator.json names it.
//   - GPUs are asked for only when the run's backend is cuda; resources
//     come from graph.Node.Needs, site settings (partition, account, further
//     flags) from the experiment's slurm { } block and the command line.
package slurm
