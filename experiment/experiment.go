// Package experiment is repro's application layer: where the dsl, the
// runner, the store and the report meet. It loads an experiment file into
// one runnable graph (variants merged, narrowed to --target or to what an
// ablation reports), names the scope its state is saved under, runs or
// plans it against a store, builds the report (paper values beside ours),
// writes figures and the markdown report, and finds recorded baselines.
// The commands in cmd/repro are flags and printing over this package (the
// shape of Terraform's command -> backend/local split), so everything here
// is tested without the CLI.
package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"repro/dsl"
	"repro/graph"
	"repro/internal/datadir"
	"repro/registry"
	"repro/store"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Options select what an experiment file evaluates to.
type Options struct {
	Profile  string
	Vars     map[string]string // -var name=value
	Sets     []string          // --set stage.S.attr=v (or v1,v2,... for a grid)
	Ablation string
	// Targets narrows the run to these stages and their upstream; the
	// table then shows what those stages give and is not saved.
	Targets []string
}

// Experiment is a loaded experiment file turned into one runnable graph.
type Experiment struct {
	File   string
	Config *dsl.Config
	Graph  *graph.Graph
	// IDMaps maps, per variant, each stage instance name to its node ID in
	// Graph (they differ where a grid's variants differ: "train@top_k=3").
	IDMaps []map[string]string
	Labels []string // per variant: a label for people
	// Scope names the state this evaluation saves in the store (its last
	// runs and reports); see scopeOf.
	Scope    string
	Profile  string
	Targeted bool
	// BaseScope is the scope of the same file, profile and ablation without
	// the overrides (equal to Scope when there are none).
	BaseScope string
	// Overrides are the --set and (value-changing) -var of this variant,
	// as written; they name its reports apart from the plain profile's.
	Overrides []string
	// Mirror, when not nil, is the mirror of published stage outputs that
	// Run and the plans consult on a cache miss (see MirrorDir).
	Mirror *store.Mirror
}

// MirrorDir is where the repository holding the experiment file publishes
// its mirror of stage outputs: mirror/ at the repository's root (the
// nearest ancestor of the file's directory holding go.mod or .git).
func MirrorDir(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	return filepath.Join(datadir.RepoRoot(filepath.Dir(abs)), "mirror")
}

// LoadError is a file that did not load: its diagnostics, with the files
// they point into so that a caller can render snippets.
type LoadError struct {
	File  string
	Diags hcl.Diagnostics
	Files map[string]*hcl.File
}

func (e *LoadError) Error() string {
	n := 0
	for _, d := range e.Diags {
		if d.Severity == hcl.DiagError {
			n++
		}
	}
	return fmt.Sprintf("%s: %d error(s); nothing was run", e.File, n)
}

func (o Options) dsl() dsl.Options {
	return dsl.Options{Profile: o.Profile, Sets: o.Sets, Ablation: o.Ablation, Vars: o.Vars}
}

// Validate reports every static error of file under every profile and
// ablation (with opts' variables and overrides), with the files the
// diagnostics point into.
func Validate(reg *registry.Registry, file string, opts Options) (hcl.Diagnostics, map[string]*hcl.File) {
	loader := dsl.NewLoader(reg)
	diags := loader.Validate(file, opts.dsl())
	return diags, loader.Files()
}

// Load evaluates file under opts. Warnings come back beside a loaded
// experiment; errors as a *LoadError.
func Load(reg *registry.Registry, file string, opts Options) (*Experiment, hcl.Diagnostics, map[string]*hcl.File, error) {
	// The data beside this experiment's repository is found without
	// REPRO_DATA_DIR (internal/datadir).
	datadir.UseExperiment(file)
	loader := dsl.NewLoader(reg)
	cfg, diags := loader.Load(file, opts.dsl())
	if diags.HasErrors() || cfg == nil {
		return nil, diags, loader.Files(), &LoadError{File: file, Diags: diags, Files: loader.Files()}
	}
	x := &Experiment{File: file, Config: cfg, Profile: opts.Profile, Targeted: len(opts.Targets) > 0}
	graphs := make([]*graph.Graph, len(cfg.Variants))
	for i, v := range cfg.Variants {
		g := v.Graph
		// An ablation needs only what its report reads; --target narrows
		// the graph to the named stages and their upstream.
		targets := opts.Targets
		if cfg.Ablation != nil && len(targets) == 0 {
			for _, r := range cfg.Ablation.Report {
				targets = append(targets, r.Stage)
			}
		}
		if len(targets) > 0 {
			sub, err := g.Upstream(instanceTargets(v, targets)...) // --target train: every train["KEY"]
			if err != nil {
				return nil, diags, loader.Files(), fmt.Errorf("--target: %v", err)
			}
			g = sub
		}
		graphs[i] = g
		x.Labels = append(x.Labels, v.Name)
	}
	if len(graphs) == 1 {
		x.Graph = graphs[0]
		ids := map[string]string{}
		for _, n := range graphs[0].Nodes {
			ids[n.ID] = n.ID
		}
		x.IDMaps = []map[string]string{ids}
	} else {
		var err error
		x.Graph, x.IDMaps, err = graph.Merge(graphs, x.Labels)
		if err != nil {
			return nil, diags, loader.Files(), err
		}
	}
	vars := changedVars(reg, file, opts, cfg)
	x.Scope = scopeOf(file, opts, vars)
	base := opts
	base.Sets = nil
	x.BaseScope = scopeOf(file, base, nil)
	for _, set := range opts.Sets {
		x.Overrides = append(x.Overrides, "--set "+strings.TrimSpace(set))
	}
	for _, v := range vars {
		x.Overrides = append(x.Overrides, "-var "+v)
	}
	return x, diags, loader.Files(), nil
}

