package dsl

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

const stableA = `
experiment "x" {
  seed = 1
}
stage "corpus" {
  uses = "data.sentences"
  path = "wiki.txt"
}
stage "eda" {
  uses  = "text.eda"
  input = stage.corpus.sentences
  random_swap = 0.1
}
stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
  top_k = 3
  ratio = 0.25
}
stage "train" {
  uses          = "train.encoder"
  data          = stage.mask.pairs
  learning_rate = 3e-5
  tasks         = ["stsb", "sickr"]
}
`

// The same pipeline: other formatting, comments, attribute order, numbers
// spelt differently, and the unrelated stage "eda" renamed.
const stableB = `# reformatted
experiment "x" { seed = 1 }

stage "augment" {
  random_swap = 1e-1   # renamed stage, unrelated to train
  input = stage.corpus.sentences
  uses  = "text.eda"
}

stage "corpus" {
  path = "wiki${""}.txt"
  uses = "data.sentences"
}

stage "mask" {
  ratio = 1/4
  top_k = 1 + 2
  uses = "text.mask"
  input = stage.corpus.sentences
}

stage "train" {
  tasks = [
    "stsb",
    "sickr", # trailing comma
  ]
  learning_rate = 0.00003
  data = stage.mask.pairs
  uses = "train.encoder"
}
`

func TestParamsStableUnderFormatting(t *testing.T) {
	t.Parallel()
	a := mustLoad(t, "a.hcl", []byte(stableA), Options{}).Variants[0]
	b := mustLoad(t, "b.hcl", []byte(stableB), Options{}).Variants[0]
	rename := map[string]string{"eda": "augment"}
	for _, s := range a.Stages {
		name := s.Name
		if r, ok := rename[name]; ok {
			name = r
		}
		u := b.Stage(name)
		if u == nil {
			t.Fatalf("%s missing", name)
		}
		if !s.Params.RawEquals(u.Params) || s.Params.Equals(u.Params) != cty.True || s.Seed != u.Seed {
			t.Errorf("%s: params differ:\n%#v\n%#v", s.Name, s.Params, u.Params)
		}
		// The runner hashes a canonical encoding; it must agree too.
		ja, _ := ctyjson.Marshal(s.Params, s.Params.Type())
		jb, _ := ctyjson.Marshal(u.Params, u.Params.Type())
		if string(ja) != string(jb) {
			t.Errorf("%s: JSON differs: %s vs %s", s.Name, ja, jb)
		}
	}
	// Writing a default out gives the same value as leaving it out.
	d := mustLoad(t, "d.hcl", []byte(stableA[:len(stableA)-len("}\n")]+"  temperature = 0.05\n  pooling = \"cls\"\n}\n"), Options{}).Variants[0]
	if !d.Stage("train").Params.RawEquals(a.Stage("train").Params) {
		t.Errorf("explicit defaults changed the params:\n%#v\n%#v", d.Stage("train").Params, a.Stage("train").Params)
	}
	// Two spellings of the same float64 are one value: Params is what the
	// stage will see (decoded into its Go struct), not HCL's 512-bit decimal.
	sum := mustLoad(t, "e.hcl", []byte(strings.Replace(stableA, "ratio = 0.25", "ratio = 0.300000000000000044", 1)), Options{}).Variants[0]
	lit := mustLoad(t, "f.hcl", []byte(strings.Replace(stableA, "ratio = 0.25", "ratio = 0.30000000000000004", 1)), Options{}).Variants[0]
	if !sum.Stage("mask").Params.RawEquals(lit.Stage("mask").Params) {
		t.Errorf("two spellings of one float64 differ:\n%#v\n%#v", sum.Stage("mask").Params, lit.Stage("mask").Params)
	}
	// And a real change is seen.
	c := mustLoad(t, "c.hcl", []byte(stableA[:len(stableA)-len("}\n")]+"  batch_size = 32\n}\n"), Options{}).Variants[0]
	if c.Stage("train").Params.RawEquals(a.Stage("train").Params) {
		t.Errorf("changing batch_size did not change train's params")
	}
	if !c.Stage("mask").Params.RawEquals(a.Stage("mask").Params) {
		t.Errorf("changing train changed mask's params")
	}
}
