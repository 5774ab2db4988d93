package loss

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor"
)

type lossCase struct {
	Name    string      `json:"name"`
	Inputs  [][]float32 `json:"inputs"`
	Rows    []int       `json:"rows"`
	Cols    []int       `json:"cols"`
	Loss    float64     `json:"loss"`
	Grads   [][]float64 `json:"grads"`
	Temp    float32     `json:"temp"`
	Labels  []float32   `json:"labels"`
	Targets []int       `json:"targets"`
	Groups  []int       `json:"groups"`
	Cosine  bool        `json:"cosine"`
}

// TestAgainstTorch checks each loss's value and input gradients against
// PyTorch (testdata/gen_losses.py).
func TestAgainstTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/losses.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []lossCase }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("testdata/losses.json: %v", err)
	}
	seen := map[string]bool{}
	for _, c := range doc.Cases {
		in := make([]*tensor.Matrix, len(c.Inputs))
		ts := make([]mat.Tensor, len(c.Inputs))
		for i, v := range c.Inputs {
			in[i] = tensor.New(c.Rows[i], c.Cols[i], v)
			in[i].SetRequiresGrad(true)
			ts[i] = in[i]
		}
		var l mat.Tensor
		switch c.Name {
		case "simcse_unsup":
			l, err = SimCSEUnsup(ts[0], ts[1], c.Temp)
		case "simcse_sup":
			l, err = SimCSESup(ts[0], ts[1], ts[2], c.Temp)
		case "infonce", "infonce_temp":
			l, err = InfoNCE(ts[0], ts[1], c.Temp)
		case "infonce_masked", "infonce_masked_cosine":
			l, err = InfoNCEMasked(ts[0], ts[1], c.Temp, c.Cosine, c.Groups)
		case "cosine_mse":
			l, err = CosineMSE(ts[0], ts[1], c.Labels)
		case "token_ce":
			l, err = TokenCE(ts[0], c.Targets)
		default:
			t.Fatalf("unknown case %q", c.Name)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		seen[c.Name] = true
		got := float64(tensor.Data(l)[0])
		if math.Abs(got-c.Loss) > 1e-5*(1+math.Abs(c.Loss)) {
			t.Errorf("%s: loss %.7g, torch %.7g", c.Name, got, c.Loss)
		}
		if err := tensor.Backward(l); err != nil {
			t.Fatal(err)
		}
		for i := range in {
			g := tensor.GradData(in[i])
			for j, want := range c.Grads[i] {
				if math.Abs(float64(g[j])-want) > 2e-5*(1+math.Abs(want)) {
					t.Errorf("%s: input %d gradient %d = %.7g, torch %.7g", c.Name, i, j, g[j], want)
				}
			}
		}
	}
	if len(seen) != 8 {
		t.Errorf("golden file exercised %d losses, want 8", len(seen))
	}
}

// TestHandComputed checks InfoNCE on a case small enough to work by hand:
// a = p = I (2x2): logits [[1,0],[0,1]], loss = log(1+e^-1).
func TestHandComputed(t *testing.T) {
	a := tensor.New(2, 2, []float32{1, 0, 0, 1})
	l, err := InfoNCE(a, a, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := math.Log(1 + math.Exp(-1))
	if got := float64(tensor.Data(l)[0]); math.Abs(got-want) > 1e-6 {
		t.Fatalf("InfoNCE = %v, want %v", got, want)
	}
}

// Without groups, or with every pair in its own group, the masked loss is
// InfoNCE bit for bit.
func TestInfoNCEMaskedUnmasked(t *testing.T) {
	a := tensor.New(3, 2, []float32{1, 0.5, -0.2, 0.3, 0.7, -1})
	p := tensor.New(3, 2, []float32{0.4, 0.1, 0.9, -0.6, 0.2, 0.8})
	want, _ := InfoNCE(a, p, 0.5)
	for _, g := range [][]int{nil, {4, 5, 6}} {
		got, err := InfoNCEMasked(a, p, 0.5, false, g)
		if err != nil {
			t.Fatal(err)
		}
		if tensor.Data(got)[0] != tensor.Data(want)[0] {
			t.Errorf("groups %v: %v, InfoNCE %v", g, tensor.Data(got)[0], tensor.Data(want)[0])
		}
	}
	// One group for everything leaves only the positive: loss 0.
	got, _ := InfoNCEMasked(a, p, 0.5, false, []int{1, 1, 1})
	if v := tensor.Data(got)[0]; v != 0 {
		t.Errorf("all masked: loss %v, want 0", v)
	}
	if _, err := InfoNCEMasked(a, p, 0.5, false, []int{1}); err == nil {
		t.Error("1 group for 3 pairs accepted")
	}
}

func TestErrors(t *testing.T) {
	a, b := tensor.Zeros(3, 4), tensor.Zeros(2, 4)
	if _, err := SimCSEUnsup(a, b, 0.05); err == nil {
		t.Error("SimCSEUnsup accepted 3 and 2 rows")
	}
	if _, err := SimCSEUnsup(a, a, 0); err == nil {
		t.Error("SimCSEUnsup accepted temperature 0")
	}
	if _, err := CosineMSE(a, a, []float32{1}); err == nil {
		t.Error("CosineMSE accepted 1 label for 3 pairs")
	}
	if _, err := TokenCE(a, []int{0, 1, 4}); err == nil {
		t.Error("TokenCE accepted target 4 with 4 classes")
	}
	if _, err := MLM(a, []int{IgnoreIndex, IgnoreIndex, IgnoreIndex}); err == nil {
		t.Error("MLM accepted a batch with nothing masked")
	}
}
