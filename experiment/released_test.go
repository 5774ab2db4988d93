package experiment_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/experiment"
	"repro/graph"
	"repro/registry/builtin"
)

// releasedModel is one released model's row: its variable (released_KEY),
// how it is read (model.hf_encoder's pooling; for a T5, model.hf_t5_encoder
// with GenSE's T_s and first decoder output), the expect block of its row
// and the block of ours it stands beside (the same paper values).
type releasedModel struct {
	key, pooling, block, ours string
}

// t5Read is how the released GenSE encoders are read: as ours are.
const t5Read = "t5"

// releasedStage is the name of the stage that loads released model key:
// one for_each block's instance, released["KEY"].
func releasedStage(file, key string) string {
	return fmt.Sprintf("released[%q]", key)
}

// releasedRows lists each experiment's released models.
var releasedRows = map[string][]releasedModel{
	"simcse.hcl": {
		{"unsup_bert", "cls_before_pooler", "released_unsup_bert", "unsup_bert"},
		{"unsup_roberta", "cls_before_pooler", "released_unsup_roberta", "unsup_roberta"},
		{"sup_bert", "cls", "released_sup_bert", "sup_bert"},
		{"sup_roberta", "cls", "released_sup_roberta", "sup_roberta"},
	},
	"gense.hcl": {
		{"gense", t5Read, "released_gense", "gense"},
		{"gense_plus", t5Read, "released_gense_plus", "qa_not_here"},
	},
	"syncse.hcl": {
		{"partial", "cls", "t2_released_partial", "t2_partial"},
		{"scratch", "cls", "t2_released_scratch", "t2_scratch"},
		{"partial_large", "cls", "t2_released_partial_large", "t2_large_partial"},
		{"scratch_large", "cls", "t2_released_scratch_large", "t2_large_scratch"},
	},
}

// TestReleasedRows: an experiment's paper profile scores the authors'
// released models when their variables are set: each is loaded as it is by
// model.hf_encoder (the pooling it is evaluated with, the checkpoint the
// -var names, resolved against the working directory), evaluated by
// evaluate.sts on the same STS test data as our rows, and reported as a
// "released" row beside ours with the same paper values, in the same
// column order. Unset, no released stage and no released cell exist in any
// profile, so nothing refuses for want of them.
func TestReleasedRows(t *testing.T) {
	reg := builtin.Default()
	bert, _ := filepath.Abs("../registry/builtin/testdata/hf/bert")
	t5, _ := filepath.Abs("../registry/builtin/testdata/hf/t5")
	files := map[string]string{}
	for name := range releasedRows {
		files[name], _ = filepath.Abs(filepath.Join("../experiments", name))
	}
	// A relative -var path resolves against the working directory, not the
	// experiment file's (where testdata/hf/bert does not exist).
	t.Chdir("../registry/builtin")
	for name, models := range releasedRows {
		file := files[name]
		x, _, _, err := experiment.Load(reg, file, experiment.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, profile := range append([]string{""}, x.Config.Profiles...) {
			y, _, _, err := experiment.Load(reg, file, experiment.Options{Profile: profile})
			if err != nil {
				t.Fatalf("%s profile %q: %v", name, profile, err)
			}
			for _, n := range y.Graph.Nodes {
				if strings.Contains(n.ID, "released") {
					t.Errorf("%s profile %q without the variables: stage %s", name, profile, n.ID)
				}
			}
			for _, e := range y.Config.Expects {
				if strings.Contains(e.Row, "released") {
					t.Errorf("%s profile %q without the variables: cell %s", name, profile, e.Name)
				}
			}
		}
		ckpt, rel := bert, "testdata/hf/bert"
		if models[0].pooling == t5Read {
			ckpt, rel = t5, "testdata/hf/t5"
		}
		vars := map[string]string{}
		for i, m := range models {
			vars["released_"+m.key] = ckpt
			if i == 0 {
				vars["released_"+m.key] = rel
			}
		}
		x, _, _, err = experiment.Load(reg, file, experiment.Options{Vars: vars})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		node := map[string]*graph.Node{}
		var sts *graph.Edge
		for _, n := range x.Graph.Nodes {
			node[n.ID] = n
			if n.Type.Name == "evaluate.sts" && !strings.Contains(n.ID, "released") && sts == nil {
				e := n.Inputs["data"]
				sts = &e
			}
		}
		for _, m := range models {
			id := releasedStage(name, m.key)
			n := node[id]
			typ := "model.hf_encoder"
			if m.pooling == t5Read {
				typ = "model.hf_t5_encoder"
			}
			if n == nil || n.Type.Name != typ {
				t.Fatalf("%s: %s: %+v", name, id, n)
			}
			if got := n.Params.GetAttr("checkpoint"); got != cty.StringVal(ckpt) {
				t.Errorf("%s: %s: checkpoint %v, want %s", name, id, got, ckpt)
			}
			if m.pooling == t5Read {
				// Read as our GenSE encoders are: every reading parameter
				// as the paper profile's embed stage has it.
				embed := node[`embed["gense"]`]
				for _, p := range []string{"mode", "template", "max_length"} {
					if got, want := n.Params.GetAttr(p), embed.Params.GetAttr(p); !got.RawEquals(want) {
						t.Errorf("%s: %s: %s %v, our encoder's %v", name, id, p, got, want)
					}
				}
			} else if got := n.Params.GetAttr("pooling"); got != cty.StringVal(m.pooling) {
				t.Errorf("%s: %s: pooling %v, want %s", name, id, got, m.pooling)
			}
			ev := node[fmt.Sprintf("eval_released[%q]", m.key)]
			if ev == nil || ev.Type.Name != "evaluate.sts" || ev.Inputs["encoder"] != (graph.Edge{Node: id, Output: "model"}) || ev.Inputs["data"] != *sts {
				t.Fatalf("%s: eval_released[%q]: %+v", name, m.key, ev)
			}
			// The row: every column of ours, the same paper values, in order.
			var ours, released []string
			for _, e := range x.Config.Expects {
				switch e.Block {
				case m.ours:
					ours = append(ours, fmt.Sprintf("%s=%v", e.Column, e.Paper))
				case m.block:
					released = append(released, fmt.Sprintf("%s=%v", e.Column, e.Paper))
					if e.Value.Stage != ev.ID || e.Value.Output != "metrics" || !strings.Contains(e.Row, "released") || e.Tolerance != 1 || e.Pending != "" {
						t.Errorf("%s: cell %s: %+v", name, e.Name, e)
					}
				}
			}
			if m.ours == "qa_not_here" {
				// GenSE+ is not trained here: its one pending cell (Avg)
				// is the released row's.
				if len(released) != 8 || len(ours) != 2 || !slices.Contains(released, ours[1]) || !strings.HasPrefix(ours[1], "Avg=") {
					t.Errorf("%s: %s: released row %v, the paper's pending cells %v", name, m.key, released, ours)
				}
				continue
			}
			if len(ours) != 8 || strings.Join(ours, " ") != strings.Join(released, " ") {
				t.Errorf("%s: %s: released row %v, ours %v", name, m.key, released, ours)
			}
		}
	}
}
