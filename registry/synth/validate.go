package synth

import (
	"errors"
	"regexp"
	"slices"
	"strings"

	"repro/internal/syncse"
	"repro/registry"
)

// envName is what api_key_env may hold. Upper case only: API keys (sk-...,
// hex, base64) fail it, so a key given by mistake is refused before it can
// reach the run's recorded parameters or a log.
var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,63}$`)

// checkLLM records the problems of the provider parameters.
func (p *LLM) checkLLM(c *registry.Checks) {
	c.OneOf("provider", p.Provider, ProviderOpenAI, ProviderLocal)
	c.Add(strings.TrimSpace(p.Model) != "", "model", "empty")
	c.Positive("concurrency", p.Concurrency)
	c.Add(p.RequestsPerMinute >= 0, "requests_per_minute", "%v is negative (0: no limit)", p.RequestsPerMinute)
	c.Add(p.TokensPerMinute >= 0, "tokens_per_minute", "%v is negative (0: no limit)", p.TokensPerMinute)
	c.Add(p.TimeoutSeconds > 0, "timeout_seconds", "%v must be positive", p.TimeoutSeconds)
	c.NonNegative("max_retries", p.MaxRetries)
	// Never echo the value: a key pasted here by mistake must not end up
	// in a message (the check keeps it out of logs and provenance).
	c.Add(p.APIKeyEnv == "" || envName.MatchString(p.APIKeyEnv), "api_key_env",
		"not an environment variable name (upper-case letters, digits and _, at most 64): give the NAME of the variable holding the key, never the key")
	for m, pr := range p.Prices {
		c.Add(pr.InputPer1K >= 0 && pr.OutputPer1K >= 0, "prices", "%q has a negative price", m)
	}
	var pe *registry.ParamError
	if err := p.check(); errors.As(err, &pe) && pe.Param == "base_url" {
		c.Err(pe)
	}
}

// checkSampling records sampling values outside the API's ranges.
func checkSampling(c *registry.Checks, prefix string, t, topP float64) {
	c.Add(t >= 0 && t <= 2, prefix+"temperature", "%v is outside [0, 2]", t)
	c.Add(topP > 0 && topP <= 1, prefix+"top_p", "%v is outside (0, 1]", topP)
}

// paramOf turns a syncse configuration error naming one of names into a
// ParamError for it; rename maps syncse's role name to this stage's
// parameter where they differ.
func paramOf(err error, rename map[string]string, names ...string) error {
	var ce *syncse.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	if n, ok := rename[ce.Param]; ok {
		return registry.Paramf(n, "%s", ce.Detail())
	}
	if slices.Contains(names, ce.Param) {
		return registry.Paramf(ce.Param, "%s", ce.Detail())
	}
	return err
}

// Validate implements registry.Validator.
func (p *SentencesParams) Validate() error {
	var c registry.Checks
	p.checkLLM(&c)
	checkSampling(&c, "", p.Temperature, p.TopP)
	c.Add(p.PresencePenalty >= -2 && p.PresencePenalty <= 2, "presence_penalty", "%v is outside [-2, 2]", p.PresencePenalty)
	c.Add(p.FrequencyPenalty >= -2 && p.FrequencyPenalty <= 2, "frequency_penalty", "%v is outside [-2, 2]", p.FrequencyPenalty)
	c.NonNegative("max_tokens", p.MaxTokens)
	c.Positive("sentences_per_call", p.SentencesPerCall)
	c.Positive("example_sentences", p.ExampleSentences)
	c.Positive("examples_per_genre", p.ExamplesPerGenre)
	cfg := &syncse.ScratchConfig{
		Genres: p.Genres, Topics: p.Topics, TopicsPerCall: p.TopicsPerCall, Prompts: p.Prompts,
		CaptionPrompts: p.CaptionPrompts, CaptionGenres: p.CaptionGenres, CallsPerGenre: p.CallsPerGenre,
		Count: p.SentencesPerCall, ExampleCount: p.ExampleSentences, ExamplesPerGenre: p.ExamplesPerGenre,
		Fixed: p.Fixed, MaxWords: p.MaxWords,
	}
	if p.SentencesPerCall > 0 && p.ExampleSentences > 0 && p.ExamplesPerGenre > 0 {
		if err := cfg.Check(); err != nil {
			c.Err(paramOf(err, nil, "genres", "topics_per_call", "topics", "caption_prompts", "prompts", "calls_per_genre", "max_words"))
		}
	}
	return c.Result()
}

// Validate implements registry.Validator.
func (p *AnnotateParams) Validate() error {
	var c registry.Checks
	p.checkLLM(&c)
	checkSampling(&c, "positive_", p.PositiveTemperature, p.PositiveTopP)
	checkSampling(&c, "negative_", p.NegativeTemperature, p.NegativeTopP)
	c.NonNegative("max_tokens", p.MaxTokens)
	c.NonNegative("shots", p.Shots)
	c.Add(p.PoolSize > p.Shots, "pool_size", "%d must exceed shots (%d), so that an input's own exemplar can be left out", p.PoolSize, p.Shots)
	c.NonNegative("max_inputs", p.MaxInputs)
	c.Positive("max_words", p.MaxWords)
	c.Positive("tries", p.Tries)
	for _, l := range []struct {
		name    string
		prompts []string
	}{{"positive_prompts", p.PositivePrompts}, {"negative_prompts", p.NegativePrompts}} {
		c.Add(len(l.prompts) > 0, l.name, "empty pool")
		for i, pr := range l.prompts {
			c.Add(strings.TrimSpace(pr) != "", l.name, "prompt %d is empty", i+1)
			ph := syncse.Placeholders(pr)
			c.Add(len(ph) == 0, l.name, "prompt %d has a placeholder {%s}: labelling prompts take none (the input is its own message)",
				i+1, strings.Join(ph, "}, {"))
		}
	}
	return c.Result()
}

// Validate implements registry.Validator.
func (p *MixParams) Validate() error {
	var c registry.Checks
	c.NonNegative("max_a", p.MaxA)
	c.NonNegative("max_b", p.MaxB)
	c.Add(p.BFraction >= 0 && p.BFraction <= 1, "b_fraction", "%v is outside [0, 1]", p.BFraction)
	c.OneOf("sample", p.Sample, SampleFirst, SampleRandom, SampleStratified)
	return c.Result()
}
