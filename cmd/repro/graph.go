package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newGraphCmd() *cobra.Command {
	var lf loadFlags
	var format string
	cmd := &cobra.Command{
		Use:   "graph FILE.hcl",
		Short: "Print the experiment's stage DAG as Graphviz dot or Mermaid",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "dot" && format != "mermaid" {
				return exitCode(exitFailure, "repro graph: --format %q: want dot or mermaid", format)
			}
			x, err := loadExperiment(args[0], &lf, defaultRegistry(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if format == "dot" {
				fmt.Fprint(cmd.OutOrStdout(), x.Graph.Dot())
			} else {
				fmt.Fprint(cmd.OutOrStdout(), x.Graph.Mermaid())
			}
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().StringVar(&format, "format", "dot", "dot or mermaid")
	return cmd
}
