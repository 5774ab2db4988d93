package store

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"repro/registry"
)

func writeClaim(t *testing.T, s *SharedRequests, key string, c claimFile) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(s.claimPath(key)), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(c)
	if err := os.WriteFile(s.claimPath(key), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A request claimed through the files by one owner (a job) is refused to
// another until released; only the holder's release frees it; an answer
// published by the holder is read by the other.
func TestSharedClaims(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	st, err := OpenObjects(mkCache(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, b := st.SharedRequests(), st.SharedRequests()
	k := reqKey("shared")
	if ok, err := a.Claim(ctx, k); !ok || err != nil {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	if ok, err := a.Claim(ctx, k); !ok || err != nil {
		t.Fatalf("the holder's second claim: %v %v", ok, err)
	}
	if ok, err := b.Claim(ctx, k); ok || err != nil {
		t.Fatalf("a claim held by a live owner was taken: %v %v", ok, err)
	}
	if err := b.Release(ctx, k); err != nil {
		t.Fatal(err)
	}
	if ok, _ := b.Claim(ctx, k); ok {
		t.Fatal("another owner's release freed the holder's claim")
	}
	if _, ok, _ := b.Answer(k); ok {
		t.Fatal("an answer before any was published")
	}
	if err := a.PutAnswer(registry.StoredRequest{Key: k, Provider: "openai", Model: "m", Request: []byte(`{}`), Response: []byte(`{"content":"A"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, k); err != nil {
		t.Fatal(err)
	}
	if r, ok, err := b.Answer(k); !ok || err != nil || string(r) != `{"content":"A"}` {
		t.Fatalf("the published answer: %q %v %v", r, ok, err)
	}
	if ok, err := b.Claim(ctx, k); !ok || err != nil {
		t.Fatalf("claim after release: %v %v", ok, err)
	}
	if _, err := a.Claim(ctx, "../../etc/passwd"); err == nil {
		t.Fatal("a key that is not a digest named a claim file")
	}
}

// mkCache makes a cache directory (objects/) for OpenObjects.
func mkCache(t *testing.T, dir string) string {
	t.Helper()
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	return dir
}

// A claim whose holder died is taken over: on this host when its pid is
// gone (however long its lease), elsewhere once its lease ran out; a live
// holder elsewhere keeps it, and so does a claim that does not parse until
// a lease after it was written.
func TestSharedClaimTakeover(t *testing.T) {
	ClaimLease = time.Hour
	defer func() { ClaimLease = 30 * time.Second }()
	st, err := OpenObjects(mkCache(t, filepath.Join(t.TempDir(), "cache")))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := st.SharedRequests()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	future, past := time.Now().Add(time.Hour).UnixNano(), time.Now().Add(-time.Second).UnixNano()
	cases := []struct {
		name string
		c    *claimFile // nil: a file that does not parse
		age  time.Duration
		take bool
	}{
		{"pid gone here", &claimFile{Owner: "x", Host: st.host, PID: dead.Process.Pid, ExpiresNS: future}, 0, true},
		{"alive here", &claimFile{Owner: "x", Host: st.host, PID: os.Getppid(), ExpiresNS: future}, 0, false},
		{"lapsed elsewhere", &claimFile{Owner: "x", Host: "another-host", PID: 1, ExpiresNS: past}, 0, true},
		{"live elsewhere", &claimFile{Owner: "x", Host: "another-host", PID: 1, ExpiresNS: future}, 0, false},
		{"torn, fresh", nil, 0, false},
		{"torn, old", nil, 2 * time.Hour, true},
	}
	for _, c := range cases {
		k := reqKey(c.name)
		if c.c != nil {
			writeClaim(t, s, k, *c.c)
		} else {
			os.MkdirAll(filepath.Dir(s.claimPath(k)), 0o755)
			os.WriteFile(s.claimPath(k), []byte(`{"own`), 0o644)
		}
		if c.age > 0 {
			old := time.Now().Add(-c.age)
			os.Chtimes(s.claimPath(k), old, old)
		}
		ok, err := s.Claim(ctx, k)
		if err != nil || ok != c.take {
			t.Errorf("%s: took it %v (%v), want %v", c.name, ok, err, c.take)
		}
		if ok {
			got, _, _ := readClaim(s.claimPath(k))
			if got == nil || got.Owner != s.owner {
				t.Errorf("%s: the claim file after the takeover: %+v", c.name, got)
			}
		}
	}
	// A taker that moved aside a live claim (another taker replaced the
	// lapsed one first) puts it back.
	k := reqKey("raced")
	other := st.SharedRequests()
	if ok, _ := other.Claim(ctx, k); !ok {
		t.Fatal("no claim")
	}
	if err := s.takeOver(s.claimPath(k), &claimFile{Owner: "gone", Host: "h", PID: 1, ExpiresNS: past}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := readClaim(s.claimPath(k)); got == nil || got.Owner != other.owner {
		t.Fatalf("the live claim was not put back: %+v", got)
	}
}

// The holder renews its claims: the lease moves forward while it holds
// them, so a live holder elsewhere is never taken over.
func TestSharedClaimRenewed(t *testing.T) {
	ClaimLease = 300 * time.Millisecond
	defer func() { ClaimLease = 30 * time.Second }()
	st, err := OpenObjects(mkCache(t, filepath.Join(t.TempDir(), "cache")))
	if err != nil {
		t.Fatal(err)
	}
	s := st.SharedRequests()
	k := reqKey("renewed")
	if ok, _ := s.Claim(context.Background(), k); !ok {
		t.Fatal("no claim")
	}
	first, _, _ := readClaim(s.claimPath(k))
	// Waits for the renewal, however slow the machine (no time bound but
	// the test's).
	for {
		got, _, err := readClaim(s.claimPath(k))
		if err == nil && got != nil && got.ExpiresNS > first.ExpiresNS {
			if got.Owner != s.owner {
				t.Fatalf("renewed as another owner: %+v", got)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Release(context.Background(), k)
	if _, err := os.Stat(s.claimPath(k)); !os.IsNotExist(err) {
		t.Fatalf("the released claim is still there: %v", err)
	}
}

// A run on the index sees a job's claim and answer: it does not claim
// what the job is sending, and finds the answer the job published before
// its journal is merged; the job sees the run's claims and answers the
// same way. Once the cache is idle, published answers go into the index.
func TestSharedClaimsSeenByIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	rs := claimer(t, c)
	job, err := OpenObjects(dir)
	if err != nil {
		t.Fatal(err)
	}
	js := job.SharedRequests()
	k := reqKey("job's")
	if ok, _ := js.Claim(ctx, k); !ok {
		t.Fatal("the job's claim")
	}
	if ok, err := rs.ClaimRequest(ctx, k); ok || err != nil {
		t.Fatalf("the run took a request a job is sending: %v %v", ok, err)
	}
	var n int
	c.db.QueryRow("SELECT COUNT(*) FROM llm_claims WHERE key = ?", k).Scan(&n)
	if n != 0 {
		t.Fatal("a refused file claim left the index claim held")
	}
	ans := registry.StoredRequest{Key: k, Provider: "openai", Model: "m", Request: []byte(`{}`), Response: []byte(`{"content":"J"}`), PromptTokens: 3}
	if err := js.PutAnswer(ans); err != nil {
		t.Fatal(err)
	}
	js.Release(ctx, k)
	if r, ok, err := rs.LookupRequest(ctx, k); !ok || err != nil || string(r) != `{"content":"J"}` {
		t.Fatalf("the run does not find the job's answer: %q %v %v", r, ok, err)
	}
	mine := reqKey("run's")
	if ok, err := rs.ClaimRequest(ctx, mine); !ok || err != nil {
		t.Fatalf("the run's claim: %v %v", ok, err)
	}
	if ok, _ := js.Claim(ctx, mine); ok {
		t.Fatal("the job took a request the run is sending")
	}
	if err := rs.PutRequest(ctx, registry.StoredRequest{Key: mine, Provider: "openai", Model: "m", Request: []byte(`{}`), Response: []byte(`{"content":"R"}`)}); err != nil {
		t.Fatal(err)
	}
	rs.ReleaseRequest(ctx, mine)
	if r, ok, _ := js.Answer(mine); !ok || string(r) != `{"content":"R"}` {
		t.Fatalf("the job does not find the run's answer: %q %v", r, ok)
	}
	// In use (a run holds the store lock shared): nothing is settled.
	gl, err := c.LockStore(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := c.settleAnswers(ctx, false); n != 0 || err != nil {
		t.Fatalf("settled %d while the cache is in use (%v)", n, err)
	}
	if _, ok, _ := js.Answer(k); !ok {
		t.Fatal("an answer a job may wait for was removed while the cache is in use")
	}
	gl.Unlock()
	if n, err := c.settleAnswers(ctx, false); n != 1 || err != nil {
		t.Fatalf("settled %d new answers (%v), want the job's 1", n, err)
	}
	if _, ok, _ := js.Answer(k); ok {
		t.Fatal("a settled answer file is still there")
	}
	var tokens int
	if err := c.db.QueryRow("SELECT prompt_tokens FROM llm_requests WHERE key = ?", k).Scan(&tokens); err != nil || tokens != 3 {
		t.Fatalf("the job's answer in the index: %d tokens, %v", tokens, err)
	}
	// A dropped answer stays dropped: its published copy goes with it.
	third := reqKey("dropped")
	rs.PutRequest(ctx, registry.StoredRequest{Key: third, Provider: "openai", Model: "m", Request: []byte(`{}`), Response: []byte(`{"content":"D"}`)})
	if n, err := c.DropRequests(ctx, RequestFilter{Key: third}); n != 1 || err != nil {
		t.Fatalf("drop: %d %v", n, err)
	}
	c.settleAnswers(ctx, false)
	if _, ok, _ := rs.LookupRequest(ctx, third); ok {
		t.Fatal("a dropped answer came back")
	}
}
