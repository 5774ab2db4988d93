package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"repro/internal/llm"
	"repro/internal/llm/chatapi"
	"repro/internal/llm/llmtest"
)

// memCache is an llm.Cache in memory.
type memCache struct {
	mu   sync.Mutex
	m    map[string]llm.Record
	puts int
}

// countingTransport counts the HTTP requests a client sends.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func (c *countingTransport) count() int { return int(c.n.Load()) }

func newMemCache() *memCache { return &memCache{m: map[string]llm.Record{}} }

func (c *memCache) Get(_ context.Context, key string) (llm.Record, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[key]
	return r, ok, nil
}

func (c *memCache) Put(_ context.Context, r llm.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[r.Key] = r
	c.puts++
	return nil
}

func (c *memCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func provider(t *testing.T, srv *llmtest.Server, stream bool) llm.Provider {
	t.Helper()
	p, err := chatapi.New(chatapi.Config{BaseURL: srv.BaseURL(), APIKey: "test-key", Stream: stream})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func requests(n int) []llm.Request {
	out := make([]llm.Request, n)
	for i := range out {
		out[i] = llm.Request{
			Model:    "test-model",
			Messages: []llm.Message{{Role: "system", Content: "Paraphrase."}, {Role: "user", Content: fmt.Sprintf("sentence %d", i)}},
			Sampling: llm.Sampling{Temperature: 1, TopP: 0.9},
		}
	}
	return out
}

func fast() llm.Limits {
	return llm.Limits{Concurrency: 4, Timeout: 5 * time.Second, MaxRetries: 3, BackoffBase: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond}
}

func collect(t *testing.T, c *llm.Client, reqs []llm.Request) ([]llm.Result, llm.Progress, error) {
	t.Helper()
	out := make([]llm.Result, len(reqs))
	prog, err := c.Do(context.Background(), reqs, func(i int, r llm.Result) error {
		out[i] = r
		return nil
	})
	return out, prog, err
}

// Every answer arrives at its request, each is cached as it arrives, and a
// second batch sends nothing.
func TestClientCachesEveryAnswer(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := llmtest.New()
			defer srv.Close()
			cache := newMemCache()
			var progs []llm.Progress
			c := &llm.Client{Provider: provider(t, srv, stream), Cache: cache, Limits: fast(), Progress: func(p llm.Progress) { progs = append(progs, p) }}
			reqs := requests(12)
			res, prog, err := collect(t, c, reqs)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				if want := fmt.Sprintf("echo: sentence %d", i); r.Response.Content != want {
					t.Errorf("request %d: answer %q, want %q", i, r.Response.Content, want)
				}
				if r.Cached || r.Response.FinishReason != "stop" || r.Response.Usage.CompletionTokens != 3 || r.Response.Usage.Estimated {
					t.Errorf("request %d: %+v", i, r)
				}
			}
			if prog.Sent != 12 || prog.Cached != 0 || prog.Done != 12 || srv.Count() != 12 || cache.len() != 12 {
				t.Fatalf("progress %+v, server saw %d, cache holds %d", prog, srv.Count(), cache.len())
			}
			if len(progs) != 12 || progs[len(progs)-1].Done != 12 {
				t.Errorf("progress reports: %d, last %+v", len(progs), progs[len(progs)-1])
			}
			res2, prog2, err := collect(t, c, reqs)
			if err != nil {
				t.Fatal(err)
			}
			if srv.Count() != 12 || prog2.Cached != 12 || prog2.Sent != 0 {
				t.Fatalf("second batch sent %d requests (progress %+v)", srv.Count()-12, prog2)
			}
			for i := range res2 {
				if res2[i].Response != res[i].Response || !res2[i].Cached {
					t.Errorf("request %d: cached answer %+v differs from %+v", i, res2[i], res[i])
				}
			}
		})
	}
}

// Identical requests go out once; the same messages as different samples go
// out once each.
func TestClientDeduplicates(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	c := &llm.Client{Provider: provider(t, srv, false), Cache: newMemCache(), Limits: fast()}
	r := requests(1)[0]
	s1 := r
	s1.Sample = 1
	res, _, err := collect(t, c, []llm.Request{r, r, s1, r})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 2 {
		t.Fatalf("sent %d requests, want 2 (one per distinct key)", srv.Count())
	}
	if res[0].Key != res[1].Key || res[0].Key == res[2].Key || res[3].Response.Content == "" {
		t.Errorf("results %+v", res)
	}
}

