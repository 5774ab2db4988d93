package runner

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"repro/graph"

	"github.com/zclconf/go-cty/cty"
)

// fakeCluster is a Cluster executor that runs stages in process (through
// Local) and records the scheduler's calls.
type fakeCluster struct {
	local *Local

	mu       sync.Mutex
	passes   []*Pass
	released []string
	stops    int
	running  int
	maxRun   int

	// barrier, when set, holds each of these nodes' Execute until all of
	// them run at once, or until a second passes (they never will: maxRun
	// tells).
	barrier []string
	arrived int
	all     chan struct{}
}

func (f *fakeCluster) Start(ctx context.Context, p *Pass) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.passes = append(f.passes, p)
	return nil
}

func (f *fakeCluster) Release(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = append(f.released, id)
}

func (f *fakeCluster) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops++
}

func (f *fakeCluster) Execute(ctx context.Context, job *Job) (*Outcome, error) {
	f.mu.Lock()
	f.running++
	f.maxRun = max(f.maxRun, f.running)
	wait := slices.Contains(f.barrier, job.Node.ID)
	if wait {
		if f.arrived++; f.arrived == len(f.barrier) {
			close(f.all)
		}
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	if wait {
		select {
		case <-f.all:
		case <-time.After(time.Second):
		case <-ctx.Done():
		}
	}
	out, err := f.local.Execute(ctx, job)
	if out != nil {
		out.Device, out.Host = "cuda:0", "node7"
	}
	return out, err
}

// A Cluster executor sees each pass's plan before anything runs, is told
// about every node the scheduler is done with, and its stages take no local
// slots or devices: with -j 1, three run at once; the device and host it
// reports reach the provenance.
func TestClusterSeam(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	st := openTemp(t)
	g := &graph.Graph{Nodes: []*graph.Node{node(t, "src", ts["source"], nil, nil)}}
	for _, s := range []string{"a", "b", "c"} {
		g.Nodes = append(g.Nodes, node(t, "t_"+s, ts["transform"], map[string]cty.Value{"suffix": cty.StringVal(s)},
			map[string]graph.Edge{"in": {Node: "src", Output: "out"}}))
	}
	// The three transforms wait for each other.
	fc := &fakeCluster{local: &Local{Store: st}, barrier: []string{"t_a", "t_b", "t_c"}, all: make(chan struct{})}
	res, err := Run(context.Background(), st, g, Options{Executor: fc, Jobs: 1, Backend: "cuda"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fc.passes) != 1 || fc.stops != 1 || len(fc.passes[0].Plan) != len(g.Nodes) || fc.passes[0].Backend != "cuda" {
		t.Fatalf("passes %d, stops %d", len(fc.passes), fc.stops)
	}
	for _, e := range fc.passes[0].Plan {
		if e.Status != PlanRun {
			t.Errorf("plan: %s %s", e.ID, e.Status)
		}
	}
	slices.Sort(fc.released)
	if want := g.IDs(); len(fc.released) != len(want) {
		t.Errorf("released %v, want every node", fc.released)
	}
	if fc.maxRun < 3 {
		t.Errorf("at most %d cluster stages ran at once with -j 1; the cluster places them, not local slots", fc.maxRun)
	}
	n := res.Node("t_a")
	info, _, _ := st.Lookup(context.Background(), n.Key)
	if n.Device != "cuda:0" || info.Device != "cuda:0" || info.Host != "node7" {
		t.Errorf("device %s, provenance %+v", n.Device, info)
	}
	// A second run: everything cached, the plan says so, nothing executes.
	fc2 := &fakeCluster{local: &Local{Store: st}}
	if _, err := Run(context.Background(), st, g, Options{Executor: fc2, Backend: "cuda"}); err != nil {
		t.Fatal(err)
	}
	for _, e := range fc2.passes[0].Plan {
		if e.Status != PlanCached {
			t.Errorf("second plan: %s %s", e.ID, e.Status)
		}
	}
	if fc2.maxRun != 0 {
		t.Errorf("a cached run executed %d stage(s)", fc2.maxRun)
	}
}
