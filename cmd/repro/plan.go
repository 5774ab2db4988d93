package main

import (
	"errors"

	"repro/cmd/repro/view"
	"repro/runner"
	"repro/runner/slurm"
	"repro/store"

	"github.com/spf13/cobra"
)

// Exit codes of plan with --detailed-exitcode (Terraform's): 0 nothing
// would run, 2 stages would run; 1 an error, or run would refuse to start
// (with or without the flag).
func newPlanCmd() *cobra.Command {
	var lf loadFlags
	var backendName string
	var devices []string
	var asJSON, detailed bool
	var ef execFlags
	var mf mirrorFlags
	cmd := &cobra.Command{
		Use:   "plan FILE.hcl",
		Short: "Show each stage in order, its key, and whether it is cached or will run and why; runs nothing",
		Long: `plan says, without running anything, what repro run would do: each stage in order,
its cache key, whether it is cached or would run and why ("parameter top_k changed (3 -> 4)",
"backend changed cpu -> cuda", "input data changed (upstream tfidf will run)"), where each
repeat block's until stands, the language-model requests the run would send, and whether
run would refuse to start (a missing weights directory, say).

Exit status: 0 success; 1 an error, or run would refuse to start; with --detailed-exitcode,
2 when stages would run (0 then means everything is cached), as terraform plan
-detailed-exitcode does.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			if err := checkBackend(backendName, devices); err != nil {
				return err
			}
			x, err := loadExperiment(file, &lf, defaultRegistry(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if x.Mirror, err = mf.open(file, cmd.ErrOrStderr()); err != nil {
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
			detailedPlan, err := x.PlanDetailed(cmd.Context(), st, backendName)
			if err != nil {
				return exitCode(exitFailure, "repro plan: %v", err)
			}
			entries := detailedPlan.Entries
			if err := x.PlanCosts(cmd.Context(), st, entries, backendName); err != nil {
				return exitCode(exitFailure, "repro plan: %v", err)
			}
			p := view.NewPlan(file, x.Profile, backendName, entries)
			for _, l := range detailedPlan.Loops {
				p.Loops = append(p.Loops, l.Name+", "+l.String())
			}
			var refused *runner.StartError
			if err := runner.CheckStart(x.Graph.Nodes); errors.As(err, &refused) {
				p.Refuse(refused)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				rps, err := x.PlanRequests(cmd.Context(), st, entries)
				if err != nil {
					return exitCode(exitFailure, "repro plan: %v", err)
				}
				p.AddRequests(rps)
				if err := view.WriteJSON(out, p); err != nil {
					return err
				}
			} else {
				p.Human(out)
				if err := printRequestPlan(cmd.Context(), out, st, x, entries); err != nil {
					return exitCode(exitFailure, "repro plan: %v", err)
				}
				if onSlurm {
					printJobs(out, x, entries, backendName, slurmCfg)
				}
			}
			switch {
			case p.Refused != nil:
				return exitCode(exitFailure, "")
			case detailed && p.Summary.Run > 0:
				return &exitError{code: exitPlanChanges}
			}
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().StringVar(&backendName, "backend", "cpu", "the tensor backend the run would use (part of tensor stages' keys)")
	cmd.Flags().StringSliceVar(&devices, "device", nil, "devices the run would use (cpu, cuda:0, ...); checked against --backend")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON: per stage its action and reasons, and whether run would refuse")
	cmd.Flags().BoolVar(&detailed, "detailed-exitcode", false, "exit 2 when stages would run, 0 when everything is cached (1 stays an error)")
	ef.register(cmd)
	mf.register(cmd)
	return cmd
}
