package transformer

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/tensor"
)

type tinyGolden struct {
	Config    Config               `json:"config"`
	Params    map[string][]float32 `json:"params"`
	Seqs      [][]int              `json:"seqs"`
	Types     []float64            `json:"types"`
	Tgt       [][]int              `json:"tgt"`
	Memory    []float32            `json:"memory"`
	Lens      []int                `json:"lens"`
	Last      []float64            `json:"last"`
	First     []float64            `json:"first"`
	Mean      []float64            `json:"mean"`
	FirstLast []float64            `json:"first_last"`
	CLS       []float64            `json:"cls"`
	Logits    []float64            `json:"logits"`
}

func loadTiny(t *testing.T) tinyGolden {
	t.Helper()
	raw, err := os.ReadFile("testdata/tiny.json")
	if err != nil {
		t.Fatal(err)
	}
	var g tinyGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("testdata/tiny.json: %v", err)
	}
	return g
}

// load copies golden parameters whose names start with prefix into named,
// requiring every parameter to be covered.
func load(t *testing.T, named []NamedParam, params map[string][]float32, prefix string) {
	t.Helper()
	for _, np := range named {
		v, ok := params[prefix+np.Name]
		if !ok {
			t.Fatalf("golden file has no %s%s", prefix, np.Name)
		}
		if err := SetParam(named, np.Name, v); err != nil {
			t.Fatal(err)
		}
	}
}

func near(t *testing.T, what string, got []float32, want []float64, rows func(i int) bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if rows != nil && !rows(i) {
			continue
		}
		if math.Abs(float64(got[i])-want[i]) > 1e-4*(1+math.Abs(want[i])) {
			if bad++; bad < 5 {
				t.Errorf("%s[%d] = %.6g, torch %.6g", what, i, got[i], want[i])
			}
		}
	}
}

