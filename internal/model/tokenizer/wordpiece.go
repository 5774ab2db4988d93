// Package tokenizer turns text into token ids for the transformer models.
//
// WordPiece is the BERT tokenizer, written to match transformers'
// BertTokenizer (the "slow" Python one, which is the reference the fast Rust
// one is tested against): Basic pre-tokenization, then greedy longest-match
// WordPiece with "##" continuation pieces, a word longer than 100 runes or
// with no complete segmentation becoming a single [UNK]. Special tokens that
// appear literally in the text ("[MASK]", case-sensitive) are kept whole, as
// transformers does for added tokens. The golden test compares against a
// committed Python re-implementation of that logic run over real STS/NLI
// sentences (testdata/gen_golden.py).
//
// TrainWordPiece learns a vocabulary for models trained from scratch; see
// its doc for the algorithm. BPE is GPT-2's byte-level BPE (RoBERTa, GPT-2).
// SentencePiece is the Unigram tokenizer of T5 (spiece.model, or the Unigram
// model of a tokenizer.json), a port of sentencepiece's normaliser and
// Viterbi checked id for id against python sentencepiece; TrainUnigram
// learns such a model (sentencepiece's EM-and-prune trainer).
//
// All tokenizers satisfy Tokenizer, so model code is independent of the
// scheme; batches are padded to the longest sequence with explicit lengths,
// which is what the batched attention operator needs for its mask.
package tokenizer

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Tokenizer is what models and training stages need from a tokenizer.
type Tokenizer interface {
	// Encode returns the ids of text framed by the model's special tokens
	// ([CLS] ... [SEP] or <s> ... </s>), truncated to at most maxLen ids
	// (maxLen <= 0: no limit).
	Encode(text string, maxLen int) []int
	// EncodeBatch encodes every text and pads to the longest.
	EncodeBatch(texts []string, maxLen int) Batch
	// Decode turns ids back into text, skipping special tokens.
	Decode(ids []int) string
	// Size is the vocabulary size (the embedding table's rows).
	Size() int
	// Special returns the special token ids.
	Special() Specials
}

// Specials are the special token ids; -1 where the vocabulary lacks one.
type Specials struct {
	CLS, SEP, PAD, UNK, MASK int
}

// Batch is a padded batch of id sequences: IDs[i] has len(IDs[0]) ids, the
// first Lengths[i] real and the rest PAD.
type Batch struct {
	IDs     [][]int
	Lengths []int
	Pad     int
}

// Len is the padded sequence length.
func (b Batch) Len() int {
	if len(b.IDs) == 0 {
		return 0
	}
	return len(b.IDs[0])
}

// Flat returns the ids row-major, len(IDs) x Len().
func (b Batch) Flat() []int {
	t := b.Len()
	out := make([]int, 0, len(b.IDs)*t)
	for _, r := range b.IDs {
		out = append(out, r...)
	}
	return out
}

// Mask returns 1 for real tokens and 0 for padding, row-major.
func (b Batch) Mask() []float32 {
	t := b.Len()
	m := make([]float32, len(b.IDs)*t)
	for i, n := range b.Lengths {
		for j := 0; j < n; j++ {
			m[i*t+j] = 1
		}
	}
	return m
}

// pad builds a Batch from unpadded sequences.
func pad(seqs [][]int, padID int) Batch {
	longest := 0
	for _, s := range seqs {
		longest = max(longest, len(s))
	}
	b := Batch{IDs: make([][]int, len(seqs)), Lengths: make([]int, len(seqs)), Pad: padID}
	for i, s := range seqs {
		row := make([]int, longest)
		copy(row, s)
		for j := len(s); j < longest; j++ {
			row[j] = padID
		}
		b.IDs[i] = row
		b.Lengths[i] = len(s)
	}
	return b
}

// WordPieceOptions configures a WordPiece tokenizer. The zero value plus
// Lowercase=true is bert-base-uncased.
type WordPieceOptions struct {
	BasicOptions
	// MaxInputCharsPerWord: longer words become [UNK] (default 100).
	MaxInputCharsPerWord int
}

// WordPiece is the BERT tokenizer.
type WordPiece struct {
	opts    WordPieceOptions
	vocab   map[string]int
	tokens  []string
	special Specials
	// literal special tokens kept whole when they appear in text.
	literals []string
}

