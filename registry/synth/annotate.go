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

// AnnotateParams are synth.annotate's parameters; the defaults are the
// paper's (section 2.3, Appendix C).
type AnnotateParams struct {
	LLM
	PositivePrompts     []string `cty:"positive_prompts" doc:"prompt pool for positives (Table 12)"`
	NegativePrompts     []string `cty:"negative_prompts" doc:"prompt pool for hard negatives (Table 1)"`
	PositiveTemperature float64  `cty:"positive_temperature" doc:"(the paper: 1.0)"`
	PositiveTopP        float64  `cty:"positive_top_p" doc:"(the paper: 0.9)"`
	NegativeTemperature float64  `cty:"negative_temperature" doc:"(the paper: 1.0)"`
	NegativeTopP        float64  `cty:"negative_top_p" doc:"(the paper: 0.95)"`
	MaxTokens           int      `cty:"max_tokens" doc:"longest answer in tokens (0: the server's limit)"`
	Shots               int      `cty:"shots" doc:"exemplars per call (the paper: 5)"`
	PoolSize            int      `cty:"pool_size" doc:"exemplars per prompt, drawn from the exemplars input (the paper: 18, written by GPT-4, unpublished)"`
	Fixed               bool     `cty:"fixed" doc:"every call gets the first prompt and the same exemplars (Table 8's naive generation)"`
	MaxInputs           int      `cty:"max_inputs" doc:"label only the first N input sentences (0: all)"`
	MaxWords            int      `cty:"max_words" doc:"drop triplets with a sentence longer than this (the paper: 32); also the longest exemplar shown"`
	Tries               int      `cty:"tries" doc:"calls per input and label before an unusable (empty) answer is given up (the paper: 1); each further call is a new request"`
}

func annotateType() *registry.StageType {
	return &registry.StageType{
		Name:    "synth.annotate",
		Version: 1,
		Doc: `SynCSE's positive and hard-negative annotation (section 2.3): for every input sentence one call for
a positive and one for a hard negative, each a five-shot multi-turn chat -- the prompt (one of the pool)
as the system message, exemplar inputs and answers as user and assistant turns, the sentence last.
Prompt and exemplars are chosen per (sentence, call), from a pool of pool_size exemplars per prompt drawn
from the exemplars input; an exemplar whose input is the sentence itself is never shown. An answer is its
first line (quotes and list markers removed); an empty one is malformed and, with tries > 1, asked again.
Triplets need both labels; those with a sentence over max_words words are dropped, repeats kept once.`,
		Params: AnnotateParams{
			LLM: DefaultLLM(), PositivePrompts: syncse.PositivePrompts, NegativePrompts: syncse.NegativePrompts,
			PositiveTemperature: 1.0, PositiveTopP: 0.9, NegativeTemperature: 1.0, NegativeTopP: 0.95,
			Shots: 5, PoolSize: 18, MaxWords: 32, Tries: 1,
		},
		Inputs: []registry.Port{
			{Name: "input", Kind: registry.KindSentences, Doc: "sentences to label (SynCSE-partial: NLI premises; -scratch: synth.sentences)"},
			{Name: "exemplars", Kind: registry.KindTriplets, Doc: "demonstrations: anchor -> positive for positives, anchor -> negative for hard negatives"},
			lmPort,
		},
		Outputs: []registry.Port{
			{Name: "triplets", Kind: registry.KindTriplets, Doc: "triplets.jsonl, and provenance.jsonl (prompt, exemplars, call and request key of each label)"},
			{Name: "metrics", Kind: registry.KindMetrics, Doc: "inputs, requests, malformed answers, dropped triplets, tokens and cost (total, per label, per triplet)"},
		},
		Seeded:   true,
		Run:      runAnnotate,
		Requests: estimateAnnotate,
	}
}

// label is one kind of annotation: its annotator and sampling.
type label struct {
	name string
	ann  *syncse.Annotator
	smp  llm.Sampling
}

