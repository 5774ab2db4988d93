package llm_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"repro/internal/llm"
	"repro/internal/llm/chatapi"
	"repro/internal/llm/llmtest"
)

// What a server sends is hostile. These tests hold the Client and the
// chat-API provider to: no key in any text, bounded waits and answers,
// unparsable answers recorded as failures, shared requests paid once, and
// no panic whatever the server sends.

const canary = "sk-canary7Q2xZpL0vN8rT4wY6uB1eH9cK3456"

func TestRedact(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Incorrect API key provided: " + canary + ".", "Incorrect API key provided: [redacted]."},
		{"Incorrect API key provided: sk-can***********3456. See docs.", "Incorrect API key provided: [redacted] See docs."},
		{"key sk-...***3456 rejected", "key [redacted] rejected"},
		{"key …3456, rejected", "key [redacted], rejected"},
		{"Bearer " + canary[4:30] + "!", "Bearer [redacted]!"},
		{`{"key":"` + canary + `"}`, `{"key":"[redacted]"}`},
		// Ordinary text keeps its short runs of the key's characters and
		// its ellipses.
		{"sk- 3456 can ... wait... 12***", "sk- 3456 can ... wait... 12***"},
		{"", ""},
	}
	for _, c := range cases {
		if got := llm.Redact(c.in, canary); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := llm.Redact("anything "+canary, ""); got != "anything "+canary {
		t.Errorf("no secret: %q", got)
	}
}

// The key a server echoes -- in an error object, in a body that does not
// parse, in an answer -- is in no error, no log line and no cached record.
func TestKeyEchoedByServerIsRedacted(t *testing.T) {
	masked := canary[:6] + "***********" + canary[len(canary)-4:]
	replies := []llmtest.Reply{
		{Status: 401, Error: "Incorrect API key provided: " + canary},
		{Status: 401, Error: "Incorrect API key provided: " + masked + "."},
		{Status: 500, Error: "upstream said Bearer " + canary},
		{RawBody: `{"choices": [{"message": {"content": "` + canary},
		{RawBody: "<html>" + canary + "</html>", ContentType: "text/html"},
		{Content: "Here is your key: " + canary},
	}
	for _, stream := range []bool{false, true} {
		for i, rep := range replies {
			t.Run(fmt.Sprintf("stream=%v/%d", stream, i), func(t *testing.T) {
				srv := llmtest.New()
				defer srv.Close()
				srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply { return rep }
				p, err := chatapi.New(chatapi.Config{BaseURL: srv.BaseURL(), APIKey: canary, Stream: stream})
				if err != nil {
					t.Fatal(err)
				}
				var logs strings.Builder
				cache := newMemCache()
				lim := fast()
				lim.MaxRetries = 1
				c := &llm.Client{Provider: p, Cache: cache, Limits: lim, Log: textLogger(&logs)}
				res, _, err := collect(t, c, requests(2))
				var texts []string
				if err != nil {
					texts = append(texts, err.Error(), fmt.Sprintf("%+v", err))
				}
				for _, r := range res {
					texts = append(texts, r.Response.Content)
				}
				for _, r := range cache.m {
					texts = append(texts, r.Response.Content, r.Failure)
				}
				texts = append(texts, logs.String())
				for _, s := range texts {
					for _, n := range []string{canary, masked, canary[8:20]} {
						if strings.Contains(s, n) {
							t.Errorf("%q shows %q", s, n)
						}
					}
				}
			})
		}
	}
}

// A Retry-After longer than the client waits (the longer of its backoff
// maximum and its timeout) stops the batch at once with a
// *WaitTooLongError holding the server's wait, instead of stalling every
// worker for an hour per retry.
func TestRetryAfterTooLongStops(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Status: 429, RetryAfter: "3600", Error: "slow down"}
	}
	c := &llm.Client{Provider: provider(t, srv, false), Cache: newMemCache(), Limits: fast()}
	// The guard only stops the test if the client waits the hour.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.Do(ctx, requests(8), func(int, llm.Result) error { return nil })
	var we *llm.WaitTooLongError
	if !errors.As(err, &we) {
		t.Fatalf("err = %v, want a *WaitTooLongError", err)
	}
	if we.Wait != time.Hour || we.Limit != 5*time.Second {
		t.Errorf("wait %s, limit %s; want 1h0m0s and 5s (the timeout, longer than the backoff maximum)", we.Wait, we.Limit)
	}
	if !strings.Contains(err.Error(), "1h0m0s") {
		t.Errorf("the message does not say the server's wait: %v", err)
	}
	if srv.Count() > 4 {
		t.Errorf("%d requests sent; one per worker at most", srv.Count())
	}
}

