// Package chunk finds noun phrases and verb groups in a tagged sentence with
// regular-expression rules over postag's coarse tags, in the manner of
// NLTK's RegexpParser:
//
//	NP: {<DET>?<NUM|ADJ>*<NOUN|PROPN>+}  or  {<PRON>}
//	VP: {<MD>?<ADV|NEG>*<VERB>+(<ADV|NEG>*<VERB>+ | <PRT><VERB>+)*<PRT>?}
//
// Matching is greedy, left to right, and chunks never overlap.
//
// This approximates the NP and VP of PaSeR's NLTK syntax trees (paper
// section 3.1.1) without a parser, which cannot be had here. The
// differences: chunks are flat and minimal (base NPs; a VP is the verb
// group only, without its objects and complements, where a tree's VP spans
// them); a noun phrase with a prepositional or relative-clause modifier
// becomes two chunks; coordination is not joined; and tags come from a
// Brown-trained tagger (about 97% accurate on held-out Brown text), not
// the Penn Treebank tagger NLTK ships.
//
// The paper masks "a random sub-tree from the syntax parsing tree" (section
// 3.1.1): one phrase of the requested kinds, drawn at random, which MaskOne
// does. Mask masks every chunk of the kinds instead (the behaviour the
// mini and ci profiles were recorded with); neither ranks the chunks.
package chunk

import (
	"math/rand/v2"

	"repro/internal/text/mask"
	"repro/internal/text/postag"
	"repro/internal/text/words"
)

// Chunk is a phrase found by the rules: Label "NP" or "VP", tokens
// [From, To).
type Chunk struct {
	Label    string
	From, To int
}

func is(tag string, set ...string) bool {
	for _, s := range set {
		if tag == s {
			return true
		}
	}
	return false
}

// matchNP returns the end of a noun phrase starting at i, or i.
func matchNP(tags []string, i int) int {
	if i < len(tags) && tags[i] == postag.PRON {
		return i + 1
	}
	j := i
	if j < len(tags) && tags[j] == postag.DET {
		j++
	}
	for j < len(tags) && is(tags[j], postag.NUM, postag.ADJ) {
		j++
	}
	k := j
	for k < len(tags) && is(tags[k], postag.NOUN, postag.PROPN) {
		k++
	}
	if k == j {
		return i
	}
	return k
}

// matchVP returns the end of a verb group starting at i, or i.
func matchVP(tags []string, i int) int {
	j := i
	if j < len(tags) && tags[j] == postag.MD {
		j++
	}
	verbs := func(j int) int { // <VERB>+
		for j < len(tags) && tags[j] == postag.VERB {
			j++
		}
		return j
	}
	for j < len(tags) && is(tags[j], postag.ADV, postag.NEG) {
		j++
	}
	end := verbs(j)
	if end == j {
		return i
	}
	for {
		// (<ADV|NEG>*<VERB>+ | <PRT><VERB>+)
		k := end
		for k < len(tags) && is(tags[k], postag.ADV, postag.NEG) {
			k++
		}
		if e := verbs(k); e > k {
			end = e
			continue
		}
		if end < len(tags) && tags[end] == postag.PRT {
			if e := verbs(end + 1); e > end+1 {
				end = e
				continue
			}
			end++ // trailing particle: "give up"
		}
		return end
	}
}

// Find returns the chunks of the given labels ("NP", "VP") in sentence
// order.
func Find(tags []string, np, vp bool) []Chunk {
	var out []Chunk
	for i := 0; i < len(tags); {
		if np {
			if e := matchNP(tags, i); e > i {
				out = append(out, Chunk{"NP", i, e})
				i = e
				continue
			}
		}
		if vp {
			if e := matchVP(tags, i); e > i {
				out = append(out, Chunk{"VP", i, e})
				i = e
				continue
			}
		}
		i++
	}
	return out
}

// Mask tokenises s, tags it, finds its noun phrases (np) and/or verb
// groups (vp) and masks every one of them; the targets are the chunks in
// sentence order.
func Mask(s string, tg *postag.Tagger, np, vp bool) (mask.MaskedPair, error) {
	return maskChunks(s, tg, np, vp, func(cs []Chunk) []Chunk { return cs })
}

// MaskOne is Mask with one chunk masked: drawn uniformly with r among the
// noun phrases (np) and/or verb groups (vp) of s, so with both kinds the
// draw is over the phrases of either kind together. A sentence without a
// chunk of the kinds is left unmasked, with no target, as Mask leaves it;
// r is not drawn from then.
func MaskOne(s string, tg *postag.Tagger, np, vp bool, r *rand.Rand) (mask.MaskedPair, error) {
	return maskChunks(s, tg, np, vp, func(cs []Chunk) []Chunk { return pickOne(cs, r) })
}

// pickOne is the chunk of cs that r draws, alone (none when cs is empty).
func pickOne(cs []Chunk, r *rand.Rand) []Chunk {
	if len(cs) == 0 {
		return nil
	}
	i := r.IntN(len(cs))
	return cs[i : i+1]
}

func maskChunks(s string, tg *postag.Tagger, np, vp bool, pick func([]Chunk) []Chunk) (mask.MaskedPair, error) {
	toks := words.Tokenize(s)
	ws := make([]string, len(toks))
	for i, t := range toks {
		ws[i] = t.Text
	}
	var phrases [][]words.Span
	for _, c := range pick(Find(tg.Tag(ws), np, vp)) {
		phrases = append(phrases, []words.Span{{From: c.From, To: c.To}})
	}
	return mask.Mask(s, toks, phrases)
}
