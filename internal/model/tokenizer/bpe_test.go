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

func gpt2(t *testing.T) *BPE {
	t.Helper()
	d := filepath.Join(datadirtest.Dir(t), "tokenizers", "gpt2")
	tok, err := LoadBPE(filepath.Join(d, "vocab.json"), filepath.Join(d, "merges.txt"), BPEOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestBPEGolden compares with testdata/bpe_golden.jsonl, produced by an
// independent Python implementation of OpenAI's GPT-2 encoder
// (testdata/gen_bpe_golden.py) over real STS/NLI sentences and edge cases.
func TestBPEGolden(t *testing.T) {
	t.Parallel()
	tok := gpt2(t)
	f, err := os.Open("testdata/bpe_golden.jsonl")
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
		if len(got) == 0 && len(row.IDs) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, row.IDs) {
			bad++
			if bad <= 5 {
				t.Errorf("%q:\n got  %v\n want %v\n pieces %q", row.Text, got, row.IDs, gpt2Split(row.Text))
			}
		}
		// Byte-level BPE is lossless.
		if d := tok.Decode(got); d != row.Text {
			t.Errorf("Decode(Encode(%q)) = %q", row.Text, d)
		}
	}
	if n < 150 {
		t.Fatalf("only %d golden rows", n)
	}
	if bad > 0 {
		t.Errorf("%d of %d golden rows differ", bad, n)
	}
}

func TestGPT2Split(t *testing.T) {
	t.Parallel()
	got := gpt2Split("I'm  here!! 42x\t\tend ")
	want := []string{"I", "'m", " ", " here", "!!", " 42", "x", "\t", "\t", "end", " "}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("split %q, want %q", got, want)
	}
}

// TestRoBERTaFraming uses a tiny RoBERTa-style vocabulary: <s> ... </s>
// framing, <pad> padding, <mask> kept whole and eating the space before it.
func TestRoBERTaFraming(t *testing.T) {
	t.Parallel()
	vocab := map[string]int{"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "a": 4, "b": 5, "Ġ": 6, "Ġa": 7, "ab": 8, "<mask>": 9}
	tok, err := NewBPE(vocab, [][2]string{{"Ġ", "a"}, {"a", "b"}}, BPEOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Encode("ab a <mask>b", 0); !reflect.DeepEqual(got, []int{0, 8, 7, 9, 5, 2}) {
		t.Fatalf("encode %v", got)
	}
	b := tok.EncodeBatch([]string{"ab", "ab a a"}, 4)
	if !reflect.DeepEqual(b.IDs, [][]int{{0, 8, 2, 1}, {0, 8, 7, 2}}) || !reflect.DeepEqual(b.Lengths, []int{3, 4}) {
		t.Fatalf("batch %+v", b)
	}
	dir := t.TempDir()
	if err := tok.Save(dir); err != nil {
		t.Fatal(err)
	}
	again, err := LoadBPE(filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt"), BPEOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Encode("ab a", 0); !reflect.DeepEqual(got, []int{0, 8, 7, 2}) {
		t.Fatalf("reloaded encode %v", got)
	}
	os.WriteFile(filepath.Join(dir, "merges.txt"), []byte("#version: 0.2\nĠ a\nbad\n"), 0o644)
	if _, err := LoadBPE(filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt"), BPEOptions{}); err == nil || !strings.Contains(err.Error(), "merges.txt:3") {
		t.Fatalf("bad merges line: %v", err)
	}
}
