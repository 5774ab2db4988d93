package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/spf13/cobra"

	"repro/dsl"
)

func newFmtCmd() *cobra.Command {
	var check bool
	cmd := &cobra.Command{
		Use:   "fmt FILE.hcl...",
		Short: "Rewrite experiment files in canonical HCL style (--check: only list the files that differ)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			differ := 0
			for _, file := range args {
				src, err := os.ReadFile(file)
				if err != nil {
					return exitCode(exitFailure, "repro fmt: %v", err)
				}
				// Never rewrite a file that does not parse: say where it breaks.
				if _, diags := hclsyntax.ParseConfig(src, file, hcl.InitialPos); diags.HasErrors() {
					_ = dsl.Render(cmd.ErrOrStderr(), nil, diags)
					return exitCode(exitFailure, "repro fmt: %s has syntax errors; nothing rewritten", file)
				}
				out := hclwrite.Format(src)
				if bytes.Equal(src, out) {
					continue
				}
				differ++
				fmt.Fprintln(cmd.OutOrStdout(), file)
				if !check {
					if err := os.WriteFile(file, out, 0o644); err != nil {
						return exitCode(exitFailure, "repro fmt: %v", err)
					}
				}
			}
			if check && differ > 0 {
				return exitCode(exitFailure, "repro fmt: %d file(s) not formatted", differ)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "list files that are not formatted and exit 1, rewriting nothing")
	return cmd
}
