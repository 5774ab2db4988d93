package mlm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

// fixedVocab is a synthetic WordPiece vocabulary of n entries ([PAD] [UNK]
// [CLS] [SEP] [MASK] first), standing in for bert-base-uncased's.
func fixedVocab(b *testing.B, n int) tokenizer.Tokenizer {
	toks := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	for i := len(toks); i < n; i++ {
		toks = append(toks, fmt.Sprintf("w%d", i))
	}
	tok, err := tokenizer.NewWordPiece(toks, tokenizer.WordPieceOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return tok
}

// BenchmarkMLMStep is one update of the mini profile's pretraining
// (experiments/pretrained.hcl): 4 layers, width 128, 4 heads, FFN 512,
// bert-base-uncased's 30,522-entry vocabulary, a batch of 128 sentences of
// 32 tokens, 15% predicted: forward, loss, backward (the optimiser and data
// handling excluded).
func BenchmarkMLMStep(b *testing.B) {
	const L, D, H, FF, V, B, T = 4, 128, 4, 512, 30522, 128, 32
	tok := fixedVocab(b, V)
	enc, err := transformer.NewEncoder(transformer.Config{VocabSize: V, Hidden: D, Layers: L, Heads: H, Intermediate: FF,
		MaxPosition: 128, TypeVocab: 2, HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(enc, tok, 1)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	seqs := make([][]int, B)
	for i := range seqs {
		s := []int{2}
		for len(s) < T-1 {
			s = append(s, 5+rng.IntN(V-5))
		}
		seqs[i] = append(s, 3)
	}
	params := m.NamedParams()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, err := m.Loss(seqs, BERT(), rng)
		if err != nil {
			b.Fatal(err)
		}
		if err := tensor.Backward(l); err != nil {
			b.Fatal(err)
		}
		for _, p := range params {
			p.Param.ZeroGrad()
		}
	}
}
