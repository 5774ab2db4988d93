// Package local is the offline llm.Provider: the project's own causal
// language model (a repro/internal/model/lm artifact) answering chat
// requests in-process through the generation engine
// (repro/internal/generate).
//
// Design choices:
//
//   - Chat format: messages are rendered as plain "Role: content" lines
//     (Format); a small model learns the format from a few thousand
//     fine-tuning conversations rendered the same way (synth.chat_corpus),
//     since it was pretrained on sentences alone.
//   - Context window: a few-shot chat longer than the model's window
//     keeps its system message and question and leaves out its earliest
//     exemplars (Fit); the answer's max_tokens is reserved first.
//   - Keys: requests are keyed like any provider's (kind "local", the
//     model string naming the artifact's digest and the format), so the
//     request cache treats the model like a remote one. The answer is a
//     function of the key alone: each request samples from a stream
//     seeded by its key, so a re-run, a different batch composition or a
//     different concurrency give the same text, and two requests that
//     differ only in their sample index are independent samples.
//   - Batching: the Client sends requests from several workers at once;
//     the provider gathers the requests that arrive together (up to
//     MaxBatch, waiting at most Wait for more) and decodes them in one
//     batch of the engine, grouped by sampling parameters.
//   - Sampling: temperature (0 greedy), top_p, presence and frequency
//     penalties as the OpenAI API defines them (the engine's); max_tokens
//     0 takes DefaultMaxTokens.
package local

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"repro/internal/generate"
	"repro/internal/llm"
	"repro/internal/model/lm"
)

// Kind is the provider kind in request keys.
const Kind = "local"

// ModelName is the model string requests to the language model whose
// artifact digest is digest must carry: the digest and the chat format.
func ModelName(digest string) string { return "lm:" + digest + "+" + Format }

// Options configure a Provider. Zero values take the defaults noted.
type Options struct {
	MaxBatch         int           // requests decoded together (default 32)
	Wait             time.Duration // longest wait for more requests before a batch starts (default 20ms)
	DefaultMaxTokens int           // answer length when a request sets no max_tokens (default 64)
}

// Provider answers chat requests with an in-process language model.
type Provider struct {
	lm    *lm.LM
	model string
	o     Options
	in    chan *job
	once  sync.Once
	quit  chan struct{}
}

type job struct {
	r    llm.Request
	key  string
	done chan result
}

type result struct {
	resp llm.Response
	err  error
}

// New returns a provider answering requests for model (see ModelName) with
// l. Close stops it.
func New(l *lm.LM, model string, o Options) *Provider {
	if o.MaxBatch <= 0 {
		o.MaxBatch = 32
	}
	if o.Wait <= 0 {
		o.Wait = 20 * time.Millisecond
	}
	if o.DefaultMaxTokens <= 0 {
		o.DefaultMaxTokens = 64
	}
	p := &Provider{lm: l, model: model, o: o, in: make(chan *job), quit: make(chan struct{})}
	go p.loop()
	return p
}

// Close stops the batching goroutine; requests after it fail.
func (p *Provider) Close() { p.once.Do(func() { close(p.quit) }) }

// Kind implements llm.Provider.
func (p *Provider) Kind() string { return Kind }

// Complete implements llm.Provider.
func (p *Provider) Complete(ctx context.Context, r llm.Request) (llm.Response, error) {
	if r.Model != p.model {
		return llm.Response{}, llm.Fatal(fmt.Errorf("model %q: this in-process provider serves %q", r.Model, p.model))
	}
	if err := r.Sampling.Check(); err != nil {
		return llm.Response{}, llm.Fatal(err)
	}
	j := &job{r: r, key: llm.Key(Kind, r), done: make(chan result, 1)}
	select {
	case p.in <- j:
	case <-ctx.Done():
		return llm.Response{}, ctx.Err()
	case <-p.quit:
		return llm.Response{}, llm.Fatal(fmt.Errorf("the in-process provider is closed"))
	}
	select {
	case res := <-j.done:
		return res.resp, res.err
	case <-ctx.Done():
		return llm.Response{}, ctx.Err()
	}
}

