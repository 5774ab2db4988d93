package tokenizer

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"repro/internal/datadir/datadirtest"
)

// TestTrainWordPieceMerges checks the merge order on the classic BPE toy
// corpus, worked out by hand: (##e,##s) and (##s,##t) tie at 9 and "##e"
// sorts first; then ##est (9); then (l,##o) and (##o,##w) tie at 7 and
// "##o" < "l" in byte order.
func TestTrainWordPieceMerges(t *testing.T) {
	t.Parallel()
	var corpus []string
	for w, n := range map[string]int{"low": 5, "lower": 2, "newest": 6, "widest": 3} {
		for i := 0; i < n; i++ {
			corpus = append(corpus, w)
		}
	}
	v, err := TrainWordPiece(corpus, TrainOptions{VocabSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	alphabet := []string{"l", "n", "w", "##d", "##e", "##i", "##o", "##r", "##s", "##t", "##w"}
	if !reflect.DeepEqual(v[:5], []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) || !reflect.DeepEqual(v[5:16], alphabet) {
		t.Fatalf("head %q", v[:16])
	}
	if got := v[16:20]; !reflect.DeepEqual(got, []string{"##es", "##est", "##ow", "low"}) {
		t.Fatalf("first merges %q", got)
	}
	tok, err := NewWordPiece(v, WordPieceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Tokenize("lowest"); !reflect.DeepEqual(got, []string{"low", "##est"}) {
		t.Fatalf("tokenize %q", got)
	}
}

func readSTSB(t testing.TB) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(datadirtest.Dir(t), "sts", "STSB", "train.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	var out []string
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		out = append(out, fs[1], fs[2])
	}
	return out
}

// TestTrainWordPieceReal trains on STS-B train, writes and reloads the
// vocab.txt, and checks the vocabulary is usable: exact size, unique
// tokens, deterministic, frequent words whole, few [UNK]s on held-out text.
func TestTrainWordPieceReal(t *testing.T) {
	t.Parallel()
	sents := readSTSB(t)
	o := TrainOptions{VocabSize: 3000, Basic: BasicOptions{Lowercase: true}}
	v, err := TrainWordPiece(sents, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 3000 {
		t.Fatalf("size %d", len(v))
	}
	v2, _ := TrainWordPiece(sents, o)
	if !reflect.DeepEqual(v, v2) {
		t.Fatal("training is not deterministic")
	}
	p := filepath.Join(t.TempDir(), "vocab.txt")
	if err := WriteVocab(p, v); err != nil {
		t.Fatal(err)
	}
	tok, err := LoadWordPiece(p, WordPieceOptions{BasicOptions: o.Basic})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"the", "man", "is", "woman", "playing"} {
		if _, ok := tok.ID(w); !ok {
			t.Errorf("frequent word %q not in vocabulary", w)
		}
	}
	unk, total := 0, 0
	for _, s := range []string{
		"A man is playing a guitar on the stage.",
		"The government announced new economic measures on Tuesday.",
		"Two dogs are running through a snowy field.",
	} {
		for _, id := range tok.Encode(s, 0) {
			total++
			if id == tok.Special().UNK {
				unk++
			}
		}
	}
	if unk > 0 {
		t.Errorf("%d of %d ids are [UNK]", unk, total)
	}
	if _, err := TrainWordPiece(nil, o); err == nil {
		t.Error("empty corpus accepted")
	}
	if _, err := TrainWordPiece(sents, TrainOptions{VocabSize: 3}); err == nil {
		t.Error("vocab size 3 accepted")
	}
}
