// Package text holds the sentence-level text processing that PaSeR's data
// preparation needs: a word tokenizer that keeps byte offsets, the
// duplicate-and-mask operation (paper section 3.1.2) and the masked-pair
// row type. Phrase extraction lives in the sub-packages rake (RAKE key
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
package text

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
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

// Token is a word or a punctuation mark of a sentence.
type Token struct {
	Text       string
	Start, End int  // byte offsets into the sentence: Text == s[Start:End]
	Word       bool // false for punctuation and symbols
}

// Tokenize splits s into words and punctuation marks. A word is a run of
// letters and digits, joined across an apostrophe followed by a letter
// ("don't", "Atlanta's"), a hyphen between letters or digits
// ("term-end"), and "." or "," between digits ("3.5", "1,000"), so that
// contractions stay whole (SMART's stoplist lists them whole). Every other
// non-space rune is a token of its own.
func Tokenize(s string) []Token {
	var toks []Token
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		if !isAlnum(r) {
			toks = append(toks, Token{Text: s[i : i+n], Start: i, End: i + n})
			i += n
			continue
		}
		start := i
		prevDigit := unicode.IsDigit(r)
		i += n
		for i < len(s) {
			r, n = utf8.DecodeRuneInString(s[i:])
			if isAlnum(r) {
				prevDigit = unicode.IsDigit(r)
				i += n
				continue
			}
			next, m := utf8.DecodeRuneInString(s[i+n:])
			joined := false
			switch {
			case (r == '\'' || r == '’') && m > 0 && unicode.IsLetter(next):
				joined = true
			case r == '-' && m > 0 && isAlnum(next):
				joined = true
			case (r == '.' || r == ',') && prevDigit && m > 0 && unicode.IsDigit(next):
				joined = true
			}
			if !joined {
				break
			}
			i += n
		}
		toks = append(toks, Token{Text: s[start:i], Start: start, End: i, Word: true})
	}
	return toks
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Span is a phrase of a sentence as a half-open range of token indexes.
type Span struct{ From, To int }

// Len is the number of tokens in the span.
func (p Span) Len() int { return p.To - p.From }

// Mask builds the masked pair for s from its tokens and the selected
// phrases, in target order. Each element of phrases lists every occurrence
// of one phrase (the first one gives the target's surface form); all
// occurrences are masked. Overlapping spans are an error: the caller's
// phrase extractor must produce disjoint phrases.
func Mask(s string, toks []Token, phrases [][]Span) (MaskedPair, error) {
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
