// Package clm is causal language modelling: next-token training of a GPT-2
// (repro/internal/model/gpt2) on texts, as a recipe for the shared trainer
// (repro/internal/trainer): the texts cut into windows (packed, as
// transformers' run_clm.py, or each framed on its own), the mean token
// cross-entropy as the loss, and the dev texts' perplexity to select the
// weights. train.causal_lm decodes its parameters and calls Training.Train.
package clm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/model/gpt2"
	"repro/internal/model/lm"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/trainer"
)

// Training is the recipe: Model trained on Texts, Dev's perplexity
// selecting the weights (none: the last are kept).
type Training struct {
	Model     *gpt2.Model
	Tokenizer *tokenizer.BPE
	// Texts and Dev are the training and held-out texts. Training
	// windows are MaxLength tokens; Pack concatenates the texts
	// (<|endoftext|> between them) before cutting, else each text is
	// framed on its own. Dev texts are always framed one by one, as
	// evaluate.perplexity frames them.
	Texts, Dev []string
	MaxLength  int
	Pack       bool
	DevBatch   int // sequences per batch when scoring Dev
	// Dropout is the residual, embedding and attention dropout while
	// training; the saved config keeps the model's own.
	Dropout float64
	// Source says where the model came from (init, hf_checkpoint,
	// from_scratch), for training.json.
	Source string
}

// History is training.json in a trained language-model artifact: how the
// weights were chosen. It holds no timings, so identical runs write
// identical bytes.
type History struct {
	Stage      string     `json:"stage"`
	Source     string     `json:"source"` // init | hf_checkpoint | from_scratch
	Texts      int        `json:"texts"`
	Sequences  int        `json:"sequences"`
	Tokens     int        `json:"tokens"` // training tokens predicted per epoch
	Steps      int        `json:"steps"`
	LastLoss   float64    `json:"last_loss"`
	BestStep   int        `json:"best_step"` // -1: no evaluation, last weights kept
	DevPPL     *float64   `json:"best_dev_perplexity,omitempty"`
	Evaluation []PPLPoint `json:"evaluation,omitempty"`
	Stopped    bool       `json:"early_stopped,omitempty"`
}

// PPLPoint is one dev evaluation.
type PPLPoint struct {
	Step       int     `json:"step"`
	Perplexity float64 `json:"perplexity"`
}

// Trained is a finished run.
type Trained struct {
	Result  *trainer.Result
	History History
}

// Data is the framed training and dev sequences and the tokens the
// training sequences predict per epoch.
type Data struct {
	Seqs, Dev [][]int
	Tokens    int
}

// Frame cuts the texts into the recipe's sequences.
func (t *Training) Frame() (Data, error) {
	if c := t.Model.Config; t.MaxLength > c.NPositions {
		return Data{}, fmt.Errorf("max_length: %d exceeds the model's context window of %d", t.MaxLength, c.NPositions)
	}
	seqs, tokens := t.frame(t.Texts, t.Pack)
	dev, _ := t.frame(t.Dev, false)
	return Data{Seqs: seqs, Dev: dev, Tokens: tokens}, nil
}

func (t *Training) frame(ts []string, pack bool) ([][]int, int) {
	eos := t.Model.Config.EOSTokenID
	ids := make([][]int, len(ts))
	for i, s := range ts {
		ids[i] = t.Tokenizer.IDs(s)
	}
	var seqs [][]int
	if pack {
		seqs = lm.Pack(ids, eos, t.MaxLength)
	} else {
		for _, x := range ids {
			seqs = append(seqs, lm.Frame(x, eos, t.MaxLength)...)
		}
	}
	n := 0
	for _, s := range seqs {
		n += len(s) - 1
	}
	return seqs, n
}

// Recipe is the trainer's view of the recipe over d.
func (t *Training) Recipe(d Data) trainer.Recipe {
	m := t.Model
	eos := m.Config.EOSTokenID
	rec := trainer.Recipe{Params: trainer.FromNamed(m.NamedParams()), N: len(d.Seqs), Unit: "sequences",
		Step: func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
			in := make([][]int, len(batch))
			for i, j := range batch {
				in[i] = d.Seqs[j]
			}
			b, err := transformer.NewBatch(in, eos)
			if err != nil {
				return nil, err
			}
			return m.Loss(b, rng)
		},
		Show: func(metric, best float64) string { return fmt.Sprintf("dev ppl %.2f (best %.2f)", -metric, -best) },
		Train: func() func() {
			c := &m.Config
			saved := *c
			c.ResidPdrop, c.EmbdPdrop, c.AttnPdrop = float32(t.Dropout), float32(t.Dropout), float32(t.Dropout)
			return func() { c.ResidPdrop, c.EmbdPdrop, c.AttnPdrop = saved.ResidPdrop, saved.EmbdPdrop, saved.AttnPdrop }
		}}
	if len(d.Dev) > 0 {
		rec.Eval = func(ctx context.Context) (float64, error) {
			r, err := lm.Evaluate(ctx, m, d.Dev, t.DevBatch)
			if err != nil {
				return 0, fmt.Errorf("dev: %w", err)
			}
			return -r.Perplexity, nil // the trainer keeps the highest
		}
	}
	return rec
}

// Train frames the texts and trains under cfg; stage names the history's
// writer.
func (t *Training) Train(ctx context.Context, cfg trainer.Config, out trainer.Output, stage string) (*Trained, error) {
	d, err := t.Frame()
	if err != nil {
		return nil, err
	}
	c := t.Model.Config
	out.Logger().Info("causal LM data", "texts", len(t.Texts), "sequences", len(d.Seqs), "tokens", d.Tokens, "dev_sequences", len(d.Dev),
		"source", t.Source, "vocab", t.Tokenizer.Size(), "layers", c.NLayer, "width", c.NEmbd)
	res, err := trainer.Drive(ctx, t.Recipe(d), cfg, out)
	if err != nil {
		return nil, err
	}
	h := History{Stage: stage, Source: t.Source, Texts: len(t.Texts), Sequences: len(d.Seqs), Tokens: d.Tokens,
		Steps: res.Steps, LastLoss: res.LastLoss, BestStep: res.BestStep, Stopped: res.Stopped}
	for _, e := range res.History {
		h.Evaluation = append(h.Evaluation, PPLPoint{Step: e.Step, Perplexity: -e.Metric})
	}
	if !math.IsNaN(res.BestMetric) {
		v := -res.BestMetric
		h.DevPPL = &v
	}
	return &Trained{Result: res, History: h}, nil
}

// Save writes the model (a Hugging Face GPT-2 directory whose examples
// began with <|endoftext|>) and training.json into dir.
func (r *Trained) Save(dir string, m *gpt2.Model, tok *tokenizer.BPE) error {
	if err := gpt2.Save(dir, m, tok, map[string]any{"trained_by": r.History.Stage, "bos": true, "steps": r.Result.Steps, "best_step": r.Result.BestStep}); err != nil {
		return err
	}
	return trainer.WriteJSON(filepath.Join(dir, "training.json"), r.History)
}
