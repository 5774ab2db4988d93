package mlm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/model/transformer"
	"repro/internal/plot"
	"repro/internal/trainer"
)

// DevSeed fixes the dev set's masks across evaluations and runs.
const DevSeed = 1

// Pretraining is the pretraining recipe (train.mlm's): Model trained on
// Sentences, batch_size sentences of similar length per micro-batch
// (GroupByLength), a fresh mask each time a sentence is seen, BERT's
// next-sentence pairs beside it with NextSentence; with Dev, held-out
// perplexity selects the weights.
type Pretraining struct {
	Model   *Model
	Masking Masking
	// Sentences and Dev are the training and held-out sentences as token
	// ids ([CLS] ... [SEP]); no Dev, no evaluation.
	Sentences, Dev [][]int
	BatchSize      int // sentences per micro-batch
	// MaxLength bounds a next-sentence pair's ids.
	MaxLength    int
	NextSentence bool
	// Seed draws the length grouping.
	Seed uint64
}

// Pretrained is a finished pretraining run.
type Pretrained struct {
	Result *trainer.Result
	// Report is pretraining.json; Metrics metrics.json's values.
	Report  Report
	Metrics map[string]any
}

// StepRecord is one update in the run's journal.
type StepRecord struct {
	Step int     `json:"step"`
	Loss float64 `json:"loss"`
	LR   float64 `json:"lr"`
	Dev  *Eval   `json:"dev,omitempty"`
	// NSP is the share of the update's pairs whose next-sentence label
	// the classifier got right (next_sentence only).
	NSP *float64 `json:"nsp_accuracy,omitempty"`
}

// CurvePoint is one point of pretraining.json's curve.
type CurvePoint struct {
	Step      int      `json:"step"`
	TrainLoss float64  `json:"train_loss"` // mean over the updates since the previous point
	LR        float64  `json:"lr"`
	Dev       *Eval    `json:"dev,omitempty"`
	NSP       *float64 `json:"nsp_accuracy,omitempty"` // training pairs right, mean over the window
}

// Report is pretraining.json: the run's recipe outcome and curves. No
// timings, so identical runs write identical bytes.
type Report struct {
	Sentences int          `json:"sentences"`
	Tokens    int          `json:"tokens"` // after truncation, special tokens included
	Batches   int          `json:"batches_per_epoch"`
	Steps     int          `json:"steps"`
	BestStep  int          `json:"best_step"` // -1: no dev set, last weights kept
	Dev       *Eval        `json:"dev,omitempty"`
	Curve     []CurvePoint `json:"curve"`
}

// Train runs the recipe under cfg (its BatchSize is replaced: a
// micro-batch is one group of BatchSize sentences).
func (p *Pretraining) Train(ctx context.Context, cfg trainer.Config, out trainer.Output) (*Pretrained, error) {
	groups, tokens, err := p.groups()
	if err != nil {
		return nil, err
	}
	rec := p.recipe(groups)
	cfg.BatchSize = 1
	res, err := trainer.Drive(ctx, rec, cfg, out)
	if err != nil {
		return nil, err
	}
	steps, err := trainer.Records[StepRecord](res)
	if err != nil {
		return nil, err
	}
	curve := Curve(steps, max(1, min(cfg.EvalEvery, 50)))
	r := &Pretrained{Result: res,
		Report:  Report{Sentences: len(p.Sentences), Tokens: tokens, Batches: len(groups), Steps: res.Steps, BestStep: res.BestStep, Curve: curve},
		Metrics: map[string]any{"train_loss": res.LastLoss, "steps": res.Steps, "sentences": len(p.Sentences), "tokens": tokens}}
	if acc, ok := lastNSP(steps, 200); ok {
		r.Metrics["nsp_accuracy"] = 100 * acc
	}
	if len(p.Dev) > 0 {
		// The kept weights' dev numbers, measured again (the same masks).
		ev, err := p.Model.Evaluate(ctx, p.Dev, p.Masking, DevSeed, 128)
		if err != nil {
			return nil, err
		}
		r.Report.Dev = &ev
		r.Metrics["dev_loss"], r.Metrics["dev_perplexity"], r.Metrics["dev_accuracy"] = ev.Loss, ev.Perplexity, 100*ev.Accuracy
		r.Metrics["dev_tokens"] = ev.Tokens
	}
	return r, nil
}

// groups batches the sentences (with NextSentence, by the length of the
// pair with the true successor: half the pairs are those, the other half
// vary around them); it also counts the training tokens.
func (p *Pretraining) groups() ([][]int, int, error) {
	seqs := p.Sentences
	lens := make([]int, len(seqs))
	tokens := 0
	for i, s := range seqs {
		lens[i] = len(s)
		tokens += len(s)
	}
	if p.NextSentence {
		if len(seqs) < 3 {
			return nil, 0, fmt.Errorf("data: next_sentence needs at least 3 sentences, got %d", len(seqs))
		}
		for i := range seqs {
			lens[i] = min(p.MaxLength, len(seqs[i])+len(seqs[(i+1)%len(seqs)])-1)
		}
	}
	groups, err := GroupByLength(lens, p.BatchSize, 50, p.Seed)
	return groups, tokens, err
}

