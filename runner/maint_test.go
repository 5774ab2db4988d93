package runner

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repro/graph"
	"repro/registry"
	"repro/store"

	"github.com/zclconf/go-cty/cty"
)

func TestVerifyFindsCorruption(t *testing.T) {
	ts := testTypes(newCounter(""))
	c := openTemp(t)
	ctx := context.Background()
	res, err := Run(ctx, c, linear(t, ts, "v"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if probs, err := c.Verify(ctx); err != nil || len(probs) != 0 {
		t.Fatalf("fresh cache: %v %v", probs, err)
	}
	// Flip the content of one object (same size) and delete another.
	bad := res.Node("side").Outputs["out"]
	f := bad.Path("data.txt")
	os.Chmod(f, 0o644)
	if err := os.WriteFile(f, []byte("v%"), 0o644); err != nil {
		t.Fatal(err)
	}
	gone := res.Node("mid").Outputs["out"]
	if err := os.RemoveAll(gone.Dir); err != nil {
		t.Fatal(err)
	}
	probs, err := c.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != 2 {
		t.Fatalf("problems: %v", probs)
	}
	var all []string
	for _, p := range probs {
		all = append(all, p.String())
	}
	joined := strings.Join(all, "\n")
	for _, s := range []string{bad.Dir + ": content does not match its digest", res.Node("side").Key,
		gone.Dir + ": missing from the store", res.Node("mid").Key} {
		if !strings.Contains(joined, s) {
			t.Errorf("verify output lacks %q:\n%s", s, joined)
		}
	}
	// A run repairs the missing object (the row points nowhere, so it is
	// a miss); the corrupted one stays reported until gc or re-run.
	cnt := newCounter("")
	res2, err := Run(ctx, c, linear(t, testTypes(cnt), "v"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Node("mid").Status != StatusRan || cnt.get("mid") != 1 {
		t.Errorf("mid: %v", res2.Node("mid").Status)
	}
	if _, err := os.Stat(gone.Dir); err != nil {
		t.Errorf("missing object not restored: %v", err)
	}
}

func TestGC(t *testing.T) {
	ts := testTypes(newCounter(""))
	c := openTemp(t)
	ctx := context.Background()
	// Scope "keep" runs text "k"; the "x" run is recorded under no scope.
	resK, err := Run(ctx, c, linear(t, ts, "k"), Options{Scope: "keep"})
	if err != nil {
		t.Fatal(err)
	}
	resX, err := Run(ctx, c, linear(t, ts, "x"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Leftovers of a crashed run.
	os.MkdirAll(filepath.Join(c.Dir(), "tmp", "deadbeef-1", "out"), 0o755)
	os.WriteFile(filepath.Join(c.Dir(), "tmp", "deadbeef-1", "out", "f"), []byte("half"), 0o644)

	// Default policy: everything is young, nothing but temp goes.
	st, err := c.GC(ctx, store.GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.RunsRemoved != 0 || st.ObjectsRemoved != 0 || st.TempRemoved != 1 {
		t.Errorf("default gc: %+v", st)
	}
	// Keep none by age: the unscoped run goes, except what it shares
	// with the kept one ("mid" writes the same bytes in both).
	dry, err := c.GC(ctx, store.GCOptions{KeepNewer: -1, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err = c.GC(ctx, store.GCOptions{KeepNewer: -1})
	if err != nil {
		t.Fatal(err)
	}
	// src, mid and side of x differ from k's (end is shared: same key).
	if st.RunsRemoved != 3 || st.ObjectsRemoved != 2 || st.BytesFreed == 0 ||
		dry.RunsRemoved != st.RunsRemoved || dry.ObjectsRemoved != st.ObjectsRemoved || dry.BytesFreed != st.BytesFreed {
		t.Errorf("gc: %+v (dry run %+v)", st, dry)
	}
	for _, id := range []string{"src", "mid", "end", "side"} {
		if _, ok, _ := c.Lookup(ctx, resK.Node(id).Key); !ok {
			t.Errorf("kept run %s was removed", id)
		}
		if _, err := os.Stat(resK.Node(id).Outputs["out"].Dir); err != nil {
			t.Errorf("kept object of %s removed", id)
		}
	}
	if _, ok, _ := c.Lookup(ctx, resX.Node("src").Key); ok {
		t.Error("unscoped run survived")
	}
	if _, err := os.Stat(resX.Node("src").Outputs["out"].Dir); err == nil {
		t.Error("unreferenced object survived")
	}
	if probs, err := c.Verify(ctx); err != nil || len(probs) != 0 {
		t.Errorf("verify after gc: %v %v", probs, err)
	}
	// Dropping the last-run records too empties the cache.
	st, err = c.GC(ctx, store.GCOptions{KeepNewer: -1, DropLastRuns: true})
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := c.List(ctx); len(list) != 0 || st.RunsRemoved != 4 {
		t.Errorf("after full gc: %d runs, %+v", len(list), st)
	}
	if objs, _ := c.Objects(); len(objs) != 0 {
		t.Errorf("objects left: %v", objs)
	}
}

// The scope's records follow the graph: a node removed from the experiment
// no longer pins its run in GC.
func TestLastRunsPruned(t *testing.T) {
	ts := testTypes(newCounter(""))
	c := openTemp(t)
	ctx := context.Background()
	if _, err := Run(ctx, c, linear(t, ts, "p"), Options{Scope: "s"}); err != nil {
		t.Fatal(err)
	}
	g := linear(t, ts, "p")
	g.Nodes = g.Nodes[:3] // drop "side"
	if _, err := Run(ctx, c, g, Options{Scope: "s"}); err != nil {
		t.Fatal(err)
	}
	recs, err := c.LastRuns(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs["side"] != nil {
		t.Errorf("records: %v", slices.Sorted(maps.Keys(recs)))
	}
	st, err := c.GC(ctx, store.GCOptions{KeepNewer: -1})
	if err != nil || st.RunsRemoved != 1 {
		t.Errorf("gc: %+v %v", st, err)
	}
}

func TestEmptyOutputRefused(t *testing.T) {
	ts := testTypes(newCounter(""))
	st := *ts["source"]
	st.Run = func(ctx context.Context, env *registry.Env) error { return nil }
	c := openTemp(t)
	_, err := Run(context.Background(), c, &graph.Graph{Nodes: []*graph.Node{{ID: "lazy", Type: &st, Params: params(t, &st, map[string]cty.Value{})}}}, Options{})
	if err == nil || !strings.Contains(err.Error(), `lazy (test.source): stage wrote nothing to output(s) out`) {
		t.Errorf("err = %v", err)
	}
}