func (p *AnnotateParams) labels(env *registry.Env) ([]label, error) {
	if err := p.LLM.check(); err != nil {
		return nil, err
	}
	switch {
	case p.MaxInputs < 0:
		return nil, fmt.Errorf("max_inputs: %d is negative (0: all)", p.MaxInputs)
	case p.Tries < 1:
		return nil, fmt.Errorf("tries: %d must be at least 1", p.Tries)
	case p.MaxWords <= 0:
		return nil, fmt.Errorf("max_words: %d must be positive", p.MaxWords)
	}
	ps, err := sampling(p.PositiveTemperature, p.PositiveTopP, 0, 0, p.MaxTokens)
	if err != nil {
		return nil, fmt.Errorf("positive sampling: %w", err)
	}
	ns, err := sampling(p.NegativeTemperature, p.NegativeTopP, 0, 0, p.MaxTokens)
	if err != nil {
		return nil, fmt.Errorf("negative sampling: %w", err)
	}
	ts, err := registry.ReadTriplets(env, "exemplars", registry.TripletNeeds{AllowNone: true})
	if err != nil {
		return nil, err
	}
	var pos, neg []syncse.Exemplar
	for _, t := range ts {
		pos = append(pos, syncse.Exemplar{Input: t.Anchor, Output: t.Positive})
		if t.Negative != "" {
			neg = append(neg, syncse.Exemplar{Input: t.Anchor, Output: t.Negative})
		}
	}
	out := make([]label, 2)
	for i, l := range []struct {
		name    string
		prompts []string
		ex      []syncse.Exemplar
		smp     llm.Sampling
	}{{"positive", p.PositivePrompts, pos, ps}, {"negative", p.NegativePrompts, neg, ns}} {
		a, err := syncse.NewAnnotator(syncse.AnnotateConfig{Name: l.name, Prompts: l.prompts, PoolSize: p.PoolSize, Shots: p.Shots,
			Fixed: p.Fixed, MaxWords: p.MaxWords, Seed: env.Seed}, l.ex)
		if err != nil {
			return nil, err
		}
		out[i] = label{l.name, a, l.smp}
	}
	return out, nil
}

func (p *AnnotateParams) inputs(env *registry.Env) ([]string, error) {
	in, err := registry.ReadSentences(env, "input", 0)
	if err != nil {
		return nil, err
	}
	if p.MaxInputs > 0 && len(in) > p.MaxInputs {
		in = in[:p.MaxInputs]
	}
	return in, nil
}

// labelProvenance says where one label came from.
type labelProvenance struct {
	Prompt  int    `json:"prompt"`
	Shots   []int  `json:"exemplars"` // indices among the usable exemplars
	Call    int    `json:"call"`
	Request string `json:"request"`
	Finish  string `json:"finish_reason"`
}

type tripletProvenance struct {
	Input    int             `json:"input"` // row of the input sentence
	Positive labelProvenance `json:"positive"`
	Negative labelProvenance `json:"negative"`
}

// answer is the parsed label of one input, once one call gave a usable one.
type answer struct {
	text string
	prov labelProvenance
}

var errNoSentence = errors.New("no sentence in the answer")

func runAnnotate(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*AnnotateParams)
	labels, err := p.labels(env)
	if err != nil {
		return err
	}
	inputs, err := p.inputs(env)
	if err != nil {
		return err
	}
	model, _, err := p.requestModel(env)
	if err != nil {
		return err
	}
	client, done, err := p.client(env)
	if err != nil {
		return err
	}
	defer done()
	// An answer without a sentence is recorded as a failure, not replayed
	// as an answer (below it counts as malformed either way).
	client.Check = func(r llm.Response) error {
		if _, ok := syncse.ParseSentence(r.Content); !ok {
			return errNoSentence
		}
		return nil
	}
	got := make([][]*answer, len(labels)) // label -> input -> answer
	for l := range labels {
		got[l] = make([]*answer, len(inputs))
	}
	m := map[string]float64{"inputs": float64(len(inputs))}
	uses := make([]usage, len(labels))
	var total usage
	requests := 0
	for try := 0; try < p.Tries; try++ {
		type slot struct {
			label, input int
			call         syncse.AnnotateCall
		}
		var slots []slot
		var reqs []llm.Request
		for l, lb := range labels {
			for i, s := range inputs {
				if got[l][i] != nil {
					continue
				}
				c := lb.ann.Call(s, try)
				slots = append(slots, slot{l, i, c})
				reqs = append(reqs, llm.Request{Model: model, Messages: c.Messages, Sampling: lb.smp, Sample: try})
			}
		}
		if len(reqs) == 0 {
			break
		}
		requests += len(reqs)
		results := make([]llm.Result, len(reqs))
		if _, err := client.Do(ctx, reqs, func(i int, r llm.Result) error { results[i] = r; return nil }); err != nil {
			return p.explain(err)
		}
		for k, sl := range slots {
			r := results[k]
			uses[sl.label].add(r.Response)
			total.add(r.Response)
			name := labels[sl.label].name
			text, ok := syncse.ParseSentence(r.Response.Content)
			if !ok {
				m["malformed_"+name]++
				env.Logger().Debug("malformed answer", "label", name, "input", sl.input, "call", try, "request", r.Key[:12], "answer", r.Response.Content)
				continue
			}
			got[sl.label][sl.input] = &answer{text: text, prov: labelProvenance{Prompt: sl.call.Prompt, Shots: sl.call.Shots,
				Call: try, Request: r.Key, Finish: r.Response.FinishReason}}
		}
	}

	var out []rows.Triplet
	var prov []tripletProvenance
	seen := map[string]bool{}
	for i, s := range inputs {
		pos, neg := got[0][i], got[1][i]
		if pos == nil || neg == nil {
			m["unlabelled"]++
			continue
		}
		anchor := syncse.DedupeKey(s)
		if syncse.DedupeKey(pos.text) == anchor {
			m["positive_copies_input"]++ // kept, as the paper keeps them; counted to judge a model
		}
		if syncse.DedupeKey(neg.text) == anchor {
			m["negative_copies_input"]++
		}
		if syncse.Words(s) > p.MaxWords || syncse.Words(pos.text) > p.MaxWords || syncse.Words(neg.text) > p.MaxWords {
			m["too_long"]++
			continue
		}
		k := anchor + "\x00" + syncse.DedupeKey(pos.text) + "\x00" + syncse.DedupeKey(neg.text)
		if seen[k] {
			m["repeated"]++
			continue
		}
		seen[k] = true
		out = append(out, rows.Triplet{Anchor: s, Positive: pos.text, Negative: neg.text})
		prov = append(prov, tripletProvenance{Input: i + 1, Positive: pos.prov, Negative: neg.prov})
	}
	m["requests"] = float64(requests)
	m["triplets"] = float64(len(out))
	if len(out) == 0 {
		return fmt.Errorf("no triplet survived: %d inputs, %d requests, %.0f malformed positives, %.0f malformed negatives, %.0f too long",
			len(inputs), requests, m["malformed_positive"], m["malformed_negative"], m["too_long"])
	}
	env.Logger().Info("annotate", "inputs", len(inputs), "requests", requests, "triplets", len(out))
	for l, lb := range labels {
		p.LLM.metrics(m, lb.name+"_", uses[l])
	}
	p.LLM.metrics(m, "", total)
	if c, ok := m["cost"]; ok {
		// Per 1,000, Table 13's unit (its cells are per sentence).
		m["cost_per_1k_triplets"] = 1000 * c / float64(len(out))
		m["positive_cost_per_1k_inputs"] = 1000 * m["positive_cost"] / float64(len(inputs))
		m["negative_cost_per_1k_inputs"] = 1000 * m["negative_cost"] / float64(len(inputs))
	}
	dir := env.Output("triplets")
	if err := rows.Write(filepath.Join(dir, registry.FileTriplets), out); err != nil {
		return err
	}
	if err := rows.Write(filepath.Join(dir, FileProvenance), prov); err != nil {
		return err
	}
	return registry.WriteMetrics(env, "metrics", m)
}

