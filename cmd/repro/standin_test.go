package main

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repro/experiment"
	"repro/graph"
	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
	"repro/registry"
	"repro/registry/builtin"
)

// modelKinds are the input kinds that carry a trained model into an
// evaluation: what the model was trained on (a stand-in, in the mini and
// ci profiles) is not what the evaluation measures.
var modelKinds = []registry.Kind{registry.KindEncoder, registry.KindLanguageModel, registry.KindTokenizer}

// standInsMeasured are the data directory's stand-ins an evaluation node
// measures: the stand-ins read by the stages upstream of n through its
// data inputs (every input but a model), each as "dataset (stage)".
func standInsMeasured(t *testing.T, g *graph.Graph, n *graph.Node) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	var walk func(n *graph.Node)
	walk = func(n *graph.Node) {
		for _, p := range n.Type.Inputs {
			e, ok := n.Inputs[p.Name]
			if !ok || slices.Contains(modelKinds, p.Kind) || seen[e.Node] {
				continue
			}
			seen[e.Node] = true
			up := g.Node(e.Node)
			if up == nil {
				t.Fatalf("%s: input %s from unknown node %s", n.ID, p.Name, e.Node)
			}
			if up.Type.StandIns != nil {
				params, err := up.Type.DecodeParams(up.Params)
				if err != nil {
					t.Fatalf("%s: %v", up.ID, err)
				}
				for _, s := range up.Type.StandIns(params) {
					out = append(out, s+" ("+up.ID+")")
				}
			}
			walk(up)
		}
	}
	walk(n)
	return out
}

// TestStandInEvaluationsCarryNoPaperValue: in no profile of any experiment
// (the paper profile given its data by -var, mini, ci) and in none of its
// ablations is an evaluation (an evaluate.* stage's cell) that measures a stand-in dataset -- the
// SemEval-2016 CQA set for AskUbuntu, BBC News for MIND -- checked against
// the paper's number, which is another dataset's. A stand-in for training
// data (the NLI triplets, the local sentences) may be; what an evaluation
// measures is what its data inputs read, not what its model was trained on.
func TestStandInEvaluationsCarryNoPaperValue(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	vars := paperVars(t)
	files, err := filepath.Glob("../../experiments/*.hcl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiments: %v", err)
	}
	checked := 0
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".hcl")
		x0, _, _, err := experiment.Load(builtin.Default(), file, experiment.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, profile := range append([]string{""}, x0.Config.Profiles...) {
			opts := experiment.Options{Profile: profile}
			if profile == "" {
				// The paper profile as a reviewer runs it.
				opts.Vars = map[string]string{}
				for k, v := range vars {
					if _, ok := x0.Config.Variables[k]; ok {
						opts.Vars[k] = v
					}
				}
			}
			for _, ablation := range append([]string{""}, x0.Config.Ablations...) {
				opts.Ablation = ablation
				x, _, _, err := experiment.Load(builtin.Default(), file, opts)
				if err != nil {
					t.Fatalf("%s profile %q ablation %q: %v", name, profile, ablation, err)
				}
				where := name + " profile " + profile
				if profile == "" {
					where = name + " paper profile"
				}
				if ablation == "" {
					for _, e := range x.Config.Expects {
						if math.IsNaN(e.Paper) || e.Pending != "" || (e.Profile != "" && e.Profile != profile) {
							continue
						}
						n := x.Graph.Node(x.IDMaps[0][e.Value.Stage])
						if n == nil {
							t.Fatalf("%s: cell %s: no node for %s", where, e.Name, e.Value.Stage)
						}
						if !strings.HasPrefix(n.Type.Name, "evaluate.") {
							continue // a count or cost, not a measurement of a dataset
						}
						checked++
						if s := standInsMeasured(t, x.Graph, n); len(s) > 0 {
							t.Errorf("%s: cell %s (%s) is checked against the paper's %v, measured on stand-in data: %s",
								where, e.Name, e.Value.Stage, e.Paper, strings.Join(s, ", "))
						}
					}
					continue
				}
				a := x.Config.Ablation
				for i, ref := range a.Report {
					withPaper := false
					for _, vals := range a.Paper {
						if i < len(vals) && !math.IsNaN(vals[i]) {
							withPaper = true
						}
					}
					if !withPaper {
						continue
					}
					for v := range x.Config.Variants {
						n := x.Graph.Node(x.IDMaps[v][ref.Stage])
						if n == nil {
							t.Fatalf("%s ablation %s: no node for %s", where, ablation, ref.Stage)
						}
						if !strings.HasPrefix(n.Type.Name, "evaluate.") {
							continue
						}
						checked++
						if s := standInsMeasured(t, x.Graph, n); len(s) > 0 {
							t.Errorf("%s ablation %s: column %s is ordered against the paper's values, measured on stand-in data: %s",
								where, ablation, a.Columns[i], strings.Join(s, ", "))
							break
						}
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no cell with a paper value was checked")
	}
}
