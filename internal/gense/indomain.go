package gense

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Domain adaptation (section 2.3): the in-domain sentences are the
// unlabelled training texts of the target task (TSDAE's setting); the
// generator/discriminator synthesises triplets from them as from the
// open-domain ones. The target task's evaluation texts must never become
// training text, so InDomainSentences drops every sentence that also
// occurs in them.

// InDomainOptions say how task texts become sentences.
type InDomainOptions struct {
	// Split breaks a text into sentences (after ., ! or ? followed by a
	// space and an upper-case letter or digit); false keeps each text
	// whole.
	Split bool
	// MinWords drops shorter sentences; MaxWords (> 0) keeps only a
	// sentence's first MaxWords words.
	MinWords, MaxWords int
}

// InDomainCounts tallies the conversion.
type InDomainCounts struct {
	Texts     int `json:"texts"`
	Sentences int `json:"sentences"` // before the filters
	Short     int `json:"short"`     // fewer than MinWords words
	Excluded  int `json:"excluded"`  // also in the evaluation texts
	Repeated  int `json:"repeated"`  // a sentence seen before
	Kept      int `json:"kept"`
	Truncated int `json:"truncated"` // kept, cut to MaxWords words
}

// InDomainSentences turns texts into distinct sentences in first-seen
// order, dropping those shorter than MinWords and every one that is, or
// is a sentence of, a text of exclude (split the same way).
func InDomainSentences(texts, exclude []string, o InDomainOptions) ([]string, InDomainCounts) {
	c := InDomainCounts{Texts: len(texts)}
	banned := map[string]bool{}
	for _, t := range exclude {
		banned[norm(t)] = true
		for _, s := range sentencesOf(t, o.Split) {
			banned[norm(s)] = true
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range texts {
		if banned[norm(t)] {
			n := len(sentencesOf(t, o.Split))
			c.Sentences += n
			c.Excluded += n
			continue
		}
		for _, s := range sentencesOf(t, o.Split) {
			c.Sentences++
			w := strings.Fields(s)
			switch {
			case len(w) < o.MinWords:
				c.Short++
				continue
			case banned[norm(s)]:
				c.Excluded++
				continue
			}
			if o.MaxWords > 0 && len(w) > o.MaxWords {
				s = strings.Join(w[:o.MaxWords], " ")
			} else {
				s = strings.Join(w, " ")
			}
			if seen[s] {
				c.Repeated++
				continue
			}
			seen[s] = true
			if o.MaxWords > 0 && len(w) > o.MaxWords {
				c.Truncated++
			}
			out = append(out, s)
		}
	}
	c.Kept = len(out)
	return out, c
}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// sentencesOf splits a text after '.', '!' or '?' (a run of them) when a
// space and then an upper-case letter or a digit follow; split false keeps
// the text whole.
func sentencesOf(t string, split bool) []string {
	t = norm(t)
	if !split || t == "" {
		if t == "" {
			return nil
		}
		return []string{t}
	}
	var out []string
	start := 0
	for i := 0; i < len(t); i++ {
		if !strings.ContainsRune(".!?", rune(t[i])) {
			continue
		}
		j := i
		for j+1 < len(t) && strings.ContainsRune(".!?", rune(t[j+1])) {
			j++
		}
		if j+2 < len(t) && t[j+1] == ' ' {
			r, _ := utf8.DecodeRuneInString(t[j+2:])
			if unicode.IsUpper(r) || unicode.IsDigit(r) {
				out = append(out, t[start:j+1])
				start = j + 2
			}
		}
		i = j
	}
	if start < len(t) {
		out = append(out, t[start:])
	}
	return out
}
