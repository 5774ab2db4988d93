package checkpoint

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"repro/internal/model/safetensors"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

func tinyConfig() transformer.Config {
	return transformer.Config{VocabSize: 40, Hidden: 16, Layers: 2, Heads: 2, Intermediate: 24, MaxPosition: 20,
		TypeVocab: 2, HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12, PadID: 0, Pooler: true}
}

func newEncoder(t testing.TB, c transformer.Config, seed uint64) *transformer.Encoder {
	t.Helper()
	e, err := transformer.NewEncoder(c, rand.New(rand.NewPCG(seed, seed)))
	if err != nil {
		t.Fatal(err)
	}
	// Non-trivial layer norms and biases, so a mis-mapped vector shows.
	r := rand.New(rand.NewPCG(seed, 99))
	for _, p := range e.NamedParams() {
		d := tensor.Data(p.Param)
		for i := range d {
			d[i] += float32(r.NormFloat64() * 0.05)
		}
	}
	return e
}

var seqs = [][]int{{2, 5, 7, 9, 3}, {2, 11, 3}, {2, 30, 31, 32, 33, 34, 3}}

func encode(t *testing.T, e *transformer.Encoder, p transformer.Pooling) [][]float32 {
	t.Helper()
	v, err := e.Encode(seqs, p)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// writeHF writes e in Hugging Face's layout by hand: a config.json as HF
// writes it and model.safetensors with prefix+name tensors.
func writeHF(t testing.TB, dir string, e *transformer.Encoder, prefix, configJSON string, extra map[string]safetensors.Tensor) {
	t.Helper()
	ts := map[string]safetensors.Tensor{}
	for _, p := range e.NamedParams() {
		ts[prefix+p.Name] = safetensors.Tensor{Shape: p.Shape, Data: append([]float32(nil), tensor.Data(p.Param)...)}
	}
	for k, v := range extra {
		ts[k] = v
	}
	if err := safetensors.WriteFile(filepath.Join(dir, FileWeights), ts, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileConfig), []byte(configJSON), 0o644); err != nil {
		t.Fatal(err)
	}
}

const bertConfig = `{
  "architectures": ["BertForMaskedLM"],
  "attention_probs_dropout_prob": 0.1,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 16,
  "initializer_range": 0.02,
  "intermediate_size": 24,
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 20,
  "model_type": "bert",
  "num_attention_heads": 2,
  "num_hidden_layers": 2,
  "pad_token_id": 0,
  "position_embedding_type": "absolute",
  "transformers_version": "4.36.0",
  "type_vocab_size": 2,
  "use_cache": true,
  "vocab_size": 40
}`

const robertaConfig = `{
  "architectures": ["RobertaForMaskedLM"],
  "attention_probs_dropout_prob": 0.1,
  "bos_token_id": 0,
  "eos_token_id": 2,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 16,
  "intermediate_size": 24,
  "layer_norm_eps": 1e-05,
  "max_position_embeddings": 22,
  "model_type": "roberta",
  "num_attention_heads": 2,
  "num_hidden_layers": 2,
  "pad_token_id": 1,
  "type_vocab_size": 1,
  "vocab_size": 40
}`

func sameVectors(a, b [][]float32) bool { return reflect.DeepEqual(a, b) }

func TestLoadHFBert(t *testing.T) {
	src := newEncoder(t, tinyConfig(), 1)
	for _, prefix := range []string{"", "bert."} {
		dir := t.TempDir()
		// An MLM head and the position_ids buffer, as in HF files.
		extra := map[string]safetensors.Tensor{
			prefix + "embeddings.position_ids": {Shape: []int{1, 20}, Data: make([]float32, 20)},
			"cls.predictions.bias":             {Shape: []int{40}, Data: make([]float32, 40)},
		}
		writeHF(t, dir, src, prefix, bertConfig, extra)
		m, err := LoadEncoder(dir)
		if err != nil {
			t.Fatalf("prefix %q: %v", prefix, err)
		}
		if m.Config.PositionOffset != 0 || m.Encoder.Pooler == nil || len(m.Ignored) != 2 {
			t.Fatalf("prefix %q: offset %d pooler %v ignored %v", prefix, m.Config.PositionOffset, m.Encoder.Pooler != nil, m.Ignored)
		}
		want, got := src.NamedParams(), m.Encoder.NamedParams()
		for i := range want {
			if want[i].Name != got[i].Name || !reflect.DeepEqual(want[i].Shape, got[i].Shape) || !reflect.DeepEqual(tensor.Data(want[i].Param), tensor.Data(got[i].Param)) {
				t.Fatalf("prefix %q: parameter %s differs after loading", prefix, want[i].Name)
			}
		}
		for _, p := range []transformer.Pooling{transformer.PoolCLS, transformer.PoolMean} {
			if !sameVectors(encode(t, m.Encoder, p), encode(t, src, p)) {
				t.Fatalf("prefix %q: %s forward pass differs from the source model", prefix, p)
			}
		}
	}
}

