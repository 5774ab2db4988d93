package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/experiment"
	"repro/graph"
	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
	"repro/registry/builtin"
)

// fxSyNLI is GenSE's released synthetic triplets (SyNLI, mattymchen/synli)
// in the TSV export data.released_gense reads: header
// premise<TAB>entailment<TAB>contradiction.
const fxSyNLI = "registry/builtin/testdata/released/synli.tsv"

// TestReleasedDataGenSE: gense.hcl's paper profile, given -var
// released_synli (the SyNLI fixture) beside its data and weights, plans
// the authors' triplets read by data.released_gense and trained exactly as
// our synthetic triplets are -- train.t5_contrastive on them with
// embed_syn["gense"]'s parameters, then the NLI stage with embed["gense"]'s
// -- and evaluated like the GenSE row (STS test, AskUbuntu's MAP), with a
// row "GenSE (authors' released SyNLI)" beside GenSE's carrying the
// paper's values. Without the variable none of it is planned or shown.
func TestReleasedDataGenSE(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	t.Setenv("REPRO_CACHE", filepath.Join(t.TempDir(), "cache"))
	file := "../../experiments/gense.hcl"
	base := paperProfiles["gense"].vars(t, false)
	synli := repoPath(t, fxSyNLI)
	with := map[string]string{"released_synli": synli}
	for k, v := range base {
		with[k] = v
	}
	newStages := map[string]string{
		`released_synli["synli"]`: "data.released_gense",
		`embed_syn["synli"]`:      "train.t5_contrastive",
		`embed["synli"]`:          "train.t5_contrastive",
		`eval["synli"]`:           "evaluate.sts",
		`cqa["synli"]`:            "evaluate.rerank",
	}
	newRows := []string{"gense_synli", "cqa_gense_synli"}

	// Planned by the CLI with the variable; absent without it.
	for _, set := range []bool{true, false} {
		vars := base
		if set {
			vars = with
		}
		plan := planJSON(t, file, vars)
		got := map[string]string{}
		for _, s := range plan.Stages {
			if strings.Contains(s.ID, "synli") {
				got[s.ID] = s.Type
				if s.Action != "run" {
					t.Errorf("stage %s: %s, want run", s.ID, s.Action)
				}
			}
		}
		want := newStages
		if !set {
			want = map[string]string{}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("released_synli set %v: planned %v, want %v", set, got, want)
		}
	}

	// Without the variable: no stage and no cell of it.
	x, _, _, err := experiment.Load(builtin.Default(), file, experiment.Options{Vars: base})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range x.Graph.Nodes {
		if strings.Contains(n.ID, "synli") {
			t.Errorf("without -var released_synli: stage %s", n.ID)
		}
	}
	for _, e := range x.Config.Expects {
		if slices.Contains(newRows, e.Block) {
			t.Errorf("without -var released_synli: cell %s", e.Name)
		}
	}

	// With it: the same training and evaluation as GenSE's, the SyNLI
	// triplets in place of module.open's.
	x, _, _, err = experiment.Load(builtin.Default(), file, experiment.Options{Vars: with})
	if err != nil {
		t.Fatal(err)
	}
	node := map[string]*graph.Node{}
	for _, n := range x.Graph.Nodes {
		node[n.ID] = n
	}
	for id, typ := range newStages {
		if n := node[id]; n == nil || n.Type.Name != typ {
			t.Fatalf("stage %s: %+v, want a %s", id, n, typ)
		}
	}
	if got := node[`released_synli["synli"]`].Params.GetAttr("path"); got != cty.StringVal(synli) {
		t.Errorf("released_synli: path %v, want %s", got, synli)
	}
	same := func(ours, theirs string, inputs map[string]graph.Edge) {
		t.Helper()
		o, r := node[ours], node[theirs]
		if !r.Params.RawEquals(o.Params) || r.Seed != o.Seed {
			t.Errorf("%s: params %v seed %d; %s's %v seed %d", theirs, r.Params.GoString(), r.Seed, ours, o.Params.GoString(), o.Seed)
		}
		for name, e := range o.Inputs {
			want, ok := inputs[name]
			if !ok {
				want = e // the same input as ours
			}
			if r.Inputs[name] != want {
				t.Errorf("%s: input %s %v, want %v", theirs, name, r.Inputs[name], want)
			}
		}
		if len(r.Inputs) != len(o.Inputs) {
			t.Errorf("%s: inputs %v; %s's %v", theirs, r.Inputs, ours, o.Inputs)
		}
	}
	same(`embed_syn["gense"]`, `embed_syn["synli"]`, map[string]graph.Edge{"data": {Node: `released_synli["synli"]`, Output: "triplets"}})
	same(`embed["gense"]`, `embed["synli"]`, map[string]graph.Edge{"encoder": {Node: `embed_syn["synli"]`, Output: "model"}})
	same(`eval["gense"]`, `eval["synli"]`, map[string]graph.Edge{"encoder": {Node: `embed["synli"]`, Output: "model"}})
	same(`cqa["gense"]`, `cqa["synli"]`, map[string]graph.Edge{"encoder": {Node: `embed["synli"]`, Output: "model"}})
	if hn := node[`embed_syn["synli"]`].Params.GetAttr("hard_negatives"); hn != cty.True {
		t.Errorf(`embed_syn["synli"]: hard_negatives %v, want true (eq. 2, as GenSE)`, hn)
	}
	if hf := node[`embed_syn["synli"]`].Params.GetAttr("hf_checkpoint"); hf != cty.StringVal(base["t5"]) {
		t.Errorf(`embed_syn["synli"]: hf_checkpoint %v, want -var t5 %s`, hf, base["t5"])
	}

	// The rows: GenSE's columns and paper values, the SyNLI model's
	// metrics, right after GenSE's row in its table.
	for _, r := range []struct{ ours, theirs, stage, title string }{
		{"gense", "gense_synli", `eval["synli"]`, "GenSE (authors' released SyNLI)"},
		{"cqa_gense", "cqa_gense_synli", `cqa["synli"]`, "GenSE (authors' released SyNLI), Open-domain -> NLI, direct transfer (Table 3)"},
	} {
		var ours, theirs []string
		next := ""
		for i, e := range x.Config.Expects {
			cell := fmt.Sprintf("%s=%v", e.Column, e.Paper)
			switch e.Block {
			case r.ours:
				ours = append(ours, cell)
				if i+1 < len(x.Config.Expects) && x.Config.Expects[i+1].Block != r.ours {
					next = x.Config.Expects[i+1].Block
				}
				if math.IsNaN(e.Paper) {
					t.Errorf("%s: cell %s has no paper value", r.ours, e.Name)
				}
			case r.theirs:
				theirs = append(theirs, cell)
				if e.Value.Stage != r.stage || e.Value.Output != "metrics" || e.Row != r.title || e.Pending != "" {
					t.Errorf("cell %s: stage %s.%s, row %q, pending %q; want %s.metrics, %q", e.Name, e.Value.Stage, e.Value.Output, e.Row, e.Pending, r.stage, r.title)
				}
			}
		}
		if len(ours) == 0 || strings.Join(ours, " ") != strings.Join(theirs, " ") {
			t.Errorf("row %s: %v; GenSE's %s: %v", r.theirs, theirs, r.ours, ours)
		}
		if next != r.theirs {
			t.Errorf("row %s: after %s comes %q", r.theirs, r.ours, next)
		}
	}
}
