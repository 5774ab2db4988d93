package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"repro/internal/model/safetensors"
	"repro/internal/model/tokenizer"
	"repro/internal/tensor"
)

// withConfig writes a tiny valid BERT checkpoint whose config.json has
// key set to value (raw JSON).
func withConfig(t *testing.T, key, value string) string {
	t.Helper()
	dir := t.TempDir()
	writeHF(t, dir, newEncoder(t, tinyConfig(), 1), "bert.", bertConfig, nil)
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal([]byte(bertConfig), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg[key] = json.RawMessage(value)
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, FileConfig), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestConfigSizesCheckedBeforeAllocation: a size in config.json that the
// weights contradict is refused, naming the key, before it decides an
// allocation. The values here would make the old loader allocate 100-250
// MB before failing; hostile ones (TestHostileConfigSizes) ended the
// process.
func TestConfigSizesCheckedBeforeAllocation(t *testing.T) {
	for _, c := range []struct{ key, value string }{
		{"vocab_size", "2000000"},
		{"max_position_embeddings", "2000000"},
		{"type_vocab_size", "2000000"},
		{"intermediate_size", "500000"},
		{"num_hidden_layers", "10000"},
		{"hidden_size", "2048"},
	} {
		dir := withConfig(t, c.key, c.value)
		var err error
		n := allocated(func() { _, err = LoadEncoder(dir) })
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != c.key {
			t.Errorf("%s = %s: err = %v, want a *ConfigError for %s", c.key, c.value, err, c.key)
			continue
		}
		if !strings.Contains(err.Error(), filepath.Join(dir, FileConfig)) {
			t.Errorf("%s: the error does not name config.json: %v", c.key, err)
		}
		if n > 8<<20 {
			t.Errorf("%s = %s: the failed load allocated %d MB", c.key, c.value, n>>20)
		}
	}
}

// TestHostileConfigSizes: sizes that used to end the process with "fatal
// error: out of memory" (or overflow int) fail the load with an error.
func TestHostileConfigSizes(t *testing.T) {
	for _, c := range []struct{ key, value string }{
		{"vocab_size", "1000000000"},
		{"vocab_size", "9223372036854775807"},
		{"max_position_embeddings", "1000000000000"},
		{"intermediate_size", "4611686018427387904"},
		{"num_hidden_layers", "1000000"},
		{"num_hidden_layers", "9223372036854775807"},
		{"hidden_size", "4611686018427387904"},
		{"type_vocab_size", "1000000000"},
	} {
		dir := withConfig(t, c.key, c.value)
		var err error
		n := allocated(func() { _, err = LoadEncoder(dir) })
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s = %s: err = %v, want a *ConfigError", c.key, c.value, err)
		}
		if n > 8<<20 {
			t.Errorf("%s = %s: the failed load allocated %d MB", c.key, c.value, n>>20)
		}
	}
	// A file whose layer tensors are empty cannot back a deep config
	// either: the parameter list is bounded by the file's tensors.
	dir := t.TempDir()
	ts := map[string]safetensors.Tensor{}
	for i := 0; i < 3000; i++ {
		ts[fmt.Sprintf("encoder.layer.%d.x", i)] = safetensors.Tensor{Shape: []int{0}}
	}
	if err := safetensors.WriteFile(filepath.Join(dir, FileWeights), ts, nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, FileConfig), []byte(strings.Replace(bertConfig, `"num_hidden_layers": 2`, `"num_hidden_layers": 3000`, 1)), 0o644)
	var err error
	if n := allocated(func() { _, err = LoadEncoder(dir) }); n > 16<<20 {
		t.Errorf("3000 empty layer tensors: the failed load allocated %d MB", n>>20)
	}
	if err == nil {
		t.Error("3000 empty layer tensors loaded")
	}
}

// TestNonFiniteRefused: NaN or an infinity in a used tensor fails the
// load naming the tensor, even in an embedding row no batch touches; an
// ignored tensor is never read, so its values do not matter.
func TestNonFiniteRefused(t *testing.T) {
	src := newEncoder(t, tinyConfig(), 1)
	for _, c := range []struct {
		tensor string
		at     int
		v      float32
	}{
		{"bert.embeddings.word_embeddings.weight", 39*16 + 5, float32(math.NaN())},
		{"bert.encoder.layer.1.output.dense.bias", 3, float32(math.Inf(1))},
		{"bert.pooler.dense.weight", 0, float32(math.Inf(-1))},
	} {
		dir := t.TempDir()
		writeHF(t, dir, src, "bert.", bertConfig, nil)
		ts := mustRead(t, dir)
		d := append([]float32(nil), ts[c.tensor].Data...)
		d[c.at] = c.v
		ts[c.tensor] = safetensors.Tensor{Shape: ts[c.tensor].Shape, Data: d}
		if err := safetensors.WriteFile(filepath.Join(dir, FileWeights), ts, nil); err != nil {
			t.Fatal(err)
		}
		_, err := LoadEncoder(dir)
		var nf *NonFiniteError
		if !errors.As(err, &nf) || nf.Tensor != c.tensor || nf.Index != c.at {
			t.Errorf("%s[%d] = %v: err = %v, want a *NonFiniteError naming it", c.tensor, c.at, c.v, err)
		}
	}
	dir := t.TempDir()
	writeHF(t, dir, src, "bert.", bertConfig, map[string]safetensors.Tensor{"cls.predictions.bias": {Shape: []int{2}, Data: []float32{float32(math.NaN()), 0}}})
	if _, err := LoadEncoder(dir); err != nil {
		t.Errorf("a NaN in an ignored tensor: %v", err)
	}
}

