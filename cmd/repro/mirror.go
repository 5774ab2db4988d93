package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"repro/experiment"
	"repro/runner"
	"repro/store"

	"github.com/spf13/cobra"
)

// mirrorFlags choose the mirror of published stage outputs that run and
// plan consult on a cache miss.
type mirrorFlags struct {
	off bool   // --no-mirror
	dir string // --mirror
}

func (f *mirrorFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.off, "no-mirror", false, "rebuild from scratch: import nothing from the mirror of published stage outputs")
	cmd.Flags().StringVar(&f.dir, "mirror", "", "the mirror `DIR` of published stage outputs (default: mirror/ at the experiment file's repository root)")
}

// open returns the mirror for file, or nil: --no-mirror, or no mirror in
// the repository. A mirror named by --mirror must be there; the
// repository's own one, when damaged, is left out with a warning (a run
// without it only computes more).
func (f *mirrorFlags) open(file string, stderr io.Writer) (*store.Mirror, error) {
	if f == nil || f.off {
		return nil, nil
	}
	dir := f.dir
	if dir == "" {
		dir = experiment.MirrorDir(file)
	}
	m, err := store.OpenMirror(dir)
	switch {
	case err == nil:
		return m, nil
	case f.dir != "":
		return nil, exitCode(exitFailure, "repro: --mirror: %v", err)
	case errors.Is(err, store.ErrNoMirror):
		return nil, nil
	}
	fmt.Fprintf(stderr, "repro: warning: the mirror is left out: %v\n", err)
	return nil, nil
}

// mirrorSummary says, after a run, what came from the mirror: the stages
// imported, those refused (damaged, computed instead), or that the run
// was told to use none.
func mirrorSummary(w io.Writer, f *mirrorFlags, m *store.Mirror, res *runner.Result) {
	if f != nil && f.off {
		fmt.Fprintln(w, "\nmirror: not used (--no-mirror); every stage not in the cache was computed here")
		return
	}
	if m == nil || res == nil {
		return
	}
	var got, refused []string
	for _, n := range res.Nodes {
		if n.Mirror {
			got = append(got, n.ID)
		}
		if len(n.Warnings) > 0 {
			refused = append(refused, n.ID)
		}
	}
	if len(got) > 0 {
		fmt.Fprintf(w, "\nmirror: %d stage(s) imported from %s, not run: %s (--no-mirror computes them)\n",
			len(got), m.Dir(), strings.Join(got, ", "))
	}
	if len(refused) > 0 {
		fmt.Fprintf(w, "mirror: %d stage(s) refused from %s (damaged; see the warnings) and computed here: %s\n",
			len(refused), m.Dir(), strings.Join(refused, ", "))
	}
}

func newMirrorCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mirror",
		Short: "The mirror of published stage outputs (mirror/): refresh it from a cache, list it, verify it",
		Long: `The mirror is a read-only, content-addressed copy of recorded stage runs published with
the repository (mirror/ at its root): the pretraining that the mini profiles start from.
repro run and repro plan consult it on a cache miss: a stage whose key it holds is
imported -- each output unpacked and checked against its recorded digest -- instead of
run; a damaged object is refused with a warning and the stage runs. --no-mirror on
run and plan rebuilds from scratch.`,
	}
	cmd.AddCommand(newMirrorRefreshCmd(), newMirrorLsCmd(), newMirrorVerifyCmd())
	return cmd
}

