package t5

import (
	"fmt"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/mat"

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
