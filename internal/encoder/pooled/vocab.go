package pooled

import (
	"fmt"
	"strings"

	"repro/internal/dataset"
	"repro/internal/model/tokenizer"
)

// uncased are the options of bert-base-uncased's tokenizer, which the
// from-scratch models share (GloVe 6B is lower-cased too).
var uncased = tokenizer.WordPieceOptions{BasicOptions: tokenizer.BasicOptions{Lowercase: true}}

// LoadVocab reads a vocab.txt (bert-base-uncased's, say) as a lower-casing
// WordPiece tokenizer.
func LoadVocab(path string) (*tokenizer.WordPiece, error) {
	t, err := tokenizer.LoadWordPiece(path, uncased)
	if err != nil {
		return nil, fmt.Errorf("encoder: vocabulary: %w", err)
	}
	return t, nil
}

// TrainVocab learns a lower-casing WordPiece vocabulary of size entries
// from the sentences (tokenizer.TrainWordPiece).
func TrainVocab(sentences []string, size int) (*tokenizer.WordPiece, error) {
	tokens, err := tokenizer.TrainWordPiece(sentences, tokenizer.TrainOptions{VocabSize: size, Basic: uncased.BasicOptions})
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	t, err := tokenizer.NewWordPiece(tokens, uncased)
	if err != nil {
		return nil, fmt.Errorf("encoder: trained vocabulary: %w", err)
	}
	return t, nil
}

// InitGloVe copies word vectors into the word embeddings of every
// whole-word vocabulary entry that has one (not "##" continuations, not
// [SPECIAL] tokens) and returns how many were copied. The vectors fill the
// leading columns when the hidden size is larger (see the package doc).
func (m *Model) InitGloVe(v *dataset.Vectors) (int, error) {
	wp, ok := m.Tokenizer.(*tokenizer.WordPiece)
	if !ok {
		return 0, fmt.Errorf("encoder: GloVe initialisation needs a WordPiece vocabulary, the model has %T", m.Tokenizer)
	}
	if v.Dim > m.Encoder.Config.Hidden {
		return 0, fmt.Errorf("encoder: GloVe vectors have %d dimensions, more than the hidden size %d", v.Dim, m.Encoder.Config.Hidden)
	}
	vocab := wp.Tokens()
	want := make(map[string]bool, len(vocab))
	for _, tok := range vocab {
		if !strings.HasPrefix(tok, "##") && !(strings.HasPrefix(tok, "[") && strings.HasSuffix(tok, "]")) {
			want[tok] = true
		}
	}
	vectors := make(map[string][]float32, len(want))
	for i, w := range v.Words {
		if want[w] {
			vectors[w] = v.Vector(i)
		}
	}
	n, err := m.Encoder.InitWordEmbeddings(vocab, vectors)
	if err != nil {
		return n, fmt.Errorf("encoder: %w", err)
	}
	return n, nil
}