// A wait before a retry shows in the progress, with its reason.
func TestRetryWaitInProgress(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Script = func(n int, _ *llmtest.ChatRequest) llmtest.Reply {
		if n == 1 {
			return llmtest.Reply{Status: 429, RetryAfter: "0.02", Error: "slow down"}
		}
		return llmtest.Reply{}
	}
	var waits []llm.Progress
	lim := fast()
	lim.Concurrency = 1
	c := &llm.Client{Provider: provider(t, srv, false), Limits: lim, Progress: func(p llm.Progress) {
		if !p.WaitUntil.IsZero() {
			waits = append(waits, p)
		}
	}}
	if _, _, err := collect(t, c, requests(2)); err != nil {
		t.Fatal(err)
	}
	if len(waits) == 0 || !strings.Contains(waits[0].WaitReason, "429") || !strings.Contains(waits[0].WaitReason, "Retry-After") {
		t.Fatalf("progress during the wait: %+v", waits)
	}
}

// Hostile Retry-After values never make a negative or endless wait.
func TestParseRetryAfterHostile(t *testing.T) {
	now := time.Now()
	for _, v := range []string{"1e308", "Inf", "9223372036854775807", "1e19"} {
		h := map[string][]string{"Retry-After": {v}}
		if d := llm.ParseRetryAfter(h, now); d <= time.Hour {
			t.Errorf("Retry-After %s: %s, want a huge wait (which the client refuses)", v, d)
		}
	}
	for _, v := range []string{"-1", "NaN", "-Inf", "soon"} {
		h := map[string][]string{"Retry-After": {v}}
		if d := llm.ParseRetryAfter(h, now); d != 0 {
			t.Errorf("Retry-After %s: %s, want 0", v, d)
		}
	}
}

// An answer Check refuses is stored as a failure, delivered with a
// *MalformedError, and replayed as that failure -- not as an answer, and
// not sent again.
func TestCheckFailureRecordedNotReplayedAsAnswer(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Answer = func(r *llmtest.ChatRequest) string {
		if strings.HasSuffix(r.Last(), " 2") {
			return "garbage"
		}
		return "ok: " + r.Last()
	}
	cache := newMemCache()
	check := func(r llm.Response) error {
		if !strings.HasPrefix(r.Content, "ok: ") {
			return errors.New("no list in the answer")
		}
		return nil
	}
	c := &llm.Client{Provider: provider(t, srv, false), Cache: cache, Limits: fast(), Check: check}
	for round := 0; round < 2; round++ {
		res, prog, err := collect(t, c, requests(4))
		if err != nil {
			t.Fatal(err)
		}
		var me *llm.MalformedError
		if !errors.As(res[2].Err, &me) || me.Reason != "no list in the answer" || me.Key != res[2].Key {
			t.Fatalf("round %d: request 2: %+v, want a *MalformedError", round, res[2])
		}
		if res[2].Response.Content != "garbage" || res[2].Cached != (round == 1) {
			t.Errorf("round %d: request 2: %+v", round, res[2])
		}
		for _, i := range []int{0, 1, 3} {
			if res[i].Err != nil {
				t.Errorf("round %d: request %d: %v", round, i, res[i].Err)
			}
		}
		if prog.Failed != 1 {
			t.Errorf("round %d: progress %+v, want 1 failed", round, prog)
		}
	}
	if srv.Count() != 4 {
		t.Fatalf("%d requests sent, want 4 (the failure is replayed, not sent again)", srv.Count())
	}
	if r := cache.m[llm.Key(chatapi.Kind, requests(4)[2])]; r.Failure != "no list in the answer" {
		t.Fatalf("stored record: %+v", r)
	}
}

// claimCache is a memCache shared by "processes": claims by owner.
type claimCache struct {
	*memCache
	owner  string
	claims *claimTable
	// onClaim, if set, runs inside a successful Claim (to store an answer
	// just then, as another process could).
	onClaim func(key string)
}

