package synth

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"repro/internal/llm"
	"repro/internal/rows"
	"repro/internal/syncse"
	"repro/registry"
)

// SentencesParams are synth.sentences's parameters; the defaults are the
// paper's (Appendices B and C).
type SentencesParams struct {
	LLM
	Temperature      float64  `cty:"temperature" doc:"sampling temperature (the paper: 1.3)"`
	TopP             float64  `cty:"top_p" doc:"nucleus sampling mass (the paper: 1.0)"`
	PresencePenalty  float64  `cty:"presence_penalty" doc:"(the paper: 0.3)"`
	FrequencyPenalty float64  `cty:"frequency_penalty" doc:"(the paper: 0.3)"`
	MaxTokens        int      `cty:"max_tokens" doc:"longest answer in tokens (0: the server's limit)"`
	Genres           []string `cty:"genres" doc:"genres to write in (Table 10 as printed, 21)"`
	Topics           []string `cty:"topics" doc:"topics to draw from (Appendix B as printed, 37)"`
	TopicsPerCall    int      `cty:"topics_per_call" doc:"topics named per call, {topic1}..{topicN} (the paper: 6; 0 for prompts without topics)"`
	Prompts          []string `cty:"prompts" doc:"prompt pool (Table 15, placeholders restored: {genre}, {count}, {topic1}..{topic6})"`
	CaptionPrompts   []string `cty:"caption_prompts" doc:"prompt pool of the caption genres (Table 16; also {caption1}..{caption4}); empty: they use prompts"`
	CaptionGenres    []string `cty:"caption_genres" doc:"genres that take caption_prompts"`
	CallsPerGenre    int      `cty:"calls_per_genre" doc:"calls per genre (21 x 660 x 20 is about the paper's 276k sentences)"`
	SentencesPerCall int      `cty:"sentences_per_call" doc:"sentences asked for per call, {count} (the paper: 20)"`
	ExampleSentences int      `cty:"example_sentences" doc:"sentences in the one-shot example (the paper: 10)"`
	ExamplesPerGenre int      `cty:"examples_per_genre" doc:"one-shot examples per genre to choose from (the paper: 30, written by GPT-4, unpublished; here drawn from the examples input)"`
	Fixed            bool     `cty:"fixed" doc:"always the first prompt and example (Table 8's naive generation)"`
	MaxWords         int      `cty:"max_words" doc:"drop sentences longer than this (the paper: 32, SimCSE's truncation)"`
}

func sentencesType() *registry.StageType {
	return &registry.StageType{
		Name:    "synth.sentences",
		Version: 1,
		Doc: `SynCSE-scratch's unlabeled sentences (section 2.4): for each genre, calls_per_genre one-shot
chat calls, each asking for sentences_per_call sentences of the genre on topics_per_call topics drawn
from topics, with one prompt of the pool; prompt, topics and example are chosen per (genre, call), so
more genres or calls leave existing requests unchanged. Answers are read as numbered lists; an answer
without list items is counted as malformed and dropped. Sentences over max_words words are dropped,
repeats (ignoring case and spacing) kept once, in call order.`,
		Params: SentencesParams{
			LLM: DefaultLLM(), Temperature: 1.3, TopP: 1.0, PresencePenalty: 0.3, FrequencyPenalty: 0.3,
			Genres: syncse.Genres, Topics: syncse.Topics, TopicsPerCall: 6,
			Prompts: syncse.SentencePrompts, CaptionPrompts: syncse.CaptionPrompts, CaptionGenres: syncse.CaptionGenres,
			CallsPerGenre: 660, SentencesPerCall: 20, ExampleSentences: 10, ExamplesPerGenre: 30, MaxWords: 32,
		},
		Inputs: []registry.Port{
			{Name: "examples", Kind: registry.KindSentences, Doc: "sentences the one-shot examples are drawn from"},
			{Name: "caption_examples", Kind: registry.KindSentences, Optional: true, Doc: "sentences for the caption genres' examples (e.g. SNLI premises, which are Flickr30k captions); absent: examples"},
			lmPort,
		},
		Outputs: []registry.Port{
			{Name: "sentences", Kind: registry.KindSentences, Doc: "sentences.jsonl, and provenance.jsonl (genre, topics, prompt, example, call, request key per sentence)"},
			{Name: "metrics", Kind: registry.KindMetrics, Doc: "calls, malformed answers, items, dropped (too long, repeated), sentences, tokens, cost"},
		},
		Seeded:   true,
		Run:      runSentences,
		Requests: estimateSentences,
	}
}

