// Package mask is PaSeR's duplicate-and-mask operation (paper section
// 3.1.2) and its masked-pair row type, over the word tokens of package
// words. Phrase extraction lives in the sibling packages rake (RAKE key
// phrases) and chunk (noun/verb phrase chunks over postag tags);
// augmentation lives in eda, with WordNet in wordnet.
//
// Design choices:
//
//   - Tokens keep their byte offsets into the original sentence, so masking
//     rewrites only the masked spans: the rest of s' is byte-identical to s
//     (spacing and punctuation included), which keeps s and s' aligned for
//     the encoder.
//   - One mask token per masked word. The paper's Table 7 shows masked
//     phrases as one placeholder per word ("There are _ _ for you" for "two
//     options"), so a k-word phrase becomes k copies of MaskToken separated
//     by spaces. MaskToken is BERT's "[MASK]", which WordPiece keeps whole.
//   - Every occurrence of a selected phrase is masked, so the masked
//     sentence does not still show the phrase the decoder must reconstruct.
//     The targets list each selected phrase once, in the order of
//     importance (RAKE score) or of position (chunks, which the paper treats
//     as equally important), in the surface form of its first occurrence.
package mask

import (
	"fmt"
	"sort"
	"strings"

	"repro/internal/text/words"
)

// MaskToken replaces each word of a masked phrase.
const MaskToken = "[MASK]"

// MaskedPair is a row of a masked-pairs artifact: the sentence s, its
// duplicate s' with the selected phrases masked, and the masked phrases
// (the decoder's targets), most important first.
type MaskedPair struct {
	Sentence string   `json:"sentence"`
	Masked   string   `json:"masked"`
	Targets  []string `json:"targets"`
}

// Mask builds the masked pair for s from its tokens and the selected
// phrases, in target order. Each element of phrases lists every occurrence
// of one phrase (the first one gives the target's surface form); all
// occurrences are masked. Overlapping spans are an error: the caller's
// phrase extractor must produce disjoint phrases.
func Mask(s string, toks []words.Token, phrases [][]words.Span) (MaskedPair, error) {
	type rng struct{ from, to int }
	var all []rng
	pair := MaskedPair{Sentence: s, Targets: make([]string, 0, len(phrases))}
	for _, occ := range phrases {
		if len(occ) == 0 {
			continue
		}
		for _, sp := range occ {
			if sp.From < 0 || sp.To > len(toks) || sp.From >= sp.To {
				return MaskedPair{}, fmt.Errorf("mask: span [%d,%d) out of range for %d tokens", sp.From, sp.To, len(toks))
			}
			all = append(all, rng{sp.From, sp.To})
		}
		first := occ[0]
		pair.Targets = append(pair.Targets, s[toks[first.From].Start:toks[first.To-1].End])
	}
	sort.Slice(all, func(i, j int) bool { return all[i].from < all[j].from })
	var b strings.Builder
	last := 0 // byte offset copied so far
	prevTo := -1
	for _, r := range all {
		if r.from < prevTo {
			return MaskedPair{}, fmt.Errorf("mask: overlapping phrases at token %d", r.from)
		}
		prevTo = r.to
		b.WriteString(s[last:toks[r.from].Start])
		for k := r.from; k < r.to; k++ {
			if k > r.from {
				b.WriteByte(' ')
			}
			b.WriteString(MaskToken)
		}
		last = toks[r.to-1].End
	}
	b.WriteString(s[last:])
	pair.Masked = b.String()
	return pair, nil
}
