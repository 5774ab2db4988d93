package optim

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/nlpodyssey/spago/nn"

	"repro/internal/tensor"
)

func TestAdamWMatchesTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/adamw.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		LR          float64     `json:"lr"`
		WeightDecay float64     `json:"weight_decay"`
		Init        []float32   `json:"init"`
		Grads       [][]float32 `json:"grads"`
		Trajectory  [][]float64 `json:"trajectory"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	p := nn.NewParam(tensor.New(3, 4, g.Init))
	opt, err := NewAdamW([]*nn.Param{p}, AdamWConfig{LR: g.LR, WeightDecay: g.WeightDecay})
	if err != nil {
		t.Fatal(err)
	}
	for step, grad := range g.Grads {
		p.AccGrad(tensor.New(3, 4, grad))
		opt.Step()
		if p.HasGrad() {
			t.Fatal("Step left the gradient in place")
		}
		for j, want := range g.Trajectory[step] {
			if got := float64(tensor.Data(p)[j]); math.Abs(got-want) > 1e-6*(1+math.Abs(want)) {
				t.Errorf("step %d element %d: %.8g, torch %.8g", step+1, j, got, want)
			}
		}
	}
}

func TestAdamWRejectsBadConfig(t *testing.T) {
	if _, err := NewAdamW(nil, AdamWConfig{LR: 0}); err == nil {
		t.Error("accepted learning rate 0")
	}
	if _, err := NewAdamW(nil, AdamWConfig{LR: 1, Beta1: 1}); err == nil {
		t.Error("accepted beta1 1")
	}
	if _, err := NewAdamW(nil, AdamWConfig{LR: 1, WeightDecay: -1}); err == nil {
		t.Error("accepted negative weight decay")
	}
}

func TestClipGradNorm(t *testing.T) {
	p := nn.NewParam(tensor.New(1, 2, []float32{0, 0}))
	p.AccGrad(tensor.New(1, 2, []float32{3, 4}))
	if n := ClipGradNorm([]*nn.Param{p}, 1); math.Abs(n-5) > 1e-9 {
		t.Fatalf("norm %v, want 5", n)
	}
	g := tensor.GradData(p)
	if math.Abs(float64(g[0])-0.6) > 1e-5 || math.Abs(float64(g[1])-0.8) > 1e-5 {
		t.Fatalf("clipped gradient %v, want [0.6 0.8]", g)
	}
}
