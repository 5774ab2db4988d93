package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"repro/cmd/repro/view"
	"repro/experiment"
	"repro/store"

	"github.com/spf13/cobra"
)

func newCacheCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Inspect and maintain the cache: ls, verify, gc, import, requests",
		Long: `The cache is --cache-dir, else $REPRO_CACHE, else .repro/ in the current directory
(repro run puts it beside the experiment file; name the file, as in
` + "`repro cache verify experiments/simcse.hcl`" + `, to use that one).`,
	}
	cmd.AddCommand(newCacheLsCmd(), newCacheVerifyCmd(), newCacheGCCmd(), newCacheScopesCmd(),
		newCacheForgetCmd(), newCacheImportCmd(), newCacheRequestsCmd())
	return cmd
}

// cacheDirOf is the cache a cache subcommand works on: with an experiment
// file argument, that file's; else --cache-dir, $REPRO_CACHE or ./.repro.
func cacheDirOf(args []string) string {
	file := "x.hcl"
	if len(args) == 1 {
		file = args[0]
	}
	return experiment.CacheDir(file, global.cacheDir)
}

// openCache opens the cache for writing (gc, forget, verify --repair); it
// must exist already.
func openCache(args []string) (*store.Store, error) {
	dir := cacheDirOf(args)
	if _, err := os.Stat(dir); err != nil {
		return nil, exitCode(exitFailure, "repro cache: %s: no cache there (%v)", dir, err)
	}
	c, err := store.Open(dir)
	if err != nil {
		return nil, exitCode(exitFailure, "repro cache: %s: %v", dir, err)
	}
	return c, nil
}

// readCache opens the cache read-only and creates nothing: a mistyped
// --cache-dir is an error, not a new empty cache.
func readCache(args []string) (*store.Store, error) {
	c, err := store.OpenReadOnly(cacheDirOf(args))
	if err != nil {
		return nil, exitCode(exitFailure, "repro cache: %v", err)
	}
	return c, nil
}

func newCacheLsCmd() *cobra.Command {
	var lsJSON bool
	ls := &cobra.Command{
		Use:   "ls [FILE.hcl]",
		Short: "List recorded stage runs with their provenance",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := readCache(args)
			if err != nil {
				return err
			}
			defer c.Close()
			runs, err := c.List(cmd.Context())
			if err != nil {
				return exitCode(exitFailure, "repro cache ls: %v", err)
			}
			if lsJSON {
				return view.WriteJSON(cmd.OutOrStdout(), view.NewCacheRuns(c.Dir(), runs))
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
	ls.Flags().BoolVar(&lsJSON, "json", false, "print the runs as JSON, with their parameters, inputs, outputs and provenance")
	return ls
}

func newCacheVerifyCmd() *cobra.Command {
	var repair bool
	verify := &cobra.Command{
		Use:   "verify [FILE.hcl]",
		Short: "Check the index and re-hash every stored artifact; --repair drops what is damaged so the next run recomputes it",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opener := readCache
			if repair {
				opener = openCache
			}
			c, err := opener(args)
			if err != nil {
				return err
			}
			defer c.Close()
			probs, err := c.Verify(cmd.Context())
			if err != nil {
				return exitCode(exitFailure, "repro cache verify: %v", err)
			}
			out := cmd.OutOrStdout()
			for _, p := range probs {
				fmt.Fprintln(out, p.String())
			}
			if len(probs) == 0 {
				fmt.Fprintf(out, "ok: the index is sound and every artifact in %s matches its digest\n", c.Dir())
				return nil
			}
			if !repair {
				return exitCode(exitFailure, "repro cache verify: %d problem(s) in %s; `repro cache verify --repair` drops the damaged parts so the next run recomputes them", len(probs), c.Dir())
			}
			done, err := c.Repair(cmd.Context(), probs)
			for _, d := range done {
				fmt.Fprintln(out, "repaired:", d)
			}
			if err != nil {
				return exitCode(exitFailure, "repro cache verify --repair: %v", err)
			}
			fmt.Fprintf(out, "%d problem(s) repaired; the next run recomputes what was dropped\n", len(probs))
			return nil
		},
	}
	verify.Flags().BoolVar(&repair, "repair", false, "quarantine damaged objects, forget runs whose objects are gone, replace a damaged index")
	return verify
}

func newCacheGCCmd() *cobra.Command {
	var opts store.GCOptions
	gc := &cobra.Command{
		Use:   "gc [FILE.hcl]",
		Short: "Remove runs and objects no experiment's latest state needs, and leftovers of interrupted runs (language-model answers are kept: repro cache requests --drop)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := openCache(args)
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := c.GC(cmd.Context(), opts)
			if err != nil {
				return exitCode(exitFailure, "repro cache gc: %v", err)
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
	return gc
}

func newCacheScopesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "scopes [FILE.hcl]",
		Short: "List the experiment variants (file, profile, ablation, --set, -var) whose state the cache keeps",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := readCache(args)
			if err != nil {
				return err
			}
			defer c.Close()
			ss, err := c.Scopes(cmd.Context())
			if err != nil {
				return exitCode(exitFailure, "repro cache scopes: %v", err)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "STAGES\tREPORTS\tUPDATED\tSCOPE")
			for _, s := range ss {
				fmt.Fprintf(tw, "%d\t%d\t%s\t%s\n", s.Nodes, s.Reports, s.Updated.Local().Format(time.DateTime), s.Scope)
			}
			return tw.Flush()
		},
	}
}

