package tokenizer

import (
	"os"
	"path/filepath"
	"testing"
)

// fuzzTexts exercise specials, sentinels, byte fallback and Unicode.
var fuzzTexts = []string{"", "Hello, world! qxz", "  a\tb\n[MASK] [CLS]<mask> <s></s><|endoftext|>", "ünïcödé 日本語 👍🏽", "<extra_id_0> x <extra_id_1>", "\u2581\u2581 <0x41> \xff\xfe"}

// checkTokenizer encodes and decodes the fuzz texts: every id must be
// within the vocabulary, and nothing may panic.
func checkTokenizer(t *testing.T, tok Tokenizer) {
	t.Helper()
	for _, s := range fuzzTexts {
		for _, maxLen := range []int{0, 3} {
			ids := tok.Encode(s, maxLen)
			for _, id := range ids {
				if id < 0 || id >= tok.Size() {
					t.Fatalf("Encode(%q) gave id %d, outside the vocabulary of %d", s, id, tok.Size())
				}
			}
			tok.Decode(ids)
		}
	}
	tok.EncodeBatch(fuzzTexts, 8)
}

// writeTemp writes b as dir/name.
func writeTemp(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzWordPiece: any vocab.txt loads or is refused; a loaded one encodes.
func FuzzWordPiece(f *testing.F) {
	f.Add([]byte("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n##s\n,\n!\n"))
	f.Fuzz(func(t *testing.T, vocab []byte) {
		tok, err := LoadWordPiece(writeTemp(t, t.TempDir(), "vocab.txt", vocab), WordPieceOptions{BasicOptions: BasicOptions{Lowercase: true}})
		if err != nil {
			return
		}
		checkTokenizer(t, tok)
	})
}

// FuzzBPE: any vocab.json + merges.txt load or are refused.
func FuzzBPE(f *testing.F) {
	f.Add([]byte(`{"<s>":0,"<pad>":1,"</s>":2,"<unk>":3,"a":4,"b":5,"Ġ":6,"Ġa":7,"ab":8,"<mask>":9}`), []byte("#version: 0.2\nĠ a\na b\n"))
	f.Add([]byte(`{"<|endoftext|>":0,"H":1,"e":2,"l":3,"o":4,"He":5,"ll":6,"Hell":7,"Hello":8}`), []byte("H e\nl l\nHe ll\nHell o\n"))
	f.Fuzz(func(t *testing.T, vocab, merges []byte) {
		dir := t.TempDir()
		tok, err := LoadBPE(writeTemp(t, dir, "vocab.json", vocab), writeTemp(t, dir, "merges.txt", merges), BPEOptions{})
		if err != nil {
			return
		}
		checkTokenizer(t, tok)
	})
}

// FuzzSentencePiece: any spiece.model loads or is refused, whatever
// tokenizer_config.json's extra_ids.
func FuzzSentencePiece(f *testing.F) {
	b, err := os.ReadFile("testdata/spm/bytefb.model")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, int64(100))
	f.Add(b, int64(-1))
	f.Fuzz(func(t *testing.T, model []byte, sentinels int64) {
		m, err := ParseSPModel(model)
		if err != nil {
			return
		}
		tok, err := NewSentencePiece(m, int(sentinels))
		if err != nil {
			return
		}
		checkTokenizer(t, tok)
		if tok.NumSentinels() > 0 && tok.Sentinel(0) != tok.Size()-1 {
			t.Fatalf("sentinel 0 is id %d of %d", tok.Sentinel(0), tok.Size())
		}
	})
}

// FuzzUnigramJSON: any tokenizer.json loads or is refused.
func FuzzUnigramJSON(f *testing.F) {
	f.Add([]byte(`{"added_tokens":[{"id":0,"content":"<pad>","special":true},{"id":1,"content":"</s>","special":true}],` +
		`"normalizer":{"type":"Sequence","normalizers":[{"type":"Replace","pattern":{"Regex":" {2,}"},"content":" "},{"type":"Strip"}]},` +
		`"pre_tokenizer":{"type":"Metaspace","replacement":"\u2581","add_prefix_space":true},` +
		`"model":{"type":"Unigram","unk_id":2,"vocab":[["<pad>",0],["</s>",0],["<unk>",0],["\u2581",-2],["a",-3],["\u2581a",-1.5],["<extra_id_1>",0],["<extra_id_0>",0]]}}`))
	f.Fuzz(func(t *testing.T, file []byte) {
		tok, err := LoadUnigramJSON(writeTemp(t, t.TempDir(), "tokenizer.json", file), NumT5Sentinels)
		if err != nil {
			return
		}
		checkTokenizer(t, tok)
	})
}
