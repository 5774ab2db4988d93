// Package postag is a part-of-speech tagger trained on the Brown Corpus:
// the averaged perceptron of NLTK's PerceptronTagger (Honnibal's design),
// with its feature templates, word normalisation and tag dictionary, over a
// coarse tagset mapped from Brown's original tags (see Coarse).
//
// It exists for PaSeR's noun/verb-phrase masking alternative (see package
// chunk), where the paper used NLTK; no pretrained tagger or parser is
// available here, so the tagger is trained from the corpus, deterministically:
// sentences are shuffled each iteration by a seeded generator and features
// are identified by a fixed 64-bit FNV-1a hash, so the same corpus, seed and
// iteration count give the same model. It differs from NLTK's tagger in
// three small ways: the averaging uses the equivalent lazy "w - u/c" form
// instead of per-weight timestamps, weights are not rounded to three
// decimals, and ties between tags go to the tag listed first in Tags()
// rather than the alphabetically larger one.
package postag

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tags is the coarse tagset in class order.
var Tags = []string{NOUN, PROPN, PRON, DET, ADJ, NUM, VERB, MD, ADV, ADP, PRT, CONJ, NEG, PUNCT, X}

const nTags = 15

var tagIndex = func() map[string]int {
	m := map[string]int{}
	for i, t := range Tags {
		m[t] = i
	}
	return m
}()

// Tagger is a trained averaged-perceptron tagger. It is read-only after
// training and safe for concurrent use.
type Tagger struct {
	feat    map[uint64]int32 // feature hash -> row in weights
	weights [][nTags]float32
	tagdict map[string]int // unambiguous frequent words -> tag
}

// TrainOptions controls training.
type TrainOptions struct {
	Iterations int    // passes over the data; NLTK uses 5
	Seed       uint64 // seeds the per-iteration shuffle
}

// Train trains a tagger on coarse-tagged sentences (see CoarseSentences).
func Train(sents []Sentence, opt TrainOptions) *Tagger {
	if opt.Iterations <= 0 {
		opt.Iterations = 5
	}
	t := &Tagger{feat: map[uint64]int32{}, tagdict: makeTagdict(sents)}
	var w [][nTags]float32 // current weights
	var u [][nTags]float64 // sum of step * update, for averaging
	c := 1.0               // step counter, as NLTK's i (one step per token)
	order := make([]int, len(sents))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x7a66))
	var fs []uint64
	for it := 0; it < opt.Iterations; it++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, si := range order {
			s := sents[si]
			ctx := context(s.Tokens)
			prev, prev2 := "-START-", "-START2-"
			for i, word := range s.Tokens {
				guess, ok := t.tagdict[word]
				if !ok {
					fs = features(fs[:0], i, word, ctx, prev, prev2)
					guess = predict(t.feat, w, fs)
					truth, ok := tagIndex[s.Tags[i]]
					if !ok {
						truth = tagIndex[X]
					}
					if guess != truth {
						for _, f := range fs {
							r, ok := t.feat[f]
							if !ok {
								r = int32(len(w))
								t.feat[f] = r
								w = append(w, [nTags]float32{})
								u = append(u, [nTags]float64{})
							}
							w[r][truth]++
							u[r][truth] += c
							w[r][guess]--
							u[r][guess] -= c
						}
					}
				}
				c++
				prev2, prev = prev, Tags[guess]
			}
		}
	}
	// Averaged weights: the mean over all steps of each weight.
	t.weights = make([][nTags]float32, len(w))
	for r := range w {
		for k := 0; k < nTags; k++ {
			t.weights[r][k] = float32(float64(w[r][k]) - u[r][k]/c)
		}
	}
	return t
}

// makeTagdict keeps words seen at least 20 times with one tag at least 97%
// of the time (NLTK's thresholds); they are tagged without the model.
func makeTagdict(sents []Sentence) map[string]int {
	counts := map[string]*[nTags]int{}
	for _, s := range sents {
		for i, w := range s.Tokens {
			c := counts[w]
			if c == nil {
				c = new([nTags]int)
				counts[w] = c
			}
			k, ok := tagIndex[s.Tags[i]]
			if !ok {
				k = tagIndex[X]
			}
			c[k]++
		}
	}
	d := map[string]int{}
	for w, c := range counts {
		n, best := 0, 0
		for k := range c {
			n += c[k]
			if c[k] > c[best] {
				best = k
			}
		}
		if n >= 20 && float64(c[best])/float64(n) >= 0.97 {
			d[w] = best
		}
	}
	return d
}

