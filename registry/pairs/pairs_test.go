package pairs

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/rows"
	"repro/registry"
)

func runPairs(t *testing.T, name string, set map[string]cty.Value, in registry.Artifact) (map[string]string, error) {
	t.Helper()
	r := registry.New()
	Register(r)
	st, ok := r.Lookup(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	ps, _ := st.ParamSchema()
	attrs := map[string]cty.Value{}
	for _, p := range ps {
		attrs[p.Name] = p.Default
	}
	for k, v := range set {
		attrs[k] = v
	}
	params, err := st.DecodeParams(cty.ObjectVal(attrs))
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{}
	for _, o := range st.Outputs {
		outs[o.Name] = t.TempDir()
	}
	env := &registry.Env{Params: params, Inputs: map[string]registry.Artifact{"data": in}, Outputs: outs, Seed: 4,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return outs, st.Call(context.Background(), env)
}

func pairsArtifact(t *testing.T, ps []rows.GeneratedPair) registry.Artifact {
	t.Helper()
	dir := t.TempDir()
	if err := rows.Write(filepath.Join(dir, registry.FilePairs), ps); err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Kind: registry.KindPairs, Dir: dir, Digest: "t"}
}

// TestChain runs the post-processing chain as the experiment does and
// checks the validation split is written as STS pairs; bad rows fail
// with the row named.
func TestChain(t *testing.T) {
	var ps []rows.GeneratedPair
	for i, s := range []string{"a", "b", "c", "d", "e"} {
		ps = append(ps, rows.GeneratedPair{Sentence1: s, Sentence2: s, Label: 1, Origin: "generated", X1: i},
			rows.GeneratedPair{Sentence1: s, Sentence2: s + " x", Label: 1, Origin: "generated", X1: i},
			rows.GeneratedPair{Sentence1: s, Sentence2: s + " y", Label: 0, Origin: "generated", X1: i})
	}
	in := pairsArtifact(t, ps)
	for _, stage := range []string{"pairs.drop_identical", "pairs.smooth", "pairs.augment"} {
		outs, err := runPairs(t, stage, nil, in)
		if err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		in = registry.Artifact{Kind: registry.KindPairs, Dir: outs["pairs"], Digest: stage}
	}
	outs, err := runPairs(t, "pairs.split", nil, in)
	if err != nil {
		t.Fatal(err)
	}
	train, _ := rows.Read[rows.GeneratedPair](filepath.Join(outs["train"], registry.FilePairs))
	val, err := rows.Read[rows.STSPair](filepath.Join(outs["validation"], registry.FilePairs))
	if err != nil {
		t.Fatal(err)
	}
	// 15 - 5 identical + 10 augmented = 20; 10% validation.
	if len(train) != 18 || len(val) != 2 || val[0].Task != ValidationTask {
		t.Errorf("split: %d train, %d validation %+v", len(train), len(val), val)
	}
	for _, p := range train {
		if p.Label == 1 || (p.Origin == "generated" && p.Label == 0) {
			t.Errorf("unsmoothed label: %+v", p)
		}
	}
	bad := pairsArtifact(t, []rows.GeneratedPair{{Sentence1: "a", Sentence2: "b"}, {Sentence1: " ", Sentence2: "c"}})
	if _, err := runPairs(t, "pairs.smooth", nil, bad); err == nil || !strings.Contains(err.Error(), "row 2: empty sentence") {
		t.Errorf("empty sentence: %v", err)
	}
	if _, err := runPairs(t, "pairs.drop_identical", nil, pairsArtifact(t, []rows.GeneratedPair{{Sentence1: "a", Sentence2: "a"}})); err == nil ||
		!strings.Contains(err.Error(), "nothing is left") {
		t.Errorf("all identical: %v", err)
	}
}
