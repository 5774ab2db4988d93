package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"repro/graph"
	"repro/store"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// chain100 is a 100-stage pipeline: 10 sources, each followed by a chain of
// 9 transforms, the last ones also reading another chain.
func chain100(tb testing.TB, cnt *counter) *graph.Graph {
	ts := testTypes(cnt)
	g := &graph.Graph{}
	for c := range 10 {
		prev := fmt.Sprintf("src%d", c)
		g.Nodes = append(g.Nodes, node(tb, prev, ts["source"], map[string]cty.Value{"text": cty.StringVal(prev)}, nil))
		for s := 1; s < 10; s++ {
			id := fmt.Sprintf("c%d.s%d", c, s)
			in := map[string]graph.Edge{"in": {Node: prev, Output: "out"}}
			if s == 9 && c > 0 {
				in["extra"] = graph.Edge{Node: fmt.Sprintf("c%d.s8", c-1), Output: "out"}
			}
			g.Nodes = append(g.Nodes, node(tb, id, ts["transform"], map[string]cty.Value{"suffix": cty.StringVal(id)}, in))
			prev = id
		}
	}
	return g
}

func cachedChain(b *testing.B) (string, *graph.Graph) {
	dir := filepath.Join(b.TempDir(), "cache")
	c, err := store.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	g := chain100(b, newCounter(""))
	if _, err := Run(context.Background(), c, g, Options{Scope: "bench"}); err != nil {
		b.Fatal(err)
	}
	c.Close()
	return dir, g
}

// BenchmarkCachedRun100 opens the cache and runs a fully cached 100-stage
// pipeline: the "nothing to do" path of `repro run`.
func BenchmarkCachedRun100(b *testing.B) {
	dir, g := cachedChain(b)
	b.ResetTimer()
	for range b.N {
		c, err := store.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		res, err := Run(context.Background(), c, g, Options{Scope: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if res.Nodes[99].Status != StatusCached {
			b.Fatal("not cached")
		}
		c.Close()
	}
}

// BenchmarkPlan100 opens the cache and plans the same pipeline.
func BenchmarkPlan100(b *testing.B) {
	dir, g := cachedChain(b)
	b.ResetTimer()
	for range b.N {
		c, err := store.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		plan, err := Plan(context.Background(), c, g, PlanOptions{Scope: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if plan[99].Status != PlanCached {
			b.Fatal("not cached")
		}
		c.Close()
	}
}

// TestChain100 keeps the benchmark pipeline honest in normal test runs.
func TestChain100(t *testing.T) {
	cnt := newCounter("")
	c := openTemp(t)
	g := chain100(t, cnt)
	if _, err := Run(context.Background(), c, g, Options{}); err != nil {
		t.Fatal(err)
	}
	cnt.reset()
	res, err := Run(context.Background(), c, g, Options{})
	if err != nil || cnt.total() != 0 || len(res.Nodes) != 100 {
		t.Fatalf("second run: %v, executed %d", err, cnt.total())
	}
}
