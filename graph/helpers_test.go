package graph

import (
	"context"
	"testing"

	"repro/registry"

	"github.com/zclconf/go-cty/cty"
)

// Stage types for graph tests: only their ports and parameters matter here
// (nothing runs).
type sourceParams struct {
	Text string `cty:"text"`
}

type transformParams struct {
	Suffix string `cty:"suffix"`
}

func noRun(context.Context, *registry.Env) error { return nil }

func testTypes() map[string]*registry.StageType {
	transform := func(name string, seeded bool) *registry.StageType {
		return &registry.StageType{
			Name: name, Version: 1, Params: transformParams{Suffix: "!"}, Seeded: seeded,
			Inputs:  []registry.Port{{Name: "in", Kind: registry.KindSentences}, {Name: "extra", Kind: registry.KindSentences, Optional: true}},
			Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
			Run:     noRun,
		}
	}
	return map[string]*registry.StageType{
		"source": {Name: "test.source", Version: 1, Params: sourceParams{Text: "hello"},
			Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}}, Run: noRun},
		"transform": transform("test.transform", false),
		"seeded":    transform("test.seeded", true),
	}
}

func params(t testing.TB, st *registry.StageType, over map[string]cty.Value) cty.Value {
	t.Helper()
	v, err := st.ParamObject(over)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func node(t testing.TB, id string, st *registry.StageType, over map[string]cty.Value, inputs map[string]Edge) *Node {
	return &Node{ID: id, Type: st, Params: params(t, st, over), Inputs: inputs}
}
