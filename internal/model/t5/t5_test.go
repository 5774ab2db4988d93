package t5

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

type golden struct {
	Src     [][]int `json:"src"`
	Dec     [][]int `json:"dec"`
	Buckets map[string][]int
	RelFrom int `json:"bucket_rel_from"`
	Models  map[string]struct {
		Encoder [][]float64 `json:"encoder"`
		Logits  [][]float64 `json:"logits"`
	} `json:"models"`
}

func readGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestBucketsMatchTransformers(t *testing.T) {
	g := readGolden(t)
	if len(g.Buckets) != 4 {
		t.Fatalf("golden has %d bucket tables", len(g.Buckets))
	}
	for key, want := range g.Buckets {
		var nb, md int
		var dir string
		parts := strings.Split(key, "/")
		nb, md, dir = atoi(parts[0]), atoi(parts[1]), parts[2]
		for i, w := range want {
			rel := g.RelFrom + i
			if got := Bucket(rel, dir == "bidirectional", nb, md); got != w {
				t.Errorf("%s: bucket(%d) = %d, transformers %d", key, rel, got, w)
			}
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestGoldenForward loads each committed checkpoint (written in
// Hugging Face's layout by testdata/gen_golden.py) and compares the encoder
// output and decoder logits with the PyTorch reference.
func TestGoldenForward(t *testing.T) {
	g := readGolden(t)
	for name, want := range g.Models {
		t.Run(name, func(t *testing.T) {
			m, tok, err := Load(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			if tok != nil {
				t.Fatal("a tokenizer where the directory has none")
			}
			src, err := transformer.NewBatch(g.Src, m.Config.PadTokenID)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := transformer.NewBatch(g.Dec, m.Config.PadTokenID)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := m.Encode(src, nil)
			if err != nil {
				t.Fatal(err)
			}
			D := m.Config.DModel
			E := tensor.Data(enc.Hidden)
			for b, w := range want.Encoder {
				got := E[b*src.T*D : b*src.T*D+len(w)]
				compare(t, "encoder", b, got, w)
			}
			h, err := m.Decode(dec, enc, nil)
			if err != nil {
				t.Fatal(err)
			}
			L := tensor.Data(m.Logits(h))
			V := m.Config.VocabSize
			for b, w := range want.Logits {
				compare(t, "logits", b, L[b*dec.T*V:b*dec.T*V+len(w)], w)
			}
		})
	}
}

func compare(t *testing.T, what string, b int, got []float32, want []float64) {
	t.Helper()
	worst := 0.0
	for i, w := range want {
		worst = max(worst, math.Abs(float64(got[i])-w))
	}
	t.Logf("%s of sequence %d: max abs difference %.2g", what, b, worst)
	if worst > 1e-4 {
		t.Errorf("%s of sequence %d: max abs difference %.3g from PyTorch (want <= 1e-4)", what, b, worst)
	}
}