// Special token strings of BERT vocabularies.
const (
	TokCLS  = "[CLS]"
	TokSEP  = "[SEP]"
	TokPAD  = "[PAD]"
	TokUNK  = "[UNK]"
	TokMASK = "[MASK]"
)

// NewWordPiece builds a tokenizer from the vocabulary, one token per id.
// [CLS], [SEP], [PAD] and [UNK] must be present; [MASK] is optional.
func NewWordPiece(tokens []string, o WordPieceOptions) (*WordPiece, error) {
	if o.MaxInputCharsPerWord <= 0 {
		o.MaxInputCharsPerWord = 100
	}
	t := &WordPiece{opts: o, vocab: make(map[string]int, len(tokens)), tokens: tokens}
	for i, tok := range tokens {
		if _, dup := t.vocab[tok]; dup {
			// transformers keeps the last id for a duplicate line; a
			// duplicate means a corrupt vocabulary, so refuse it.
			return nil, fmt.Errorf("wordpiece vocabulary: token %q appears twice (ids %d and %d)", tok, t.vocab[tok], i)
		}
		t.vocab[tok] = i
	}
	id := func(s string, required bool) (int, error) {
		if v, ok := t.vocab[s]; ok {
			return v, nil
		}
		if required {
			return -1, fmt.Errorf("wordpiece vocabulary: special token %s missing", s)
		}
		return -1, nil
	}
	var err error
	if t.special.CLS, err = id(TokCLS, true); err != nil {
		return nil, err
	}
	if t.special.SEP, err = id(TokSEP, true); err != nil {
		return nil, err
	}
	if t.special.PAD, err = id(TokPAD, true); err != nil {
		return nil, err
	}
	if t.special.UNK, err = id(TokUNK, true); err != nil {
		return nil, err
	}
	t.special.MASK, _ = id(TokMASK, false)
	for _, s := range []string{TokCLS, TokSEP, TokPAD, TokUNK, TokMASK} {
		if _, ok := t.vocab[s]; ok {
			t.literals = append(t.literals, s)
		}
	}
	return t, nil
}

