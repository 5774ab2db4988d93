package infocse

import (
	"fmt"
	"strings"
)

// ConponoPairs lists the CONPONO-style positives of a document of n
// sentences: every pair of sentences at most window apart (0 < j-i <=
// window), in index order. CONPONO (Iter et al. 2020) encodes a sentence to
// predict the sentences around it, k before and k after, against random
// negatives; as InfoCSE's initialisation that is neighbouring sentences
// within a window as positives, each unordered pair once.
func ConponoPairs(n, window int) ([]Pair, error) {
	if window < 1 {
		return nil, fmt.Errorf("conpono: window %d must be at least 1", window)
	}
	var out []Pair
	for i := 0; i < n; i++ {
		for j := i + 1; j <= min(i+window, n-1); j++ {
			out = append(out, Pair{I: i, J: j})
		}
	}
	return out, nil
}

// ICTContext is the Inverse Cloze Task's context for sentence i of a
// document: the sentences within window of it, in document order, with
// sentence i itself removed, joined by spaces (window <= 0: the whole rest
// of the document, as InfoCSE describes ICT). It is "" for a one-sentence
// document.
func ICTContext(sentences []string, i, window int) string {
	lo, hi := 0, len(sentences)
	if window > 0 {
		lo, hi = max(0, i-window), min(len(sentences), i+window+1)
	}
	var parts []string
	for j := lo; j < hi; j++ {
		if j != i {
			parts = append(parts, sentences[j])
		}
	}
	return strings.Join(parts, " ")
}
