package dsl

import (
	"reflect"
	"strings"
	"testing"
)

func TestLoop(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/until.hcl", Options{})
	g := cfg.Variants[0].Graph
	if len(g.Loops) != 1 {
		t.Fatalf("loops %v", g.Loops)
	}
	l := g.Loops[0]
	if l.Name != "idc" || l.Patience != 2 || l.Metric != 2 || l.Output != "metrics" || strings.Join(l.Path, ".") != "stsb" {
		t.Errorf("loop %+v", l)
	}
	if len(l.Rounds) != 4 || !reflect.DeepEqual(l.Rounds[1], []string{"idc[2].annotate", "idc[2].train", "idc[2].score"}) {
		t.Errorf("rounds %v", l.Rounds)
	}
	// repeat.R.last is the last round in the graph; the runner reads the
	// selected round in its place.
	if e := g.Node("eval").Inputs["model"]; e.Node != "idc[4].train" {
		t.Errorf("eval reads %v", e)
	}
	if e := cfg.Expects[0].Value; e.Stage != "idc[4].score" {
		t.Errorf("expect reads %v", e)
	}
	// A target downstream of the loop takes the whole loop: every round's
	// score decides where it stops.
	sub, err := g.Upstream("eval")
	if err != nil {
		t.Fatal(err)
	}
	if sub.Node("idc[3].score") == nil || len(sub.Loops) != 1 {
		t.Errorf("upstream of eval: %v", sub.IDs())
	}
	if err := g.Validate(); err != nil {
		t.Error(err)
	}
	// Without until, no loop.
	if got := loadFile(t, "testdata/infocse.hcl", Options{}).Variants[0].Graph.Loops; len(got) != 0 {
		t.Errorf("loops without until: %v", got)
	}
	// rounds stays the most rounds, and a profile or --set changes it.
	if g := loadFile(t, "testdata/until.hcl", Options{Sets: []string{"repeat.idc.rounds=2"}}).Variants[0].Graph; len(g.Loops[0].Rounds) != 2 {
		t.Errorf("rounds=2: %v", g.Loops[0].Rounds)
	}
}
