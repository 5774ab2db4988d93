package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"repro/dsl"
	"repro/registry"
	"repro/registry/builtin"
	"repro/runner"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"
	"github.com/zclconf/go-cty/cty"
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

func (f *loadFlags) options() (dsl.Options, error) {
	o := dsl.Options{Profile: f.profile, Sets: f.sets, Ablation: f.ablation, Vars: map[string]string{}}
	for _, v := range f.vars {
		name, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return o, exitCode(1, "repro: -var %q: want name=value", v)
		}
		o.Vars[strings.TrimSpace(name)] = val
	}
	return o, nil
}

// experiment is a loaded experiment file turned into one runnable graph.
type experiment struct {
	file   string
	cfg    *dsl.Config
	graph  *runner.Graph
	idMaps []map[string]string // per variant: stage name -> merged node ID
	labels []string            // per variant: a label for people
	scope  string
	// targeted: --target narrowed the graph, so the table is partial and
	// is not saved as the experiment's report.
	targeted bool
}

// loadExperiment loads file and prints diagnostics (file:line:col with
// snippets) to stderr on error.
func loadExperiment(file string, lf *loadFlags, reg *registry.Registry, stderr io.Writer) (*experiment, error) {
	opts, err := lf.options()
	if err != nil {
		return nil, err
	}
	loader := dsl.NewLoader(reg)
	cfg, diags := loader.Load(file, opts)
	if len(diags) > 0 {
		_ = dsl.Render(stderr, loader.Files(), diags)
	}
	if diags.HasErrors() || cfg == nil {
		n := 0
		for _, d := range diags {
			if d.Severity == hcl.DiagError {
				n++
			}
		}
		return nil, exitCode(1, "%s: %d error(s); nothing was run", file, n)
	}
	ex := &experiment{file: file, cfg: cfg, targeted: len(lf.targets) > 0}
	graphs := make([]*runner.Graph, len(cfg.Variants))
	for i, v := range cfg.Variants {
		g := &runner.Graph{}
		for _, s := range v.Stages {
			n := &runner.Node{ID: s.Name, Type: s.Type, Params: s.Params, Seed: s.Seed, Inputs: map[string]runner.Edge{}}
			for port, ref := range s.Inputs {
				n.Inputs[port] = runner.Edge{Node: ref.Stage, Output: ref.Output}
			}
			g.Nodes = append(g.Nodes, n)
		}
		// An ablation needs only what its report reads; --target narrows
		// the graph to the named stages and their upstream.
		targets := lf.targets
		if cfg.Ablation != nil && len(targets) == 0 {
			for _, r := range cfg.Ablation.Report {
				targets = append(targets, r.Stage)
			}
		}
		if len(targets) > 0 {
			sub, err := g.Subgraph(targets)
			if err != nil {
				return nil, exitCode(1, "repro: --target: %v", err)
			}
			g = sub
		}
		graphs[i] = g
		ex.labels = append(ex.labels, v.Name)
	}
	if len(graphs) == 1 {
		ex.graph = graphs[0]
		ids := map[string]string{}
		for _, n := range graphs[0].Nodes {
			ids[n.ID] = n.ID
		}
		ex.idMaps = []map[string]string{ids}
	} else {
		ex.graph, ex.idMaps, err = runner.Merge(graphs, ex.labels)
		if err != nil {
			return nil, err
		}
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	ex.scope = abs + "#profile=" + lf.profile
	if lf.ablation != "" {
		ex.scope += "#ablation=" + lf.ablation
	}
	return ex, nil
}

func openCache(file string) (*runner.Cache, error) {
	dir := cacheDirFor(file)
	c, err := runner.Open(dir)
	if err != nil {
		return nil, exitCode(1, "repro: cache %s: %v", dir, err)
	}
	return c, nil
}

func defaultRegistry() *registry.Registry { return builtin.Default() }

// outputs finds the artifacts of a finished node.
type outputLookup func(nodeID, output string) (registry.Artifact, string, bool)

// metricValue reads stage.S.OUTPUT.path from a metrics artifact.
func metricValue(look outputLookup, nodeID string, ref dsl.Ref) (float64, string) {
	art, why, ok := look(nodeID, ref.Output)
	if !ok {
		return 0, why
	}
	b, err := os.ReadFile(art.Path(registry.FileMetrics))
	if err != nil {
		return 0, fmt.Sprintf("%s: %v", nodeID, err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return 0, fmt.Sprintf("%s: metrics.json: %v", nodeID, err)
	}
	for _, k := range ref.Path {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, fmt.Sprintf("%s.%s: not an object at %q", ref.Stage, ref.Output, k)
		}
		if v, ok = m[k]; !ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return 0, fmt.Sprintf("stage %s wrote no metric %q (has: %s)", ref.Stage, strings.Join(append(ref.Path[:0:0], ref.Path...), "."), strings.Join(keys, ", "))
		}
	}
	f, ok := v.(float64)
	if !ok {
		return 0, fmt.Sprintf("metric %s.%s is not a number", ref.Stage, strings.Join(ref.Path, "."))
	}
	return f, ""
}

func ctyLabel(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	switch v.Type() {
	case cty.String:
		return v.AsString()
	case cty.Number:
		return v.AsBigFloat().Text('g', -1)
	case cty.Bool:
		if v.True() {
			return "true"
		}
		return "false"
	}
	return formatValue(v)
}
