// Package synth holds the synth.* stage types: SynCSE's synthetic data
// (Zhang, Lan and He 2023) written by a language model -- unlabeled
// sentences from scratch over genres x topics (synth.sentences), positives
// and hard negatives for given sentences (synth.annotate) -- and the mixing
// of triplet sets (synth.mix, for SynCSE-scratch + NLI and the data-amount
// table).
//
// The stages are adapters: internal/syncse plans every chat call and reads
// the answers, internal/llm sends the calls. Every request goes through the
// request cache the runner provides (registry.Env.Requests), keyed by its
// content, so a stage that re-runs -- its parameters changed, an upstream
// stage re-ran, a grid grew, a crash interrupted it -- sends only requests
// never answered before. Parameters that cannot change an answer (base
// URL, limits, timeouts, prices) are still parameters, so changing one
// re-runs the stage: it then sends nothing, writes the same bytes, and
// everything downstream stays cached.
//
// The API key is read from the environment variable the `api_key_env`
// parameter names, when the first uncached request is about to be sent (a
// run answered wholly from the cache needs no key); it is never logged,
// stored, hashed or written into an artifact.
//
// Artifacts: the data files hold only what readers need (sentences.jsonl,
// triplets.jsonl); provenance.jsonl beside them holds, row for row, where
// each row came from (prompt, exemplars or genre and topics, call index,
// request keys); metrics.json in the metrics output counts requests,
// tokens, cost, malformed answers and filtered rows. None of them records
// whether an answer came from the cache, so a re-run writes identical bytes.
package synth

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"repro/internal/llm"
	"repro/internal/llm/chatapi"
	"repro/internal/llm/local"
	"repro/internal/model/lm"
	"repro/registry"
)

// Register adds the synth.* stage types to r.
func Register(r *registry.Registry) {
	r.Add(sentencesType())
	r.Add(annotateType())
	r.Add(mixType())
	r.Add(chatCorpusType())
	r.Add(sampleType())
	r.Add(qualityType())
	r.Add(retrievalType())
}

// Price is one row of a price table: dollars per 1,000 tokens.
type Price struct {
	InputPer1K  float64 `cty:"input_per_1k"`
	OutputPer1K float64 `cty:"output_per_1k"`
}

// LLM are the parameters that say which model answers and how requests are
// sent; every stage that sends requests has them.
type LLM struct {
	Provider          string           `cty:"provider" doc:"openai: any server speaking the OpenAI chat-completions API (OpenAI, vLLM, llama.cpp, Ollama, LM Studio); local: the language model connected to the lm input, in-process (model, base_url, the key and the rate limits are then unused; concurrency is its batch)"`
	BaseURL           string           `cty:"base_url" doc:"the API root; requests go to BASE_URL/chat/completions"`
	Model             string           `cty:"model" doc:"model name as the server knows it (part of every request key)"`
	APIKeyEnv         string           `cty:"api_key_env" doc:"NAME of the environment variable holding the API key (upper case, e.g. OPENAI_API_KEY; \"\": send none, as local servers need none); the key is read only when a request must be sent and never stored"`
	Stream            bool             `cty:"stream" doc:"read answers as server-sent events instead of one JSON body"`
	Concurrency       int              `cty:"concurrency" doc:"requests in flight at once"`
	RequestsPerMinute float64          `cty:"requests_per_minute" doc:"the server's request rate limit (0: none)"`
	TokensPerMinute   float64          `cty:"tokens_per_minute" doc:"the server's token rate limit, prompt plus expected answer (0: none)"`
	TimeoutSeconds    float64          `cty:"timeout_seconds" doc:"longest wait for one answer before the attempt is abandoned and retried"`
	MaxRetries        int              `cty:"max_retries" doc:"further attempts after a 429, a 5xx, a timeout, a malformed or truncated answer (401/403/404/400 stop at once)"`
	Prices            map[string]Price `cty:"prices" doc:"price table, model -> {input_per_1k, output_per_1k} in dollars (a dated model such as gpt-3.5-turbo-0301 takes its family's row): for progress, plans and repro cache requests"`
}