type claimTable struct {
	mu sync.Mutex
	by map[string]string
}

func (c *claimCache) Claim(_ context.Context, key string) (bool, error) {
	c.claims.mu.Lock()
	if o, ok := c.claims.by[key]; ok && o != c.owner {
		c.claims.mu.Unlock()
		return false, nil
	}
	c.claims.by[key] = c.owner
	c.claims.mu.Unlock()
	if c.onClaim != nil {
		c.onClaim(key)
	}
	return true, nil
}

func (c *claimCache) Release(_ context.Context, key string) error {
	c.claims.mu.Lock()
	defer c.claims.mu.Unlock()
	if c.claims.by[key] == c.owner {
		delete(c.claims.by, key)
	}
	return nil
}

// A request another client has claimed is not sent: the batch waits for
// its answer in the cache, and takes it from there.
func TestClaimedElsewhereIsWaitedFor(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	shared := newMemCache()
	claims := &claimTable{by: map[string]string{}}
	reqs := requests(6)
	k0 := llm.Key(chatapi.Kind, reqs[0])
	claims.by[k0] = "other"
	waiting := make(chan struct{})
	var once sync.Once
	lim := fast()
	lim.ClaimPoll = time.Millisecond
	c := &llm.Client{Provider: provider(t, srv, false), Cache: &claimCache{memCache: shared, owner: "me", claims: claims}, Limits: lim,
		Progress: func(p llm.Progress) {
			if p.Elsewhere == 1 && p.Done == 5 {
				once.Do(func() { close(waiting) })
			}
		}}
	type out struct {
		res []llm.Result
		err error
	}
	done := make(chan out)
	go func() {
		res, _, err := collect(t, c, reqs)
		done <- out{res, err}
	}()
	<-waiting
	// The other process gets its answer and lets go of the claim.
	shared.Put(context.Background(), llm.Record{Key: k0, Response: llm.Response{Content: "from the other run", FinishReason: "stop"}})
	(&claimCache{memCache: shared, owner: "other", claims: claims}).Release(context.Background(), k0)
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.res[0].Response.Content != "from the other run" || !o.res[0].Cached {
		t.Errorf("request 0: %+v", o.res[0])
	}
	if srv.Count() != 5 {
		t.Errorf("%d requests sent, want 5 (the claimed one is not)", srv.Count())
	}
	for _, r := range srv.Received() {
		if r.Body.Last() == "sentence 0" {
			t.Errorf("the claimed request was sent")
		}
	}
}

// An answer stored by another client between the lookup and the claim is
// taken from the cache, not paid again.
func TestAnswerStoredBeforeClaimIsNotSent(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	shared := newMemCache()
	cc := &claimCache{memCache: shared, owner: "me", claims: &claimTable{by: map[string]string{}}}
	cc.onClaim = func(key string) {
		shared.Put(context.Background(), llm.Record{Key: key, Response: llm.Response{Content: "stored meanwhile"}})
	}
	c := &llm.Client{Provider: provider(t, srv, false), Cache: cc, Limits: fast()}
	res, _, err := collect(t, c, requests(3))
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 0 || res[1].Response.Content != "stored meanwhile" {
		t.Fatalf("%d sent; %+v", srv.Count(), res[1])
	}
	if len(cc.claims.by) != 0 {
		t.Errorf("claims left held: %v", cc.claims.by)
	}
}