func (p *SentencesParams) config(seed int64) (*syncse.ScratchConfig, llm.Sampling, error) {
	if err := p.LLM.check(); err != nil {
		return nil, llm.Sampling{}, err
	}
	s, err := sampling(p.Temperature, p.TopP, p.PresencePenalty, p.FrequencyPenalty, p.MaxTokens)
	if err != nil {
		return nil, s, err
	}
	cfg := &syncse.ScratchConfig{
		Genres: p.Genres, Topics: p.Topics, TopicsPerCall: p.TopicsPerCall, Prompts: p.Prompts,
		CaptionPrompts: p.CaptionPrompts, CaptionGenres: p.CaptionGenres, CallsPerGenre: p.CallsPerGenre,
		Count: p.SentencesPerCall, ExampleCount: p.ExampleSentences, ExamplesPerGenre: p.ExamplesPerGenre,
		Fixed: p.Fixed, MaxWords: p.MaxWords, Seed: seed,
	}
	return cfg, s, cfg.Check()
}

// calls plans the stage's calls from its inputs.
func (p *SentencesParams) calls(env *registry.Env, cfg *syncse.ScratchConfig) ([]syncse.ScratchCall, error) {
	ex, err := registry.ReadSentences(env, "examples", 0)
	if err != nil {
		return nil, err
	}
	var caps []string
	if _, ok := env.Inputs["caption_examples"]; ok {
		c, err := registry.ReadSentences(env, "caption_examples", 0)
		if err != nil {
			return nil, err
		}
		caps = syncse.ExamplePool(c, p.MaxWords)
	}
	return cfg.Calls(syncse.ExamplePool(ex, p.MaxWords), caps)
}

// sentenceProvenance says where a generated sentence came from.
type sentenceProvenance struct {
	Genre   string   `json:"genre"`
	Topics  []string `json:"topics,omitempty"`
	Prompt  int      `json:"prompt"`
	Caption bool     `json:"caption_pool,omitempty"`
	Example int      `json:"example"`
	Call    int      `json:"call"`
	Item    int      `json:"item"` // position in the answer's list
	Request string   `json:"request"`
	Finish  string   `json:"finish_reason"`
}

var errNoList = errors.New("no list of sentences in the answer")

