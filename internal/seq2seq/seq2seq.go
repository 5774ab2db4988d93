// Package seq2seq is text-to-text training of a T5 (repro/internal/model/t5)
// as recipes for the shared trainer (repro/internal/trainer): teacher-forced
// training on {source, target} instances with a choice of model selection
// (Training, train.seq2seq's), and T5's span-corruption pretraining on a
// sentence corpus (SpanCorruption, train.span_corruption's). The stage
// types decode their parameters, build the model and call one of them.
package seq2seq

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/model/t5"
	"repro/internal/model/tokenizer"
	"repro/internal/rows"
	"repro/internal/trainer"
)

// Overflow policies for inputs longer than the length limits.
const (
	OverflowTruncate = "truncate" // cut (keeping EOS) and count in training.json
	OverflowFail     = "fail"     // stop naming the first such row
)

// Model-selection metrics of Training.
const (
	SelectPerplexity    = "perplexity"     // lowest dev target perplexity
	SelectTokenAccuracy = "token_accuracy" // highest dev teacher-forced token accuracy
	// SelectAccMinusPPL is GenSE's model selection (Chen et al. 2022,
	// section 3.1: "accuracy - 10 x ppl"): exact-match accuracy (%) on the
	// dev discrimination instances minus PPLWeight times the perplexity
	// of the dev generation instances; highest wins.
	SelectAccMinusPPL = "acc_minus_ppl"
)

// Training is the teacher-forced recipe: the decoder reads the pad token
// then the target shifted right, the loss is the mean token cross-entropy
// over the target tokens; with Dev, Select chooses the weights.
type Training struct {
	Model     *t5.Model
	Tokenizer tokenizer.Tokenizer
	Source    string // where the model came from, for training.json
	Data, Dev []rows.Seq2Seq
	// Sources and targets end with EOS; longer ones are cut or refused
	// (Overflow).
	MaxSourceLength, MaxTargetLength int
	Overflow                         string
	Select                           string
	PPLWeight                        float64  // acc_minus_ppl's weight of the perplexity
	DiscTargets                      []string // acc_minus_ppl: targets of the discrimination instances
	DevBatch                         int
	// Dropout is the dropout rate while training; the saved config keeps
	// the model's own.
	Dropout float64
}

// Overflowed counts the sources and targets cut to the length limits.
type Overflowed struct {
	Sources int `json:"sources"`
	Targets int `json:"targets"`
}

// History is training.json in a trained text-to-text artifact. It holds
// no timings, so identical runs write identical bytes.
type History struct {
	Stage      string         `json:"stage"`
	Source     string         `json:"source"` // init | hf_checkpoint | from_scratch
	Instances  int            `json:"instances"`
	Overflowed Overflowed     `json:"overflowed"`
	Steps      int            `json:"steps"`
	LastLoss   float64        `json:"last_loss"`
	Select     string         `json:"select,omitempty"`
	BestStep   int            `json:"best_step"` // -1: no evaluation, last weights kept
	Best       *float64       `json:"best_dev,omitempty"`
	Evaluation []trainer.Eval `json:"evaluation,omitempty"`
	// Parts are acc_minus_ppl's two measures at each evaluation (kept in
	// the run's journal, so a resumed run lists them all).
	Parts   []DevParts `json:"evaluation_parts,omitempty"`
	Stopped bool       `json:"early_stopped,omitempty"`
}

// DevParts is one acc_minus_ppl evaluation.
type DevParts struct {
	Step int `json:"step"`
	// GenerationPerplexity is the target perplexity of the generation
	// instances, DiscriminationAccuracy the exact-match accuracy (%) of
	// the discrimination instances, Score the selection metric.
	GenerationPerplexity   float64 `json:"generation_perplexity"`
	DiscriminationAccuracy float64 `json:"discrimination_accuracy"`
	Score                  float64 `json:"score"`
}

// AccMinusPPL is GenSE's selection score: accuracy (%) minus weight x
// perplexity.
func AccMinusPPL(accuracy, perplexity, weight float64) float64 { return accuracy - weight*perplexity }

// Trained is a finished run: the model's history and metrics.json's
// values.
type Trained struct {
	Result  *trainer.Result
	History any
	Metrics map[string]any
}

// encoded is the training data as token ids.
type encoded struct {
	ex, dev   []t5.Example
	gen, disc []t5.Example // dev split by target (acc_minus_ppl)
	over      Overflowed
}

