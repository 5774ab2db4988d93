package tokenizer

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"repro/internal/datadir/datadirtest"
)

func wikiSentences(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, l := range gzLines(t, filepath.Join(datadirtest.Dir(t), "unlabeled", "wiki.txt.gz")) {
		if s := strings.TrimSpace(string(l)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// TestTrainUnigramAgainstSentencePiece trains on the Wikipedia sentences
// at the vocabulary size python sentencepiece was given
// (testdata/gen_unigram_train_ref.py) and compares the segmentation of
// 3000 held-out STS/SICK sentences: pieces per sentence within 3% of
// sentencepiece's, as few unknowns, text round-trips.
func TestTrainUnigramAgainstSentencePiece(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("trains a vocabulary")
	}
	var ref struct {
		VocabSize         int     `json:"vocab_size"`
		HeldOut           int     `json:"held_out"`
		PiecesPerSentence float64 `json:"pieces_per_sentence"`
		UnkShare          float64 `json:"unk_share"`
	}
	if err := json.Unmarshal(mustRead(t, "testdata/unigram_train_ref.json"), &ref); err != nil {
		t.Fatal(err)
	}
	corpus := wikiSentences(t)
	start := time.Now()
	m, err := TrainUnigram(corpus, UnigramTrainOptions{VocabSize: ref.VocabSize})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if len(m.Pieces) != ref.VocabSize {
		t.Fatalf("%d pieces, want %d", len(m.Pieces), ref.VocabSize)
	}
	tok, err := NewSentencePiece(m, NumT5Sentinels)
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, g := range readSPMGolden(t) {
		if g.Model == "t5like" && len(held) < ref.HeldOut {
			held = append(held, g.Text)
		}
	}
	pieces, unk, exact := 0, 0, 0
	for _, s := range held {
		ids := tok.IDs(s)
		pieces += len(ids)
		for _, id := range ids {
			if id == tok.Special().UNK {
				unk++
			}
		}
		if tok.Decode(tok.Encode(s, 0)) == strings.Join(strings.Fields(s), " ") {
			exact++
		}
	}
	per := float64(pieces) / float64(len(held))
	t.Logf("trained %d pieces on %d sentences in %v; held-out pieces/sentence %.3f (sentencepiece %.3f), unk share %.5f (%.5f), %d/%d decode to their text",
		len(m.Pieces), len(corpus), took.Round(time.Millisecond), per, ref.PiecesPerSentence, float64(unk)/float64(pieces), ref.UnkShare, exact, len(held))
	if math.Abs(per-ref.PiecesPerSentence)/ref.PiecesPerSentence > 0.03 {
		t.Errorf("pieces per sentence %.3f, sentencepiece %.3f: more than 3%% apart", per, ref.PiecesPerSentence)
	}
	if float64(unk)/float64(pieces) > 3*ref.UnkShare+1e-3 {
		t.Errorf("unk share %.5f, sentencepiece %.5f", float64(unk)/float64(pieces), ref.UnkShare)
	}
	if exact < len(held)*95/100 {
		t.Errorf("only %d of %d held-out sentences decode to their text", exact, len(held))
	}
	// The model saves and reloads as a sentencepiece file.
	path := filepath.Join(t.TempDir(), "spiece.model")
	if err := tok.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadSentencePiece(path, NumT5Sentinels)
	if err != nil || back.Size() != tok.Size() {
		t.Fatalf("reload: %v", err)
	}
}

func TestTrainUnigramSmall(t *testing.T) {
	t.Parallel()
	texts := []string{"the cat sat on the mat", "the dog sat on the log", "a cat and a dog", "cats and dogs sat"}
	var corpus []string
	for i := 0; i < 20; i++ {
		corpus = append(corpus, texts...)
	}
	m, err := TrainUnigram(corpus, UnigramTrainOptions{VocabSize: 25})
	if err != nil {
		t.Fatal(err)
	}
	a, err := TrainUnigram(corpus, UnigramTrainOptions{VocabSize: 25})
	if err != nil || !equalModels(a, m) {
		t.Fatal("training is not deterministic")
	}
	tok, err := NewSentencePiece(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range texts {
		if got := tok.Decode(tok.Encode(s, 0)); got != s {
			t.Errorf("%q -> %q", s, got)
		}
	}
	if got := len(tok.IDs("the cat sat")); got > 5 {
		t.Errorf("frequent words not learnt: %v", tok.Pieces("the cat sat"))
	}
	t5, err := TrainT5SentencePiece(corpus, 25, 5)
	if err != nil || t5.Size() != 30 || t5.Sentinel(0) != 29 || t5.Decode(t5.Encode("the cat", 0)) != "the cat" {
		t.Fatalf("TrainT5SentencePiece: %v", err)
	}
	if _, err := TrainUnigram(corpus, UnigramTrainOptions{VocabSize: 40}); err == nil || !strings.Contains(err.Error(), "too large for this text: only 27 pieces") {
		t.Errorf("vocabulary larger than the text allows: %v", err)
	}
	if _, err := TrainUnigram(nil, UnigramTrainOptions{VocabSize: 40}); err == nil {
		t.Error("empty corpus accepted")
	}
	if _, err := TrainUnigram(corpus, UnigramTrainOptions{VocabSize: 3}); err == nil {
		t.Error("vocabulary of 3 accepted")
	}
}

func equalModels(a, b *SPModel) bool {
	if len(a.Pieces) != len(b.Pieces) {
		return false
	}
	for i := range a.Pieces {
		if a.Pieces[i] != b.Pieces[i] || a.Scores[i] != b.Scores[i] {
			return false
		}
	}
	return true
}
