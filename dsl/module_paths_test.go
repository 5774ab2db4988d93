package dsl

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

const pathsFile = "testdata/modules/paths/main.hcl"

// changedKeys loads pathsFile with sets and returns the stages whose
// pseudo-keys differ from the plain load's.
func changedKeys(t *testing.T, sets ...string) ([]string, *Variant) {
	t.Helper()
	base := pseudoKeys(t, loadFile(t, pathsFile, Options{}).Variants[0].Graph)
	v := loadFile(t, pathsFile, Options{Sets: sets}).Variants[0]
	got := pseudoKeys(t, v.Graph)
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(base))) {
		t.Fatalf("--set %v changed the instances: %v, was %v", sets, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(base)))
	}
	var changed []string
	for id, k := range got {
		if base[id] != k {
			changed = append(changed, id)
		}
	}
	slices.Sort(changed)
	return changed, v
}

// A --set into a module stage changes that stage's key and what reads it,
// nothing of another block of the same module file.
func TestSetIntoModuleStage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set  string
		want []string
	}{
		{"module.a.train.learning_rate=1e-3", []string{"module.a.eval", "module.a.train"}},
		{"module.b.train.seed=7", []string{"module.b.eval", "module.b.train"}},
		{`module.outer.mask["x"].top_k=5`, []string{`module.outer.mask["x"]`, "use_x"}},
		{"module.outer.mask.top_k=5", []string{`module.outer.mask["x"]`, `module.outer.mask["y"]`, "use_x", "use_y"}},
		{"module.outer.module.inner.train.learning_rate=0.01", []string{"module.outer.module.inner.eval", "module.outer.module.inner.train"}},
		{"module.a.train.learning_rate=3e-5", nil}, // the module's default: the same key
	} {
		got, v := changedKeys(t, tc.set)
		if !slices.Equal(got, tc.want) {
			t.Errorf("--set %s changed %v, want %v", tc.set, got, tc.want)
		}
		_ = v
	}
	// An input set to the includer's stage: module a's default corpus
	// (module.a.wiki) is no longer reached.
	v := loadFile(t, pathsFile, Options{Sets: []string{"module.a.mask.input=stage.corpus.sentences"}}).Variants[0]
	if r := v.Stage("module.a.mask").Inputs["input"]; r.Stage != "corpus" || r.Output != "sentences" {
		t.Errorf("module.a.mask reads %s.%s, want the includer's corpus.sentences", r.Stage, r.Output)
	}
	if v.Stage("module.a.wiki") != nil || v.Stage("module.b.wiki") == nil {
		t.Errorf("module.a.wiki should be gone and module.b.wiki kept: %v", stageNames(v))
	}
	v = loadFile(t, pathsFile, Options{Sets: []string{"module.a.train.learning_rate=local.lr"}}).Variants[0]
	if got := num(t, v.Stage("module.a.train").Params, "learning_rate"); got != 1e-3 {
		t.Errorf("learning_rate = %v: the value is evaluated in the including file (local.lr = 1e-3)", got)
	}
}

// A --set list and an ablation's axes over a module stage are variants
// named and labelled by the path as written.
func TestModuleStageVariants(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, pathsFile, Options{Sets: []string{"module.a.train.learning_rate=1e-4,2e-4"}})
	var names []string
	for _, v := range cfg.Variants {
		names = append(names, v.Name)
	}
	if want := []string{"module.a.train.learning_rate=0.0001", "module.a.train.learning_rate=0.0002"}; !slices.Equal(names, want) {
		t.Errorf("variants %v, want %v", names, want)
	}
	if !slices.Equal(cfg.Varied, []string{"module.a.train.learning_rate"}) {
		t.Errorf("varied = %v", cfg.Varied)
	}
	cfg = loadFile(t, pathsFile, Options{Ablation: "lr"})
	if len(cfg.Variants) != 2 || cfg.Variants[1].Name != "module.a.train.learning_rate=0.001" {
		t.Fatalf("ablation lr: %d variants, second %q", len(cfg.Variants), cfg.Variants[len(cfg.Variants)-1].Name)
	}
	if got := num(t, cfg.Variants[1].Stage("module.a.train").Params, "learning_rate"); got != 1e-3 {
		t.Errorf("ablation lr's second variant: learning_rate %v", got)
	}
	cfg = loadFile(t, pathsFile, Options{Ablation: "corpus"})
	v := cfg.Variants[1]
	if r := v.Stage("module.a.mask").Inputs["input"]; r.Stage != "corpus" {
		t.Errorf("variant %q: module.a.mask reads %s", v.Name, r.Stage)
	}
	if got := v.Label["module.a.mask.input"].AsString(); got != "stage.corpus.sentences" {
		t.Errorf("label of the input = %q", got)
	}
	if got := num(t, v.Stage(`module.outer.mask["x"]`).Params, "top_k"); got != 5 {
		t.Errorf(`module.outer.mask["x"].top_k = %v`, got)
	}
}

