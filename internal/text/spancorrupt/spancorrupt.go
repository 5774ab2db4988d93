// Package spancorrupt is T5's span-corruption objective (Raffel et al.
// 2020, section 3.1.4; t5.data.preprocessors.random_spans_noise_mask and
// noise_span_to_unique_sentinel): a fraction of a sequence's tokens, in
// spans of a mean length, is dropped from the input, each span replaced by
// a unique sentinel; the target spells the sentinels and their spans.
//
// The mask follows T5 exactly: noise tokens = round(density*n) (at least 1,
// at most n-1), spans = max(1, round(noise/mean)); the noise and the
// non-noise tokens are each cut at random into that many non-empty spans,
// and the spans interleave starting with non-noise. So a mask always ends
// with a noise span, and the target has no trailing sentinel (the T5
// paper's figure, "<X> for inviting <Y> last <Z>", ends with one only
// because its example is hand-made); the target's sentinels are those of
// the non-noise spans, exactly as T5's noise_span_to_unique_sentinel on
// the inverted mask gives them.
//
// With one span (30 tokens or fewer at T5's settings) the non-noise and
// the noise segmentations are trivial and the noise is always the last
// tokens: T5 corrupts packed 512-token sequences, where this never
// happens, and callers corrupting short texts should pack them likewise.
// An input of one token cannot be corrupted
// (T5 masks length max(n, 2) and cuts it back): its source is itself and
// its target the lone sentinel 0.
//
// The functions are generic over the token type, so the same code corrupts
// SentencePiece ids (T5's own granularity) or words (text-level instances
// that stay readable); randomness comes only from the caller's RNG.
package spancorrupt

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Options are the objective's two parameters.
type Options struct {
	// NoiseDensity is the fraction of tokens corrupted (T5: 0.15).
	NoiseDensity float64
	// MeanSpanLength is the mean length of a corrupted span (T5: 3).
	MeanSpanLength float64
}

// T5 is the setting of T5's pretraining.
var T5 = Options{NoiseDensity: 0.15, MeanSpanLength: 3}

// Validate reports bad parameters.
func (o Options) Validate() error {
	if !(o.NoiseDensity > 0 && o.NoiseDensity < 1) {
		return fmt.Errorf("noise density %v: want 0 < density < 1", o.NoiseDensity)
	}
	if !(o.MeanSpanLength >= 1) || math.IsInf(o.MeanSpanLength, 0) {
		return fmt.Errorf("mean noise span length %v: want a finite value >= 1", o.MeanSpanLength)
	}
	return nil
}

// Counts returns how many noise tokens and noise spans a sequence of n
// tokens gets (T5's arithmetic on max(n, 2) tokens; Go's math.Round
// rounds halves away from zero where Python rounds them to even, which
// only matters at exact halves and is fixed here by rounding half to even
// as T5's Python does).
func (o Options) Counts(n int) (noise, spans int) {
	length := max(n, 2)
	noise = int(math.RoundToEven(float64(length) * o.NoiseDensity))
	noise = min(max(noise, 1), length-1)
	spans = max(int(math.RoundToEven(float64(noise)/o.MeanSpanLength)), 1)
	// More spans than non-noise tokens cannot interleave; T5's settings
	// never get here (density < 0.5 keeps non-noise >= noise >= spans).
	spans = min(spans, length-noise)
	return noise, spans
}

// segment cuts items into segs non-empty segments at random and returns
// their lengths (T5's _random_segmentation: a shuffled indicator of
// which items start a new segment).
func segment(items, segs int, rng *rand.Rand) []int {
	starts := make([]bool, items-1)
	for i := 0; i < segs-1; i++ {
		starts[i] = true
	}
	rng.Shuffle(len(starts), func(i, j int) { starts[i], starts[j] = starts[j], starts[i] })
	lengths := make([]int, 0, segs)
	cur := 1
	for _, s := range starts {
		if s {
			lengths = append(lengths, cur)
			cur = 0
		}
		cur++
	}
	return append(lengths, cur)
}

// NoiseMask returns which of n tokens are noise.
func NoiseMask(n int, o Options, rng *rand.Rand) []bool {
	if n <= 0 {
		return nil
	}
	length := max(n, 2)
	noise, spans := o.Counts(n)
	noiseLens := segment(noise, spans, rng)
	plainLens := segment(length-noise, spans, rng)
	mask := make([]bool, 0, length)
	for i := 0; i < spans; i++ {
		for j := 0; j < plainLens[i]; j++ {
			mask = append(mask, false)
		}
		for j := 0; j < noiseLens[i]; j++ {
			mask = append(mask, true)
		}
	}
	return mask[:n]
}

