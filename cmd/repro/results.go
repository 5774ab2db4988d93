package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"repro/internal/report"
	"repro/runner"

	"github.com/spf13/cobra"
)

func newResultsCmd() *cobra.Command {
	var lf loadFlags
	var asJSON, markdown bool
	cmd := &cobra.Command{
		Use:   "results FILE.hcl",
		Short: "Show the latest recorded table of an experiment (profile, ablation) without running anything",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ex, rep, err := latestReport(cmd, args[0], &lf)
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
				report.WriteText(out, rep, report.Judge(rep, loadBaselineQuiet(ex)))
				fmt.Fprintf(out, "\nrecorded %s\n", rep.Time.Format("2006-01-02 15:04:05 MST"))
			}
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (input for `repro check --report`)")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the table as markdown")
	return cmd
}

// latestReport loads the experiment and the latest report recorded for its
// scope in the cache.
func latestReport(cmd *cobra.Command, file string, lf *loadFlags) (*experiment, *report.Report, error) {
	ex, err := loadExperiment(file, lf, defaultRegistry(), cmd.ErrOrStderr())
	if err != nil {
		return nil, nil, err
	}
	cache, err := openCache(file)
	if err != nil {
		return nil, nil, err
	}
	defer cache.Close()
	b, _, err := cache.LatestReport(cmd.Context(), ex.scope)
	if errors.Is(err, runner.ErrNoReport) {
		return nil, nil, exitCode(1, "%s: no recorded results for profile %s in %s: run `repro run %s%s` first",
			file, orPaper(lf.profile), cache.Dir(), file, profileFlag(lf.profile))
	}
	if err != nil {
		return nil, nil, exitCode(1, "%s: %v", file, err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, nil, exitCode(1, "%s: recorded report: %v", file, err)
	}
	return ex, &rep, nil
}

func profileFlag(p string) string {
	if p == "" {
		return ""
	}
	return " --profile " + p
}

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
