package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"repro/registry"
)

func claimer(t *testing.T, c *Store) *requestStore {
	t.Helper()
	rs, err := c.Requests()
	if err != nil {
		t.Fatal(err)
	}
	return rs.(*requestStore)
}

// A request claimed by one store (process) is refused to another until it
// is released; the holder may claim it again.
func TestClaimRequest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	ra, rb := claimer(t, a), claimer(t, b)
	k := reqKey("shared")
	if ok, err := ra.ClaimRequest(ctx, k); !ok || err != nil {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	if ok, err := ra.ClaimRequest(ctx, k); !ok || err != nil {
		t.Fatalf("the holder's second claim: %v %v", ok, err)
	}
	if ok, err := rb.ClaimRequest(ctx, k); ok || err != nil {
		t.Fatalf("a claim held by a live process was taken: %v %v", ok, err)
	}
	if err := rb.ReleaseRequest(ctx, k); err != nil {
		t.Fatal(err)
	}
	if ok, _ := rb.ClaimRequest(ctx, k); ok {
		t.Fatal("another store's release freed the holder's claim")
	}
	if err := ra.ReleaseRequest(ctx, k); err != nil {
		t.Fatal(err)
	}
	if ok, err := rb.ClaimRequest(ctx, k); !ok || err != nil {
		t.Fatalf("claim after release: %v %v", ok, err)
	}
}

// A claim lapses when its lease runs out without renewal (a holder on
// another host that died); renewal extends it.
func TestClaimLease(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	rs := claimer(t, c)
	now := time.Now()
	for i, exp := range []time.Time{now.Add(-time.Second), now.Add(time.Hour)} {
		k := reqKey(fmt.Sprint("elsewhere", i))
		if _, err := c.db.Exec("INSERT INTO llm_claims (key, owner, host, pid, expires_ns) VALUES (?, 'x', 'another-host', 1, ?)", k, exp.UnixNano()); err != nil {
			t.Fatal(err)
		}
		ok, err := rs.ClaimRequest(ctx, k)
		if err != nil || ok != (i == 0) {
			t.Errorf("claim held elsewhere until %s: took it %v (%v)", exp.Format(time.RFC3339), ok, err)
		}
	}
	k := reqKey("mine")
	if ok, _ := rs.ClaimRequest(ctx, k); !ok {
		t.Fatal("no claim")
	}
	var before, after int64
	c.db.QueryRow("SELECT expires_ns FROM llm_claims WHERE key = ?", k).Scan(&before)
	if err := rs.claims.renewNow(); err != nil {
		t.Fatal(err)
	}
	c.db.QueryRow("SELECT expires_ns FROM llm_claims WHERE key = ?", k).Scan(&after)
	if after <= before {
		t.Errorf("renewal left the lease at %d (was %d)", after, before)
	}
}

