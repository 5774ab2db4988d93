package t5

import (
	"fmt"
	"math/rand/v2"

	"repro/internal/text/spancorrupt"
)

// Packed returns texts as T5 feeds them to span corruption: each text's
// pieces (no EOS), concatenated in order and cut into sequences of n ids,
// the last possibly shorter (spancorrupt.Pack; T5's reduce_concat_tokens
// and split_tokens). Corrupting short sentences one by one would give
// each a single noise span at its end (see internal/text/spancorrupt);
// packed sequences get noise_density*n noise tokens in several spans
// spread over the sequence. It also returns how many texts had pieces.
func (t *Text) Packed(texts []string, n int) (seqs [][]int, used int) {
	pieces := make([][]int, 0, len(texts))
	for _, s := range texts {
		if ids := t.Pieces(s); len(ids) > 0 {
			pieces = append(pieces, ids)
		}
	}
	return spancorrupt.Pack(pieces, n), len(pieces)
}

// SpanCorruptFunc is a span-corruption noise function over token ids
// (spancorrupt.IDs is T5's).
type SpanCorruptFunc func(ids []int, noiseDensity, meanSpanLength float64, sentinels []int, rng *rand.Rand) (source, target []int, err error)

// SpanExample corrupts ids with corrupt and frames the result as a
// training example: source and target each followed by eos.
func SpanExample(corrupt SpanCorruptFunc, ids []int, o spancorrupt.Options, sentinels []int, eos int, rng *rand.Rand) (Example, error) {
	src, tgt, err := corrupt(ids, o.NoiseDensity, o.MeanSpanLength, sentinels, rng)
	if err != nil {
		return Example{}, fmt.Errorf("span corruption: %w", err)
	}
	return Example{Source: append(src, eos), Target: append(tgt, eos)}, nil
}
