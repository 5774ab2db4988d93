package store

import (
	"context"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"repro/registry"

	"github.com/zeebo/blake3"
)

func reqKey(s string) string {
	h := blake3.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestRequestStore(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	s, err := c.Requests()
	if err != nil {
		t.Fatal(err)
	}
	k := reqKey("a")
	if _, ok, err := s.LookupRequest(ctx, k); ok || err != nil {
		t.Fatalf("lookup in an empty store: %v %v", ok, err)
	}
	put := func(key, model, resp string, pt, ct int) {
		t.Helper()
		if err := s.PutRequest(ctx, registry.StoredRequest{Key: key, Provider: "openai", Model: model, Request: []byte(`{"q":1}`),
			Response: []byte(resp), PromptTokens: pt, CompletionTokens: ct, Duration: time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	put(k, "m1", `{"content":"first"}`, 10, 2)
	put(k, "m1", `{"content":"second"}`, 10, 2) // the first answer stays
	put(reqKey("b"), "m1", `{"content":"b"}`, 5, 1)
	put(reqKey("c"), "m2", `{"content":"c"}`, 7, 3)
	got, ok, err := s.LookupRequest(ctx, k)
	if err != nil || !ok || string(got) != `{"content":"first"}` {
		t.Fatalf("lookup: %q %v %v", got, ok, err)
	}
	if err := s.PutRequest(ctx, registry.StoredRequest{Key: "not-a-key"}); err == nil {
		t.Error("a malformed key was stored")
	}

	// Another process (another Cache on the same directory) sees them.
	c2, err := Open(c.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	stats, err := c2.RequestStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 2 || stats[0].Model != "m1" || stats[0].Requests != 2 || stats[0].PromptTokens != 15 || stats[0].CompletionTokens != 3 ||
		stats[1].Model != "m2" || stats[1].Requests != 1 || stats[0].Duration != 2*time.Second {
		t.Fatalf("stats %+v", stats)
	}

	// GC, even the most thorough, never drops answers.
	if _, err := c.GC(ctx, GCOptions{DropLastRuns: true, KeepNewer: -1}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.LookupRequest(ctx, k); !ok {
		t.Fatal("gc dropped a stored answer")
	}
	// Only DropRequests does, and only what it is asked to.
	n, err := c.DropRequests(ctx, RequestFilter{Model: "m2"})
	if err != nil || n != 1 {
		t.Fatalf("drop m2: %d %v", n, err)
	}
	if _, ok, _ := s.LookupRequest(ctx, k); !ok {
		t.Fatal("dropping m2 dropped m1's answer")
	}
	if n, _ := c.DropRequests(ctx, RequestFilter{}); n != 2 {
		t.Fatalf("drop all: %d", n)
	}
}

// A read-only cache creates nothing: without the table lookups find
// nothing; with it they read.
func TestRequestsReadOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ro.Requests()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, ok, err := s.LookupRequest(ctx, reqKey("a")); ok || err != nil {
		t.Fatalf("lookup: %v %v", ok, err)
	}
	if err := s.PutRequest(ctx, registry.StoredRequest{Key: reqKey("a")}); err == nil {
		t.Error("a read-only store stored an answer")
	}
	if ok, _ := ro.hasRequests(); ok {
		t.Fatal("the read-only store created the table")
	}
	if st, err := ro.RequestStats(ctx); err != nil || len(st) != 0 {
		t.Fatalf("stats %v %v", st, err)
	}
	ro.Close()

	c, _ = Open(dir)
	w, _ := c.Requests()
	w.PutRequest(ctx, registry.StoredRequest{Key: reqKey("a"), Provider: "p", Model: "m", Request: []byte("{}"), Response: []byte(`{"x":1}`)})
	c.Close()
	ro, _ = OpenReadOnly(dir)
	defer ro.Close()
	s, _ = ro.Requests()
	if b, ok, err := s.LookupRequest(ctx, reqKey("a")); !ok || err != nil || string(b) != `{"x":1}` {
		t.Fatalf("read-only lookup: %q %v %v", b, ok, err)
	}
}

// Replacing a damaged index keeps the answers it still yields.
func TestRepairSalvagesRequests(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	s, _ := c.Requests()
	for i := 0; i < 5; i++ {
		s.PutRequest(ctx, registry.StoredRequest{Key: reqKey(fmt.Sprint(i)), Provider: "p", Model: "m", Request: []byte("{}"), Response: []byte("{}")})
	}
	done, err := c.Repair(ctx, []Problem{{Index: true}})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := c.RequestStats(ctx)
	if err != nil || len(stats) != 1 || stats[0].Requests != 5 {
		t.Fatalf("after the repair: %+v %v (%q)", stats, err, done)
	}
	if len(done) != 2 || done[1] != "copied 5 language-model answer(s) from the damaged index" {
		t.Errorf("repair said %q", done)
	}
}

// BenchmarkPutRequest commits one answer per transaction, as a stage does
// when each arrives.
func BenchmarkPutRequest(b *testing.B) {
	c, err := Open(filepath.Join(b.TempDir(), "cache"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s, err := c.Requests()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	resp := []byte(`{"content":"A man plays a guitar on a stage.","finish_reason":"stop","usage":{"prompt_tokens":310,"completion_tokens":12}}`)
	req := make([]byte, 1500)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.PutRequest(ctx, registry.StoredRequest{Key: reqKey(fmt.Sprint(i)), Provider: "openai", Model: "m",
			Request: req, Response: resp, PromptTokens: 310, CompletionTokens: 12}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookupRequest answers one request from the cache.
func BenchmarkLookupRequest(b *testing.B) {
	c, err := Open(filepath.Join(b.TempDir(), "cache"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s, _ := c.Requests()
	ctx := context.Background()
	for i := 0; i < 10000; i++ {
		s.PutRequest(ctx, registry.StoredRequest{Key: reqKey(fmt.Sprint(i)), Provider: "openai", Model: "m", Request: []byte("{}"), Response: []byte("{}")})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, err := s.LookupRequest(ctx, reqKey(fmt.Sprint(i%10000))); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
