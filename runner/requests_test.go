package runner

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"repro/graph"
	"repro/registry"

	"github.com/zeebo/blake3"
)

func reqKey(s string) string {
	h := blake3.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
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
	g := &graph.Graph{Nodes: []*graph.Node{
		node(t, "src", src, nil, nil),
		node(t, "ask", st, nil, map[string]graph.Edge{"in": {Node: "src", Output: "out"}}),
	}}
	plan, err := Plan(ctx, c, g, PlanOptions{Scope: "s"})
	if err != nil {
		t.Fatal(err)
	}
	rp, err := PlanRequests(ctx, c, g, plan)
	if err != nil || len(rp) != 1 || rp[0].ID != "ask" || rp[0].Note != "input missing" {
		t.Fatalf("plan before any run: %+v %v", rp, err)
	}
	if _, err := Run(ctx, c, g, Options{Scope: "s"}); err == nil {
		t.Fatal("the crashing stage succeeded")
	}
	plan, _ = Plan(ctx, c, g, PlanOptions{Scope: "s"})
	rp, err = PlanRequests(ctx, c, g, plan)
	if err != nil || !rp[0].Exact || rp[0].Cached != 1 {
		t.Fatalf("plan after the crash: %+v %v", rp, err)
	}
	fail = false
	if _, err := Run(ctx, c, g, Options{Scope: "s"}); err != nil {
		t.Fatal(err)
	}
	stats, _ := c.RequestStats(ctx)
	if len(stats) != 1 || stats[0].Requests != 3 {
		t.Fatalf("stats %+v", stats)
	}
	// The stage is cached now: it sends nothing, and is not asked to
	// build its requests.
	plan, _ = Plan(ctx, c, g, PlanOptions{Scope: "s"})
	rp, err = PlanRequests(ctx, c, g, plan)
	if err != nil || rp[0].Requests != 0 || !rp[0].Exact || rp[0].Note != "stage cached: sends nothing" || rp[0].Model != "m" {
		t.Fatalf("plan of the cached stage: %+v %v", rp, err)
	}
}
