package gpt2

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
	for _, edit := range []func(*Config){
		func(*Config) {},
		func(c *Config) { c.TieWordEmbeddings = false },
		func(c *Config) { n := 20; c.NInner = &n },
	} {
		c := tinyConfig()
		edit(&c)
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

// savedTiny saves a tiny model and returns its directory.
func savedTiny(t *testing.T) string {
	t.Helper()
	m, _ := New(tinyConfig(), rand.New(rand.NewPCG(1, 2)))
	dir := t.TempDir()
	if err := Save(dir, m, nil, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHostileConfigSizes: sizes that used to end the process with "fatal
// error: out of memory" fail the load naming the key, allocating nothing
// of their size.
func TestHostileConfigSizes(t *testing.T) {
	for _, c := range []struct {
		key   string
		value any
	}{
		{"vocab_size", 1e9}, {"n_positions", 1e9}, {"n_inner", 1e9}, {"n_layer", 1e6},
		{"n_embd", 1 << 40}, {"n_layer", math.MaxInt64},
	} {
		dir := savedTiny(t)
		raw, _ := os.ReadFile(filepath.Join(dir, FileConfig))
		var cfg map[string]any
		json.Unmarshal(raw, &cfg)
		cfg[c.key] = c.value
		if c.key == "n_embd" {
			cfg["n_head"] = 1
		}
		b, _ := json.Marshal(cfg)
		os.WriteFile(filepath.Join(dir, FileConfig), b, 0o644)
		var a, z runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		_, _, err := Load(dir)
		runtime.ReadMemStats(&z)
		var ce *checkpoint.ConfigError
		if !errors.As(err, &ce) || ce.Field != c.key {
			t.Errorf("%s = %v: err = %v, want a *checkpoint.ConfigError for it", c.key, c.value, err)
		}
		if n := z.TotalAlloc - a.TotalAlloc; n > 8<<20 {
			t.Errorf("%s = %v: the failed load allocated %d MB", c.key, c.value, n>>20)
		}
	}
}

// TestNonFiniteRefused: a NaN in a used tensor fails the load naming it.
func TestNonFiniteRefused(t *testing.T) {
	dir := savedTiny(t)
	p := filepath.Join(dir, checkpoint.FileWeights)
	f, err := safetensors.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Tensors["transformer.wpe.weight"].Data[7] = float32(math.NaN())
	if err := safetensors.WriteFile(p, f.Tensors, nil); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load(dir)
	var nf *checkpoint.NonFiniteError
	if !errors.As(err, &nf) || nf.Tensor != "transformer.wpe.weight" {
		t.Errorf("err = %v, want a *checkpoint.NonFiniteError naming transformer.wpe.weight", err)
	}
}