func newCacheForgetCmd() *cobra.Command {
	var lf loadFlags
	forget := &cobra.Command{
		Use:   "forget FILE.hcl [--profile P] [--set ...] [-var ...] [--ablation A]",
		Short: "Drop one variant's saved state (last runs, reports) so that gc no longer keeps what only it needs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := loadExperiment(args[0], &lf, defaultRegistry(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			c, err := openCache(args)
			if err != nil {
				return err
			}
			defer c.Close()
			recs, reps, err := c.ForgetScope(cmd.Context(), x.Scope)
			if err != nil {
				return exitCode(exitFailure, "repro cache forget: %v", err)
			}
			if recs == 0 && reps == 0 {
				return exitCode(exitFailure, "repro cache forget: the cache keeps no state for %s", x.Scope)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "forgot %s: %d stage record(s), %d report(s); `repro cache gc` frees what nothing else keeps\n", x.Scope, recs, reps)
			return nil
		},
	}
	lf.register(forget)
	return forget
}

func newCacheImportCmd() *cobra.Command {
	var stages, keys []string
	imp := &cobra.Command{
		Use:   "import SRC_CACHE_DIR [--stage NODE]... [--key PREFIX]...",
		Short: "Copy recorded runs (index rows, verified artifacts, logs) from another cache into this one, so their stages are cache hits here",
		Long: `Copy recorded runs from the cache directory SRC_CACHE_DIR into this cache
(--cache-dir, else $REPRO_CACHE, else ./.repro; created if missing): every run,
or those of the named stages (--stage module.pretrained.bert_long) or keys
(--key, a prefix as repro plan and cache ls print it). Each artifact is
re-hashed on the way and a run whose artifact does not match its digest is
refused; runs this cache has already are left alone. The source is only read.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return importRuns(cmd, args[0], stages, keys)
		},
	}
	imp.Flags().StringArrayVar(&stages, "stage", nil, "import the runs of this stage (node ID as repro plan prints it; repeatable)")
	imp.Flags().StringArrayVar(&keys, "key", nil, "import the runs whose key starts with this (repeatable)")
	return imp
}

// importRuns copies the runs of srcDir's cache that the stages and keys
// select (all when none is given) into this cache.
func importRuns(cmd *cobra.Command, srcDir string, stages, keys []string) error {
	src, err := store.OpenReadOnly(srcDir)
	if errors.Is(err, store.ErrNoCache) {
		return exitCode(exitFailure, "repro cache import: %s is not a cache directory (it has no index.db)", srcDir)
	}
	if err != nil {
		return exitCode(exitFailure, "repro cache import: %s: %v", srcDir, err)
	}
	defer src.Close()
	dir := cacheDirOf(nil)
	dst, err := store.Open(dir)
	if err != nil {
		return exitCode(exitFailure, "repro cache import: %s: %v", dir, err)
	}
	defer dst.Close()
	match := func(r *store.RunInfo) bool {
		if len(stages) == 0 && len(keys) == 0 {
			return true
		}
		for _, s := range stages {
			if r.NodeID == s {
				return true
			}
		}
		for _, k := range keys {
			if strings.HasPrefix(r.Key, k) {
				return true
			}
		}
		return false
	}
	out := cmd.OutOrStdout()
	matched := 0
	st, err := dst.Import(cmd.Context(), src, match, func(r *store.RunInfo, imported bool) {
		matched++
		verb := "imported"
		if !imported {
			verb = "present "
		}
		fmt.Fprintf(out, "%s  %s  %s  %s v%d  %s\n", verb, r.Key[:12], r.NodeID, r.Type, r.Version, humanBytes(r.Size))
	})
	if err != nil {
		return exitCode(exitFailure, "repro cache import: %v", err)
	}
	if matched == 0 && len(stages)+len(keys) == 0 {
		return exitCode(exitFailure, "repro cache import: %s records no run", src.Dir())
	}
	if matched == 0 {
		return exitCode(exitFailure, "repro cache import: no recorded run in %s matches %s", src.Dir(), describeMatch(stages, keys))
	}
	fmt.Fprintf(out, "\n%d run(s) imported into %s (%d object(s), %s copied); %d present already\n",
		st.Runs, dst.Dir(), st.Objects, humanBytes(st.Bytes), st.Present)
	return nil
}

// describeMatch says what a cache import was asked for.
func describeMatch(stages, keys []string) string {
	var parts []string
	for _, s := range stages {
		parts = append(parts, "--stage "+s)
	}
	for _, k := range keys {
		parts = append(parts, "--key "+k)
	}
	return strings.Join(parts, ", ")
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
