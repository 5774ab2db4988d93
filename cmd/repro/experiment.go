package main

import (
	"errors"
	"io"
	"strings"

	"repro/dsl"
	"repro/experiment"
	"repro/registry"
	"repro/registry/builtin"
	"repro/store"

	"github.com/spf13/cobra"
)

// loadFlags are the flags that select what an experiment file evaluates to.
type loadFlags struct {
	profile  string
	vars     []string
	sets     []string
	ablation string
	targets  []string
}

func (f *loadFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.profile, "profile", "", "profile whose deltas apply (default: the paper's settings)")
	cmd.Flags().StringArrayVar(&f.vars, "var", nil, "set a variable: -var name=value (repeatable)")
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "override a stage attribute: --set stage.S.attr=v, or v1,v2,... for one variant per value (repeatable)")
	cmd.Flags().StringVar(&f.ablation, "ablation", "", "expand the named ablation block into its grid of variants")
	cmd.Flags().StringArrayVar(&f.targets, "target", nil, "only this stage and what it needs (repeatable); the table shows what those stages give")
}

func (f *loadFlags) options() (experiment.Options, error) {
	o := experiment.Options{Profile: f.profile, Sets: f.sets, Ablation: f.ablation, Targets: f.targets, Vars: map[string]string{}}
	for _, v := range f.vars {
		name, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return o, exitCode(exitFailure, "repro: -var %q: want name=value", v)
		}
		o.Vars[strings.TrimSpace(name)] = val
	}
	return o, nil
}

// loadExperiment loads file and prints its diagnostics (file:line:col with
// snippets) to stderr.
func loadExperiment(file string, lf *loadFlags, reg *registry.Registry, stderr io.Writer) (*experiment.Experiment, error) {
	opts, err := lf.options()
	if err != nil {
		return nil, err
	}
	x, diags, files, err := experiment.Load(reg, file, opts)
	if len(diags) > 0 {
		_ = dsl.Render(stderr, files, diags)
	}
	if err != nil {
		var le *experiment.LoadError
		if errors.As(err, &le) {
			return nil, exitCode(exitFailure, "%v", le)
		}
		if p := moduleTargetProblem(reg, file, opts); p != "" { // target.go
			return nil, exitCode(exitFailure, "repro: %s", p)
		}
		return nil, exitCode(exitFailure, "repro: %v", err)
	}
	return x, nil
}

// openStoreRead opens the cache an experiment file uses for reading: it
// creates nothing and works on a read-only cache. A cache that does not
// exist is store.ErrNoCache.
func openStoreRead(file string) (*store.Store, error) {
	dir := experiment.CacheDir(file, global.cacheDir)
	st, err := store.OpenReadOnly(dir)
	if err != nil {
		if errors.Is(err, store.ErrNoCache) {
			return nil, err
		}
		return nil, exitCode(exitFailure, "repro: cache %s: %v", dir, err)
	}
	return st, nil
}

// openStore opens (and creates, if need be) the cache an experiment file
// uses, for writing.
func openStore(file string) (*store.Store, error) {
	dir := experiment.CacheDir(file, global.cacheDir)
	st, err := store.Open(dir)
	if err != nil {
		return nil, exitCode(exitFailure, "repro: cache %s: %v", dir, err)
	}
	return st, nil
}

func defaultRegistry() *registry.Registry {
	reg := builtin.Default()
	if extraStages != nil {
		extraStages(reg)
	}
	return reg
}

// extraStages, when set (by the tests, for stage types that only they
// need), adds stage types to the registry every command uses.
var extraStages func(*registry.Registry)
