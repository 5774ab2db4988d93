package main

import (
	"fmt"
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

// fxReleasedDINO is a few lines of DINO's released STS-🦕-x2 in its
// published layout (JSON lines {"text_a", "text_b", "label"}); STS-🦕-x1x2
// has the same layout, so the test gives it to both variables.
const fxReleasedDINO = "registry/builtin/testdata/released/sts-dino-x2.jsonl"

// dinoReleasedChain is what experiments/dino.hcl does to each dataset after
// it is generated (or read): post-processing, training, evaluation.
var dinoReleasedChain = []string{"distinct", "smooth", "augment", "split", "sroberta", "eval"}

// TestReleasedDataDINO: experiments/dino.hcl's paper profile, given the
// authors' released STS-🦕-x2 and STS-🦕-x1x2 (-var released_x2/released_x1x2),
// reads each with data.released_dino and sends it through the same
// post-processing, Sentence-RoBERTa training and STS evaluation as our
// generated dataset of the same name -- the same parameters and seed, the
// same test data -- and reports it in Table 1 and Table 5 beside our row
// with the paper's values. Each variable adds its own dataset's stages and
// rows only; unset, no profile has a released stage or cell.
func TestReleasedDataDINO(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	t.Setenv("REPRO_CACHE", filepath.Join(t.TempDir(), "cache"))
	const file = "../../experiments/dino.hcl"
	p := paperProfiles["dino"]
	base := map[string]string{}
	for _, m := range []map[string]string{p.data, p.weights} {
		for k, v := range m {
			base[k] = repoPath(t, v)
		}
	}
	fixture := repoPath(t, fxReleasedDINO)
	keys := []string{"x2", "x1x2"}

	// Unset: nothing released in any profile, and the paper profile plans
	// as it did.
	x0, _, _, err := experiment.Load(builtin.Default(), file, experiment.Options{Vars: base})
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range append([]string{""}, x0.Config.Profiles...) {
		x, _, _, err := experiment.Load(builtin.Default(), file, experiment.Options{Profile: profile, Vars: base})
		if err != nil {
			t.Fatalf("profile %q: %v", profile, err)
		}
		for _, n := range x.Graph.Nodes {
			if strings.Contains(n.ID, "released") {
				t.Errorf("profile %q without the variables: stage %s", profile, n.ID)
			}
		}
		for _, e := range x.Config.Expects {
			if strings.Contains(e.Block, "released") || strings.Contains(e.Row, "released") {
				t.Errorf("profile %q without the variables: cell %s (%s)", profile, e.Name, e.Row)
			}
		}
	}
	if planned := planDINO(t, base); slices.ContainsFunc(planned, func(id string) bool { return strings.Contains(id, "released") }) {
		t.Errorf("plan without the variables: %v", planned)
	}

	// Both set: each dataset's chain, planned by `repro plan`.
	vars := map[string]string{"released_x2": fixture, "released_x1x2": fixture}
	for k, v := range base {
		vars[k] = v
	}
	planned := planDINO(t, vars)
	for _, k := range keys {
		want := []string{fmt.Sprintf("released[%q]", k)}
		for _, s := range dinoReleasedChain {
			want = append(want, fmt.Sprintf("%s[%q]", s, "released_"+k))
		}
		for _, id := range want {
			if !slices.Contains(planned, id) {
				t.Errorf("-var released_%s given: %s is not planned (planned: %v)", k, id, planned)
			}
		}
	}

	x, _, _, err := experiment.Load(builtin.Default(), file, experiment.Options{Vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	node := map[string]*graph.Node{}
	for _, n := range x.Graph.Nodes {
		node[n.ID] = n
	}
	for _, k := range keys {
		dinoCheckReleasedChain(t, node, k, fixture)
		dinoCheckReleasedRows(t, x, k)
	}

	// One variable: its dataset alone.
	one := map[string]string{"released_x1x2": fixture}
	for k, v := range base {
		one[k] = v
	}
	y, _, _, err := experiment.Load(builtin.Default(), file, experiment.Options{Vars: one})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range y.Graph.Nodes {
		if strings.Contains(n.ID, "released") {
			got = append(got, n.ID)
		}
	}
	for _, e := range y.Config.Expects {
		if strings.Contains(e.Block, "released_x2") {
			t.Errorf("-var released_x1x2 alone: cell %s", e.Name)
		}
	}
	if len(got) != 1+len(dinoReleasedChain) || slices.ContainsFunc(got, func(id string) bool { return strings.Contains(id, `x2"]`) && !strings.Contains(id, "x1x2") }) {
		t.Errorf("-var released_x1x2 alone: released stages %v, want released[\"x1x2\"] and its chain", got)
	}
}

// planDINO runs `repro plan --json` on dino.hcl's paper profile with vars
// and returns the planned stage IDs; every stage must be planned to run.
func planDINO(t *testing.T, vars map[string]string) []string {
	t.Helper()
	plan := planJSON(t, "../../experiments/dino.hcl", vars)
	var ids []string
	for _, s := range plan.Stages {
		if s.Action != "run" && s.Action != "cached" {
			t.Errorf("stage %s: %s, want planned to run", s.ID, s.Action)
		}
		ids = append(ids, s.ID)
	}
	return ids
}

// dinoCheckReleasedChain: released["KEY"] reads the file the -var names, and
// every later stage of the released dataset is the stage of ours for the
// same dataset -- type, parameters and seed -- reading the released
// chain's previous stage where ours reads our own; the evaluation reads
// the same STS test data.
func dinoCheckReleasedChain(t *testing.T, node map[string]*graph.Node, key, fixture string) {
	t.Helper()
	src := fmt.Sprintf("released[%q]", key)
	r := node[src]
	if r == nil || r.Type.Name != "data.released_dino" {
		t.Fatalf("%s: %+v", src, r)
	}
	if got := r.Params.GetAttr("path"); got != cty.StringVal(fixture) {
		t.Errorf("%s: path %v, want %s", src, got, fixture)
	}
	if got := r.Params.GetAttr("limit"); !got.RawEquals(cty.NumberIntVal(0)) {
		t.Errorf("%s: limit %v, want 0 (the whole file)", src, got)
	}
	prevOurs, prevRel := fmt.Sprintf("pairs[%q]", key), src
	for _, s := range dinoReleasedChain {
		ours, rel := node[fmt.Sprintf("%s[%q]", s, key)], node[fmt.Sprintf("%s[%q]", s, "released_"+key)]
		if ours == nil || rel == nil {
			t.Fatalf("%s: ours %v, released %v", s, ours, rel)
		}
		if rel.Type != ours.Type || !rel.Params.RawEquals(ours.Params) || rel.Seed != ours.Seed {
			t.Errorf("%s: released %s %v seed %d, ours %s %v seed %d", rel.ID, rel.Type.Name, rel.Params.GoString(), rel.Seed,
				ours.Type.Name, ours.Params.GoString(), ours.Seed)
		}
		if len(rel.Inputs) != len(ours.Inputs) {
			t.Errorf("%s: inputs %v, ours %v", rel.ID, rel.Inputs, ours.Inputs)
		}
		for name, e := range ours.Inputs {
			want := e
			switch e.Node {
			case prevOurs:
				want.Node = prevRel
			case fmt.Sprintf("sroberta[%q]", key):
				want.Node = fmt.Sprintf("sroberta[%q]", "released_"+key)
			}
			if got := rel.Inputs[name]; got != want {
				t.Errorf("%s: input %s reads %v, want %v (ours reads %v)", rel.ID, name, got, want, e)
			}
		}
		if s != "eval" {
			prevOurs, prevRel = ours.ID, rel.ID
		}
	}
}

// dinoCheckReleasedRows: Table 1's and Table 5's released row of dataset key
// has our row's columns and paper values, in order, and reads the
// released chain's evaluation.
func dinoCheckReleasedRows(t *testing.T, x *experiment.Experiment, key string) {
	t.Helper()
	ev := x.IDMaps[0][fmt.Sprintf("eval[%q]", "released_"+key)]
	title := map[string]string{"x2": "STS-L-x2", "x1x2": "STS-L-x1x2"}[key]
	for _, r := range []struct{ ours, released, row string }{
		{"dino_" + key, "released_" + key, "DINO (" + title + ") (authors' released data)"},
		{"mean_" + key, "mean_released_" + key, title + " (mean setting) (authors' released data)"},
	} {
		var ours, rel []string
		for _, e := range x.Config.Expects {
			switch e.Block {
			case r.ours:
				ours = append(ours, fmt.Sprintf("%s=%v", e.Column, e.Paper))
			case r.released:
				rel = append(rel, fmt.Sprintf("%s=%v", e.Column, e.Paper))
				if e.Row != r.row || e.Value.Stage != ev || e.Value.Output != "metrics" || e.Pending != "" {
					t.Errorf("cell %s: row %q, reads %+v, want row %q reading %s", e.Name, e.Row, e.Value, r.row, ev)
				}
				if strings.HasPrefix(r.ours, "mean_") != (len(e.Value.Path) > 0 && e.Value.Path[0] == "mean") {
					t.Errorf("cell %s reads metrics %v (Table 5 reads the mean setting, Table 1 the all setting)", e.Name, e.Value.Path)
				}
			}
		}
		if len(ours) == 0 || strings.Join(ours, " ") != strings.Join(rel, " ") {
			t.Errorf("row %s: %v, ours (%s) %v", r.released, rel, r.ours, ours)
		}
	}
}
