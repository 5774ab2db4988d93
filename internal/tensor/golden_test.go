package tensor

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/nlpodyssey/spago/mat"
)

// goldenCase is one entry of testdata/golden.json (see gen_golden.py).
// encoding/json prefers exact key matches, so "B" and "b" stay apart.
type goldenCase struct {
	Op      string    `json:"op"`
	Name    string    `json:"name"`
	B       int       `json:"B"`
	H       int       `json:"H"`
	Tq      int       `json:"Tq"`
	Tk      int       `json:"Tk"`
	D       int       `json:"D"`
	KeyLens []int     `json:"key_lens"`
	Causal  bool      `json:"causal"`
	Scale   float32   `json:"scale"`
	Bias    []float32 `json:"bias"`
	Q       []float32 `json:"q"`
	K       []float32 `json:"k"`
	V       []float32 `json:"v"`
	Rows    int       `json:"rows"`
	Cols    int       `json:"cols"`
	ARows   int       `json:"a_rows"`
	BRows   int       `json:"b_rows"`
	Eps     float32   `json:"eps"`
	X       []float32 `json:"x"`
	G       []float32 `json:"g"`
	Bv      []float32 `json:"b"` // layer-norm bias, or cosine's second matrix
	A       []float32 `json:"a"`
	Targets []int     `json:"targets"`
	Out     []float64 `json:"out"`
	Grad    []float64 `json:"grad"`
}

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	raw, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("testdata/golden.json: %v", err)
	}
	return doc.Cases
}

func closeTo(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i])-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Errorf("%s[%d] = %.7g, torch %.7g", what, i, got[i], want[i])
		}
	}
}

func TestGoldenTorch(t *testing.T) {
	cases := loadGolden(t)
	if len(cases) < 13 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		var got mat.Tensor
		switch c.Op {
		case "attention":
			q := New(c.B*c.Tq, c.D, c.Q)
			k := New(c.B*c.Tk, c.D, c.K)
			v := New(c.B*c.Tk, c.D, c.V)
			spec := AttentionSpec{Batch: c.B, Heads: c.H, QLen: c.Tq, KLen: c.Tk, KeyLens: c.KeyLens, Causal: c.Causal, Scale: c.Scale}
			var bias *Matrix
			if c.Bias != nil {
				bias = New(len(c.Bias)/c.Tk, c.Tk, c.Bias)
				bias.SetRequiresGrad(true)
				spec.Bias = bias
			}
			got = Attention(q, k, v, spec)
			if bias != nil {
				if err := Backward(Sum(Mul(got, New(c.B*c.Tq, c.D, c.A)))); err != nil {
					t.Fatal(err)
				}
				closeTo(t, "attention/"+c.Name+" bias grad", GradData(bias), c.Grad, 2e-5)
			}
		case "gelu_tanh":
			got = GELUTanh(New(c.Rows, c.Cols, c.X))
		case "relu":
			got = ReLU(New(c.Rows, c.Cols, c.X))
		case "rms_norm":
			x := New(c.Rows, c.Cols, c.X)
			x.SetRequiresGrad(true)
			got = RMSNorm(x, New(1, c.Cols, c.G), c.Eps)
			if err := Backward(Sum(Mul(got, New(c.Rows, c.Cols, c.A)))); err != nil {
				t.Fatal(err)
			}
			closeTo(t, "rms_norm grad", GradData(x), c.Grad, 2e-5)
		case "layernorm":
			got = LayerNorm(New(c.Rows, c.Cols, c.X), New(1, c.Cols, c.G), New(1, c.Cols, c.Bv), c.Eps)
		case "gelu":
			got = GELU(New(c.Rows, c.Cols, c.X))
		case "log_softmax":
			got = LogSoftmax(New(c.Rows, c.Cols, c.X))
		case "cross_entropy":
			x := New(c.Rows, c.Cols, c.X)
			x.SetRequiresGrad(true)
			got = CrossEntropy(x, c.Targets)
			if err := Backward(got); err != nil {
				t.Fatal(err)
			}
			closeTo(t, "cross_entropy grad", GradData(x), c.Grad, 1e-5)
		case "cosine":
			got = CosineMatrix(New(c.ARows, c.Cols, c.A), New(c.BRows, c.Cols, c.Bv))
		default:
			t.Fatalf("unknown golden op %q", c.Op)
		}
		closeTo(t, c.Op+"/"+c.Name, Data(got), c.Out, 2e-5)
	}
}
