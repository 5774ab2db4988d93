package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"repro/internal/report"

	"github.com/spf13/cobra"
)

func newBaselineCmd() *cobra.Command {
	var lf loadFlags
	var seeds []int64
	var floor float64
	var note string
	var ro runOpts
	var exactOnly []string
	cmd := &cobra.Command{
		Use:   "baseline FILE.hcl --profile P",
		Short: "Run a profile under several seeds and record results/<experiment>.<profile>.json for check",
		Long: `baseline runs the experiment once per seed (-var seed=S; the file must declare
variable "seed" and use it) and records, for every table cell, the value of the first
seed (the one CI reproduces: CPU runs are bit-identical, so check compares that value
exactly on cpu) and, for other backends, a tolerance of max(3 x the standard deviation
over the seeds, --floor; --floor/100 for unit-scale cells such as cosines; the floor never
above half the value). Counts (count = true) get tolerance 0. A tolerance larger than the
value it guards, or than the cell's max_tolerance, is refused: the cells are listed and
nothing is written; --exact-only records such a cell for the exact check alone. Cached
stages are reused, so a second call only runs what changed.

With --target, only the cells of the named stages (and what they need) are
re-recorded; the other cells of the recorded baseline are kept as they are.
That re-records a new stage's rows without re-running the rest (a model that
is not in this cache, say); the baseline must exist and have the same seeds.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if lf.profile == "" {
				return exitCode(exitFailure, "repro baseline: --profile is required (the paper profile is judged against the paper)")
			}
			if len(seeds) == 0 {
				return exitCode(exitFailure, "repro baseline: --seeds is empty")
			}
			file := args[0]
			if err := checkBackend(ro.backend, nil); err != nil {
				return err
			}
			x, err := loadExperiment(file, &lf, defaultRegistry(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			path := x.BaselinePath()
			// A targeted baseline updates a recorded one: refuse before
			// the runs, which may take hours, not after them.
			var recorded *report.Baseline
			if x.Targeted {
				if recorded, err = recordedFor(path, seeds); err != nil {
					return exitCode(exitFailure, "repro baseline --target: %v", err)
				}
			}
			var reps []*report.Report
			for _, s := range seeds {
				fmt.Fprintf(cmd.OutOrStdout(), "== seed %d ==\n", s)
				rep, err := runExperiment(cmd, file, withSeed(&lf, s), ro)
				if err != nil {
					return err
				}
				reps = append(reps, rep)
			}
			bl, err := report.BaselineFromRuns(reps, seeds, report.RecordOptions{Floor: floor, Backend: ro.backend, ExactOnly: exactOnly})
			if err != nil {
				return exitCode(exitFailure, "repro baseline: %s not recorded: %v", path, err)
			}
			bl.Note = note
			var kept []string
			if recorded != nil {
				kept = keepRecorded(bl, recorded)
			}
			if err := bl.Write(path); err != nil {
				return exitCode(exitFailure, "repro baseline: %v", err)
			}
			var spread []string
			for _, name := range slices.Sorted(maps.Keys(bl.Cells)) {
				c := bl.Cells[name]
				spread = append(spread, fmt.Sprintf("%s %.4g±%.3g", name, c.Value, c.Tolerance))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "\nrecorded %s (%d cells, seeds %v)\n%s\n", path, len(bl.Cells), seeds, strings.Join(spread, "\n"))
			if len(kept) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "kept %d recorded cell(s) that --target's stages do not give: %s\n", len(kept), strings.Join(kept, ", "))
			}
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().Int64SliceVar(&seeds, "seeds", []int64{42, 1, 2}, "seeds to run; the first is the recorded value")
	cmd.Flags().Float64Var(&floor, "floor", 0.5, "smallest tolerance recorded, on the 0-100 scale (unit-scale cells get floor/100)")
	cmd.Flags().StringVar(&note, "note", "", "a note stored with the baseline")
	cmd.Flags().StringSliceVar(&exactOnly, "exact-only", nil, "record these cells (names as in results/*.json) for the exact check alone: their seeds disagree by more than their value")
	cmd.Flags().IntVarP(&ro.jobs, "jobs", "j", 2, "stages running at once")
	cmd.Flags().StringVar(&ro.backend, "backend", "cpu", "tensor backend")
	ro.mirror.register(cmd)
	return cmd
}

// recordedFor reads the baseline a --target run updates. With none
// recorded, or one recorded with other seeds, the cells it keeps would not
// be what the file says they are.
func recordedFor(path string, seeds []int64) (*report.Baseline, error) {
	old, err := report.ReadBaseline(path)
	if err != nil {
		return nil, fmt.Errorf("it updates a recorded baseline, and %s cannot be read (%v): record the whole experiment first", path, err)
	}
	if !slices.Equal(old.Seeds, seeds) {
		return nil, fmt.Errorf("%s was recorded with seeds %v, this run would have %v: the kept cells would mix seeds (pass%s)", path, old.Seeds, seeds, seedsText(old.Seeds))
	}
	return old, nil
}

// keepRecorded carries the recorded cells a --target run did not give into
// bl, and returns their names.
func keepRecorded(bl, recorded *report.Baseline) []string {
	var kept []string
	for _, name := range slices.Sorted(maps.Keys(recorded.Cells)) {
		if _, ok := bl.Cells[name]; !ok {
			bl.Cells[name] = recorded.Cells[name]
			kept = append(kept, name)
		}
	}
	if bl.Note == "" {
		bl.Note = recorded.Note
	}
	return kept
}
