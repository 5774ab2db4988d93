package evaluate

import (
	"context"
	"fmt"
	"strings"

	"repro/internal/model/lm"
	"repro/internal/rows"
	"repro/registry"
)

// PerplexityParams are evaluate.perplexity's parameters.
type PerplexityParams struct {
	BatchSize int `cty:"batch_size" doc:"sequences scored together"`
	MaxLength int `cty:"max_length" doc:"tokens per scored sequence; a longer text is split into windows overlapping by one token; 0 = the model's context window"`
	// Added after results were cached: the default is the framing the
	// stage always had, so those keys stand.
	Framing string `cty:"framing" key:"added" doc:"how a sentence s is framed: \"eos_s_eos\" (<|endoftext|> s <|endoftext|>, s and the final end token scored: train.causal_lm's framing), \"eos_s\" (<|endoftext|> s, no end token scored: lm-evaluation-harness's rolling log-likelihood), \"s\" (s alone, its first token context)"`
}

// Validate checks evaluate.perplexity's parameters (registry.Validator).
func (p *PerplexityParams) Validate() error {
	var c registry.Checks
	c.Positive("batch_size", p.BatchSize)
	c.Add(p.MaxLength == 0 || p.MaxLength >= 2, "max_length", "%d must be at least 2 (or 0: the model's context window)", p.MaxLength)
	if p.Framing != "" { // "": the default, for callers that build the struct in code
		c.OneOf("framing", p.Framing, lm.Framings()...)
	}
	return c.Result()
}

func perplexityType() *registry.StageType {
	return &registry.StageType{
		Name:    "evaluate.perplexity",
		Version: 1,
		Doc: `Perplexity of a language model on held-out sentences: by default each is framed as
train.causal_lm frames its texts (<|endoftext|> sentence <|endoftext|>: the sentence's tokens and
the final end token are scored, the first end token is context); framing = "eos_s" scores the
sentence after <|endoftext|> without an end token, "s" the sentence alone after its first token.
The perplexity is exp of the mean negative log-likelihood per scored token (nats). metrics.json:
perplexity, nll, tokens (scored), sequences, sentences.`,
		Params: PerplexityParams{BatchSize: 16, Framing: lm.FrameEOSBoth},
		Inputs: []registry.Port{
			{Name: "model", Kind: registry.KindLanguageModel, Doc: "the language model"},
			{Name: "data", Kind: registry.KindSentences, Doc: "held-out sentences"},
		},
		Outputs: []registry.Port{metricsPort},
		Tensor:  true,
		Light:   true,
		Run:     runPerplexity,
	}
}

// heldOut reads the inputs both language-model scores take: the model
// artifact and the held-out sentences (with their file, for messages).
func heldOut(env *registry.Env) (model registry.Artifact, ss []rows.Sentence, path string, err error) {
	if model, err = env.Input("model"); err != nil {
		return model, nil, "", err
	}
	da, err := env.Input("data")
	if err != nil {
		return model, nil, "", err
	}
	path = da.Path(registry.FileSentences)
	if ss, err = rows.Read[rows.Sentence](path); err != nil {
		return model, nil, path, fmt.Errorf("data: %w", err)
	}
	return model, ss, path, nil
}

func runPerplexity(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*PerplexityParams)
	ma, ss, path, err := heldOut(env)
	if err != nil {
		return err
	}
	if len(ss) == 0 {
		return fmt.Errorf("data: %s: no sentences (perplexity of an empty corpus)", path)
	}
	m, err := lm.Open(ma.Dir)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if m.Family == "t5" {
		return fmt.Errorf("model: %s is a text-to-text (t5) model: its perplexity is of targets given sources, which train.seq2seq measures on its dev input (evaluate.perplexity scores causal models)", ma.Dir)
	}
	maxLen := p.MaxLength
	if ctxLen := m.Model.MaxLength(); maxLen == 0 || (ctxLen > 0 && maxLen > ctxLen) {
		maxLen = ctxLen
	}
	framing := p.Framing
	if framing == "" {
		framing = lm.FrameEOSBoth
	}
	var seqs [][]int
	for i, s := range ss {
		if strings.TrimSpace(s.Text) == "" {
			return fmt.Errorf("data: %s: row %d: empty sentence", path, i+1)
		}
		fs, err := lm.FrameWith(framing, m.Encode(s.Text), m.EOS, maxLen)
		if err != nil {
			return err
		}
		if len(fs) == 0 {
			return fmt.Errorf("data: %s: row %d: %q is one token, nothing to score with framing %q", path, i+1, s.Text, framing)
		}
		seqs = append(seqs, fs...)
	}
	env.Report(0, 1, "scoring")
	r, err := lm.Evaluate(ctx, m.Model, seqs, p.BatchSize)
	if err != nil {
		return err
	}
	env.Logger().Info("perplexity", "framing", framing, "perplexity", r.Perplexity, "nll", r.NLL, "tokens", r.Tokens, "sentences", len(ss))
	return registry.WriteMetrics(env, "metrics", map[string]any{
		"perplexity": r.Perplexity, "nll": r.NLL, "tokens": r.Tokens, "sequences": r.Sequences, "sentences": len(ss),
	})
}
