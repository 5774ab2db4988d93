package t5

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/generate"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

// Example is one source/target pair of token ids; the target ends with
// the EOS token when the model should learn to stop.
type Example struct {
	Source, Target []int
}

// TeacherForcing builds the batches of one training step: the sources
// padded with pad, the decoder inputs (the start token, then each target
// shifted right by one, as transformers' _shift_right) and the labels (the
// targets, tensor.IgnoreIndex on padding).
func (c Config) TeacherForcing(ex []Example) (src, dec transformer.Batch, labels []int, err error) {
	srcs, decs := make([][]int, len(ex)), make([][]int, len(ex))
	for i, e := range ex {
		if len(e.Source) == 0 || len(e.Target) == 0 {
			return src, dec, nil, fmt.Errorf("t5: example %d has an empty source or target", i)
		}
		srcs[i] = e.Source
		decs[i] = append([]int{c.DecoderStartTokenID}, e.Target[:len(e.Target)-1]...)
	}
	if src, err = transformer.NewBatch(srcs, c.PadTokenID); err != nil {
		return src, dec, nil, err
	}
	if dec, err = transformer.NewBatch(decs, c.PadTokenID); err != nil {
		return src, dec, nil, err
	}
	labels = make([]int, dec.B*dec.T)
	for i, e := range ex {
		for t := 0; t < dec.T; t++ {
			if t < len(e.Target) {
				labels[i*dec.T+t] = e.Target[t]
			} else {
				labels[i*dec.T+t] = tensor.IgnoreIndex
			}
		}
	}
	return src, dec, labels, nil
}

// Loss is the mean token cross-entropy of the targets given the sources
// under teacher forcing, padding ignored. It also returns the number of
// predicted tokens.
func (m *Model) Loss(ex []Example, rng *rand.Rand) (mat.Tensor, int, error) {
	src, dec, labels, err := m.Config.TeacherForcing(ex)
	if err != nil {
		return nil, 0, err
	}
	for i, l := range labels {
		if l != tensor.IgnoreIndex && (l < 0 || l >= m.Config.VocabSize) {
			return nil, 0, fmt.Errorf("t5: target token id %d (example %d) outside the vocabulary of %d", l, i/dec.T, m.Config.VocabSize)
		}
	}
	logits, err := m.Forward(src, dec, rng)
	if err != nil {
		return nil, 0, err
	}
	n := 0
	for _, l := range labels {
		if l != tensor.IgnoreIndex {
			n++
		}
	}
	return tensor.CrossEntropy(logits, labels), n, nil
}

// Score is how well a model predicts the targets of a set of examples
// under teacher forcing.
type Score struct {
	NLL           float64 `json:"nll"` // mean negative log-likelihood per target token (nats)
	Perplexity    float64 `json:"perplexity"`
	TokenAccuracy float64 `json:"token_accuracy"` // fraction of target tokens that are the argmax
	// ExactMatch is the fraction of examples whose every target token
	// (EOS included) is the argmax given the gold prefix: exactly the
	// examples that greedy decoding reproduces, so an exact-match
	// accuracy without decoding.
	ExactMatch float64 `json:"exact_match"`
	Tokens     int     `json:"tokens"`
}

// Evaluate scores ex in batches of batch examples (no dropout), summing
// in example order so the result does not depend on the batch size's
// grouping beyond float32 rounding of each forward.
func (m *Model) Evaluate(ex []Example, batch int) (Score, error) {
	if len(ex) == 0 {
		return Score{}, fmt.Errorf("t5: no examples to evaluate")
	}
	if batch < 1 {
		return Score{}, fmt.Errorf("t5: evaluation batch %d must be at least 1", batch)
	}
	V := m.Config.VocabSize
	var nll float64
	n, right, exact := 0, 0, 0
	for lo := 0; lo < len(ex); lo += batch {
		part := ex[lo:min(lo+batch, len(ex))]
		src, dec, labels, err := m.Config.TeacherForcing(part)
		if err != nil {
			return Score{}, err
		}
		logits, err := m.Forward(src, dec, nil)
		if err != nil {
			return Score{}, err
		}
		L := tensor.Data(logits)
		wrong := make([]bool, len(part))
		for r, l := range labels {
			if l == tensor.IgnoreIndex {
				continue
			}
			if l < 0 || l >= V {
				return Score{}, fmt.Errorf("t5: target token id %d outside the vocabulary of %d", l, V)
			}
			row := L[r*V : (r+1)*V]
			nll -= generate.LogProb(row, l)
			best := 0
			for j, v := range row {
				if v > row[best] {
					best = j
				}
			}
			if best == l {
				right++
			} else {
				wrong[r/dec.T] = true
			}
			n++
		}
		for _, w := range wrong {
			if !w {
				exact++
			}
		}
	}
	nll /= float64(n)
	return Score{NLL: nll, Perplexity: math.Exp(nll), TokenAccuracy: float64(right) / float64(n),
		ExactMatch: float64(exact) / float64(len(ex)), Tokens: n}, nil
}