func (p *Provider) loop() {
	for {
		var batch []*job
		select {
		case j := <-p.in:
			batch = append(batch, j)
		case <-p.quit:
			return
		}
		t := time.NewTimer(p.o.Wait)
	gather:
		for len(batch) < p.o.MaxBatch {
			select {
			case j := <-p.in:
				batch = append(batch, j)
			case <-t.C:
				break gather
			case <-p.quit:
				t.Stop()
				return
			}
		}
		t.Stop()
		p.run(batch)
	}
}

// run answers a batch, one engine call per distinct sampling.
func (p *Provider) run(batch []*job) {
	groups := map[llm.Sampling][]*job{}
	var order []llm.Sampling
	for _, j := range batch {
		s := j.r.Sampling
		if _, ok := groups[s]; !ok {
			order = append(order, s)
		}
		groups[s] = append(groups[s], j)
	}
	for _, s := range order {
		resps, err := p.answer(s, groups[s])
		for i, j := range groups[s] {
			if err != nil {
				j.done <- result{err: err}
			} else {
				j.done <- result{resp: resps[i]}
			}
		}
	}
}

// maxTokens is the answer length of sampling s.
func (p *Provider) maxTokens(s llm.Sampling) int {
	if s.MaxTokens > 0 {
		return s.MaxTokens
	}
	return p.o.DefaultMaxTokens
}

// Prompt renders and fits a request's messages for the model: the prompt
// tokens (with the end-of-text token first when the model was trained so)
// within the context window less the answer's max_tokens.
func Prompt(l *lm.LM, msgs []llm.Message, maxTokens int) (Fitted, error) {
	bos := 0
	if l.BOS {
		bos = 1
	}
	budget := l.Model.MaxLength() - maxTokens - bos
	if l.Model.MaxLength() == 0 {
		budget = 1 << 30
	}
	if budget < 8 {
		return Fitted{}, fmt.Errorf("max_tokens %d leaves %d of the model's %d-token context for the prompt", maxTokens, budget, l.Model.MaxLength())
	}
	f, err := Fit(msgs, l.Encode, budget)
	if err != nil {
		return f, err
	}
	if bos == 1 {
		f.IDs = append([]int{l.EOS}, f.IDs...)
	}
	return f, nil
}

// answer decodes jobs sharing sampling s in one engine call.
func (p *Provider) answer(s llm.Sampling, jobs []*job) ([]llm.Response, error) {
	n := p.maxTokens(s)
	prompts := make([][]int, len(jobs))
	seeds := make([]uint64, len(jobs))
	for i, j := range jobs {
		f, err := Prompt(p.lm, j.r.Messages, n)
		if err != nil {
			return nil, llm.Fatal(fmt.Errorf("request %s: %w", j.key[:12], err))
		}
		prompts[i] = f.IDs
		seeds[i] = seedOf(j.key)
	}
	outs, err := generate.Generate(context.Background(), p.lm.Model, prompts, generate.Options{
		Sampling: generate.Sampling{Temperature: s.Temperature, TopP: s.TopP,
			PresencePenalty: s.PresencePenalty, FrequencyPenalty: s.FrequencyPenalty},
		MaxNewTokens: n, EOS: p.lm.EOS, Stop: Stops, Decode: p.lm.Decode, Seeds: seeds, BatchSize: p.o.MaxBatch,
	})
	if err != nil {
		return nil, llm.Fatal(fmt.Errorf("in-process generation: %w", err))
	}
	resps := make([]llm.Response, len(jobs))
	for i, o := range outs {
		finish := "stop"
		if o.Stop == generate.StopLength || o.Stop == generate.StopContext {
			finish = "length"
		}
		resps[i] = llm.Response{Content: strings.TrimSpace(o.Text), FinishReason: finish,
			Usage: llm.Usage{PromptTokens: len(prompts[i]), CompletionTokens: len(o.Tokens)}}
	}
	return resps, nil
}

// seedOf is the sampling seed of a request: the first 8 bytes of its key.
func seedOf(key string) uint64 {
	b, err := hex.DecodeString(key[:16])
	if err != nil {
		panic(err) // keys are hex by construction
	}
	return binary.BigEndian.Uint64(b)
}
