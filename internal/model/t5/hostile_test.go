package t5

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"repro/internal/model/checkpoint"
	"repro/internal/model/safetensors"
)

func TestParamShapesMatchNamedParams(t *testing.T) {
	for _, c := range []Config{tinyConfig("relu", true), tinyConfig("gated-gelu", false), func() Config {
		c := tinyConfig("relu", true)
		n := 3
		c.NumDecoderLayers = &n
		return c
	}()} {
		m, err := New(c, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := paramShapes(c, 1000)
		want := m.NamedParams()
		if !ok || len(got) != len(want) {
			t.Fatalf("%d shapes (ok %v), want %d", len(got), ok, len(want))
		}
		for i := range want {
			if got[i].Name != want[i].Name || !reflect.DeepEqual(got[i].Shape, want[i].Shape) {
				t.Fatalf("shape %d is %s %v, want %s %v", i, got[i].Name, got[i].Shape, want[i].Name, want[i].Shape)
			}
		}
	}
}

func savedTiny(t *testing.T) string {
	t.Helper()
	m, _ := New(tinyConfig("gated-gelu", false), rand.New(rand.NewPCG(1, 2)))
	dir := t.TempDir()
	if err := Save(dir, m, nil, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHostileConfigSizes: sizes that used to end the process with "fatal
// error: out of memory" fail the load naming the key.
func TestHostileConfigSizes(t *testing.T) {
	for _, c := range []struct {
		key, field string
		value      any
	}{
		{"vocab_size", "vocab_size", 1e9}, {"d_ff", "d_ff", 1e9}, {"d_model", "d_model", 1 << 40},
		{"relative_attention_num_buckets", "relative_attention_num_buckets", 1e9},
		{"num_layers", "num_layers", 1e6}, {"num_decoder_layers", "num_decoder_layers", 1e6},
		{"d_kv", "num_heads * d_kv", 1e9}, {"d_kv", "num_heads * d_kv", math.MaxInt64},
	} {
		dir := savedTiny(t)
		raw, _ := os.ReadFile(filepath.Join(dir, FileConfig))
		var cfg map[string]any
		json.Unmarshal(raw, &cfg)
		cfg[c.key] = c.value
		b, _ := json.Marshal(cfg)
		os.WriteFile(filepath.Join(dir, FileConfig), b, 0o644)
		var a, z runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		_, _, err := Load(dir)
		runtime.ReadMemStats(&z)
		var ce *checkpoint.ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field {
			t.Errorf("%s = %v: err = %v, want a *checkpoint.ConfigError for %s", c.key, c.value, err, c.field)
		}
		if n := z.TotalAlloc - a.TotalAlloc; n > 8<<20 {
			t.Errorf("%s = %v: the failed load allocated %d MB", c.key, c.value, n>>20)
		}
	}
}

func TestNonFiniteRefused(t *testing.T) {
	dir := savedTiny(t)
	p := filepath.Join(dir, checkpoint.FileWeights)
	f, err := safetensors.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Tensors["lm_head.weight"].Data[3] = float32(math.Inf(-1))
	if err := safetensors.WriteFile(p, f.Tensors, nil); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load(dir)
	var nf *checkpoint.NonFiniteError
	if !errors.As(err, &nf) || nf.Tensor != "lm_head.weight" {
		t.Errorf("err = %v, want a *checkpoint.NonFiniteError naming lm_head.weight", err)
	}
}
