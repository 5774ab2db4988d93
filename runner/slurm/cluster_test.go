package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"repro/graph"
	"repro/registry"
	"repro/runner"
	"repro/runner/slurm/slurmtest"
	"repro/store"

	"github.com/zclconf/go-cty/cty"
)

// The tests below run real jobs on a throwaway Slurm cluster (package
// slurmtest); the jobs are this test binary acting as `repro stage-exec`
// (see TestMain).

func testCluster(t *testing.T) (*slurmtest.Cluster, Config) {
	t.Helper()
	c := slurmtest.Start(t)
	t.Setenv("REPRO_SLURM_TEST_JOB", "1") // exported to the jobs by sbatch
	return c, Config{Repro: os.Args[0], Poll: 100 * time.Millisecond, Grace: 5 * time.Second, Version: "test"}
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// gridGraph: a cached-or-not source, a three-cell grid of one stage block,
// the next block per cell, and a stage reading two cells.
func gridGraph(t *testing.T, reg *registry.Registry) *graph.Graph {
	s := func(v string) map[string]cty.Value { return map[string]cty.Value{"text": cty.StringVal(v)} }
	g := &graph.Graph{Nodes: []*graph.Node{node(t, reg, "src", "test.write", "x.hcl:1", s("src"), nil)}}
	for _, v := range []string{"1", "2", "3"} {
		g.Nodes = append(g.Nodes, node(t, reg, "mask@k="+v, "test.write", "x.hcl:5", s("mask"+v), nil))
	}
	for _, v := range []string{"1", "2", "3"} {
		g.Nodes = append(g.Nodes, node(t, reg, "train@k="+v, "test.join", "x.hcl:9", nil,
			map[string]graph.Edge{"a": {Node: "mask@k=" + v, Output: "out"}, "b": {Node: "src", Output: "out"}}))
	}
	g.Nodes = append(g.Nodes, node(t, reg, "all", "test.join", "x.hcl:20", nil,
		map[string]graph.Edge{"a": {Node: "train@k=1", Output: "out"}, "b": {Node: "train@k=3", Output: "out"}}))
	return g
}

func runSlurm(t *testing.T, ctx context.Context, st *store.Store, g *graph.Graph, cfg Config) (*runner.Result, error, *Executor) {
	t.Helper()
	return runSlurmEvents(t, ctx, st, g, cfg, nil)
}

// runSlurmEvents is runSlurm with the runner's events going to events.
func runSlurmEvents(t *testing.T, ctx context.Context, st *store.Store, g *graph.Graph, cfg Config, events func(runner.Event)) (*runner.Result, error, *Executor) {
	t.Helper()
	ex, err := Open(ctx, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, rerr := runner.Run(ctx, st, g, runner.Options{Executor: ex, Scope: "test", Events: events})
	if err := ex.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	return res, rerr, ex
}

// sleeping reports whether e says that node's test.write stage sleeps in
// its job: the job runs, and the stage within it, where a SIGTERM cancels
// its context (TestMain). The executor passes on the job's own progress.
func sleeping(e runner.Event, node string) bool {
	return e.Kind == runner.EventProgress && e.Node == node && strings.HasSuffix(e.Status, ": sleeping")
}

// A grid through Slurm computes what a local run computes, byte for byte,
// with each stage block's cells as one job array.
func TestClusterGridMatchesLocal(t *testing.T) {
	c, cfg := testCluster(t)
	reg := testRegistry()
	g := gridGraph(t, reg)
	local := openStore(t)
	lres, err := runner.Run(context.Background(), local, g, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	res, err, _ := runSlurm(t, context.Background(), st, g, cfg)
	if err != nil {
		t.Fatalf("slurm run: %v\n%s", err, c.Logs())
	}
	for _, n := range g.Nodes {
		l, r := lres.Node(n.ID), res.Node(n.ID)
		if r.Status != runner.StatusRan || l.Key != r.Key || l.Outputs["out"].Digest != r.Outputs["out"].Digest {
			t.Errorf("%s: slurm %s key %s digest %s; local key %s digest %s", n.ID, r.Status, r.Key, r.Outputs["out"].Digest, l.Key, l.Outputs["out"].Digest)
		}
		info, ok, err := st.Lookup(context.Background(), r.Key)
		if err != nil || !ok || info.Host == "" || info.Device != "cpu" {
			t.Errorf("%s: provenance %+v %v %v", n.ID, info, ok, err)
		}
	}
	b, _ := os.ReadFile(res.Node("all").Outputs["out"].Path("data.txt"))
	if string(b) != "mask1+src+mask3+src\n" {
		t.Errorf("all: %q", b)
	}
	// One array per grid block: three task logs of one job ID each.
	arrays := map[string]int{}
	logs, _ := filepath.Glob(filepath.Join(st.Dir(), "logs", "slurm-*_*.out"))
	for _, l := range logs {
		m := regexp.MustCompile(`slurm-(\d+)_\d+\.out$`).FindStringSubmatch(l)
		arrays[m[1]]++
	}
	if len(arrays) != 2 {
		t.Errorf("want 2 job arrays (mask, train), got %v\n%s", arrays, strings.Join(c.Jobs(), "\n"))
	}
	for id, n := range arrays {
		if n != 3 {
			t.Errorf("array %s has %d task logs, want 3", id, n)
		}
	}
	// Everything was adopted or cleaned: no run directory is left.
	if left, _ := filepath.Glob(filepath.Join(st.Dir(), stateDir, "*", "*.spec.json")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	// Cached now: a second run submits nothing.
	before := len(c.Jobs())
	if _, err, _ := runSlurm(t, context.Background(), st, g, cfg); err != nil {
		t.Fatal(err)
	}
	if after := len(c.Jobs()); after != before {
		t.Errorf("a cached run submitted %d job(s)", after-before)
	}
}

// A stage that fails and one cancelled with scancel while it runs: each
// error says the job's state, exit code and the tail of its log; what
// depends on them is skipped and its job cancelled; nothing is recorded.
func TestClusterFailureAndScancel(t *testing.T) {
	c, cfg := testCluster(t)
	reg := testRegistry()
	g := &graph.Graph{Nodes: []*graph.Node{
		node(t, reg, "bad", "test.write", "x.hcl:1", map[string]cty.Value{"fail": cty.True}, nil),
		node(t, reg, "slow", "test.write", "x.hcl:2", map[string]cty.Value{"seconds": cty.NumberIntVal(120)}, nil),
	}}
	g.Nodes = append(g.Nodes, node(t, reg, "after", "test.join", "x.hcl:3", nil, map[string]graph.Edge{"a": {Node: "slow", Output: "out"}}))
	st := openStore(t)
	// scancel the slow stage's job once the stage sleeps in it.
	sleeps, done := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-sleeps:
		case <-done:
			return
		}
		for _, j := range c.Jobs() {
			if f := strings.Split(j, "|"); f[1] == "slow" {
				exec.Command("scancel", f[0]).Run()
			}
		}
	}()
	var once sync.Once
	res, err, _ := runSlurmEvents(t, context.Background(), st, g, cfg, func(e runner.Event) {
		if sleeping(e, "slow") {
			once.Do(func() { close(sleeps) })
		}
	})
	close(done)
	var re *runner.RunError
	if !errors.As(err, &re) || len(re.Failed) != 2 || len(re.Skipped) != 1 {
		t.Fatalf("want 2 failed, 1 skipped: %v", err)
	}
	bad := res.Node("bad").Err.Error()
	for _, want := range []string{"FAILED", "exit code 1", "failing as asked", "job log", "the stage fails on purpose"} {
		if !strings.Contains(bad, want) {
			t.Errorf("bad's error lacks %q:\n%s", want, bad)
		}
	}
	slow := res.Node("slow").Err.Error()
	// The job stops on SIGTERM, saying so.
	for _, want := range []string{"CANCELLED", "context canceled", "job log", "CANCELLED AT"} {
		if !strings.Contains(slow, want) {
			t.Errorf("slow's error lacks %q:\n%s", want, slow)
		}
	}
	for _, j := range c.Jobs() {
		if f := strings.Split(j, "|"); f[1] == "after" && f[2] != "CANCELLED" {
			t.Errorf("the dependant's job is %s, want CANCELLED", j)
		}
	}
	for _, id := range []string{"bad", "slow"} {
		if k := res.Node(id).Key; k != "" {
			if outs, _ := st.Outputs(context.Background(), k); outs != nil {
				t.Errorf("%s recorded", id)
			}
		}
	}
}

// Cancelling the coordinator's context (Ctrl-C, SIGTERM) cancels every job
// it submitted, running or waiting.
func TestClusterCancelledRunCancelsJobs(t *testing.T) {
	c, cfg := testCluster(t)
	reg := testRegistry()
	g := &graph.Graph{Nodes: []*graph.Node{
		node(t, reg, "slow", "test.write", "x.hcl:2", map[string]cty.Value{"seconds": cty.NumberIntVal(120)}, nil),
	}}
	g.Nodes = append(g.Nodes, node(t, reg, "after", "test.join", "x.hcl:3", nil, map[string]graph.Edge{"a": {Node: "slow", Output: "out"}}))
	st := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled once the slow stage sleeps in its job.
	_, err, _ := runSlurmEvents(t, ctx, st, g, cfg, func(e runner.Event) {
		if sleeping(e, "slow") {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want a cancelled run: %v", err)
	}
	for _, j := range c.Jobs() {
		if f := strings.Split(j, "|"); f[2] != "CANCELLED" {
			t.Errorf("job left %s: %s", f[2], j)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(st.Dir(), stateDir, "*", "*.spec.json")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A request-sending stage in a job reads the answers already in the cache
// (through the snapshot) and its new answers reach the index (through the
// journal): the job never opens SQLite.
func TestClusterRequestJournal(t *testing.T) {
	_, cfg := testCluster(t)
	reg := testRegistry()
	st := openStore(t)
	rs, err := st.Requests()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := rs.PutRequest(ctx, registry.StoredRequest{Key: key("q1"), Provider: "test", Model: "m", Request: []byte(`{}`), Response: []byte(`"cached answer"`)}); err != nil {
		t.Fatal(err)
	}
	g := &graph.Graph{Nodes: []*graph.Node{node(t, reg, "ask", "test.ask", "x.hcl:1", nil, nil)}}
	res, err, _ := runSlurm(t, ctx, st, g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(res.Node("ask").Outputs["out"].Path("data.txt"))
	if string(b) != "\"cached answer\"\n" {
		t.Errorf("the job did not find the cached answer: %q", b)
	}
	resp, ok, err := rs.LookupRequest(ctx, key("q2"))
	if err != nil || !ok || string(resp) != `"answer to q2"` {
		t.Errorf("the job's new answer is not in the index: %q %v %v", resp, ok, err)
	}
}

// A coordinator that stops without closing (a crash) leaves its jobs
// running; the next one adopts them: it records what finished, claims what
// still runs, and submits nothing twice. Meanwhile a second coordinator is
// refused, naming the first.
func TestClusterAdoptAfterCrash(t *testing.T) {
	c, cfg := testCluster(t)
	reg := testRegistry()
	g := &graph.Graph{Nodes: []*graph.Node{
		node(t, reg, "quick", "test.write", "x.hcl:1", nil, nil),
		node(t, reg, "slow", "test.write", "x.hcl:2", map[string]cty.Value{"seconds": cty.NumberIntVal(3)}, nil),
	}}
	g.Nodes = append(g.Nodes, node(t, reg, "after", "test.join", "x.hcl:3", nil, map[string]graph.Edge{"a": {Node: "slow", Output: "out"}}))
	st := openStore(t)
	ctx := context.Background()
	first, err := Open(ctx, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, st, cfg); err == nil {
		t.Fatal("a second coordinator was not refused")
	} else if host, _ := os.Hostname(); !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) || !strings.Contains(err.Error(), host) {
		t.Errorf("the refusal does not name the first coordinator: %v", err)
	}
	plan, err := runner.Plan(ctx, st, g, runner.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(ctx, &runner.Pass{Graph: g, Plan: plan, Backend: "cpu"}); err != nil {
		t.Fatal(err)
	}
	// Once quick's job has completed, the crash: the lock goes (as the
	// kernel drops it), nothing is cleaned up or cancelled.
	if _, err := c.WaitJob("quick", "COMPLETED", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	close(first.stop)
	<-first.stopped
	first.lock.unlock()
	submitted := len(c.Jobs())

	res, err, second := runSlurm(t, ctx, st, g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a := second.Adopted; a.Recorded != 1 || a.Live != 2 {
		t.Errorf("adopted %+v, want quick recorded and slow, after live", a)
	}
	if n := len(c.Jobs()); n != submitted {
		t.Errorf("the second coordinator submitted %d job(s); every stage already had one\n%s", n-submitted, strings.Join(c.Jobs(), "\n"))
	}
	if res.Node("quick").Status != runner.StatusCached || res.Node("slow").Status != runner.StatusRan || res.Node("after").Status != runner.StatusRan {
		t.Errorf("statuses: quick %s, slow %s, after %s", res.Node("quick").Status, res.Node("slow").Status, res.Node("after").Status)
	}
	if left, _ := filepath.Glob(filepath.Join(st.Dir(), stateDir, "*", "*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A stage whose resources ask for a GPU, on a run declared on the cuda
// backend, gets one from Slurm (--gres=gpu:1; the cluster's fake GPU
// devices): the job runs it on cuda:0 and the provenance says so. The same
// stage on the cpu backend asks for none and runs on the CPU.
func TestClusterGPU(t *testing.T) {
	c, cfg := testCluster(t)
	if c.GPUs == 0 {
		t.Skip("the test cluster has no (fake) GPUs: making their device files needs root")
	}
	reg := testRegistry()
	n := node(t, reg, "gpu", "test.write", "x.hcl:1", map[string]cty.Value{"text": cty.StringVal("gpu")}, nil)
	n.Resources = registry.Resources{CPUs: 2, GPUs: 1}
	g := &graph.Graph{Nodes: []*graph.Node{n}}
	for backend, want := range map[string]string{"cuda": "cuda:0", "cpu": "cpu"} {
		st := openStore(t)
		ex, err := Open(context.Background(), st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, err := runner.Run(context.Background(), st, g, runner.Options{Executor: ex, Backend: backend})
		ex.Close()
		if err != nil {
			t.Fatalf("%s: %v", backend, err)
		}
		info, _, _ := st.Lookup(context.Background(), res.Node("gpu").Key)
		if info == nil || info.Device != want || res.Node("gpu").Device != want {
			t.Errorf("backend %s: ran on %+v, want %s", backend, info, want)
		}
	}
}

// With nothing submitted ahead (--slurm-ahead -1), every stage is
// submitted when its inputs are stored, as a single job: same results.
func TestClusterNoAhead(t *testing.T) {
	c, cfg := testCluster(t)
	cfg.Ahead = -1
	reg := testRegistry()
	g := gridGraph(t, reg)
	st := openStore(t)
	res, err, _ := runSlurm(t, context.Background(), st, g, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, c.Logs())
	}
	b, _ := os.ReadFile(res.Node("all").Outputs["out"].Path("data.txt"))
	if string(b) != "mask1+src+mask3+src\n" {
		t.Errorf("all: %q", b)
	}
	if arrays, _ := filepath.Glob(filepath.Join(st.Dir(), "logs", "slurm-*_*.out")); len(arrays) > 0 {
		t.Errorf("arrays without ahead submission: %v", arrays)
	}
	if n := len(c.Jobs()); n != len(g.Nodes) {
		t.Errorf("%d jobs for %d stages", n, len(g.Nodes))
	}
}

// A job past its time limit (resources { time = "1m" }) is killed by Slurm:
// the stage fails with the job's TIMEOUT state and its log, its dependant
// is skipped, nothing is recorded. Slurm enforces limits on a timer, so
// this test lasts one to two minutes.
func TestClusterTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for Slurm's time limit (a minute at least)")
	}
	c, cfg := testCluster(t)
	reg := testRegistry()
	slow := node(t, reg, "slow", "test.write", "x.hcl:1", map[string]cty.Value{"seconds": cty.NumberIntVal(600)}, nil)
	slow.Resources = registry.Resources{Time: "1m"}
	g := &graph.Graph{Nodes: []*graph.Node{slow,
		node(t, reg, "after", "test.join", "x.hcl:2", nil, map[string]graph.Edge{"a": {Node: "slow", Output: "out"}})}}
	st := openStore(t)
	start := time.Now()
	res, err, _ := runSlurm(t, context.Background(), st, g, cfg)
	t.Logf("the limit took effect after %s", time.Since(start).Round(time.Second))
	var re *runner.RunError
	if !errors.As(err, &re) || len(re.Failed) != 1 || len(re.Skipped) != 1 {
		t.Fatalf("want 1 failed, 1 skipped: %v", err)
	}
	msg := res.Node("slow").Err.Error()
	for _, want := range []string{"TIMEOUT", "job log"} {
		if !strings.Contains(msg, want) {
			t.Errorf("slow's error lacks %q:\n%s", want, msg)
		}
	}
	for _, j := range c.Jobs() {
		if f := strings.Split(j, "|"); f[1] == "slow" && f[2] != "TIMEOUT" {
			t.Errorf("the job is %s, want TIMEOUT", j)
		}
	}
	if k := res.Node("slow").Key; k != "" {
		if outs, _ := st.Outputs(context.Background(), k); outs != nil {
			t.Error("a timed-out stage was recorded")
		}
	}
}
