package train

import (
	"context"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/encoder"
	"repro/registry"
)

func tinyT5Enc(extra map[string]cty.Value) map[string]cty.Value {
	s := map[string]cty.Value{
		"from_scratch": cty.True, "layers": cty.NumberIntVal(1), "hidden": cty.NumberIntVal(32), "heads": cty.NumberIntVal(2),
		"ff": cty.NumberIntVal(64), "vocab_size": cty.NumberIntVal(600), "sentinels": cty.NumberIntVal(0),
		"max_length": cty.NumberIntVal(32), "batch_size": cty.NumberIntVal(16), "learning_rate": cty.NumberFloatVal(1e-3),
		"max_steps": cty.NumberIntVal(20), "eval_every": cty.NumberIntVal(10), "dropout": cty.NumberFloatVal(0.1),
	}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// TestT5Contrastive trains GenSE's prompt-based contrastive encoder on
// real NLI triplets (eq. 2), opens the artifact as an encoder, continues it
// without hard negatives (eq. 3), and trains the "mean" mode.
func TestT5Contrastive(t *testing.T) {
	d := loadReal(t, 0, 400, 200)
	out, _, err := stageRun{name: "train.t5_contrastive", set: tinyT5Enc(nil), seed: 1,
		inputs: map[string]registry.Artifact{"data": d.nli, "dev": d.dev}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	h := readT5History[History](t, out)
	if len(h.Evaluation) != 2 || h.BestDev == nil || h.Steps != 20 {
		t.Fatalf("history %+v", h)
	}
	t.Logf("STS-B dev Spearman (200 pairs) %.2f, %.2f", h.Evaluation[0].Metric, h.Evaluation[1].Metric)
	enc, err := encoder.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := enc.Encode(context.Background(), []string{"A man is sleeping.", "Kids play."})
	if err != nil || len(vs) != 2 || len(vs[0]) != 32 {
		t.Fatalf("encode: %v %v", len(vs), err)
	}
	out2, _, err := stageRun{name: "train.t5_contrastive", set: tinyT5Enc(map[string]cty.Value{"hard_negatives": cty.False,
		"max_steps": cty.NumberIntVal(4), "eval_every": cty.NumberIntVal(0)}), seed: 1,
		inputs: map[string]registry.Artifact{"data": d.nli, "encoder": {Kind: registry.KindEncoder, Dir: out}}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := encoder.Open(out2); err != nil {
		t.Fatal(err)
	}
	_, _, err = stageRun{name: "train.t5_contrastive", set: tinyT5Enc(map[string]cty.Value{"mode": cty.StringVal("mean"),
		"template": cty.StringVal(""), "max_steps": cty.NumberIntVal(4)}), seed: 1,
		inputs: map[string]registry.Artifact{"data": d.nli}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
}

func TestT5ContrastiveErrors(t *testing.T) {
	d := loadReal(t, 0, 50, 10)
	for _, tc := range []struct {
		set  map[string]cty.Value
		want string
	}{
		{tinyT5Enc(map[string]cty.Value{"template": cty.StringVal("no placeholder")}), `template: template "no placeholder" has no [X] placeholder`},
		{tinyT5Enc(map[string]cty.Value{"mode": cty.StringVal("cls")}), `mode: "cls" is not one of`},
		{tinyT5Enc(map[string]cty.Value{"temperature": cty.NumberIntVal(0)}), "temperature: 0 must be positive"},
	} {
		if _, _, err := (stageRun{name: "train.t5_contrastive", set: tc.set, inputs: map[string]registry.Artifact{"data": d.nli}}).run(t); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
