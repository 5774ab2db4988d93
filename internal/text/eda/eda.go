// Package eda implements the three EDA operations (Wei and Zou, 2019) that
// PaSeR applies to both s and its masked duplicate s' (paper section
// 3.1.3): synonym replacement from WordNet, random deletion and random
// swap ("token reordering").
//
// Each follows EDA's reference code (jasonwei20/eda_nlp, code/eda.py):
//
//   - SR: n = max(1, int(alpha*words)) distinct non-stopwords (EDA's own
//     stopword list, below), visited in random order, are replaced by a
//     random WordNet synonym (EDA's get_synonyms), every occurrence of the
//     word at once; words without synonyms are skipped and do not count.
//   - RD: each word is deleted with probability p; a sentence of one word
//     is left alone, and when every word would go one random word stays.
//   - RS: n = max(1, int(alpha*words)) times, two random positions are
//     swapped (a swap gives up after three draws of the same position).
//
// Where this differs from EDA, and why: words are the whitespace-separated
// tokens of the sentence, and the sentence is not lower-cased or stripped
// of punctuation (EDA cleans its input that way; PaSeR's encoder sees the
// text as written). Punctuation around a word stays in place when the word
// is replaced ("hair." -> "tresses."), and a capitalised word's synonym is
// capitalised. Tokens that contain the mask token are never replaced,
// deleted or swapped, and are not counted in "words": the masked positions
// are what the decoder reconstructs. When several operations are enabled
// on one sentence they run in the order SR, RD, RS (EDA produces one
// augmented sentence per operation; PaSeR's Table 4 rows combine them).
// All randomness comes from the caller's generator, so a seed fixes the
// output.
package eda

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"

	"repro/internal/text/mask"
	"repro/internal/text/wordnet"
)

