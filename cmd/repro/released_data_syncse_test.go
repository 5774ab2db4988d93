package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repro/cmd/repro/view"
	"repro/dsl"
	"repro/experiment"
	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
)

// fxSynCSEReleased is SynCSE's released triplets in their published layout
// (hkust-nlp/SynCSE-{partial,scratch}-NLI's train.csv: SimCSE's
// nli_for_simcse.csv layout, header sent0,sent1,hard_neg, RFC 4180
// quoting), as data.released_syncse's tests read it.
const fxSynCSEReleased = "registry/builtin/testdata/released/syncse-partial-nli.csv"

// syncseReleasedData are syncse.hcl's released-data variables, by the
// method of ours each stands beside (its Table 2 and Table 3 rows, and the
// train instance that trains our set).
var syncseReleasedData = map[string]string{
	"released_partial_data": "partial",
	"released_scratch_data": "scratch",
}

// syncseReleasedPlan plans syncse.hcl's paper profile with the data and
// weights fixtures paperProfiles gives it plus extra, and loads it the
// same way: the planned stages by id and the loaded experiment.
func syncseReleasedPlan(t *testing.T, extra map[string]string) (map[string]view.PlanStage, *experiment.Experiment) {
	t.Helper()
	file := "../../experiments/syncse.hcl"
	vars := paperProfiles["syncse"].vars(t, false)
	for k, v := range extra {
		vars[k] = v
	}
	plan := planJSON(t, file, vars)
	stages := map[string]view.PlanStage{}
	for _, s := range plan.Stages {
		stages[s.ID] = s
	}
	x, _, _, err := experiment.Load(defaultRegistry(), file, experiment.Options{Vars: vars})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return stages, x
}

// syncseCells are x's cells of row block, as "COLUMN=PAPER" in order, and
// the cells themselves.
func syncseCells(x *experiment.Experiment, block string) ([]string, []*dsl.Expect) {
	var s []string
	var es []*dsl.Expect
	for _, e := range x.Config.Expects {
		if e.Block == block {
			s = append(s, fmt.Sprintf("%s=%v", e.Column, e.Paper))
			es = append(es, e)
		}
	}
	return s, es
}

