package main

import (
	"errors"
	"strconv"
	"strings"

	"repro/experiment"
	"repro/internal/report"

	"github.com/spf13/cobra"
)

// withSeed is lf with -var seed=S added: one run of a multi-seed command.
func withSeed(lf *loadFlags, s int64) *loadFlags {
	one := *lf
	one.vars = append(append([]string(nil), lf.vars...), "seed="+strconv.FormatInt(s, 10))
	return &one
}

// checkSeedFlags refuses --seeds where it cannot mean anything: without an
// ablation to combine, or beside a -var seed that it would contradict.
func checkSeedFlags(command string, lf *loadFlags, seeds []int64, ablations bool) error {
	if len(seeds) == 0 {
		return nil
	}
	if lf.ablation == "" && !ablations {
		return exitCode(exitFailure, "repro %s: --seeds combines an ablation's grids over seeds: give --ablation NAME", command)
	}
	for _, v := range lf.vars {
		if name, _, _ := strings.Cut(v, "="); strings.TrimSpace(name) == "seed" {
			return exitCode(exitFailure, "repro %s: --seeds and -var %s both set the seed: give one", command, v)
		}
	}
	return nil
}

// seededReport is the latest recorded grid of lf's ablation under each of
// seeds, combined into one whose cells are the means (report.MeanOverSeeds).
func seededReport(cmd *cobra.Command, file string, lf *loadFlags, seeds []int64) (*experiment.Experiment, *report.Report, error) {
	var x *experiment.Experiment
	var first *report.Report
	var grids []*report.Ablation
	for _, s := range seeds {
		one := withSeed(lf, s)
		xs, rep, err := latestReport(cmd, file, one)
		if errors.Is(err, errNoRecord) {
			return nil, nil, exitCode(exitFailure, "%s: seed %d: no recorded grid of ablation %s (run `repro run %s%s --ablation %s`)",
				file, s, lf.ablation, file, rerunFlags(one), lf.ablation)
		}
		if err != nil {
			return nil, nil, err
		}
		if rep.Ablation == nil {
			return nil, nil, exitCode(exitFailure, "%s: seed %d: the recorded report has no ablation grid", file, s)
		}
		if x == nil {
			x, first = xs, rep
		}
		grids = append(grids, rep.Ablation)
	}
	mean, err := report.MeanOverSeeds(grids, seeds)
	if err != nil {
		return nil, nil, exitCode(exitFailure, "%s: %v", file, err)
	}
	out := *first
	out.Ablation = mean
	return x, &out, nil
}

// seedsFlag registers --seeds on a command that can combine grids.
func seedsFlag(cmd *cobra.Command, seeds *[]int64) {
	cmd.Flags().Int64SliceVar(seeds, "seeds", nil, "combine the ablation's grids recorded under these seeds (-var seed=S): cells are the means, agreement is measured on them")
}
