package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"repro/graph"
	"repro/registry"

	"github.com/zclconf/go-cty/cty"
)

type scoreParams struct {
	Value float64 `cty:"value"`
	Fail  bool    `cty:"fail"`
}

// scoreType writes metrics.json {"r5": value}: a round's validation score.
func scoreType(cnt *counter) *registry.StageType {
	return &registry.StageType{
		Name: "test.score", Version: 1, Params: scoreParams{},
		Inputs:  []registry.Port{{Name: "in", Kind: registry.KindSentences}},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindMetrics}},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*scoreParams)
			cnt.hit(nodeFrom(env))
			if p.Fail {
				return errors.New("validation set unreadable")
			}
			return os.WriteFile(filepath.Join(env.Output("out"), registry.FileMetrics), []byte(fmt.Sprintf(`{"r5": %g}`, p.Value)), 0o644)
		},
	}
}

// loopGraph is InfoCSE's shape: init, then rounds of (train, score) with
// `until` on the score, and eval reading the loop's result (its last round
// in the static graph). scores[r] is round r+1's score.
func loopGraph(t *testing.T, ts map[string]*registry.StageType, score *registry.StageType, scores []float64, failRound int) *graph.Graph {
	g := &graph.Graph{Nodes: []*graph.Node{node(t, "init", ts["source"], map[string]cty.Value{"text": cty.StringVal("m")}, nil)}}
	l := &graph.Loop{Name: "idc", Metric: 1, Output: "out", Path: []string{"r5"}, Patience: 1}
	prev := "init"
	for r := 1; r <= len(scores); r++ {
		train, sc := fmt.Sprintf("idc[%d].train", r), fmt.Sprintf("idc[%d].score", r)
		g.Nodes = append(g.Nodes,
			node(t, train, ts["transform"], map[string]cty.Value{"suffix": cty.StringVal(fmt.Sprint(r))}, map[string]graph.Edge{"in": {Node: prev, Output: "out"}}),
			node(t, sc, score, map[string]cty.Value{"value": cty.NumberFloatVal(scores[r-1]), "fail": cty.BoolVal(r == failRound)},
				map[string]graph.Edge{"in": {Node: train, Output: "out"}}))
		l.Rounds = append(l.Rounds, []string{train, sc})
		prev = train
	}
	g.Nodes = append(g.Nodes, node(t, "eval", ts["transform"], map[string]cty.Value{"suffix": cty.StringVal("=")}, map[string]graph.Edge{"in": {Node: prev, Output: "out"}}))
	g.Loops = []*graph.Loop{l}
	return g
}

