package llm

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func baseRequest() Request {
	return Request{
		Model:    "gpt-3.5-turbo-0301",
		Messages: []Message{{Role: "system", Content: "Paraphrase."}, {Role: "user", Content: "A dog runs."}},
		Sampling: Sampling{Temperature: 1, TopP: 0.9},
	}
}

// The key's preimage is fixed: a change to it must be deliberate (and bump
// keyVersion), since every cached answer is found through it.
func TestKeyGolden(t *testing.T) {
	got := string(Canonical("openai", baseRequest()))
	want := `{"v":1,"provider":"openai","model":"gpt-3.5-turbo-0301","messages":[{"role":"system","content":"Paraphrase."},{"role":"user","content":"A dog runs."}],"sampling":{"temperature":1,"top_p":0.9,"presence_penalty":0,"frequency_penalty":0,"max_tokens":0},"sample":0}`
	if got != want {
		t.Fatalf("canonical request changed:\n got %s\nwant %s", got, want)
	}
	if k := Key("openai", baseRequest()); len(k) != 64 || strings.Trim(k, "0123456789abcdef") != "" {
		t.Fatalf("key %q is not 64 hex digits", k)
	}
}

// Each component of the key, changed alone, changes the key.
func TestKeyComponents(t *testing.T) {
	base := Key("openai", baseRequest())
	changes := map[string]func(r *Request) string{
		"provider":          func(r *Request) string { return "local" },
		"model":             func(r *Request) string { r.Model = "gpt-4"; return "openai" },
		"message content":   func(r *Request) string { r.Messages[1].Content = "A cat runs."; return "openai" },
		"message role":      func(r *Request) string { r.Messages[0].Role = "user"; return "openai" },
		"extra message":     func(r *Request) string { r.Messages = append(r.Messages, Message{"user", "x"}); return "openai" },
		"temperature":       func(r *Request) string { r.Temperature = 1.3; return "openai" },
		"top_p":             func(r *Request) string { r.TopP = 0.95; return "openai" },
		"presence_penalty":  func(r *Request) string { r.PresencePenalty = 0.3; return "openai" },
		"frequency_penalty": func(r *Request) string { r.FrequencyPenalty = 0.3; return "openai" },
		"max_tokens":        func(r *Request) string { r.MaxTokens = 64; return "openai" },
		"sample":            func(r *Request) string { r.Sample = 1; return "openai" },
	}
	seen := map[string]string{base: "base"}
	for name, change := range changes {
		r := baseRequest()
		kind := change(&r)
		k := Key(kind, r)
		if prev, dup := seen[k]; dup {
			t.Errorf("changing %s gives the key of %s", name, prev)
		}
		seen[k] = name
	}
	// Equal content, equal key.
	if Key("openai", baseRequest()) != base {
		t.Error("the key is not a function of the content")
	}
}

