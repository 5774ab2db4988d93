package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"repro/cmd/repro/view"
	"repro/experiment"
	"repro/internal/report"

	"github.com/spf13/cobra"
)

// checkFlags are check's own flags.
type checkFlags struct {
	reportFile       string
	ablations        bool
	seeds            []int64
	asJSON           bool
	junit            string
	allowImprovement bool
}

func newCheckCmd() *cobra.Command {
	var lf loadFlags
	var cf checkFlags
	cmd := &cobra.Command{
		Use:   "check FILE.hcl... [--profile P]",
		Short: "Compare recorded results with the paper (paper profile) or the recorded baseline under results/ (other profiles)",
		Long: `check reads the latest results recorded for each experiment (or --report FILE) and
judges every table cell: in the paper profile against the paper's value and the expect
block's tolerance; in another profile against the baseline recorded in
results/<experiment>.<profile>.json. It prints each failing cell, a line per file, and
with several files one summary line.

Against a baseline, a run at the baseline's first seed on the same deterministic backend
family (cpu) is checked exactly: any difference is a change. Elsewhere (another backend,
a GPU, another seed) the recorded tolerance, the spread over seeds, applies, and the output
says so. Counts (count = true) are exact everywhere. A change beyond tolerance fails in
either direction: a jump up is as suspicious as a drop (a leak, a wrong split, a changed
default); --allow-improvement passes the upward ones, and repro baseline records an
intended change. Pending cells and cells without a paper value are counted apart, never as
checked.

An ablation grid (--ablation NAME, or every declared one with --ablations) is judged by its
agreement with the paper: the share of the paper's pairwise orderings of its cells that ours
reproduces, against the ablation's (or experiment's) min_agreement; --ablations ends with a
summary line for the experiment. With --seeds, the grids recorded under those seeds (-var
seed=S) are combined first: each cell the mean over the seeds, the agreement measured on the
means (one seed's grid orders cells a few tenths apart by chance).

Exit status: 0 every cell within bounds; 1 an error (no results, no baseline, a missing
value, a bad file); 2 a regression (a value worse than its bound, an agreement below its
minimum); 3 a change upward beyond its bound (without --allow-improvement) and no
regression or error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cf.reportFile != "" && len(args) != 1 {
				return exitCode(exitFailure, "repro check: --report takes exactly one experiment file")
			}
			if err := checkSeedFlags("check", &lf, cf.seeds, cf.ablations); err != nil {
				return err
			}
			if len(cf.seeds) > 0 && cf.reportFile != "" {
				return exitCode(exitFailure, "repro check: --seeds combines recorded grids; --report judges one file: give one")
			}
			var res view.Check
			for _, file := range args {
				if cf.ablations {
					res.Files = append(res.Files, checkAblations(cmd, file, &lf, cf.seeds))
				} else {
					res.Files = append(res.Files, checkFile(cmd, file, &lf, &cf))
				}
			}
			res.Finish()
			out := cmd.OutOrStdout()
			if cf.asJSON {
				if err := view.WriteJSON(out, &res); err != nil {
					return err
				}
			} else {
				res.Human(out)
			}
			if cf.junit != "" {
				if err := writeJUnit(cf.junit, &res); err != nil {
					return exitCode(exitFailure, "repro check: --junit: %v", err)
				}
			}
			if code := checkExit(res.Files); code != exitOK {
				return &exitError{code: code}
			}
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().StringVar(&cf.reportFile, "report", "", "judge this report (JSON from repro results --json) instead of the latest recorded one")
	cmd.Flags().BoolVar(&cf.ablations, "ablations", false, "judge the recorded grid of every declared ablation by its agreement with the paper, and print a summary line")
	cmd.Flags().BoolVar(&cf.asJSON, "json", false, "print the judgement as JSON: per cell its value, reference, tolerance, difference, mode and verdict")
	cmd.Flags().StringVar(&cf.junit, "junit", "", "also write the judgement as JUnit XML to `FILE` (one test case per cell)")
	cmd.Flags().BoolVar(&cf.allowImprovement, "allow-improvement", false, "pass cells that changed beyond their bound in the better direction (reported, not failing)")
	seedsFlag(cmd, &cf.seeds)
	return cmd
}

// checkExit is the exit status over the files: a regression first, then an
// error, then an improvement beyond tolerance.
func checkExit(files []view.CheckFile) exitStatus {
	var seen [5]bool
	for _, f := range files {
		seen[f.Class()] = true
	}
	switch {
	case seen[report.Regression]:
		return exitRegression
	case seen[report.Error]:
		return exitFailure
	case seen[report.Improvement]:
		return exitImprovement
	}
	return exitOK
}

func writeJUnit(path string, res *view.Check) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := res.JUnit(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// recordedReport is the latest recorded report, or with seeds the
// ablation's grids under them combined.
func recordedReport(cmd *cobra.Command, file string, lf *loadFlags, seeds []int64) (*experiment.Experiment, *report.Report, error) {
	if len(seeds) > 0 {
		return seededReport(cmd, file, lf, seeds)
	}
	return latestReport(cmd, file, lf)
}

// errText is an error's message for a check line: the file name is
// printed once, by the line, not again by the message.
func errText(file string, err error) string {
	msg := err.Error()
	var ee *exitError
	if errors.As(err, &ee) {
		msg = ee.msg
	}
	return strings.TrimPrefix(msg, file+": ")
}

func checkFile(cmd *cobra.Command, file string, lf *loadFlags, cf *checkFlags) view.CheckFile {
	var x *experiment.Experiment
	var rep *report.Report
	var err error
	if cf.reportFile != "" {
		x, err = loadExperiment(file, lf, defaultRegistry(), cmd.ErrOrStderr())
		if err == nil {
			rep, err = readReportFile(cf.reportFile)
		}
	} else {
		x, rep, err = recordedReport(cmd, file, lf, cf.seeds)
	}
	if err != nil {
		return view.CheckError(file, lf.profile, errText(file, err))
	}
	if rep.Ablation != nil && len(rep.Cells) == 0 {
		f := view.CheckFile{File: file, Profile: x.Profile, Status: "ok", Cells: []view.CheckCell{}}
		f.AddAblation(judgeAblation(x, rep))
		return f
	}
	bl, err := x.LoadBaseline()
	if p := x.Profile; p != "" && err != nil {
		return view.CheckError(file, p, fmt.Sprintf("no baseline for profile %s: %v (record one with `repro baseline %s --profile %s`)", p, err, file, p))
	}
	how := "against the paper"
	if x.Profile != "" {
		exact, why := report.Exactness(rep, bl)
		how = "tolerance: " + why
		if exact {
			how = "exact: " + why
		}
	}
	return view.NewCheckFile(file, x.Profile, how, report.Judge(rep, bl, report.JudgeOptions{AllowImprovement: cf.allowImprovement}))
}
