package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"repro/graph"
	"repro/store"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"
)

// Helper processes: the test binary re-executes itself with
// REPRO_RUNNER_HELPER set; TestMain then runs the crash pipeline on the
// cache in REPRO_RUNNER_CACHE, appending each stage execution to
// REPRO_RUNNER_SIDE, and exits.
func TestMain(m *testing.M) {
	if os.Getenv("REPRO_RUNNER_HELPER") != "" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

func helperMain() int {
	cnt := newCounter(os.Getenv("REPRO_RUNNER_SIDE"))
	g, err := crashPipeline(cnt)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	c, err := store.Open(os.Getenv("REPRO_RUNNER_CACHE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer c.Close()
	if _, err := Run(context.Background(), c, g, Options{Jobs: 2, Scope: "helper"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// crashPipeline: two sources writing 1 MiB each in chunks, two transforms,
// a join and a seeded final stage; about 150 ms end to end.
func crashPipeline(cnt *counter) (*graph.Graph, error) {
	ts := testTypes(cnt)
	mk := func(id, typ string, over map[string]cty.Value, in map[string]graph.Edge) (*graph.Node, error) {
		p, err := ts[typ].ParamObject(over)
		return &graph.Node{ID: id, Type: ts[typ], Params: p, Inputs: in, Seed: 5}, err
	}
	kib := strings.Repeat("x", 1023) + "\n"
	specs := []struct {
		id, typ string
		over    map[string]cty.Value
		in      map[string]graph.Edge
	}{
		{"a", "source", map[string]cty.Value{"text": cty.StringVal("a" + kib), "repeat": cty.NumberIntVal(1024), "chunks": cty.NumberIntVal(8), "sleep_ms": cty.NumberIntVal(4)}, nil},
		{"b", "source", map[string]cty.Value{"text": cty.StringVal("b" + kib), "repeat": cty.NumberIntVal(1024), "chunks": cty.NumberIntVal(8), "sleep_ms": cty.NumberIntVal(5)}, nil},
		{"am", "transform", map[string]cty.Value{"sleep_ms": cty.NumberIntVal(20)}, map[string]graph.Edge{"in": {Node: "a", Output: "out"}}},
		{"bm", "transform", map[string]cty.Value{"sleep_ms": cty.NumberIntVal(15)}, map[string]graph.Edge{"in": {Node: "b", Output: "out"}}},
		{"join", "transform", map[string]cty.Value{"sleep_ms": cty.NumberIntVal(10)}, map[string]graph.Edge{"in": {Node: "am", Output: "out"}, "extra": {Node: "bm", Output: "out"}}},
		{"fin", "seeded", map[string]cty.Value{"sleep_ms": cty.NumberIntVal(10)}, map[string]graph.Edge{"in": {Node: "join", Output: "out"}}},
	}
	g := &graph.Graph{}
	for _, s := range specs {
		n, err := mk(s.id, s.typ, s.over, s.in)
		if err != nil {
			return nil, err
		}
		g.Nodes = append(g.Nodes, n)
	}
	return g, nil
}

func helperCmd(t *testing.T, cache, side string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REPRO_RUNNER_HELPER=1", "REPRO_RUNNER_CACHE="+cache, "REPRO_RUNNER_SIDE="+side)
	return cmd
}

func sideCounts(t *testing.T, side string) map[string]int {
	b, err := os.ReadFile(side)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	m := map[string]int{}
	for _, l := range strings.Fields(string(b)) {
		m[l]++
	}
	return m
}

// Two processes run the same pipeline on one cache at the same time: every
// stage is computed exactly once and the cache stays sound.
func TestTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	cache, side := filepath.Join(dir, "cache"), filepath.Join(dir, "side")
	var wg sync.WaitGroup
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = helperCmd(t, cache, side).CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("helper %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	counts := sideCounts(t, side)
	for _, id := range []string{"a", "b", "am", "bm", "join", "fin"} {
		if counts[id] != 1 {
			t.Errorf("%s computed %d times", id, counts[id])
		}
	}
	c, err := store.Open(cache)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if probs, err := c.Verify(context.Background()); err != nil || len(probs) != 0 {
		t.Errorf("verify: %v %v", probs, err)
	}
}

// Kill -9 a helper at random moments; after each kill the cache verifies,
// no half entry is visible, and the next run executes exactly the stages
// that were not recorded.
func TestKillNineAnywhere(t *testing.T) {
	iters := 20
	if testing.Short() {
		iters = 6
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	outputsOf := map[string]int{}
	cnt := newCounter("")
	g, err := crashPipeline(cnt)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		outputsOf[n.Type.Name] = len(n.Type.Outputs)
	}
	for it := range iters {
		dir := t.TempDir()
		cache, side := filepath.Join(dir, "cache"), filepath.Join(dir, "side")
		cmd := helperCmd(t, cache, side)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.IntN(250)) * time.Millisecond
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		c, err := store.Open(cache)
		if err != nil {
			t.Fatalf("iteration %d (kill after %v): open: %v", it, delay, err)
		}
		ctx := context.Background()
		if probs, err := c.Verify(ctx); err != nil || len(probs) != 0 {
			t.Fatalf("iteration %d (kill after %v): verify: %v %v", it, delay, probs, err)
		}
		runs, err := c.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if len(r.Outputs) != outputsOf[r.Type] {
				t.Fatalf("iteration %d: half entry %s: %d outputs", it, r.Key, len(r.Outputs))
			}
		}
		plan, err := Plan(ctx, c, g, PlanOptions{Scope: "helper"})
		if err != nil {
			t.Fatal(err)
		}
		wantRun := map[string]bool{}
		for _, e := range plan {
			wantRun[e.ID] = e.Status == PlanRun
		}
		cnt.reset()
		if _, err := Run(ctx, c, g, Options{Jobs: 2}); err != nil {
			t.Fatalf("iteration %d: resume: %v", it, err)
		}
		for _, n := range g.Nodes {
			want := 0
			if wantRun[n.ID] {
				want = 1
			}
			if cnt.get(n.ID) != want {
				t.Errorf("iteration %d (kill after %v): %s executed %d times on resume, want %d", it, delay, n.ID, cnt.get(n.ID), want)
			}
		}
		t.Logf("iteration %d: killed after %v, %d of %d stages recorded, helper executed %v", it, delay, len(runs), len(g.Nodes), sideCounts(t, side))
		if probs, err := c.Verify(ctx); err != nil || len(probs) != 0 {
			t.Fatalf("iteration %d: verify after resume: %v %v", it, probs, err)
		}
		// GC clears what the killed process left in tmp/.
		if _, err := c.GC(ctx, store.GCOptions{}); err != nil {
			t.Fatal(err)
		}
		if ents, _ := os.ReadDir(filepath.Join(cache, "tmp")); len(ents) != 0 {
			t.Errorf("iteration %d: temp entries left after gc: %d", it, len(ents))
		}
		c.Close()
	}
}