func TestCheckSampling(t *testing.T) {
	good := Sampling{Temperature: 1.3, TopP: 1, PresencePenalty: 0.3, FrequencyPenalty: 0.3}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Sampling{
		{Temperature: -1, TopP: 1}, {Temperature: 2.5, TopP: 1}, {Temperature: 1, TopP: 0},
		{Temperature: 1, TopP: 1.1}, {Temperature: 1, TopP: 1, PresencePenalty: 3},
		{Temperature: 1, TopP: 1, FrequencyPenalty: -3}, {Temperature: 1, TopP: 1, MaxTokens: -1},
	} {
		if bad.Check() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestPriceOf(t *testing.T) {
	table := map[string]Price{
		"gpt-3.5-turbo":     {InputPer1K: 0.0015, OutputPer1K: 0.002},
		"gpt-3.5-turbo-16k": {InputPer1K: 0.003, OutputPer1K: 0.004},
		"gpt-4":             {InputPer1K: 0.03, OutputPer1K: 0.06},
	}
	cases := map[string]float64{"gpt-3.5-turbo": 0.0015, "gpt-3.5-turbo-0301": 0.0015, "gpt-3.5-turbo-16k-0613": 0.003, "gpt-4-0314": 0.03}
	for model, want := range cases {
		p, ok := PriceOf(table, model)
		if !ok || p.InputPer1K != want {
			t.Errorf("PriceOf(%s) = %+v, %v; want input %v", model, p, ok, want)
		}
	}
	if _, ok := PriceOf(table, "gpt-4o"); ok {
		t.Error("gpt-4o priced as gpt-4: a prefix match must end at a dash")
	}
	// Table 13 of the paper: 1,000 sentences cost about $1.5 at these prices.
	if c := (Price{InputPer1K: 0.0015, OutputPer1K: 0.002}).Cost(1000, 500); c != 0.0025 {
		t.Errorf("cost %v, want 0.0025", c)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(3 * time.Second).Format(http.TimeFormat)}}, 3 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"-4"}}, 0},
		{http.Header{}, 0},
	}
	for _, c := range cases {
		if got := ParseRetryAfter(c.h, now); got != c.want {
			t.Errorf("%v: got %v, want %v", c.h, got, c.want)
		}
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		err   error
		retry bool
	}{
		{&APIError{Status: 429, RetryAfter: time.Second}, true},
		{&APIError{Status: 500}, true},
		{&APIError{Status: 503}, true},
		{&APIError{Status: 408}, true},
		{&APIError{Status: 400}, false},
		{&APIError{Status: 401}, false},
		{&APIError{Status: 403}, false},
		{&APIError{Status: 404}, false},
		{Transient("truncated stream", nil), true},
		{Fatal(Transient("x", nil)), false},
	}
	for _, c := range cases {
		if retry, _ := classify(c.err); retry != c.retry {
			t.Errorf("%v: retry %v, want %v", c.err, retry, c.retry)
		}
	}
	if _, after := classify(&APIError{Status: 429, RetryAfter: 2 * time.Second}); after != 2*time.Second {
		t.Errorf("Retry-After lost: %v", after)
	}
}

// The limiter's pacing, on a synthetic clock.
func TestLimiter(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	// 60 requests/min: one start a second.
	l := newLimiter(60, 0, func() time.Time { return t0 })
	if d := l.reserve(t0, 10); d != 0 {
		t.Fatalf("first request waits %v", d)
	}
	if d := l.reserve(t0.Add(300*time.Millisecond), 10); d != 700*time.Millisecond {
		t.Fatalf("second request waits %v, want 700ms", d)
	}
	if d := l.reserve(t0.Add(time.Second), 10); d != 0 {
		t.Fatalf("a second later the request waits %v", d)
	}

	// 600 tokens/min: a 300-token request, another, then the bucket is empty
	// and refills at 10 tokens a second.
	l = newLimiter(0, 600, func() time.Time { return t0 })
	for i := 0; i < 2; i++ {
		if d := l.reserve(t0, 300); d != 0 {
			t.Fatalf("request %d waits %v", i, d)
		}
	}
	if d := l.reserve(t0, 100); d != 10*time.Second {
		t.Fatalf("empty bucket: wait %v, want 10s", d)
	}
	// The answers used fewer tokens than reserved: the rest comes back.
	l.settle(300, 100)
	if d := l.reserve(t0, 100); d != 0 {
		t.Fatalf("after settle the request waits %v", d)
	}
	// A request larger than the minute's budget waits for a full bucket, not forever.
	if d := l.reserve(t0.Add(time.Hour), 10000); d != 0 {
		t.Fatalf("oversized request on a full bucket waits %v", d)
	}

	// A pause (429) holds everyone back.
	l = newLimiter(0, 0, func() time.Time { return t0 })
	l.pause(5 * time.Second)
	if d := l.reserve(t0.Add(time.Second), 1); d != 4*time.Second {
		t.Fatalf("paused: wait %v, want 4s", d)
	}
}
