package runner

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
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
	c := openTemp(t)
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
	n, err := c.DropRequests(ctx, "", "m2")
	if err != nil || n != 1 {
		t.Fatalf("drop m2: %d %v", n, err)
	}
	if _, ok, _ := s.LookupRequest(ctx, k); !ok {
		t.Fatal("dropping m2 dropped m1's answer")
	}
	if n, _ := c.DropRequests(ctx, "", ""); n != 2 {
		t.Fatalf("drop all: %d", n)
	}
}

// A stage reaches the store through its Env; what it stores survives the
// stage failing afterwards (as a paid answer must), and the plan asks the
// type what it would send.
func TestStageUsesRequestStore(t *testing.T) {
	c := openTemp(t)
	ctx := context.Background()
	fail := true
	st := &registry.StageType{
		Name: "test.asker", Version: 1, Params: transformParams{},
		Inputs:  []registry.Port{{Name: "in", Kind: registry.KindSentences}},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Run: func(ctx context.Context, env *registry.Env) error {
			if env.Requests == nil {
				return fmt.Errorf("no request store")
			}
			for i := 0; i < 3; i++ {
				k := reqKey(fmt.Sprint("q", i))
				if _, ok, err := env.Requests.LookupRequest(ctx, k); err != nil || ok {
					continue
				}
				if err := env.Requests.PutRequest(ctx, registry.StoredRequest{Key: k, Provider: "p", Model: "m", Request: []byte("{}"), Response: []byte("{}")}); err != nil {
					return err
				}
				if fail {
					return fmt.Errorf("crash after one answer")
				}
			}
			return os.WriteFile(filepath.Join(env.Output("out"), "data.txt"), []byte("ok"), 0o644)
		},
		Requests: func(ctx context.Context, env *registry.Env) (*registry.RequestEstimate, error) {
			e := &registry.RequestEstimate{Provider: "p", Model: "m", Requests: 3}
			if _, ok := env.Inputs["in"]; !ok {
				e.Note = "input missing"
				return e, nil
			}
			e.Exact = true
			for i := 0; i < 3; i++ {
				if _, ok, _ := env.Requests.LookupRequest(ctx, reqKey(fmt.Sprint("q", i))); ok {
					e.Cached++
				}
			}
			return e, nil
		},
	}
	cnt := newCounter("")
	src := testTypes(cnt)["source"]
	g := &Graph{Nodes: []*Node{
		node(t, "src", src, nil, nil),
		node(t, "ask", st, nil, map[string]Edge{"in": {Node: "src", Output: "out"}}),
	}}
	plan, err := c.Plan(ctx, g, "s")
	if err != nil {
		t.Fatal(err)
	}
	rp, err := c.PlanRequests(ctx, g, plan)
	if err != nil || len(rp) != 1 || rp[0].ID != "ask" || rp[0].Note != "input missing" {
		t.Fatalf("plan before any run: %+v %v", rp, err)
	}
	if _, err := c.Run(ctx, g, Options{Scope: "s"}); err == nil {
		t.Fatal("the crashing stage succeeded")
	}
	plan, _ = c.Plan(ctx, g, "s")
	rp, err = c.PlanRequests(ctx, g, plan)
	if err != nil || !rp[0].Exact || rp[0].Cached != 1 {
		t.Fatalf("plan after the crash: %+v %v", rp, err)
	}
	fail = false
	if _, err := c.Run(ctx, g, Options{Scope: "s"}); err != nil {
		t.Fatal(err)
	}
	stats, _ := c.RequestStats(ctx)
	if len(stats) != 1 || stats[0].Requests != 3 {
		t.Fatalf("stats %+v", stats)
	}
}
