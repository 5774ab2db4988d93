package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// putRun stores one object per port (files name -> content) and records a
// run of key with them.
func putRun(t *testing.T, c *Store, key, node string, ports map[string]map[string]string) *Run {
	t.Helper()
	run := &Run{Key: key, Type: "train.test", NodeID: node, Version: 3, Params: []byte(`{"lr":0.1}`),
		Inputs: map[string]string{"data": "d1"}, Seed: 42, Seeded: true, Duration: 90 * time.Second,
		Device: "cpu", Backend: "cpu", ReproVersion: "test", Host: "elsewhere"}
	for port, files := range ports {
		dir := filepath.Join(t.TempDir(), port)
		for name, body := range files {
			p := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d, size, err := c.PutObject(dir)
		if err != nil {
			t.Fatal(err)
		}
		run.Outputs = append(run.Outputs, Output{Port: port, Kind: "model", Digest: d, Size: size})
	}
	if err := c.Record(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	return run
}

func TestImport(t *testing.T) {
	ctx := context.Background()
	src, err := Open(filepath.Join(t.TempDir(), "src"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	keyA := strings.Repeat("a", 64)
	keyB := strings.Repeat("b", 64)
	runA := putRun(t, src, keyA, "module.pretrained.bert", map[string]map[string]string{
		"model":   {"config.json": `{"layers":4}`, "shards/0.bin": "weights"},
		"metrics": {"metrics.json": `{"ppl":84.18}`},
	})
	putRun(t, src, keyB, "train", map[string]map[string]string{"model": {"w.bin": "other"}})
	os.MkdirAll(filepath.Dir(src.LogPath(keyA)), 0o755)
	os.WriteFile(src.LogPath(keyA), []byte("step 1 loss 8.4\n"), 0o644)

	dst, err := Open(filepath.Join(t.TempDir(), "dst"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	var seen []string
	st, err := dst.Import(ctx, src, func(r *RunInfo) bool { return strings.HasPrefix(r.Key, "aaaa") },
		func(r *RunInfo, imported bool) { seen = append(seen, r.NodeID) })
	if err != nil {
		t.Fatal(err)
	}
	if st.Runs != 1 || st.Objects != 2 || st.Present != 0 || st.Bytes != int64(len(`{"layers":4}`)+len("weights")+len(`{"ppl":84.18}`)) {
		t.Errorf("stats %+v", st)
	}
	if len(seen) != 1 || seen[0] != "module.pretrained.bert" {
		t.Errorf("onRun saw %v", seen)
	}
	got, ok, err := dst.Lookup(ctx, keyA)
	if err != nil || !ok {
		t.Fatalf("imported run not found: %v", err)
	}
	if got.Type != runA.Type || got.NodeID != runA.NodeID || got.Version != 3 || string(got.Params) != `{"lr":0.1}` ||
		got.Inputs["data"] != "d1" || got.Seed != 42 || !got.Seeded || got.Duration != 90*time.Second || got.Host != "elsewhere" {
		t.Errorf("provenance not kept: %+v", got)
	}
	for _, o := range runA.Outputs {
		a, ok := got.Outputs[o.Port]
		if !ok || a.Digest != o.Digest || a.Dir != dst.ObjectPath(o.Digest) {
			t.Errorf("output %s: %+v", o.Port, a)
		}
		if err := dst.VerifyObject(o.Digest); err != nil {
			t.Error(err)
		}
	}
	if b, err := os.ReadFile(dst.LogPath(keyA)); err != nil || string(b) != "step 1 loss 8.4\n" {
		t.Errorf("log: %q %v", b, err)
	}
	if _, ok, _ := dst.Lookup(ctx, keyB); ok {
		t.Error("a run the filter refused was imported")
	}
	if probs, err := dst.Verify(ctx); err != nil || len(probs) > 0 {
		t.Errorf("verify after import: %v %v", probs, err)
	}

	// Again, everything: A is present, B comes.
	st, err = dst.Import(ctx, src, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Runs != 1 || st.Present != 1 || st.Objects != 1 {
		t.Errorf("second import: %+v", st)
	}
}

// A source object whose content no longer matches its digest is refused:
// the run is not recorded and nothing is left in tmp/ or objects/.
func TestImportRefusesDamagedObject(t *testing.T) {
	ctx := context.Background()
	src, err := Open(filepath.Join(t.TempDir(), "src"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	key := strings.Repeat("c", 64)
	run := putRun(t, src, key, "module.pretrained.bert", map[string]map[string]string{"model": {"w.bin": "weights"}})
	p := filepath.Join(src.ObjectPath(run.Outputs[0].Digest), "w.bin")
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, []byte("WEIGHTS"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst, err := Open(filepath.Join(t.TempDir(), "dst"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	_, err = dst.Import(ctx, src, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "does not match its digest") || !strings.Contains(err.Error(), "module.pretrained.bert") {
		t.Fatalf("damaged source: %v", err)
	}
	if _, ok, _ := dst.Lookup(ctx, key); ok {
		t.Error("the run was recorded")
	}
	for _, sub := range []string{tmpDir, objectsDir} {
		entries, _ := os.ReadDir(filepath.Join(dst.Dir(), sub))
		if len(entries) > 0 {
			t.Errorf("%s/ not empty after a refused import: %v", sub, entries)
		}
	}
	if _, err := dst.Import(ctx, dst, nil, nil); err == nil {
		t.Error("importing a cache into itself")
	}
}
