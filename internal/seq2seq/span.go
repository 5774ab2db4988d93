package seq2seq

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/model/t5"
	"repro/internal/model/tokenizer"
	"repro/internal/text/spancorrupt"
	"repro/internal/trainer"
)

// SpanCorruption is T5's pretraining recipe (Raffel et al. 2020, section
// 3.1.4): the sentences' tokens concatenated in order and cut into
// sequences of MaxLength (T5's packing), each sequence corrupted anew in
// every batch from the step's generator -- about NoiseDensity of its
// tokens, in spans of mean MeanSpanLength, replaced by sentinels -- and the
// model taught to write the sentinels and the spans. With Dev, the
// perplexity of one fixed corruption of the dev sentences selects the
// weights.
type SpanCorruption struct {
	Model     *t5.Model
	Tokenizer tokenizer.Tokenizer
	Source    string // where the model came from, for training.json
	// Corrupt is the noise function (t5.SpanCorruptFunc).
	Corrupt                      t5.SpanCorruptFunc
	Sentences, Dev               []string
	Sentinels                    int // sentinel tokens available
	NoiseDensity, MeanSpanLength float64
	MaxLength                    int
	DevBatch                     int
	Dropout                      float64
	// Seed draws the dev corruption.
	Seed uint64
}

// SpanHistory is training.json of span-corruption pretraining.
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

// Train packs the sentences and trains under cfg; stage names the writer
// in the artifact.
func (s *SpanCorruption) Train(ctx context.Context, cfg trainer.Config, out trainer.Output, stage string) (*Trained, error) {
	m := s.Model
	sentinels, err := t5.Sentinels(s.Tokenizer, s.Sentinels)
	if err != nil {
		return nil, fmt.Errorf("sentinels: %w", err)
	}
	text := t5.NewText(s.Tokenizer, m.Config)
	eos := m.Config.EOSTokenID
	seqs, used := text.Packed(s.Sentences, s.MaxLength)
	devSeqs, _ := text.Packed(s.Dev, s.MaxLength)
	if len(seqs) == 0 {
		return nil, fmt.Errorf("data: no sentence has any token")
	}
	tokens := 0
	for _, q := range seqs {
		tokens += len(q)
	}
	o := spancorrupt.Options{NoiseDensity: s.NoiseDensity, MeanSpanLength: s.MeanSpanLength}
	corrupt := func(ids []int, rng *rand.Rand) (t5.Example, error) {
		return t5.SpanExample(s.Corrupt, ids, o, sentinels, eos, rng)
	}
	out.Logger().Info("span corruption data", "sentences", used, "sequences", len(seqs), "tokens", tokens, "dev_sequences", len(devSeqs),
		"source", s.Source, "vocab", m.Config.VocabSize)
	rec := t5Recipe(m, s.Dropout, len(seqs), "instances", func(batch []int, rng *rand.Rand) (mat.Tensor, error) {
		part := make([]t5.Example, len(batch))
		for i, j := range batch {
			var err error
			if part[i], err = corrupt(seqs[j], rng); err != nil {
				return nil, err
			}
		}
		loss, _, err := m.Loss(part, rng)
		return loss, err
	})
	if len(devSeqs) > 0 {
		// One fixed corruption of the dev sentences, so evaluations compare.
		rng := rand.New(rand.NewPCG(s.Seed, 0xde5))
		devEx := make([]t5.Example, len(devSeqs))
		for i, ids := range devSeqs {
			if devEx[i], err = corrupt(ids, rng); err != nil {
				return nil, fmt.Errorf("dev: %w", err)
			}
		}
		rec.Eval = func(context.Context) (float64, error) {
			sc, err := m.Evaluate(devEx, s.DevBatch)
			if err != nil {
				return 0, fmt.Errorf("dev: %w", err)
			}
			return -sc.Perplexity, nil
		}
	}
	rec.Show = func(metric, best float64) string { return fmt.Sprintf("dev ppl %.2f (best %.2f)", -metric, -best) }
	res, err := trainer.Drive(ctx, rec, cfg, out)
	if err != nil {
		return nil, err
	}
	h := SpanHistory{Stage: stage, Source: s.Source, Sentences: used, Sequences: len(seqs), Tokens: tokens, Steps: res.Steps,
		LastLoss: res.LastLoss, BestStep: res.BestStep, Evaluation: res.History, Stopped: res.Stopped}
	if !math.IsNaN(res.BestMetric) {
		v := -res.BestMetric
		h.DevPPL = &v
	}
	return &Trained{Result: res, History: h}, nil
}