// DefaultLLM is the paper's setting (Appendix C: gpt-3.5-turbo-0301 through
// OpenAI's API; Appendix D's prices) with OpenAI's tier-1 rate limits of
// the time for gpt-3.5-turbo.
func DefaultLLM() LLM {
	return LLM{
		Provider: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-3.5-turbo-0301", APIKeyEnv: "OPENAI_API_KEY",
		Concurrency: 8, RequestsPerMinute: 3500, TokensPerMinute: 60000, TimeoutSeconds: 60, MaxRetries: 6,
		Prices: map[string]Price{"gpt-3.5-turbo": {InputPer1K: 0.0015, OutputPer1K: 0.002}},
	}
}

func (p *LLM) check() error {
	switch {
	case p.Provider != "openai" && p.Provider != local.Kind:
		return fmt.Errorf("provider: %q is not a provider (openai, local)", p.Provider)
	case strings.TrimSpace(p.Model) == "":
		return fmt.Errorf("model: empty")
	case p.Concurrency <= 0:
		return fmt.Errorf("concurrency: %d must be positive", p.Concurrency)
	case p.RequestsPerMinute < 0 || p.TokensPerMinute < 0:
		return fmt.Errorf("requests_per_minute and tokens_per_minute must not be negative (0: no limit)")
	case !(p.TimeoutSeconds > 0):
		return fmt.Errorf("timeout_seconds: %v must be positive", p.TimeoutSeconds)
	case p.MaxRetries < 0:
		return fmt.Errorf("max_retries: %d is negative", p.MaxRetries)
	}
	if p.APIKeyEnv != "" && !envName.MatchString(p.APIKeyEnv) {
		return fmt.Errorf("api_key_env: not an environment variable name: give the NAME of the variable holding the key, never the key")
	}
	for m, pr := range p.Prices {
		if pr.InputPer1K < 0 || pr.OutputPer1K < 0 {
			return fmt.Errorf("prices[%q]: negative price", m)
		}
	}
	if _, err := chatapi.New(chatapi.Config{BaseURL: p.BaseURL}); err != nil {
		return registry.Paramf("base_url", "%v", err)
	}
	return nil
}

func (p *LLM) price() (llm.Price, bool) {
	if p.Provider == ProviderLocal {
		return llm.Price{}, true // in-process: free, and Table 13's cells say so
	}
	table := map[string]llm.Price{}
	for m, pr := range p.Prices {
		table[m] = llm.Price{InputPer1K: pr.InputPer1K, OutputPer1K: pr.OutputPer1K}
	}
	return llm.PriceOf(table, p.Model)
}

// missingKey stands in for a provider whose key variable is unset: the
// batch stops at the first request that must be sent, with a message
// naming the variable (and not before: cached answers need no key).
type missingKey struct{ name string }

func (missingKey) Kind() string { return chatapi.Kind }
func (m missingKey) Complete(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{}, llm.Fatal(fmt.Errorf("environment variable %s (api_key_env) is not set: it must hold the API key for the requests not yet in the cache", m.name))
}

// Providers.
const (
	ProviderOpenAI = "openai"
	ProviderLocal  = local.Kind
)

// lmPort is the input the local provider's language model comes from.
var lmPort = registry.Port{Name: "lm", Kind: registry.KindLanguageModel, Optional: true,
	Doc: "with provider = \"local\": the language model that answers (e.g. train.causal_lm's model, fine-tuned on synth.chat_corpus)"}

// requestModel is the model string of the stage's requests: the model
// parameter, or for the local provider the connected language model's
// digest and chat format (local.ModelName). ok is false when that model is
// not computed yet (plans).
func (p *LLM) requestModel(env *registry.Env) (string, bool, error) {
	if p.Provider != ProviderLocal {
		return p.Model, true, nil
	}
	a, ok := env.Inputs["lm"]
	if !ok {
		return "", false, nil
	}
	if a.Digest == "" {
		return "", false, fmt.Errorf("lm: the language model's artifact has no digest")
	}
	return local.ModelName(a.Digest), true, nil
}

