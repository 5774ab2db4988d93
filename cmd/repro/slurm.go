package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"repro/experiment"
	"repro/runner"
	"repro/runner/remote"
	"repro/runner/slurm"
	"repro/store"

	"github.com/spf13/cobra"
)

// execFlags choose where stages run: in this process (local, the
// default) or as Slurm jobs.
type execFlags struct {
	executor  string
	partition string
	account   string
	flags     []string
	poll      time.Duration
	repro     string
	ahead     int
}

func (f *execFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.executor, "executor", "local", "where stages run: local (this process) or slurm (one sbatch job per stage, grids as job arrays; the cache must be on a file system the nodes share)")
	cmd.Flags().StringVar(&f.partition, "slurm-partition", "", "Slurm partition for every job (overrides the experiment's slurm { partition })")
	cmd.Flags().StringVar(&f.account, "slurm-account", "", "Slurm account for every job (overrides the experiment's slurm { account })")
	cmd.Flags().StringArrayVar(&f.flags, "slurm-flag", nil, "a further sbatch argument for every job, e.g. --slurm-flag=--qos=high (repeatable; added to the experiment's slurm { flags })")
	cmd.Flags().DurationVar(&f.poll, "slurm-poll", 3*time.Second, "how often the Slurm queue is read (one squeue call for all jobs)")
	cmd.Flags().StringVar(&f.repro, "slurm-repro", "", "the repro executable the jobs run, on the shared file system (default: this one)")
	cmd.Flags().IntVar(&f.ahead, "slurm-ahead", 1000, "most jobs (array tasks) submitted before their inputs exist; the rest are submitted as inputs finish (-1: none ahead)")
}

func (f *execFlags) slurm() (bool, error) {
	if f == nil {
		return false, nil
	}
	switch f.executor {
	case "local", "":
		return false, nil
	case "slurm":
		return true, nil
	}
	return false, exitCode(exitFailure, "repro: --executor %q: want local or slurm", f.executor)
}

// config is the Slurm configuration of a run of x: the experiment's
// slurm { } settings under the command-line flags.
func (f *execFlags) config(x *experiment.Experiment) (slurm.Config, error) {
	s := x.Config.Slurm
	cfg := slurm.Config{Partition: s.Partition, Account: s.Account, Poll: f.poll, Repro: f.repro, Version: version, Ahead: f.ahead}
	if err := slurm.CheckFlags(s.Flags, s.Source+": slurm { flags }"); err != nil {
		return cfg, exitCode(exitFailure, "repro: %v", err)
	}
	if err := slurm.CheckFlags(f.flags, "--slurm-flag"); err != nil {
		return cfg, exitCode(exitFailure, "repro: %v", err)
	}
	cfg.Flags = append(append([]string(nil), s.Flags...), f.flags...)
	if f.partition != "" {
		cfg.Partition = f.partition
	}
	if f.account != "" {
		cfg.Account = f.account
	}
	if f.poll <= 0 {
		return cfg, exitCode(exitFailure, "repro: --slurm-poll must be positive")
	}
	return cfg, nil
}

// openSlurm opens the Slurm executor of st for a run of x and says what it
// adopted from an earlier coordinator.
func openSlurm(ctx context.Context, w io.Writer, st *store.Store, x *experiment.Experiment, f *execFlags) (*slurm.Executor, error) {
	cfg, err := f.config(x)
	if err != nil {
		return nil, err
	}
	ex, err := slurm.Open(ctx, st, cfg)
	if err != nil {
		var be *slurm.BusyError
		if errors.As(err, &be) {
			return nil, exitCode(exitFailure, "repro run: %v", be)
		}
		return nil, exitCode(exitFailure, "repro run: --executor slurm: %v", err)
	}
	if a := ex.Adopted; a.Dirs > 0 {
		fmt.Fprintf(w, "slurm: adopted an earlier coordinator's jobs: %d finished and recorded, %d still queued or running, %d language-model answer(s) merged\n",
			a.Recorded, a.Live, a.Answers)
	}
	return ex, nil
}

// printJobs shows the jobs `repro run --executor slurm` would submit.
func printJobs(w io.Writer, x *experiment.Experiment, entries []runner.PlanEntry, backend string, cfg slurm.Config) {
	jobs := slurm.Layout(x.Graph, entries, slurm.LayoutOptions{Backend: backend, MaxArray: cfg.MaxArray})
	if len(jobs) == 0 {
		fmt.Fprintln(w, "\nslurm: nothing to submit.")
		return
	}
	arrays, tasks := 0, 0
	for _, j := range jobs {
		tasks += len(j.Nodes)
		if j.Array() {
			arrays++
		}
	}
	fmt.Fprintf(w, "\nslurm: %d job(s) to submit (%d array(s)), %d stage(s):\n", len(jobs), arrays, tasks)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTAGE\tAFTER\tSBATCH")
	for _, j := range jobs {
		after := j.Dependency()
		if after == "" {
			after = "-"
		}
		args := strings.Join(append(j.ResourceArgs(), cfg.SiteArgs()...), " ")
		for i, n := range j.Nodes {
			label := fmt.Sprintf("#%d", j.N)
			if j.Array() {
				label = fmt.Sprintf("#%d_%d", j.N, i)
			}
			if i == 0 {
				fmt.Fprintf(tw, "%s\t%s (%s)\t%s\t%s\n", label, n.ID, n.Type.Name, after, args)
			} else {
				fmt.Fprintf(tw, "%s\t%s (%s)\t\t\n", label, n.ID, n.Type.Name)
			}
		}
	}
	tw.Flush()
	if backend != "cuda" {
		for _, j := range jobs {
			if j.Needs.GPUs > 0 {
				fmt.Fprintf(w, "(tensor stages ask for no GPU: the run's backend is %s; --backend cuda asks for --gres=gpu:N)\n", backend)
				break
			}
		}
	}
}

// newStageExecCmd is the stage mode a cluster job runs: not for people.
func newStageExecCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "stage-exec SPEC.json",
		Short:  "Run one stage as a cluster job from its job spec (used by --executor slurm)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The scheduler stops a job with SIGTERM (scancel, time
			// limit, preemption): the stage is cancelled, stores nothing,
			// and the job reports it.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			err := experiment.ExecStage(ctx, defaultRegistry(), args[0], os.Getenv("REPRO_JOB_ID"), cmd.OutOrStdout())
			var re *remote.RefusedError
			switch {
			case err == nil:
				return nil
			case errors.As(err, &re):
				return exitCode(exitRefused, "")
			case ctx.Err() != nil:
				return exitCode(exitTerminated, "")
			}
			return exitCode(exitFailure, "")
		},
	}
}
