package experiment_test

import (
	"path/filepath"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/experiment"
	"repro/registry/builtin"
)

// idParams are the parameters that keep generated token ids and scored
// log-probabilities beside the text, by stage type.
var idParams = map[string]string{
	"generate.complete":     "token_ids",
	"generate.dino_pairs":   "token_ids",
	"generate.dino_x1":      "token_ids",
	"synth.quality_check":   "raw_logprobs",
	"synth.retrieval_pairs": "raw_logprobs",
}

// TestPaperProfilesKeepTokenIDs: every generation and option-scoring stage
// of a paper's experiment keeps its token ids or raw log-probabilities in
// the paper profile (and its ablations), and not in the mini and ci
// profiles, whose outputs were recorded without them (the parameters'
// defaults, so their keys are unchanged).
func TestPaperProfilesKeepTokenIDs(t *testing.T) {
	reg := builtin.Default()
	for _, name := range []string{"dino.hcl", "gense.hcl"} {
		file, _ := filepath.Abs(filepath.Join("../experiments", name))
		x, _, _, err := experiment.Load(reg, file, experiment.Options{})
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, profile := range append([]string{""}, x.Config.Profiles...) {
			for _, ablation := range append([]string{""}, x.Config.Ablations...) {
				y, _, _, err := experiment.Load(reg, file, experiment.Options{Profile: profile, Ablation: ablation})
				if err != nil {
					t.Fatalf("%s %s %s: %v", name, profile, ablation, err)
				}
				for _, n := range y.Graph.Nodes {
					p, ok := idParams[n.Type.Name]
					if !ok {
						continue
					}
					seen++
					want := cty.BoolVal(profile == "")
					got := cty.False // a key:"added" parameter at its default is left out
					if n.Params.Type().HasAttribute(p) {
						got = n.Params.GetAttr(p)
					}
					if got != want {
						t.Errorf("%s profile %q ablation %q: %s.%s = %v, want %v", name, experiment.OrPaper(profile), ablation, n.ID, p, got, want)
					}
				}
			}
		}
		if seen == 0 {
			t.Errorf("%s: no generation or scoring stage", name)
		}
	}
}
