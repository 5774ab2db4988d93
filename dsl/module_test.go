package dsl

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModuleStagesAreUsedByReference(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/modules/simcse.hcl", Options{})
	v := cfg.Variants[0]
	// Without a profile, train has no init: only the module stages that the
	// expect "pretrained" reaches (probe and what it needs) are instances;
	// roberta is never instantiated.
	if got, want := strings.Join(stageNames(v), " "),
		"corpus mask train eval module.pre.corpus module.pre.mask module.pre.bert module.pre.probe"; got != want {
		t.Errorf("stages = %q, want %q", got, want)
	}
	bert := v.Stage("module.pre.bert")
	if bert == nil {
		t.Fatal("no module.pre.bert")
	}
	if got := num(t, bert.Params, "hidden"); got != 256 {
		t.Errorf("hidden = %v: the module argument size = 256 sets the module's variable", got)
	}
	if bert.Seed != 7 {
		t.Errorf("seed = %d: the module's own seed variable (7) applies, not the includer's (42)", bert.Seed)
	}
	if bert.Range.Filename != "testdata/modules/pretrained.hcl" || bert.Block != "bert" {
		t.Errorf("range %v, block %q: want the module file's stage block", bert.Range, bert.Block)
	}
	if ref := bert.Inputs["data"]; ref.Stage != "module.pre.mask" {
		t.Errorf("inputs inside the module refer to module instances: %+v", ref)
	}
	var pre *Expect
	for _, x := range cfg.Expects {
		if x.Name == "pretrained" {
			pre = x
		}
	}
	if pre == nil || pre.Value.Stage != "module.pre.probe" || strings.Join(pre.Value.Path, ".") != "avg" {
		t.Errorf("expect pretrained = %+v", pre)
	}
	if len(cfg.Expects) != 2 {
		t.Errorf("%d expects: the module's own expect blocks are not the includer's", len(cfg.Expects))
	}
}

func TestModuleProfilePropagates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		profile string
		layers  float64
		steps   float64
	}{{"ci", 2, 10}, {"mini", 12, 0}} {
		cfg := loadFile(t, "testdata/modules/simcse.hcl", Options{Profile: tc.profile})
		v := cfg.Variants[0]
		train := v.Stage("train")
		if ref := train.Inputs["init"]; ref.Stage != "module.pre.bert" || ref.Output != "model" {
			t.Fatalf("%s: init = %+v", tc.profile, ref)
		}
		bert := v.Stage("module.pre.bert")
		// ci: the module's own ci profile applies; mini: the module has no
		// mini profile, so its stage blocks apply as written.
		if got := num(t, bert.Params, "layers"); got != tc.layers {
			t.Errorf("%s: layers = %v, want %v", tc.profile, got, tc.layers)
		}
		if got := num(t, bert.Params, "max_steps"); got != tc.steps {
			t.Errorf("%s: max_steps = %v, want %v", tc.profile, got, tc.steps)
		}
		// The module stage must come before its user.
		pos := map[string]int{}
		for i, s := range v.Stages {
			pos[s.Name] = i
		}
		if pos["module.pre.bert"] > pos["train"] {
			t.Errorf("%s: order %v", tc.profile, stageNames(v))
		}
		if v.Stage("module.pre.roberta") != nil {
			t.Errorf("%s: an unreferenced module stage became an instance", tc.profile)
		}
	}
}

// TestModuleFileRunsAlone: a module file is an experiment of its own.
func TestModuleFileRunsAlone(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/modules/pretrained.hcl", Options{Profile: "ci"})
	v := cfg.Variants[0]
	if v.Stage("roberta") == nil || v.Stage("bert") == nil {
		t.Errorf("stages %v", stageNames(v))
	}
	if got := num(t, v.Stage("bert").Params, "max_steps"); got != 10 {
		t.Errorf("max_steps = %v", got)
	}
}

// TestModuleKeysMatchAcrossFiles: the same module stage, used from two
// files, has the same type, parameters, seed and (by name) inputs, which is
// what the runner's key hashes -- so the second file gets a cache hit
// (cmd/repro's TestModuleCacheHitAcrossExperiments runs it for real).
func TestModuleKeysMatchAcrossFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/modules/pretrained.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pretrained.hcl"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	user := func(name, extra string) string {
		p := filepath.Join(dir, name)
		body := `experiment "` + strings.TrimSuffix(name, ".hcl") + `" {}
module "pre" {
  source = "./pretrained.hcl"
}
stage "eval" {
  uses  = "evaluate.sts"
  model = module.pre.bert.model
}
profile "ci" {}
` + extra
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := loadFile(t, user("a.hcl", ""), Options{Profile: "ci"})
	b := loadFile(t, user("b.hcl", `stage "other" {
  uses = "data.sentences"
  path = "y"
}
`), Options{Profile: "ci"})
	sa, sb := a.Variants[0].Stage("module.pre.bert"), b.Variants[0].Stage("module.pre.bert")
	if sa == nil || sb == nil {
		t.Fatal("module stage missing")
	}
	if !sa.Params.Equals(sb.Params).True() || sa.Seed != sb.Seed || sa.Type.Name != sb.Type.Name {
		t.Errorf("the shared stage differs between the files: %#v vs %#v", sa.Params, sb.Params)
	}
}

// TestModuleErrorFixtures checks diagnostics across files: every fixture
// file under testdata/modules/errors carries `# ERROR: text` on the lines
// where loading root.hcl must report something, whichever file it is in.
func TestModuleErrorFixtures(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/modules/errors/*.hcl")
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
	root := "testdata/modules/errors/root.hcl"
	l := NewLoader(testRegistry())
	cfg, diags := l.Load(root, Options{})
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
		found := false
		for i, w := range want[k] {
			if strings.Contains(text, w) {
				want[k] = append(want[k][:i], want[k][i+1:]...)
				found = true
				break
			}
		}
		if !found {
			t.Errorf("unexpected diagnostic at %s:%d: %s", k.file, k.line, text)
		}
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
	// Every file a diagnostic points into is available for snippets.
	for _, d := range diags {
		if d.Subject != nil && l.Files()[d.Subject.Filename] == nil {
			t.Errorf("no source for %s", d.Subject.Filename)
		}
	}
}

// TestModuleReferenceFromFlag: --set can connect a module stage, as a
// profile can.
func TestModuleReferenceFromFlag(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/modules/simcse.hcl", Options{Sets: []string{"stage.train.init=module.pre.roberta.model"}})
	v := cfg.Variants[0]
	if ref := v.Stage("train").Inputs["init"]; ref.Stage != "module.pre.roberta" {
		t.Fatalf("init = %+v", ref)
	}
	if v.Stage("module.pre.roberta") == nil {
		t.Errorf("the module stage the flag names is not an instance: %v", stageNames(v))
	}
	l := NewLoader(testRegistry())
	src := mustRead(t, "testdata/modules/simcse.hcl")
	_, diags := l.LoadSource("testdata/modules/simcse.hcl", src, Options{Sets: []string{"stage.train.init=module.pre.robert.model"}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), `no top-level stage "robert". Did you mean "roberta"?`) {
		t.Errorf("a misspelt module stage in --set: %v", diags)
	}
}