// Tag returns the coarse tag of each token.
func (t *Tagger) Tag(tokens []string) []string {
	out := make([]string, len(tokens))
	ctx := context(tokens)
	prev, prev2 := "-START-", "-START2-"
	var fs []uint64
	for i, word := range tokens {
		word = NormalizeToken(word)
		g, ok := t.tagdict[word]
		if !ok {
			fs = features(fs[:0], i, word, ctx, prev, prev2)
			g = predict(t.feat, t.weights, fs)
		}
		out[i] = Tags[g]
		prev2, prev = prev, out[i]
	}
	return out
}

func predict(feat map[uint64]int32, w [][nTags]float32, fs []uint64) int {
	var sc [nTags]float32
	for _, f := range fs {
		if r, ok := feat[f]; ok {
			row := &w[r]
			for k := range sc {
				sc[k] += row[k]
			}
		}
	}
	best := 0
	for k := 1; k < nTags; k++ {
		if sc[k] > sc[best] {
			best = k
		}
	}
	return best
}

// context is NLTK's padded, normalised word sequence.
func context(tokens []string) []string {
	ctx := make([]string, 0, len(tokens)+4)
	ctx = append(ctx, "-START-", "-START2-")
	for _, w := range tokens {
		ctx = append(ctx, normalize(NormalizeToken(w)))
	}
	return append(ctx, "-END-", "-END2-")
}

// normalize is NLTK's PerceptronTagger.normalize.
func normalize(w string) string {
	r, _ := utf8.DecodeRuneInString(w)
	switch {
	case strings.Contains(w, "-") && r != '-':
		return "!HYPHEN"
	case isDigits(w) && utf8.RuneCountInString(w) == 4:
		return "!YEAR"
	case w != "" && unicode.IsDigit(r):
		return "!DIGITS"
	}
	return strings.ToLower(w)
}

func isDigits(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// suffix3 is Python's word[-3:] (in runes).
func suffix3(w string) string {
	n := 0
	for i := len(w); i > 0; {
		_, sz := utf8.DecodeLastRuneInString(w[:i])
		i -= sz
		n++
		if n == 3 {
			return w[i:]
		}
	}
	return w
}

func prefix1(w string) string {
	_, sz := utf8.DecodeRuneInString(w)
	return w[:sz]
}

// features appends the hashes of NLTK's feature templates for token i.
func features(fs []uint64, i int, word string, ctx []string, prev, prev2 string) []uint64 {
	i += 2
	return append(fs,
		hash("bias"),
		hash("i suffix", suffix3(word)),
		hash("i pref1", prefix1(word)),
		hash("i-1 tag", prev),
		hash("i-2 tag", prev2),
		hash("i tag+i-2 tag", prev, prev2),
		hash("i word", ctx[i]),
		hash("i-1 tag+i word", prev, ctx[i]),
		hash("i-1 word", ctx[i-1]),
		hash("i-1 suffix", suffix3(ctx[i-1])),
		hash("i-2 word", ctx[i-2]),
		hash("i+1 word", ctx[i+1]),
		hash("i+1 suffix", suffix3(ctx[i+1])),
		hash("i+2 word", ctx[i+2]),
	)
}

// hash is 64-bit FNV-1a over the parts separated by a zero byte: fixed, so
// models are reproducible, and wide enough that collisions are negligible.
func hash(parts ...string) uint64 {
	h := uint64(14695981039346656037)
	for j, p := range parts {
		if j > 0 {
			h ^= 0
			h *= 1099511628211
		}
		for k := 0; k < len(p); k++ {
			h ^= uint64(p[k])
			h *= 1099511628211
		}
	}
	return h
}

// DefaultOptions are the settings the mask stage trains with: NLTK's five
// iterations and a fixed seed.
var DefaultOptions = TrainOptions{Iterations: 5, Seed: 1}

// TrainBrown reads the Brown Corpus at path and trains a tagger on all of
// it (about four seconds).
func TrainBrown(path string, opt TrainOptions) (*Tagger, error) {
	docs, err := ReadBrown(path)
	if err != nil {
		return nil, err
	}
	return Train(CoarseSentences(docs), opt), nil
}
