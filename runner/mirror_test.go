package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"repro/graph"
	"repro/registry"
	"repro/store"

	"github.com/zclconf/go-cty/cty"
)

// chain is src -> pre (a long stage in real life: a pretraining) -> use.
func chain(t *testing.T, ts map[string]*registry.StageType, suffix string) *graph.Graph {
	return &graph.Graph{Nodes: []*graph.Node{
		node(t, "src", ts["source"], map[string]cty.Value{"text": cty.StringVal("corpus")}, nil),
		node(t, "pre", ts["seeded"], map[string]cty.Value{"suffix": cty.StringVal(suffix)}, map[string]graph.Edge{"in": {Node: "src", Output: "out"}}),
		node(t, "use", ts["transform"], nil, map[string]graph.Edge{"in": {Node: "pre", Output: "out"}}),
	}}
}

// publish runs g in a fresh cache and publishes the run of node id into a
// new mirror, which it returns with that cache.
func publish(t *testing.T, g *graph.Graph, id string) (*store.Mirror, *store.Store) {
	t.Helper()
	ctx := context.Background()
	src := openTemp(t)
	res, err := Run(ctx, src, g, Options{Scope: "s"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "mirror")
	if _, err := store.RefreshMirror(ctx, dir, src, []store.MirrorPick{{Key: res.Node(id).Key, Stage: id, Source: "test"}}, 0); err != nil {
		t.Fatal(err)
	}
	m, err := store.OpenMirror(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m, src
}

type events struct {
	mu  sync.Mutex
	evs []Event
}

func (e *events) add(ev Event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
}

func (e *events) of(kind EventKind, node string) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for _, ev := range e.evs {
		if ev.Kind == kind && ev.Node == node {
			out = append(out, ev)
		}
	}
	return out
}

func TestMirrorImportsOnAMiss(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	m, _ := publish(t, chain(t, ts, "!"), "pre")
	cnt.reset()
	ctx := context.Background()
	c := openTemp(t)
	var evs events
	res, err := Run(ctx, c, chain(t, ts, "!"), Options{Scope: "s", Mirror: m, Events: evs.add})
	if err != nil {
		t.Fatal(err)
	}
	if cnt.get("pre") != 0 || cnt.get("src") != 1 || cnt.get("use") != 1 {
		t.Fatalf("executions %v: pre should come from the mirror, src and use run", cnt.n)
	}
	pre := res.Node("pre")
	if pre.Status != StatusCached || !pre.Mirror || len(pre.Warnings) != 0 {
		t.Fatalf("pre: %s, mirror %v, warnings %v", pre.Status, pre.Mirror, pre.Warnings)
	}
	if ev := evs.of(EventCached, "pre"); len(ev) != 1 || ev[0].Status != MirrorStatus {
		t.Errorf("cached events of pre: %+v", ev)
	}
	if b, err := os.ReadFile(res.Node("use").Outputs["out"].Path("data.txt")); err != nil || string(b) != "corpus!0!" {
		t.Errorf("use read %q, %v", b, err)
	}
	// The import is a recorded run of this cache, with the mirror's
	// provenance, and the scope's record: the next run finds it cached.
	info, ok, err := c.Lookup(ctx, pre.Key)
	if err != nil || !ok || info.NodeID != "pre" || info.Type != "test.seeded" {
		t.Fatalf("lookup: %+v %v %v", info, ok, err)
	}
	if probs, err := c.Verify(ctx); err != nil || len(probs) != 0 {
		t.Fatalf("verify after import: %v %v", probs, err)
	}
	cnt.reset()
	res, err = Run(ctx, c, chain(t, ts, "!"), Options{Scope: "s", Mirror: m})
	if err != nil || cnt.total() != 0 || res.Node("pre").Mirror {
		t.Fatalf("second run: %v, executions %v, pre from mirror %v", err, cnt.n, res.Node("pre").Mirror)
	}
	plan, err := Plan(ctx, c, chain(t, ts, "!"), PlanOptions{Scope: "s", Mirror: m})
	if err != nil || plan[1].Status != PlanCached {
		t.Fatalf("plan after import: %v %+v", err, plan)
	}
}

func TestMirrorKeyMismatchIsIgnored(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	m, _ := publish(t, chain(t, ts, "!"), "pre")
	cnt.reset()
	// Another parameter: another key; the mirror's entry is not this
	// stage's output and is never read.
	c := openTemp(t)
	var evs events
	res, err := Run(context.Background(), c, chain(t, ts, "?"), Options{Mirror: m, Events: evs.add})
	if err != nil {
		t.Fatal(err)
	}
	if cnt.get("pre") != 1 || res.Node("pre").Mirror || len(evs.of(EventWarning, "pre")) != 0 {
		t.Fatalf("pre executions %d, from mirror %v", cnt.get("pre"), res.Node("pre").Mirror)
	}
	if b, _ := os.ReadFile(res.Node("use").Outputs["out"].Path("data.txt")); string(b) != "corpus?0!" {
		t.Errorf("use read %q", b)
	}
	// So does another input (src writes other text): pre's key differs.
	g := chain(t, ts, "!")
	g.Nodes[0] = node(t, "src", ts["source"], map[string]cty.Value{"text": cty.StringVal("other")}, nil)
	cnt.reset()
	if _, err := Run(context.Background(), openTemp(t), g, Options{Mirror: m}); err != nil || cnt.get("pre") != 1 {
		t.Fatalf("other input: %v, pre executions %d", err, cnt.get("pre"))
	}
}

func TestMirrorDamagedObjectIsRefusedAndTheStageRuns(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	m, _ := publish(t, chain(t, ts, "!"), "pre")
	o, _ := m.Lookup(m.Index().Runs[0].Key).Output("out")
	// Replace the archive's content by a valid archive of other bytes.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "data.txt"), []byte("corpus!43"), 0o644)
	tamper := openTemp(t)
	d, _, err := tamper.PutObject(other)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tamper.Record(ctx, &store.Run{Key: strings.Repeat("e", 64), Type: "x", Params: []byte("{}"), Outputs: []store.Output{{Port: "out", Kind: "sentences", Digest: d}}})
	fake := filepath.Join(t.TempDir(), "m")
	if _, err := store.RefreshMirror(ctx, fake, tamper, []store.MirrorPick{{Key: strings.Repeat("e", 64), Stage: "x", Source: "x"}}, 0); err != nil {
		t.Fatal(err)
	}
	fm, _ := store.OpenMirror(fake)
	b, _ := os.ReadFile(fm.ObjectFile(d))
	if err := os.WriteFile(m.ObjectFile(o.Digest), b, 0o644); err != nil {
		t.Fatal(err)
	}

	cnt.reset()
	c := openTemp(t)
	var evs events
	res, err := Run(ctx, c, chain(t, ts, "!"), Options{Scope: "s", Mirror: m, Events: evs.add})
	if err != nil {
		t.Fatal(err)
	}
	pre := res.Node("pre")
	if cnt.get("pre") != 1 || pre.Status != StatusRan || pre.Mirror {
		t.Fatalf("pre: executions %d, %s, from mirror %v", cnt.get("pre"), pre.Status, pre.Mirror)
	}
	w := evs.of(EventWarning, "pre")
	if len(w) != 1 || !strings.Contains(w[0].Status, "refused") || !strings.Contains(w[0].Status, "the stage runs instead") || len(pre.Warnings) != 1 {
		t.Fatalf("warnings: %+v / %v", w, pre.Warnings)
	}
	if pre.Outputs["out"].Digest != o.Digest {
		t.Errorf("pre computed %s, the recorded digest is %s", pre.Outputs["out"].Digest, o.Digest)
	}
	if _, err := os.Stat(c.ObjectPath(d)); err == nil {
		t.Error("the damaged archive's content entered the cache")
	}
	if probs, err := c.Verify(ctx); err != nil || len(probs) != 0 {
		t.Fatalf("verify: %v %v", probs, err)
	}
}

func TestNoMirrorRunsEverything(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	publish(t, chain(t, ts, "!"), "pre")
	cnt.reset()
	res, err := Run(context.Background(), openTemp(t), chain(t, ts, "!"), Options{})
	if err != nil || cnt.get("pre") != 1 || res.Node("pre").Mirror {
		t.Fatalf("without a mirror: %v, pre executions %d", err, cnt.get("pre"))
	}
}

func TestPlanSaysMirror(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	m, src := publish(t, chain(t, ts, "!"), "pre")
	ctx := context.Background()
	// No cache at all: src will run; pre's key waits for src, and the
	// mirror holds pre for the input src wrote when it was recorded.
	for _, st := range []*store.Store{nil, openTemp(t)} {
		plan, err := Plan(ctx, st, chain(t, ts, "!"), PlanOptions{Scope: "s", Mirror: m})
		if err != nil {
			t.Fatal(err)
		}
		if plan[0].Status != PlanRun || plan[1].Status != PlanMirror || plan[2].Status != PlanRun {
			t.Fatalf("plan: %+v", plan)
		}
		r := plan[1].Reasons
		if len(r) != 1 || r[0].Kind != ReasonMirror || !strings.Contains(r[0].String(), "if src writes out as recorded") {
			t.Errorf("pre's reasons: %v", r)
		}
		if plan[1].Key != m.Index().Runs[0].Key {
			t.Errorf("pre's key %s, the mirror's %s", plan[1].Key, m.Index().Runs[0].Key)
		}
		if got := plan[2].Reasons; len(got) != 1 || got[0].Kind != ReasonNeverRun || plan[2].Key != "" {
			t.Errorf("use: key %q, reasons %v", plan[2].Key, got)
		}
		if PlanMirror.String() != "mirror" {
			t.Error(PlanMirror.String())
		}
	}
	// src cached: pre's key is known and in the mirror, without condition.
	c := openTemp(t)
	if _, err := Run(ctx, c, chain(t, ts, "!"), Options{Scope: "s", Targets: []string{"src"}}); err != nil {
		t.Fatal(err)
	}
	plan, err := Plan(ctx, c, chain(t, ts, "!"), PlanOptions{Scope: "s", Mirror: m})
	if err != nil {
		t.Fatal(err)
	}
	if plan[0].Status != PlanCached || plan[1].Status != PlanMirror || plan[1].Reasons[0].String() != "in the mirror: imported, not run" {
		t.Fatalf("plan with src cached: %+v", plan)
	}
	// use's key is known from the mirror's digest: never run.
	if plan[2].Status != PlanRun || plan[2].Key == "" || plan[2].Reasons[0].Kind != ReasonNeverRun {
		t.Fatalf("use: %+v", plan[2])
	}
	// Without the mirror: pre will run.
	plan, _ = Plan(ctx, c, chain(t, ts, "!"), PlanOptions{Scope: "s"})
	if plan[1].Status != PlanRun {
		t.Fatalf("no mirror: %+v", plan[1])
	}
	// The source cache has it all: cached beats mirror.
	plan, _ = Plan(ctx, src, chain(t, ts, "!"), PlanOptions{Scope: "s", Mirror: m})
	for _, e := range plan {
		if e.Status != PlanCached {
			t.Errorf("%s: %s in the cache that holds it", e.ID, e.Status)
		}
	}
}
