package dsl

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repro/graph"
)

// pseudoKeys computes every node's cache key with each input digest
// replaced by its producer's key and output name: what graph.Key gives once
// the producers have run and written the same bytes for the same key.
func pseudoKeys(t *testing.T, g *graph.Graph) map[string]string {
	t.Helper()
	keys := map[string]string{}
	for _, n := range g.Nodes { // topological order
		digests := map[string]string{}
		for port, edge := range n.Inputs {
			up, ok := keys[edge.Node]
			if !ok {
				t.Fatalf("%s reads %s before it is keyed", n.ID, edge.Node)
			}
			digests[port] = up + "/" + edge.Output
		}
		k, err := graph.Key(n, digests, "cpu")
		if err != nil {
			t.Fatal(err)
		}
		keys[n.ID] = k
	}
	return keys
}

func TestModuleInputsTwoInstances(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/modules/inputs/twice.hcl", Options{})
	v := cfg.Variants[0]
	names := stageNames(v)
	for _, want := range []string{"module.a.train", "module.b.train", "module.same_as_a.train", "module.d.train",
		"module.a.wiki", "module.d.mask", "final"} {
		if !slices.Contains(names, want) {
			t.Errorf("no instance %s in %v", want, names)
		}
	}
	// d passes its own corpus: its default stage is never reached.
	if slices.Contains(names, "module.d.wiki") {
		t.Errorf("module.d.wiki is an instance, but d sets corpus: %v", names)
	}
	in := func(stage, port string) string {
		s := v.Stage(stage)
		if s == nil {
			t.Fatalf("no stage %s", stage)
		}
		r := s.Inputs[port]
		return r.Stage + "." + r.Output
	}
	for _, tc := range []struct{ stage, port, want string }{
		{"module.a.train", "init", "base.model"},              // input.encoder from the includer
		{"module.b.train", "init", "other.model"},             // another block, another input
		{"module.a.mask", "input", "module.a.wiki.sentences"}, // the default, in the module's scope
		{"module.d.train", "init", "module.a.train.model"},    // another module's output block
		{"module.d.mask", "input", "corpus.sentences"},
		{"final", "model", "module.d.train.model"},
	} {
		if got := in(tc.stage, tc.port); got != tc.want {
			t.Errorf("%s.%s = %s, want %s", tc.stage, tc.port, got, tc.want)
		}
	}
	if got := num(t, v.Stage("module.a.train").Params, "learning_rate"); got != 1e-4 {
		t.Errorf("module a's lr = %v: the module block's variable", got)
	}
	if got := num(t, v.Stage("module.d.train").Params, "learning_rate"); got != 3e-5 {
		t.Errorf("module d's lr = %v: the variable's default", got)
	}
	// Cells through output blocks (with keys after them) and module stages.
	refs := map[string]string{}
	for _, x := range cfg.Expects {
		refs[x.Name] = x.Value.Stage + "." + x.Value.Output + "." + strings.Join(x.Value.Path, ".")
	}
	if refs["a"] != "module.a.eval.metrics.avg" || refs["b"] != "module.b.eval.metrics.avg" {
		t.Errorf("expect refs = %v", refs)
	}

	// Keys hold no names: the block identical to a gives a's keys, the
	// block with another encoder does not, and d (chained on a) differs.
	keys := pseudoKeys(t, v.Graph)
	for _, s := range []string{"wiki", "mask", "train", "eval"} {
		a, same := keys["module.a."+s], keys["module.same_as_a."+s]
		if a == "" || a != same {
			t.Errorf("module.a.%s and module.same_as_a.%s: keys %q and %q, want equal", s, s, a, same)
		}
	}
	if keys["module.a.wiki"] != keys["module.b.wiki"] {
		t.Error("the stages before the input differ between a and b")
	}
	for _, s := range []string{"train", "eval"} {
		if keys["module.a."+s] == keys["module.b."+s] {
			t.Errorf("module.a.%s and module.b.%s have the same key with different encoders", s, s)
		}
	}
	if keys["module.d.train"] == keys["module.a.train"] {
		t.Error("d's train, chained onto a's, has a's key")
	}
}

// TestModuleInputsProfileAndAlone: the module's profile applies to each
// instance; loading the module file on its own needs the input without a
// default, reported at its input block.
func TestModuleInputsProfileAndAlone(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/modules/inputs/twice.hcl", Options{Profile: "ci"})
	for _, s := range []string{"module.a.train", "module.b.train"} {
		if got := num(t, cfg.Variants[0].Stage(s).Params, "max_steps"); got != 10 {
			t.Errorf("%s max_steps = %v under ci", s, got)
		}
	}
	l := NewLoader(testRegistry())
	_, diags := l.Load("testdata/modules/inputs/chain.hcl", Options{})
	if !diags.HasErrors() {
		t.Fatal("a module file whose input has no default loaded on its own")
	}
	var b bytes.Buffer
	Render(&b, l.Files(), diags)
	if len(diags) != 1 || diags[0].Summary != "Missing value for input" || diags[0].Subject.Start.Line != 11 ||
		!strings.Contains(diags[0].Detail, `Input "encoder" has no default`) {
		t.Errorf("diagnostics:\n%s", b.String())
	}
}

