package local

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"repro/internal/generate"
	"repro/internal/llm"
	"repro/internal/llm/llmtest"
	"repro/internal/model/lm"
)

func tinyLM(t *testing.T, context int) *lm.LM {
	t.Helper()
	l, err := lm.Open(llmtest.TinyLM(t, context))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func chat(input string) []llm.Message {
	return []llm.Message{
		{Role: "system", Content: "Please paraphrase the input sentence."},
		{Role: "user", Content: "the cat sat on the mat"}, {Role: "assistant", Content: "a cat sat on a mat"},
		{Role: "user", Content: "a dog sat on a log"}, {Role: "assistant", Content: "the dog sat on the log"},
		{Role: "user", Content: input},
	}
}

func TestRender(t *testing.T) {
	got, err := Render([]llm.Message{{Role: "system", Content: "Do it. "}, {Role: "user", Content: "x"}, {Role: "assistant", Content: "1. a\n2. b"}, {Role: "user", Content: "y"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "System: Do it.\nUser: x\nAssistant: 1. a\n2. b\nUser: y\nAssistant:"
	if got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	if _, err := Render([]llm.Message{{Role: "tool", Content: "x"}}); err == nil || !strings.Contains(err.Error(), `role "tool"`) {
		t.Errorf("unknown role: err = %v", err)
	}
	if c := Conversation(want, " z "); c != want+" z" {
		t.Errorf("Conversation = %q", c)
	}
}

// TestFit: the earliest exemplar pair goes first, the system message and
// the question stay; past that the prompt is cut from the left.
func TestFit(t *testing.T) {
	words := func(s string) []int { return make([]int, len(strings.Fields(s))) }
	msgs := chat("the dog and the cat")
	full, _ := Render(msgs)
	n := len(words(full))
	for _, tc := range []struct {
		budget, dropped int
		truncated       bool
	}{{n, 0, false}, {n - 1, 2, false}, {n - 15, 4, false}, {5, 4, true}} {
		f, err := Fit(msgs, words, tc.budget)
		if err != nil {
			t.Fatal(err)
		}
		if f.Dropped != tc.dropped || f.Truncated != tc.truncated || len(f.IDs) > tc.budget {
			t.Errorf("budget %d: dropped %d truncated %v (%d tokens), want %d %v", tc.budget, f.Dropped, f.Truncated, len(f.IDs), tc.dropped, tc.truncated)
		}
		if !strings.HasPrefix(f.Text, "System: Please") || !strings.HasSuffix(f.Text, "User: the dog and the cat\nAssistant:") {
			t.Errorf("budget %d: %q lost its system message or question", tc.budget, f.Text)
		}
		if tc.dropped == 2 && strings.Contains(f.Text, "mat") {
			t.Errorf("budget %d: the first exemplar should have gone: %q", tc.budget, f.Text)
		}
	}
	if _, err := Fit(nil, words, 10); err == nil {
		t.Error("no messages: no error")
	}
}

func request(model, input string, s llm.Sampling, sample int) llm.Request {
	return llm.Request{Model: model, Messages: chat(input), Sampling: s, Sample: sample}
}

// TestComplete: the answer is the engine's output for the fitted prompt
// with the request's sampling and its key's seed; it does not depend on
// what else is in the batch; the sample index gives another sample.
func TestComplete(t *testing.T) {
	l := tinyLM(t, 64)
	model := ModelName("abc")
	s := llm.Sampling{Temperature: 1.3, TopP: 0.9, PresencePenalty: 0.3, FrequencyPenalty: 0.3, MaxTokens: 12}
	p := New(l, model, Options{MaxBatch: 8})
	defer p.Close()
	ctx := context.Background()

	r := request(model, "the dog and the cat", s, 0)
	alone, err := p.Complete(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	// The engine directly, with the same prompt, sampling and seed.
	f, err := Prompt(l, r.Messages, 12)
	if err != nil {
		t.Fatal(err)
	}
	if f.IDs[0] != l.EOS || len(f.IDs) > 64-12 {
		t.Fatalf("prompt: %d tokens, first %d (EOS %d)", len(f.IDs), f.IDs[0], l.EOS)
	}
	outs, err := generate.Generate(ctx, l.Model, [][]int{f.IDs}, generate.Options{
		Sampling:     generate.Sampling{Temperature: 1.3, TopP: 0.9, PresencePenalty: 0.3, FrequencyPenalty: 0.3},
		MaxNewTokens: 12, EOS: l.EOS, Stop: Stops, Decode: l.Decode, Seed: seedOf(llm.Key(Kind, r)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(outs[0].Text); alone.Content != want {
		t.Errorf("answer %q, engine %q", alone.Content, want)
	}
	if alone.Usage.PromptTokens != len(f.IDs) || alone.Usage.CompletionTokens != len(outs[0].Tokens) || alone.Usage.CompletionTokens == 0 {
		t.Errorf("usage %+v, prompt %d, completion %d", alone.Usage, len(f.IDs), len(outs[0].Tokens))
	}
	if alone.FinishReason != "stop" && alone.FinishReason != "length" {
		t.Errorf("finish reason %q", alone.FinishReason)
	}

	// Eight at once, in one batch: r's answer is unchanged.
	inputs := []string{"a cat", "the dog and the cat", "a log", "the mat", "a dog sat", "the cat", "on a log", "dog"}
	got := make([]llm.Response, len(inputs))
	var wg sync.WaitGroup
	for i, in := range inputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			smp := s
			if i%2 == 1 {
				smp.Temperature = 0 // a second sampling group in the same batch
			}
			if in == "the dog and the cat" {
				smp = s
			}
			resp, err := p.Complete(ctx, request(model, in, smp, 0))
			if err != nil {
				t.Error(err)
			}
			got[i] = resp
		}()
	}
	wg.Wait()
	if got[1] != alone {
		t.Errorf("in a batch: %+v, alone: %+v", got[1], alone)
	}
	// Other samples of the same request differ (12 tokens at temperature 1.3).
	differs := false
	for k := 1; k <= 3; k++ {
		o, err := p.Complete(ctx, request(model, "the dog and the cat", s, k))
		if err != nil {
			t.Fatal(err)
		}
		differs = differs || o.Content != alone.Content
	}
	if !differs {
		t.Error("samples 1-3 all repeat sample 0")
	}
}

// TestGreedy: temperature 0 takes the argmax at every step.
func TestGreedy(t *testing.T) {
	l := tinyLM(t, 64)
	model := ModelName("d")
	p := New(l, model, Options{})
	defer p.Close()
	r := request(model, "a dog", llm.Sampling{Temperature: 0, TopP: 1, MaxTokens: 6}, 0)
	a, err := p.Complete(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := Prompt(l, r.Messages, 6)
	ids := f.IDs
	var want []int
	for len(want) < 6 {
		sess, err := l.Model.Start([][]int{ids}, len(ids))
		if err != nil {
			t.Fatal(err)
		}
		lg := sess.Logits()
		best := 0
		for j, v := range lg {
			if v > lg[best] {
				best = j
			}
		}
		if best == l.EOS {
			break
		}
		want = append(want, best)
		ids = append(ids, best)
		if strings.Contains(l.Decode(want), "\nUser:") || strings.Contains(l.Decode(want), "\nSystem:") || strings.Contains(l.Decode(want), "\nAssistant:") {
			t.Skip("greedy path runs into a stop string; the comparison would need the cut")
		}
	}
	if w := strings.TrimSpace(l.Decode(want)); a.Content != w {
		t.Errorf("greedy %q, argmax chain %q", a.Content, w)
	}
}

func TestErrors(t *testing.T) {
	l := tinyLM(t, 32)
	p := New(l, ModelName("d"), Options{})
	ctx := context.Background()
	var fatal *llm.FatalError
	_, err := p.Complete(ctx, request("gpt-4", "x", llm.Sampling{Temperature: 1, TopP: 1}, 0))
	if !errors.As(err, &fatal) || !strings.Contains(err.Error(), "serves") {
		t.Errorf("wrong model: %v", err)
	}
	_, err = p.Complete(ctx, request(ModelName("d"), "x", llm.Sampling{Temperature: 1, TopP: 1, MaxTokens: 30}, 0))
	if !errors.As(err, &fatal) || !strings.Contains(err.Error(), "context") {
		t.Errorf("max_tokens filling the context: %v", err)
	}
	_, err = p.Complete(ctx, request(ModelName("d"), "x", llm.Sampling{Temperature: 3, TopP: 1}, 0))
	if !errors.As(err, &fatal) {
		t.Errorf("temperature 3: %v", err)
	}
	p.Close()
	if _, err = p.Complete(ctx, request(ModelName("d"), "x", llm.Sampling{Temperature: 1, TopP: 1}, 0)); !errors.As(err, &fatal) {
		t.Errorf("closed: %v", err)
	}
}

// TestCached: through a Client with a cache, a second batch sends nothing
// and gets the same answers.
func TestCached(t *testing.T) {
	l := tinyLM(t, 64)
	model := ModelName("d")
	p := New(l, model, Options{})
	defer p.Close()
	cache := &mapCache{m: map[string]llm.Response{}}
	c := &llm.Client{Provider: p, Cache: cache, Limits: llm.Limits{Concurrency: 4}}
	var reqs []llm.Request
	for i, in := range []string{"a cat", "a dog", "the mat", "a log", "the cat"} {
		reqs = append(reqs, request(model, in, llm.Sampling{Temperature: 1, TopP: 0.95, MaxTokens: 8}, i%2))
	}
	first := make([]llm.Response, len(reqs))
	prog, err := c.Do(context.Background(), reqs, func(i int, r llm.Result) error { first[i] = r.Response; return nil })
	if err != nil || prog.Sent != len(reqs) {
		t.Fatalf("first batch: sent %d, err %v", prog.Sent, err)
	}
	second := make([]llm.Response, len(reqs))
	prog, err = c.Do(context.Background(), reqs, func(i int, r llm.Result) error { second[i] = r.Response; return nil })
	if err != nil || prog.Sent != 0 || prog.Cached != len(reqs) {
		t.Fatalf("second batch: sent %d cached %d, err %v", prog.Sent, prog.Cached, err)
	}
	for i := range first {
		if first[i] != second[i] {
			t.Errorf("request %d: %+v then %+v", i, first[i], second[i])
		}
	}
}

type mapCache struct {
	mu sync.Mutex
	m  map[string]llm.Response
}

func (c *mapCache) Get(_ context.Context, k string) (llm.Record, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[k]
	return llm.Record{Key: k, Response: r}, ok, nil
}

func (c *mapCache) Put(_ context.Context, r llm.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[r.Key] = r.Response
	return nil
}
