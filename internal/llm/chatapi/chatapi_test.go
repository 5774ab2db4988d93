package chatapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"repro/internal/llm"
	"repro/internal/llm/chatapi"
	"repro/internal/llm/llmtest"
)

// The request on the wire carries exactly the sampling parameters (a zero
// temperature included), the model and roles, and the named key only: a key
// in the environment that the experiment did not name is never sent.
func TestWireFormat(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "must-not-leak")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/elsewhere")
	srv := llmtest.New()
	defer srv.Close()
	for _, key := range []string{"named-key", ""} {
		p, err := chatapi.New(chatapi.Config{BaseURL: srv.BaseURL(), APIKey: key})
		if err != nil {
			t.Fatal(err)
		}
		r := llm.Request{Model: "m1", Messages: []llm.Message{{Role: "system", Content: "S"}, {Role: "user", Content: "U"}, {Role: "assistant", Content: "A"}, {Role: "user", Content: "U2"}},
			Sampling: llm.Sampling{Temperature: 0, TopP: 0.95, PresencePenalty: 0.3, FrequencyPenalty: 0.3, MaxTokens: 64}}
		if _, err := p.Complete(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		got := srv.Received()[srv.Count()-1]
		b := got.Body
		if b.Model != "m1" || len(b.Messages) != 4 || b.Messages[2].Role != "assistant" || b.Messages[3].Content != "U2" {
			t.Errorf("body %s", got.Raw)
		}
		if b.Temperature == nil || *b.Temperature != 0 || b.TopP == nil || *b.TopP != 0.95 ||
			b.PresencePenalty == nil || *b.PresencePenalty != 0.3 || b.FrequencyPenalty == nil || *b.FrequencyPenalty != 0.3 ||
			b.MaxTokens == nil || *b.MaxTokens != 64 || b.Stream {
			t.Errorf("sampling parameters on the wire: %s", got.Raw)
		}
		want := ""
		if key != "" {
			want = "Bearer " + key
		}
		if got.Authorization != want {
			t.Errorf("key %q: Authorization %q, want %q", key, got.Authorization, want)
		}
	}
}

// Each failure a server can produce maps to the right llm error kind.
func TestErrorKinds(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	cases := []struct {
		reply  llmtest.Reply
		stream bool
		status int // 0: a TransientError
		what   string
	}{
		{llmtest.Reply{Status: 429, RetryAfter: "3", Error: "Rate limit"}, false, 429, "Rate limit"},
		{llmtest.Reply{Status: 500, Error: "boom"}, false, 500, "boom"},
		{llmtest.Reply{Status: 401, Error: "Incorrect API key"}, false, 401, "api_key_env"},
		{llmtest.Reply{Status: 404, Error: "The model does not exist"}, true, 404, "unknown model"},
		{llmtest.Reply{Status: 404, Code: "model_not_found", Error: "The model `gpt-3.5-turbo-0301` does not exist"}, false, 404, "[model_not_found]"},
		{llmtest.Reply{RawBody: "{not json"}, false, 0, "malformed response"},
		{llmtest.Reply{RawBody: `{"id":"x","object":"chat.completion","choices":[]}`}, false, 0, "no choices"},
		{llmtest.Reply{Truncate: true, Content: "a b c d e f"}, true, 0, "truncated stream"},
	}
	for _, c := range cases {
		srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply { return c.reply }
		p, err := chatapi.New(chatapi.Config{BaseURL: srv.BaseURL(), APIKey: "k", Stream: c.stream})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Complete(context.Background(), llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}, Sampling: llm.Sampling{Temperature: 1, TopP: 1}})
		var ae *llm.APIError
		var te *llm.TransientError
		switch {
		case c.status != 0 && (!errors.As(err, &ae) || ae.Status != c.status):
			t.Errorf("%+v: error %v, want HTTP %d", c.reply, err, c.status)
		case c.status == 0 && !errors.As(err, &te):
			t.Errorf("%+v: error %v, want a transient error", c.reply, err)
		case !strings.Contains(err.Error(), c.what):
			t.Errorf("%+v: error %q does not say %q", c.reply, err, c.what)
		}
		if c.reply.Code != "" && ae.Code != c.reply.Code {
			t.Errorf("%+v: code %q", c.reply, ae.Code)
		}
		if c.status == 429 && ae.RetryAfter != 3*time.Second {
			t.Errorf("Retry-After read as %v", ae.RetryAfter)
		}
	}
}
func TestChatapiConfig(t *testing.T) {
	for _, bad := range []string{"", "localhost:8000", "ftp://x/v1", "http://user:secret@host/v1"} {
		if _, err := chatapi.New(chatapi.Config{BaseURL: bad}); err == nil {
			t.Errorf("base_url %q accepted", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("the error repeats the credential: %v", err)
		}
	}
	// A server that is not there: a transient failure, retried, then an error naming it.
	p, err := chatapi.New(chatapi.Config{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	lim := llm.Limits{MaxRetries: 1, BackoffBase: 5 * time.Millisecond}
	c := &llm.Client{Provider: p, Limits: lim}
	_, err = c.Do(context.Background(), []llm.Request{{Model: "m", Sampling: llm.Sampling{Temperature: 1, TopP: 1}}}, func(int, llm.Result) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "no response from http://127.0.0.1:1/v1/chat/completions") {
		t.Fatalf("error %v", err)
	}
}
