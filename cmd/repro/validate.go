package main

import (
	"fmt"

	"repro/cmd/repro/view"
	"repro/dsl"
	"repro/experiment"

	"github.com/spf13/cobra"
)

func newValidateCmd() *cobra.Command {
	var lf loadFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate FILE.hcl...",
		Short: "Report every static error of the files (under every profile and ablation) in one pass",
		Long: `validate loads each file under every profile and ablation and reports every static
error in one pass, each at its file:line:column with a snippet: unknown stage types and
parameters, values a stage type refuses, references to stages or outputs that do not exist,
cycles, and parameters naming files that are not there (a relative path resolves against
the directory of the file that writes it; a -var value against the working directory).
With --json the diagnostics come as one JSON document (file, line, column, summary,
detail), for an editor or a CI annotation.

Exit status: 0 every file valid; 1 an error in any.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := lf.options()
			if err != nil {
				return err
			}
			reg := defaultRegistry()
			bad := 0
			res := view.Validate{FormatVersion: view.FormatVersion, Valid: true, Files: []view.ValidateFile{}}
			for _, file := range args {
				diags, files := experiment.Validate(reg, file, opts)
				res.Add(file, diags)
				if diags.HasErrors() {
					bad++
				}
				if asJSON {
					continue
				}
				if len(diags) > 0 {
					_ = dsl.Render(cmd.ErrOrStderr(), files, diags)
				}
				if !diags.HasErrors() {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", file)
				}
			}
			if asJSON {
				if err := view.WriteJSON(cmd.OutOrStdout(), &res); err != nil {
					return err
				}
			}
			if bad > 0 {
				if asJSON {
					return exitCode(exitFailure, "")
				}
				return exitCode(exitFailure, "repro validate: %d of %d file(s) have errors", bad, len(args))
			}
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the diagnostics as JSON (file, line, column, summary, detail)")
	return cmd
}