// Train encodes the instances and trains under cfg; stage names the
// writer in the artifact.
func (t *Training) Train(ctx context.Context, cfg trainer.Config, out trainer.Output, stage string) (*Trained, error) {
	e, err := t.encode()
	if err != nil {
		return nil, err
	}
	log := out.Logger()
	log.Info("seq2seq data", "instances", len(e.ex), "dev", len(e.dev), "source", t.Source, "vocab", t.Model.Config.VocabSize,
		"truncated_sources", e.over.Sources, "truncated_targets", e.over.Targets)
	rec, err := t.recipe(e, out)
	if err != nil {
		return nil, err
	}
	res, err := trainer.Drive(ctx, rec, cfg, out)
	if err != nil {
		return nil, err
	}
	parts, err := trainer.Records[DevParts](res)
	if err != nil {
		return nil, err
	}
	return t.outcome(stage, e, res, rec.Eval != nil, parts), nil
}

func (t *Training) encode() (encoded, error) {
	var e encoded
	text := t5.NewText(t.Tokenizer, t.Model.Config)
	var err error
	if e.ex, e.over, err = encodeInstances(text, t.Data, t.MaxSourceLength, t.MaxTargetLength, t.Overflow, "data"); err != nil {
		return e, err
	}
	if e.dev, _, err = encodeInstances(text, t.Dev, t.MaxSourceLength, t.MaxTargetLength, t.Overflow, "dev"); err != nil {
		return e, err
	}
	e.gen, e.disc = splitDev(t.Dev, e.dev, t.DiscTargets)
	return e, nil
}

// recipe is the trainer's view of the training over e.
func (t *Training) recipe(e encoded, out trainer.Output) (trainer.Recipe, error) {
	m, log := t.Model, out.Logger()
	rec := t5Recipe(m, t.Dropout, len(e.ex), "instances", func(batch []int, rng *rand.Rand) (mat.Tensor, error) {
		part := make([]t5.Example, len(batch))
		for i, j := range batch {
			part[i] = e.ex[j]
		}
		loss, _, err := m.Loss(part, rng)
		return loss, err
	})
	switch {
	case len(e.dev) > 0 && t.Select == SelectAccMinusPPL:
		if len(e.gen) == 0 || len(e.disc) == 0 {
			return rec, fmt.Errorf("dev: select = %q needs both kinds of instance, but %d of the %d have a target in discrimination_targets %q",
				t.Select, len(e.disc), len(e.dev), t.DiscTargets)
		}
		log.Info("dev split", "generation", len(e.gen), "discrimination", len(e.disc))
		var last *DevParts // the evaluation of this update, for the journal
		rec.Eval = func(context.Context) (float64, error) {
			g, err := m.Evaluate(e.gen, t.DevBatch)
			if err != nil {
				return 0, fmt.Errorf("dev generation instances: %w", err)
			}
			d, err := m.Evaluate(e.disc, t.DevBatch)
			if err != nil {
				return 0, fmt.Errorf("dev discrimination instances: %w", err)
			}
			acc := 100 * d.ExactMatch
			score := AccMinusPPL(acc, g.Perplexity, t.PPLWeight)
			last = &DevParts{GenerationPerplexity: g.Perplexity, DiscriminationAccuracy: acc, Score: score}
			log.Info("dev", "generation_perplexity", g.Perplexity, "discrimination_accuracy", acc, "score", score)
			return score, nil
		}
		rec.Record = func(p trainer.Progress) any {
			if !p.Evaluated || last == nil {
				return nil
			}
			pt := *last
			pt.Step, last = p.Step, nil
			return pt
		}
	case len(e.dev) > 0:
		rec.Eval = func(context.Context) (float64, error) {
			s, err := m.Evaluate(e.dev, t.DevBatch)
			if err != nil {
				return 0, fmt.Errorf("dev: %w", err)
			}
			if t.Select == SelectTokenAccuracy {
				return 100 * s.TokenAccuracy, nil
			}
			return -s.Perplexity, nil // the trainer keeps the highest
		}
	}
	rec.Show = func(metric, best float64) string {
		switch t.Select {
		case SelectTokenAccuracy:
			return fmt.Sprintf("dev token accuracy %.2f (best %.2f)", metric, best)
		case SelectAccMinusPPL:
			return fmt.Sprintf("dev acc - %g ppl %.2f (best %.2f)", t.PPLWeight, metric, best)
		}
		return fmt.Sprintf("dev ppl %.2f (best %.2f)", -metric, -best)
	}
	return rec, nil
}