func runSentences(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*SentencesParams)
	cfg, smp, err := p.config(env.Seed)
	if err != nil {
		return err
	}
	calls, err := p.calls(env, cfg)
	if err != nil {
		return err
	}
	model, _, err := p.requestModel(env)
	if err != nil {
		return err
	}
	reqs := make([]llm.Request, len(calls))
	for i, c := range calls {
		reqs[i] = c.Request(model, smp)
	}
	client, done, err := p.client(env)
	if err != nil {
		return err
	}
	defer done()
	// An answer without a list is recorded as a failure, not replayed as
	// an answer (below it counts as malformed either way).
	client.Check = func(r llm.Response) error {
		if len(syncse.ParseList(r.Content)) == 0 {
			return errNoList
		}
		return nil
	}
	results := make([]llm.Result, len(reqs))
	if _, err := client.Do(ctx, reqs, func(i int, r llm.Result) error { results[i] = r; return nil }); err != nil {
		return p.explain(err)
	}

	var out []rows.Sentence
	var prov []sentenceProvenance
	seen := map[string]bool{}
	var u usage
	malformed, items, tooLong, repeats, truncated := 0, 0, 0, 0, 0
	for i, c := range calls {
		r := results[i]
		u.add(r.Response)
		if r.Response.FinishReason == "length" {
			truncated++
		}
		list := syncse.ParseList(r.Response.Content)
		if len(list) == 0 {
			malformed++
			env.Logger().Debug("malformed answer", "genre", c.Genre, "call", c.Call, "request", r.Key[:12], "answer", r.Response.Content)
			continue
		}
		for j, s := range list {
			items++
			if syncse.Words(s) > p.MaxWords {
				tooLong++
				continue
			}
			k := syncse.DedupeKey(s)
			if seen[k] {
				repeats++
				continue
			}
			seen[k] = true
			out = append(out, rows.Sentence{Text: s})
			prov = append(prov, sentenceProvenance{Genre: c.Genre, Topics: c.Topics, Prompt: c.Prompt, Caption: c.Caption,
				Example: c.Example, Call: c.Call, Item: j + 1, Request: r.Key, Finish: r.Response.FinishReason})
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("no sentence survived: %d calls, %d malformed answers, %d items, %d too long, %d repeated", len(calls), malformed, items, tooLong, repeats)
	}
	env.Logger().Info("sentences", "calls", len(calls), "malformed", malformed, "items", items, "too_long", tooLong, "repeated", repeats, "kept", len(out))
	dir := env.Output("sentences")
	if err := rows.Write(filepath.Join(dir, registry.FileSentences), out); err != nil {
		return err
	}
	if err := rows.Write(filepath.Join(dir, FileProvenance), prov); err != nil {
		return err
	}
	m := map[string]float64{
		"calls": float64(len(calls)), "malformed_answers": float64(malformed), "length_stops": float64(truncated),
		"items": float64(items), "too_long": float64(tooLong), "repeated": float64(repeats), "sentences": float64(len(out)),
		"sentences_per_call": float64(len(out)) / float64(len(calls)),
	}
	p.LLM.metrics(m, "", u)
	if c, ok := m["cost"]; ok {
		m["cost_per_1k_sentences"] = 1000 * c / float64(len(out)) // Table 13's unit, per 1,000
	}
	return registry.WriteMetrics(env, "metrics", m)
}

// estimateSentences: the number of calls follows from the parameters; with
// the examples input computed the requests themselves are built and looked
// up, and their prompt tokens counted.
func estimateSentences(ctx context.Context, env *registry.Env) (*registry.RequestEstimate, error) {
	p := env.Params.(*SentencesParams)
	e := p.LLM.estimate(env)
	model, haveModel, err := p.requestModel(env)
	if err != nil {
		return nil, err
	}
	cfg, smp, err := p.config(env.Seed)
	if err != nil {
		return nil, err
	}
	e.Requests, e.Exact = len(p.Genres)*p.CallsPerGenre, true
	// An answer is about as long as the example list, scaled to the count.
	perSentence := int64(20) // tokens, when no example is at hand
	if _, ok := env.Inputs["examples"]; !ok || !haveModel {
		e.Note = "input examples not computed yet: tokens estimated from the templates"
		if !haveModel {
			e.Note = "the lm input's model not computed yet: tokens estimated from the templates"
		}
		prompt := int64(0)
		for _, t := range cfg.Prompts {
			prompt += int64(llm.EstimateTokens(t))
		}
		prompt = 2*prompt/int64(len(cfg.Prompts)) + perSentence*int64(p.ExampleSentences) + 20
		e.PromptTokens = prompt * int64(e.Requests)
		e.CompletionTokens = perSentence * int64(p.SentencesPerCall) * int64(e.Requests)
		return e, nil
	}
	calls, err := p.calls(env, cfg)
	if err != nil {
		return nil, err
	}
	kind := p.Provider // provider names are the llm provider kinds
	for _, c := range calls {
		r := c.Request(model, smp)
		if _, ok, err := lookup(ctx, env, kind, r); err != nil {
			return nil, err
		} else if ok {
			e.Cached++
			continue
		}
		e.PromptTokens += int64(llm.PromptTokens(r.Messages))
		example := int64(llm.EstimateTokens(c.Messages[1].Content))
		e.CompletionTokens += example * int64(p.SentencesPerCall) / int64(p.ExampleSentences)
	}
	return e, nil
}

func lookup(ctx context.Context, env *registry.Env, kind string, r llm.Request) ([]byte, bool, error) {
	if env.Requests == nil {
		return nil, false, nil
	}
	return env.Requests.LookupRequest(ctx, llm.Key(kind, r))
}