func (p *LLM) provider(env *registry.Env) (llm.Provider, func(), error) {
	if p.Provider == ProviderLocal {
		a, ok := env.Inputs["lm"]
		if !ok {
			return nil, nil, fmt.Errorf("provider = \"local\" needs the lm input: connect a language model (lm = stage.NAME.model)")
		}
		model, _, err := p.requestModel(env)
		if err != nil {
			return nil, nil, err
		}
		l, err := lm.Open(a.Dir)
		if err != nil {
			return nil, nil, fmt.Errorf("lm: %w", err)
		}
		prov := local.New(l, model, local.Options{MaxBatch: p.Concurrency})
		return prov, prov.Close, nil
	}
	prov, err := p.remote()
	return prov, func() {}, err
}

func (p *LLM) remote() (llm.Provider, error) {
	key := ""
	if p.APIKeyEnv != "" {
		key = os.Getenv(p.APIKeyEnv)
		if key == "" {
			return missingKey{p.APIKeyEnv}, nil
		}
	}
	return chatapi.New(chatapi.Config{BaseURL: p.BaseURL, APIKey: key, Stream: p.Stream})
}

// client builds the llm.Client of a stage run: the request cache of env,
// the stage's limits, and progress reports with the running cost.
func (p *LLM) client(env *registry.Env) (*llm.Client, func(), error) {
	prov, done, err := p.provider(env)
	if err != nil {
		return nil, nil, err
	}
	c := &llm.Client{
		Provider: prov,
		Limits: llm.Limits{
			Concurrency: p.Concurrency, RequestsPerMinute: p.RequestsPerMinute, TokensPerMinute: p.TokensPerMinute,
			Timeout: time.Duration(p.TimeoutSeconds * float64(time.Second)), MaxRetries: p.MaxRetries,
		},
		Log: env.Logger(),
	}
	if p.MaxRetries == 0 {
		c.Limits.MaxRetries = -1
	}
	if env.Requests != nil {
		c.Cache = newStoreCache(env)
	}
	price, priced := p.price()
	c.Progress = func(pr llm.Progress) {
		if env.Progress == nil {
			return
		}
		status := fmt.Sprintf("sent %d, cached %d", pr.Sent, pr.Cached)
		if priced {
			status += fmt.Sprintf(", $%.4f this run", price.Cost(pr.SentPromptTokens, pr.SentCompletionTokens))
		} else {
			status += fmt.Sprintf(", %d tokens this run", pr.SentPromptTokens+pr.SentCompletionTokens)
		}
		if pr.Retries > 0 {
			status += fmt.Sprintf(", %d retries", pr.Retries)
		}
		if pr.Failed > 0 {
			status += fmt.Sprintf(", %d unparsable", pr.Failed)
		}
		if pr.Elsewhere > 0 {
			status += fmt.Sprintf(", waiting for %d another run is sending", pr.Elsewhere)
		}
		if !pr.WaitUntil.IsZero() {
			// A wait the server asked for (or a backoff) shows, so that a
			// stalled line is not mistaken for a hang.
			status += fmt.Sprintf(", waiting until %s (%s)", pr.WaitUntil.Format("15:04:05"), pr.WaitReason)
		}
		env.Progress.Update(pr.Done, pr.Total, status)
	}
	if p.Provider == ProviderLocal {
		// In-process: no rate limits; the workers feed the batches.
		c.Limits.RequestsPerMinute, c.Limits.TokensPerMinute = 0, 0
	} else {
		// A paid server: one request finds out whether it has the model
		// and takes the key before the workers send the rest.
		c.Limits.Probe = true
	}
	return c, done, nil
}

// explain turns a server's answer that it has no such model (llm.ModelNotFound)
// into a message naming the model and the variable that sets it; other
// errors pass unchanged. The client's probe makes it the stage's first
// and only request.
func (p *LLM) explain(err error) error {
	if err == nil || p.Provider == ProviderLocal || !llm.ModelNotFound(err) {
		return err
	}
	return fmt.Errorf("model %q not found at %s (retired by its provider, as the paper's gpt-3.5-turbo-0301 is, or never served there): "+
		"set the model parameter to one the server has (the experiments take it as -var llm_model=NAME, and its price in prices); "+
		"the stage stopped at its first request, no other was sent: %w", p.Model, p.BaseURL, err)
}

