package train

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/registry"
)

// TestT5ContrastiveSmallData: a set smaller than batch_size is refused by
// default; with small_data = "one_batch" every epoch is one batch of all of
// it (GenSE's in-domain stage: batch 1,024 over however many triplets the
// quality check kept), which trains exactly as batch_size = the set's size
// does.
func TestT5ContrastiveSmallData(t *testing.T) {
	d := loadReal(t, 0, 10, 10)
	in := map[string]registry.Artifact{"data": d.nli}
	small := func(extra map[string]cty.Value) map[string]cty.Value {
		m := tinyT5Enc(map[string]cty.Value{"max_steps": cty.NumberIntVal(0), "epochs": cty.NumberIntVal(2), "eval_every": cty.NumberIntVal(0)})
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	if _, _, err := (stageRun{name: "train.t5_contrastive", set: small(nil), seed: 1, inputs: in}).run(t); err == nil ||
		!strings.Contains(err.Error(), "batch_size: 16 is larger than the 10 training examples") {
		t.Fatalf("default (refuse): %v", err)
	}
	out, _, err := stageRun{name: "train.t5_contrastive", set: small(map[string]cty.Value{"small_data": cty.StringVal("one_batch")}), seed: 1, inputs: in}.run(t)
	if err != nil {
		t.Fatalf("one_batch: %v", err)
	}
	if h := readT5History[History](t, out); h.Steps != 2 {
		t.Errorf("one_batch over 10 triplets, 2 epochs: %d updates, want 2 (one per epoch)", h.Steps)
	}
	same, _, err := stageRun{name: "train.t5_contrastive", set: small(map[string]cty.Value{"batch_size": cty.NumberIntVal(10)}), seed: 1, inputs: in}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if dirDigest(t, out) != dirDigest(t, same) {
		t.Error("one_batch over 10 triplets differs from batch_size = 10")
	}
	trips, err := d.c.NLI("snli_dev")
	if err != nil {
		t.Fatal(err)
	}
	one := map[string]registry.Artifact{"data": artifact(t, registry.KindTriplets, registry.FileTriplets, trips[:1])}
	if _, _, err := (stageRun{name: "train.t5_contrastive", set: small(map[string]cty.Value{"small_data": cty.StringVal("one_batch")}), seed: 1, inputs: one}).run(t); err == nil ||
		!strings.Contains(err.Error(), "a batch needs at least 2") {
		t.Errorf("one triplet: %v", err)
	}
	if _, _, err := (stageRun{name: "train.t5_contrastive", set: small(map[string]cty.Value{"small_data": cty.StringVal("shrink")}), seed: 1, inputs: in}).run(t); err == nil ||
		!strings.Contains(err.Error(), `small_data: "shrink" is not one of refuse, one_batch`) {
		t.Errorf("small_data shrink: %v", err)
	}
}
