package tokenizer

import (
	"fmt"
	"sort"
)

// BPETrainOptions configures TrainBPE.
type BPETrainOptions struct {
	// VocabSize is the target size: special tokens, the 256 byte
	// symbols and the merges.
	VocabSize int
	// MinFrequency: a pair is merged only when it occurs at least this
	// often (default 2, as Hugging Face's ByteLevelBPETokenizer.train).
	MinFrequency int
	// Specials are added first, in order (default: GPT-2's
	// "<|endoftext|>" alone); Encode keeps them whole in text.
	Specials []string
}

// TrainBPE learns a byte-level BPE vocabulary from texts with the
// algorithm of Hugging Face tokenizers' BpeTrainer behind the ByteLevel
// pre-tokenizer (ByteLevelBPETokenizer.train): texts are split by GPT-2's
// pre-tokenization pattern, each piece's bytes mapped to GPT-2's printable
// runes; the alphabet is all 256 byte symbols (so any text encodes); pairs
// are merged most frequent first. Ties go to the pair's strings in byte
// order (HF breaks them by internal ids), so the result is deterministic.
// The vocabulary is Specials, then the 256 byte symbols in byte order,
// then the merges in the order learned; encoding with the result (NewBPE)
// applies the merges by rank, which reproduces the training segmentation.
func TrainBPE(texts []string, o BPETrainOptions) (*BPE, error) {
	if o.MinFrequency <= 0 {
		o.MinFrequency = 2
	}
	if o.Specials == nil {
		o.Specials = []string{"<|endoftext|>"}
	}
	if o.VocabSize < len(o.Specials)+256 {
		return nil, fmt.Errorf("train BPE: vocab size %d is smaller than the %d special tokens and 256 byte symbols", o.VocabSize, len(o.Specials))
	}
	counts := map[string]int{}
	for _, t := range texts {
		for _, seg := range splitLiterals(t, o.Specials) {
			if seg.literal {
				continue
			}
			for _, w := range gpt2Split(seg.text) {
				counts[w]++
			}
		}
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("train BPE: the corpus has no text")
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Strings(words) // map order must not leak into the result

	vocab := map[string]int{}
	add := func(tok string) {
		if _, ok := vocab[tok]; !ok {
			vocab[tok] = len(vocab)
		}
	}
	for _, s := range o.Specials {
		if _, dup := vocab[s]; dup {
			return nil, fmt.Errorf("train BPE: special token %q listed twice", s)
		}
		add(s)
	}
	st := &symtab{id: map[string]int{}}
	for b := 0; b < 256; b++ {
		sym := string(byteToRune[b])
		add(sym)
		st.get(sym)
	}
	ws := make([]trainWord, len(words))
	for i, w := range words {
		tw := trainWord{count: counts[w], syms: make([]int, len(w))}
		for j := 0; j < len(w); j++ {
			tw.syms[j] = st.get(string(byteToRune[w[j]]))
		}
		ws[i] = tw
	}
	var merges [][2]string
	learnMerges(ws, st, o.MinFrequency, func() bool { return len(vocab) < o.VocabSize },
		func(a, b string) string { return a + b },
		func(a, b, merged string) {
			merges = append(merges, [2]string{a, b})
			add(merged)
		})
	return NewBPE(vocab, merges, BPEOptions{})
}
