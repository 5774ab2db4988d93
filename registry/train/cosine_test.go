package train

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/rows"
	"repro/registry"
)

func cosineRun(t *testing.T, ps []rows.GeneratedPair, dev []rows.STSPair) stageRun {
	t.Helper()
	in := map[string]registry.Artifact{"data": artifact(t, registry.KindPairs, registry.FilePairs, ps)}
	if dev != nil {
		in["dev"] = artifact(t, registry.KindSTS, registry.FilePairs, dev)
	}
	return stageRun{name: "train.cosine_mse", inputs: in, seed: 3, work: t.TempDir(), set: cosineSet()}
}

// cosineSet is a tiny from-scratch train.cosine_mse.
func cosineSet() map[string]cty.Value {
	return map[string]cty.Value{
		"from_scratch": cty.True, "layers": cty.NumberIntVal(1), "hidden": cty.NumberIntVal(16), "heads": cty.NumberIntVal(2),
		"intermediate": cty.NumberIntVal(32), "max_position": cty.NumberIntVal(32), "vocab": cty.StringVal("train"),
		"vocab_size": cty.NumberIntVal(120), "max_length": cty.NumberIntVal(16), "batch_size": cty.NumberIntVal(4),
		"max_steps": cty.NumberIntVal(6), "eval_every": cty.NumberIntVal(3), "learning_rate": cty.NumberFloatVal(1e-3)}
}

// cosinePairs are labelled pairs and validation pairs of a few sentences.
func cosinePairs() ([]rows.GeneratedPair, []rows.STSPair) {
	var ps []rows.GeneratedPair
	var dev []rows.STSPair
	words := []string{"a man plays a flute", "a woman walks down the street", "two dogs run in a park", "the cat sleeps"}
	for i, w := range words {
		other := words[(i+1)%len(words)]
		ps = append(ps, rows.GeneratedPair{Sentence1: w, Sentence2: w + " now", Label: 0.9, Origin: "generated"},
			rows.GeneratedPair{Sentence1: w, Sentence2: other, Label: 0.1, Origin: "generated"})
		dev = append(dev, rows.STSPair{Task: "sts-l", Subset: "validation", Sentence1: w, Sentence2: w + " today", Score: 0.9},
			rows.STSPair{Task: "sts-l", Subset: "validation", Sentence1: w, Sentence2: other, Score: 0.1})
	}
	return ps, dev
}

// TestCosineMSE trains the bi-encoder regression on generated pairs (with
// provenance keys) and plain pairs, selects on an STS validation split,
// and is deterministic; a label outside [-1, 1] is an error naming its row.
func TestCosineMSE(t *testing.T) {
	ps, dev := cosinePairs()
	a, _, err := cosineRun(t, ps, dev).run(t)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := cosineRun(t, ps, dev).run(t)
	if err != nil {
		t.Fatal(err)
	}
	if dirDigest(t, a) != dirDigest(t, b) {
		t.Error("the same seed trained different models")
	}
	ps[3].Label = 2
	if _, _, err := cosineRun(t, ps, nil).run(t); err == nil || !strings.Contains(err.Error(), "row 4: label 2 outside [-1, 1]") {
		t.Errorf("bad label: %v", err)
	}
}