// TestEncoderDecoderMatchTorch runs the tiny golden model (weights under
// HF names) and compares with PyTorch's TransformerEncoderLayer /
// TransformerDecoderLayer (testdata/gen_tiny.py).
func TestEncoderDecoderMatchTorch(t *testing.T) {
	g := loadTiny(t)
	rng := rand.New(rand.NewPCG(1, 1))
	e, err := NewEncoder(g.Config, rng)
	if err != nil {
		t.Fatal(err)
	}
	load(t, e.NamedParams(), g.Params, "")
	b, err := NewBatch(g.Seqs, g.Config.PadID)
	if err != nil {
		t.Fatal(err)
	}
	b.TypeIDs = make([]int, len(b.IDs))
	for i, v := range g.Types {
		b.TypeIDs[i] = int(v)
	}
	out, err := e.Forward(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	D := g.Config.Hidden
	real := func(i int) bool { tok := i / D; return tok%b.T < b.Lens[tok/b.T] }
	near(t, "last hidden", tensor.Data(out.Last()), g.Last, real)
	near(t, "first layer", tensor.Data(out.Hidden[1]), g.First, real)
	for p, want := range map[Pooling][]float64{PoolMean: g.Mean, PoolFirstLastAvg: g.FirstLast, PoolCLS: g.CLS} {
		v, err := e.Pool(out, p)
		if err != nil {
			t.Fatal(err)
		}
		near(t, string(p), tensor.Data(v), want, nil)
	}

	dc := g.Config
	dc.Layers = 1
	dec, err := NewDecoder(dc, e.Embeddings.Word, rng)
	if err != nil {
		t.Fatal(err)
	}
	if !dec.Tied() {
		t.Fatal("decoder with shared embeddings is not tied")
	}
	load(t, dec.NamedParams(), g.Params, "decoder.")
	tgt, err := NewBatch(g.Tgt, g.Config.PadID)
	if err != nil {
		t.Fatal(err)
	}
	mem := Memory{States: tensor.New(len(g.Tgt)*4, D, g.Memory), Len: 4}
	logits, _, err := dec.Forward(tgt, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	V := g.Config.VocabSize
	near(t, "decoder logits", tensor.Data(logits), g.Logits, func(i int) bool {
		tok := i / V
		return tok%tgt.T < tgt.Lens[tok/tgt.T]
	})
}

func tinyConfig() Config {
	return Config{VocabSize: 40, Hidden: 16, Layers: 2, Heads: 2, Intermediate: 32, MaxPosition: 16,
		TypeVocab: 2, HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12, Pooler: true}
}

func TestNamedParamsHFLayout(t *testing.T) {
	e, err := NewEncoder(tinyConfig(), rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	byName := ByName(e.NamedParams())
	want := map[string][]int{
		"embeddings.word_embeddings.weight":               {40, 16},
		"embeddings.position_embeddings.weight":           {16, 16},
		"embeddings.token_type_embeddings.weight":         {2, 16},
		"embeddings.LayerNorm.weight":                     {16},
		"encoder.layer.0.attention.self.query.weight":     {16, 16},
		"encoder.layer.1.attention.self.value.bias":       {16},
		"encoder.layer.1.attention.output.dense.weight":   {16, 16},
		"encoder.layer.0.attention.output.LayerNorm.bias": {16},
		"encoder.layer.0.intermediate.dense.weight":       {32, 16},
		"encoder.layer.0.output.dense.weight":             {16, 32},
		"encoder.layer.1.output.LayerNorm.weight":         {16},
		"pooler.dense.weight":                             {16, 16},
	}
	for name, shape := range want {
		np, ok := byName[name]
		if !ok {
			t.Errorf("missing %s", name)
			continue
		}
		if len(np.Shape) != len(shape) || np.Shape[0] != shape[0] || (len(shape) == 2 && np.Shape[1] != shape[1]) {
			t.Errorf("%s has shape %v, want %v", name, np.Shape, shape)
		}
		n := 1
		for _, s := range shape {
			n *= s
		}
		if np.Param.Size() != n {
			t.Errorf("%s holds %d values, want %d", name, np.Param.Size(), n)
		}
	}
	if got := len(byName); got != 5+2*16+2 {
		t.Errorf("%d parameters, want %d", got, 5+2*16+2)
	}
	// BERT's initialisation: padding row zero, LN gain 1, weights within 2 std.
	for _, v := range tensor.Data(byName["embeddings.word_embeddings.weight"].Param)[:16] {
		if v != 0 {
			t.Fatal("padding embedding row is not zero")
		}
	}
	for _, v := range tensor.Data(byName["embeddings.LayerNorm.weight"].Param) {
		if v != 1 {
			t.Fatal("layer-norm gain not initialised to 1")
		}
	}
	for _, v := range tensor.Data(byName["encoder.layer.0.attention.self.query.weight"].Param) {
		if math.Abs(float64(v)) > 0.04 {
			t.Fatalf("weight %v outside the truncated normal's range", v)
		}
	}
}

func TestBadInput(t *testing.T) {
	c := tinyConfig()
	e, err := NewEncoder(c, rand.New(rand.NewPCG(1, 3)))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][][]int{
		"outside the vocabulary":  {{1, 2, 40}},
		"exceed the 16 positions": {make([]int, 17)},
	}
	for want, seqs := range cases {
		b, err := NewBatch(seqs, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Forward(b, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Forward(%v): error %v, want one mentioning %q", seqs, err, want)
		}
	}
	if _, err := NewBatch([][]int{{1}, {}}, 0); err == nil {
		t.Error("NewBatch accepted an empty sequence")
	}
	bad := c
	bad.Heads = 3
	if _, err := NewEncoder(bad, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("NewEncoder accepted hidden 16 with 3 heads")
	}
	if _, err := e.Pool(&Output{}, "max"); err == nil {
		t.Error("Pool accepted an unknown pooling")
	}
	if _, err := NewDecoder(c, nn.NewParam(tensor.Zeros(3, 16)), rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("NewDecoder accepted 3x16 shared embeddings")
	}
}

var _ mat.Tensor = (*tensor.Matrix)(nil)

// Tied reports whether the word embeddings are shared.
func (d *Decoder) Tied() bool { return d.tied }
