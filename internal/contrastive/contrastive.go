// Package contrastive is contrastive sentence-embedding training as
// recipes for the shared trainer (repro/internal/trainer): supervised
// SimCSE's triplet step over any sentence embedding (TripletStep), and the
// contrastive training of a T5 sentence encoder (T5, GenSE's and
// Sentence-T5's), with STS-B dev Spearman selecting the weights. History is
// training.json of every trained sentence encoder.
package contrastive

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/encoder"
	"repro/internal/encoder/pooled"
	"repro/internal/encoder/t5enc"
	"repro/internal/rows"
	"repro/internal/tensor"
	"repro/internal/tensor/loss"
	"repro/internal/trainer"
)

// TripletStep is supervised SimCSE's training step over tokenised
// anchors, positives and negatives (nil: no hard negatives, the in-batch
// objective of anchors against positives), for any sentence embedding:
// anchors, positives and negatives go through one forward pass (SimCSE
// flattens the (batch, 3, len) input likewise).
func TripletStep(a, pos, neg [][]int, temp float32, embed func(in [][]int, rng *rand.Rand) (mat.Tensor, error)) trainer.StepFunc {
	return func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		n := len(batch)
		in := make([][]int, 0, 3*n)
		for _, i := range batch {
			in = append(in, a[i])
		}
		for _, i := range batch {
			in = append(in, pos[i])
		}
		if neg != nil {
			for _, i := range batch {
				in = append(in, neg[i])
			}
		}
		z, err := embed(in, rng)
		if err != nil {
			return nil, err
		}
		za, zp := tensor.SliceRows(z, 0, n), tensor.SliceRows(z, n, 2*n)
		if neg == nil {
			return loss.SimCSEUnsup(za, zp, temp)
		}
		return loss.SimCSESup(za, zp, tensor.SliceRows(z, 2*n, 3*n), temp)
	}
}

// DevEval is the STS-B dev Spearman of enc as a model-selection metric
// (nil without a dev set).
func DevEval(dev *pooled.DevSet, enc encoder.Encoder) trainer.EvalFunc {
	if dev == nil {
		return nil
	}
	return func(ctx context.Context) (float64, error) { return dev.Spearman(ctx, enc) }
}

// History is training.json in a trained encoder artifact: how the weights
// were chosen. It holds no timings, so identical runs write identical
// bytes.
type History struct {
	Stage      string         `json:"stage"`
	Examples   int            `json:"examples"`
	Steps      int            `json:"steps"`
	LastLoss   float64        `json:"last_loss"`
	BestStep   int            `json:"best_step"`            // -1: no evaluation, last weights kept
	BestDev    *float64       `json:"best_dev,omitempty"`   // STS-B dev Spearman x 100
	Evaluation []trainer.Eval `json:"evaluation,omitempty"` // every evaluation
	Stopped    bool           `json:"early_stopped,omitempty"`
}

// FileHistory is the name of the training history inside the artifact.
const FileHistory = "training.json"

// HistoryOf is the History of a run of stage on n examples.
func HistoryOf(stage string, n int, res *trainer.Result) History {
	h := History{Stage: stage, Examples: n, Steps: res.Steps, LastLoss: res.LastLoss, BestStep: res.BestStep,
		Evaluation: res.History, Stopped: res.Stopped}
	if !math.IsNaN(res.BestMetric) {
		v := res.BestMetric
		h.BestDev = &v
	}
	return h
}

// WriteHistory writes h as dir's training.json.
func WriteHistory(dir string, h History) error {
	return trainer.WriteJSON(filepath.Join(dir, FileHistory), h)
}

// T5 is the contrastive recipe of a T5 sentence encoder (GenSE section
// 2.2; Sentence-T5): each sentence put into the encoder's template and
// embedded, supervised SimCSE's loss over anchors, positives and, with
// HardNegatives, the negatives, at Temperature; with Dev, the best weights
// by STS-B dev Spearman are kept.
type T5 struct {
	Encoder       *t5enc.Model
	Triplets      []rows.Triplet
	HardNegatives bool
	Temperature   float64
	// Dropout is the T5's dropout rate while training (evaluation passes
	// no generator, so none applies there); the saved config keeps the
	// source's.
	Dropout float64
	Dev     *pooled.DevSet
	Source  string // where the model came from, for encoder.json
}

// T5Trained is a finished run of T5.
type T5Trained struct {
	Result *trainer.Result
	// Truncated counts the inputs cut to the encoder's length limit.
	Truncated int
	History   History
	source    string
}

// Train encodes the triplets and trains under cfg; stage names the writer
// in the artifact.
func (r *T5) Train(ctx context.Context, cfg trainer.Config, out trainer.Output, stage string) (*T5Trained, error) {
	enc, ts := r.Encoder, r.Triplets
	anchors, positives, negatives := make([]string, len(ts)), make([]string, len(ts)), make([]string, len(ts))
	for i, t := range ts {
		anchors[i], positives[i], negatives[i] = t.Anchor, t.Positive, t.Negative
	}
	a, cutA := enc.Inputs(anchors)
	pos, cutP := enc.Inputs(positives)
	var neg [][]int
	cutN := 0
	if r.HardNegatives {
		neg, cutN = enc.Inputs(negatives)
	}
	out.Logger().Info("t5 contrastive data", "triplets", len(ts), "source", r.Source, "mode", enc.Mode, "truncated", cutA+cutP+cutN)
	m := enc.T5
	rec := trainer.Recipe{Params: trainer.FromNamed(m.NamedParams()), N: len(ts),
		Step: TripletStep(a, pos, neg, float32(r.Temperature), enc.Embed), Eval: DevEval(r.Dev, enc),
		Train: func() func() {
			saved := m.Config.DropoutRate
			m.Config.DropoutRate = float32(r.Dropout)
			return func() { m.Config.DropoutRate = saved }
		}}
	res, err := trainer.Drive(ctx, rec, cfg, out)
	if err != nil {
		return nil, err
	}
	return &T5Trained{Result: res, Truncated: cutA + cutP + cutN, History: HistoryOf(stage, len(ts), res), source: r.Source}, nil
}

// Save writes the encoder (a T5 directory with encoder.json) and
// training.json into dir.
func (t *T5Trained) Save(dir string, enc *t5enc.Model) error {
	if err := enc.Save(dir, map[string]any{"trained_by": t.History.Stage, "steps": t.Result.Steps, "best_step": t.Result.BestStep,
		"source": t.source, "truncated_inputs": t.Truncated}); err != nil {
		return err
	}
	return WriteHistory(dir, t.History)
}
