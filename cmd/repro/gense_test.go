package main

import (
	"strings"
	"testing"
)

// GenSE's bad inputs are refused before anything runs, at the place they
// were given: alpha outside [0, 1], a T_d template without its
// placeholders, a synthetic share outside [0, 1].
func TestGenSEBadValues(t *testing.T) {
	const file = "../../experiments/gense.hcl"
	for _, c := range []struct{ set, want string }{
		{"stage.filter.alpha=1.5", `Parameter "alpha" of synth.quality_check: 1.5 is outside [0, 1]`},
		{"stage.filter.alpha=-0.2", `Parameter "alpha" of synth.quality_check: -0.2 is outside [0, 1]`},
		{"stage.filter.template=true or false", `template "true or false" has no [X1] placeholder`},
		{"stage.ins_entail.source=Write two sentences.", `has no placeholder`},
		{"stage.syn_part.fraction=2", `Parameter "fraction" of synth.sample: 2 is outside [0, 1]`},
	} {
		code, out, errs := repro(t, "plan", file, "--profile", "ci", "--set", c.set)
		all := out + errs
		if code == 0 || !strings.Contains(all, c.want) || !strings.Contains(all, "--set:1:") || !strings.Contains(all, "nothing was run") {
			t.Errorf("--set %s: exit %d, want an error containing %q at --set:1:\n%s", c.set, code, c.want, all)
		}
	}
}