// TestClaimHelperProcess is the process TestClaimOfKilledProcess kills: it
// claims a request, says so, and waits.
func TestClaimHelperProcess(t *testing.T) {
	dir := os.Getenv("REPRO_CLAIM_HELPER_CACHE")
	if dir == "" {
		t.Skip("helper process only")
	}
	c, err := Open(dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	rs, err := c.Requests()
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	ok, err := rs.(registry.RequestClaimer).ClaimRequest(context.Background(), reqKey("killed"))
	fmt.Println("claimed", ok, err)
	select {}
}

// A process killed with SIGKILL while holding a claim does not keep it: on
// the same host its pid is gone, and the claim is taken over at once, long
// before its lease would lapse.
func TestClaimOfKilledProcess(t *testing.T) {
	ClaimLease = time.Hour
	defer func() { ClaimLease = 30 * time.Second }()
	dir := filepath.Join(t.TempDir(), "cache")
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rs := claimer(t, c)
	cmd := exec.Command(os.Args[0], "-test.run=^TestClaimHelperProcess$")
	cmd.Env = append(os.Environ(), "REPRO_CLAIM_HELPER_CACHE="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "claimed true <nil>") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %q", line)
	}
	ctx := context.Background()
	if ok, err := rs.ClaimRequest(ctx, reqKey("killed")); ok || err != nil {
		t.Fatalf("the claim of a live process was taken: %v %v", ok, err)
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	if ok, err := rs.ClaimRequest(ctx, reqKey("killed")); !ok || err != nil {
		t.Fatalf("the claim of a killed process still holds: %v %v", ok, err)
	}
}

// An index made before failures, stages and claims existed gains them on
// open, keeps its answers, and snapshots and salvages with them.
func TestRequestTableMigrates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := reqKey("old")
	if _, err := c.db.Exec(`CREATE TABLE llm_requests (
		key TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL,
		prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, duration_ns INTEGER NOT NULL, created_ns INTEGER NOT NULL);
		INSERT INTO llm_requests VALUES (?, 'openai', 'm', '{}', '{"content":"old"}', 1, 2, 3, 4)`, old); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	rs := claimer(t, c)
	if b, ok, err := rs.LookupRequest(ctx, old); !ok || err != nil || string(b) != `{"content":"old"}` {
		t.Fatalf("the old answer: %q %v %v", b, ok, err)
	}
	bad := reqKey("bad")
	if err := rs.PutRequest(ctx, registry.StoredRequest{Key: bad, Provider: "openai", Model: "m", Request: []byte("{}"),
		Response: []byte(`{"content":"??","failure":"no list"}`), Failure: "no list", Stage: "gen", StageKey: reqKey("stage")}); err != nil {
		t.Fatal(err)
	}
	if ok, err := rs.ClaimRequest(ctx, reqKey("c")); !ok || err != nil {
		t.Fatalf("claim on a migrated index: %v %v", ok, err)
	}
	stats, err := c.RequestStats(ctx)
	if err != nil || len(stats) != 1 || stats[0].Requests != 2 || stats[0].Failures != 1 {
		t.Fatalf("stats: %+v %v", stats, err)
	}
	snap := filepath.Join(t.TempDir(), "snap.db")
	if n, err := c.SnapshotRequests(ctx, snap); n != 2 || err != nil {
		t.Fatalf("snapshot: %d %v", n, err)
	}
	s, err := OpenRequestSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var failure, stage string
	if err := s.db.QueryRow("SELECT failure, stage FROM llm_requests WHERE key = ?", bad).Scan(&failure, &stage); err != nil || failure != "no list" || stage != "gen" {
		t.Fatalf("the snapshot's failure: %q %q %v", failure, stage, err)
	}
}

// Failures are listed with their stage and reason, and dropping selects by
// stage, by key and by failure.
func TestRequestFailuresAndDrop(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	rs := claimer(t, c)
	stageKey := reqKey("stage gen")
	for i := 0; i < 6; i++ {
		r := registry.StoredRequest{Key: reqKey(fmt.Sprint(i)), Provider: "openai", Model: "m", Request: []byte("{}"), Response: []byte(`{"content":"x"}`), Stage: "gen", StageKey: stageKey}
		if i%3 == 0 {
			r.Failure, r.Response = "no sentence", []byte(`{"content":"Sentence:","failure":"no sentence"}`)
		}
		if i >= 4 {
			r.Stage, r.StageKey = "label", reqKey("stage label")
		}
		if err := rs.PutRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	fails, err := c.RequestFailures(ctx, RequestFilter{})
	if err != nil || len(fails) != 2 || fails[0].Failure != "no sentence" || fails[0].Answer != "Sentence:" || fails[0].Stage != "gen" {
		t.Fatalf("failures: %+v %v", fails, err)
	}
	if _, err := c.DropRequests(ctx, RequestFilter{Key: "xyz"}); err == nil {
		t.Error("a malformed key prefix was accepted")
	}
	n, err := c.DropRequests(ctx, RequestFilter{Key: reqKey("3")[:10]})
	if n != 1 || err != nil {
		t.Fatalf("drop one failure by key: %d %v", n, err)
	}
	if n, _ := c.DropRequests(ctx, RequestFilter{Stage: stageKey[:12], Failed: true}); n != 1 {
		t.Fatalf("drop gen's failures by stage key: %d", n)
	}
	if n, _ := c.DropRequests(ctx, RequestFilter{Stage: "label"}); n != 2 {
		t.Fatalf("drop label's answers: %d", n)
	}
	if stats, _ := c.RequestStats(ctx); len(stats) != 1 || stats[0].Requests != 2 || stats[0].Failures != 0 {
		t.Fatalf("left: %+v", stats)
	}
}