// stopWords is EDA's stopword list (code/eda.py, the NLTK English list
// with a few entries dropped); SR never replaces these.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours
		yourself yourselves he him his himself she her hers herself it its itself they
		them their theirs themselves what which who whom this that these those am is
		are was were be been being have has had having do does did doing a an the and
		but if or because as until while of at by for with about against between into
		through during before after above below to from up down in out on off over
		under again further then once here there when where why how all any both each
		few more most other some such no nor not only own same so than too very s t
		can will just don should now`) {
		m[w] = true
	}
	return m
}()

// Options are the EDA strengths; zero disables an operation.
type Options struct {
	SynonymReplacement float64 // alpha_sr: fraction of words replaced
	RandomDeletion     float64 // p_rd: per-word deletion probability
	RandomSwap         float64 // alpha_rs: swaps as a fraction of words
}

// Synonyms is what SR needs from WordNet.
type Synonyms interface {
	Synonyms(word string) []string
}

var _ Synonyms = (*wordnet.WordNet)(nil)

// Augmenter applies EDA with a synonym source.
type Augmenter struct {
	syn Synonyms
}

// New returns an augmenter that draws synonyms from syn (usually a
// *wordnet.WordNet).
func New(syn Synonyms) *Augmenter { return &Augmenter{syn: syn} }

// Protected reports whether a token holds a mask and must stay untouched.
func Protected(tok string) bool { return strings.Contains(tok, mask.MaskToken) }

// Augment applies the enabled operations to sentence s.
func (a *Augmenter) Augment(s string, opt Options, rng *rand.Rand) string {
	words := strings.Fields(s)
	if opt.SynonymReplacement > 0 {
		words = a.SynonymReplacement(words, count(opt.SynonymReplacement, words), rng)
	}
	if opt.RandomDeletion > 0 {
		words = RandomDeletion(words, opt.RandomDeletion, rng)
	}
	if opt.RandomSwap > 0 {
		words = RandomSwap(words, count(opt.RandomSwap, words), rng)
	}
	return strings.Join(words, " ")
}

// count is EDA's max(1, int(alpha*num_words)) over unprotected words.
func count(alpha float64, words []string) int {
	n := 0
	for _, w := range words {
		if !Protected(w) {
			n++
		}
	}
	return max(1, int(alpha*float64(n)))
}

// split separates a token into leading punctuation, the word, and trailing
// punctuation.
func split(tok string) (pre, core, post string) {
	i := strings.IndexFunc(tok, isWordRune)
	if i < 0 {
		return tok, "", ""
	}
	j := strings.LastIndexFunc(tok, isWordRune)
	_, sz := utf8.DecodeRuneInString(tok[j:])
	return tok[:i], tok[i : j+sz], tok[j+sz:]
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// lookupKey is the lower-case form SR looks up, or "" when the word is not
// a plain a-z word (EDA only ever sees a-z words) or is a stopword.
func lookupKey(core string) string {
	k := strings.ToLower(core)
	if k == "" || stopWords[k] {
		return ""
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 'a' || k[i] > 'z' {
			return ""
		}
	}
	return k
}

// SynonymReplacement replaces up to n distinct non-stopwords of words by a
// random synonym each (all occurrences). A multi-word synonym becomes
// several words of the result.
func (a *Augmenter) SynonymReplacement(words []string, n int, rng *rand.Rand) []string {
	var cands []string
	seen := map[string]bool{}
	for _, w := range words {
		if Protected(w) {
			continue
		}
		_, core, _ := split(w)
		if k := lookupKey(core); k != "" && !seen[k] {
			seen[k] = true
			cands = append(cands, k)
		}
	}
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	out := append([]string(nil), words...)
	replaced := 0
	for _, k := range cands {
		if replaced >= n {
			break
		}
		var syns []string
		for _, s := range a.syn.Synonyms(k) {
			// EDA's clean-up can leave blanks ("1000" -> "") or double
			// spaces; neither is a usable replacement.
			if s = strings.Join(strings.Fields(s), " "); s != "" && s != k {
				syns = append(syns, s)
			}
		}
		if len(syns) == 0 {
			continue
		}
		syn := syns[rng.IntN(len(syns))]
		for i, w := range out {
			if Protected(w) {
				continue
			}
			pre, core, post := split(w)
			if strings.ToLower(core) != k {
				continue
			}
			rep := syn
			if r, _ := utf8.DecodeRuneInString(core); unicode.IsUpper(r) {
				rr, sz := utf8.DecodeRuneInString(rep)
				rep = string(unicode.ToUpper(rr)) + rep[sz:]
			}
			out[i] = pre + rep + post
		}
		replaced++
	}
	// A multi-word synonym is several words from here on (EDA re-splits too).
	return strings.Fields(strings.Join(out, " "))
}

// RandomDeletion deletes each unprotected word with probability p.
func RandomDeletion(words []string, p float64, rng *rand.Rand) []string {
	var free []int
	for i, w := range words {
		if !Protected(w) {
			free = append(free, i)
		}
	}
	if len(free) <= 1 {
		return append([]string(nil), words...)
	}
	drop := make([]bool, len(words))
	kept := 0
	for _, i := range free {
		if rng.Float64() <= p { // EDA keeps a word when uniform(0,1) > p
			drop[i] = true
		} else {
			kept++
		}
	}
	if kept == 0 {
		drop[free[rng.IntN(len(free))]] = false
	}
	out := make([]string, 0, len(words))
	for i, w := range words {
		if !drop[i] {
			out = append(out, w)
		}
	}
	return out
}

// RandomSwap swaps two random unprotected words, n times.
func RandomSwap(words []string, n int, rng *rand.Rand) []string {
	out := append([]string(nil), words...)
	var free []int
	for i, w := range words {
		if !Protected(w) {
			free = append(free, i)
		}
	}
	if len(free) < 2 {
		return out
	}
	for ; n > 0; n-- {
		i := rng.IntN(len(free))
		j := i
		for tries := 0; j == i && tries <= 3; tries++ {
			j = rng.IntN(len(free))
		}
		if j == i {
			continue
		}
		out[free[i]], out[free[j]] = out[free[j]], out[free[i]]
	}
	return out
}
