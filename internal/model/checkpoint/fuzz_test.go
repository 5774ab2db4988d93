package checkpoint

import (
	"os"
	"path/filepath"
	"testing"

	"repro/internal/model/safetensors"
	"repro/internal/model/transformer"
)

// FuzzLoadEncoder: any config.json beside a valid checkpoint loads or is
// refused with an error; none crashes or allocates what the weights do
// not back.
func FuzzLoadEncoder(f *testing.F) {
	f.Add([]byte(bertConfig))
	f.Add([]byte(robertaConfig))
	// One tiny checkpoint (with a pooler and an ignored head), linked
	// into each input's directory.
	src := f.TempDir()
	writeHF(f, src, newEncoder(f, tinyConfig(), 1), "bert.", bertConfig, map[string]safetensors.Tensor{"cls.predictions.bias": {Shape: []int{40}, Data: make([]float32, 40)}})
	weights := filepath.Join(src, FileWeights)
	f.Fuzz(func(t *testing.T, config []byte) {
		d := t.TempDir()
		if err := os.Link(weights, filepath.Join(d, FileWeights)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, FileConfig), config, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := LoadEncoder(d)
		if err != nil {
			return
		}
		if _, err := m.Encoder.Encode([][]int{{0, 1}}, transformer.PoolMean); err != nil && m.Config.VocabSize > 1 && m.Config.MaxLen() >= 2 {
			t.Fatalf("a loaded encoder does not encode: %v", err)
		}
	})
}