// A stream cut before its finish_reason is retried, never taken as an answer.
func TestTruncatedStreamIsRetried(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Script = func(n int, r *llmtest.ChatRequest) llmtest.Reply {
		if n == 1 {
			return llmtest.Reply{Truncate: true, Content: "one two three four five six"}
		}
		return llmtest.Reply{Content: "one two three four five six"}
	}
	cache := newMemCache()
	c := &llm.Client{Provider: provider(t, srv, true), Cache: cache, Limits: fast()}
	res, prog, err := collect(t, c, requests(1))
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Response.Content != "one two three four five six" || srv.Count() != 2 || prog.Retries != 1 {
		t.Fatalf("answer %q after %d requests, %d retries", res[0].Response.Content, srv.Count(), prog.Retries)
	}
	// Directly: the provider reports the truncation as transient.
	srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Truncate: true, Content: "a b c d"}
	}
	_, err = provider(t, srv, true).Complete(context.Background(), requests(1)[0])
	var te *llm.TransientError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "truncated stream") {
		t.Fatalf("truncated stream: %v", err)
	}
}

// A stream without usage still yields an answer; its token counts are
// estimated and marked so.
func TestStreamWithoutUsage(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{NoUsage: true, Content: "twelve chars"}
	}
	c := &llm.Client{Provider: provider(t, srv, true), Limits: fast()}
	res, _, err := collect(t, c, requests(1))
	if err != nil {
		t.Fatal(err)
	}
	u := res[0].Response.Usage
	if !u.Estimated || u.CompletionTokens != 3 || u.PromptTokens == 0 {
		t.Fatalf("usage %+v", u)
	}
}

// Malformed JSON and a 500 are retried with backoff; the answer that
// finally comes is the one kept.
func TestMalformedAnd500AreRetried(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Script = func(n int, r *llmtest.ChatRequest) llmtest.Reply {
		switch n {
		case 1:
			return llmtest.Reply{RawBody: `{"id": "x", "choices": [{"index": 0, "message": `}
		case 2:
			return llmtest.Reply{Status: 500, Error: "internal error"}
		case 3:
			return llmtest.Reply{RawBody: `<html>bad gateway</html>`}
		}
		return llmtest.Reply{}
	}
	cache := newMemCache()
	c := &llm.Client{Provider: provider(t, srv, false), Cache: cache, Limits: fast()}
	res, prog, err := collect(t, c, requests(1))
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Response.Content != "echo: sentence 0" || srv.Count() != 4 || prog.Retries != 3 || cache.puts != 1 {
		t.Fatalf("answer %q after %d requests, %d retries, %d puts", res[0].Response.Content, srv.Count(), prog.Retries, cache.puts)
	}
}

// A 500 that persists gives up after MaxRetries+1 attempts with an error
// naming the status.
func TestPersistent500GivesUp(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Status: 503, Error: "overloaded"} }
	c := &llm.Client{Provider: provider(t, srv, false), Limits: fast()}
	_, _, err := collect(t, c, requests(1))
	if err == nil || !strings.Contains(err.Error(), "4 attempts failed") || !strings.Contains(err.Error(), "503") {
		t.Fatalf("error %v", err)
	}
	if srv.Count() != 4 {
		t.Fatalf("%d attempts, want 4", srv.Count())
	}
}

// 429 with Retry-After: the client waits at least that long before the
// next attempt (and holds the other workers back too).
func TestRetryAfterIsHonoured(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	var mu sync.Mutex
	var times []time.Time
	srv.Script = func(n int, r *llmtest.ChatRequest) llmtest.Reply {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if n == 1 {
			return llmtest.Reply{Status: 429, RetryAfter: "1", Error: "Rate limit reached"}
		}
		return llmtest.Reply{}
	}
	lim := fast()
	lim.Concurrency = 1
	c := &llm.Client{Provider: provider(t, srv, false), Limits: lim}
	res, prog, err := collect(t, c, requests(2))
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 3 || prog.Retries != 1 || res[0].Response.Content == "" {
		t.Fatalf("%d requests, %d retries", srv.Count(), prog.Retries)
	}
	if gap := times[1].Sub(times[0]); gap < time.Second {
		t.Fatalf("retried %v after a 429 with Retry-After: 1", gap)
	}
}

