package mlm

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/tensor/loss"
)

// Masking is BERT's corruption recipe (Devlin et al. 2019, section 3.1 and
// appendix A.1).
type Masking struct {
	// Prob is the chance that a token (or, with WholeWord, a word) is
	// chosen for prediction: 0.15.
	Prob float64
	// MaskFrac of the chosen tokens become the mask token (0.8), RandomFrac
	// a token drawn uniformly from the vocabulary (0.1); the rest stay.
	MaskFrac, RandomFrac float64
	// WholeWord chooses words instead of tokens: every piece of a chosen
	// word is predicted (BERT's whole-word-masking release); the 80/10/10
	// split is still drawn per token, as there.
	WholeWord bool
}

// BERT is the recipe of the paper: 15%, 80/10/10, token level.
func BERT() Masking { return Masking{Prob: 0.15, MaskFrac: 0.8, RandomFrac: 0.1} }

// Check reports a recipe whose fractions are not probabilities.
func (m Masking) Check() error {
	switch {
	case !(m.Prob > 0 && m.Prob < 1):
		return fmt.Errorf("mask probability %v must lie in (0, 1)", m.Prob)
	case !(m.MaskFrac >= 0 && m.RandomFrac >= 0 && m.MaskFrac+m.RandomFrac <= 1):
		return fmt.Errorf("mask fraction %v and random fraction %v must be non-negative and sum to at most 1", m.MaskFrac, m.RandomFrac)
	}
	return nil
}

// Vocab is what masking needs to know about a tokenizer.
type Vocab struct {
	Size int
	// Mask is the mask token's id, Pad the padding's.
	Mask, Pad int
	// Special ids are never chosen ([CLS], [SEP], padding; <s>, </s>,
	// <pad>).
	Special map[int]bool
	// Continues[id] says that the token continues the word of the token
	// before it (WordPiece "##" pieces; byte-level BPE pieces without the
	// leading-space mark). Only WholeWord reads it.
	Continues []bool
}

// VocabOf derives masking's view of a WordPiece or byte-level BPE
// tokenizer.
func VocabOf(tok tokenizer.Tokenizer) (Vocab, error) {
	sp := tok.Special()
	if sp.MASK < 0 {
		return Vocab{}, fmt.Errorf("mlm: the vocabulary has no mask token")
	}
	if sp.PAD < 0 {
		return Vocab{}, fmt.Errorf("mlm: the vocabulary has no padding token")
	}
	v := Vocab{Size: tok.Size(), Mask: sp.MASK, Pad: sp.PAD, Special: map[int]bool{}, Continues: make([]bool, tok.Size())}
	for _, id := range []int{sp.CLS, sp.SEP, sp.PAD} {
		if id >= 0 {
			v.Special[id] = true
		}
	}
	type tokenOf interface{ Token(int) string }
	t, ok := tok.(tokenOf)
	if !ok {
		return Vocab{}, fmt.Errorf("mlm: tokenizer %T does not expose its tokens", tok)
	}
	_, bpe := tok.(*tokenizer.BPE)
	for id := range v.Continues {
		s := t.Token(id)
		switch {
		case v.Special[id] || id == sp.MASK || id == sp.UNK:
		case bpe:
			// "Ġ" is the byte-level form of a space: a piece starting a
			// word after a space; anything else continues the piece before
			// (the first word of a sentence follows <s>, which Mask treats
			// as a boundary).
			v.Continues[id] = !strings.HasPrefix(s, "\u0120")
		default:
			v.Continues[id] = strings.HasPrefix(s, "##")
		}
	}
	return v, nil
}

// Mask corrupts a copy of seqs for masked-language modelling and returns
// the padded batch and the labels: the original id at every chosen
// position, loss.IgnoreIndex elsewhere (flattened B*T, HF's convention).
// Draws come from rng in position order, so the same generator state gives
// the same masks: a new state every step is RoBERTa's dynamic masking.
// When nothing is chosen, one random candidate (token or word) is, so that
// every batch has a loss. Only padding, special tokens and nothing else
// are never chosen; a batch of nothing but those is an error.
func Mask(seqs [][]int, v Vocab, m Masking, rng *rand.Rand) (transformer.Batch, []int, error) {
	b, err := transformer.NewBatch(seqs, v.Pad)
	if err != nil {
		return b, nil, err
	}
	labels := make([]int, len(b.IDs))
	for i := range labels {
		labels[i] = loss.IgnoreIndex
	}
	corrupt := func(p int) {
		labels[p] = b.IDs[p]
		switch r := rng.Float64(); {
		case r < m.MaskFrac:
			b.IDs[p] = v.Mask
		case r < m.MaskFrac+m.RandomFrac:
			b.IDs[p] = rng.IntN(v.Size)
		}
	}
	// Units are what is chosen: single candidate positions, or words (a
	// candidate that does not continue the one before, with the candidates
	// that continue it).
	var units [][]int
	drawn := 0
	for p := range b.IDs {
		if p%b.T >= b.Lens[p/b.T] || v.Special[b.IDs[p]] {
			continue
		}
		if m.WholeWord {
			// A piece joins the last word when it continues it and the
			// position before it is that word's last piece.
			if n := len(units); n > 0 && p%b.T > 0 && v.Continues[b.IDs[p]] && units[n-1][len(units[n-1])-1] == p-1 {
				units[len(units)-1] = append(units[len(units)-1], p)
			} else {
				units = append(units, []int{p})
			}
			continue
		}
		units = append(units, []int{p})
		// Token level: choose as we go (the draw order PaSeR's MLM has
		// always had, so its results do not change).
		if rng.Float64() < m.Prob {
			corrupt(p)
			drawn++
		}
	}
	if m.WholeWord {
		for _, u := range units {
			if rng.Float64() < m.Prob {
				for _, p := range u {
					corrupt(p)
				}
				drawn++
			}
		}
	}
	if drawn == 0 {
		if len(units) == 0 {
			return b, nil, fmt.Errorf("mlm: the batch has no token to mask (only special tokens)")
		}
		for _, p := range units[rng.IntN(len(units))] {
			corrupt(p)
		}
	}
	return b, labels, nil
}
