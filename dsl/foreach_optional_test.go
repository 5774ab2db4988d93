package dsl

import (
	"strings"
	"testing"
)

// A stage and its table row present only when a variable is set
// (experiments/simcse.hcl's released models): for_each over an empty list
// or object leaves no instance and no cell, and nothing reads the absent
// instance; set, the instance runs and its cells come in the order the
// taken branch writes them.
func TestForEachOnlyWhenSet(t *testing.T) {
	t.Parallel()
	src := `
experiment "x" {
}
variable "released" {
  default = ""
}
locals {
  paper = { STS12 = 70.0, Avg = 75.0, "STS-B" = 80.0 }
}
stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}
stage "train" {
  uses = "train.encoder"
  data = stage.mask.pairs
}
stage "released" {
  for_each      = var.released == "" ? [] : ["released"]
  uses          = "train.encoder"
  data          = stage.mask.pairs
  learning_rate = 1e-5
}
stage "eval" {
  uses  = "evaluate.sts"
  model = stage.train.model
}
stage "eval_released" {
  for_each = merge(stage.released)
  uses     = "evaluate.sts"
  model    = each.value.model
}
expect "ours" {
  for_each = local.paper
  column   = each.key
  value    = stage.eval.metrics.avg
  paper    = each.value
}
expect "released" {
  for_each = var.released == "" ? {} : local.paper
  column   = each.key
  value    = stage.eval_released["released"].metrics.avg
  paper    = each.value
}
`
	for _, c := range []struct {
		vars           map[string]string
		stages, expect string
	}{
		{nil, "corpus mask train eval", "ours[STS12] ours[Avg] ours[STS-B]"},
		{map[string]string{"released": "dir"}, `corpus mask train released["released"] eval eval_released["released"]`,
			`ours[STS12] ours[Avg] ours[STS-B] released[STS12]:eval_released["released"] released[Avg]:eval_released["released"] released[STS-B]:eval_released["released"]`},
	} {
		cfg := mustLoad(t, "x.hcl", []byte(src), Options{Vars: c.vars})
		if got := strings.Join(stageNames(cfg.Variants[0]), " "); got != c.stages {
			t.Errorf("vars %v: stages %s, want %s", c.vars, got, c.stages)
		}
		var ex []string
		for _, x := range cfg.Expects {
			if x.Block == "released" {
				ex = append(ex, x.Name+":"+x.Value.Stage)
			} else {
				ex = append(ex, x.Name)
			}
		}
		if got := strings.Join(ex, " "); got != c.expect {
			t.Errorf("vars %v: expects %s, want %s", c.vars, got, c.expect)
		}
	}
}
