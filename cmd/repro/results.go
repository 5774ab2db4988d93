package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"repro/cmd/repro/view"
	"repro/experiment"
	"repro/internal/report"
	"repro/store"

	"github.com/spf13/cobra"
)

func newResultsCmd() *cobra.Command {
	var lf loadFlags
	var asJSON, markdown, verbose, recorded bool
	var seeds []int64
	cmd := &cobra.Command{
		Use:   "results FILE.hcl",
		Short: "Show the latest recorded table of an experiment (profile, ablation) without running anything",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkSeedFlags("results", &lf, seeds, false); err != nil {
				return err
			}
			var x *experiment.Experiment
			var rep *report.Report
			var err error
			if recorded {
				return showRecorded(cmd, args[0], &lf, asJSON, markdown, verbose)
			}
			if len(seeds) > 0 {
				x, rep, err = seededReport(cmd, args[0], &lf, seeds)
			} else {
				x, rep, err = latestReport(cmd, args[0], &lf)
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch {
			case asJSON:
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			case markdown:
				report.WriteMarkdown(out, rep)
			default:
				// When it was recorded, then the table: the report ends
				// with its deviation list.
				fmt.Fprintf(out, "recorded %s\n", rep.Time.Format("2006-01-02 15:04:05 MST"))
				writeTable(out, rep, x.Judge(rep, report.JudgeOptions{}), verbose)
			}
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (input for repro check --report)")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the table as markdown")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print each cell's difference, tolerance and verdict instead of the paper-shaped table")
	cmd.Flags().BoolVar(&recorded, "recorded", false, "show the baseline recorded under results/ for --profile (nothing needs to have run here)")
	seedsFlag(cmd, &seeds)
	return cmd
}

// showRecorded prints the recorded baseline of lf's profile as the table a
// run of it prints, without a cache or a run: what a reviewer reads first.
func showRecorded(cmd *cobra.Command, file string, lf *loadFlags, asJSON, markdown, verbose bool) error {
	if lf.profile == "" {
		return exitCode(exitFailure, "repro results --recorded: give --profile (the paper profile has no recorded baseline: its reference is the paper)")
	}
	x, err := loadExperiment(file, lf, defaultRegistry(), cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	bl, err := x.LoadBaseline()
	if err != nil {
		return exitCode(exitFailure, "repro results --recorded: no baseline for profile %s: %v", lf.profile, err)
	}
	rep := x.RecordedReport(bl)
	out := cmd.OutOrStdout()
	switch {
	case asJSON:
		return view.WriteJSON(out, rep)
	case markdown:
		report.WriteMarkdown(out, rep)
	default:
		var js []report.Judged
		if verbose {
			// Per cell: the recorded value against the paper's.
			asPaper := *rep
			asPaper.Profile = ""
			js = report.Judge(&asPaper, nil, report.JudgeOptions{})
		}
		seeds := ""
		if len(bl.Seeds) > 0 {
			seeds = fmt.Sprintf(", seeds %v (the value is the first's)", bl.Seeds)
		}
		fmt.Fprintf(out, "recorded %s in %s on %s%s\n", bl.Recorded, x.BaselinePath(), bl.Backend, seeds)
		writeTable(out, rep, js, verbose)
	}
	return nil
}

// latestReport loads the experiment and the latest report recorded for its
// scope in the cache.
func latestReport(cmd *cobra.Command, file string, lf *loadFlags) (*experiment.Experiment, *report.Report, error) {
	x, err := loadExperiment(file, lf, defaultRegistry(), cmd.ErrOrStderr())
	if err != nil {
		return nil, nil, err
	}
	st, err := openStoreRead(file)
	if errors.Is(err, store.ErrNoCache) {
		return nil, nil, &exitError{code: exitFailure, msg: fmt.Sprintf("%s: no recorded results for profile %s: %v", file, x.ProfileName(), err), cause: errNoRecord}
	}
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	rep, err := x.LatestReport(cmd.Context(), st)
	if errors.Is(err, experiment.ErrNoResults) {
		return nil, nil, &exitError{code: exitFailure, msg: fmt.Sprintf("%s: %v", file, err), cause: errNoRecord}
	}
	if err != nil {
		return nil, nil, exitCode(exitFailure, "%s: %v", file, err)
	}
	// The minimum and resolution shown are the ones the file declares now,
	// as check applies them, not the ones in force when the grid was recorded.
	if x.Config.Ablation != nil {
		rep.Ablation.Declare(x.Config.Ablation.MinAgreement, x.Config.Ablation.PaperResolution)
	}
	return x, rep, nil
}

// errNoRecord marks a latestReport error that means nothing is recorded
// for the scope (as against a damaged cache).
var errNoRecord = errors.New("no recorded results")

func readReportFile(path string) (*report.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &rep, nil
}