// TestLoadHFRoberta: RoBERTa positions start at pad+1 = 2; the loaded model
// must match a source built with that offset, and not one without it.
func TestLoadHFRoberta(t *testing.T) {
	c := tinyConfig()
	c.MaxPosition, c.TypeVocab, c.PadID, c.PositionOffset, c.LayerNormEps, c.Pooler = 22, 1, 1, 2, 1e-5, false
	src := newEncoder(t, c, 2)
	dir := t.TempDir()
	writeHF(t, dir, src, "roberta.", robertaConfig, nil)
	m, err := LoadEncoder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.PositionOffset != 2 || m.Config.PadID != 1 || m.Encoder.Pooler != nil {
		t.Fatalf("config %+v", m.Config.Config)
	}
	seqs := [][]int{{0, 5, 7, 9, 2}, {0, 11, 2}}
	got, err := m.Encoder.Encode(seqs, transformer.PoolMean)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := src.Encode(seqs, transformer.PoolMean)
	if !sameVectors(got, want) {
		t.Fatal("forward pass differs from the source model")
	}
	c0 := c
	c0.PositionOffset = 0
	noOffset, _ := transformer.NewEncoder(c0, rand.New(rand.NewPCG(0, 0)))
	if _, err := Apply(noOffset.NamedParams(), mustRead(t, dir)); err != nil {
		t.Fatal(err)
	}
	if other, _ := noOffset.Encode(seqs, transformer.PoolMean); sameVectors(other, want) {
		t.Fatal("position offset has no effect; the test cannot tell")
	}
}

func mustRead(t *testing.T, dir string) map[string]safetensors.Tensor {
	f, err := safetensors.ReadFile(filepath.Join(dir, FileWeights))
	if err != nil {
		t.Fatal(err)
	}
	return f.Tensors
}

