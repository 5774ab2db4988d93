package tokenizer

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"repro/internal/datadir/datadirtest"
)

// TestTrainBPEGolden compares the merges learned from the first 1,500
// pure-ASCII Wikipedia sentences with those of an independent, naive Python
// implementation (testdata/gen_bpe_train_golden.py).
func TestTrainBPEGolden(t *testing.T) {
	t.Parallel()
	var golden struct {
		Sentences int         `json:"sentences"`
		VocabSize int         `json:"vocab_size"`
		Merges    [][2]string `json:"merges"`
	}
	b, err := os.ReadFile("testdata/bpe_train_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(datadirtest.Dir(t), "unlabeled", "wiki.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var sents []string
	sc := bufio.NewScanner(zr)
	for sc.Scan() && len(sents) < golden.Sentences {
		if s := sc.Text(); isASCII(s) {
			sents = append(sents, s)
		}
	}
	tok, err := TrainBPE(sents, BPETrainOptions{VocabSize: golden.VocabSize})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tok.merges, golden.Merges) {
		n := 0
		for n < len(tok.merges) && n < len(golden.Merges) && tok.merges[n] == golden.Merges[n] {
			n++
		}
		t.Fatalf("%d merges, golden %d; first difference at merge %d", len(tok.merges), len(golden.Merges), n)
	}
	if tok.Size() != golden.VocabSize {
		t.Errorf("size %d, want %d", tok.Size(), golden.VocabSize)
	}
	sp := tok.Special()
	if sp.CLS != 0 || sp.PAD != 1 || sp.SEP != 2 || sp.UNK != 3 || sp.MASK != 4 {
		t.Errorf("specials %+v, want RoBERTa's <s> <pad> </s> <unk> <mask> = 0..4", sp)
	}
	// Byte level: any text round-trips, nothing is unknown.
	for _, s := range []string{sents[0], "naïve café – 東京 🙂", "  two  spaces\tand a tab"} {
		ids := tok.Encode(s, 0)
		if ids[0] != sp.CLS || ids[len(ids)-1] != sp.SEP {
			t.Errorf("%q: not framed by <s> ... </s>: %v", s, ids)
		}
		for _, id := range ids[1 : len(ids)-1] {
			if id == sp.UNK {
				t.Errorf("%q: <unk> in %v", s, ids)
			}
		}
		if got := tok.Decode(ids); got != s {
			t.Errorf("round trip %q -> %q", s, got)
		}
	}
	// Saved and reloaded, it encodes the same.
	dir := t.TempDir()
	if err := tok.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := LoadBPE(filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt"), BPEOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sents[:50] {
		if a, b := tok.Encode(s, 0), back.Encode(s, 0); !reflect.DeepEqual(a, b) {
			t.Fatalf("%q: %v before saving, %v after", s, a, b)
		}
	}
}

func TestTrainBPEErrors(t *testing.T) {
	t.Parallel()
	if _, err := TrainBPE([]string{"a b"}, BPETrainOptions{VocabSize: 100}); err == nil || !strings.Contains(err.Error(), "too small") {
		t.Errorf("small vocabulary: %v", err)
	}
	if _, err := TrainBPE(nil, BPETrainOptions{VocabSize: 1000}); err == nil || !strings.Contains(err.Error(), "no text") {
		t.Errorf("empty corpus: %v", err)
	}
	if _, err := TrainBPE([]string{"a"}, BPETrainOptions{VocabSize: 1000, Special: []string{"<s>", "a"}}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("special token equal to a byte symbol: %v", err)
	}
}