// logger is env.Log, or a logger that discards when there is none.

// storeCache adapts the runner's request store to llm.Cache (and
// llm.Claimer: a store without claims takes every claim).
type storeCache struct {
	s               registry.RequestStore
	stage, stageKey string
}

func newStoreCache(env *registry.Env) storeCache {
	return storeCache{s: env.Requests, stage: env.Stage, stageKey: env.StageKey}
}

// storedResponse is a stored answer's JSON: the response, and the failure
// when the stage could not parse it (so that every store -- the index, a
// snapshot, a job's journal -- replays a failure as one).
type storedResponse struct {
	llm.Response
	Failure string `json:"failure,omitempty"`
}

func (c storeCache) Get(ctx context.Context, key string) (llm.Record, bool, error) {
	b, ok, err := c.s.LookupRequest(ctx, key)
	if err != nil || !ok {
		return llm.Record{}, false, err
	}
	var r storedResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return llm.Record{}, false, fmt.Errorf("stored answer %s: %w", key[:12], err)
	}
	return llm.Record{Key: key, Response: r.Response, Failure: r.Failure}, true, nil
}

func (c storeCache) Put(ctx context.Context, r llm.Record) error {
	b, err := json.Marshal(storedResponse{Response: r.Response, Failure: r.Failure})
	if err != nil {
		return err
	}
	return c.s.PutRequest(ctx, registry.StoredRequest{
		Key: r.Key, Provider: r.Provider, Model: r.Model, Request: r.Request, Response: b,
		PromptTokens: r.Response.Usage.PromptTokens, CompletionTokens: r.Response.Usage.CompletionTokens, Duration: r.Duration,
		Failure: r.Failure, Stage: c.stage, StageKey: c.stageKey,
	})
}

func (c storeCache) Claim(ctx context.Context, key string) (bool, error) {
	if cl, ok := c.s.(registry.RequestClaimer); ok {
		return cl.ClaimRequest(ctx, key)
	}
	return true, nil
}

func (c storeCache) Release(ctx context.Context, key string) error {
	if cl, ok := c.s.(registry.RequestClaimer); ok {
		return cl.ReleaseRequest(ctx, key)
	}
	return nil
}

// usage sums the tokens and cost of answers.
type usage struct {
	prompt, completion int64
}

func (u *usage) add(r llm.Response) {
	u.prompt += int64(r.Usage.PromptTokens)
	u.completion += int64(r.Usage.CompletionTokens)
}

func (p *LLM) metrics(m map[string]float64, prefix string, u usage) {
	m[prefix+"prompt_tokens"] = float64(u.prompt)
	m[prefix+"completion_tokens"] = float64(u.completion)
	if price, ok := p.price(); ok {
		m[prefix+"cost"] = price.Cost(u.prompt, u.completion)
	}
}

// estimate fills the model and price part of a RequestEstimate.
func (p *LLM) estimate(env *registry.Env) *registry.RequestEstimate {
	model, ok, _ := p.requestModel(env)
	if !ok {
		model = "the lm input's model (not computed yet)"
	}
	e := &registry.RequestEstimate{Provider: p.Provider, Model: model}
	if pr, ok := p.price(); ok {
		e.InputPer1K, e.OutputPer1K, e.Priced = pr.InputPer1K, pr.OutputPer1K, true
	}
	return e
}

func sampling(t, topP, presence, frequency float64, maxTokens int) (llm.Sampling, error) {
	s := llm.Sampling{Temperature: t, TopP: topP, PresencePenalty: presence, FrequencyPenalty: frequency, MaxTokens: maxTokens}
	return s, s.Check()
}

// FileProvenance is the provenance file beside the rows of a synthetic
// artifact: one JSON object per row, in row order.
const FileProvenance = "provenance.jsonl"
