package mlm

import (
	"fmt"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/loss"
)

// Next-sentence prediction (Devlin et al. 2019, section 3.1, task 2): the
// input is a pair [CLS] A [SEP] B [SEP] with segment ids 0 for A's part
// and 1 for B's; half the time B is the sentence that follows A in the
// text, otherwise a sentence drawn at random; a two-way classifier on the
// pooler's output ([CLS]'s last state through dense + tanh) says which.
// It is the only pretraining signal that reaches the [CLS] state and the
// pooler: masked-LM never scores position 0, so without it both are
// whatever the other positions' training leaves them.

// Label values, HF's BertForPreTraining convention.
const (
	IsNext     = 0 // B follows A
	NotNext    = 1 // B is a random sentence
	nspClasses = 2
)

// WithNSP gives m the next-sentence classifier (drawn from a generator
// seeded with seed) and, when the encoder has none, a fresh pooler. It is
// refused for an encoder without a second segment embedding (RoBERTa's
// shape, type_vocab_size 1: RoBERTa dropped the objective).
func (m *Model) WithNSP(seed uint64) error {
	if m.Encoder.Config.TypeVocab < 2 {
		return fmt.Errorf("mlm: next-sentence prediction needs two segment embeddings; the encoder has type_vocab_size %d (RoBERTa's shape has no next-sentence objective)", m.Encoder.Config.TypeVocab)
	}
	rng := rand.New(rand.NewPCG(seed, 0x25e7))
	d := m.Encoder.Config.Hidden
	if m.Encoder.Pooler == nil {
		m.Encoder.Pooler = &transformer.Linear{Weight: transformer.TruncNormal(rng, d, d, transformer.InitStd), Bias: nn.NewParam(tensor.Zeros(1, d))}
		m.Encoder.Config.Pooler = true
	}
	m.NSP = &transformer.Linear{Weight: transformer.TruncNormal(rng, nspClasses, d, transformer.InitStd), Bias: nn.NewParam(tensor.Zeros(1, nspClasses))}
	return nil
}

// nspNamedParams lists the classifier under HF BertForPreTraining's names.
func (m *Model) nspNamedParams() []transformer.NamedParam {
	if m.NSP == nil {
		return nil
	}
	d := m.Encoder.Config.Hidden
	return []transformer.NamedParam{
		{Name: "cls.seq_relationship.weight", Shape: []int{nspClasses, d}, Param: m.NSP.Weight},
		{Name: "cls.seq_relationship.bias", Shape: []int{nspClasses}, Param: m.NSP.Bias},
	}
}

// Pair joins two framed sentences ([CLS] a [SEP] and [CLS] b [SEP], as the
// tokenizer encodes them) into [CLS] a [SEP] b [SEP] of at most maxLen ids,
// and returns it with its segment ids. Over-long pairs lose tokens from the
// end of the longer sentence, one at a time (BERT's truncate_seq_pair).
func Pair(a, b []int, maxLen int) (ids, types []int, err error) {
	if len(a) < 2 || len(b) < 2 {
		return nil, nil, fmt.Errorf("mlm: a sentence of a pair has no [CLS]/[SEP] frame")
	}
	ca, cb := a[1:len(a)-1], b[1:len(b)-1] // the sentences' own tokens
	if maxLen < 5 {
		return nil, nil, fmt.Errorf("mlm: max_length %d leaves no room for a pair (3 special tokens and one token each)", maxLen)
	}
	for len(ca)+len(cb)+3 > maxLen {
		if len(ca) > len(cb) {
			ca = ca[:len(ca)-1]
		} else {
			cb = cb[:len(cb)-1]
		}
	}
	ids = make([]int, 0, len(ca)+len(cb)+3)
	ids = append(append(append(ids, a[0]), ca...), a[len(a)-1])
	ids = append(append(ids, cb...), b[len(b)-1])
	types = make([]int, len(ids))
	for i := len(ca) + 2; i < len(ids); i++ {
		types[i] = 1
	}
	return ids, types, nil
}

// DrawPairs makes the next-sentence pairs of one batch: for each index i
// of seqs (sentences in text order), B is seqs[i+1] with probability 1/2
// (when i has a successor), otherwise a sentence drawn uniformly from the
// others that are not its successor. Draws come from rng, so every epoch
// pairs the sentences afresh, as masks are drawn afresh.
func DrawPairs(seqs [][]int, batch []int, maxLen int, rng *rand.Rand) (ids, types [][]int, labels []int, err error) {
	if len(seqs) < 3 {
		return nil, nil, nil, fmt.Errorf("mlm: next-sentence prediction needs at least 3 sentences, got %d", len(seqs))
	}
	for _, i := range batch {
		next, label := i+1, IsNext
		if next >= len(seqs) || rng.IntN(2) == 1 {
			label = NotNext
			for next = rng.IntN(len(seqs)); next == i+1 || next == i; next = rng.IntN(len(seqs)) {
			}
		}
		p, t, err := Pair(seqs[i], seqs[next], maxLen)
		if err != nil {
			return nil, nil, nil, err
		}
		ids, types, labels = append(ids, p), append(types, t), append(labels, label)
	}
	return ids, types, labels, nil
}

// PairLoss is BERT's pretraining loss on pairs: the masked-LM loss of the
// corrupted pairs plus the next-sentence cross-entropy of the classifier
// on the pooler's output, and how many of the pairs the classifier gets
// right (for the training log).
func (m *Model) PairLoss(ids, types [][]int, labels []int, mk Masking, rng *rand.Rand) (mat.Tensor, int, error) {
	if m.NSP == nil {
		return nil, 0, fmt.Errorf("mlm: the model has no next-sentence classifier")
	}
	b, mlmLabels, err := Mask(ids, m.Vocab, mk, rng)
	if err != nil {
		return nil, 0, err
	}
	b.TypeIDs = make([]int, len(b.IDs))
	for s, t := range types {
		copy(b.TypeIDs[s*b.T:], t)
	}
	o, err := m.Encoder.Forward(b, rng)
	if err != nil {
		return nil, 0, fmt.Errorf("mlm: %w", err)
	}
	rows, targets := chosen(mlmLabels)
	lm, err := loss.MLM(m.Head.Forward(tensor.Gather(o.Last(), rows)), targets)
	if err != nil {
		return nil, 0, err
	}
	pooled, err := m.Encoder.Pool(o, transformer.PoolCLS)
	if err != nil {
		return nil, 0, err
	}
	logits := tensor.Linear(pooled, m.NSP.Weight, m.NSP.Bias)
	right := 0
	d := tensor.Data(logits)
	for s, l := range labels {
		guess := IsNext
		if d[s*nspClasses+NotNext] > d[s*nspClasses+IsNext] {
			guess = NotNext
		}
		if guess == l {
			right++
		}
	}
	return tensor.Add(lm, tensor.CrossEntropy(logits, labels)), right, nil
}
