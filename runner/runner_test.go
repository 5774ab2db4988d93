package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"repro/graph"
	"repro/registry"
	"repro/store"

	"github.com/zclconf/go-cty/cty"
)

// TestKeyComponents changes each key component alone and checks that it,
// and nothing else, changes the key.

func linear(t *testing.T, ts map[string]*registry.StageType, text string) *graph.Graph {
	return &graph.Graph{Nodes: []*graph.Node{
		node(t, "src", ts["source"], map[string]cty.Value{"text": cty.StringVal(text)}, nil),
		node(t, "mid", ts["constant"], nil, map[string]graph.Edge{"in": {Node: "src", Output: "out"}}),
		node(t, "end", ts["transform"], nil, map[string]graph.Edge{"in": {Node: "mid", Output: "out"}}),
		node(t, "side", ts["transform"], map[string]cty.Value{"suffix": cty.StringVal("#")}, map[string]graph.Edge{"in": {Node: "src", Output: "out"}}),
	}}
}

func TestRunCacheAndEarlyCutoff(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	c := openTemp(t)
	ctx := context.Background()
	res, err := Run(ctx, c, linear(t, ts, "a"), Options{Scope: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if cnt.total() != 4 {
		t.Fatalf("first run executed %d stages, want 4", cnt.total())
	}
	out := res.Node("side").Outputs["out"]
	if b, err := os.ReadFile(out.Path("data.txt")); err != nil || string(b) != "a#" {
		t.Fatalf("side output = %q, %v", b, err)
	}
	if got, _, _ := store.DigestDir(out.Dir); got != out.Digest {
		t.Errorf("stored digest %s, recomputed %s", out.Digest, got)
	}

	// Everything cached; renaming a node changes nothing.
	cnt.reset()
	g := linear(t, ts, "a")
	g.Nodes[3].ID = "side_renamed"
	res, err = Run(ctx, c, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cnt.total() != 0 {
		t.Fatalf("cached run executed %v", cnt.n)
	}
	for id, s := range statuses(res) {
		if s != "cached" {
			t.Errorf("%s: %s, want cached", id, s)
		}
	}

	// Changing the source's text re-runs src, mid (its input digest
	// changed) and side; mid writes the same bytes, so end stays cached.
	cnt.reset()
	res, err = Run(ctx, c, linear(t, ts, "b"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"src": "ran", "mid": "ran", "end": "cached", "side": "ran"}
	for id, s := range statuses(res) {
		if want[id] != s {
			t.Errorf("%s: %s, want %s", id, s, want[id])
		}
	}
	// A param change of an unrelated stage runs only that stage.
	cnt.reset()
	g = linear(t, ts, "b")
	g.Nodes[3].Params = params(t, ts["transform"], map[string]cty.Value{"suffix": cty.StringVal("%")})
	if _, err := Run(ctx, c, g, Options{}); err != nil {
		t.Fatal(err)
	}
	if cnt.total() != 1 || cnt.get("side") != 1 {
		t.Errorf("executed %v, want only side", cnt.n)
	}
	// Targets: only the named node and its upstream.
	cnt.reset()
	res, err = Run(ctx, c, linear(t, ts, "c"), Options{Targets: []string{"mid"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Nodes) != 2 || cnt.total() != 2 {
		t.Errorf("targets: %d nodes, executed %v", len(res.Nodes), cnt.n)
	}
	if probs, err := c.Verify(ctx); err != nil || len(probs) != 0 {
		t.Errorf("verify: %v %v", probs, err)
	}
}

func TestProvenance(t *testing.T) {
	ts := testTypes(newCounter(""))
	c := openTemp(t)
	g := &graph.Graph{Nodes: []*graph.Node{
		node(t, "src", ts["source"], nil, nil),
		node(t, "s", ts["seeded"], nil, map[string]graph.Edge{"in": {Node: "src", Output: "out"}}),
	}}
	g.Nodes[1].Seed = 7
	res, err := Run(context.Background(), c, g, Options{Backend: "cpu", Version: "v0.1.0", Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	info, ok, err := c.Lookup(context.Background(), res.Node("s").Key)
	if err != nil || !ok {
		t.Fatalf("lookup: %v %v", ok, err)
	}
	host, _ := os.Hostname()
	if info.Type != "test.seeded" || info.Version != 1 || info.NodeID != "s" || !info.Seeded || info.Seed != 7 ||
		info.Backend != "cpu" || info.ReproVersion != "v0.1.0" || !info.Partial || info.Host != host ||
		info.Device != "cpu" || info.Duration <= 0 || time.Since(info.Time) > time.Minute {
		t.Errorf("provenance: %+v", info)
	}
	if info.Inputs["in"] != res.Node("src").Outputs["out"].Digest {
		t.Errorf("input digest %q, want %q", info.Inputs["in"], res.Node("src").Outputs["out"].Digest)
	}
	if string(info.Params) != `{"sleep_ms":0,"suffix":"!"}` {
		t.Errorf("params %s", info.Params)
	}
	if info.Outputs["out"].Digest != res.Node("s").Outputs["out"].Digest || info.Size != int64(len("hello!7")) {
		t.Errorf("outputs %+v size %d", info.Outputs, info.Size)
	}
	b, _ := os.ReadFile(info.Outputs["out"].Path("data.txt"))
	if string(b) != "hello!7" {
		t.Errorf("content %q", b)
	}
	list, err := c.List(context.Background())
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %d %v", len(list), err)
	}
}

func TestFailuresKeepGoing(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	c := openTemp(t)
	g := &graph.Graph{Nodes: []*graph.Node{
		node(t, "src", ts["source"], nil, nil),
		node(t, "bad", ts["fail"], nil, map[string]graph.Edge{"in": {Node: "src", Output: "out"}}),
		node(t, "after_bad", ts["transform"], nil, map[string]graph.Edge{"in": {Node: "bad", Output: "out"}}),
		node(t, "after_after", ts["transform"], nil, map[string]graph.Edge{"in": {Node: "after_bad", Output: "out"}}),
		node(t, "boom", ts["panic"], nil, nil),
		node(t, "good", ts["transform"], nil, map[string]graph.Edge{"in": {Node: "src", Output: "out"}}),
	}}
	var events []Event
	res, err := Run(context.Background(), c, g, Options{Events: func(e Event) { events = append(events, e) }})
	var rerr *RunError
	if !errors.As(err, &rerr) {
		t.Fatalf("err = %v, want *RunError", err)
	}
	want := map[string]string{"src": "ran", "bad": "failed", "after_bad": "skipped", "after_after": "skipped", "boom": "failed", "good": "ran"}
	for id, s := range statuses(res) {
		if want[id] != s {
			t.Errorf("%s: %s, want %s", id, s, want[id])
		}
	}
	msg := err.Error()
	for _, s := range []string{"2 stage(s) failed, 2 skipped", "bad (test.fail): bad row at data.txt:3", "boom (test.panic): panic: assignment to entry in nil map",
		res.Node("bad").Log, res.Node("boom").Log, "after_bad (test.transform): skipped"} {
		if !strings.Contains(msg, s) {
			t.Errorf("error lacks %q:\n%s", s, msg)
		}
	}
	logb, _ := os.ReadFile(res.Node("boom").Log)
	if !strings.Contains(string(logb), "PANIC") || !strings.Contains(string(logb), "goroutine") {
		t.Errorf("panic log lacks the stack:\n%s", logb)
	}
	// Nothing of the failed stage is cached, and no temp dir is left.
	if _, ok, _ := c.Lookup(context.Background(), res.Node("bad").Key); ok {
		t.Error("failed stage was recorded")
	}
	if ents, _ := os.ReadDir(filepath.Join(c.Dir(), "tmp")); len(ents) != 0 {
		t.Errorf("temp dirs left: %v", ents)
	}
	kinds := map[EventKind]int{}
	for _, e := range events {
		kinds[e.Kind]++
	}
	if kinds[EventFailed] != 2 || kinds[EventSkipped] != 2 || kinds[EventDone] != 2 || kinds[EventWaiting] < 6 {
		t.Errorf("events by kind: %v", kinds)
	}
}

func TestCancel(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	c := openTemp(t)
	g := &graph.Graph{Nodes: []*graph.Node{
		node(t, "w", ts["wait"], nil, nil),
		node(t, "after", ts["transform"], nil, map[string]graph.Edge{"in": {Node: "w", Output: "out"}}),
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled once w runs: its first progress report comes after it
	// wrote a partial output, and it then waits for the cancellation.
	waiting := false
	res, err := Run(ctx, c, g, Options{Events: func(e Event) {
		if e.Kind == EventProgress && e.Node == "w" {
			waiting = true
			cancel()
		}
	}})
	if !waiting {
		t.Fatal("w never reported progress")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.Node("w").Status != StatusFailed || res.Node("after").Status != StatusSkipped {
		t.Errorf("statuses %v", statuses(res))
	}
	if ents, _ := os.ReadDir(filepath.Join(c.Dir(), "tmp")); len(ents) != 0 {
		t.Errorf("temp dirs left: %v", ents)
	}
	if list, _ := c.List(context.Background()); len(list) != 0 {
		t.Errorf("cancelled run recorded %d runs", len(list))
	}
	if objs, _ := c.Objects(); len(objs) != 0 {
		t.Errorf("cancelled run stored objects %v", objs)
	}
}

func TestEventsAndDevices(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	c := openTemp(t)
	var g graph.Graph
	for _, id := range []string{"a", "b", "c"} {
		g.Nodes = append(g.Nodes, node(t, id, ts["steps"], nil, nil))
		// Distinct keys: the steps type has no params, so vary by version.
		st := *ts["steps"]
		st.Version = len(g.Nodes)
		g.Nodes[len(g.Nodes)-1].Type = &st
	}
	var events []Event
	running, maxRunning := 0, 0
	perGPU := map[string]int{}
	res, err := Run(context.Background(), c, &g, Options{
		Jobs: 4, Devices: []string{"cuda:0", "cuda:1"}, ProgressInterval: 20 * time.Millisecond,
		Events: func(e Event) {
			events = append(events, e)
			switch {
			case e.Kind == EventRunning:
				running++
				perGPU[e.Device]++
				maxRunning = max(maxRunning, running)
			case e.Kind == EventDone:
				running--
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if maxRunning > 2 {
		t.Errorf("%d tensor stages ran at once on 2 GPUs", maxRunning)
	}
	if len(perGPU) != 2 || perGPU["cpu"] != 0 {
		t.Errorf("devices used: %v", perGPU)
	}
	for _, n := range res.Nodes {
		b, _ := os.ReadFile(n.Outputs["out"].Path("metrics.json"))
		if !strings.Contains(string(b), `"cuda:`) || !strings.Contains(string(b), n.Device) {
			t.Errorf("%s ran on %s, wrote %s", n.ID, n.Device, b)
		}
	}
	// Progress: throttled (no two events closer than the interval, except
	// the final one, which is always reported), with an ETA once the rate
	// is known.
	var prog []Event
	for _, e := range events {
		if e.Kind == EventProgress && e.Node == "a" {
			if e.Total != 20 {
				t.Errorf("progress total %d", e.Total)
			}
			prog = append(prog, e)
		}
	}
	var sawETA bool
	for i, e := range prog {
		sawETA = sawETA || e.ETA > 0
		if i > 0 && e.Done < e.Total && e.Time.Sub(prog[i-1].Time) < 20*time.Millisecond {
			t.Errorf("progress events %d and %d only %v apart", i-1, i, e.Time.Sub(prog[i-1].Time))
		}
	}
	if len(prog) < 2 || !sawETA || prog[len(prog)-1].Done != 20 || !strings.HasPrefix(prog[len(prog)-1].Status, "loss ") {
		t.Errorf("progress events %d (eta %v): %+v", len(prog), sawETA, prog)
	}
}

func TestCPUTensorSerialised(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	c := openTemp(t)
	var g graph.Graph
	for i, id := range []string{"a", "b", "c"} {
		st := *ts["steps"]
		st.Version = i + 1
		g.Nodes = append(g.Nodes, &graph.Node{ID: id, Type: &st, Params: cty.EmptyObjectVal})
	}
	running, maxRunning := 0, 0
	_, err := Run(context.Background(), c, &g, Options{Jobs: 4, Events: func(e Event) {
		switch {
		case e.Kind == EventRunning:
			running++
			maxRunning = max(maxRunning, running)
		case e.Kind == EventDone:
			running--
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if maxRunning != 1 {
		t.Errorf("%d CPU tensor stages ran at once, want 1", maxRunning)
	}
}

func TestReports(t *testing.T) {
	c := openTemp(t)
	ctx := context.Background()
	if _, _, err := c.LatestReport(ctx, "x"); !errors.Is(err, store.ErrNoReport) {
		t.Errorf("err = %v", err)
	}
	if err := c.SaveReport(ctx, "x", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.SaveReport(ctx, "x", []byte(`{"a":2}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.SaveReport(ctx, "y", []byte(`{"b":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.SaveReport(ctx, "x", []byte(`{"a":`)); err == nil {
		t.Error("invalid JSON accepted")
	}
	b, at, err := c.LatestReport(ctx, "x")
	if err != nil || string(b) != `{"a":2}` || time.Since(at) > time.Minute {
		t.Errorf("latest = %s %v %v", b, at, err)
	}
}

func TestBadInputsAreErrors(t *testing.T) {
	ts := testTypes(newCounter(""))
	c := openTemp(t)
	// Parameters of the wrong shape refuse the run before it starts, with
	// a message, not a panic.
	g := &graph.Graph{Nodes: []*graph.Node{{ID: "src", Type: ts["source"], Params: cty.ObjectVal(map[string]cty.Value{"text": cty.True})}}}
	_, err := Run(context.Background(), c, g, Options{})
	if err == nil || !strings.Contains(err.Error(), "stage \"src\" (test.source)\n    test.source: decoding parameters") {
		t.Errorf("err = %v", err)
	}
	// A cache path that is a file, and an index that is not SQLite.
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("x"), 0o644)
	if _, err := store.Open(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("open on a file: %v", err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.db"), []byte(strings.Repeat("not a database ", 100)), 0o644)
	if _, err := store.Open(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "index.db")) {
		t.Errorf("open on garbage: %v", err)
	}
}

// Running a merged ablation grid runs the nodes the variants share once.
func TestMergedGridSharesUpstream(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	var vs []*graph.Graph
	for _, suffix := range []string{"1", "2", "3"} {
		vs = append(vs, &graph.Graph{Nodes: []*graph.Node{
			node(t, "src", ts["source"], nil, nil),
			node(t, "mid", ts["transform"], map[string]cty.Value{"suffix": cty.StringVal(suffix)}, map[string]graph.Edge{"in": {Node: "src", Output: "out"}}),
			node(t, "end", ts["transform"], nil, map[string]graph.Edge{"in": {Node: "mid", Output: "out"}}),
		}})
	}
	g, _, err := graph.Merge(vs, []string{"s=1", "s=2", "s=3"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), openTemp(t), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if cnt.get("src") != 1 || cnt.total() != 7 {
		t.Errorf("executions %v, want src once and 7 in all", cnt.n)
	}
}

// Run refuses an invalid graph before running anything.
func TestRunValidates(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	g := &graph.Graph{Nodes: []*graph.Node{node(t, "d", ts["transform"], nil, nil)}}
	if _, err := Run(context.Background(), openTemp(t), g, Options{}); err == nil || !strings.Contains(err.Error(), "required input") {
		t.Errorf("invalid graph: err %v", err)
	}
	if cnt.total() != 0 {
		t.Error("a stage ran")
	}
}

// Resources drive assignment: a stage asking for no GPU stays on the CPU
// even when GPUs are listed; a stage declaring as many cores as -j runs
// alone; the Local executor binds each tensor stage's device and runs
// tensor stages one at a time (the backend is process-wide).
func TestResourcesAndBinding(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	c := openTemp(t)
	var g graph.Graph
	add := func(id string, st *registry.StageType, r registry.Resources) {
		n := node(t, id, st, nil, nil)
		cp := *st
		cp.Version = len(g.Nodes) + 1 // distinct keys
		n.Type = &cp
		n.Resources = r
		g.Nodes = append(g.Nodes, n)
	}
	add("gpu1", ts["steps"], registry.Resources{GPUs: 1, CPUs: 1})
	add("gpu2", ts["steps"], registry.Resources{GPUs: 1, CPUs: 1})
	add("cpuonly", ts["steps"], registry.Resources{CPUs: 1})
	add("wide", ts["source"], registry.Resources{CPUs: 2})
	add("narrow", ts["source"], registry.Resources{CPUs: 1})

	var mu sync.Mutex
	bound, inTensor, maxTensor := map[string]int{}, 0, 0
	exec := &Local{Store: c, Bind: func(d registry.Device) (func(), error) {
		mu.Lock()
		defer mu.Unlock()
		inTensor++
		maxTensor = max(maxTensor, inTensor)
		bound[d.Name+"/"+d.Backend]++
		return func() { mu.Lock(); inTensor--; mu.Unlock() }, nil
	}}
	running := map[string]bool{}
	wideOverlap := false
	res, err := Run(context.Background(), c, &g, Options{
		Jobs: 2, Devices: []string{"cuda:0", "cuda:1"}, Backend: "cuda", Executor: exec,
		Events: func(e Event) {
			switch e.Kind {
			case EventRunning:
				running[e.Node] = true
			case EventDone, EventFailed:
				delete(running, e.Node)
			}
			if running["wide"] && len(running) > 1 {
				wideOverlap = true
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	dev := map[string]string{}
	for _, n := range res.Nodes {
		dev[n.ID] = n.Device
	}
	if !strings.HasPrefix(dev["gpu1"], "cuda:") || !strings.HasPrefix(dev["gpu2"], "cuda:") || dev["cpuonly"] != "cpu" {
		t.Errorf("devices %v", dev)
	}
	if wideOverlap {
		t.Error("a stage declaring cpus = -j ran beside another")
	}
	if maxTensor != 1 || bound["cpu/cuda"] != 1 || bound["cuda:0/cuda"]+bound["cuda:1/cuda"] != 2 {
		t.Errorf("bindings %v, at most %d at once", bound, maxTensor)
	}
	info, ok, err := c.Lookup(context.Background(), res.Node("cpuonly").Key)
	if !ok || err != nil || info.Device != "cpu" || info.Backend != "cuda" {
		t.Errorf("provenance of cpuonly: %+v %v", info, err)
	}
	// A failing Bind fails the stage, naming the device.
	g2 := &graph.Graph{Nodes: []*graph.Node{node(t, "t", ts["steps"], nil, nil)}}
	g2.Nodes[0].Type = func() *registry.StageType { cp := *ts["steps"]; cp.Version = 99; return &cp }()
	bad := &Local{Store: c, Bind: func(registry.Device) (func(), error) { return nil, errors.New("no such device") }}
	if _, err := Run(context.Background(), c, g2, Options{Executor: bad}); err == nil || !strings.Contains(err.Error(), "device cpu: no such device") {
		t.Errorf("failing bind: %v", err)
	}
}

// A tensor stage's results are kept apart per backend family; --any-backend
// serves one computed by another family.
func TestBackendFamiliesKeptApart(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	c := openTemp(t)
	g := &graph.Graph{Nodes: []*graph.Node{node(t, "s", ts["steps"], nil, nil)}}
	ctx := context.Background()
	if _, err := Run(ctx, c, g, Options{Backend: "openblas"}); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, c, g, Options{Backend: "cpu"})
	if err != nil || cnt.get("s") != 2 || res.Node("s").Status != StatusRan {
		t.Fatalf("cpu after openblas: %v, %d executions", err, cnt.get("s"))
	}
	res, err = Run(ctx, c, g, Options{Backend: "cuda", AnyBackend: true})
	if err != nil || cnt.get("s") != 2 || res.Node("s").Status != StatusCached {
		t.Errorf("cuda with AnyBackend should be served from another family: %v, %d executions", err, cnt.get("s"))
	}
	if _, err := Run(ctx, c, g, Options{Backend: "cuda"}); err != nil || cnt.get("s") != 3 {
		t.Errorf("cuda without AnyBackend: %v, %d executions", err, cnt.get("s"))
	}
}
