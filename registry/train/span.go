package train

import (
	"context"
	"fmt"
	"math"

	"repro/internal/model/t5"
	"repro/internal/seq2seq"
	"repro/internal/text/spancorrupt"
	"repro/registry"
)

// SpanCorruptFunc is T5's span corruption of one sequence (Raffel et al.
// 2020, section 3.1.4): about noiseDensity of the tokens of ids (no EOS),
// in spans of mean length meanSpanLength, are dropped from the source,
// each span replaced by the next sentinel id; the target lists each
// sentinel followed by the span it replaced (and, as T5 does, a closing
// sentinel). Draws come from rng only.
type SpanCorruptFunc = t5.SpanCorruptFunc

// SpanCorrupt is train.span_corruption's noise function: T5's exact mask
// (internal/text/spancorrupt). A variable so that tests can substitute a
// simpler one; nil leaves the stage type unregistered.
var SpanCorrupt SpanCorruptFunc = spancorrupt.IDs

// SpanCorruptionParams are train.span_corruption's parameters; the
// defaults are T5's (noise density 0.15, mean span length 3).
type SpanCorruptionParams struct {
	NoiseDensity   float64 `cty:"noise_density" doc:"fraction of tokens corrupted (T5: 0.15)"`
	MeanSpanLength float64 `cty:"mean_span_length" doc:"mean length of a corrupted span (T5: 3)"`
	MaxLength      int     `cty:"max_length" doc:"tokens per packed sequence before corruption: the sentences' tokens are concatenated in order and cut into sequences of this length (the last may be shorter), as T5 packs its corpus"`
	MaxSentences   int     `cty:"max_sentences" doc:"train on the first N sentences; 0 = all"`
	LearningRate   float64 `cty:"learning_rate" doc:"peak learning rate"`
	BatchSize      int     `cty:"batch_size" doc:"packed sequences per micro-batch"`
	Epochs         int     `cty:"epochs" doc:"passes over the packed sequences, each corrupted anew (max_steps > 0 overrides)"`
	MaxSteps       int     `cty:"max_steps" doc:"optimizer updates in all; 0 = epochs decide"`
	DevBatch       int     `cty:"dev_batch" doc:"packed sequences per batch when scoring dev"`
	Dropout        float64 `cty:"dropout" doc:"dropout_rate during training (T5: 0.1)"`
	Optimisation   `doc.eval_every:"updates between dev evaluations (perplexity of the corrupted dev sentences' targets)"`
	T5Architecture
}

// Validate checks every parameter of train.span_corruption.
func (p *SpanCorruptionParams) Validate() error {
	var c registry.Checks
	c.Add(p.NoiseDensity > 0 && p.NoiseDensity < 1, "noise_density", "%v must lie in (0, 1)", p.NoiseDensity)
	c.Add(p.MeanSpanLength >= 1 && !math.IsInf(p.MeanSpanLength, 0), "mean_span_length", "%v must be at least 1", p.MeanSpanLength)
	c.Add(p.MaxLength >= 2, "max_length", "%d must be at least 2", p.MaxLength)
	c.NonNegative("max_sentences", p.MaxSentences)
	c.Positive("dev_batch", p.DevBatch)
	c.Add(p.Dropout >= 0 && p.Dropout < 1, "dropout", "%v must lie in [0, 1)", p.Dropout)
	p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).validate(&c)
	p.T5Architecture.validate(&c)
	c.Add(p.Sentinels >= 1, "sentinels", "%d: span corruption needs sentinel tokens", p.Sentinels)
	return c.Result()
}

func spanCorruptionType() *registry.StageType {
	return &registry.StageType{
		Name: "train.span_corruption",
		// 3: SentencePiece ties broken as sentencepiece 0.1.97 does (one
		// Wikipedia sentence of the mini pretraining tokenizes differently).
		Version: 3,
		Doc: `T5's pretraining objective on a sentence corpus: the sentences' tokens are concatenated in
order and cut into sequences of max_length tokens (T5's packing; corrupting each short sentence alone
would put its one noise span at its end), then each sequence has about noise_density of its tokens,
in spans of mean length mean_span_length, replaced by sentinel tokens; the model learns to write the
sentinels and the spans they replaced (teacher forcing, token cross-entropy). Sequences are corrupted
anew in every batch from the step's seeded stream. The model
is init, else hf_checkpoint, else a from-scratch T5 with a WordPiece vocabulary trained on the
sentences plus the sentinels. With dev connected, the perplexity of its packed, corrupted sentences
(fixed corruption) selects the weights. Resumable; bit-identical on CPU for a given seed.`,
		Params: SpanCorruptionParams{NoiseDensity: 0.15, MeanSpanLength: 3, MaxLength: 128, LearningRate: 1e-3, BatchSize: 32,
			Epochs: 1, DevBatch: 32, Dropout: 0.1, Optimisation: DefaultOptimisation(), T5Architecture: defaultT5Architecture()},
		Inputs: []registry.Port{
			{Name: "data", Kind: registry.KindSentences, Doc: "training sentences"},
			{Name: "dev", Kind: registry.KindSentences, Optional: true, Doc: "held-out sentences for model selection"},
			{Name: "init", Kind: registry.KindLanguageModel, Optional: true, Doc: "a T5 language model to continue training"},
			tokenizerPort,
		},
		Outputs:   []registry.Port{{Name: "model", Kind: registry.KindLanguageModel, Doc: "the pretrained model: Hugging Face T5 directory plus training.json"}},
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*SpanCorruptionParams).externals(), nil },
		Run:       runSpanCorruption,
		Cost:      spanCorruptionCost,
	}
}

// SpanHistory is training.json of train.span_corruption
// (internal/seq2seq's).
type SpanHistory = seq2seq.SpanHistory

func runSpanCorruption(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*SpanCorruptionParams)
	if SpanCorrupt == nil {
		return fmt.Errorf("train.span_corruption: no span-corruption function is wired in (train.SpanCorrupt)")
	}
	sents, err := registry.ReadSentences(env, "data", p.MaxSentences)
	if err != nil {
		return err
	}
	var devSents []string
	if _, ok := env.Inputs["dev"]; ok {
		if devSents, err = registry.ReadSentences(env, "dev", 0); err != nil {
			return err
		}
	}
	m, tok, source, err := buildT5(env, p.T5Architecture, func() []string { return sents })
	if err != nil {
		return err
	}
	cfg, err := p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).trainerConfig(env)
	if err != nil {
		return err
	}
	s := &seq2seq.SpanCorruption{Model: m, Tokenizer: tok, Source: source, Corrupt: SpanCorrupt, Sentences: sents, Dev: devSents,
		Sentinels: p.Sentinels, NoiseDensity: p.NoiseDensity, MeanSpanLength: p.MeanSpanLength, MaxLength: p.MaxLength,
		DevBatch: p.DevBatch, Dropout: p.Dropout, Seed: uint64(env.Seed)}
	res, err := s.Train(ctx, cfg, output(env), "train.span_corruption")
	if err != nil {
		return err
	}
	return res.Save(env.Output("model"), m, tok, "train.span_corruption")
}
