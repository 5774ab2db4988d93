package experiment_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/experiment"
	"repro/graph"
	"repro/registry/builtin"
)

// TestReleasedRows: simcse.hcl's paper profile scores the authors' four
// released models when their variables are set: each is loaded as it is by
// model.hf_encoder (the pooling SimCSE evaluates it with, the checkpoint
// the -var names, resolved against the working directory), evaluated by
// evaluate.sts on the same STS test data as our rows, and reported as a
// "(released)" row beside ours with the same paper values, in the same
// column order. Unset, no released stage and no released cell exist in any
// profile, so nothing refuses for want of them.
func TestReleasedRows(t *testing.T) {
	reg := builtin.Default()
	file, _ := filepath.Abs("../experiments/simcse.hcl")
	ckpt, _ := filepath.Abs("../registry/builtin/testdata/hf/bert")
	models := map[string]string{"unsup_bert": "cls_before_pooler", "unsup_roberta": "cls_before_pooler", "sup_bert": "cls", "sup_roberta": "cls"}
	for _, profile := range []string{"", "mini", "ci"} {
		x, _, _, err := experiment.Load(reg, file, experiment.Options{Profile: profile})
		if err != nil {
			t.Fatalf("profile %q: %v", profile, err)
		}
		for _, n := range x.Graph.Nodes {
			if strings.Contains(n.ID, "released") {
				t.Errorf("profile %q without the variables: stage %s", profile, n.ID)
			}
		}
		for _, e := range x.Config.Expects {
			if strings.Contains(e.Row, "released") {
				t.Errorf("profile %q without the variables: cell %s", profile, e.Name)
			}
		}
	}
	vars := map[string]string{}
	for m := range models {
		vars["released_"+m] = ckpt
	}
	// A relative -var path resolves against the working directory, not the
	// experiment file's (where testdata/hf/bert does not exist).
	t.Chdir("../registry/builtin")
	vars["released_sup_bert"] = "testdata/hf/bert"
	x, _, _, err := experiment.Load(reg, file, experiment.Options{Vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	node := map[string]*graph.Node{}
	for _, n := range x.Graph.Nodes {
		node[n.ID] = n
	}
	sts := node["eval_sup_bert"].Inputs["data"]
	for m, pooling := range models {
		id := fmt.Sprintf("released_%s[%q]", m, m)
		n := node[id]
		if n == nil || n.Type.Name != "model.hf_encoder" {
			t.Fatalf("%s: %+v", id, n)
		}
		if got := n.Params.GetAttr("checkpoint"); got != cty.StringVal(ckpt) {
			t.Errorf("%s: checkpoint %v, want %s", id, got, ckpt)
		}
		if got := n.Params.GetAttr("pooling"); got != cty.StringVal(pooling) {
			t.Errorf("%s: pooling %v, want %s", id, got, pooling)
		}
		ev := node[fmt.Sprintf("eval_released[%q]", m)]
		if ev == nil || ev.Type.Name != "evaluate.sts" || ev.Inputs["encoder"] != (graph.Edge{Node: id, Output: "model"}) || ev.Inputs["data"] != sts {
			t.Fatalf("eval_released[%q]: %+v", m, ev)
		}
		// The row: every column of ours, the same paper values, in order.
		var ours, released []string
		for _, e := range x.Config.Expects {
			switch e.Block {
			case m:
				ours = append(ours, fmt.Sprintf("%s=%v", e.Column, e.Paper))
			case "released_" + m:
				released = append(released, fmt.Sprintf("%s=%v", e.Column, e.Paper))
				if e.Value.Stage != ev.ID || e.Value.Output != "metrics" || !strings.HasSuffix(e.Row, "(released)") || e.Tolerance != 1 {
					t.Errorf("cell %s: %+v", e.Name, e)
				}
			}
		}
		if len(ours) != 8 || strings.Join(ours, " ") != strings.Join(released, " ") {
			t.Errorf("%s: released row %v, ours %v", m, released, ours)
		}
	}
}