// 401 and 404 stop the batch at once: no retries, at most one request per
// worker, and an error that says what to check.
func TestFatalStatusStopsWithoutRetryStorm(t *testing.T) {
	for _, c := range []struct {
		status int
		hint   string
	}{{401, "api_key_env"}, {404, "unknown model"}, {400, "HTTP 400"}} {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			srv := llmtest.New()
			defer srv.Close()
			srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply {
				return llmtest.Reply{Status: c.status, Error: "nope", Delay: 20 * time.Millisecond}
			}
			lim := fast()
			client := &llm.Client{Provider: provider(t, srv, false), Cache: newMemCache(), Limits: lim}
			_, prog, err := collect(t, client, requests(40))
			var fe *llm.FatalError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.hint) {
				t.Fatalf("error %v: want a fatal error mentioning %q", err, c.hint)
			}
			if strings.Contains(err.Error(), "test-key") {
				t.Fatalf("the error shows the API key: %v", err)
			}
			if n := srv.Count(); n > lim.Concurrency || prog.Retries != 0 {
				t.Fatalf("%d requests sent, %d retries: a fatal status must stop every worker", n, prog.Retries)
			}
		})
	}
}

// An answer slower than the timeout is abandoned and retried; when every
// attempt is too slow the error says so.
func TestTimeout(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Script = func(n int, r *llmtest.ChatRequest) llmtest.Reply {
		if n == 1 {
			return llmtest.Reply{Delay: 2 * time.Second}
		}
		return llmtest.Reply{}
	}
	lim := fast()
	lim.Timeout = 200 * time.Millisecond
	c := &llm.Client{Provider: provider(t, srv, false), Limits: lim}
	res, prog, err := collect(t, c, requests(1))
	if err != nil || res[0].Response.Content == "" || prog.Retries != 1 {
		t.Fatalf("err %v, retries %d", err, prog.Retries)
	}
	srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Delay: 2 * time.Second} }
	lim.MaxRetries = 1
	c.Limits = lim
	_, _, err = collect(t, c, requests(1))
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("error %v", err)
	}
}

// Stopping in the middle (the callback fails, as a crash would) keeps every
// answer received so far; the next batch sends only the rest.
func TestStopKeepsPaidAnswers(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	cache := newMemCache()
	lim := fast()
	lim.Concurrency = 2
	// Requests are counted as the client sends them: one cancelled in
	// flight may still reach the server after the batch has returned (its
	// answer is lost, as a real API would still bill it), not the client.
	sends := &countingTransport{}
	p, err := chatapi.New(chatapi.Config{BaseURL: srv.BaseURL(), APIKey: "test-key", HTTPClient: &http.Client{Transport: sends}})
	if err != nil {
		t.Fatal(err)
	}
	c := &llm.Client{Provider: p, Cache: cache, Limits: lim}
	reqs := requests(20)
	boom := errors.New("stop")
	n := 0
	_, err = c.Do(context.Background(), reqs, func(i int, r llm.Result) error {
		n++
		if n == 7 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	sent := sends.count()
	stored := cache.len()
	if stored < 7 || stored > sent {
		t.Fatalf("%d sent, %d stored", sent, stored)
	}
	_, prog, err := collect(t, c, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if resent := sends.count() - sent; resent != 20-stored || prog.Cached != stored {
		t.Fatalf("the second batch sent %d (want %d), found %d cached", resent, 20-stored, prog.Cached)
	}
}

// Requests per minute spaces the starts.
func TestRequestsPerMinute(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	var mu sync.Mutex
	var times []time.Time
	srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		return llmtest.Reply{}
	}
	lim := fast()
	lim.RequestsPerMinute = 600 // 100 ms apart
	c := &llm.Client{Provider: provider(t, srv, false), Limits: lim}
	if _, _, err := collect(t, c, requests(4)); err != nil {
		t.Fatal(err)
	}
	if span := times[len(times)-1].Sub(times[0]); span < 300*time.Millisecond-5*time.Millisecond {
		t.Fatalf("4 requests at 600/min spanned %v, want >= 300ms", span)
	}
}

// A cancelled context stops the batch with the context's error.
func TestCancel(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Delay: time.Second} }
	c := &llm.Client{Provider: provider(t, srv, false), Limits: fast()}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Do(ctx, requests(3), func(int, llm.Result) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v", err)
	}
}

