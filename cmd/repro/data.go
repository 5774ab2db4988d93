package main

import (
	"encoding/json"
	"fmt"
	"repro/dsl"
	"text/tabwriter"

	"repro/internal/dataset"

	"github.com/spf13/cobra"
)

func newDataCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "The dataset catalogue: what is present and verified, and pulling from official sources",
	}
	var asJSON bool
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List every dataset: present, checksum verified, rows, licence",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sts := dataset.List()
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(sts)
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "DATASET\tSTATE\tROWS\tLICENCE (--json: full)\tLOCATION")
			bad, corrupt := 0, 0
			for _, s := range sts {
				state := "verified"
				switch {
				case !s.Present:
					state, bad = "missing", bad+1
				case !s.Verified:
					state, bad, corrupt = "CORRUPT", bad+1, corrupt+1
				}
				loc := s.Path
				if s.Error != "" {
					loc = s.Error
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.Name, state, s.Rows, clip(s.Licence, 44), loc)
			}
			tw.Flush()
			if bad > 0 {
				fmt.Fprintf(out, "\n%d dataset(s) missing or failing verification; `repro data pull NAME` fetches from the official source where there is network access.\n", bad)
			}
			if corrupt > 0 {
				// A file that fails its checksum is an error (a missing one
				// is not: other machines may hold a subset of the data).
				return exitCode(exitFailure, "repro data ls: %d dataset(s) fail verification", corrupt)
			}
			return nil
		},
	}
	ls.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	var dir string
	pull := &cobra.Command{
		Use:   "pull NAME",
		Short: "Download a dataset from its official source into the data directory",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, ok := dataset.Lookup(args[0]); !ok {
				return exitCode(exitFailure, "repro data pull: unknown dataset %q.%s", args[0], dsl.Suggest(args[0], dataset.Names()))
			}
			if err := dataset.Pull(cmd.Context(), args[0], dir); err != nil {
				return exitCode(exitFailure, "repro data pull %s: %v", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: pulled and verified\n", args[0])
			return nil
		},
	}
	pull.Flags().StringVar(&dir, "dir", "", "destination (default: $REPRO_DATA_DIR, else the per-user cache)")
	cmd.AddCommand(ls, pull)
	return cmd
}

// clip shortens s to at most n characters for a table column.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}