// Apply builds the instance: source is the tokens with each noise span
// replaced by sentinel(k) for the k-th span; target is, for each non-noise
// span k, sentinel(k) followed by the noise tokens after it. Neither
// carries an end-of-sequence token (the tokenizer appends it). The mask
// must start with a non-noise token, as NoiseMask's do, so that source
// sentinel k and target sentinel k mark the same span.
func Apply[T any](tokens []T, mask []bool, sentinel func(k int) T) (source, target []T) {
	if len(mask) != len(tokens) || (len(mask) > 0 && mask[0]) {
		panic(fmt.Sprintf("spancorrupt: %d tokens, %d mask entries (first noise: %v)", len(tokens), len(mask), len(mask) > 0 && mask[0]))
	}
	src, tgt := 0, 0
	for i, tok := range tokens {
		first := i == 0 || mask[i-1] != mask[i]
		if mask[i] {
			if first {
				source = append(source, sentinel(src))
				src++
			}
			target = append(target, tok)
		} else {
			if first {
				target = append(target, sentinel(tgt))
				tgt++
			}
			source = append(source, tok)
		}
	}
	return source, target
}

// Corrupt draws a mask for tokens and applies it.
func Corrupt[T any](tokens []T, o Options, rng *rand.Rand, sentinel func(k int) T) (source, target []T) {
	return Apply(tokens, NoiseMask(len(tokens), o, rng), sentinel)
}

// Reconstruct inverts Apply: it puts the target's spans back in place of
// the source's sentinels. isSentinel returns a sentinel's number. It
// fails when the two do not belong together.
func Reconstruct[T any](source, target []T, isSentinel func(T) (int, bool)) ([]T, error) {
	// Spans of the target by the sentinel that opens them.
	spans := map[int][]T{}
	cur := -1
	for _, tok := range target {
		if k, ok := isSentinel(tok); ok {
			cur = k
			if _, dup := spans[k]; dup {
				return nil, fmt.Errorf("target repeats sentinel %d", k)
			}
			spans[k] = []T{}
			continue
		}
		if cur < 0 {
			return nil, fmt.Errorf("target does not start with a sentinel")
		}
		spans[cur] = append(spans[cur], tok)
	}
	var out []T
	for _, tok := range source {
		k, ok := isSentinel(tok)
		if !ok {
			out = append(out, tok)
			continue
		}
		span, found := spans[k]
		if !found {
			return nil, fmt.Errorf("source sentinel %d is not in the target", k)
		}
		out = append(out, span...)
	}
	// Sentinels of the target that the source lacks open empty spans only
	// (a trailing non-noise span's sentinel).
	for k, s := range spans {
		if len(s) > 0 && !containsSentinel(source, k, isSentinel) {
			return nil, fmt.Errorf("target span %d has no place in the source", k)
		}
	}
	return out, nil
}

func containsSentinel[T any](s []T, k int, isSentinel func(T) (int, bool)) bool {
	for _, tok := range s {
		if j, ok := isSentinel(tok); ok && j == k {
			return true
		}
	}
	return false
}

// IDs corrupts a sequence of token ids (no EOS) with T5's mask, sentinel
// k being sentinels[k]: the shape of the T5 trainer's span-corruption
// hook (registry/train.SpanCorruptFunc). Bad parameters, or a sequence
// needing more spans than there are sentinels, are errors.
func IDs(ids []int, noiseDensity, meanSpanLength float64, sentinels []int, rng *rand.Rand) (source, target []int, err error) {
	o := Options{NoiseDensity: noiseDensity, MeanSpanLength: meanSpanLength}
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	if len(ids) == 0 {
		return nil, nil, fmt.Errorf("span corruption of an empty sequence")
	}
	// The target of a one-token sequence is sentinel 0 alone, so one
	// sentinel is always needed.
	if _, spans := o.Counts(len(ids)); spans > len(sentinels) || len(sentinels) == 0 {
		return nil, nil, fmt.Errorf("%d tokens make %d noise spans, but there are %d sentinels", len(ids), spans, len(sentinels))
	}
	source, target = Corrupt(ids, o, rng, func(k int) int { return sentinels[k] })
	return source, target, nil
}

// Pack concatenates the sequences in order and cuts the stream into
// sequences of n tokens, the last possibly shorter (T5's
// reduce_concat_tokens and split_tokens before span corruption, which keep
// masks random: see the package doc). Empty input gives nothing.
func Pack[T any](seqs [][]T, n int) [][]T {
	if n <= 0 {
		panic(fmt.Sprintf("spancorrupt: pack into %d tokens", n))
	}
	var out [][]T
	var cur []T
	for _, s := range seqs {
		for len(s) > 0 {
			take := min(n-len(cur), len(s))
			cur = append(cur, s[:take]...)
			s = s[take:]
			if len(cur) == n {
				out = append(out, cur)
				cur = nil
			}
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
