package slurm

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"repro/graph"
	"repro/registry"
	"repro/runner"

	"github.com/zclconf/go-cty/cty"
)

// loopGraph is InfoCSE's shape: a source, rounds of (train, score) with
// `until` on the score (patience 1), and eval reading the loop's result
// (its last round in the static graph). scores[r] is round r+1's score.
func loopGraph(t *testing.T, reg *registry.Registry, scores []float64, sep string) *graph.Graph {
	t.Helper()
	g := &graph.Graph{Nodes: []*graph.Node{node(t, reg, "src", "test.write", "x.hcl:1", map[string]cty.Value{"text": cty.StringVal("m")}, nil)}}
	l := &graph.Loop{Name: "idc", Metric: 1, Output: "out", Path: []string{"r5"}, Patience: 1}
	prev := "src"
	for r := 1; r <= len(scores); r++ {
		train, score := fmt.Sprintf("idc[%d].train", r), fmt.Sprintf("idc[%d].score", r)
		g.Nodes = append(g.Nodes,
			node(t, reg, train, "test.join", "x.hcl:5", map[string]cty.Value{"sep": cty.StringVal(fmt.Sprint(r))},
				map[string]graph.Edge{"a": {Node: prev, Output: "out"}, "b": {Node: "src", Output: "out"}}),
			node(t, reg, score, "test.score", "x.hcl:9", map[string]cty.Value{"value": cty.NumberFloatVal(scores[r-1])},
				map[string]graph.Edge{"a": {Node: train, Output: "out"}}))
		l.Rounds = append(l.Rounds, []string{train, score})
		prev = train
	}
	g.Nodes = append(g.Nodes, node(t, reg, "eval", "test.join", "x.hcl:20", map[string]cty.Value{"sep": cty.StringVal(sep)},
		map[string]graph.Edge{"a": {Node: prev, Output: "out"}, "b": {Node: "src", Output: "out"}}))
	g.Loops = []*graph.Loop{l}
	return g
}

func sortedIDs(m map[string]bool) []string {
	var ids []string
	for id, ok := range m {
		if ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Rounds after the first wait for the loop's decision, and so does what
// reads the loop's result: they are deferred and not laid out ahead. Once
// the cache holds a decision that stops the loop, a stage reading the
// stopped last round is deferred too (the runner hands it the selected
// round); the stopped round is not planned to run at all.
func TestDeferredLoop(t *testing.T) {
	reg := testRegistry()
	st := openStore(t)
	ctx := context.Background()
	g := loopGraph(t, reg, []float64{40, 39, 45}, "+")
	plan, err := runner.Plan(ctx, st, g, runner.PlanOptions{Scope: "test"})
	if err != nil {
		t.Fatal(err)
	}
	later := Deferred(g, plan)
	want := []string{"eval", "idc[2].score", "idc[2].train", "idc[3].score", "idc[3].train"}
	if got := sortedIDs(later); !slices.Equal(got, want) {
		t.Errorf("deferred %v, want %v", got, want)
	}
	got := describe(Layout(g, plan, LayoutOptions{Backend: "cpu", Later: later}))
	wantJobs := "#1 src --cpus-per-task=1\n#2 idc[1].train afterok:#1 --cpus-per-task=1\n#3 idc[1].score afterok:#2 --cpus-per-task=1\n"
	if got != wantJobs {
		t.Errorf("layout:\n%s\nwant:\n%s", got, wantJobs)
	}

	// Run it here: round 2 does not beat round 1, round 3 is not needed.
	if _, err := runner.Run(ctx, st, g, runner.Options{Scope: "test"}); err != nil {
		t.Fatal(err)
	}
	// eval with another separator reads the stopped round 3 in the static
	// graph, round 1 at run time: deferred; nothing else runs.
	g2 := loopGraph(t, reg, []float64{40, 39, 45}, "&")
	plan, err = runner.Plan(ctx, st, g2, runner.PlanOptions{Scope: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range plan {
		if strings.HasPrefix(e.ID, "idc[3]") && e.Status != runner.PlanStopped {
			t.Errorf("%s: %v, want stopped", e.ID, e.Status)
		}
	}
	if got := sortedIDs(Deferred(g2, plan)); !slices.Equal(got, []string{"eval"}) {
		t.Errorf("deferred after the decision %v, want [eval]", got)
	}
	if got := describe(Layout(g2, plan, LayoutOptions{Backend: "cpu", Later: Deferred(g2, plan)})); got != "" {
		t.Errorf("layout after the decision:\n%s\nwant nothing", got)
	}
}

// Through Slurm: the first round is submitted ahead; later rounds and the
// loop's reader are submitted when the runner reaches them, with their
// inputs known; the round the decision stops is never submitted. The
// results are a local run's.
func TestClusterLoop(t *testing.T) {
	c, cfg := testCluster(t)
	reg := testRegistry()
	ctx := context.Background()
	local := openStore(t)
	lres, err := runner.Run(ctx, local, loopGraph(t, reg, []float64{40, 39, 45}, "+"), runner.Options{Scope: "test"})
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	g := loopGraph(t, reg, []float64{40, 39, 45}, "+")
	res, err, ex := runSlurm(t, ctx, st, g, cfg)
	if err != nil {
		t.Fatalf("slurm run: %v\n%s", err, c.Logs())
	}
	for _, n := range g.Nodes {
		l, r := lres.Node(n.ID), res.Node(n.ID)
		if r.Status != l.Status || r.Key != l.Key || r.Outputs["out"].Digest != l.Outputs["out"].Digest {
			t.Errorf("%s: slurm %s key %s; local %s key %s", n.ID, r.Status, r.Key, l.Status, l.Key)
		}
	}
	if res.Node("idc[3].train").Status != runner.StatusStopped {
		t.Errorf("round 3: %s, want stopped", res.Node("idc[3].train").Status)
	}
	b, _ := os.ReadFile(res.Node("eval").Outputs["out"].Path("data.txt"))
	if string(b) != "m1m+m\n" { // round 1's model (m1m), then src
		t.Errorf("eval read %q", b)
	}
	ahead := map[string]bool{}
	for _, h := range ex.handles {
		ahead[h.node] = h.spec.Key == "" || h.ahead
		if strings.HasPrefix(h.node, "idc[3]") {
			t.Errorf("stopped round submitted: job %s for %s", h.id, h.node)
		}
	}
	for _, id := range []string{"idc[2].train", "idc[2].score", "eval"} {
		a, ok := ahead[id]
		if !ok || a {
			t.Errorf("%s: submitted %v, ahead %v; want submitted by Execute with its inputs known", id, ok, a)
		}
	}
	for _, j := range c.Jobs() {
		if strings.Contains(j, "idc[3]") {
			t.Errorf("a job for the stopped round: %s", j)
		}
	}
}
