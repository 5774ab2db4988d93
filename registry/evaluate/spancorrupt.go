package evaluate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"repro/internal/model/lm"
	"repro/internal/model/t5"
	"repro/internal/text/spancorrupt"
	"repro/registry"
)

// SpanCorruptionParams are evaluate.span_corruption's parameters: the
// objective as train.span_corruption trains it (T5's defaults).
type SpanCorruptionParams struct {
	NoiseDensity   float64 `cty:"noise_density" doc:"fraction of tokens corrupted (T5: 0.15)"`
	MeanSpanLength float64 `cty:"mean_span_length" doc:"mean length of a corrupted span (T5: 3)"`
	MaxLength      int     `cty:"max_length" doc:"tokens per packed sequence before corruption (as train.span_corruption packs)"`
	BatchSize      int     `cty:"batch_size" doc:"sequences scored together"`
}

// Validate checks evaluate.span_corruption's parameters.
func (p *SpanCorruptionParams) Validate() error {
	var c registry.Checks
	c.Add(p.NoiseDensity > 0 && p.NoiseDensity < 1, "noise_density", "%v must lie in (0, 1)", p.NoiseDensity)
	c.Add(p.MeanSpanLength >= 1 && !math.IsInf(p.MeanSpanLength, 0), "mean_span_length", "%v must be at least 1", p.MeanSpanLength)
	c.Add(p.MaxLength >= 2, "max_length", "%d must be at least 2", p.MaxLength)
	c.Positive("batch_size", p.BatchSize)
	return c.Result()
}

func spanCorruptionType() *registry.StageType {
	return &registry.StageType{
		Name:    "evaluate.span_corruption",
		Version: 1,
		Doc: `How well a T5 model does its pretraining task on held-out sentences: the sentences are packed
into sequences of max_length tokens and corrupted once with T5's span-corruption mask (noise_density,
mean_span_length; one fixed draw from the stage's seed, so two models scored with the same seed see
the same corruption), and the model's targets -- the sentinels and the spans they replaced, then EOS
-- are scored under teacher forcing. metrics.json: perplexity (exp of the mean NLL per target token,
nats), nll, token_accuracy (% of target tokens that are the argmax), tokens, sequences, sentences.
A uniform guess over the vocabulary has perplexity = the vocabulary size.`,
		Params: SpanCorruptionParams{NoiseDensity: spancorrupt.T5.NoiseDensity, MeanSpanLength: spancorrupt.T5.MeanSpanLength, MaxLength: 128, BatchSize: 32},
		Inputs: []registry.Port{
			{Name: "model", Kind: registry.KindLanguageModel, Doc: "a T5 language model (train.span_corruption's, say)"},
			{Name: "data", Kind: registry.KindSentences, Doc: "held-out sentences"},
		},
		Outputs: []registry.Port{metricsPort},
		Seeded:  true,
		Tensor:  true,
		Light:   true,
		Run:     runSpanCorruption,
	}
}

func runSpanCorruption(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*SpanCorruptionParams)
	ma, ss, path, err := heldOut(env)
	if err != nil {
		return err
	}
	texts := make([]string, len(ss))
	for i, s := range ss {
		if strings.TrimSpace(s.Text) == "" {
			return fmt.Errorf("data: %s: row %d: empty sentence", path, i+1)
		}
		texts[i] = s.Text
	}
	m, err := lm.Open(ma.Dir)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if m.Family != "t5" {
		return fmt.Errorf("model: %s is a %s model: evaluate.span_corruption scores text-to-text (t5) models (evaluate.perplexity scores causal ones)", ma.Dir, m.Family)
	}
	seqs, used := m.T5Text.Packed(texts, p.MaxLength)
	if len(seqs) == 0 {
		return fmt.Errorf("data: %s: no sentence has any token", path)
	}
	o := spancorrupt.Options{NoiseDensity: p.NoiseDensity, MeanSpanLength: p.MeanSpanLength}
	// The most spans a sequence of max_length tokens gets: sentinels
	// <extra_id_0> .. of them, as train.span_corruption numbers them.
	_, spans := o.Counts(p.MaxLength)
	sentinels, err := t5.Sentinels(m.T5Text.Tok, spans)
	if err != nil {
		return fmt.Errorf("model: %s: %w", ma.Dir, err)
	}
	rng := rand.New(rand.NewPCG(uint64(env.Seed), spanStream))
	ex := make([]t5.Example, len(seqs))
	for i, ids := range seqs {
		if ex[i], err = t5.SpanExample(spancorrupt.IDs, ids, o, sentinels, m.EOS, rng); err != nil {
			return fmt.Errorf("sequence %d: %w", i+1, err)
		}
	}
	env.Report(0, 1, "scoring")
	s, err := m.T5.Evaluate(ex, p.BatchSize)
	if err != nil {
		return err
	}
	env.Logger().Info("span corruption", "perplexity", s.Perplexity, "nll", s.NLL, "token_accuracy", 100*s.TokenAccuracy,
		"tokens", s.Tokens, "sequences", len(seqs), "sentences", used)
	return registry.WriteMetrics(env, "metrics", map[string]any{
		"perplexity": s.Perplexity, "nll": s.NLL, "token_accuracy": 100 * s.TokenAccuracy,
		"tokens": s.Tokens, "sequences": len(seqs), "sentences": used,
	})
}

// spanStream is the second word of the corruption RNG's seed.
const spanStream = 0x5ba7
