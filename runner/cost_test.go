package runner

import (
	"context"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"repro/graph"
	"repro/registry"
	"repro/store"
)

// costType is a tensor type whose estimate is 1 GFLOP an update, 10
// updates once its input is computed (unknown before).
func costType() *registry.StageType {
	return &registry.StageType{
		Name: "test.trainer", Version: 1, Params: transformParams{}, Tensor: true,
		Inputs:  []registry.Port{{Name: "in", Kind: registry.KindSentences}},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Run:     func(context.Context, *registry.Env) error { return nil },
		Cost: func(_ any, in registry.CostInputs) (*registry.CostEstimate, error) {
			e := &registry.CostEstimate{FLOPsPerUpdate: 1e9}
			if _, ok := in.Computed["in"]; ok {
				e.Updates = 10
			}
			return e, nil
		},
	}
}

// The plan's cost of a stage: its type's estimate from the inputs
// computed so far, and a time from the throughput the store measured on
// earlier runs on the same backend.
func TestPlanCosts(t *testing.T) {
	c := openTemp(t)
	ctx := context.Background()
	src := testTypes(newCounter(""))["source"]
	tr := costType()
	g := &graph.Graph{Nodes: []*graph.Node{
		node(t, "src", src, nil, nil),
		node(t, "train", tr, nil, map[string]graph.Edge{"in": {Node: "src", Output: "out"}}),
	}}
	costOf := func() *CostEstimate {
		t.Helper()
		plan, err := Plan(ctx, c, g, PlanOptions{Scope: "s"})
		if err != nil {
			t.Fatal(err)
		}
		if err := PlanCosts(ctx, c, g, plan, "cpu"); err != nil {
			t.Fatal(err)
		}
		if plan[0].Cost != nil {
			t.Errorf("source stage has a cost: %+v", plan[0].Cost)
		}
		return plan[1].Cost
	}
	if e := costOf(); e == nil || e.Updates != 0 || e.FLOPs() != 0 || e.FLOPsPerSecond != 0 || e.Seconds() != 0 {
		t.Fatalf("before any run: %+v", e)
	}
	if _, err := Run(ctx, c, &graph.Graph{Nodes: g.Nodes[:1]}, Options{Scope: "s"}); err != nil {
		t.Fatal(err)
	}
	if e := costOf(); e == nil || e.Updates != 10 || e.FLOPs() != 1e10 || e.FLOPsPerSecond != 0 {
		t.Fatalf("input computed, nothing measured: %+v", e)
	}
	// Earlier runs of the type: 1e10 FLOPs each (their input is in the
	// store) in 4 s on cpu, and one on cuda that does not count.
	plan, _ := Plan(ctx, c, g, PlanOptions{Scope: "s"})
	outs, err := c.Outputs(ctx, plan[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := graph.CanonicalParams(params(t, tr, map[string]cty.Value{"suffix": cty.StringVal("x")}))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range []struct {
		backend string
		d       time.Duration
	}{{"cpu", 4 * time.Second}, {"cuda", time.Second}} {
		run := &store.Run{Key: "earlier" + string(rune('0'+i)), Type: tr.Name, Version: 1, Params: canon,
			Inputs: map[string]string{"in": outs["out"].Digest}, Duration: r.d, Backend: r.backend, Device: "cpu"}
		if err := c.Record(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	e := costOf()
	if e == nil || e.FLOPsPerSecond != 2.5e9 || e.MeasuredRuns != 1 || e.Seconds() != 4 {
		t.Fatalf("after a measured run: %+v (%v s)", e, e.Seconds())
	}
}
