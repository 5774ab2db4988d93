package slurm

import (
	"fmt"
	"strings"
	"time"
)

// Config is how jobs are submitted.
type Config struct {
	// Partition and Account, when set, go to every job (--partition,
	// --account); Flags are further sbatch arguments ("--qos=high",
	// "--constraint=a100"), from the command line and the experiment's
	// slurm { } block.
	Partition, Account string
	Flags              []string
	// Repro is the repro executable the jobs run (`repro stage-exec`),
	// on the shared file system; default: this process's executable.
	Repro string
	// Poll is how often the queue is read (default 3s). Every poll is one
	// squeue call for all jobs, whatever their number.
	Poll time.Duration
	// Grace is how long a job that left the queue may take to show its
	// outcome file (a network file system's attribute cache can hide a
	// new file for a while); default 60s.
	Grace time.Duration
	// Ahead bounds the array tasks and jobs submitted ahead of their
	// inputs in one pass (default 1000; negative: none, every stage is
	// submitted when its inputs are stored). Clusters limit how many jobs
	// a user may have queued (MaxSubmitJobs), and a pass of thousands of
	// stages need not sit in the queue at once: the stages beyond the
	// bound are submitted as their inputs finish.
	Ahead int
	// MaxArray is the most tasks in one job array (default: the cluster's
	// MaxArraySize, read with scontrol; 1000 if it cannot be read).
	MaxArray int
	// Version is the repro version recorded in adopted runs' provenance.
	Version string
	// Env is extra environment for the Slurm commands (nil: this
	// process's own).
	Env []string
}

// managed are the sbatch options repro sets itself: a flag that sets one
// of them would break how jobs are tracked.
var managed = []string{"--array", "--dependency", "--output", "--error", "--job-name", "--parsable",
	"--comment", "--chdir", "--wrap", "--kill-on-invalid-dep", "--open-mode", "--wait",
	"-a", "-d", "-o", "-e", "-J", "-D", "-W"}

// CheckFlags refuses extra sbatch flags that are not options or that
// set what repro sets itself (where says where they came from).
func CheckFlags(flags []string, where string) error {
	for _, f := range flags {
		if !strings.HasPrefix(f, "-") {
			return fmt.Errorf("%s: sbatch flag %q: want an option such as --qos=high", where, f)
		}
		name, _, _ := strings.Cut(f, "=")
		for _, m := range managed {
			if name == m || (len(m) == 2 && strings.HasPrefix(f, m) && !strings.HasPrefix(f, "--")) {
				return fmt.Errorf("%s: sbatch flag %q: repro sets %s itself (jobs, arrays, dependencies and logs are how it tracks stages)", where, f, m)
			}
		}
	}
	return nil
}

// SiteArgs are the sbatch arguments every job gets from the
// configuration: partition, account and the extra flags.
func (c *Config) SiteArgs() []string {
	var args []string
	if c.Partition != "" {
		args = append(args, "--partition="+c.Partition)
	}
	if c.Account != "" {
		args = append(args, "--account="+c.Account)
	}
	return append(args, c.Flags...)
}