// An answer past the bounds is an error naming the request, never stored:
// past the provider's body bound (streamed or not), and past the Client's
// answer bound.
func TestAnswerTooLarge(t *testing.T) {
	big := strings.Repeat("word ", 300<<10/5) // 300 KiB
	cases := []struct {
		name    string
		stream  bool
		maxBody int64
		maxAns  int
		what    string
	}{
		{"body", false, 64 << 10, 0, "response body"},
		{"streamed body", true, 64 << 10, 0, "response body"},
		{"answer", false, 0, 100 << 10, "answer"},
		// A stream spends about 150 bytes a word on its events.
		{"streamed answer", true, 64 << 20, 100 << 10, "answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New()
			defer srv.Close()
			srv.Script = func(n int, _ *llmtest.ChatRequest) llmtest.Reply {
				if n == 2 {
					return llmtest.Reply{Content: big}
				}
				return llmtest.Reply{}
			}
			p, err := chatapi.New(chatapi.Config{BaseURL: srv.BaseURL(), Stream: tc.stream, MaxBodyBytes: tc.maxBody})
			if err != nil {
				t.Fatal(err)
			}
			cache := newMemCache()
			lim := fast()
			lim.Concurrency, lim.MaxAnswerBytes = 1, tc.maxAns
			c := &llm.Client{Provider: p, Cache: cache, Limits: lim}
			reqs := requests(3)
			_, _, err = collect(t, c, reqs)
			var tl *llm.TooLargeError
			if !errors.As(err, &tl) || tl.What != tc.what {
				t.Fatalf("err = %v, want a *TooLargeError for the %s", err, tc.what)
			}
			if k := llm.Key(chatapi.Kind, reqs[1]); !strings.Contains(err.Error(), k[:12]) {
				t.Errorf("the error does not name request %s: %v", k[:12], err)
			}
			if srv.Count() != 2 {
				t.Errorf("%d requests sent; a too large answer is not retried", srv.Count())
			}
			for _, r := range cache.m {
				if len(r.Response.Content) > 1000 {
					t.Errorf("a %d-byte answer was stored", len(r.Response.Content))
				}
			}
		})
	}
}

// Whatever a server sends, the Client returns: an error or answers, never
// a panic.
func TestHostileResponsesNeverPanic(t *testing.T) {
	deep := strings.Repeat("[", 200000) + strings.Repeat("]", 200000)
	raw := []llmtest.Reply{
		{RawBody: " "},
		{RawBody: "null"},
		{RawBody: "[]"},
		{RawBody: deep},
		{RawBody: `{"choices":null}`},
		{RawBody: `{"choices":[null]}`},
		{RawBody: `{"choices":[{"message":null,"finish_reason":null}]}`},
		{RawBody: `{"choices":[{"message":{"content":123},"finish_reason":"stop"}]}`},
		{RawBody: `{"choices":[{"index":-7,"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":-5,"completion_tokens":-1e30}}`},
		{RawBody: `{"choices":[{"message":{"content":"` + "\xff\xfe\x00" + `"},"finish_reason":"` + strings.Repeat("f", 10000) + `"}]}`},
		{RawBody: `{"error":{"message":null,"code":{"nested":[1,2]}}}`},
		{RawBody: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":null}]}\n\ndata: [DONE]\n\n", ContentType: "text/event-stream"},
		{RawBody: "data: {bad json\n\n", ContentType: "text/event-stream"},
		{RawBody: "data: {\"choices\":[{\"index\":99999999999999999999,\"delta\":null,\"finish_reason\":\"stop\"}]}\n\n", ContentType: "text/event-stream"},
		{RawBody: "event: error\ndata: {\"error\":{\"message\":\"boom\"}}\n\n", ContentType: "text/event-stream"},
		{Status: 429, RetryAfter: "1e308"},
		{Status: 503, RetryAfter: "-5"},
		{Status: 429, Header: map[string]string{"Retry-After-Ms": "NaN"}},
		{Status: 429, RetryAfter: "Wed, 21 Oct 2999 07:28:00 GMT"},
		{Status: 299},
		{Status: 600},
		{Status: 302, Header: map[string]string{"Location": "http://127.0.0.1:1/"}},
		{Status: 401, Error: strings.Repeat("é", 1000)},
	}
	for _, stream := range []bool{false, true} {
		for i, rep := range raw {
			t.Run(fmt.Sprintf("stream=%v/%d", stream, i), func(t *testing.T) {
				srv := llmtest.New()
				defer srv.Close()
				srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply { return rep }
				lim := fast()
				lim.MaxRetries = 1
				lim.Timeout = 2 * time.Second
				c := &llm.Client{Provider: provider(t, srv, stream), Cache: newMemCache(), Limits: lim,
					Check: func(r llm.Response) error {
						if r.Content == "" {
							return errors.New("empty")
						}
						return nil
					}}
				_, _, err := collect(t, c, requests(2))
				var pe *llm.PanicError
				if errors.As(err, &pe) {
					t.Fatalf("the provider panicked: %v\n%s", pe.Value, pe.Stack)
				}
			})
		}
	}
}

// textLogger logs to w as the stage log does.
func textLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
