package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"repro/runner"
	"repro/runner/slurm"
	"repro/store"

	"github.com/spf13/cobra"
)

func newPlanCmd() *cobra.Command {
	var lf loadFlags
	var backendName string
	var ef execFlags
	cmd := &cobra.Command{
		Use:   "plan FILE.hcl",
		Short: "Show each stage in order, its key, and whether it is cached or will run and why; runs nothing",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			x, err := loadExperiment(file, &lf, defaultRegistry(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			onSlurm, err := ef.slurm()
			if err != nil {
				return err
			}
			var slurmCfg slurm.Config
			if onSlurm {
				if slurmCfg, err = ef.config(x); err != nil {
					return err
				}
			}
			// Plan writes nothing: a cache that does not exist yet is an
			// empty one (everything would run), not one to create.
			st, err := openStoreRead(file)
			if errors.Is(err, store.ErrNoCache) {
				st, err = nil, nil
			}
			if err != nil {
				return err
			}
			if st != nil {
				defer st.Close()
			}
			detailed, err := x.PlanDetailed(cmd.Context(), st, backendName)
			if err != nil {
				return exitCode(1, "repro plan: %v", err)
			}
			entries := detailed.Entries
			out := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "STAGE\tTYPE\tKEY\tSTATUS\tWHY")
			run := 0
			for _, e := range entries {
				key := "-"
				if e.Key != "" {
					key = e.Key[:12]
				}
				var why []string
				for _, r := range e.Reasons {
					why = append(why, r.String())
				}
				if e.Status == runner.PlanRun {
					run++
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.ID, e.Type, key, e.Status, strings.Join(why, "; "))
			}
			tw.Flush()
			stopped := 0
			for _, e := range entries {
				if e.Status == runner.PlanStopped {
					stopped++
				}
			}
			if stopped > 0 {
				fmt.Fprintf(out, "\n%d of %d stage(s) will run; %d cached; %d not needed (until).\n", run, len(entries), len(entries)-run-stopped, stopped)
			} else {
				fmt.Fprintf(out, "\n%d of %d stage(s) will run; %d cached.\n", run, len(entries), len(entries)-run)
			}
			for _, l := range detailed.Loops {
				fmt.Fprintf(out, "repeat %s, %s\n", l.Name, l.String())
			}
			var refused *runner.StartError
			if err := runner.CheckStart(x.Graph.Nodes); errors.As(err, &refused) {
				fmt.Fprintf(out, "\nrepro run would refuse to start: %d stage(s) cannot work as declared%s\n", len(refused.Stages), refused.Detail())
			}
			if err := printRequestPlan(cmd.Context(), out, st, x, entries); err != nil {
				return exitCode(1, "repro plan: %v", err)
			}
			if onSlurm {
				printJobs(out, x, entries, backendName, slurmCfg)
			}
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().StringVar(&backendName, "backend", "cpu", "the tensor backend the run would use (part of tensor stages' keys)")
	ef.register(cmd)
	return cmd
}
