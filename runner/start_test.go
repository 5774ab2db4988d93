package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/graph"
	"repro/registry"

	"github.com/zclconf/go-cty/cty"
)

// weightsParams is a test parameter struct that, like the training types'
// architecture groups, needs a model from its init input or a checkpoint.
type weightsParams struct {
	Checkpoint string `cty:"checkpoint"`
}

func (p weightsParams) CheckStart(connected func(string) bool) error {
	if connected("init") || p.Checkpoint != "" {
		return nil
	}
	return errors.New("no model: set checkpoint or connect init")
}

func weightsType(cnt *counter) *registry.StageType {
	return &registry.StageType{
		Name: "test.weights", Version: 1, Params: weightsParams{},
		Inputs:  []registry.Port{{Name: "in", Kind: registry.KindSentences}, {Name: "init", Kind: registry.KindSentences, Optional: true}},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Externals: func(params any) ([]registry.External, error) {
			if p := params.(*weightsParams); p.Checkpoint != "" {
				return []registry.External{{Name: "checkpoint", Path: p.Checkpoint}}, nil
			}
			return nil, nil
		},
		Run: func(ctx context.Context, env *registry.Env) error {
			cnt.hit(nodeFrom(env))
			return os.WriteFile(filepath.Join(env.Output("out"), "data.txt"), []byte("w"), 0o644)
		},
	}
}

// A run whose stages cannot work as declared (no model given, a checkpoint
// path that is not there) is refused before any stage runs -- the source
// upstream of them included -- and the refusal names every such stage at
// its source, one reason stated once for the stages that share it. The
// same graph runs once the stages get what they need, and a target that
// leaves the refused stages out runs.
func TestRunRefusedBeforeStart(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	w := weightsType(cnt)
	st := openTemp(t)
	in := map[string]graph.Edge{"in": {Node: "src", Output: "out"}}
	build := func(a, b, c map[string]cty.Value) *graph.Graph {
		g := &graph.Graph{Nodes: []*graph.Node{
			node(t, "src", ts["source"], nil, nil),
			node(t, "a", w, a, in),
			node(t, "b", w, b, in),
			node(t, "c", w, c, map[string]graph.Edge{"in": {Node: "src", Output: "out"}, "init": {Node: "a", Output: "out"}}),
		}}
		g.Nodes[1].Source, g.Nodes[2].Source = "exp.hcl:10", "exp.hcl:20"
		return g
	}
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := Run(context.Background(), st, build(nil, map[string]cty.Value{"checkpoint": cty.StringVal(missing)}, nil), Options{})
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a StartError", err)
	}
	if cnt.total() != 0 {
		t.Fatalf("a refused run executed %v", cnt.n)
	}
	msg := err.Error()
	for _, want := range []string{
		"the run cannot start (nothing ran): 2 stages cannot work as declared",
		"exp.hcl:10: stage \"a\" (test.weights)\n    no model: set checkpoint or connect init",
		"exp.hcl:20: stage \"b\" (test.weights)\n    checkpoint: stat " + missing,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, `"c"`) {
		t.Errorf("c has init connected, yet it is refused:\n%s", msg)
	}

	// Only the source: the refused stages are not part of the run.
	if _, err := Run(context.Background(), st, build(nil, nil, nil), Options{Targets: []string{"src"}}); err != nil {
		t.Fatalf("targeted run: %v", err)
	}
	ckptA, ckptB := t.TempDir(), t.TempDir() // different content: different keys
	if err := os.WriteFile(filepath.Join(ckptB, "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	setA := map[string]cty.Value{"checkpoint": cty.StringVal(ckptA)}
	setB := map[string]cty.Value{"checkpoint": cty.StringVal(ckptB)}
	if _, err := Run(context.Background(), st, build(setA, setB, nil), Options{}); err != nil {
		t.Fatalf("run with checkpoints: %v", err)
	}
	if cnt.total() != 4 {
		t.Errorf("executed %v, want src once and a, b, c", cnt.n)
	}
}
