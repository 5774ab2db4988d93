package t5

import (
	"fmt"

	"repro/internal/model/tokenizer"
)

// Text turns text into the token ids a T5 reads and writes, with any
// tokenizer.Tokenizer: the tokenizer's pieces followed by the model's EOS
// token, as transformers' T5Tokenizer frames every input and label (no
// start token; a leading [CLS] of a BERT-style vocabulary is dropped and
// its trailing [SEP] becomes the EOS).
type Text struct {
	Tok tokenizer.Tokenizer
	EOS int
}

// NewText pairs tok with the model's EOS id.
func NewText(tok tokenizer.Tokenizer, c Config) *Text { return &Text{Tok: tok, EOS: c.EOSTokenID} }

// Pieces returns text's token ids without any special token.
func (t *Text) Pieces(text string) []int {
	ids := t.Tok.Encode(text, 0)
	sp := t.Tok.Special()
	if len(ids) > 0 && sp.CLS >= 0 && ids[0] == sp.CLS {
		ids = ids[1:]
	}
	if n := len(ids); n > 0 && (ids[n-1] == t.EOS || sp.SEP >= 0 && ids[n-1] == sp.SEP) {
		ids = ids[:n-1]
	}
	return ids
}

// Encode returns text's ids followed by EOS, cut to at most maxLen ids
// (maxLen <= 0: no limit; the EOS is kept) and whether it had to be cut.
func (t *Text) Encode(text string, maxLen int) (ids []int, truncated bool) {
	ids = t.Pieces(text)
	if maxLen > 0 && len(ids)+1 > maxLen {
		ids, truncated = ids[:max(maxLen-1, 0)], true
	}
	return append(ids, t.EOS), truncated
}

// Decode returns the text of ids, special tokens left out.
func (t *Text) Decode(ids []int) string { return t.Tok.Decode(ids) }

// SentinelToken is the name of T5's n-th sentinel, "<extra_id_n>".
func SentinelToken(n int) string { return fmt.Sprintf("<extra_id_%d>", n) }

// Sentinels returns the ids of <extra_id_0> .. <extra_id_{n-1}> in tok's
// vocabulary; a tokenizer without them (or without token lookup) is an
// error naming the first missing one.
func Sentinels(tok tokenizer.Tokenizer, n int) ([]int, error) {
	look, ok := tok.(interface{ ID(string) (int, bool) })
	if !ok {
		return nil, fmt.Errorf("the %T tokenizer cannot look tokens up: no sentinel tokens", tok)
	}
	out := make([]int, n)
	for i := range out {
		id, ok := look.ID(SentinelToken(i))
		if !ok {
			return nil, fmt.Errorf("the tokenizer has no %s (T5's sentinels <extra_id_0> .. <extra_id_%d> are needed)", SentinelToken(i), n-1)
		}
		out[i] = id
	}
	return out, nil
}

// TrainVocab learns a WordPiece vocabulary of vocabSize tokens on texts
// (tokenizer.TrainWordPiece, lowercased) and appends numSentinels sentinel
// tokens, as T5 appends its extra ids after the SentencePiece pieces: a
// vocabulary for a T5 trained from scratch where no SentencePiece model is
// at hand. Its [PAD] is id 0 (T5's pad and decoder start) and [SEP] ends
// every sequence.
func TrainVocab(texts []string, vocabSize, numSentinels int) (*tokenizer.WordPiece, error) {
	opts := tokenizer.WordPieceOptions{BasicOptions: tokenizer.BasicOptions{Lowercase: true}}
	vocab, err := tokenizer.TrainWordPiece(texts, tokenizer.TrainOptions{VocabSize: vocabSize, Basic: opts.BasicOptions})
	if err != nil {
		return nil, err
	}
	for i := 0; i < numSentinels; i++ {
		vocab = append(vocab, SentinelToken(i))
	}
	return tokenizer.NewWordPiece(vocab, opts)
}
