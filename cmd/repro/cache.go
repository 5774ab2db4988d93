package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"repro/experiment"
	"repro/store"

	"github.com/spf13/cobra"
)

func newCacheCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Inspect and maintain the cache: ls, verify, gc",
		Long: `The cache is --cache-dir, else $REPRO_CACHE, else .repro/ in the current directory
(repro run puts it beside the experiment file; name the file, as in
` + "`repro cache verify experiments/simcse.hcl`" + `, to use that one).`,
	}
	// With an experiment file argument, its cache; else --cache-dir,
	// $REPRO_CACHE or ./.repro.
	open := func(args []string) (*store.Store, error) {
		file := "x.hcl"
		if len(args) == 1 {
			file = args[0]
		}
		dir := experiment.CacheDir(file, global.cacheDir)
		c, err := store.Open(dir)
		if err != nil {
			return nil, exitCode(1, "repro cache: %s: %v", dir, err)
		}
		return c, nil
	}
	ls := &cobra.Command{
		Use:   "ls [FILE.hcl]",
		Short: "List recorded stage runs with their provenance",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := open(args)
			if err != nil {
				return err
			}
			defer c.Close()
			runs, err := c.List(cmd.Context())
			if err != nil {
				return exitCode(1, "repro cache ls: %v", err)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tSTAGE\tTYPE\tSIZE\tDURATION\tDEVICE\tWHEN")
			var total int64
			for _, r := range runs {
				total += r.Size
				fmt.Fprintf(tw, "%s\t%s\t%s v%d\t%s\t%s\t%s\t%s\n", r.Key[:12], r.NodeID, r.Type, r.Version,
					humanBytes(r.Size), shortDur(r.Duration), r.Device, r.Time.Local().Format(time.DateTime))
			}
			tw.Flush()
			fmt.Fprintf(cmd.OutOrStdout(), "\n%d run(s), %s in %s\n", len(runs), humanBytes(total), c.Dir())
			return nil
		},
	}
	verify := &cobra.Command{
		Use:   "verify [FILE.hcl]",
		Short: "Re-hash every stored artifact; name any whose content does not match its digest",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := open(args)
			if err != nil {
				return err
			}
			defer c.Close()
			probs, err := c.Verify(cmd.Context())
			if err != nil {
				return exitCode(1, "repro cache verify: %v", err)
			}
			for _, p := range probs {
				fmt.Fprintln(cmd.OutOrStdout(), p.String())
			}
			if len(probs) > 0 {
				return exitCode(1, "repro cache verify: %d problem(s) in %s", len(probs), c.Dir())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: every artifact in %s matches its digest\n", c.Dir())
			return nil
		},
	}
	var opts store.GCOptions
	gc := &cobra.Command{
		Use:   "gc [FILE.hcl]",
		Short: "Remove runs and objects no experiment's latest state needs, and leftovers of interrupted runs",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := open(args)
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := c.GC(cmd.Context(), opts)
			if err != nil {
				return exitCode(1, "repro cache gc: %v", err)
			}
			verb := "removed"
			if opts.DryRun {
				verb = "would remove"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %d run(s), %d object(s) (%s), %d temporary dir(s), %d log(s)\n",
				verb, st.RunsRemoved, st.ObjectsRemoved, humanBytes(st.BytesFreed), st.TempRemoved, st.LogsRemoved)
			return nil
		},
	}
	gc.Flags().DurationVar(&opts.KeepNewer, "keep-newer", 0, "also keep every run younger than this (default 168h; negative: none by age)")
	gc.Flags().BoolVar(&opts.DropLastRuns, "all", false, "do not keep the runs that experiments' latest states reference")
	gc.Flags().BoolVar(&opts.DryRun, "dry-run", false, "count what would be removed, remove nothing")
	cmd.AddCommand(ls, verify, gc)
	return cmd
}

func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%dB", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1fK", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
}
