package tokenizer

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"repro/internal/datadir/datadirtest"
)

func bertUncased(t testing.TB) *WordPiece {
	t.Helper()
	dir := datadirtest.Dir(t)
	tok, err := LoadWordPiece(filepath.Join(dir, "tokenizers", "bert-base-uncased", "vocab.txt"), WordPieceOptions{BasicOptions: BasicOptions{Lowercase: true}})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestWordPieceGolden compares with testdata/wordpiece_golden.jsonl, the ids
// an independent Python implementation of BertTokenizer produced
// (testdata/gen_golden.py) for real STS/NLI sentences and edge cases.
func TestWordPieceGolden(t *testing.T) {
	t.Parallel()
	tok := bertUncased(t)
	f, err := os.Open("testdata/wordpiece_golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n, bad := 0, 0
	for sc.Scan() {
		var row struct {
			Text string `json:"text"`
			IDs  []int  `json:"ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
		got := tok.Encode(row.Text, 0)
		if !reflect.DeepEqual(got, row.IDs) {
			bad++
			if bad <= 5 {
				t.Errorf("%q:\n got  %v\n want %v\n pieces %q", row.Text, got, row.IDs, tok.Tokenize(row.Text))
			}
		}
	}
	if n < 300 {
		t.Fatalf("only %d golden rows", n)
	}
	if bad > 0 {
		t.Errorf("%d of %d golden rows differ", bad, n)
	}
}

func TestWordPieceBasics(t *testing.T) {
	t.Parallel()
	tok := bertUncased(t)
	if s := tok.Special(); s.CLS != 101 || s.SEP != 102 || s.PAD != 0 || s.UNK != 100 || s.MASK != 103 {
		t.Fatalf("specials %+v", s)
	}
	got := tok.Tokenize("Unaffable runners, HELLO!")
	want := []string{"una", "##ffa", "##ble", "runners", ",", "hello", "!"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Tokenize = %q, want %q", got, want)
	}
	if d := tok.Decode(tok.Encode("Unaffable runners, HELLO!", 0)); d != "unaffable runners , hello !" {
		t.Fatalf("Decode = %q", d)
	}
	// Truncation keeps [CLS] and [SEP].
	ids := tok.Encode("one two three four five six", 5)
	if len(ids) != 5 || ids[0] != 101 || ids[4] != 102 {
		t.Fatalf("truncated = %v", ids)
	}
	b := tok.EncodeBatch([]string{"a b c", "hello", ""}, 0)
	if b.Len() != 5 || !reflect.DeepEqual(b.Lengths, []int{5, 3, 2}) {
		t.Fatalf("batch %+v", b)
	}
	if b.IDs[1][3] != 0 || b.IDs[1][4] != 0 || b.IDs[2][1] != 102 {
		t.Fatalf("padding %v", b.IDs)
	}
	if m := b.Mask(); m[5+2] != 1 || m[5+3] != 0 || len(b.Flat()) != 15 {
		t.Fatalf("mask %v", m)
	}
	pair, types := tok.EncodePair("a b c d e f", "x y", 8)
	if len(pair) != 8 || !reflect.DeepEqual(types, []int{0, 0, 0, 0, 0, 1, 1, 1}) {
		t.Fatalf("pair %v %v", pair, types)
	}
}

func TestVocabErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "vocab.txt")
	if _, err := LoadWordPiece(filepath.Join(dir, "missing.txt"), WordPieceOptions{}); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Fatalf("missing file: %v", err)
	}
	os.WriteFile(p, []byte("[PAD]\n[UNK]\n[CLS]\nhello\n"), 0o644)
	if _, err := LoadWordPiece(p, WordPieceOptions{}); err == nil || !strings.Contains(err.Error(), "[SEP]") {
		t.Fatalf("missing [SEP]: %v", err)
	}
	os.WriteFile(p, []byte("[PAD]\n[UNK]\n\n[CLS]\n[SEP]\n"), 0o644)
	if _, err := LoadWordPiece(p, WordPieceOptions{}); err == nil || !strings.Contains(err.Error(), "vocab.txt:3") {
		t.Fatalf("empty line: %v", err)
	}
	os.WriteFile(p, []byte("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[PAD]\n"), 0o644)
	if _, err := LoadWordPiece(p, WordPieceOptions{}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate: %v", err)
	}
}
