package slurm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"repro/graph"
	"repro/registry"
	"repro/runner"

	"github.com/zclconf/go-cty/cty"
)

func allRun(g *graph.Graph) []runner.PlanEntry {
	var p []runner.PlanEntry
	for _, n := range g.Nodes {
		p = append(p, runner.PlanEntry{ID: n.ID, Status: runner.PlanRun})
	}
	return p
}

func describe(jobs []*PlannedJob) string {
	var b strings.Builder
	for _, j := range jobs {
		b.WriteString("#")
		b.WriteString(j.ref(-1)[1:])
		b.WriteString(" " + strings.Join(nodeIDs(j.Nodes), ","))
		if d := j.Dependency(); d != "" {
			b.WriteString(" " + d)
		}
		b.WriteString(" " + strings.Join(j.ResourceArgs(), " "))
		b.WriteString("\n")
	}
	return b.String()
}

// TestLayout: how the stages that will run go out as jobs -- arrays,
// dependencies, resources -- for a graph, its plan and the options.
func TestLayout(t *testing.T) {
	reg := testRegistry()
	// grid: a cached source, a three-cell grid of one stage block, the next
	// block per cell, and a stage reading two cells.
	grid := func() (*graph.Graph, []runner.PlanEntry) {
		s := func(v string) map[string]cty.Value { return map[string]cty.Value{"text": cty.StringVal(v)} }
		g := &graph.Graph{Nodes: []*graph.Node{
			node(t, reg, "src", "test.write", "x.hcl:1", nil, nil),
		}}
		for _, v := range []string{"1", "2", "3"} {
			g.Nodes = append(g.Nodes, node(t, reg, "mask@k="+v, "test.write", "x.hcl:5", s(v), nil))
		}
		for _, v := range []string{"1", "2", "3"} {
			g.Nodes = append(g.Nodes, node(t, reg, "train@k="+v, "test.join", "x.hcl:9", nil,
				map[string]graph.Edge{"a": {Node: "mask@k=" + v, Output: "out"}, "b": {Node: "src", Output: "out"}}))
		}
		g.Nodes = append(g.Nodes, node(t, reg, "all", "test.join", "x.hcl:20", nil,
			map[string]graph.Edge{"a": {Node: "train@k=1", Output: "out"}, "b": {Node: "train@k=3", Output: "out"}}))
		plan := allRun(g)
		plan[0].Status = runner.PlanCached // src is cached
		return g, plan
	}
	// rounds: a, two rounds reading it in turn, and another reader of a.
	rounds := func() (*graph.Graph, []runner.PlanEntry) {
		a := node(t, reg, "a", "test.write", "x.hcl:1", nil, nil)
		r2 := node(t, reg, "r[2]", "test.join", "x.hcl:2", nil, map[string]graph.Edge{"a": {Node: "a", Output: "out"}})
		r3 := node(t, reg, "r[3]", "test.join", "x.hcl:2", nil, map[string]graph.Edge{"a": {Node: "r[2]", Output: "out"}})
		other := node(t, reg, "other", "test.join", "x.hcl:3", nil, map[string]graph.Edge{"a": {Node: "a", Output: "out"}})
		g := &graph.Graph{Nodes: []*graph.Node{a, r2, r3, other}}
		return g, allRun(g)
	}
	// resources: a, and b reading it with resources of its own.
	resources := func() (*graph.Graph, []runner.PlanEntry) {
		a := node(t, reg, "a", "test.write", "x.hcl:1", nil, nil)
		b := node(t, reg, "b", "test.join", "x.hcl:2", nil, map[string]graph.Edge{"a": {Node: "a", Output: "out"}})
		b.Resources = registry.Resources{CPUs: 4, GPUs: 2, Memory: "1.5G", Time: "26h30m"}
		g := &graph.Graph{Nodes: []*graph.Node{a, b}}
		return g, allRun(g)
	}
	for _, tc := range []struct {
		name  string
		graph func() (*graph.Graph, []runner.PlanEntry)
		opts  LayoutOptions
		want  string
	}{
		// The cells of one stage block go out as an array, the next block's
		// array waits for it cell by cell (aftercorr), a stage reading
		// every cell waits for the whole array, and a cached stage is not
		// submitted.
		{"grid", grid, LayoutOptions{Backend: "cpu"}, `#1 mask@k=1,mask@k=2,mask@k=3 --cpus-per-task=1 --array=0-2
#2 train@k=1,train@k=2,train@k=3 aftercorr:#1 --cpus-per-task=1 --array=0-2
#3 all afterok:#2_0:#2_2 --cpus-per-task=1
`},
		// Arrays of at most two tasks (a cluster's MaxArraySize): still
		// cell by cell.
		{"grid, MaxArray 2", grid, LayoutOptions{Backend: "cpu", MaxArray: 2}, `#1 mask@k=1,mask@k=2 --cpus-per-task=1 --array=0-1
#2 mask@k=3 --cpus-per-task=1
#3 train@k=1,train@k=2 aftercorr:#1 --cpus-per-task=1 --array=0-1
#4 train@k=3 afterok:#2 --cpus-per-task=1
#5 all afterok:#3_0:#4 --cpus-per-task=1
`},
		// A node left for later (a round that may not run) is not laid
		// out, nor is anything reading it.
		{"later", rounds, LayoutOptions{Backend: "cpu", Later: map[string]bool{"r[2]": true}},
			"#1 a --cpus-per-task=1\n#2 other afterok:#1 --cpus-per-task=1\n"},
		// An adopted job (an earlier coordinator's, still running) is
		// depended on by its ID and not submitted again; resources become
		// flags.
		{"adopted, cuda", resources, LayoutOptions{Backend: "cuda", Adopted: map[string]string{"a": "77"}},
			"#1 b afterok:77 --cpus-per-task=4 --gres=gpu:2 --mem=1536M --time=1-02:30:00\n"},
		// On the cpu backend a tensor stage computes on the CPU: no GPU
		// asked.
		{"cpu", resources, LayoutOptions{Backend: "cpu"},
			"#1 a --cpus-per-task=1\n#2 b afterok:#1 --cpus-per-task=4 --mem=1536M --time=1-02:30:00\n"},
	} {
		g, plan := tc.graph()
		if got := describe(Layout(g, plan, tc.opts)); got != tc.want {
			t.Errorf("%s: layout:\n%s\nwant:\n%s", tc.name, got, tc.want)
		}
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		90 * time.Minute:                "01:30:00",
		1500 * time.Millisecond:         "00:00:02",
		49*time.Hour + 5*time.Second:    "2-01:00:05",
		24 * time.Hour:                  "1-00:00:00",
		59*time.Minute + 59*time.Second: "00:59:59",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %s, want %s", d, got, want)
		}
	}
}

