package checkpoint

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"repro/internal/model/safetensors"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

// shardedSource writes a tiny BERT checkpoint split into two shards, its
// config.json, and files an index could wrongly name (a text file, a
// directory), and returns the directory and its valid index.
func shardedSource(f *testing.F) (string, string) {
	src := f.TempDir()
	e := newEncoder(f, tinyConfig(), 1)
	one, two := map[string]safetensors.Tensor{}, map[string]safetensors.Tensor{}
	var entries []string
	for i, p := range e.NamedParams() {
		name := "bert." + p.Name
		t := safetensors.Tensor{Shape: p.Shape, Data: append([]float32(nil), tensor.Data(p.Param)...)}
		shard := "model-00001-of-00002.safetensors"
		if i%2 == 1 {
			shard = "model-00002-of-00002.safetensors"
			two[name] = t
		} else {
			one[name] = t
		}
		entries = append(entries, `"`+name+`": "`+shard+`"`)
	}
	for name, ts := range map[string]map[string]safetensors.Tensor{"model-00001-of-00002.safetensors": one, "model-00002-of-00002.safetensors": two} {
		if err := safetensors.WriteFile(filepath.Join(src, name), ts, nil); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, FileConfig), []byte(bertConfig), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "notes.txt"), []byte("not weights\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(src, "sub"), 0o755); err != nil {
		f.Fatal(err)
	}
	return src, `{"metadata": {"total_size": 1}, "weight_map": {` + strings.Join(entries, ", ") + `}}`
}

// FuzzWeightsIndex: any model.safetensors.index.json beside valid shards
// opens or is refused with an error; a checkpoint that loads encodes, and
// every tensor read has the values its shape says.
func FuzzWeightsIndex(f *testing.F) {
	src, valid := shardedSource(f)
	f.Add([]byte(valid))
	f.Fuzz(func(t *testing.T, index []byte) {
		d := t.TempDir()
		for _, name := range []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", FileConfig, "notes.txt"} {
			if err := os.Link(filepath.Join(src, name), filepath.Join(d, name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Mkdir(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, FileWeightsIndex), index, 0o644); err != nil {
			t.Fatal(err)
		}
		if ts, _, err := ReadWeights(d); err == nil {
			for n, x := range ts {
				want := 1
				for _, s := range x.Shape {
					want *= s
				}
				if len(x.Data) != want {
					t.Fatalf("tensor %q of shape %v read as %d values", n, x.Shape, len(x.Data))
				}
			}
		}
		m, err := LoadEncoder(d)
		if err != nil {
			return
		}
		if _, err := m.Encoder.Encode([][]int{{0, 1}}, transformer.PoolMean); err != nil {
			t.Fatalf("a loaded encoder does not encode: %v", err)
		}
	})
}

// tokenizerSources are the tokenizer files tokenizer_config.json is read
// beside, by kind: WordPiece, byte-level BPE, spiece.model, a Unigram
// tokenizer.json.
func tokenizerSources(f *testing.F) [][2]string {
	spm, err := os.ReadFile(filepath.Join(spmTestdata, "bytefb.model"))
	if err != nil {
		f.Fatal(err)
	}
	return [][2]string{
		{FileVocab, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n##s\n,\n!\ncafé\n"},
		{FileBPEVocab, `{"<s>":0,"<pad>":1,"</s>":2,"<unk>":3,"a":4,"b":5,"Ġ":6,"Ġa":7,"ab":8,"<mask>":9}`},
		{FileSPModel, string(spm)},
		{FileTokenizerJSON, `{"added_tokens":[{"id":0,"content":"<pad>","special":true},{"id":1,"content":"</s>","special":true}],` +
			`"pre_tokenizer":{"type":"Metaspace","replacement":"\u2581","add_prefix_space":true},` +
			`"model":{"type":"Unigram","unk_id":2,"vocab":[["<pad>",0],["</s>",0],["<unk>",0],["\u2581",-2],["a",-3],["\u2581a",-1.5]]}}`},
	}
}

// fuzzTexts exercise specials, sentinels, accents, CJK and bad UTF-8.
var fuzzTexts = []string{"", "Hello, world! CAFÉ café", "[MASK] [CLS] <s></s><pad>", "日本語 👍🏽", "<extra_id_0> a <extra_id_99>", "\xff\xfe"}

// FuzzTokenizerConfig: any tokenizer_config.json beside any kind of
// tokenizer files loads a tokenizer or is refused with an error; a loaded
// one encodes within its vocabulary, and saves and loads back the same.
func FuzzTokenizerConfig(f *testing.F) {
	srcs := tokenizerSources(f)
	f.Add([]byte(`{"tokenizer_class": "BertTokenizer", "do_lower_case": false, "strip_accents": null, "tokenize_chinese_chars": true, "model_max_length": 512}`), uint8(0))
	f.Add([]byte(`{"tokenizer_class": "T5Tokenizer", "extra_ids": 100, "model_max_length": 512}`), uint8(2))
	f.Add([]byte(`{"tokenizer_class": "GPT2Tokenizer", "model_max_length": 1024, "add_prefix_space": false, "bos_token": "<|endoftext|>"}`), uint8(1))
	f.Add([]byte(`{"extra_ids": 0}`), uint8(3))
	f.Fuzz(func(t *testing.T, config []byte, kind uint8) {
		src := srcs[int(kind)%len(srcs)]
		d := t.TempDir()
		if src[0] == FileBPEVocab {
			if err := os.WriteFile(filepath.Join(d, FileMerges), []byte("#version: 0.2\nĠ a\na b\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, src[0]), []byte(src[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, FileTokenizerConfig), config, 0o644); err != nil {
			t.Fatal(err)
		}
		tok, err := LoadTokenizer(d)
		if err != nil {
			return
		}
		var enc [][]int
		for _, s := range fuzzTexts {
			ids := tok.Encode(s, 0)
			for _, id := range ids {
				if id < 0 || id >= tok.Size() {
					t.Fatalf("Encode(%q) gave id %d, outside the vocabulary of %d", s, id, tok.Size())
				}
			}
			tok.Decode(ids)
			tok.Encode(s, 3)
			enc = append(enc, ids)
		}
		tok.EncodeBatch(fuzzTexts, 8)
		// What a training stage does with it: save it beside the model,
		// and a later stage loads it back.
		saved := t.TempDir()
		if err := SaveTokenizer(saved, tok, 64); err != nil {
			t.Fatalf("a loaded %T does not save: %v", tok, err)
		}
		back, err := LoadTokenizer(saved)
		if err != nil {
			t.Fatalf("a saved %T does not load back: %v", tok, err)
		}
		if back.Size() != tok.Size() {
			t.Fatalf("saved and loaded back, %d ids became %d", tok.Size(), back.Size())
		}
		for i, s := range fuzzTexts {
			if got := back.Encode(s, 0); !reflect.DeepEqual(got, enc[i]) {
				t.Fatalf("saved and loaded back, %q encodes as %v, was %v", s, got, enc[i])
			}
		}
	})
}
