package tokenizer

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeBPE writes vocab.json (raw JSON) and merges.txt into a fresh
// directory and loads them.
func writeBPE(t *testing.T, vocab, merges string) (*BPE, error) {
	t.Helper()
	dir := t.TempDir()
	v, m := filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt")
	os.WriteFile(v, []byte(vocab), 0o644)
	os.WriteFile(m, []byte(merges), 0o644)
	return LoadBPE(v, m, BPEOptions{})
}

// TestBPEVocabIDsBounded: an id beyond the vocabulary's size (which sized
// an allocation: 1e9 ran out of memory) or one that overflows (2^63-1
// panicked) is refused, naming vocab.json.
func TestBPEVocabIDsBounded(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"2", "5000000", "9223372036854775807"} {
		tok, err := writeBPE(t, `{"a": 0, "b": `+id+`}`, "#version: 0.2\n")
		if !errors.Is(err, ErrVocab) || !strings.Contains(err.Error(), "vocab.json") {
			t.Errorf("id %s: tokenizer %v, err = %v, want ErrVocab naming vocab.json", id, tok != nil, err)
		}
	}
	if _, err := writeBPE(t, `{"a": 0, "b": 1, "ab": 2}`, "#version: 0.2\na b\n"); err != nil {
		t.Errorf("a dense vocabulary: %v", err)
	}
}

// TestBPEMergeOutsideVocab: a merge whose parts or result the vocabulary
// lacks is refused at its line (Hugging Face's tokenizers refuse such
// files); it used to be dropped silently, so that "qxz" encoded as "z".
func TestBPEMergeOutsideVocab(t *testing.T) {
	t.Parallel()
	for _, merges := range []string{"q x\n", "x z\nq x\n", "q y\n"} {
		tok, err := writeBPE(t, `{"q": 0, "x": 1, "z": 2, "xz": 3}`, "#version: 0.2\n"+merges)
		if !errors.Is(err, ErrVocab) || !strings.Contains(err.Error(), "merges.txt:") {
			var got []int
			if tok != nil {
				got = tok.IDs("qxz")
			}
			t.Errorf("merges %q: err = %v (qxz encodes as %v), want ErrVocab naming merges.txt and the line", merges, err, got)
		}
	}
}

// TestSentinelsBounded: a sentinel count that overflows the vocabulary's
// size is refused (it used to pass the size check and give negative ids).
func TestSentinelsBounded(t *testing.T) {
	t.Parallel()
	m := &SPModel{ModelType: 1, Pieces: []string{"<unk>", "a"}, Scores: []float32{0, -1}, Types: []PieceType{PieceUnknown, PieceNormal},
		Normalizer: NormalizerSpec{EscapeWhitespaces: true}}
	for _, n := range []int{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt32} {
		if tok, err := NewSentencePiece(m, n); !errors.Is(err, ErrVocab) {
			size := 0
			if tok != nil {
				size = tok.Size()
			}
			t.Errorf("%d sentinels: size %d, err = %v, want ErrVocab", n, size, err)
		}
	}
	if _, err := NewSentencePiece(m, 100); err != nil {
		t.Errorf("100 sentinels: %v", err)
	}
}

// TestUnigramJSONIDsBounded: tokenizer.json's unk_id and added tokens
// beyond the vocabulary are refused or skipped, never indexed.
func TestUnigramJSONIDsBounded(t *testing.T) {
	t.Parallel()
	f := map[string]any{"model": map[string]any{"type": "Unigram", "unk_id": 0, "vocab": [][2]any{{"<unk>", 0.0}, {"a", -1.0}}},
		"added_tokens": []map[string]any{{"id": math.MaxInt64, "content": "x", "special": true}}}
	b, _ := json.Marshal(f)
	p := filepath.Join(t.TempDir(), "tokenizer.json")
	os.WriteFile(p, b, 0o644)
	if _, err := LoadUnigramJSON(p, 0); err != nil {
		t.Errorf("an added token beyond the vocabulary: %v", err)
	}
}
