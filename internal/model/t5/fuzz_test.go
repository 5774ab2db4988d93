package t5

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"repro/internal/model/checkpoint"
)

// FuzzLoadConfig: any config.json beside a valid T5 checkpoint loads or
// is refused with an error; none crashes or allocates what the weights do
// not back.
func FuzzLoadConfig(f *testing.F) {
	src := f.TempDir()
	m, _ := New(tinyConfig("gated-gelu", false), rand.New(rand.NewPCG(1, 2)))
	if err := Save(src, m, nil, nil); err != nil {
		f.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(src, FileConfig))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(cfg)
	weights := filepath.Join(src, checkpoint.FileWeights)
	f.Fuzz(func(t *testing.T, config []byte) {
		d := t.TempDir()
		if err := os.Link(weights, filepath.Join(d, checkpoint.FileWeights)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, FileConfig), config, 0o644); err != nil {
			t.Fatal(err)
		}
		m, _, err := Load(d)
		if err != nil {
			return
		}
		// A loaded model runs: one source token through both stacks.
		if _, err := m.Start([][]int{{m.Config.EOSTokenID}}, 2); err != nil {
			t.Fatalf("a loaded model does not run: %v", err)
		}
	})
}