// TestProbe: with Limits.Probe the first request a batch must send goes out
// alone: a status every request would get (a retired model, a rejected
// key) costs one request; a server that answers it gets the rest from all
// the workers; what the cache holds is not sent at all.
func TestProbe(t *testing.T) {
	for _, c := range []struct {
		reply llmtest.Reply
		sent  int
	}{
		{llmtest.Reply{Status: 404, Code: "model_not_found", Error: "The model `gpt-3.5-turbo-0301` does not exist or you do not have access to it."}, 1},
		{llmtest.Reply{Status: 401, Error: "Incorrect API key provided"}, 1},
	} {
		srv := llmtest.New()
		srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply { return c.reply }
		lim := fast()
		lim.Probe = true
		client := &llm.Client{Provider: provider(t, srv, false), Cache: newMemCache(), Limits: lim}
		_, _, err := collect(t, client, requests(40))
		if err == nil || srv.Count() != c.sent {
			t.Errorf("HTTP %d: %d requests sent (want %d), error %v", c.reply.Status, srv.Count(), c.sent, err)
		}
		if c.reply.Status == 404 && !llm.ModelNotFound(err) {
			t.Errorf("404 model_not_found: ModelNotFound(%v) is false", err)
		}
		srv.Close()
	}
	// Answered: every request, the probe first and alone.
	srv := llmtest.New()
	defer srv.Close()
	first := make(chan struct{})
	var once sync.Once
	srv.Script = func(n int, _ *llmtest.ChatRequest) llmtest.Reply {
		if n == 1 {
			defer once.Do(func() { close(first) })
			return llmtest.Reply{Delay: 30 * time.Millisecond}
		}
		select {
		case <-first:
		default:
			t.Errorf("request %d arrived while the probe was unanswered", n)
		}
		return llmtest.Reply{}
	}
	lim := fast()
	lim.Probe = true
	cache := newMemCache()
	client := &llm.Client{Provider: provider(t, srv, false), Cache: cache, Limits: lim}
	reqs := requests(12)
	if _, prog, err := collect(t, client, reqs[:3]); err != nil || prog.Sent != 3 {
		t.Fatalf("3 requests: %+v %v", prog, err)
	}
	res, prog, err := collect(t, client, reqs)
	if err != nil || prog.Sent != 9 || prog.Cached != 3 || srv.Count() != 12 {
		t.Fatalf("12 requests, 3 cached: %+v, server saw %d, %v", prog, srv.Count(), err)
	}
	for i, r := range res {
		if want := fmt.Sprintf("echo: sentence %d", i); r.Response.Content != want {
			t.Errorf("request %d: %q", i, r.Response.Content)
		}
	}
}

// TestModelNotFound: OpenAI's code, or a 404 about a model, is a missing
// model; a 404 of a wrong path or another status is not.
func TestModelNotFound(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&llm.APIError{Status: 404, Code: "model_not_found", Message: "The model `gpt-3.5-turbo-0301` does not exist"}, true},
		{&llm.APIError{Status: 400, Code: "model_not_found"}, true},
		{llm.Fatal(fmt.Errorf("request x: %w", &llm.APIError{Status: 404, Message: "The model `x` does not exist."})), true},
		{&llm.APIError{Status: 404, Message: "model \"llama3\" not found, try pulling it first"}, true},
		{&llm.APIError{Status: 404, Message: "no route POST /v2/chat/completions"}, false},
		{&llm.APIError{Status: 401, Message: "Incorrect API key provided"}, false},
		{errors.New("model not found"), false},
		{nil, false},
	} {
		if got := llm.ModelNotFound(c.err); got != c.want {
			t.Errorf("ModelNotFound(%v) = %v", c.err, got)
		}
	}
}
