package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"repro/internal/report"
	"repro/internal/tensor/backend"
	"repro/registry"
	"repro/runner"

	"github.com/spf13/cobra"
)

func newRunCmd() *cobra.Command {
	var lf loadFlags
	var jobs int
	var backendName string
	var devices []string
	cmd := &cobra.Command{
		Use:   "run FILE.hcl",
		Short: "Run an experiment: every stage not in the cache, then print the paper's table beside ours",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ro := runOpts{jobs: jobs, backend: backendName, devices: devices}
			_, err := runExperiment(cmd, args[0], &lf, ro)
			return err
		},
	}
	lf.register(cmd)
	cmd.Flags().IntVarP(&jobs, "jobs", "j", runtime.NumCPU(), "stages running at once")
	cmd.Flags().StringVar(&backendName, "backend", "cpu", "tensor backend: cpu, or openblas / cuda in builds with that tag")
	cmd.Flags().StringSliceVar(&devices, "device", nil, "devices for tensor stages (cpu, cuda:0, ...); default cpu")
	return cmd
}

// runOpts are the run command's execution flags.
type runOpts struct {
	jobs    int
	backend string
	devices []string
}

// runExperiment runs file and prints progress and the judged table. It
// returns the report even when some stage failed (with an exit error).
func runExperiment(cmd *cobra.Command, file string, lf *loadFlags, ro runOpts) (*report.Report, error) {
	ex, err := loadExperiment(file, lf, defaultRegistry(), cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	be, err := backend.ByName(ro.backend)
	if err != nil {
		return nil, exitCode(1, "repro run: --backend: %v", err)
	}
	backend.Use(be)
	cache, err := openCache(file)
	if err != nil {
		return nil, err
	}
	defer cache.Close()

	// Ctrl-C cancels the running stages; the runner waits for them and
	// stores nothing half-written.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	out := cmd.OutOrStdout()
	order := make([]string, len(ex.graph.Nodes))
	for i, n := range ex.graph.Nodes {
		order[i] = n.ID
	}
	disp := newDisplay(out, isTerminal(out), order)
	res, runErr := cache.Run(ctx, ex.graph, runner.Options{
		Jobs: ro.jobs, Devices: ro.devices, Backend: be.Name(), Version: version,
		Scope: ex.scope, Partial: len(ex.cfg.Variants) > 1, Events: disp.Event,
	})
	disp.Close()
	if res == nil {
		return nil, exitCode(1, "repro run: %v", runErr)
	}
	look := func(nodeID, output string) (registry.Artifact, string, bool) {
		nr := res.Node(nodeID)
		if nr == nil {
			return registry.Artifact{}, "stage " + nodeID + " is not in this run", false
		}
		if a, ok := nr.Outputs[output]; ok {
			return a, "", true
		}
		return registry.Artifact{}, fmt.Sprintf("stage %s %s", nodeID, nr.Status), false
	}
	rep := buildReport(ex, look)
	if !ex.targeted {
		if err := saveReport(ctx, cache, ex, rep); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "repro run: saving the report: %v\n", err)
		}
	}
	js := report.Judge(rep, loadBaselineQuiet(ex))
	report.WriteText(out, rep, js)
	reports := filepath.Join(cache.Dir(), "reports")
	if ex.targeted {
		fmt.Fprintf(out, "\n--target: a partial run; the saved report and figures are unchanged\n")
	} else if err := os.MkdirAll(reports, 0o755); err == nil {
		figs, err := writeFigures(reports, ex, rep, res)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "repro run: %v\n", err)
		}
		xs := stageExcerpts(res)
		writeExcerpts(out, xs)
		if md, err := writeMarkdownReport(reports, ex, rep, figs, xs); err == nil {
			fmt.Fprintf(out, "\nreport: %s\n", md)
		}
		for _, f := range figs {
			fmt.Fprintf(out, "figure: %s\n", f)
		}
	}
	if runErr != nil {
		var re *runner.RunError
		if errors.As(runErr, &re) {
			fmt.Fprintln(cmd.ErrOrStderr(), "\n"+re.Error())
			if errors.Is(runErr, context.Canceled) {
				return rep, exitCode(130, "repro run: interrupted; finished stages are cached, run again to continue")
			}
			return rep, exitCode(1, "")
		}
		return rep, exitCode(1, "repro run: %v", runErr)
	}
	return rep, nil
}

func saveReport(ctx context.Context, cache *runner.Cache, ex *experiment, rep *report.Report) error {
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	return cache.SaveReport(ctx, ex.scope, b)
}

// baselinePath is where the recorded baseline of an experiment's profile
// lives: results/<experiment>.<profile>.json beside the experiments/ folder.
func baselinePath(ex *experiment) string {
	dir := filepath.Join(filepath.Dir(filepath.Dir(absPath(ex.file))), "results")
	return filepath.Join(dir, fmt.Sprintf("%s.%s.json", ex.cfg.Experiment.Name, profileOf(ex)))
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func loadBaselineQuiet(ex *experiment) *report.Baseline {
	if profileOf(ex) == "" {
		return nil
	}
	bl, err := report.ReadBaseline(baselinePath(ex))
	if err != nil {
		return nil
	}
	return bl
}

// writeMarkdownReport writes the table as markdown, with links to the
// figures beside it, for pasting into a README or a review.
func writeMarkdownReport(dir string, ex *experiment, rep *report.Report, figures []string, xs []excerpt) (string, error) {
	name := ex.cfg.Experiment.Name
	if p := profileOf(ex); p != "" {
		name += "." + p
	}
	if ex.cfg.Ablation != nil {
		name += "." + ex.cfg.Ablation.Name
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\nprofile: %s\n\n", ex.cfg.Experiment.Title, ex.cfg.Experiment.Table, orPaper(profileOf(ex)))
	report.WriteMarkdown(&b, rep)
	for _, f := range figures {
		fmt.Fprintf(&b, "\n![%s](%s)\n", filepath.Base(f), filepath.Base(f))
	}
	writeExcerpts(&b, xs)
	path := filepath.Join(dir, name+".md")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

func orPaper(p string) string {
	if p == "" {
		return "paper"
	}
	return p
}
