package dsl

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// typeIdentities is the sorted list of "type identity" of a variant's
// stages: what a cache holds of them, names left out.
func typeIdentities(t *testing.T, v *Variant) []string {
	t.Helper()
	ids, err := v.Graph.Identities()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range v.Graph.Nodes {
		out = append(out, n.Type.Name+" "+ids[n.ID])
	}
	sort.Strings(out)
	return out
}

func identitiesByName(t *testing.T, v *Variant) map[string]string {
	t.Helper()
	ids, err := v.Graph.Identities()
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// A file written with for_each loads into the same (type, identity) set as
// the same pipeline written out block by block, in every profile: the
// rewrite re-runs nothing.
func TestForEachLonghand(t *testing.T) {
	t.Parallel()
	for _, profile := range []string{"", "mini"} {
		long := loadFile(t, "testdata/foreach/longhand.hcl", Options{Profile: profile})
		short := loadFile(t, "testdata/foreach/foreach.hcl", Options{Profile: profile})
		a, b := typeIdentities(t, long.Variants[0]), typeIdentities(t, short.Variants[0])
		if !slices.Equal(a, b) {
			t.Errorf("profile %q: longhand and for_each differ:\n%s\n--\n%s", profile, strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
		if len(a) != 8 {
			t.Errorf("profile %q: %d stages, want 8", profile, len(a))
		}
	}
	cfg := loadFile(t, "testdata/foreach/foreach.hcl", Options{Profile: "mini"})
	v := cfg.Variants[0]
	got := strings.Join(stageNames(v), " ")
	want := `corpus["wiki"] corpus["nli"] mask["wiki"] mask["nli"] train["wiki"] train["nli"] eval["wiki"] eval["nli"]`
	if got != want {
		t.Errorf("instances:\n got %s\nwant %s", got, want)
	}
	tr := v.Stage(`train["nli"]`)
	if tr == nil || tr.Block != "train" || tr.Key != "nli" || tr.Seed != 7 ||
		num(t, tr.Params, "max_steps") != 10 || num(t, tr.Params, "layers") != 2 || num(t, tr.Params, "learning_rate") != 5e-5 {
		t.Errorf(`train["nli"] = %+v`, tr)
	}
	if w := v.Stage(`train["wiki"]`); w == nil || num(t, w.Params, "max_steps") != 0 || num(t, w.Params, "layers") != 2 || w.Seed != 42 {
		t.Errorf(`train["wiki"] = %+v`, w)
	}
	if e := v.Stage(`eval["nli"]`); e == nil || e.Inputs["model"].Stage != `train["nli"]` {
		t.Errorf(`eval["nli"] reads %+v`, e)
	}
	var names []string
	for _, x := range cfg.Expects {
		names = append(names, x.Name+"="+x.Value.Stage)
	}
	if got, want := strings.Join(names, " "), `avg[wiki]=eval["wiki"] avg[nli]=eval["nli"]`; got != want {
		t.Errorf("expects %s, want %s", got, want)
	}
}

// --set on one instance changes that instance (and what reads it), nothing
// else; on the block, every instance.
func TestForEachSetOneInstance(t *testing.T) {
	t.Parallel()
	base := identitiesByName(t, loadFile(t, "testdata/foreach/foreach.hcl", Options{}).Variants[0])
	changed := func(set string) string {
		v := loadFile(t, "testdata/foreach/foreach.hcl", Options{Sets: []string{set}}).Variants[0]
		var out []string
		for id, k := range identitiesByName(t, v) {
			if base[id] != k {
				out = append(out, id)
			}
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	for _, c := range []struct{ set, want string }{
		{`stage.train["nli"].learning_rate=1e-4`, `eval["nli"] train["nli"]`},
		{`stage.train.learning_rate=1e-4`, `eval["nli"] eval["wiki"] train["nli"] train["wiki"]`},
		{`stage.mask["wiki"].top_k=1`, `eval["wiki"] mask["wiki"] train["wiki"]`},
		{`stage.train["wiki"].seed=1`, `eval["wiki"] train["wiki"]`},
		{`stage.train["nli"].data=stage.mask["wiki"].pairs`, `eval["nli"] train["nli"]`},
	} {
		if got := changed(c.set); got != c.want {
			t.Errorf("--set %s changed %q, want %q", c.set, got, c.want)
		}
	}
	v := loadFile(t, "testdata/foreach/foreach.hcl", Options{Sets: []string{`stage.train["nli"].learning_rate=1e-4,2e-4`}})
	if len(v.Variants) != 2 || v.Variants[1].Name != `train["nli"].learning_rate=0.0002` {
		t.Errorf("a --set list on an instance: %d variants, %q", len(v.Variants), v.Variants[len(v.Variants)-1].Name)
	}
}

// A profile may change for_each; for_each = stage.NAME follows.
func TestForEachProfileChangesInstances(t *testing.T) {
	t.Parallel()
	src := `
experiment "x" {
}
stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  for_each = { a = 1, b = 2, c = 3 }
  uses     = "text.mask"
  input    = stage.corpus.sentences
  top_k    = each.value
}
stage "train" {
  for_each = stage.mask
  uses     = "train.encoder"
  data     = each.value.pairs
}
stage "eval" {
  for_each = { for k, v in stage.train : k => v if k != "b" }
  uses     = "evaluate.sts"
  model    = each.value.model
}
expect "row" {
  for_each = stage.eval
  column   = each.key
  value    = each.value.metrics.avg
}
stage "all" {
  for_each = stage.train
  uses     = "evaluate.sts"
  model    = each.value.model
}
expect "all" {
  for_each = stage.all # in all's instance order
  column   = each.key
  value    = each.value.metrics.avg
}
profile "mini" {
  stage "mask" {
    for_each = { c = 1, a = 5 }
  }
}
`
	for _, c := range []struct{ profile, want, expects string }{
		{"", `corpus mask["a"] mask["b"] mask["c"] train["a"] train["b"] train["c"] eval["a"] eval["c"] all["a"] all["b"] all["c"]`,
			`row[a]:eval["a"] row[c]:eval["c"] all[a]:all["a"] all[b]:all["b"] all[c]:all["c"]`},
		{"mini", `corpus mask["c"] mask["a"] train["c"] train["a"] eval["a"] eval["c"] all["c"] all["a"]`,
			`row[a]:eval["a"] row[c]:eval["c"] all[c]:all["c"] all[a]:all["a"]`},
	} {
		cfg := mustLoad(t, "x.hcl", []byte(src), Options{Profile: c.profile})
		v := cfg.Variants[0]
		if got := strings.Join(stageNames(v), " "); got != c.want {
			t.Errorf("profile %q: %s, want %s", c.profile, got, c.want)
		}
		var ex []string
		for _, x := range cfg.Expects {
			ex = append(ex, x.Name+":"+x.Value.Stage)
			if x.Value.Output != "metrics" || strings.Join(x.Value.Path, ".") != "avg" || x.Column != x.Key {
				t.Errorf("expect %+v", x)
			}
		}
		if got := strings.Join(ex, " "); got != c.expects {
			t.Errorf("profile %q: expects %s, want %s", c.profile, got, c.expects)
		}
		if c.profile == "mini" && num(t, v.Stage(`mask["a"]`).Params, "top_k") != 5 {
			t.Errorf("mini: mask[a] top_k = %v", v.Stage(`mask["a"]`).Params)
		}
	}
	// --target: a for_each stage's name means all its instances.
	v := mustLoad(t, "x.hcl", []byte(src), Options{}).Variants[0]
	for name, want := range map[string]string{
		"train":        `train["a"] train["b"] train["c"]`,
		`train["b"]`:   `train["b"]`,
		`train[b]`:     `train["b"]`,
		"corpus":       "corpus",
		"nope":         "",
		`train["zzz"]`: "",
	} {
		if got := strings.Join(v.Instances(name), " "); got != want {
			t.Errorf("Instances(%s) = %q, want %q", name, got, want)
		}
	}
}

// Ablation paths, variant sets and resources reach one instance.
func TestForEachOverridePaths(t *testing.T) {
	t.Parallel()
	src := `
experiment "x" {
}
stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  for_each = toset(["a", "b"])
  uses     = "text.mask"
  input    = stage.corpus.sentences
}
profile "cpu" {
  stage "mask[\"b\"]" {
    resources {
      cpus = 3
    }
  }
}
ablation "k" {
  vary = { "stage.mask[\"a\"].top_k" = [1, 2] }
  variant "r" {
    set = { stage.mask["b"].ratio = 0.25 }
  }
}
`
	cfg := mustLoad(t, "x.hcl", []byte(src), Options{Ablation: "k"})
	var names []string
	for _, v := range cfg.Variants {
		names = append(names, v.Name)
	}
	if got, want := strings.Join(names, " | "), `mask["a"].top_k=1, r | mask["a"].top_k=2, r`; got != want {
		t.Errorf("variants %s, want %s", got, want)
	}
	v := cfg.Variants[1]
	if num(t, v.Stage(`mask["a"]`).Params, "top_k") != 2 || num(t, v.Stage(`mask["b"]`).Params, "top_k") != 3 ||
		num(t, v.Stage(`mask["b"]`).Params, "ratio") != 0.25 || num(t, v.Stage(`mask["a"]`).Params, "ratio") != 0.5 {
		t.Errorf("variant 2: %v %v", v.Stage(`mask["a"]`).Params, v.Stage(`mask["b"]`).Params)
	}
	v = mustLoad(t, "x.hcl", []byte(src), Options{Profile: "cpu"}).Variants[0]
	if a, b := v.Stage(`mask["a"]`).Resources.CPUs, v.Stage(`mask["b"]`).Resources.CPUs; a == 3 || b != 3 {
		t.Errorf("cpus a=%d b=%d", a, b)
	}
	v = mustLoad(t, "x.hcl", []byte(src), Options{Sets: []string{`stage.mask["a"].resources.cpus=2`}}).Variants[0]
	if a, b := v.Stage(`mask["a"]`).Resources.CPUs, v.Stage(`mask["b"]`).Resources.CPUs; a != 2 || b == 2 {
		t.Errorf("--set resources: cpus a=%d b=%d", a, b)
	}
}

// Flags that name instances badly are reported at the flag.
func TestForEachSetErrors(t *testing.T) {
	t.Parallel()
	for set, want := range map[string]string{
		`stage.train["zzz"].learning_rate=1`: `stage.train["zzz"].learning_rate: stage "train" has no instance "zzz"; its instances: train["wiki"], train["nli"]`,
		`stage.eval["wiki"].nope=1`:          `has no input or parameter named "nope"`,
		`stage.train["a"].for_each=["a"]`:    `for_each belongs to the whole stage`,
		`stage.train["a"]=1`:                 `the path of one instance is stage.NAME["KEY"].ATTRIBUTE`,
		`stage.zzz["a"].top_k=1`:             `there is no stage "zzz"`,
		`stage.mask.for_each=3`:              `got number`,
	} {
		src := mustRead(t, "testdata/foreach/foreach.hcl")
		l := NewLoader(testRegistry())
		cfg, diags := l.LoadSource("foreach.hcl", src, Options{Sets: []string{set}})
		if cfg != nil || !diags.HasErrors() {
			t.Errorf("--set %s: loaded", set)
			continue
		}
		var b strings.Builder
		Render(&b, l.Files(), diags)
		if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "--set:1") {
			t.Errorf("--set %s:\n%s\nwant %q at --set:1", set, b.String(), want)
		}
	}
}

// A module's for_each stage is read through an output block; its
// instances are named module.M.NAME["KEY"].
func TestForEachInModule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mod := `
experiment "m" {
}
stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  for_each = { a = 1, b = 2 }
  uses     = "text.mask"
  input    = stage.corpus.sentences
  top_k    = each.value
}
output "pairs_b" {
  value = stage.mask["b"].pairs
}
`
	root := `
experiment "r" {
}
module "m" {
  source = "./mod.hcl"
}
stage "train" {
  uses = "train.encoder"
  data = module.m.pairs_b
}
stage "bad" {
  uses = "train.encoder"
  data = module.m.mask["a"].pairs
}
`
	if err := os.WriteFile(filepath.Join(dir, "mod.hcl"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	l := NewLoader(testRegistry())
	_, diags := l.LoadSource(filepath.Join(dir, "root.hcl"), []byte(root), Options{})
	if len(diags) != 1 || diags[0].Summary != "Module stage with for_each" || diags[0].Subject.Start.Line != 13 {
		t.Errorf("diagnostics: %v", diags)
	}
	root = strings.Replace(root, "module.m.mask[\"a\"].pairs", "module.m.pairs_b", 1)
	cfg := mustLoad(t, filepath.Join(dir, "root.hcl"), []byte(root), Options{})
	v := cfg.Variants[0]
	if tr := v.Stage("train"); tr == nil || tr.Inputs["data"].Stage != `module.m.mask["b"]` {
		t.Fatalf("train reads %+v (stages %v)", tr, stageNames(v))
	}
	if m := v.Stage(`module.m.mask["b"]`); m == nil || num(t, m.Params, "top_k") != 2 || m.Key != "b" || m.Block != "mask" {
		t.Errorf(`module.m.mask["b"] = %+v`, m)
	}
	if v.Stage(`module.m.mask["a"]`) != nil {
		t.Errorf("an instance nothing reads was instantiated: %v", stageNames(v))
	}
}

// Instances feed repeat blocks (start, and stages inside the rounds) like
// any stage.
func TestForEachIntoRepeat(t *testing.T) {
	t.Parallel()
	src := `
experiment "x" {
}
stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  for_each = ["a", "b"]
  uses     = "text.mask"
  input    = stage.corpus.sentences
}
stage "init" {
  for_each = toset(["a", "b"])
  uses     = "init.random"
}
repeat "r" {
  rounds = 2
  start  = { model = stage.init["b"].model }
  stage "train" {
    uses = "train.encoder"
    init = previous.model
    data = stage.mask["a"].pairs
  }
  next = { model = stage.train.model }
}
stage "eval" {
  uses  = "evaluate.sts"
  model = repeat.r.last.model
}
`
	v := mustLoad(t, "x.hcl", []byte(src), Options{}).Variants[0]
	r1, r2 := v.Stage("r[1].train"), v.Stage("r[2].train")
	if r1 == nil || r1.Inputs["init"].Stage != `init["b"]` || r1.Inputs["data"].Stage != `mask["a"]` ||
		r2 == nil || r2.Inputs["init"].Stage != "r[1].train" {
		t.Errorf("rounds: %+v %+v", r1, r2)
	}
}

// Stages without for_each listed by key ({ a = stage.a, b = stage.b }) give
// one instance each, with each.value their outputs: evaluating every
// single-stage model with one block has the longhand's identities.
func TestForEachListedStages(t *testing.T) {
	t.Parallel()
	head := `
experiment "x" {
}
stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}
stage "a" {
  uses = "train.encoder"
  data = stage.mask.pairs
}
stage "b" {
  uses          = "train.encoder"
  data          = stage.mask.pairs
  learning_rate = 1e-4
}
stage "c" {
  for_each = { x = 1, y = 2 }
  uses     = "train.encoder"
  data     = stage.mask.pairs
  layers   = each.value
}
`
	long := head + `
stage "eval_a" {
  uses  = "evaluate.sts"
  model = stage.a.model
}
stage "eval_b" {
  uses  = "evaluate.sts"
  model = stage.b.model
}
stage "eval_y" {
  uses  = "evaluate.sts"
  model = stage.c["y"].model
}
expect "avg_b" {
  value = stage.eval_b.metrics.avg
}
`
	short := head + `
stage "eval" {
  for_each = { b = stage.b, a = stage.a, y = stage.c["y"] }
  uses     = "evaluate.sts"
  model    = each.value.model
}
expect "avg" {
  for_each = { b = stage.eval["b"] }
  column   = each.key
  value    = each.value.metrics.avg
}
`
	lv := mustLoad(t, "long.hcl", []byte(long), Options{}).Variants[0]
	cfg := mustLoad(t, "short.hcl", []byte(short), Options{})
	sv := cfg.Variants[0]
	if a, b := typeIdentities(t, lv), typeIdentities(t, sv); !slices.Equal(a, b) {
		t.Errorf("longhand and listed stages differ:\n%s\n--\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if got, want := strings.Join(stageNames(sv), " "), `corpus mask a b c["x"] c["y"] eval["b"] eval["a"] eval["y"]`; got != want {
		t.Errorf("instances %s, want %s", got, want)
	}
	for key, from := range map[string]string{"a": "a", "b": "b", "y": `c["y"]`} {
		if s := sv.Stage(`eval["` + key + `"]`); s == nil || s.Inputs["model"].Stage != from || s.Inputs["model"].Output != "model" {
			t.Errorf(`eval["%s"] = %+v, want it to read %s.model`, key, s, from)
		}
	}
	if len(cfg.Expects) != 1 || cfg.Expects[0].Name != "avg[b]" || cfg.Expects[0].Value.Stage != `eval["b"]` {
		t.Errorf("expects %+v", cfg.Expects)
	}
	// An output listed as the value: each.value is that output.
	out := mustLoad(t, "out.hcl", []byte(head+`
stage "eval" {
  for_each = { a = stage.a.model }
  uses     = "evaluate.sts"
  model    = each.value
}
`), Options{}).Variants[0]
	if s := out.Stage(`eval["a"]`); s == nil || s.Inputs["model"].Stage != "a" {
		t.Errorf(`eval["a"] = %+v`, s)
	}
}

// A repeat's result and a module's stage's output listed by key ({ idc =
// repeat.r.last.model, mini = module.m.init.model }) give one instance
// each, with each.value that artifact: the longhand's identities and
// inputs, and a profile's override of one instance still wins.
func TestForEachListedResults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mod := `
experiment "m" {
}
stage "init" {
  uses = "init.random"
}
`
	if err := os.WriteFile(filepath.Join(dir, "mod.hcl"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	head := `
experiment "x" {
}
module "m" {
  source = "./mod.hcl"
}
stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}
stage "a" {
  uses = "train.encoder"
  data = stage.mask.pairs
}
repeat "r" {
  rounds = 2
  start  = { model = stage.a.model }
  stage "train" {
    uses = "train.encoder"
    init = previous.model
    data = stage.mask.pairs
  }
  next = { model = stage.train.model }
}
`
	long := head + `
stage "eval_a" {
  uses  = "evaluate.sts"
  model = stage.a.model
}
stage "eval_r" {
  uses  = "evaluate.sts"
  model = repeat.r.last.model
}
stage "eval_r1" {
  uses  = "evaluate.sts"
  model = repeat.r.round[1].model
}
stage "eval_m" {
  uses  = "evaluate.sts"
  model = module.m.init.model
}
profile "p" {
  stage "eval_r" { model = repeat.r.round[1].model }
}
`
	short := head + `
stage "eval" {
  for_each = { a = stage.a.model, r = repeat.r.last.model, r1 = repeat.r.round[1].model, m = module.m.init.model }
  uses     = "evaluate.sts"
  model    = each.value
}
profile "p" {
  stage "eval[\"r\"]" { model = repeat.r.round[1].model }
}
`
	for _, profile := range []string{"", "p"} {
		lv := mustLoad(t, filepath.Join(dir, "long.hcl"), []byte(long), Options{Profile: profile}).Variants[0]
		sv := mustLoad(t, filepath.Join(dir, "short.hcl"), []byte(short), Options{Profile: profile}).Variants[0]
		if a, b := typeIdentities(t, lv), typeIdentities(t, sv); !slices.Equal(a, b) {
			t.Errorf("profile %q: longhand and listed results differ:\n%s\n--\n%s", profile, strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
		for key, long := range map[string]string{"a": "eval_a", "r": "eval_r", "r1": "eval_r1", "m": "eval_m"} {
			s, l := sv.Stage(`eval["`+key+`"]`), lv.Stage(long)
			if s == nil || l == nil || s.Inputs["model"].Stage != l.Inputs["model"].Stage || s.Inputs["model"].Output != l.Inputs["model"].Output {
				t.Errorf(`profile %q: eval["%s"] = %+v, want the input of %s: %+v`, profile, key, s, long, l)
			}
		}
	}
	if s := mustLoad(t, filepath.Join(dir, "short.hcl"), []byte(short), Options{Profile: "p"}).Variants[0].Stage(`eval["r"]`); s == nil || s.Inputs["model"].Stage != "r[1].train" {
		t.Errorf(`profile p: eval["r"] = %+v, want r[1].train`, s)
	}
}
