package tokenizer

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// BasicOptions configures the BERT pre-tokenizer.
type BasicOptions struct {
	// Lowercase lowercases every word (bert-base-uncased: true).
	Lowercase bool
	// KeepAccents disables accent stripping. transformers strips accents
	// whenever it lowercases unless strip_accents=False, so the zero value
	// matches the uncased models.
	KeepAccents bool
	// StripAccents strips accents without lowercasing (HF
	// strip_accents=True on a cased model).
	StripAccents bool
	// NoCJKSplit disables putting spaces around CJK ideographs.
	NoCJKSplit bool
}

// Basic splits text into words the way transformers' BasicTokenizer does:
// clean (drop NUL, U+FFFD and control characters, map whitespace to ' '),
// space out CJK ideographs, NFC-normalise, split on whitespace, lowercase and
// strip accents (NFD, drop Mn), then split off every punctuation character.
func Basic(text string, o BasicOptions) []string {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		switch {
		case r == 0 || r == 0xFFFD || isControl(r):
			continue
		case isWhitespace(r):
			b.WriteByte(' ')
		case !o.NoCJKSplit && isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	cleaned := norm.NFC.String(b.String())
	var out []string
	for _, w := range strings.Fields(cleaned) {
		if o.Lowercase {
			w = lowerPy(w)
			if !o.KeepAccents {
				w = stripAccents(w)
			}
		} else if o.StripAccents {
			w = stripAccents(w)
		}
		out = splitPunct(w, out)
	}
	return out
}

// stripAccents decomposes (NFD) and drops nonspacing marks.
func stripAccents(s string) string {
	if isASCII(s) {
		return s
	}
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// splitPunct appends w's pieces to out: every punctuation rune is its own
// piece, runs of other runes stay together.
func splitPunct(w string, out []string) []string {
	start := 0
	for i, r := range w {
		if isPunct(r) {
			if i > start {
				out = append(out, w[start:i])
			}
			n := len(string(r))
			out = append(out, w[i:i+n])
			start = i + n
		}
	}
	if start < len(w) {
		out = append(out, w[start:])
	}
	return out
}

// isWhitespace follows transformers' _is_whitespace: the four ASCII spaces
// plus category Zs.
func isWhitespace(r rune) bool {
	if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// isControl follows transformers' _is_control: any category C* except the
// three ASCII whitespace controls. Unassigned code points (Cn) belong to no Go
// table, so "in no major category" stands for Cn.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	if unicode.In(r, unicode.C) {
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isPunct follows transformers' _is_punctuation: all non-alphanumeric ASCII
// symbols count (so "$" and "^" split even though Unicode calls them S*),
// plus category P*.
func isPunct(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.In(r, unicode.P)
}

// isCJK reports the CJK Unified Ideographs blocks BERT spaces out (not
// Hangul, Hiragana or Katakana, which are written with spaces).
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}

// lowerPy lowercases like Python's str.lower, which transformers uses: Go's
// ToLower agrees except for U+0130 (Python: "i" + combining dot) and the
// Greek final sigma (Python: "ς" at the end of a word).
func lowerPy(w string) string {
	if !strings.ContainsAny(w, "\u0130\u03a3") {
		return strings.ToLower(w)
	}
	rs := []rune(w)
	var b strings.Builder
	for i, r := range rs {
		switch {
		case r == 0x130:
			b.WriteString("i\u0307")
		case r == 0x3A3 && finalSigma(rs, i):
			b.WriteRune(0x3C2)
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma is Unicode's Final_Sigma condition: a cased letter before i and
// none after it, skipping case-ignorable runes.
func finalSigma(rs []rune, i int) bool {
	before := false
	for j := i - 1; j >= 0; j-- {
		if caseIgnorable(rs[j]) {
			continue
		}
		before = cased(rs[j])
		break
	}
	if !before {
		return false
	}
	for j := i + 1; j < len(rs); j++ {
		if caseIgnorable(rs[j]) {
			continue
		}
		return !cased(rs[j])
	}
	return true
}

func cased(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }

func caseIgnorable(r rune) bool {
	return r == '\'' || r == '.' || r == ':' || r == 0x2019 || unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