// recipe is the trainer's view of p over groups: a micro-batch is a
// group's index.
func (p *Pretraining) recipe(groups [][]int) trainer.Recipe {
	m, seqs := p.Model, p.Sentences
	var nspRight, nspPairs atomic.Int64 // next-sentence pairs right / seen since the last update's record
	step := func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		var in []int
		for _, g := range batch {
			in = append(in, groups[g]...)
		}
		if !p.NextSentence {
			batchSeqs := make([][]int, len(in))
			for k, i := range in {
				batchSeqs[k] = seqs[i]
			}
			return m.Loss(batchSeqs, p.Masking, rng)
		}
		ids, types, labels, err := DrawPairs(seqs, in, p.MaxLength, rng)
		if err != nil {
			return nil, err
		}
		l, right, err := m.PairLoss(ids, types, labels, p.Masking, rng)
		if err == nil {
			nspRight.Add(int64(right))
			nspPairs.Add(int64(len(labels)))
		}
		return l, err
	}
	rec := trainer.Recipe{Params: trainer.FromNamed(m.NamedParams()), N: len(groups), Step: step,
		Show: func(metric, best float64) string {
			return fmt.Sprintf("dev ppl %.2f (best %.2f)", math.Exp(-metric), math.Exp(-best))
		}}
	var lastDev *Eval
	if len(p.Dev) > 0 {
		rec.Eval = func(ctx context.Context) (float64, error) {
			ev, err := m.Evaluate(ctx, p.Dev, p.Masking, DevSeed, 128)
			if err != nil {
				return 0, err
			}
			lastDev = &ev
			return -ev.Loss, nil
		}
	}
	rec.Record = func(pr trainer.Progress) any {
		line := StepRecord{Step: pr.Step, Loss: pr.Loss, LR: pr.LR}
		if n := nspPairs.Swap(0); n > 0 {
			acc := float64(nspRight.Swap(0)) / float64(n)
			line.NSP = &acc
		}
		if pr.Evaluated && lastDev != nil {
			d := *lastDev
			line.Dev = &d
		}
		return line
	}
	return rec
}

// Curve averages the training loss over windows of every updates (a
// point at every multiple of every, at every evaluation and at the last
// update).
func Curve(steps []StepRecord, every int) []CurvePoint {
	var out []CurvePoint
	sum, nsp, n, nn := 0.0, 0.0, 0, 0
	for i, s := range steps {
		sum += s.Loss
		n++
		if s.NSP != nil {
			nsp += *s.NSP
			nn++
		}
		if s.Dev != nil || s.Step%every == 0 || i == len(steps)-1 {
			pt := CurvePoint{Step: s.Step, TrainLoss: sum / float64(n), LR: s.LR, Dev: s.Dev}
			if nn > 0 {
				acc := nsp / float64(nn)
				pt.NSP = &acc
			}
			out = append(out, pt)
			sum, nsp, n, nn = 0, 0, 0, 0
		}
	}
	return out
}

// lastNSP is the mean next-sentence accuracy of the last n updates that
// recorded one; false when none did.
func lastNSP(steps []StepRecord, n int) (float64, bool) {
	sum, k := 0.0, 0
	for i := len(steps) - 1; i >= 0 && k < n; i-- {
		if a := steps[i].NSP; a != nil {
			sum += *a
			k++
		}
	}
	if k == 0 {
		return 0, false
	}
	return sum / float64(k), true
}

// Save writes the pretrained model (a masked-LM checkpoint that is also an
// encoder with pooling), pretraining.json and loss.png into dir.
func (r *Pretrained) Save(dir string, m *Model, pooling transformer.Pooling, stage string) error {
	if err := m.Save(dir, pooling, map[string]any{"trained_by": stage, "steps": r.Result.Steps, "best_step": r.Result.BestStep}); err != nil {
		return err
	}
	if err := trainer.WriteJSON(filepath.Join(dir, "pretraining.json"), r.Report); err != nil {
		return err
	}
	return lossFigure(filepath.Join(dir, "loss.png"), r.Report.Curve)
}

// lossFigure draws the training loss and, where measured, the dev loss
// against the update.
func lossFigure(path string, curve []CurvePoint) error {
	train := plot.Series{Name: "train (MLM cross-entropy)"}
	dev := plot.Series{Name: "dev"}
	for _, pt := range curve {
		train.X, train.Y = append(train.X, float64(pt.Step)), append(train.Y, pt.TrainLoss)
		if pt.Dev != nil {
			dev.X, dev.Y = append(dev.X, float64(pt.Step)), append(dev.Y, pt.Dev.Loss)
		}
	}
	series := []plot.Series{train}
	if len(dev.X) > 0 {
		series = append(series, dev)
	}
	if len(train.X) == 0 {
		return nil
	}
	return plot.Line(path, "masked-LM pretraining", "update", "loss (nats per predicted token)", series)
}
