package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newProfilesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "profiles FILE.hcl",
		Short: "Print the profiles the experiment declares, one a line (for scripts)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Loaded at the paper's settings: every profile is declared there.
			x, err := loadExperiment(args[0], &loadFlags{}, defaultRegistry(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			for _, p := range x.Config.Profiles {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
}
