package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"repro/cmd/repro/view"
	"repro/experiment"
	"repro/internal/report"
	"repro/internal/tensor/backend"
	"repro/runner"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func newRunCmd() *cobra.Command {
	var lf loadFlags
	var ro runOpts
	var seeds []int64
	ro.exec = &execFlags{}
	cmd := &cobra.Command{
		Use:   "run FILE.hcl",
		Short: "Run an experiment: every stage not in the cache, then print the paper's table beside ours",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkBackend(ro.backend, ro.devices); err != nil {
				return err
			}
			if len(seeds) > 0 {
				return runSeeds(cmd, args[0], &lf, ro, seeds)
			}
			_, err := runExperiment(cmd, args[0], &lf, ro)
			return err
		},
	}
	lf.register(cmd)
	seedsFlag(cmd, &seeds)
	cmd.Flags().IntVarP(&ro.jobs, "jobs", "j", runtime.NumCPU(), "stages running at once")
	cmd.Flags().StringVar(&ro.backend, "backend", "cpu", "tensor backend: cpu, or openblas / cuda in builds with that tag")
	cmd.Flags().StringSliceVar(&ro.devices, "device", nil, "devices for tensor stages (cpu, cuda:0, ...); default cpu")
	cmd.Flags().BoolVar(&ro.anyBackend, "any-backend", false, "serve tensor stages from results another backend computed (their bits differ)")
	cmd.Flags().BoolVarP(&ro.verbose, "verbose", "v", false, "print each cell's difference, tolerance and verdict, and the stages' generated samples, under the table")
	cmd.Flags().BoolVar(&ro.asJSON, "json", false, "stream the run as JSON, one object per line: stage events (cached, started, progress, finished, failed) with keys, durations and output digests, then the table's cells and a summary")
	ro.exec.register(cmd)
	ro.mirror.register(cmd)
	return cmd
}

// runSeeds runs an ablation once per seed and prints its grid combined over
// them (report.MeanOverSeeds); each seed's run is recorded as usual, so
// `repro results --seeds` and `repro check --seeds` find them later.
func runSeeds(cmd *cobra.Command, file string, lf *loadFlags, ro runOpts, seeds []int64) error {
	if err := checkSeedFlags("run", lf, seeds, false); err != nil {
		return err
	}
	var grids []*report.Ablation
	for _, s := range seeds {
		if !ro.asJSON {
			fmt.Fprintf(cmd.OutOrStdout(), "== seed %d ==\n", s)
		}
		rep, err := runExperiment(cmd, file, withSeed(lf, s), ro)
		if err != nil {
			return err
		}
		if rep.Ablation == nil {
			return exitCode(exitFailure, "repro run: seed %d: no ablation grid", s)
		}
		grids = append(grids, rep.Ablation)
	}
	mean, err := report.MeanOverSeeds(grids, seeds)
	if err != nil {
		return exitCode(exitFailure, "repro run: %v", err)
	}
	if ro.asJSON {
		// After each seed's stream, the grid combined over them.
		return json.NewEncoder(cmd.OutOrStdout()).Encode(struct {
			Type     string           `json:"type"`
			Ablation *report.Ablation `json:"ablation"`
		}{"ablation_mean", mean})
	}
	report.WriteAblationText(cmd.OutOrStdout(), mean)
	return nil
}

// checkBackend refuses, before anything loads, a backend this binary was
// not built with and a --device the backend cannot drive: the CPU backends
// have no devices, so "--device cuda:0" beside them would otherwise fail
// only when the first tensor stage starts. Nothing is opened here (naming
// cuda opens the GPU; plan must not).
func checkBackend(name string, devices []string) error {
	if !slices.Contains(backend.Names(), name) {
		_, err := backend.ByName(name)
		if err == nil {
			err = fmt.Errorf("backend %q is not available", name)
		}
		return exitCode(exitFailure, "repro: --backend: %v", err)
	}
	for _, d := range devices {
		family, ordinal, _ := strings.Cut(d, ":")
		switch {
		case d == "cpu":
		case family == "cuda" && name != "cuda":
			return exitCode(exitFailure, "repro: --device %s needs --backend cuda (this run's backend is %s, which has no devices: leave --device out, or pass --backend cuda)", d, name)
		case family == "cuda":
			if _, err := strconv.Atoi(ordinal); ordinal != "" && err != nil {
				return exitCode(exitFailure, "repro: --device %s: want cuda:N, N the GPU's number", d)
			}
		default:
			return exitCode(exitFailure, "repro: --device %s: want cpu or cuda:N", d)
		}
	}
	return nil
}

// runOpts are the run command's execution flags.
type runOpts struct {
	jobs       int
	backend    string
	devices    []string
	anyBackend bool
	asJSON     bool       // --json: the event stream instead of progress and tables
	verbose    bool       // --verbose: per-cell detail and generated samples under the table
	exec       *execFlags // nil: local
	mirror     mirrorFlags
}

