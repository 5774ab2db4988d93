package transformer

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestParamShapesMatchNamedParams: the shape list a checkpoint is checked
// against before allocation is exactly what NewEncoder builds.
func TestParamShapesMatchNamedParams(t *testing.T) {
	base := Config{VocabSize: 30, Hidden: 8, Layers: 3, Heads: 2, Intermediate: 12, MaxPosition: 10, TypeVocab: 2, LayerNormEps: 1e-12}
	for _, edit := range []func(*Config){
		func(*Config) {},
		func(c *Config) { c.Pooler = true },
		func(c *Config) { c.TypeVocab = 0 },
		func(c *Config) { c.Layers = 0 },
		func(c *Config) { c.PadID, c.PositionOffset, c.MaxPosition = 1, 2, 12 },
	} {
		c := base
		edit(&c)
		e, err := NewEncoder(c, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := ParamShapes(c, 1000)
		want := e.NamedParams()
		if !ok || len(got) != len(want) {
			t.Fatalf("%+v: %d shapes (ok %v), want %d", c, len(got), ok, len(want))
		}
		for i := range want {
			if got[i].Name != want[i].Name || !reflect.DeepEqual(got[i].Shape, want[i].Shape) || got[i].Param != nil {
				t.Fatalf("%+v: shape %d is %s %v, want %s %v", c, i, got[i].Name, got[i].Shape, want[i].Name, want[i].Shape)
			}
		}
		if _, ok := ParamShapes(c, len(want)-1); ok && c.Layers > 0 {
			t.Errorf("%+v: the limit was not enforced", c)
		}
	}
}
