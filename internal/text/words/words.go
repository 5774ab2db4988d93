// Package words splits a sentence into words and punctuation marks that keep
// their byte offsets (Tokenize), and names phrases as token ranges (Span):
// the shared ground of PaSeR's phrase extraction (rake, chunk), augmentation
// (eda) and masking (mask).
package words

import (
	"unicode"
	"unicode/utf8"
)

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