// outcome is training.json and metrics.json of a finished run.
func (t *Training) outcome(stage string, e encoded, res *trainer.Result, evaluated bool, parts []DevParts) *Trained {
	h := History{Stage: stage, Source: t.Source, Instances: len(e.ex), Overflowed: e.over, Steps: res.Steps,
		LastLoss: res.LastLoss, BestStep: res.BestStep, Evaluation: res.History, Parts: parts, Stopped: res.Stopped}
	metrics := map[string]any{"steps": res.Steps, "last_loss": res.LastLoss, "best_step": res.BestStep, "instances": len(e.ex)}
	if evaluated {
		h.Select = t.Select
		metrics["select"] = t.Select
	}
	if !math.IsNaN(res.BestMetric) {
		v := res.BestMetric
		if t.Select == SelectPerplexity {
			v = -v
		}
		h.Best = &v
		metrics["best_dev"] = v
	}
	for _, pt := range parts {
		if pt.Step == res.BestStep {
			metrics["dev_generation_perplexity"] = pt.GenerationPerplexity
			metrics["dev_discrimination_accuracy"] = pt.DiscriminationAccuracy
			metrics["dev_score"] = pt.Score
			metrics["dev_generation_instances"] = len(e.gen)
			metrics["dev_discrimination_instances"] = len(e.disc)
		}
	}
	return &Trained{Result: res, History: h, Metrics: metrics}
}

// encodeInstances turns instances into token ids under the length limits
// and the overflow policy; what names the input in errors.
func encodeInstances(text *t5.Text, xs []rows.Seq2Seq, maxSrc, maxTgt int, overflow, what string) ([]t5.Example, Overflowed, error) {
	var o Overflowed
	ex := make([]t5.Example, len(xs))
	for i, x := range xs {
		src, cutS := text.Encode(x.Source, maxSrc)
		tgt, cutT := text.Encode(x.Target, maxTgt)
		if overflow == OverflowFail && (cutS || cutT) {
			side, n, limit := "source", len(text.Pieces(x.Source))+1, maxSrc
			if !cutS {
				side, n, limit = "target", len(text.Pieces(x.Target))+1, maxTgt
			}
			return nil, o, fmt.Errorf("%s: row %d: the %s has %d tokens, more than max_%s_length %d (overflow = \"fail\"; set overflow = \"truncate\" to cut it)",
				what, i+1, side, n, side, limit)
		}
		if cutS {
			o.Sources++
		}
		if cutT {
			o.Targets++
		}
		ex[i] = t5.Example{Source: src, Target: tgt}
	}
	return ex, o, nil
}

// splitDev separates the dev examples into generation and discrimination
// instances by their targets.
func splitDev(xs []rows.Seq2Seq, ex []t5.Example, discTargets []string) (gen, disc []t5.Example) {
	isDisc := map[string]bool{}
	for _, t := range discTargets {
		isDisc[strings.TrimSpace(t)] = true
	}
	for i, x := range xs {
		if isDisc[strings.TrimSpace(x.Target)] {
			disc = append(disc, ex[i])
		} else {
			gen = append(gen, ex[i])
		}
	}
	return gen, disc
}

// t5Recipe is the part of a T5 recipe both objectives share: every
// parameter of m trained, with the training dropout set while training
// (it is a training setting, not part of the saved model).
func t5Recipe(m *t5.Model, dropout float64, n int, unit string, step func(batch []int, rng *rand.Rand) (mat.Tensor, error)) trainer.Recipe {
	return trainer.Recipe{Params: trainer.FromNamed(m.NamedParams()), N: n, Unit: unit,
		Step: func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) { return step(batch, rng) },
		Train: func() func() {
			saved := m.Config.DropoutRate
			m.Config.DropoutRate = float32(dropout)
			return func() { m.Config.DropoutRate = saved }
		}}
}

// Save writes the model (a Hugging Face T5 directory) and training.json
// into dir.
func (r *Trained) Save(dir string, m *t5.Model, tok tokenizer.Tokenizer, stage string) error {
	if err := t5.Save(dir, m, tok, map[string]any{"trained_by": stage, "steps": r.Result.Steps, "best_step": r.Result.BestStep}); err != nil {
		return err
	}
	return trainer.WriteJSON(filepath.Join(dir, "training.json"), r.History)
}
