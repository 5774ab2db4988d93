package t5

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/tensor"
)

func tinyConfig(ff string, tied bool) Config {
	c := DefaultConfig()
	c.VocabSize, c.DModel, c.DKV, c.DFF, c.NumLayers, c.NumHeads = 23, 8, 3, 10, 2, 2
	c.RelBuckets, c.RelMaxDistance, c.DropoutRate = 8, 16, 0
	c.FeedForwardProj, c.TieWordEmbeddings = ff, tied
	return c
}

func TestSaveLoadRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		ff   string
		tied bool
	}{{"relu", true}, {"gated-gelu", false}} {
		m, err := New(tinyConfig(tc.ff, tc.tied), rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := Save(dir, m, nil, map[string]any{"note": "test"}); err != nil {
			t.Fatal(err)
		}
		back, _, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		a, b := m.NamedParams(), back.NamedParams()
		if len(a) != len(b) {
			t.Fatalf("%d params saved, %d loaded", len(a), len(b))
		}
		for i := range a {
			if a[i].Name != b[i].Name {
				t.Fatalf("param %d: %s vs %s", i, a[i].Name, b[i].Name)
			}
			da, db := tensor.Data(a[i].Param), tensor.Data(b[i].Param)
			for j := range da {
				if da[j] != db[j] {
					t.Fatalf("%s differs after the round trip", a[i].Name)
				}
			}
		}
		if back.Config.Repro["note"] != "test" || back.Config.FeedForwardProj != tc.ff || back.Config.TieWordEmbeddings != tc.tied {
			t.Errorf("config not kept: %+v", back.Config)
		}
	}
}

// TestLoadErrors: a directory Load refuses fails with an error naming the
// path and what is wrong, never a panic.
func TestLoadErrors(t *testing.T) {
	raw, err := os.ReadFile("testdata/tiny-v1_0/config.json")
	if err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, path string, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// saved saves a tiny relu model in dir.
	saved := func(t *testing.T, dir string) {
		m, _ := New(tinyConfig("relu", true), rand.New(rand.NewPCG(1, 2)))
		if err := Save(dir, m, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	type loadCase struct {
		name string
		// make fills dir and returns the path to load.
		make func(t *testing.T, dir string) string
		want []string
	}
	var cases []loadCase
	for _, bad := range []string{"gated-silu", "swish", "gated-relu-x", "fancy-gelu"} {
		cases = append(cases, loadCase{"feed_forward_proj " + bad, func(t *testing.T, dir string) string {
			cfg := strings.Replace(string(raw), `"feed_forward_proj": "relu"`, `"feed_forward_proj": "`+bad+`"`, 1)
			write(t, filepath.Join(dir, "config.json"), []byte(cfg))
			return dir
		}, []string{"config.json", "feed_forward_proj", bad}})
	}
	cases = append(cases,
		loadCase{"missing directory", func(t *testing.T, dir string) string { return filepath.Join(dir, "missing") }, nil},
		// A gated config over relu weights: wi_0/wi_1 missing, wi unexpected.
		loadCase{"gated config, relu weights", func(t *testing.T, dir string) string {
			saved(t, dir)
			if err := WriteConfig(dir, tinyConfig("gated-gelu", true)); err != nil {
				t.Fatal(err)
			}
			return dir
		}, []string{"model.safetensors", "missing tensors", "wi_0", "unexpected tensors", "wi.weight"}},
		loadCase{"spiece.model not a tokenizer", func(t *testing.T, dir string) string {
			saved(t, dir)
			write(t, filepath.Join(dir, "spiece.model"), []byte("this is not a SentencePiece model"))
			return dir
		}, []string{"t5:"}},
	)
	for _, c := range cases {
		path := c.make(t, t.TempDir())
		_, _, err := Load(path)
		if err == nil {
			t.Errorf("%s: loaded", c.name)
			continue
		}
		for _, w := range append([]string{path}, c.want...) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v lacks %q", c.name, err, w)
			}
		}
	}
}

// TestGradLoss checks the whole model's gradient (relative position
// bias, RMS norms, gated feed-forward, tied and untied outputs) against
// central finite differences of the loss, on a sample of parameters.
func TestGradLoss(t *testing.T) {
	for _, tc := range []struct {
		ff   string
		tied bool
	}{{"relu", true}, {"gated-gelu", false}} {
		m, err := New(tinyConfig(tc.ff, tc.tied), rand.New(rand.NewPCG(3, 4)))
		if err != nil {
			t.Fatal(err)
		}
		// Float32 differences need weights large enough to matter.
		for _, p := range m.Params() {
			for i, d := 0, tensor.Data(p); i < len(d); i++ {
				d[i] *= 1.5
			}
		}
		ex := []Example{{Source: []int{3, 4, 5, 6, 1}, Target: []int{7, 8, 1}}, {Source: []int{9, 2, 1}, Target: []int{10, 11, 12, 13, 1}}}
		loss, _, err := m.Loss(ex, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.Backward(loss); err != nil {
			t.Fatal(err)
		}
		lossAt := func() float64 {
			l, _, err := m.Loss(ex, nil)
			if err != nil {
				t.Fatal(err)
			}
			return float64(tensor.Data(l)[0])
		}
		rng := rand.New(rand.NewPCG(5, 6))
		checked := 0
		for _, np := range m.NamedParams() {
			d := tensor.Data(np.Param)
			g := tensor.GradData(np.Param)
			for k := 0; k < 3; k++ {
				i := rng.IntN(len(d))
				an := 0.0
				if g != nil {
					an = float64(g[i])
				}
				orig := d[i]
				const eps = 1e-2
				d[i] = orig + eps
				fp := lossAt()
				d[i] = orig - eps
				fm := lossAt()
				d[i] = orig
				num := (fp - fm) / (2 * eps)
				if math.Abs(an-num) > 2e-3+5e-2*math.Abs(num) {
					t.Errorf("%s/%s[%d]: analytic %.5g, numeric %.5g", tc.ff, np.Name, i, an, num)
				}
				checked++
			}
		}
		if checked < 30 {
			t.Fatalf("only %d gradients checked", checked)
		}
	}
}
