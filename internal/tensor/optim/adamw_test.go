package optim

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/nlpodyssey/spago/nn"

	"repro/internal/tensor"
)

// TestAdamWMatchesTorch replays testdata/adamw.json (gen_adamw.py): a 3x4
// parameter driven through ForParams, compared with torch.optim.AdamW after
// every step.
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
	opt, err := ForParams([]*nn.Param{p}, Config{LR: g.LR, WeightDecay: g.WeightDecay})
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
	if n := opt.State().T[0]; n != len(g.Grads) {
		t.Errorf("step count %d, want %d", n, len(g.Grads))
	}
}

// TestAdamWScheduleGolden replays testdata/adamw_schedule_golden.json
// (gen_adamw_schedule.py): PyTorch's AdamW + linear warm-up schedule +
// clip_grad_norm_ on a weight (decayed) and a bias (not decayed).
func TestAdamWScheduleGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/adamw_schedule_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	type wb struct{ W, B []float32 }
	var gold struct {
		Init  wb
		Grads []wb
		LRs   []float64 `json:"lrs"`
		Norms []float64
		Final wb
	}
	if err := json.Unmarshal(b, &gold); err != nil {
		t.Fatal(err)
	}
	params := [][]float32{append([]float32{}, gold.Init.W...), append([]float32{}, gold.Init.B...)}
	opt, err := NewAdamW([]int{len(params[0]), len(params[1])}, 0.9, 0.999, 1e-8)
	if err != nil {
		t.Fatal(err)
	}
	for s, g := range gold.Grads {
		grads := [][]float32{append([]float32{}, g.W...), append([]float32{}, g.B...)}
		lr := 1e-2 * LinearSchedule(s, 2, 6)
		if math.Abs(lr-gold.LRs[s]) > 1e-12 {
			t.Fatalf("step %d: lr %g, torch %g", s, lr, gold.LRs[s])
		}
		if n := ClipGradNorm(grads, 1); math.Abs(n-gold.Norms[s]) > 1e-5*gold.Norms[s] {
			t.Fatalf("step %d: norm %g, torch %g", s, n, gold.Norms[s])
		}
		opt.Step(params, grads, lr, []float64{0.1, 0})
	}
	for k, want := range [][]float32{gold.Final.W, gold.Final.B} {
		for i, w := range want {
			if d := math.Abs(float64(params[k][i] - w)); d > 2e-6 {
				t.Errorf("param %d[%d] = %.8f, torch %.8f", k, i, params[k][i], w)
			}
		}
	}
}

// TestAdamWSkipsMissingGradients: a nil gradient leaves the parameter, its
// moments and its step count alone (PyTorch's grad-is-None rule).
func TestAdamWSkipsMissingGradients(t *testing.T) {
	opt, err := NewAdamW([]int{2, 2}, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	params := [][]float32{{1, 2}, {3, 4}}
	opt.Step(params, [][]float32{{0.5, -0.5}, nil}, 0.1, []float64{0, 0})
	if params[1][0] != 3 || params[1][1] != 4 || opt.T[1] != 0 || opt.M[1][0] != 0 {
		t.Fatalf("parameter without a gradient changed: %v, T=%v, M=%v", params[1], opt.T, opt.M[1])
	}
	if params[0][0] == 1 || opt.T[0] != 1 {
		t.Fatalf("parameter with a gradient not updated: %v, T=%v", params[0], opt.T)
	}
}

func TestAdamWRejectsBadConfig(t *testing.T) {
	if _, err := ForParams(nil, Config{LR: 0}); err == nil {
		t.Error("accepted learning rate 0")
	}
	if _, err := ForParams(nil, Config{LR: 1, Beta1: 1}); err == nil {
		t.Error("accepted beta1 1")
	}
	if _, err := ForParams(nil, Config{LR: 1, WeightDecay: -1}); err == nil {
		t.Error("accepted negative weight decay")
	}
	if _, err := NewAdamW(nil, 0.9, 0.999, -1); err == nil {
		t.Error("accepted negative eps")
	}
}

func TestClipGradNorm(t *testing.T) {
	g := [][]float32{{3, 0}, {4}}
	if n := ClipGradNorm(g, 1); n != 5 {
		t.Fatalf("norm %g", n)
	}
	if n := ClipGradNorm(g, 0); math.Abs(n-1) > 1e-6 {
		t.Fatalf("norm after clipping %g, want 1", n)
	}
	small := [][]float32{{0.3, 0.4}}
	ClipGradNorm(small, 1)
	if small[0][0] != 0.3 || small[0][1] != 0.4 {
		t.Fatalf("clipping changed a small gradient: %v", small)
	}
	if n := ClipGradNorm([][]float32{nil, {3, 4}}, 10); n != 5 {
		t.Fatalf("norm with a nil gradient %g, want 5", n)
	}
}

func TestSchedule(t *testing.T) {
	want := []float64{0, 0.25, 0.5, 0.75, 1, 5.0 / 6, 4.0 / 6, 0.5, 2.0 / 6, 1.0 / 6, 0}
	for s, w := range want {
		if got := LinearSchedule(s, 4, 10); math.Abs(got-w) > 1e-12 {
			t.Errorf("LinearSchedule(%d, 4, 10) = %g, want %g", s, got, w)
		}
	}
	if LinearSchedule(0, 0, 10) != 1 || LinearSchedule(12, 0, 10) != 0 {
		t.Error("no-warmup edges")
	}
}