func readOut(t *testing.T, r *Result, id string) string {
	t.Helper()
	nr := r.Node(id)
	if nr == nil || nr.Outputs["out"].Dir == "" {
		t.Fatalf("%s has no output", id)
	}
	b, err := os.ReadFile(nr.Outputs["out"].Path("data.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLoopStopsAndSelectsBest(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	score := scoreType(cnt)
	c := openTemp(t)
	ctx := context.Background()
	var decided []string
	opts := Options{Scope: "s", Events: func(ev Event) {
		if ev.Kind == EventDecided {
			decided = append(decided, ev.Node+": "+ev.Status)
		}
	}}
	// Round 2 does not beat round 1: round 3 is not needed, eval reads round 1.
	res, err := Run(ctx, c, loopGraph(t, ts, score, []float64{40, 39, 45}, 0), opts)
	if err != nil {
		t.Fatal(err)
	}
	st := statuses(res)
	for id, want := range map[string]string{"idc[1].train": "ran", "idc[2].score": "ran", "idc[3].train": "stopped", "idc[3].score": "stopped", "eval": "ran"} {
		if st[id] != want {
			t.Errorf("%s: %s, want %s", id, st[id], want)
		}
	}
	if cnt.get("idc[3].train") != 0 {
		t.Error("a stopped round ran")
	}
	if got := readOut(t, res, "eval"); got != "m1=" {
		t.Errorf("eval read %q, want round 1's model (m1=)", got)
	}
	if len(res.Loops) != 1 || res.Loops[0].Best != 1 || !res.Loops[0].Stopped || len(res.Loops[0].Values) != 2 {
		t.Fatalf("loops %+v", res.Loops)
	}
	if got := res.Resolve("idc[3].train"); got != "idc[1].train" {
		t.Errorf("Resolve = %s", got)
	}
	if len(decided) != 1 || !strings.Contains(decided[0], "stopped after round 2") || !strings.Contains(decided[0], "selected round 1") {
		t.Errorf("decision events %q", decided)
	}

	// Plan after the run: round 3 not needed, eval cached under round 1's key.
	p, err := PlanDetailed(ctx, c, loopGraph(t, ts, score, []float64{40, 39, 45}, 0), PlanOptions{Scope: "s"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range p.Entries {
		want := PlanCached
		if strings.HasPrefix(e.ID, "idc[3]") {
			want = PlanStopped
		}
		if e.Status != want {
			t.Errorf("plan %s: %s %v, want %s", e.ID, e.Status, e.Reasons, want)
		}
	}
	if len(p.Loops) != 1 || !strings.Contains(p.Loops[0].String(), "by round: 40.00, 39.00; stopped after round 2") {
		t.Errorf("plan loops %v", p.Loops)
	}

	// A run of the same graph finds everything cached and decides alike.
	cnt.reset()
	res, err = Run(ctx, c, loopGraph(t, ts, score, []float64{40, 39, 45}, 0), opts)
	if err != nil || cnt.total() != 0 || res.Loops[0].Best != 1 {
		t.Errorf("cached re-run: %v, %d executions, %+v", err, cnt.total(), res.Loops)
	}

	// Round 2 improves now: round 3 runs (and does not improve), the most
	// rounds ran; eval reads round 2. Round 1 stays cached.
	cnt.reset()
	res, err = Run(ctx, c, loopGraph(t, ts, score, []float64{40, 42, 41}, 0), opts)
	if err != nil {
		t.Fatal(err)
	}
	if cnt.get("idc[1].train") != 0 || cnt.get("idc[3].train") != 1 {
		t.Errorf("executions: round 1 %d, round 3 %d", cnt.get("idc[1].train"), cnt.get("idc[3].train"))
	}
	if got := readOut(t, res, "eval"); got != "m12=" {
		t.Errorf("eval read %q, want round 2's model", got)
	}
	if l := res.Loops[0]; l.Best != 2 || len(l.Values) != 3 || !strings.Contains(l.Reason, "round 2 not beaten in 1 round") {
		t.Errorf("loop %+v", l)
	}
}

func TestLoopPlanBeforeRunAndTargets(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	score := scoreType(cnt)
	c := openTemp(t)
	ctx := context.Background()
	p, err := PlanDetailed(ctx, c, loopGraph(t, ts, score, []float64{1, 2, 3}, 0), PlanOptions{Scope: "s"})
	if err != nil {
		t.Fatal(err)
	}
	why := map[string]string{}
	for _, e := range p.Entries {
		if e.Status != PlanRun {
			t.Errorf("%s: %s before any run", e.ID, e.Status)
		}
		var rs []string
		for _, r := range e.Reasons {
			rs = append(rs, r.String())
		}
		why[e.ID] = strings.Join(rs, "; ")
	}
	if !strings.Contains(why["idc[2].train"], "runs unless it stops after round 1") {
		t.Errorf("idc[2].train: %s", why["idc[2].train"])
	}
	if !strings.Contains(why["eval"], "its selected round is known once its rounds have run") {
		t.Errorf("eval: %s", why["eval"])
	}
	// --target eval takes the whole loop: every round's score decides.
	res, err := Run(ctx, c, loopGraph(t, ts, score, []float64{1, 2, 3}, 0), Options{Targets: []string{"eval"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Node("idc[3].score") == nil || statuses(res)["idc[3].score"] != "ran" || readOut(t, res, "eval") != "m123=" {
		t.Errorf("targets: %v", statuses(res))
	}
	if l := res.Loops[0]; l.Best != 3 || !strings.Contains(l.Reason, "the most rounds (3) ran") {
		t.Errorf("loop %+v", l)
	}
}

func TestLoopMetricFails(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	c := openTemp(t)
	res, err := Run(context.Background(), c, loopGraph(t, ts, scoreType(cnt), []float64{1, 2, 3}, 2), Options{})
	var re *RunError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a RunError", err)
	}
	st := statuses(res)
	if st["idc[2].score"] != "failed" || st["idc[3].train"] != "skipped" || st["eval"] != "skipped" {
		t.Errorf("statuses %v", st)
	}
	if res.Loops[0].Err == nil || !strings.Contains(res.Node("eval").Err.Error(), "round 2's metric stage idc[2].score failed") {
		t.Errorf("loop %+v; eval: %v", res.Loops[0], res.Node("eval").Err)
	}
}

// A node of a round the loop stopped before is marked stopped, whenever
// it reaches its gate: waiting there when the decision lands, or after.
// (When the final decision also closed the rounds' channels, a waiting node
// now and then woke between those closes and done's, ran, and was skipped
// for its stopped input: CI's TestClusterLoop, 2026-11-24. That window was
// nanoseconds wide and this test does not hit it; settle closing done alone
// is what removes it. The test holds the contract either way.)
func TestLoopGateStopsLaterRounds(t *testing.T) {
	l := &graph.Loop{Name: "idc", Metric: 0, Patience: 1, Rounds: [][]string{{"r1"}, {"r2"}, {"r3"}}}
	for i := 0; i < 500; i++ {
		lr := newLoopRun(l)
		s := &scheduler{loops: []*loopRun{lr}, em: &emitter{}}
		close(lr.after[0]) // round 2 runs
		st := &nodeState{node: &graph.Node{ID: "r3"}, res: NodeResult{ID: "r3"}}
		ran := make(chan bool)
		go func() { ran <- s.gate(context.Background(), st) }()
		if i%2 == 0 {
			runtime.Gosched()
		}
		lr.settle(graph.Decision{Values: []float64{40, 39}, Best: 1, Stopped: true}, nil)
		if <-ran || st.res.Status != StatusStopped {
			t.Fatalf("iteration %d: round 3 let through (%s), want stopped", i, st.res.Status)
		}
	}
	// A round the decision goes on to is let through.
	lr := newLoopRun(l)
	close(lr.after[0])
	s := &scheduler{loops: []*loopRun{lr}, em: &emitter{}}
	if st := (&nodeState{node: &graph.Node{ID: "r2"}}); !s.gate(context.Background(), st) {
		t.Errorf("round 2 held back: %s", st.res.Status)
	}
}
