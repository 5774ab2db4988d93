package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/registry"

	"github.com/zclconf/go-cty/cty"
)

func TestVerifyFindsCorruption(t *testing.T) {
	ts := testTypes(newCounter(""))
	c := openTemp(t)
	ctx := context.Background()
	res, err := c.Run(ctx, linear(t, ts, "v"), Options{})
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
	res2, err := c.Run(ctx, linear(t, testTypes(cnt), "v"), Options{})
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
	resK, err := c.Run(ctx, linear(t, ts, "k"), Options{Scope: "keep"})
	if err != nil {
		t.Fatal(err)
	}
	resX, err := c.Run(ctx, linear(t, ts, "x"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Leftovers of a crashed run.
	os.MkdirAll(filepath.Join(c.Dir(), tmpDir, "deadbeef-1", "out"), 0o755)
	os.WriteFile(filepath.Join(c.Dir(), tmpDir, "deadbeef-1", "out", "f"), []byte("half"), 0o644)

	// Default policy: everything is young, nothing but temp goes.
	st, err := c.GC(ctx, GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.RunsRemoved != 0 || st.ObjectsRemoved != 0 || st.TempRemoved != 1 {
		t.Errorf("default gc: %+v", st)
	}
	// Keep none by age: the unscoped run goes, except what it shares
	// with the kept one ("mid" writes the same bytes in both).
	dry, err := c.GC(ctx, GCOptions{KeepNewer: -1, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err = c.GC(ctx, GCOptions{KeepNewer: -1})
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
	st, err = c.GC(ctx, GCOptions{KeepNewer: -1, DropLastRuns: true})
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := c.List(ctx); len(list) != 0 || st.RunsRemoved != 4 {
		t.Errorf("after full gc: %d runs, %+v", len(list), st)
	}
	if objs, _ := c.objectDirs(); len(objs) != 0 {
		t.Errorf("objects left: %v", objs)
	}
}

// The scope's records follow the graph: a node removed from the experiment
// no longer pins its run in GC.
func TestLastRunsPruned(t *testing.T) {
	ts := testTypes(newCounter(""))
	c := openTemp(t)
	ctx := context.Background()
	if _, err := c.Run(ctx, linear(t, ts, "p"), Options{Scope: "s"}); err != nil {
		t.Fatal(err)
	}
	g := linear(t, ts, "p")
	g.Nodes = g.Nodes[:3] // drop "side"
	if _, err := c.Run(ctx, g, Options{Scope: "s"}); err != nil {
		t.Fatal(err)
	}
	recs, err := c.lastRuns(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs["side"] != nil {
		t.Errorf("records: %v", sortedKeys(recs))
	}
	st, err := c.GC(ctx, GCOptions{KeepNewer: -1})
	if err != nil || st.RunsRemoved != 1 {
		t.Errorf("gc: %+v %v", st, err)
	}
}

func TestDigestDir(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "alpha")
	write("sub/b.txt", "beta")
	d0, size, err := DigestDir(dir)
	if err != nil || size != 9 {
		t.Fatalf("%s %d %v", d0, size, err)
	}
	// Golden: BLAKE3 of the manifest, computed independently with the
	// reference b3sum / Python blake3 (testdata/gen_digest.sh).
	golden, err := os.ReadFile("testdata/digest_golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(golden)); d0 != want {
		t.Errorf("digest %s, golden %s", d0, want)
	}
	os.Chmod(filepath.Join(dir, "a.txt"), 0o400)
	if d, _, _ := DigestDir(dir); d != d0 {
		t.Error("a mode change changed the digest")
	}
	os.Rename(filepath.Join(dir, "a.txt"), filepath.Join(dir, "c.txt"))
	if d, _, _ := DigestDir(dir); d == d0 {
		t.Error("a rename did not change the digest")
	}
	os.Rename(filepath.Join(dir, "c.txt"), filepath.Join(dir, "a.txt"))
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	if d, _, _ := DigestDir(dir); d == d0 {
		t.Error("an empty directory did not change the digest")
	}
	os.Remove(filepath.Join(dir, "empty"))
	os.Symlink("a.txt", filepath.Join(dir, "link"))
	if _, _, err := DigestDir(dir); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("symlink: err = %v", err)
	}
}

func TestEmptyOutputRefused(t *testing.T) {
	ts := testTypes(newCounter(""))
	st := *ts["source"]
	st.Run = func(ctx context.Context, env *registry.Env) error { return nil }
	c := openTemp(t)
	_, err := c.Run(context.Background(), &Graph{Nodes: []*Node{{ID: "lazy", Type: &st, Params: params(t, &st, map[string]cty.Value{})}}}, Options{})
	if err == nil || !strings.Contains(err.Error(), `lazy (test.source): stage wrote nothing to output(s) out`) {
		t.Errorf("err = %v", err)
	}
}