func newMirrorRefreshCmd() *cobra.Command {
	var lf loadFlags
	var stages []string
	var from, dir, budget string
	refresh := &cobra.Command{
		Use:   "refresh FILE.hcl --profile P --stage PATTERN... --from CACHE_DIR",
		Short: "Publish the recorded outputs of the named stages from a cache into the mirror, within its size budget",
		Long: `Publish into the mirror the runs of the stages of FILE.hcl (in --profile) that --stage
names (a node ID as repro plan prints it, or a pattern: 'module.t5.*'), taken from the
cache --from as it holds them for this experiment. Each artifact is re-hashed in the
source, archived (tar + gzip) and checked back; an entry of the same experiment and
stage under an older key is replaced and its archive removed. Data stages are left out:
their output is the data set itself, which the repository does not carry, and they run
in seconds from the data directory. The refresh is refused, changing nothing, when the
mirror's compressed objects would exceed --budget (default 128MiB).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			if len(stages) == 0 {
				return exitCode(exitFailure, "repro mirror refresh: name the stages to publish with --stage (e.g. --stage 'module.t5.*')")
			}
			if from == "" {
				return exitCode(exitFailure, "repro mirror refresh: name the cache to publish from with --from")
			}
			limit, err := parseSize(budget)
			if err != nil {
				return exitCode(exitFailure, "repro mirror refresh: --budget: %v", err)
			}
			for _, p := range stages {
				if _, err := path.Match(p, ""); err != nil {
					return exitCode(exitFailure, "repro mirror refresh: --stage %q: %v", p, err)
				}
			}
			x, err := loadExperiment(file, &lf, defaultRegistry(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			src, err := store.OpenReadOnly(from)
			if errors.Is(err, store.ErrNoCache) {
				return exitCode(exitFailure, "repro mirror refresh: %s is not a cache directory (it has no index.db)", from)
			}
			if err != nil {
				return exitCode(exitFailure, "repro mirror refresh: %s: %v", from, err)
			}
			defer src.Close()
			if dir == "" {
				dir = experiment.MirrorDir(file)
			}
			x.Mirror = nil // the source cache alone says what is recorded
			plan, err := x.Plan(cmd.Context(), src, "cpu")
			if err != nil {
				return exitCode(exitFailure, "repro mirror refresh: %v", err)
			}
			out := cmd.OutOrStdout()
			source := file + " --profile " + profileName(x.Profile)
			var picks []store.MirrorPick
			var notCached []string
			matched := map[string]bool{}
			for _, e := range plan {
				hit := ""
				for _, p := range stages {
					if ok, _ := path.Match(p, e.ID); ok || p == e.ID {
						hit = p
					}
				}
				if hit == "" {
					continue
				}
				matched[hit] = true
				if strings.HasPrefix(e.Type, "data.") {
					fmt.Fprintf(out, "left out  %s (%s): a data stage's output is the data set itself; it runs from the data directory\n", e.ID, e.Type)
					continue
				}
				if e.Status != runner.PlanCached {
					var why []string
					for _, r := range e.Reasons {
						why = append(why, r.String())
					}
					notCached = append(notCached, fmt.Sprintf("%s (%s)", e.ID, strings.Join(why, "; ")))
					continue
				}
				picks = append(picks, store.MirrorPick{Key: e.Key, Stage: e.ID, Source: source})
			}
			for _, p := range stages {
				if !matched[p] {
					return exitCode(exitFailure, "repro mirror refresh: --stage %s names no stage of %s (repro plan lists them)", p, file)
				}
			}
			if len(notCached) > 0 {
				return exitCode(exitFailure, "repro mirror refresh: not recorded in %s for this experiment: %s", src.Dir(), strings.Join(notCached, ", "))
			}
			if len(picks) == 0 {
				return exitCode(exitFailure, "repro mirror refresh: nothing to publish")
			}
			st, err := store.RefreshMirror(cmd.Context(), dir, src, picks, limit)
			var be *store.BudgetError
			if errors.As(err, &be) {
				return exitCode(exitFailure, "repro mirror refresh: %v; nothing was changed (publish fewer stages, or raise --budget after weighing the repository's size)", err)
			}
			if err != nil {
				return exitCode(exitFailure, "repro mirror refresh: %v", err)
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			for _, e := range st.Entries {
				var size, comp int64
				for _, o := range e.Run.Outputs {
					size += o.Size
					comp += o.Compressed
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s v%d\t%s\t-> %s\n", e.Action, e.Run.Key[:12], e.Run.Stage, e.Run.Type, e.Run.Version, humanBytes(size), humanBytes(comp))
			}
			tw.Flush()
			for _, r := range st.Removed {
				fmt.Fprintf(out, "removed   %s  %s (replaced by a newer key)\n", r.Key[:12], r.Stage)
			}
			fmt.Fprintf(out, "\n%s: %d run(s), %s compressed of its %s budget; %d archive(s) written\n",
				dir, len(st.Entries), humanBytes(st.Compressed), humanBytes(st.Budget), st.Written)
			return nil
		},
	}
	lf.register(refresh)
	refresh.Flags().StringArrayVar(&stages, "stage", nil, "publish this stage's run: a node ID or a pattern ('module.t5.*'; repeatable)")
	refresh.Flags().StringVar(&from, "from", "", "the cache `DIR` holding the runs to publish")
	refresh.Flags().StringVar(&dir, "mirror", "", "the mirror `DIR` to refresh (default: mirror/ at the experiment file's repository root)")
	refresh.Flags().StringVar(&budget, "budget", "128MiB", "the most compressed bytes the mirror may hold, a `SIZE` such as 30MiB")
	return refresh
}

func newMirrorLsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ls [MIRROR_DIR]",
		Short: "List the mirror's runs: key, stage, type, size and compressed size",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := openMirrorArg(args)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tSTAGE\tTYPE\tSIZE\tCOMPRESSED\tRAN\tSOURCE")
			var total int64
			for _, r := range m.Index().Runs {
				var size, comp int64
				for _, o := range r.Outputs {
					size += o.Size
					comp += o.Compressed
				}
				total += comp
				fmt.Fprintf(tw, "%s\t%s\t%s v%d\t%s\t%s\t%s\t%s\n", r.Key[:12], r.Stage, r.Type, r.Version,
					humanBytes(size), humanBytes(comp), shortDur(secondsOf(r.Seconds)), r.Source)
			}
			tw.Flush()
			fmt.Fprintf(out, "\n%d run(s), %s compressed (budget %s) in %s\n", len(m.Index().Runs), humanBytes(total), humanBytes(m.Index().Budget), m.Dir())
			return nil
		},
	}
}

func newMirrorVerifyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "verify [MIRROR_DIR]",
		Short: "Unpack every archive of the mirror and check it against its recorded digest",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := openMirrorArg(args)
			if err != nil {
				return err
			}
			probs, err := store.VerifyMirror(m, os.TempDir())
			if err != nil {
				return exitCode(exitFailure, "repro mirror verify: %v", err)
			}
			for _, p := range probs {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			if len(probs) > 0 {
				return exitCode(exitFailure, "repro mirror verify: %d damaged object(s) in %s: a run refuses them and computes their stages; `repro mirror refresh` rewrites them", len(probs), m.Dir())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: every object of %s matches its digest\n", m.Dir())
			return nil
		},
	}
}

// openMirrorArg opens the mirror named by the argument, else the one of
// the repository holding the current directory.
func openMirrorArg(args []string) (*store.Mirror, error) {
	dir := experiment.MirrorDir("x.hcl")
	if len(args) == 1 {
		dir = args[0]
	}
	m, err := store.OpenMirror(dir)
	if err != nil {
		return nil, exitCode(exitFailure, "repro mirror: %v", err)
	}
	return m, nil
}

// parseSize reads a size with an optional unit: 30MiB, 500KiB, 30MB, 1024.
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"kB", 1e3}, {"B", 1}}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q: want a positive size such as 30MiB", s)
	}
	return int64(v * float64(mult)), nil
}

func profileName(p string) string {
	if p == "" {
		return "(paper)"
	}
	return p
}

func secondsOf(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