// LoadWordPiece reads a vocab.txt (one token per line, id = line number - 1).
func LoadWordPiece(path string, o WordPieceOptions) (*WordPiece, error) {
	tokens, err := ReadVocab(path)
	if err != nil {
		return nil, err
	}
	t, err := NewWordPiece(tokens, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ReadVocab reads a vocab.txt. Lines keep inner spaces; only the line ending
// (and a trailing '\r') is removed, as transformers' load_vocab does.
func ReadVocab(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read vocabulary: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var tokens []string
	for line := 1; sc.Scan(); line++ {
		tok := strings.TrimRight(sc.Text(), "\r\n")
		if tok == "" {
			return nil, fmt.Errorf("%s:%d: empty token", path, line)
		}
		tokens = append(tokens, tok)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%s: empty vocabulary", path)
	}
	return tokens, nil
}

// WriteVocab writes tokens as a vocab.txt.
func WriteVocab(path string, tokens []string) error {
	var b strings.Builder
	for i, t := range tokens {
		if t == "" || strings.ContainsAny(t, "\r\n") {
			return fmt.Errorf("write vocabulary %s: token %d (%q) is empty or holds a line break", path, i, t)
		}
		b.WriteString(t)
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// Save writes the vocabulary as vocab.txt at path.
func (t *WordPiece) Save(path string) error { return WriteVocab(path, t.tokens) }

// Options returns the options the tokenizer was built with.
func (t *WordPiece) Options() WordPieceOptions { return t.opts }

// Tokens returns the vocabulary in id order (shared; do not modify).
func (t *WordPiece) Tokens() []string { return t.tokens }

// Size is the vocabulary size.
func (t *WordPiece) Size() int { return len(t.tokens) }

// Special returns the special token ids.
func (t *WordPiece) Special() Specials { return t.special }

// ID returns a token's id.
func (t *WordPiece) ID(token string) (int, bool) {
	id, ok := t.vocab[token]
	return id, ok
}

// Token returns the token with the given id ("" when out of range).
func (t *WordPiece) Token(id int) string {
	if id < 0 || id >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// Tokenize returns the WordPiece pieces of text (no [CLS]/[SEP]).
func (t *WordPiece) Tokenize(text string) []string {
	var out []string
	t.eachSegment(text, func(seg string, literal bool) {
		if literal {
			out = append(out, seg)
			return
		}
		for _, w := range Basic(seg, t.opts.BasicOptions) {
			out = t.wordPieces(w, out)
		}
	})
	return out
}

// eachSegment splits text around literal special tokens.
func (t *WordPiece) eachSegment(text string, fn func(seg string, literal bool)) {
	for text != "" {
		at, which := -1, ""
		for _, s := range t.literals {
			if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at) {
				at, which = i, s
			}
		}
		if at < 0 {
			fn(text, false)
			return
		}
		if at > 0 {
			fn(text[:at], false)
		}
		fn(which, true)
		text = text[at+len(which):]
	}
}

// wordPieces appends the greedy longest-match pieces of one word.
func (t *WordPiece) wordPieces(w string, out []string) []string {
	// bounds[i] is the byte offset of rune i, so candidate pieces are
	// substrings of w (no rune slice copies).
	bounds := make([]int, 0, len(w)+1)
	for i := range w {
		bounds = append(bounds, i)
	}
	bounds = append(bounds, len(w))
	n := len(bounds) - 1
	if n > t.opts.MaxInputCharsPerWord {
		return append(out, TokUNK)
	}
	mark := len(out)
	buf := make([]byte, 0, len(w)+2)
	for start := 0; start < n; {
		end := n
		found := ""
		for ; end > start; end-- {
			sub := w[bounds[start]:bounds[end]]
			if start > 0 {
				buf = append(append(buf[:0], "##"...), sub...)
				if _, ok := t.vocab[string(buf)]; ok { // no allocation for the lookup
					found = string(buf)
					break
				}
				continue
			}
			if _, ok := t.vocab[sub]; ok {
				found = sub
				break
			}
		}
		if found == "" {
			return append(out[:mark], TokUNK)
		}
		out = append(out, found)
		start = end
	}
	return out
}

// IDs returns the ids of text's pieces, without special tokens.
func (t *WordPiece) IDs(text string) []int {
	pieces := t.Tokenize(text)
	ids := make([]int, len(pieces))
	for i, p := range pieces {
		id, ok := t.vocab[p]
		if !ok {
			id = t.special.UNK
		}
		ids[i] = id
	}
	return ids
}

// Encode returns [CLS] pieces [SEP], the pieces truncated so the whole is at
// most maxLen ids (maxLen <= 0: no limit; maxLen < 2 keeps only the frame).
func (t *WordPiece) Encode(text string, maxLen int) []int {
	ids := t.IDs(text)
	if maxLen > 0 {
		ids = ids[:min(len(ids), max(maxLen-2, 0))]
	}
	out := make([]int, 0, len(ids)+2)
	out = append(out, t.special.CLS)
	out = append(out, ids...)
	return append(out, t.special.SEP)
}

// EncodePair returns [CLS] a [SEP] b [SEP] and the token type ids (0 for the
// first segment, 1 for the second), truncating the longer segment one piece
// at a time until the whole fits maxLen (transformers' "longest_first").
func (t *WordPiece) EncodePair(a, b string, maxLen int) (ids, typeIDs []int) {
	x, y := t.IDs(a), t.IDs(b)
	if maxLen > 0 {
		for len(x)+len(y)+3 > maxLen && len(x)+len(y) > 0 {
			if len(x) > len(y) {
				x = x[:len(x)-1]
			} else {
				y = y[:len(y)-1]
			}
		}
	}
	ids = append(ids, t.special.CLS)
	ids = append(ids, x...)
	ids = append(ids, t.special.SEP)
	n := len(ids)
	ids = append(ids, y...)
	ids = append(ids, t.special.SEP)
	typeIDs = make([]int, len(ids))
	for i := n; i < len(ids); i++ {
		typeIDs[i] = 1
	}
	return ids, typeIDs
}

// EncodeBatch encodes each text and pads with [PAD].
func (t *WordPiece) EncodeBatch(texts []string, maxLen int) Batch {
	seqs := make([][]int, len(texts))
	for i, s := range texts {
		seqs[i] = t.Encode(s, maxLen)
	}
	return pad(seqs, t.special.PAD)
}

// Decode joins pieces, gluing "##" continuations to the previous piece and
// skipping special tokens and out-of-range ids.
func (t *WordPiece) Decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		if id < 0 || id >= len(t.tokens) || id == t.special.CLS || id == t.special.SEP || id == t.special.PAD {
			continue
		}
		tok := t.tokens[id]
		if rest, ok := strings.CutPrefix(tok, "##"); ok && b.Len() > 0 {
			b.WriteString(rest)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(tok)
	}
	return b.String()
}