func writeVocab(t *testing.T, dir string, tokens []string) {
	t.Helper()
	if err := tokenizer.WriteVocab(filepath.Join(dir, FileVocab), tokens); err != nil {
		t.Fatal(err)
	}
}

// TestEncoderTokenizerChecked: a vocab.txt longer than the embedding, or
// whose [PAD] is not pad_token_id, fails the load naming config.json's key
// (GPT-2 and T5 checked theirs; BERT did not, and failed at a training
// step).
func TestEncoderTokenizerChecked(t *testing.T) {
	src := newEncoder(t, tinyConfig(), 1)
	vocab := func(n int, first ...string) []string {
		v := append([]string(nil), first...)
		for i := len(v); i < n; i++ {
			v = append(v, fmt.Sprintf("w%d", i))
		}
		return v
	}
	for _, c := range []struct {
		tokens []string
		field  string
	}{
		{vocab(41, "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"), "vocab_size"},
		{vocab(40, "[UNK]", "[PAD]", "[CLS]", "[SEP]", "[MASK]"), "pad_token_id"},
	} {
		dir := t.TempDir()
		writeHF(t, dir, src, "bert.", bertConfig, nil)
		writeVocab(t, dir, c.tokens)
		_, err := LoadEncoder(dir)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field {
			t.Errorf("want a *ConfigError for %s, got %v", c.field, err)
		}
	}
	// A vocabulary that fits (here smaller than the embedding) loads.
	dir := t.TempDir()
	writeHF(t, dir, src, "bert.", bertConfig, nil)
	writeVocab(t, dir, vocab(38, "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"))
	if _, err := LoadEncoder(dir); err != nil {
		t.Errorf("a fitting vocabulary: %v", err)
	}
}

// TestLoadMemoryBoundedByModel: a checkpoint with a large ignored tensor
// (an MLM decoder, say) loads in about the model's own memory: the
// ignored tensor is never read, the used ones are read straight into the
// parameters. (The old loader read the whole file and decoded every
// tensor: more than twice the file.)
func TestLoadMemoryBoundedByModel(t *testing.T) {
	src := newEncoder(t, tinyConfig(), 1)
	model := 0
	for _, p := range src.NamedParams() {
		model += 4 * len(tensor.Data(p.Param))
	}
	const big = 8 << 20 // floats: 32 MB
	dir := t.TempDir()
	writeHF(t, dir, src, "bert.", bertConfig, map[string]safetensors.Tensor{
		"cls.predictions.decoder.weight": {Shape: []int{big / 16, 16}, Data: make([]float32, big)},
	})
	fi, _ := os.Stat(filepath.Join(dir, FileWeights))
	var err error
	n := allocated(func() { _, err = LoadEncoder(dir) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("file %d bytes, model %d bytes, load allocated %d bytes", fi.Size(), model, n)
	if limit := uint64(4*model + 1<<20); n > limit {
		t.Errorf("loading a %d-byte model from a %d-byte file allocated %d bytes, want at most %d", model, fi.Size(), n, limit)
	}
}

// TestTruncatedCheckpoint: a cut model.safetensors says it is truncated,
// names the file, and says the same on every run.
func TestTruncatedCheckpoint(t *testing.T) {
	dir := t.TempDir()
	writeHF(t, dir, newEncoder(t, tinyConfig(), 1), "bert.", bertConfig, nil)
	p := filepath.Join(dir, FileWeights)
	b, _ := os.ReadFile(p)
	os.WriteFile(p, b[:len(b)-700], 0o644)
	first := ""
	for run := 0; run < 10; run++ {
		_, err := LoadEncoder(dir)
		if !errors.Is(err, safetensors.ErrTruncated) || !strings.Contains(err.Error(), p) {
			t.Fatalf("err = %v, want ErrTruncated naming %s", err, p)
		}
		if run == 0 {
			first = err.Error()
		} else if err.Error() != first {
			t.Fatalf("run %d: %q, run 0: %q", run, err, first)
		}
	}
}

// TestExtraIDsBounded: tokenizer_config.json's extra_ids near 2^63 used to
// overflow the SentencePiece size check, so that the load succeeded with
// negative sentinel ids; it is refused naming the file and the key.
func TestExtraIDsBounded(t *testing.T) {
	for _, n := range []string{"9223372036854775800", "9223372036854775807", "-1", "4294967296"} {
		dir := t.TempDir()
		b, _ := os.ReadFile(filepath.Join(spmTestdata, "t5like.model"))
		os.WriteFile(filepath.Join(dir, FileSPModel), b, 0o644)
		os.WriteFile(filepath.Join(dir, FileTokenizerConfig), []byte(`{"extra_ids": `+n+`}`), 0o644)
		tok, err := LoadTokenizer(dir)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "extra_ids" || !strings.Contains(err.Error(), FileTokenizerConfig) {
			size := 0
			if err == nil {
				size = tok.Size()
			}
			t.Errorf("extra_ids %s: size %d, err = %v, want a *ConfigError for extra_ids", n, size, err)
		}
	}
}
