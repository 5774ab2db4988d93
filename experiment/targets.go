package experiment

import "repro/dsl"

// instanceTargets spells --target names as the variant's stage instances:
// a for_each stage's name means all of its instances (train ->
// train["sts"], train["nli"]), and train[sts] means train["sts"]. A name
// that means nothing is kept, for graph.Upstream to refuse with the list of
// stages.
func instanceTargets(v *dsl.Variant, targets []string) []string {
	var out []string
	for _, t := range targets {
		if ids := v.Instances(t); len(ids) > 0 {
			out = append(out, ids...)
		} else {
			out = append(out, t)
		}
	}
	return out
}
