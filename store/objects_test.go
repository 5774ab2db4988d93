package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"repro/registry"
)

// A store opened without its index (a cluster job's) puts, verifies and
// quarantines objects and hashes external files, creates no index and
// refuses what needs one; a cache that does not exist is an error.
func TestOpenObjects(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	if _, err := OpenObjects(dir); !errors.Is(err, ErrNoCache) {
		t.Fatalf("no cache: %v", err)
	}
	full, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	c, err := OpenObjects(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.HasIndex() || !full.HasIndex() {
		t.Error("HasIndex")
	}
	src := filepath.Join(t.TempDir(), "out")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("hello\n"), 0o644)
	d, _, err := c.PutObject(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyObject(d); err != nil {
		t.Error(err)
	}
	if err := c.Record(context.Background(), &Run{Key: d}); !errors.Is(err, ErrNoIndex) {
		t.Errorf("Record without an index: %v", err)
	}
	if _, err := c.Requests(); !errors.Is(err, ErrNoIndex) {
		t.Errorf("Requests without an index: %v", err)
	}
	ext := filepath.Join(t.TempDir(), "vectors.txt")
	os.WriteFile(ext, []byte("a 1 2\n"), 0o644)
	h1, err := c.HashPath(context.Background(), ext)
	if err != nil {
		t.Fatal(err)
	}
	if h2, _ := full.HashPath(context.Background(), ext); h1 != h2 {
		t.Errorf("external digest without the stat cache %s, with it %s", h1, h2)
	}
	// Quarantine moves the object out; the index (the coordinator's) sees
	// a missing object, which is a cache miss.
	if _, err := c.Quarantine(context.Background(), d, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.ObjectPath(d)); !os.IsNotExist(err) {
		t.Errorf("quarantined object still there: %v", err)
	}
}

// BenchmarkRecord is the coordinator's cost per finished stage: one
// transaction writing the run, its outputs and the scope's record.
func BenchmarkRecord(b *testing.B) {
	c, err := Open(filepath.Join(b.TempDir(), "cache"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key := reqKey(fmt.Sprint("run", i))
		if err := c.Record(ctx, &Run{Key: key, Type: "train.simcse", NodeID: fmt.Sprint("train@k=", i), Version: 3,
			Params: []byte(`{"batch_size":64,"lr":3e-05,"temperature":0.05}`), Inputs: map[string]string{"data": reqKey("in")},
			Duration: time.Minute, Device: "cuda:0", Backend: "cuda", Scope: "exp#profile=mini",
			LastInputs: map[string]LastInput{"data": {Node: "data", Output: "pairs", Digest: reqKey("in")}},
			Outputs:    []Output{{Port: "model", Kind: "encoder", Digest: reqKey(fmt.Sprint("out", i)), Size: 1 << 20}}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutRequests merges a job's journal of 1,000 answers.
func BenchmarkPutRequests(b *testing.B) {
	c, err := Open(filepath.Join(b.TempDir(), "cache"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	resp := []byte(`{"content":"A man plays a guitar on a stage.","finish_reason":"stop"}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rs := make([]registry.StoredRequest, 1000)
		for j := range rs {
			rs[j] = registry.StoredRequest{Key: reqKey(fmt.Sprint(i, "/", j)), Provider: "openai", Model: "m", Request: make([]byte, 1500), Response: resp}
		}
		if n, err := c.PutRequests(ctx, rs); err != nil || n != 1000 {
			b.Fatal(n, err)
		}
	}
}
