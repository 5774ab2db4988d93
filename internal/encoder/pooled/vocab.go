package pooled

import (
	"fmt"
	"strings"
	"unicode"

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

// TrainBPEVocab learns a byte-level BPE vocabulary of size entries from the
// sentences, RoBERTa's special tokens first (tokenizer.TrainBPE).
func TrainBPEVocab(sentences []string, size int) (*tokenizer.BPE, error) {
	t, err := tokenizer.TrainBPE(sentences, tokenizer.BPETrainOptions{VocabSize: size})
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	return t, nil
}

// InitGloVeScaled copies word vectors, multiplied by scale, into the word
// embeddings of every whole-word vocabulary entry that has one (WordPiece:
// not "##" continuations, not [SPECIAL] tokens; byte-level BPE: a space and
// a word, looked up lower-cased) and returns how many were copied. The
// vectors fill the leading columns when the hidden size is larger (see the
// package doc). The scale is there because GloVe 6B's vectors have norms
// around 5, BERT-base's word embeddings around 1, and a masked-LM head or a
// decoder that ties its output layer to the word embeddings starts with
// logits that large.
func (m *Model) InitGloVeScaled(v *dataset.Vectors, scale float32) (int, error) {
	if v.Dim > m.Encoder.Config.Hidden {
		return 0, fmt.Errorf("encoder: GloVe vectors have %d dimensions, more than the hidden size %d", v.Dim, m.Encoder.Config.Hidden)
	}
	// keys[id] is the GloVe word an entry stands for ("" = none).
	var keys []string
	switch t := m.Tokenizer.(type) {
	case *tokenizer.WordPiece:
		keys = append([]string(nil), t.Tokens()...)
		for i, tok := range keys {
			if strings.HasPrefix(tok, "##") || (strings.HasPrefix(tok, "[") && strings.HasSuffix(tok, "]")) {
				keys[i] = ""
			}
		}
	case *tokenizer.BPE:
		// Byte-level pieces that are a space and a whole word ("Ġcat"):
		// GloVe 6B is lower-cased, so "ĠCat" shares "cat"'s vector.
		keys = make([]string, t.Size())
		for i := range keys {
			if w, ok := strings.CutPrefix(t.Token(i), "\u0120"); ok && isWord(w) {
				keys[i] = strings.ToLower(w)
			}
		}
	default:
		return 0, fmt.Errorf("encoder: GloVe initialisation needs a WordPiece or byte-level BPE vocabulary, the model has %T", m.Tokenizer)
	}
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		if k != "" {
			want[k] = true
		}
	}
	vectors := make(map[string][]float32, len(want))
	for i, w := range v.Words {
		if want[w] {
			vec := v.Vector(i)
			if scale != 1 {
				vec = append([]float32(nil), vec...)
				for j := range vec {
					vec[j] *= scale
				}
			}
			vectors[w] = vec
		}
	}
	n, err := m.Encoder.InitWordEmbeddings(keys, vectors)
	if err != nil {
		return n, fmt.Errorf("encoder: %w", err)
	}
	return n, nil
}

// isWord reports whether s is letters only (a whole word, not a number or
// punctuation).
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}
