// Package rake implements RAKE, Rapid Automatic Keyword Extraction (Rose,
// Engel, Cramer and Cowley, 2010), on one sentence, as PaSeR uses it to pick
// the phrases to mask (paper section 3.1.1).
//
// Candidate phrases are the maximal runs of words between stopwords and
// punctuation (the classic SMART stoplist that RAKE ships, embedded from
// smart.txt; punctuation is every token the text tokenizer does not mark as
// a word). Words are compared case-insensitively. Over all candidate
// occurrences, deg(w) is the row sum of w's co-occurrence counts within
// candidates, the word itself included (so each occurrence of w in a
// phrase of n words adds n), and freq(w) is its number of occurrences;
// score(w) = deg(w)/freq(w), and a phrase scores the sum of its word scores.
// Distinct phrases are ranked by score, ties broken by first occurrence
// (rake-nltk breaks ties by reverse string order, which is arbitrary for
// masking and harder to read). Each distinct phrase keeps every span where
// it occurs.
package rake

import (
	_ "embed"
	"sort"
	"strings"

	"repro/internal/text/mask"
	"repro/internal/text/words"
)

//go:embed smart.txt
var smartText string

// Stoplist is a set of lower-case stopwords.
type Stoplist map[string]bool

var smart = parseStoplist(smartText)

func parseStoplist(s string) Stoplist {
	st := Stoplist{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		st[line] = true
	}
	return st
}

// Has reports whether word (any case) is a stopword.
func (s Stoplist) Has(word string) bool { return s[Normalize(word)] }

// Normalize lower-cases a word and writes a typographic apostrophe as "'",
// the form the stoplist and the phrase identity use.
func Normalize(word string) string {
	return strings.ReplaceAll(strings.ToLower(word), "’", "'")
}

// Phrase is a distinct candidate phrase with its RAKE score.
type Phrase struct {
	Key   string       // normalised words joined by one space
	Text  string       // surface form of the first occurrence
	Score float64      // sum of its word scores
	Spans []words.Span // every occurrence, in sentence order
}

// Extract returns the distinct candidate phrases of a tokenised sentence,
// most important first. A nil stoplist means the SMART stoplist.
func Extract(s string, toks []words.Token, stop Stoplist) []Phrase {
	if stop == nil {
		stop = smart
	}
	// Candidate occurrences: maximal runs of non-stopword words.
	var cands []words.Span
	from := -1
	for i, t := range toks {
		if t.Word && !stop.Has(t.Text) {
			if from < 0 {
				from = i
			}
			continue
		}
		if from >= 0 {
			cands = append(cands, words.Span{From: from, To: i})
			from = -1
		}
	}
	if from >= 0 {
		cands = append(cands, words.Span{From: from, To: len(toks)})
	}

	deg := map[string]float64{}
	freq := map[string]float64{}
	for _, c := range cands {
		for i := c.From; i < c.To; i++ {
			w := Normalize(toks[i].Text)
			freq[w]++
			deg[w] += float64(c.Len()) // co-occurs with every word of c, itself included
		}
	}

	var out []Phrase
	index := map[string]int{}
	for _, c := range cands {
		ws := make([]string, 0, c.Len())
		for i := c.From; i < c.To; i++ {
			ws = append(ws, Normalize(toks[i].Text))
		}
		key := strings.Join(ws, " ")
		if j, ok := index[key]; ok {
			out[j].Spans = append(out[j].Spans, c)
			continue
		}
		score := 0.0
		for _, w := range ws {
			score += deg[w] / freq[w]
		}
		index[key] = len(out)
		out = append(out, Phrase{
			Key: key, Text: s[toks[c.From].Start:toks[c.To-1].End],
			Score: score, Spans: []words.Span{c},
		})
	}
	// Stable sort: equal scores keep first-occurrence order.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// TopK returns the k best phrases of Extract (all when fewer).
func TopK(s string, toks []words.Token, stop Stoplist, k int) []Phrase {
	ps := Extract(s, toks, stop)
	if k >= 0 && len(ps) > k {
		ps = ps[:k]
	}
	return ps
}

// MaskTopK tokenises s, selects its k best RAKE phrases and masks them.
func MaskTopK(s string, k int) (mask.MaskedPair, error) {
	toks := words.Tokenize(s)
	ps := TopK(s, toks, nil, k)
	spans := make([][]words.Span, len(ps))
	for i, p := range ps {
		spans[i] = p.Spans
	}
	return mask.Mask(s, toks, spans)
}
