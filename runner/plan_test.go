package runner

import (
	"context"
	"strings"
	"testing"

	"repro/graph"
	"repro/registry"
	"repro/store"

	"github.com/zclconf/go-cty/cty"
)

func planPipeline(t *testing.T, ts map[string]*registry.StageType, text, suffix string, seed int64) *graph.Graph {
	g := &graph.Graph{Nodes: []*graph.Node{
		node(t, "src", ts["source"], map[string]cty.Value{"text": cty.StringVal(text)}, nil),
		node(t, "train", ts["seeded"], map[string]cty.Value{"suffix": cty.StringVal(suffix)}, map[string]graph.Edge{"in": {Node: "src", Output: "out"}}),
		node(t, "eval", ts["transform"], nil, map[string]graph.Edge{"in": {Node: "train", Output: "out"}}),
	}}
	g.Nodes[1].Seed = seed
	return g
}

func planReasons(t *testing.T, c *store.Store, g *graph.Graph, scope string) map[string]string {
	t.Helper()
	plan, err := Plan(context.Background(), c, g, PlanOptions{Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range plan {
		var rs []string
		for _, r := range e.Reasons {
			rs = append(rs, r.String())
		}
		out[e.ID] = e.Status.String()
		if len(rs) > 0 {
			out[e.ID] += ": " + strings.Join(rs, "; ")
		}
	}
	return out
}

func checkPlan(t *testing.T, got, want map[string]string) {
	t.Helper()
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s:\n got  %s\n want %s", id, got[id], w)
		}
	}
}

func TestPlanExplains(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	c := openTemp(t)
	ctx := context.Background()
	const scope = "exp.hcl|mini|"

	checkPlan(t, planReasons(t, c, planPipeline(t, ts, "a", "!", 1), scope), map[string]string{
		"src":   "will run: never run",
		"train": "will run: never run",
		"eval":  "will run: never run",
	})
	res, err := Run(ctx, c, planPipeline(t, ts, "a", "!", 1), Options{Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Plan(ctx, c, planPipeline(t, ts, "a", "!", 1), PlanOptions{Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range plan {
		if e.Status != PlanCached || e.Key != res.Node(e.ID).Key || len(e.Reasons) != 0 {
			t.Errorf("%s: %v key %s (run key %s) %v", e.ID, e.Status, e.Key, res.Node(e.ID).Key, e.Reasons)
		}
	}

	// A parameter change: that stage runs, downstream waits on it.
	checkPlan(t, planReasons(t, c, planPipeline(t, ts, "a", "?", 1), scope), map[string]string{
		"src":   "cached",
		"train": `will run: parameter suffix changed ("!" -> "?")`,
		"eval":  "will run: input in changed (upstream train will run)",
	})
	// The seed of a seeded stage.
	checkPlan(t, planReasons(t, c, planPipeline(t, ts, "a", "!", 2), scope), map[string]string{
		"train": "will run: seed changed (1 -> 2)",
	})
	// A version bump.
	g := planPipeline(t, ts, "a", "!", 1)
	v2 := *ts["seeded"]
	v2.Version = 2
	g.Nodes[1].Type = &v2
	checkPlan(t, planReasons(t, c, g, scope), map[string]string{
		"src":   "cached",
		"train": "will run: stage version changed (1 -> 2)",
	})
	// Another scope has no records: never run, though cached.
	checkPlan(t, planReasons(t, c, planPipeline(t, ts, "a", "?", 1), "other"), map[string]string{
		"src":   "cached",
		"train": "will run: never run",
	})

	// The source changes and runs; afterwards train's input digest differs
	// from its last run.
	if _, err := Run(ctx, c, planPipeline(t, ts, "b", "!", 1), Options{Scope: "tmp", Targets: []string{"src"}}); err != nil {
		t.Fatal(err)
	}
	got := planReasons(t, c, planPipeline(t, ts, "b", "!", 1), scope)
	if got["src"] != "cached" || !strings.HasPrefix(got["train"], "will run: input in changed (") ||
		strings.Contains(got["train"], "upstream") {
		t.Errorf("after upstream change: %v", got)
	}
	// A new input connected, and a node that never ran.
	g = planPipeline(t, ts, "a", "!", 1)
	g.Nodes[2].Inputs["extra"] = graph.Edge{Node: "src", Output: "out"}
	g.Nodes = append(g.Nodes, node(t, "report", ts["transform"], nil, map[string]graph.Edge{"in": {Node: "eval", Output: "out"}}))
	checkPlan(t, planReasons(t, c, g, scope), map[string]string{
		"eval":   "will run: input extra added (src.out)",
		"report": "will run: never run",
	})
}

// A tensor stage whose parameters, seed and inputs are those of its last
// run, planned under another backend family, says so: its key names the
// family, so the cached result is another backend's, not a lost one.
func TestPlanBackendChanged(t *testing.T) {
	ts := testTypes(newCounter(""))
	c := openTemp(t)
	ctx := context.Background()
	const scope = "exp.hcl|mini|"
	g := func() *graph.Graph {
		return &graph.Graph{Nodes: []*graph.Node{node(t, "train", ts["steps"], nil, nil)}}
	}
	if _, err := Run(ctx, c, g(), Options{Scope: scope, Backend: "cpu"}); err != nil {
		t.Fatal(err)
	}
	plan, err := Plan(ctx, c, g(), PlanOptions{Scope: scope, Backend: "cuda"})
	if err != nil {
		t.Fatal(err)
	}
	if e := plan[0]; e.Status != PlanRun || len(e.Reasons) != 1 || e.Reasons[0].String() != "backend changed cpu -> cuda" {
		t.Errorf("plan under cuda: %v %v", e.Status, e.Reasons)
	}
	if plan, _ := Plan(ctx, c, g(), PlanOptions{Scope: scope, Backend: "cpu"}); plan[0].Status != PlanCached {
		t.Errorf("plan under cpu: %v %v", plan[0].Status, plan[0].Reasons)
	}
}
