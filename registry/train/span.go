package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/model/t5"
	"repro/internal/text/spancorrupt"
	"repro/internal/trainer"
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
	}
}

// SpanHistory is training.json of train.span_corruption.
type SpanHistory struct {
	Stage      string         `json:"stage"`
	Source     string         `json:"source"`
	Sentences  int            `json:"sentences"` // sentences with at least one token
	Sequences  int            `json:"sequences"` // packed sequences of max_length tokens (the last may be shorter)
	Tokens     int            `json:"tokens"`
	Steps      int            `json:"steps"`
	LastLoss   float64        `json:"last_loss"`
	BestStep   int            `json:"best_step"`
	DevPPL     *float64       `json:"best_dev_perplexity,omitempty"`
	Evaluation []trainer.Eval `json:"evaluation,omitempty"`
	Stopped    bool           `json:"early_stopped,omitempty"`
}

func runSpanCorruption(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*SpanCorruptionParams)
	if SpanCorrupt == nil {
		return fmt.Errorf("train.span_corruption: no span-corruption function is wired in (train.SpanCorrupt)")
	}
	sents, err := ReadSentences(env, "data", p.MaxSentences)
	if err != nil {
		return err
	}
	var devSents []string
	if _, ok := env.Inputs["dev"]; ok {
		if devSents, err = ReadSentences(env, "dev", 0); err != nil {
			return err
		}
	}
	m, tok, source, err := buildT5(env, p.T5Architecture, func() []string { return sents })
	if err != nil {
		return err
	}
	sentinels, err := t5.Sentinels(tok, p.Sentinels)
	if err != nil {
		return fmt.Errorf("sentinels: %w", err)
	}
	text := t5.NewText(tok, m.Config)
	eos := m.Config.EOSTokenID
	seqs, used := text.Packed(sents, p.MaxLength)
	devSeqs, _ := text.Packed(devSents, p.MaxLength)
	if len(seqs) == 0 {
		return fmt.Errorf("data: no sentence has any token")
	}
	tokens := 0
	for _, s := range seqs {
		tokens += len(s)
	}
	o := spancorrupt.Options{NoiseDensity: p.NoiseDensity, MeanSpanLength: p.MeanSpanLength}
	corrupt := func(ids []int, rng *rand.Rand) (t5.Example, error) {
		return t5.SpanExample(SpanCorrupt, ids, o, sentinels, eos, rng)
	}
	stageLog(env).Info("span corruption data", "sentences", used, "sequences", len(seqs), "tokens", tokens, "dev_sequences", len(devSeqs),
		"source", source, "vocab", m.Config.VocabSize)
	step := func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		part := make([]t5.Example, len(batch))
		for i, j := range batch {
			var err error
			if part[i], err = corrupt(seqs[j], rng); err != nil {
				return nil, err
			}
		}
		loss, _, err := m.Loss(part, rng)
		return loss, err
	}
	var eval trainer.EvalFunc
	if len(devSeqs) > 0 {
		// One fixed corruption of the dev sentences, so evaluations compare.
		rng := rand.New(rand.NewPCG(uint64(env.Seed), 0xde5))
		devEx := make([]t5.Example, len(devSeqs))
		for i, ids := range devSeqs {
			if devEx[i], err = corrupt(ids, rng); err != nil {
				return fmt.Errorf("dev: %w", err)
			}
		}
		eval = func(context.Context) (float64, error) {
			s, err := m.Evaluate(devEx, p.DevBatch)
			if err != nil {
				return 0, fmt.Errorf("dev: %w", err)
			}
			return -s.Perplexity, nil
		}
	}
	show := func(metric, best float64) string { return fmt.Sprintf("dev ppl %.2f (best %.2f)", -metric, -best) }
	res, err := trainT5(ctx, env, m, p.Dropout, p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps), len(seqs), step, eval, show)
	if err != nil {
		return err
	}
	h := SpanHistory{Stage: "train.span_corruption", Source: source, Sentences: used, Sequences: len(seqs), Tokens: tokens, Steps: res.Steps,
		LastLoss: res.LastLoss, BestStep: res.BestStep, Evaluation: res.History, Stopped: res.Stopped}
	if !math.IsNaN(res.BestMetric) {
		v := -res.BestMetric
		h.DevPPL = &v
	}
	return saveT5(env, m, tok, "train.span_corruption", res, h)
}
