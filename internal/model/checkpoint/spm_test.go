package checkpoint

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"repro/internal/model/tokenizer"
)

const spmTestdata = "../tokenizer/testdata/spm"

// TestSentencePieceTokenizerFiles: a directory with spiece.model, or with
// only a Unigram tokenizer.json, opens as the T5 tokenizer; SaveTokenizer
// writes spiece.model and the sentinel count; a non-model is refused.
func TestSentencePieceTokenizerFiles(t *testing.T) {
	ref, err := tokenizer.LoadSentencePiece(filepath.Join(spmTestdata, "t5like.model"), tokenizer.NumT5Sentinels)
	if err != nil {
		t.Fatal(err)
	}
	text := "Ｆｕｌｌ-width ﬁne text <extra_id_3> and more"
	want := ref.Encode(text, 0)

	saved := t.TempDir()
	if err := SaveTokenizer(saved, ref, 64); err != nil {
		t.Fatal(err)
	}
	jsonDir := t.TempDir()
	f, err := os.Open(filepath.Join(spmTestdata, "t5like.tokenizer.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(jsonDir, FileTokenizerJSON), b, 0o644)

	for name, dir := range map[string]string{"saved": saved, "tokenizer.json": jsonDir} {
		tok, err := LoadTokenizer(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, ok := tok.(*tokenizer.SentencePiece); !ok {
			t.Fatalf("%s: loaded %T", name, tok)
		}
		if got := tok.Encode(text, 0); !reflect.DeepEqual(got, want) || tok.Size() != 4100 {
			t.Fatalf("%s: encodes %v (size %d), want %v", name, got, tok.Size(), want)
		}
	}

	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, FileSPModel), []byte("# not a model\nhello\n"), 0o644)
	if _, err := LoadTokenizer(bad); err == nil || !strings.Contains(err.Error(), "not a SentencePiece model") || !strings.Contains(err.Error(), FileSPModel) {
		t.Fatalf("bad spiece.model: %v", err)
	}
	os.Remove(filepath.Join(bad, FileSPModel))
	os.WriteFile(filepath.Join(bad, FileTokenizerJSON), []byte(`{"model": {"type": "WordPiece", "vocab": {}}}`), 0o644)
	if _, err := LoadTokenizer(bad); err == nil || !strings.Contains(err.Error(), "not a SentencePiece Unigram model") {
		t.Fatalf("WordPiece tokenizer.json: %v", err)
	}
}