func TestCheckFlags(t *testing.T) {
	if err := CheckFlags([]string{"--qos=high", "--constraint=a100", "-q", "x"}, "test"); err == nil {
		t.Error(`"x" (not an option) accepted`)
	}
	if err := CheckFlags([]string{"--qos=high", "--constraint=a100", "--exclusive"}, "test"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"--array=1-3", "--dependency=afterok:1", "--output=x", "-o", "-ox", "--job-name=y", "--wrap=ls"} {
		err := CheckFlags([]string{bad}, "exp.hcl:3")
		if err == nil || !strings.Contains(err.Error(), "exp.hcl:3") || !strings.Contains(err.Error(), "sets") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestParseQueue(t *testing.T) {
	out := "17|CANCELLED|Dependency||0|repro:r/2\n16_0|FAILED|NonZeroExitCode|node1|768|repro:r/1\n11|CANCELLED|None|node1|15|(null)\n"
	q := parseQueue(out)
	if j := q["16_0"]; j.State != "FAILED" || j.Exit != "3" || j.Node != "node1" || j.Comment != "repro:r/1" {
		t.Errorf("16_0: %+v", j)
	}
	if j := q["11"]; j.Exit != "signal 15" || j.Reason != "" || j.Comment != "" {
		t.Errorf("11: %+v", j)
	}
	// An array cancelled before any task started is one record.
	if j, ok := lookup(q, "17_2"); !ok || j.State != "CANCELLED" || j.ID != "17_2" {
		t.Errorf("17_2: %+v %v", j, ok)
	}
	if _, ok := lookup(q, "18_0"); ok {
		t.Error("18_0 found")
	}
}

// BenchmarkLayout10k lays out a pass of 10,000 stages: a 2,500-cell grid
// of four chained stage blocks, three arrays each (1001 + 1001 + 498
// tasks), aftercorr between them.
func BenchmarkLayout10k(b *testing.B) {
	t := &testing.T{}
	reg := testRegistry()
	g := &graph.Graph{}
	for cell := 0; cell < 2500; cell++ {
		prev := ""
		for blk := 0; blk < 4; blk++ {
			id := fmt.Sprintf("s%d@k=%d", blk, cell)
			var in map[string]graph.Edge
			typ := "test.write"
			params := map[string]cty.Value{"text": cty.StringVal(fmt.Sprint(cell))}
			if prev != "" {
				typ, params = "test.join", nil
				in = map[string]graph.Edge{"a": {Node: prev, Output: "out"}}
			}
			g.Nodes = append(g.Nodes, node(t, reg, id, typ, fmt.Sprintf("x.hcl:%d", blk), params, in))
			prev = id
		}
	}
	plan := allRun(g)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		jobs := Layout(g, plan, LayoutOptions{Backend: "cpu", MaxArray: 1001})
		if len(jobs) != 12 || jobs[11].Dependency() != "aftercorr:#9" {
			b.Fatalf("%d jobs, %s", len(jobs), jobs[len(jobs)-1].Dependency())
		}
	}
}
