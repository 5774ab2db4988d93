package gpt2

import (
	"math"
	"math/rand/v2"
	"testing"

	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

// TestLossGradient compares the model's backward pass with central finite
// differences of the loss for a sample of entries of every parameter.
func TestLossGradient(t *testing.T) {
	c := tinyConfig()
	c.VocabSize, c.NEmbd, c.NLayer, c.NHead, c.BOSTokenID, c.EOSTokenID = 13, 8, 2, 2, 12, 12
	for _, act := range []string{"gelu_new", "relu"} {
		c.Activation = act
		c.TieWordEmbeddings = act == "gelu_new"
		m, err := New(c, rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		// Larger weights than GPT-2's init, so every layer matters.
		for _, p := range m.NamedParams() {
			d := tensor.Data(p.Param)
			r := rand.New(rand.NewPCG(7, uint64(len(d))))
			for i := range d {
				d[i] += float32(r.NormFloat64() * 0.3)
			}
		}
		b, _ := transformer.NewBatch([][]int{{1, 5, 7, 2, 9}, {3, 4, 12}}, c.EOSTokenID)
		loss := func() float64 {
			l, err := m.Loss(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			return float64(tensor.Data(l)[0])
		}
		for _, p := range m.NamedParams() {
			p.Param.ZeroGrad()
		}
		l, _ := m.Loss(b, nil)
		if err := tensor.Backward(l); err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 1))
		for _, p := range m.NamedParams() {
			d := tensor.Data(p.Param)
			g := tensor.GradData(p.Param)
			for k := 0; k < 4; k++ {
				i := r.IntN(len(d))
				orig := d[i]
				// ReLU's kink: a step of 1e-2 can cross it, so smaller.
				eps := float32(1e-2)
				if act == "relu" {
					eps = 2e-3
				}
				d[i] = orig + eps
				fp := loss()
				d[i] = orig - eps
				fm := loss()
				d[i] = orig
				num := (fp - fm) / (2 * float64(eps))
				var a float64
				if g != nil {
					a = float64(g[i])
				}
				if math.Abs(a-num) > 2e-3+5e-2*math.Abs(num) {
					t.Errorf("%s: %s[%d]: backward %.6g, finite differences %.6g", act, p.Name, i, a, num)
				}
			}
		}
	}
}
