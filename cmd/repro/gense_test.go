package main

import (
	"strings"
	"testing"
)

// GenSE's bad inputs are refused before anything runs, at the place they
// were given: a T_d template without its placeholders, a synthetic share
// outside [0, 1], one module's quality-check threshold outside [0, 1]
// (--set module.open.filter.alpha); and alpha outside [0, 1] (-var alpha,
// which both modules' quality check in modules/gense_synthesis.hcl and the
// retrieval labeller's threshold read), at each line that reads it.
func TestGenSEBadValues(t *testing.T) {
	const file = "../../experiments/gense.hcl"
	for _, c := range []struct{ set, want string }{
		{"stage.ret_pairs.template=true or false", `template "true or false" has no [X1] placeholder`},
		{"stage.ins_entail.source=Write two sentences.", `has no placeholder`},
		{"stage.syn_part.fraction=2", `Parameter "fraction" of synth.sample: 2 is outside [0, 1]`},
		{"module.open.filter.alpha=1.5", `Parameter "alpha" of synth.quality_check: 1.5 is outside [0, 1]`},
		{`module.in.generate["contra"].top_p=2`, `Parameter "top_p" of generate.complete: 2 must lie in (0, 1]`},
	} {
		code, out, errs := repro(t, "plan", file, "--profile", "ci", "--set", c.set)
		all := out + errs
		if code == 0 || !strings.Contains(all, c.want) || !strings.Contains(all, "--set:1:") || !strings.Contains(all, "nothing was run") {
			t.Errorf("--set %s: exit %d, want an error containing %q at --set:1:\n%s", c.set, code, c.want, all)
		}
	}
	for _, alpha := range []string{"1.5", "-0.2"} {
		code, out, errs := repro(t, "plan", file, "--profile", "ci", "-var", "alpha="+alpha)
		all := out + errs
		for _, want := range []string{
			`gense_synthesis.hcl:`, `Parameter "alpha" of synth.quality_check: ` + alpha + ` is outside [0, 1]`,
			`gense.hcl:`, `Parameter "threshold" of synth.retrieval_pairs: ` + alpha + ` is outside [0, 1]`,
		} {
			if code == 0 || !strings.Contains(all, want) || !strings.Contains(all, "nothing was run") {
				t.Errorf("-var alpha=%s: exit %d, want an error containing %q:\n%s", alpha, code, want, all)
			}
		}
	}
}