// scopeOf names the state an evaluation keeps in the store (its last-run
// records and saved reports): the absolute file, the profile, the ablation,
// each --set and each -var that changes a variable's value. Every variant
// thus has its own state: a --set run does not replace the plain profile's
// report, baseline or plan, and GC keeps what any variant references.
func scopeOf(file string, opts Options, vars []string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	s := abs + "#profile=" + opts.Profile
	if opts.Ablation != "" {
		s += "#ablation=" + opts.Ablation
	}
	for _, set := range opts.Sets {
		s += "#set=" + strings.TrimSpace(set)
	}
	for _, v := range vars {
		s += "#var=" + v
	}
	return s
}

// changedVars lists, as name=value in name order, the -var values that
// change what the file evaluates to: a -var that repeats the default (the
// first seed of a baseline is usually the default one) shares the plain
// scope.
func changedVars(reg *registry.Registry, file string, opts Options, cfg *dsl.Config) []string {
	if len(opts.Vars) == 0 {
		return nil
	}
	plain := opts
	plain.Vars = nil
	base, diags := dsl.NewLoader(reg).Load(file, plain.dsl())
	var out []string
	for _, name := range slices.Sorted(maps.Keys(opts.Vars)) {
		v, ok := cfg.Variables[name]
		if diags.HasErrors() || base == nil || !ok || !v.RawEquals(base.Variables[name]) {
			out = append(out, name+"="+opts.Vars[name])
		}
	}
	return out
}

// Name is the experiment's name with its profile and ablation, as report
// and figure files are named: "paser.mini.phrases".
func (x *Experiment) Name() string {
	name := x.Config.Experiment.Name
	if x.Profile != "" {
		name += "." + x.Profile
	}
	if x.Config.Ablation != nil {
		name += "." + x.Config.Ablation.Name
	}
	if len(x.Overrides) > 0 {
		// A variant's files sit beside the plain profile's, named by a
		// digest of its overrides (listed inside the report).
		sum := sha256.Sum256([]byte(strings.Join(x.Overrides, "\n")))
		name += "+" + hex.EncodeToString(sum[:4])
	}
	return name
}

// ProfileName is the profile, or "paper" for the stage blocks' own settings.
func (x *Experiment) ProfileName() string { return OrPaper(x.Profile) }

// OrPaper names the default profile "paper".
func OrPaper(p string) string {
	if p == "" {
		return "paper"
	}
	return p
}

// CacheDir resolves where an experiment's cache lives: override (the
// --cache-dir flag), else $REPRO_CACHE, else .repro/ beside the file.
func CacheDir(file, override string) string {
	if override != "" {
		return override
	}
	if env := os.Getenv("REPRO_CACHE"); env != "" {
		return env
	}
	return filepath.Join(filepath.Dir(file), ".repro")
}

// BaselinePath is where the recorded baseline of the experiment's profile
// lives: results/<experiment>.<profile>.json beside the experiments/ folder.
func (x *Experiment) BaselinePath() string {
	abs, err := filepath.Abs(x.File)
	if err != nil {
		abs = x.File
	}
	dir := filepath.Join(filepath.Dir(filepath.Dir(abs)), "results")
	return filepath.Join(dir, fmt.Sprintf("%s.%s.json", x.Config.Experiment.Name, x.Profile))
}

// FormatValue renders a cty value as JSON (strings quoted), as `repro
// stages` shows defaults.
func FormatValue(v cty.Value) string {
	if v == cty.NilVal || v.IsNull() {
		return "null"
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return v.GoString()
	}
	return string(b)
}