// runExperiment runs file and prints progress and the judged table. It
// returns the report even when some stage failed (with an exit error).
func runExperiment(cmd *cobra.Command, file string, lf *loadFlags, ro runOpts) (*report.Report, error) {
	x, err := loadExperiment(file, lf, defaultRegistry(), cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	if x.Mirror, err = ro.mirror.open(file, cmd.ErrOrStderr()); err != nil {
		return nil, err
	}
	st, err := openStore(file)
	if err != nil {
		return nil, err
	}
	defer st.Close()

	// Ctrl-C cancels the running stages; the runner waits for them and
	// stores nothing half-written.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	out := cmd.OutOrStdout()
	var executor runner.Executor
	if onSlurm, err := ro.exec.slurm(); err != nil {
		return nil, err
	} else if onSlurm {
		ex, err := openSlurm(ctx, out, st, x, ro.exec)
		if err != nil {
			return nil, err
		}
		defer func() {
			if err := ex.Close(); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "repro run: slurm: %v\n", err)
			}
		}()
		executor = ex
	}
	var events func(runner.Event)
	var stream *view.Events
	var disp *display
	if ro.asJSON {
		stream = view.NewEvents(out)
		events = stream.Event
	} else {
		disp = newDisplay(out, isTerminal(out), x.Graph.IDs())
		events = disp.Event
	}
	oc, err := x.Run(ctx, st, experiment.RunOptions{
		Jobs: ro.jobs, Devices: ro.devices, Backend: ro.backend, AnyBackend: ro.anyBackend, Version: version, Events: events,
		Executor: executor,
	})
	if disp != nil {
		disp.Close()
	}
	if err != nil {
		return nil, exitCode(exitFailure, "repro run: %v", err)
	}
	if stream != nil {
		return oc.Report, streamResult(stream, x, oc)
	}
	writeTable(out, oc.Report, x.Judge(oc.Report, report.JudgeOptions{}), ro.verbose)
	mirrorSummary(out, &ro.mirror, x.Mirror, oc.Result)
	if x.Targeted {
		fmt.Fprintf(out, "\n--target: a partial run; the saved report and figures are unchanged\n")
	} else {
		if ro.verbose {
			experiment.WriteExcerpts(out, oc.Excerpts)
		} else if len(oc.Excerpts) > 0 {
			fmt.Fprintf(out, "\nsamples of %d stage(s)' generated text: in the report (or --verbose)\n", len(oc.Excerpts))
		}
		if oc.Markdown != "" {
			fmt.Fprintf(out, "\nreport: %s\n", oc.Markdown)
		}
		for _, f := range oc.Figures {
			fmt.Fprintf(out, "figure: %s\n", f)
		}
	}
	if runErr := oc.RunErr; runErr != nil {
		var re *runner.RunError
		var oe *experiment.OutputError
		switch {
		case errors.As(runErr, &re):
			fmt.Fprintln(cmd.ErrOrStderr(), "\n"+re.Error())
			if errors.Is(runErr, context.Canceled) {
				return oc.Report, exitCode(exitInterrupted, "repro run: interrupted; finished stages are cached, run again to continue")
			}
			return oc.Report, exitCode(exitFailure, "")
		case errors.As(runErr, &oe):
			fmt.Fprintf(cmd.ErrOrStderr(), "repro run: %v\n", oe)
		default:
			return oc.Report, exitCode(exitFailure, "repro run: %v", runErr)
		}
	}
	return oc.Report, nil
}

// streamResult ends a --json run: the judged cells and the summary, and the
// run's exit status (a failed stage, an interrupt) as the human run has it.
func streamResult(stream *view.Events, x *experiment.Experiment, oc *experiment.Outcome) error {
	sum := view.SummaryEvent{Report: oc.Markdown, Figures: oc.Figures}
	for _, n := range oc.Result.Nodes {
		sum.Stages++
		switch n.Status {
		case runner.StatusRan:
			sum.Ran++
		case runner.StatusCached:
			sum.Cached++
			if n.Mirror {
				sum.Mirror++
			}
		case runner.StatusFailed:
			sum.Failed++
		}
	}
	var exit error
	if runErr := oc.RunErr; runErr != nil {
		sum.Error = runErr.Error()
		var oe *experiment.OutputError
		switch {
		case errors.Is(runErr, context.Canceled):
			exit = exitCode(exitInterrupted, "")
		case !errors.As(runErr, &oe):
			exit = exitCode(exitFailure, "")
		}
	}
	stream.Result(oc.Report, x.Judge(oc.Report, report.JudgeOptions{}), sum)
	return exit
}

// writeTable prints a report paper-shaped, fitted to the terminal (100
// columns in a log), or with verbose one line per cell with its detail.
func writeTable(out io.Writer, rep *report.Report, js []report.Judged, verbose bool) {
	if verbose {
		report.WriteText(out, rep, js)
		return
	}
	report.WriteTable(out, rep, js, termWidth(out))
}

// termWidth is the terminal's width, else $COLUMNS, else 100.
func termWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		return c
	}
	return 100
}
