package main

import (
	"fmt"

	"repro/dsl"
	"repro/experiment"

	"github.com/spf13/cobra"
)

func newValidateCmd() *cobra.Command {
	var lf loadFlags
	cmd := &cobra.Command{
		Use:   "validate FILE.hcl...",
		Short: "Report every static error of the files (under every profile and ablation) in one pass",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := lf.options()
			if err != nil {
				return err
			}
			reg := defaultRegistry()
			bad := 0
			for _, file := range args {
				diags, files := experiment.Validate(reg, file, opts)
				if len(diags) > 0 {
					_ = dsl.Render(cmd.ErrOrStderr(), files, diags)
				}
				if diags.HasErrors() {
					bad++
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", file)
			}
			if bad > 0 {
				return exitCode(1, "repro validate: %d of %d file(s) have errors", bad, len(args))
			}
			return nil
		},
	}
	lf.register(cmd)
	return cmd
}