// estimateAnnotate: with both inputs computed, the first call of every
// label is built and looked up; else an upper bound from max_inputs.
func estimateAnnotate(ctx context.Context, env *registry.Env) (*registry.RequestEstimate, error) {
	p := env.Params.(*AnnotateParams)
	e := p.LLM.estimate(env)
	_, haveIn := env.Inputs["input"]
	_, haveEx := env.Inputs["exemplars"]
	model, haveModel, err := p.requestModel(env)
	if err != nil {
		return nil, err
	}
	if !haveIn || !haveEx || !haveModel {
		if err := p.LLM.check(); err != nil {
			return nil, err
		}
		e.Note = "inputs not computed yet"
		if !haveModel {
			e.Note = "the lm input's model not computed yet"
		}
		if p.MaxInputs > 0 {
			e.Requests = 2 * p.MaxInputs
			// A five-shot call: the prompt, ten turns of about 20 tokens, the input.
			e.PromptTokens = int64(e.Requests) * int64(60+(2*p.Shots+1)*24)
			e.CompletionTokens = int64(e.Requests) * 20
			e.Note += fmt.Sprintf(": at most 2 x max_inputs (%d), tokens estimated", p.MaxInputs)
		} else {
			e.Note += ": 2 per input sentence (set max_inputs for a bound)"
		}
		return e, nil
	}
	labels, err := p.labels(env)
	if err != nil {
		return nil, err
	}
	inputs, err := p.inputs(env)
	if err != nil {
		return nil, err
	}
	e.Exact = p.Tries == 1
	if p.Tries > 1 {
		e.Note = "first calls only: a malformed answer is asked again (tries)"
	}
	kind := p.Provider
	for _, lb := range labels {
		for _, s := range inputs {
			c := lb.ann.Call(s, 0)
			r := llm.Request{Model: model, Messages: c.Messages, Sampling: lb.smp}
			e.Requests++
			if _, ok, err := lookup(ctx, env, kind, r); err != nil {
				return nil, err
			} else if ok {
				e.Cached++
				continue
			}
			e.PromptTokens += int64(llm.PromptTokens(r.Messages))
			// An answer about as long as the exemplars' answers.
			ans := 0
			for _, sh := range c.Shots {
				ans += llm.EstimateTokens(lb.ann.Exemplars()[sh].Output)
			}
			if len(c.Shots) > 0 {
				e.CompletionTokens += int64(ans / len(c.Shots))
			}
		}
	}
	return e, nil
}
