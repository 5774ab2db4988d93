package dsl

import (
	"strings"
	"testing"
)

func TestRepeat(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/infocse.hcl", Options{})
	v := cfg.Variants[0]
	want := "docs init idc[1].annotate idc[1].train idc[1].score idc[2].annotate idc[2].train idc[2].score eval eval_first"
	if got := strings.Join(stageNames(v), " "); got != want {
		t.Fatalf("stages:\n got %s\nwant %s", got, want)
	}
	in := func(stage, input string) string {
		r := v.Stage(stage).Inputs[input]
		return r.Stage + "." + r.Output
	}
	for _, c := range [][3]string{
		{"idc[1].annotate", "model", "init.model"},         // previous in round 1 is start
		{"idc[1].annotate", "documents", "docs.documents"}, // outer stage from inside
		{"idc[1].train", "init", "init.model"},
		{"idc[1].train", "data", "idc[1].annotate.pairs"},  // same round's stage
		{"idc[2].annotate", "model", "idc[1].train.model"}, // previous is next of round 1
		{"idc[2].train", "data", "idc[2].annotate.pairs"},
		{"eval", "model", "idc[2].train.model"},       // last
		{"eval_first", "model", "idc[1].train.model"}, // round[1]
	} {
		if got := in(c[0], c[1]); got != c[2] {
			t.Errorf("%s.%s = %s, want %s", c[0], c[1], got, c[2])
		}
	}
	s := v.Stage("idc[2].train")
	if s.Block != "train" || s.Repeat != "idc" || s.Round != 2 {
		t.Errorf("instance fields = %q %q %d", s.Block, s.Repeat, s.Round)
	}
	e := cfg.Expects[0].Value
	if e.Stage != "idc[1].score" || e.Output != "metrics" || strings.Join(e.Path, ".") != "stsb" {
		t.Errorf("expect through repeat = %+v", e)
	}
	if len(cfg.Repeats) != 1 || cfg.Repeats[0].Rounds != 2 || strings.Join(cfg.Repeats[0].Outputs, ",") != "model,metrics" {
		t.Errorf("repeats = %+v", cfg.Repeats[0])
	}
}

// Raising rounds from 2 to 3 adds round 3's instances and changes nothing
// about rounds 1-2: same names, parameters, inputs and seeds, hence the
// same cache keys.
func TestRepeatMoreRounds(t *testing.T) {
	t.Parallel()
	two := loadFile(t, "testdata/infocse.hcl", Options{}).Variants[0]
	three := loadFile(t, "testdata/infocse.hcl", Options{Vars: map[string]string{"rounds": "3"}}).Variants[0]
	if len(three.Stages) != len(two.Stages)+3 {
		t.Fatalf("3 rounds: %d stages, 2 rounds: %d", len(three.Stages), len(two.Stages))
	}
	for _, s := range two.Stages {
		u := three.Stage(s.Name)
		if s.Repeat == "" {
			continue // eval moves to the new last round, as it should
		}
		if u == nil {
			t.Fatalf("%s missing with 3 rounds", s.Name)
		}
		if !sameInstance(s, u) {
			t.Errorf("%s changed when rounds went from 2 to 3", s.Name)
		}
	}
	for _, n := range []string{"idc[3].annotate", "idc[3].train", "idc[3].score"} {
		if three.Stage(n) == nil {
			t.Errorf("%s missing", n)
		}
	}
	if got := three.Stage("eval").Inputs["model"].Stage; got != "idc[3].train" {
		t.Errorf("last = %s", got)
	}
	// A profile can change the rounds too.
	long := loadFile(t, "testdata/infocse.hcl", Options{Profile: "long"}).Variants[0]
	if long.Stage("idc[4].train") == nil || long.Stage("idc[5].train") != nil {
		t.Errorf("profile rounds: %v", stageNames(long))
	}
	// And a --set list makes one variant per round count.
	cfg := loadFile(t, "testdata/infocse.hcl", Options{Sets: []string{"repeat.idc.rounds=1,3"}})
	if len(cfg.Variants) != 2 || cfg.Variants[0].Stage("idc[2].train") != nil || cfg.Variants[1].Stage("idc[3].train") == nil {
		t.Errorf("rounds axis wrong")
	}
	if cfg.Variants[1].Name != "idc.rounds=3" {
		t.Errorf("name = %q", cfg.Variants[1].Name)
	}
}

func sameInstance(a, b *Stage) bool {
	if a.Name != b.Name || a.Type.Name != b.Type.Name || a.Seed != b.Seed || !a.Params.RawEquals(b.Params) || len(a.Inputs) != len(b.Inputs) {
		return false
	}
	for k, r := range a.Inputs {
		q := b.Inputs[k]
		if r.Stage != q.Stage || r.Output != q.Output || strings.Join(r.Path, ".") != strings.Join(q.Path, ".") {
			return false
		}
	}
	return true
}

// An input can be varied like a parameter: a --set list of references.
func TestVaryInput(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/infocse.hcl", Options{Sets: []string{"stage.eval.model=repeat.idc.last.model, stage.init.model"}})
	if len(cfg.Variants) != 2 {
		t.Fatalf("variants = %d", len(cfg.Variants))
	}
	if got := cfg.Variants[1].Stage("eval").Inputs["model"].Stage; got != "init" {
		t.Errorf("variant 2 eval.model from %s", got)
	}
	if got := cfg.Variants[1].Label["stage.eval.model"].AsString(); got != "stage.init.model" {
		t.Errorf("label = %q", got)
	}
	if got := cfg.Variants[0].Name; got != "eval.model=repeat.idc.last.model" {
		t.Errorf("name = %q", got)
	}
}
