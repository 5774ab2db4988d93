package main

import (
	"errors"
	"fmt"
	"io"

	"repro/experiment"
	"repro/internal/report"

	"github.com/spf13/cobra"
)

// Exit codes of check.
const (
	checkOK         = 0
	checkError      = 1
	checkRegression = 2
)

func newCheckCmd() *cobra.Command {
	var lf loadFlags
	var reportFile string
	var ablations bool
	var seeds []int64
	cmd := &cobra.Command{
		Use:   "check FILE.hcl... [--profile P]",
		Short: "Compare recorded results with the paper (paper profile) or the recorded baseline under results/ (other profiles)",
		Long: `check reads the latest results recorded for each experiment (or --report FILE) and
judges every table cell: in the paper profile against the paper's value and the expect
block's tolerance; in another profile against the baseline recorded in
results/<experiment>.<profile>.json. It prints each failing cell.

An ablation grid (--ablation NAME, or every declared one with --ablations) is judged by its
agreement with the paper: the share of the paper's pairwise orderings of its cells that ours
reproduces, against the ablation's (or experiment's) min_agreement; --ablations ends with a
summary line for the experiment. With --seeds, the grids recorded under those seeds (-var
seed=S) are combined first: each cell the mean over the seeds, the agreement measured on the
means (one seed's grid orders cells a few tenths apart by chance).

Exit status: 0 every cell within tolerance; 1 an error (no results, no baseline, a
missing value, a bad file); 2 a regression (a value out of tolerance, an agreement below
its minimum).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if reportFile != "" && len(args) != 1 {
				return exitCode(checkError, "repro check: --report takes exactly one experiment file")
			}
			if err := checkSeedFlags("check", &lf, seeds, ablations); err != nil {
				return err
			}
			if len(seeds) > 0 && reportFile != "" {
				return exitCode(checkError, "repro check: --seeds combines recorded grids; --report judges one file: give one")
			}
			worst := checkOK
			out := cmd.OutOrStdout()
			for _, file := range args {
				var code int
				if ablations {
					code = checkAblations(cmd, out, file, &lf, seeds)
				} else {
					code = checkFile(cmd, out, file, &lf, reportFile, seeds)
				}
				if code == checkRegression || (code == checkError && worst == checkOK) {
					worst = code
				}
			}
			if worst != checkOK {
				return &exitError{code: worst}
			}
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().StringVar(&reportFile, "report", "", "judge this report (JSON from `repro results --json`) instead of the latest recorded one")
	cmd.Flags().BoolVar(&ablations, "ablations", false, "judge the recorded grid of every declared ablation by its agreement with the paper, and print a summary line")
	seedsFlag(cmd, &seeds)
	return cmd
}

// recordedReport is the latest recorded report, or with seeds the
// ablation's grids under them combined.
func recordedReport(cmd *cobra.Command, file string, lf *loadFlags, seeds []int64) (*experiment.Experiment, *report.Report, error) {
	if len(seeds) > 0 {
		return seededReport(cmd, file, lf, seeds)
	}
	return latestReport(cmd, file, lf)
}

func checkFile(cmd *cobra.Command, out io.Writer, file string, lf *loadFlags, reportFile string, seeds []int64) int {
	var x *experiment.Experiment
	var rep *report.Report
	var err error
	if reportFile != "" {
		x, err = loadExperiment(file, lf, defaultRegistry(), cmd.ErrOrStderr())
		if err == nil {
			rep, err = readReportFile(reportFile)
		}
	} else {
		x, rep, err = recordedReport(cmd, file, lf, seeds)
	}
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			fmt.Fprintf(out, "%s: ERROR %s\n", file, ee.msg)
		} else {
			fmt.Fprintf(out, "%s: ERROR %v\n", file, err)
		}
		return checkError
	}
	if rep.Ablation != nil && len(rep.Cells) == 0 {
		return checkAblation(out, file, x, rep)
	}
	bl, err := x.LoadBaseline()
	if p := x.Profile; p != "" {
		if err != nil {
			fmt.Fprintf(out, "%s: ERROR no baseline for profile %s: %v (record one with `repro baseline %s --profile %s`)\n", file, p, err, file, p)
			return checkError
		}
	}
	code := checkOK
	failing := 0
	for _, j := range report.Judge(rep, bl) {
		if !j.Verdict.Failing() {
			continue
		}
		failing++
		ref := "paper"
		refVal, tol := j.Paper, j.Tolerance
		if j.Baseline != nil {
			ref, refVal, tol = "baseline", j.Baseline.Value, j.Baseline.Tolerance
		}
		switch j.Verdict {
		case report.Missing, report.NoBaseline:
			fmt.Fprintf(out, "%s: %s / %s: %s %s\n", file, j.Row, j.Column, j.Verdict, j.Missing)
			if code == checkOK {
				code = checkError
			}
		default:
			fmt.Fprintf(out, "%s: %s / %s: %s: ours %.2f, %s %.2f, diff %+.2f, tolerance %.2f\n",
				file, j.Row, j.Column, j.Verdict, j.Ours, ref, refVal, j.Ours-refVal, tol)
			code = checkRegression
		}
	}
	if failing == 0 {
		fmt.Fprintf(out, "%s: ok (%d cells within tolerance, profile %s)\n", file, len(rep.Cells), x.ProfileName())
	}
	return code
}