// --set paths into modules that name nothing are reported at the flag.
func TestSetIntoModuleErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ set, want string }{
		{"module.nope.train.epochs=1", `Unknown module; "module.nope.train.epochs": testdata/modules/paths/main.hcl declares no module "nope". Declared: a, b, outer.`},
		{"module.a.trian.epochs=1", `Unknown module stage; "module.a.trian.epochs": module "a" (testdata/modules/inputs/chain.hcl) has no top-level stage "trian". Did you mean "train"? Its stages: wiki, mask, train, eval.`},
		{"module.outer.module.innr.train.epochs=1", `declares no module "innr". Did you mean "inner"? Declared: inner.`},
		{`module.outer.mask["z"].top_k=1`, `No such instance; module.outer.mask["z"].top_k: stage "mask" has no instance "z"; its instances: mask["x"], mask["y"].`},
		{"module.a.train.learning_rate=stage.base.model", "A value set in a module stage cannot refer to stage outputs"},
		{"module.a.mask.input=stage.base.model", "Artifact kind mismatch"},
	} {
		_, diags := NewLoader(testRegistry()).LoadSource(pathsFile, mustRead(t, pathsFile), Options{Sets: []string{tc.set}})
		found := false
		for _, d := range diags {
			if strings.Contains(d.Summary+"; "+d.Detail, tc.want) {
				found = true
				if d.Subject == nil || d.Subject.Filename != "--set" && !strings.Contains(tc.want, "kind") {
					t.Errorf("--set %s: reported at %v, not at the flag", tc.set, d.Subject)
				}
			}
		}
		if !found || !diags.HasErrors() {
			t.Errorf("--set %s: no diagnostic containing %q in %v", tc.set, tc.want, diags)
		}
	}
}

// --target names a module stage as plan does; a for_each module stage's
// name means its instances; what selects nothing is explained.
func TestModuleTargets(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, pathsFile, Options{})
	v := cfg.Variants[0]
	for name, want := range map[string][]string{
		"module.a.train":                 {"module.a.train"},
		"module.outer.mask":              {`module.outer.mask["x"]`, `module.outer.mask["y"]`},
		"module.outer.mask[x]":           {`module.outer.mask["x"]`},
		`module.outer.mask["y"]`:         {`module.outer.mask["y"]`},
		"module.outer.module.inner.eval": {"module.outer.module.inner.eval"},
	} {
		if got := v.Instances(name); !slices.Equal(got, want) {
			t.Errorf("Instances(%s) = %v, want %v", name, got, want)
		}
		if p := cfg.TargetProblem(v, name); p != "" {
			t.Errorf("TargetProblem(%s) = %q", name, p)
		}
	}
	off := loadFile(t, pathsFile, Options{Sets: []string{"module.a.mask.input=stage.corpus.sentences"}})
	if got := off.TargetProblem(off.Variants[0], "module.a.wiki"); !strings.Contains(got, `stage "wiki" of module "a" is not part of this pipeline`) {
		t.Errorf("TargetProblem(module.a.wiki) = %q once nothing reads it", got)
	}
	for name, want := range map[string]string{
		"module.nope.train":              `declares no module "nope"`,
		"module.a.trian":                 `module "a" (testdata/modules/inputs/chain.hcl) has no top-level stage "trian". Did you mean "train"? Its stages: wiki, mask, train, eval.`,
		"module.a.train.learning_rate":   "names a stage instance (module.a.train), not an attribute",
		"module.a":                       "name a stage of module \"a\": module.a.STAGE",
		`module.outer.mask["z"]`:         `module.outer.mask has no instance "z"; its instances: module.outer.mask["x"], module.outer.mask["y"]`,
		"module.outer.module.nope.train": `testdata/modules/paths/outer.hcl declares no module "nope". Declared: inner.`,
		"stage.nothing":                  "",
	} {
		if got := cfg.TargetProblem(v, name); !strings.Contains(got, want) || (want == "") != (got == "") {
			t.Errorf("TargetProblem(%s) = %q, want %q", name, got, want)
		}
	}
}

// A path into a module stage that nothing reads is a warning: it changes
// nothing.
func TestSetIntoUnreachedModuleStage(t *testing.T) {
	t.Parallel()
	sets := []string{"module.a.mask.input=stage.corpus.sentences", "module.a.wiki.limit=3"}
	cfg, diags := NewLoader(testRegistry()).LoadSource(pathsFile, mustRead(t, pathsFile), Options{Sets: sets})
	if cfg == nil || diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	if len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || diags[0].Subject.Filename != "--set" ||
		!strings.Contains(diags[0].Detail, "nothing this file runs reads module.a.wiki, so this changes nothing") {
		t.Errorf("diagnostics %v, want one warning at the flag", diags)
	}
	if _, diags := NewLoader(testRegistry()).LoadSource(pathsFile, mustRead(t, pathsFile), Options{Sets: sets[1:]}); len(diags) != 0 {
		t.Errorf("module.a.wiki is read: %v", diags)
	}
}