// TestModuleInputErrorFixtures: diagnostics of module inputs and outputs,
// at the line in the file at fault (`# ERROR: text` as in testdata/errors).
func TestModuleInputErrorFixtures(t *testing.T) {
	t.Parallel()
	checkModuleFixtures(t, "testdata/modules/input_errors")
}

// checkModuleFixtures loads DIR/root.hcl and checks its diagnostics against
// the `# ERROR:` lines of every file in DIR.
func checkModuleFixtures(t *testing.T, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.hcl"))
	type key struct {
		file string
		line int
	}
	want := map[key][]string{}
	for _, f := range files {
		exps, _ := parseExpectations(t, mustRead(t, f))
		for _, e := range exps {
			want[key{f, e.line}] = append(want[key{f, e.line}], e.text)
		}
	}
	l := NewLoader(testRegistry())
	cfg, diags := l.Load(filepath.Join(dir, "root.hcl"), Options{})
	if cfg != nil {
		t.Error("a config with errors was returned")
	}
	for _, d := range diags {
		text := d.Summary + "; " + d.Detail
		if d.Subject == nil {
			t.Errorf("diagnostic without a range: %s", text)
			continue
		}
		k := key{d.Subject.Filename, d.Subject.Start.Line}
		i := slices.IndexFunc(want[k], func(w string) bool { return strings.Contains(text, w) })
		if i < 0 {
			t.Errorf("unexpected diagnostic at %s:%d: %s", k.file, k.line, text)
			continue
		}
		want[k] = slices.Delete(want[k], i, i+1)
	}
	for k, ws := range want {
		for _, w := range ws {
			t.Errorf("%s:%d: missing diagnostic containing %q", k.file, k.line, w)
		}
	}
	if t.Failed() {
		var b bytes.Buffer
		Render(&b, l.Files(), diags)
		t.Logf("all diagnostics:\n%s", b.String())
	}
}

// TestModuleInputCycleThroughStages: a stage feeding a module whose output
// feeds it is a dependency cycle among the instances, reported at the
// reference that closes it, naming the instances.
func TestModuleInputCycleThroughStages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, src string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("mod.hcl", `input "encoder" {
  kind = "encoder"
}
stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}
stage "refine" {
  uses = "train.encoder"
  data = stage.mask.pairs
  init = input.encoder
}
output "model" {
  value = stage.refine.model
}
`)
	root := write("root.hcl", `experiment "x" {}
stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}
stage "t" {
  uses = "train.encoder"
  data = stage.mask.pairs
  init = module.w.model
}
module "w" {
  source  = "./mod.hcl"
  encoder = stage.t.model
}
`)
	l := NewLoader(testRegistry())
	_, diags := l.Load(root, Options{})
	var b bytes.Buffer
	Render(&b, l.Files(), diags)
	if len(diags) != 1 || diags[0].Summary != "Dependency cycle" ||
		!strings.Contains(diags[0].Detail, "module.w.refine") || !strings.Contains(diags[0].Detail, "t") {
		t.Fatalf("want one dependency cycle through module.w.refine:\n%s", b.String())
	}
	if s := diags[0].Subject; s == nil || s.Start.Line == 0 {
		t.Errorf("no position: %v", s)
	}
	t.Logf("%s", b.String())
}

// TestModuleInputsFromProfile: a profile's module block replaces the
// block's arguments (inputs and variables); null gives an input its
// default back.
func TestModuleInputsFromProfile(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/modules/inputs/twice.hcl", Options{Profile: "mini"})
	v := cfg.Variants[0]
	if r := v.Stage("module.b.train").Inputs["init"]; r.Stage != "base" {
		t.Errorf("module.b.train init = %+v: the profile passes base", r)
	}
	if r := v.Stage("module.d.mask").Inputs["input"]; r.Stage != "module.d.wiki" {
		t.Errorf("module.d.mask input = %+v: corpus = null in the profile, so the default", r)
	}
	if got := num(t, v.Stage("module.d.train").Params, "learning_rate"); got != 5e-5 {
		t.Errorf("module.d lr = %v", got)
	}
	keys := pseudoKeys(t, v.Graph)
	if keys["module.a.train"] != keys["module.b.train"] {
		t.Error("under mini, b has a's inputs and variables but not its key")
	}
	if keys["module.a.train"] == keys["module.same_as_a.train"] {
		t.Error("under mini, same_as_a has another lr but a's key")
	}
}
