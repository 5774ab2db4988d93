package runner

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// BenchmarkDigestLarge hashes one 256 MiB artifact file (from the page
// cache); MB/s is the hashing throughput.
func BenchmarkDigestLarge(b *testing.B) {
	dir := b.TempDir()
	buf := make([]byte, 256<<20)
	rand.Read(buf)
	if err := os.WriteFile(filepath.Join(dir, "weights.safetensors"), buf, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for range b.N {
		if _, _, err := DigestDir(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDigestShards hashes 16 files of 16 MiB (a sharded checkpoint),
// several at once.
func BenchmarkDigestShards(b *testing.B) {
	dir := b.TempDir()
	buf := make([]byte, 16<<20)
	for i := range 16 {
		rand.Read(buf)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%02d.bin", i)), buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(16 << 24)
	b.ResetTimer()
	for range b.N {
		if _, _, err := DigestDir(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// chain100 is a 100-stage pipeline: 10 sources, each followed by a chain of
// 9 transforms, the last ones also reading another chain.
func chain100(tb testing.TB, cnt *counter) *Graph {
	ts := testTypes(cnt)
	g := &Graph{}
	for c := range 10 {
		prev := fmt.Sprintf("src%d", c)
		g.Nodes = append(g.Nodes, node(tb, prev, ts["source"], map[string]cty.Value{"text": cty.StringVal(prev)}, nil))
		for s := 1; s < 10; s++ {
			id := fmt.Sprintf("c%d.s%d", c, s)
			in := map[string]Edge{"in": {Node: prev, Output: "out"}}
			if s == 9 && c > 0 {
				in["extra"] = Edge{Node: fmt.Sprintf("c%d.s8", c-1), Output: "out"}
			}
			g.Nodes = append(g.Nodes, node(tb, id, ts["transform"], map[string]cty.Value{"suffix": cty.StringVal(id)}, in))
			prev = id
		}
	}
	return g
}

func cachedChain(b *testing.B) (string, *Graph) {
	dir := filepath.Join(b.TempDir(), "cache")
	c, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	g := chain100(b, newCounter(""))
	if _, err := c.Run(context.Background(), g, Options{Scope: "bench"}); err != nil {
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
		c, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		res, err := c.Run(context.Background(), g, Options{Scope: "bench"})
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
		c, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		plan, err := c.Plan(context.Background(), g, "bench")
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
	if _, err := c.Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	cnt.reset()
	res, err := c.Run(context.Background(), g, Options{})
	if err != nil || cnt.total() != 0 || len(res.Nodes) != 100 {
		t.Fatalf("second run: %v, executed %d", err, cnt.total())
	}
}
