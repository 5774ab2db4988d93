package main

import (
	"strings"
	"testing"
)

// The retrieval baseline's and the domain adaptation's bad values in
// gense.hcl are refused before anything runs, at the --set that gave them.
func TestGenSEExtraBadValues(t *testing.T) {
	const file = "../../experiments/gense.hcl"
	for _, c := range []struct{ set, want string }{
		{"stage.ret_pairs.threshold=1.5", `Parameter "threshold" of synth.retrieval_pairs: 1.5 is outside [0, 1]`},
		{"stage.ret_pairs.threshold=-0.1", `Parameter "threshold" of synth.retrieval_pairs: -0.1 is outside [0, 1]`},
		{"stage.ret_pairs.b=1.2", `Parameter "b" of synth.retrieval_pairs: 1.2 is outside [0, 1]`},
		{"stage.ret_pairs.top_k=0", `Parameter "top_k" of synth.retrieval_pairs: 0; must be at least 1`},
		{"stage.indomain.fields=[\"answer\"]", `Parameter "fields" of data.rerank_sentences`},
		{"stage.figure2.file=figure2.svg", `Parameter "file" of figure.scatter: "figure2.svg" must be a file name ending in .png`},
	} {
		code, out, errs := repro(t, "plan", file, "--profile", "ci", "--set", c.set)
		all := out + errs
		if code == 0 || !strings.Contains(all, c.want) || !strings.Contains(all, "--set:1:") || !strings.Contains(all, "nothing was run") {
			t.Errorf("--set %s: exit %d, want an error containing %q at --set:1:\n%s", c.set, code, c.want, all)
		}
	}
}