// TestReleasedDataSynCSE (issue 35, "the authors' released artifacts"):
// with -var released_partial_data / released_scratch_data naming SynCSE's
// released triplets (a CSV in SimCSE's layout), syncse.hcl's paper profile
// reads each with data.released_syncse, trains supervised SimCSE on it with
// exactly the settings of the train instance that trains our set of that
// method, evaluates it on the same STS test and AskUbuntu reranking data,
// and reports rows "<method> (authors' released data; Table N)" beside
// ours in Tables 2 and 3 with our rows' paper values. Without the
// variables none of those stages is planned and no such row exists.
func TestReleasedDataSynCSE(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	t.Setenv("REPRO_CACHE", filepath.Join(t.TempDir(), "cache"))
	fixture := repoPath(t, fxSynCSEReleased)

	// The variables declared, default "", described by the published artifact.
	x0, _, _, err := experiment.Load(defaultRegistry(), "../../experiments/syncse.hcl", experiment.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../experiments/syncse.hcl")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for v := range syncseReleasedData {
		val, ok := x0.Config.Variables[v]
		if !ok || !val.IsKnown() || val.IsNull() || val.AsString() != "" {
			t.Errorf("variable %q: %#v, want declared with default \"\"", v, val)
		}
		i := strings.Index(src, "variable \""+v+"\"")
		if i < 0 || !strings.Contains(src[i:min(len(src), i+400)], "hkust-nlp/SynCSE-"+syncseReleasedData[v]+"-NLI") {
			t.Errorf("variable %q: its description does not name hkust-nlp/SynCSE-%s-NLI", v, syncseReleasedData[v])
		}
	}

	planned := map[bool]map[string]view.PlanStage{}
	for _, set := range []bool{false, true} {
		extra := map[string]string{}
		if set {
			for v := range syncseReleasedData {
				extra[v] = fixture
			}
		}
		stages, x := syncseReleasedPlan(t, extra)
		planned[set] = stages
		for v, m := range syncseReleasedData {
			ids := []string{
				fmt.Sprintf("released_data[%q]", m),
				fmt.Sprintf("train[%q]", v),
				fmt.Sprintf("eval[%q]", v),
				fmt.Sprintf("eval_rerank[%q]", v),
			}
			rows := []string{"t2_released_" + m + "_data", "t3_released_" + m + "_data"}
			if !set {
				for _, id := range ids {
					if _, ok := stages[id]; ok {
						t.Errorf("-var %s unset: stage %s is planned", v, id)
					}
				}
				for _, r := range rows {
					if cells, _ := syncseCells(x, r); len(cells) > 0 {
						t.Errorf("-var %s unset: row %s has cells %v", v, r, cells)
					}
				}
				continue
			}
			for _, id := range ids {
				if s, ok := stages[id]; !ok || s.Action != "run" {
					t.Errorf("-var %s set: stage %s not planned to run: %+v", v, id, s)
				}
			}

			// Read as published, from the file the variable names.
			vr := x.Config.Variants[0]
			data := vr.Stage(ids[0])
			if data == nil || data.Type.Name != "data.released_syncse" || data.Params.GetAttr("path").AsString() != fixture {
				t.Fatalf("%s: %+v", ids[0], data)
			}
			// Trained as ours: every parameter and the seed of our
			// method's train instance, the dev set too; only the data differs.
			ours, theirs := vr.Stage(fmt.Sprintf("train[%q]", m)), vr.Stage(ids[1])
			if ours == nil || theirs == nil {
				t.Fatalf("train[%q] %v, %s %v", m, ours, ids[1], theirs)
			}
			if theirs.Type != ours.Type || !theirs.Params.RawEquals(ours.Params) || theirs.Seed != ours.Seed {
				t.Errorf("%s trains otherwise than train[%q]: %s %v seed %d, ours %s %v seed %d", ids[1], m, theirs.Type.Name, theirs.Params.GoString(), theirs.Seed, ours.Type.Name, ours.Params.GoString(), ours.Seed)
			}
			if got := syncseInput(theirs, "data"); got != ids[0]+".triplets" {
				t.Errorf("%s: data %s, want %s.triplets", ids[1], got, ids[0])
			}
			if got, want := syncseInput(theirs, "dev"), syncseInput(ours, "dev"); got != want {
				t.Errorf("%s: dev %s, ours %s", ids[1], got, want)
			}
			// Evaluated as ours: the same test data, its own encoder.
			for _, ev := range []string{"eval", "eval_rerank"} {
				o, r := vr.Stage(fmt.Sprintf("%s[%q]", ev, m)), vr.Stage(fmt.Sprintf("%s[%q]", ev, v))
				if o == nil || r == nil || r.Type != o.Type || syncseInput(r, "data") != syncseInput(o, "data") || syncseInput(r, "encoder") != ids[1]+".model" || !r.Params.RawEquals(o.Params) {
					t.Errorf("%s[%q] is not evaluated as %s[%q]: %+v, ours %+v", ev, v, ev, m, r, o)
				}
			}

			// The rows: beside ours, the same columns and paper values.
			for i, r := range rows {
				oursRow := []string{"t2_", "t3_"}[i] + m
				want, _ := syncseCells(x, oursRow)
				got, cells := syncseCells(x, r)
				if len(want) == 0 || strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("row %s: cells %v, ours (%s) %v", r, got, oursRow, want)
				}
				stage := []string{"eval", "eval_rerank"}[i] + fmt.Sprintf("[%q]", v)
				for _, e := range cells {
					if e.Value.Stage != stage || e.Pending != "" || math.IsNaN(e.Paper) || !strings.Contains(e.Row, "(authors' released data; Table "+[]string{"2", "3"}[i]+")") || !strings.HasPrefix(e.Row, map[string]string{"partial": "SynCSE-partial ", "scratch": "SynCSE-scratch "}[m]) {
						t.Errorf("row %s: cell %s: row %q, stage %s, pending %q, paper %v", r, e.Name, e.Row, e.Value.Stage, e.Pending, e.Paper)
					}
				}
			}
		}
	}
	// Nothing else moves: the variables add exactly those stages, and every
	// other stage plans with the same key.
	var added []string
	for id, s := range planned[true] {
		o, ok := planned[false][id]
		if !ok {
			added = append(added, id)
		} else if o.Key != s.Key || o.Action != s.Action {
			t.Errorf("stage %s: key %q %s with the variables, %q %s without", id, s.Key, s.Action, o.Key, o.Action)
		}
	}
	for id := range planned[false] {
		if _, ok := planned[true][id]; !ok {
			t.Errorf("stage %s: planned without the variables only", id)
		}
	}
	var want []string
	for v, m := range syncseReleasedData {
		want = append(want, fmt.Sprintf("released_data[%q]", m), fmt.Sprintf("train[%q]", v), fmt.Sprintf("eval[%q]", v), fmt.Sprintf("eval_rerank[%q]", v))
	}
	slices.Sort(added)
	slices.Sort(want)
	if !slices.Equal(added, want) {
		t.Errorf("the variables add stages %v, want %v", added, want)
	}
}