func TestSaveLoadRoundTrip(t *testing.T) {
	src := newEncoder(t, tinyConfig(), 3)
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s"}
	tok, err := tokenizer.NewWordPiece(vocab, tokenizer.WordPieceOptions{BasicOptions: tokenizer.BasicOptions{Lowercase: true}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := SaveEncoder(dir, src, tok, map[string]any{"pooling": "cls"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{FileWeights, FileConfig, FileVocab, FileTokenizerConfig} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("missing %s: %v", f, err)
		}
	}
	m, err := LoadEncoder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.Pooling() != "cls" || m.Config.ModelType != "bert" || m.Tokenizer == nil {
		t.Fatalf("config %+v tokenizer %v", m.Config, m.Tokenizer)
	}
	if got := m.Tokenizer.Encode("Hello worlds", 0); !reflect.DeepEqual(got, []int{2, 5, 6, 7, 3}) {
		t.Fatalf("tokenizer %v", got)
	}
	if !sameVectors(encode(t, m.Encoder, transformer.PoolCLS), encode(t, src, transformer.PoolCLS)) {
		t.Fatal("forward pass differs after save/load")
	}
}

func TestLoadErrors(t *testing.T) {
	src := newEncoder(t, tinyConfig(), 4)
	params := src.NamedParams()
	good := map[string]safetensors.Tensor{}
	for _, p := range params {
		good["bert."+p.Name] = safetensors.Tensor{Shape: p.Shape, Data: tensor.Data(p.Param)}
	}
	clone := func() map[string]safetensors.Tensor {
		m := map[string]safetensors.Tensor{}
		for k, v := range good {
			m[k] = v
		}
		return m
	}
	dst := newEncoder(t, tinyConfig(), 5).NamedParams()

	f := clone()
	delete(f, "bert.encoder.layer.1.attention.self.key.weight")
	delete(f, "bert.embeddings.LayerNorm.bias")
	_, err := Apply(dst, f)
	if err == nil || !strings.Contains(err.Error(), "missing tensors: embeddings.LayerNorm.bias [16], encoder.layer.1.attention.self.key.weight [16 16]") {
		t.Errorf("missing: %v", err)
	}

	f = clone()
	f["bert.encoder.layer.0.mystery.weight"] = safetensors.Tensor{Shape: []int{1}, Data: []float32{1}}
	if _, err := Apply(dst, f); err == nil || !strings.Contains(err.Error(), "unexpected tensors") || !strings.Contains(err.Error(), "bert.encoder.layer.0.mystery.weight") {
		t.Errorf("unexpected: %v", err)
	}

	f = clone()
	w := f["bert.encoder.layer.0.intermediate.dense.weight"]
	f["bert.encoder.layer.0.intermediate.dense.weight"] = safetensors.Tensor{Shape: []int{16, 24}, Data: w.Data}
	if _, err := Apply(dst, f); err == nil || !strings.Contains(err.Error(), `"bert.encoder.layer.0.intermediate.dense.weight" has shape [16 24], model parameter "encoder.layer.0.intermediate.dense.weight" has shape [24 16]`) {
		t.Errorf("shape: %v", err)
	}
	// Nothing was half-loaded by the failed attempts.
	if reflect.DeepEqual(tensor.Data(dst[0].Param), tensor.Data(params[0].Param)) {
		t.Error("a failed Apply modified parameters")
	}

	// TF-era gamma/beta names load.
	f = clone()
	f["bert.embeddings.LayerNorm.gamma"] = f["bert.embeddings.LayerNorm.weight"]
	f["bert.embeddings.LayerNorm.beta"] = f["bert.embeddings.LayerNorm.bias"]
	delete(f, "bert.embeddings.LayerNorm.weight")
	delete(f, "bert.embeddings.LayerNorm.bias")
	if _, err := Apply(dst, f); err != nil {
		t.Errorf("gamma/beta: %v", err)
	}

	dir := t.TempDir()
	if _, err := LoadEncoder(dir); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("no config: %v", err)
	}
	os.WriteFile(filepath.Join(dir, FileConfig), []byte(strings.Replace(bertConfig, `"bert"`, `"t5"`, 1)), 0o644)
	if _, err := LoadEncoder(dir); err == nil || !strings.Contains(err.Error(), `model_type "t5"`) {
		t.Errorf("t5: %v", err)
	}
	os.WriteFile(filepath.Join(dir, FileConfig), []byte(bertConfig), 0o644)
	if _, err := LoadEncoder(dir); err == nil || !strings.Contains(err.Error(), "model.safetensors") {
		t.Errorf("no weights: %v", err)
	}
	os.WriteFile(filepath.Join(dir, FileConfig), []byte(strings.Replace(bertConfig, `"num_attention_heads": 2`, `"num_attention_heads": 3`, 1)), 0o644)
	if _, err := ReadConfig(dir); err == nil || !strings.Contains(err.Error(), "num_attention_heads") {
		t.Errorf("bad heads: %v", err)
	}
}

func TestBPETokenizerFiles(t *testing.T) {
	vocab := map[string]int{"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "a": 4, "b": 5, "Ġ": 6, "Ġa": 7, "ab": 8, "<mask>": 9}
	tok, err := tokenizer.NewBPE(vocab, [][2]string{{"Ġ", "a"}, {"a", "b"}}, tokenizer.BPEOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := SaveTokenizer(dir, tok, 20); err != nil {
		t.Fatal(err)
	}
	back, err := LoadTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Encode("ab a", 0); !reflect.DeepEqual(got, []int{0, 8, 7, 2}) {
		t.Fatalf("reloaded BPE encodes %v", got)
	}
	if _, err := LoadTokenizer(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no tokenizer") {
		t.Fatalf("empty dir: %v", err)
	}
}

// Pooling returns Repro["pooling"] as a string ("" when unset).
func (c Config) Pooling() string {
	s, _ := c.Repro["pooling"].(string)
	return s
}
