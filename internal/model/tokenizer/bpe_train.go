package tokenizer

import (
	"fmt"
	"slices"
	"sort"
)

// BPETrainOptions configures TrainBPE.
type BPETrainOptions struct {
	// VocabSize is the target size, special tokens and the 256 byte
	// symbols included.
	VocabSize int
	// MinFrequency: a merge is only made when the pair occurs at least this
	// often (default 2, as HF's ByteLevelBPETokenizer.train).
	MinFrequency int
	// Special tokens take the first ids, in this order; default RoBERTa's
	// <s> <pad> </s> <unk> <mask> (ids 0-4, as HF's RoBERTa training
	// example gives them).
	Special []string
}

// RoBERTaSpecials are RoBERTa's special tokens in the order of their ids
// in a vocabulary trained here.
var RoBERTaSpecials = []string{"<s>", "<pad>", "</s>", "<unk>", "<mask>"}

// GPT2Specials is GPT-2's one special token, <|endoftext|> (id 0 in a
// vocabulary trained here).
var GPT2Specials = []string{"<|endoftext|>"}

// TrainBPE learns a byte-level BPE vocabulary from sentences, as Hugging
// Face tokenizers' ByteLevelBPETrainer does for RoBERTa: GPT-2's
// pre-tokenization (gpt2Split), each pre-token's UTF-8 bytes as printable
// runes (bytesToUnicode), every one of the 256 byte symbols in the alphabet
// (so no text is ever unknown), then the most frequent adjacent pair merged
// repeatedly (learnMerges; ties by the pair's strings, so the result does
// not depend on map order) until VocabSize entries. The vocabulary is the
// special tokens, the 256 byte symbols in rune order, then the merged
// symbols in the order learned; the result encodes with BPE (lowest rank
// first), framing with <s> ... </s> when <s> is among the specials. A
// special token found in a sentence is left out of the counts (encoding
// keeps it whole). GPT-2-style vocabularies pass Special: GPT2Specials.
func TrainBPE(sentences []string, o BPETrainOptions) (*BPE, error) {
	if o.MinFrequency <= 0 {
		o.MinFrequency = 2
	}
	if o.Special == nil {
		o.Special = RoBERTaSpecials
	}
	if o.VocabSize < len(o.Special)+256 {
		return nil, fmt.Errorf("train BPE: vocab size %d too small (the %d special tokens and 256 byte symbols need %d)",
			o.VocabSize, len(o.Special), len(o.Special)+256)
	}
	isSym := map[string]bool{}
	for b := range 256 {
		isSym[string(byteToRune[b])] = true
	}
	for i, s := range o.Special {
		if isSym[s] || slices.Contains(o.Special[:i], s) {
			return nil, fmt.Errorf("train BPE: token %q appears twice (a special token that is also a byte symbol?)", s)
		}
	}
	counts := map[string]int{}
	for _, s := range sentences {
		// A special token in the text stays whole when encoding, so it is
		// not split into pieces here either.
		for _, seg := range splitLiterals(s, o.Special) {
			if seg.literal {
				continue
			}
			for _, w := range gpt2Split(seg.text) {
				counts[w]++
			}
		}
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("train BPE: corpus has no text")
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Strings(words)

	vocab := append([]string(nil), o.Special...)
	alphabet := make([]string, 256)
	for b := range 256 {
		alphabet[b] = string(byteToRune[b])
	}
	sort.Strings(alphabet)
	vocab = append(vocab, alphabet...)
	st := &symtab{id: map[string]int{}}
	for _, a := range alphabet {
		st.get(a)
	}
	ws := make([]trainWord, 0, len(words))
	for _, w := range words {
		tw := trainWord{count: counts[w], syms: make([]int, len(w))}
		for i := 0; i < len(w); i++ {
			tw.syms[i] = st.get(string(byteToRune[w[i]]))
		}
		ws = append(ws, tw)
	}
	vocab, merges := learnMerges(ws, st, vocab, o.VocabSize, o.MinFrequency, func(a, b string) string { return a + b })
	ids := make(map[string]int, len(vocab))
	for i, v := range vocab {
		if _, dup := ids[v]; dup {
			return nil, fmt.Errorf("train BPE: token %q appears twice (a special token that is also a byte symbol?)", v)
		}
		ids[v] = i
	}
	return NewBPE(ids, merges, BPEOptions{})
}
