package dsl

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

func mustLoad(t *testing.T, filename string, src []byte, opts Options) *Config {
	t.Helper()
	l := NewLoader(testRegistry())
	cfg, diags := l.LoadSource(filename, src, opts)
	if diags.HasErrors() {
		var b strings.Builder
		Render(&b, l.Files(), diags)
		t.Fatalf("unexpected diagnostics:\n%s", b.String())
	}
	return cfg
}

func loadFile(t *testing.T, path string, opts Options) *Config {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return mustLoad(t, path, src, opts)
}

func stageNames(v *Variant) []string {
	var out []string
	for _, s := range v.Stages {
		out = append(out, s.Name)
	}
	return out
}

func num(t *testing.T, v cty.Value, attr string) float64 {
	t.Helper()
	f, _ := v.GetAttr(attr).AsBigFloat().Float64()
	return f
}

func TestLoadPaser(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/paser.hcl", Options{})
	if cfg.Experiment.Name != "paser" || cfg.Experiment.Table != "Table 1: unsupervised STS" || cfg.Experiment.Paper != "paser.md" {
		t.Errorf("experiment = %+v", cfg.Experiment)
	}
	if len(cfg.Variants) != 1 || len(cfg.Variants[0].Label) != 0 || cfg.Variants[0].Name != "" {
		t.Fatalf("want one default variant, got %d", len(cfg.Variants))
	}
	v := cfg.Variants[0]
	if got, want := strings.Join(stageNames(v), " "), "corpus mask eda train eval"; got != want {
		t.Errorf("order = %q, want %q", got, want)
	}
	corpus := v.Stage("corpus")
	if got := corpus.Params.GetAttr("path").AsString(); got != "wiki1m.txt" {
		t.Errorf("corpus path = %q (locals and interpolation)", got)
	}
	if got := num(t, corpus.Params, "limit"); got != 1000 {
		t.Errorf("default limit = %v", got)
	}
	train := v.Stage("train")
	if got := num(t, train.Params, "learning_rate"); got != 3e-5 {
		t.Errorf("learning_rate = %v", got)
	}
	if got := num(t, train.Params, "layers"); got != 12 {
		t.Errorf("layers = %v (default)", got)
	}
	if got := train.Params.GetAttr("tasks"); !got.Type().Equals(cty.List(cty.String)) || got.LengthInt() != 2 {
		t.Errorf("tasks = %#v, want a converted list of 2 strings", got)
	}
	if train.Seed != 42 || v.Stage("eval").Seed != 7 {
		t.Errorf("seeds = %d, %d; want experiment default 42 and explicit 7", train.Seed, v.Stage("eval").Seed)
	}
	if ref := train.Inputs["data"]; ref.Stage != "mask" || ref.Output != "pairs" || ref.Range.Start.Line == 0 {
		t.Errorf("train.data = %+v", ref)
	}
	if _, ok := train.Inputs["init"]; ok {
		t.Errorf("optional input init should be absent")
	}
	// Params decode into the type's struct: what the runner will do.
	p, err := train.Type.DecodeParams(train.Params)
	if err != nil {
		t.Fatal(err)
	}
	if tp := p.(*trainParams); tp.BatchSize != 64 || tp.Pooling != "cls" {
		t.Errorf("decoded = %+v", tp)
	}
	if len(cfg.Expects) != 2 {
		t.Fatalf("expects = %d", len(cfg.Expects))
	}
	e := cfg.Expects[0]
	if e.Value.Stage != "eval" || e.Value.Output != "metrics" || strings.Join(e.Value.Path, ".") != "stsb.spearman" ||
		e.Paper != 76.25 || e.Tolerance != 1.5 || e.Row != "PaSeR-BERT-base" || e.Column != "STS-B" {
		t.Errorf("expect = %+v", e)
	}
	if cfg.Expects[1].Tolerance != DefaultTolerance || cfg.Expects[1].Profile != "mini" {
		t.Errorf("expect avg = %+v", cfg.Expects[1])
	}
	if strings.Join(cfg.Profiles, ",") != "mini" || strings.Join(cfg.Ablations, ",") != "top_k,eda" {
		t.Errorf("profiles %v ablations %v", cfg.Profiles, cfg.Ablations)
	}
	if cfg.Variables["seed"].AsBigFloat().String() != "42" {
		t.Errorf("variables = %#v", cfg.Variables)
	}
}

func TestProfileAndVars(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/paser.hcl", Options{Profile: "mini", Vars: map[string]string{"seed": "3"}})
	v := cfg.Variants[0]
	train := v.Stage("train")
	if num(t, train.Params, "layers") != 2 || num(t, train.Params, "hidden") != 128 || num(t, train.Params, "max_steps") != 300 {
		t.Errorf("profile deltas not applied: %#v", train.Params)
	}
	if num(t, train.Params, "batch_size") != 64 {
		t.Errorf("paper setting lost under the profile")
	}
	if got := v.Stage("corpus").Params.GetAttr("path").AsString(); got != "mini.txt" {
		t.Errorf("profile variable: path = %q", got)
	}
	if train.Seed != 3 {
		t.Errorf("-var seed=3: seed = %d", train.Seed)
	}
	// -var beats the profile; a -var that is not an expression is a string.
	cfg = loadFile(t, "testdata/paser.hcl", Options{Profile: "mini", Vars: map[string]string{"corpus": "big corpus"}})
	if got := cfg.Variants[0].Stage("corpus").Params.GetAttr("path").AsString(); got != "big corpus.txt" {
		t.Errorf("path = %q", got)
	}
}

func TestAblationGrid(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/paser.hcl", Options{Ablation: "top_k"})
	if len(cfg.Variants) != 3 {
		t.Fatalf("variants = %d", len(cfg.Variants))
	}
	for i, v := range cfg.Variants {
		want := float64(i + 1)
		if got := num(t, v.Stage("mask").Params, "top_k"); got != want {
			t.Errorf("variant %d top_k = %v", i, got)
		}
		if l, _ := v.Label["stage.mask.top_k"].AsBigFloat().Float64(); l != want {
			t.Errorf("variant %d label = %#v", i, v.Label)
		}
		// Upstream of the varied stage is the same unit in every cell.
		if !v.Stage("corpus").Params.RawEquals(cfg.Variants[0].Stage("corpus").Params) {
			t.Errorf("corpus params differ across cells")
		}
	}
	if cfg.Variants[1].Name != "mask.top_k=2" {
		t.Errorf("name = %q", cfg.Variants[1].Name)
	}
	ab := cfg.Ablation
	if ab == nil || ab.Title != "Table 5: masked phrases" || len(ab.Vary) != 1 || len(ab.Vary[0].Values) != 3 || len(ab.Report) != 2 {
		t.Fatalf("ablation = %+v", ab)
	}
	if ab.Report[0].Stage != "eval" || ab.Report[0].Path[0] != "stsb" {
		t.Errorf("report = %+v", ab.Report)
	}
	if strings.Join(cfg.Varied, ",") != "stage.mask.top_k" {
		t.Errorf("varied = %v", cfg.Varied)
	}
}

func TestExplicitVariants(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/paser.hcl", Options{Ablation: "eda"})
	var names []string
	for _, v := range cfg.Variants {
		names = append(names, v.Name)
	}
	if strings.Join(names, "|") != "none|SR+RD|RS" {
		t.Fatalf("names = %v", names)
	}
	srrd := cfg.Variants[1].Stage("eda").Params
	if num(t, srrd, "synonym_replacement") != 0.1 || num(t, srrd, "random_deletion") != 0.1 || num(t, srrd, "random_swap") != 0 {
		t.Errorf("SR+RD = %#v", srrd)
	}
	if len(cfg.Variants[0].Label) != 0 || len(cfg.Variants[1].Label) != 2 {
		t.Errorf("labels = %v / %v", cfg.Variants[0].Label, cfg.Variants[1].Label)
	}
	if got := strings.Join(cfg.Varied, ","); got != "stage.eda.synonym_replacement,stage.eda.random_deletion,stage.eda.random_swap" {
		t.Errorf("varied = %s", got)
	}
}

func TestSetFlags(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/paser.hcl", Options{Sets: []string{
		"stage.mask.top_k=1, 2,3",
		"stage.train.tasks=[\"a,b\", \"c\"],[\"d\"]",
		"stage.mask.mode=np_vp",
		"stage.train.learning_rate=1e-4",
	}})
	if len(cfg.Variants) != 6 {
		t.Fatalf("variants = %d, want 3 x 2", len(cfg.Variants))
	}
	last := cfg.Variants[5]
	if num(t, last.Stage("mask").Params, "top_k") != 3 || last.Stage("train").Params.GetAttr("tasks").LengthInt() != 1 {
		t.Errorf("last cell = %s", last.Name)
	}
	first := cfg.Variants[0].Stage("train").Params.GetAttr("tasks")
	if first.LengthInt() != 2 || first.Index(cty.NumberIntVal(0)).AsString() != "a,b" {
		t.Errorf("commas inside brackets and quotes split: %#v", first)
	}
	for _, v := range cfg.Variants {
		if v.Stage("mask").Params.GetAttr("mode").AsString() != "np_vp" || num(t, v.Stage("train").Params, "learning_rate") != 1e-4 {
			t.Fatalf("single-valued --set not applied to %s", v.Name)
		}
		if _, labelled := v.Label["stage.mask.mode"]; labelled {
			t.Errorf("a single --set is not an axis")
		}
	}
	// --set on the ablation's own axis replaces its values.
	cfg = loadFile(t, "testdata/paser.hcl", Options{Ablation: "top_k", Sets: []string{"stage.mask.top_k=4,5"}})
	if len(cfg.Variants) != 2 || num(t, cfg.Variants[1].Stage("mask").Params, "top_k") != 5 {
		t.Errorf("--set did not replace the axis: %d variants", len(cfg.Variants))
	}
	// Seeds and variables vary too.
	cfg = loadFile(t, "testdata/paser.hcl", Options{Sets: []string{"var.seed=1,2"}})
	if len(cfg.Variants) != 2 || cfg.Variants[1].Stage("train").Seed != 2 {
		t.Errorf("var.seed axis: %d variants", len(cfg.Variants))
	}
}

func TestSplitTopLevel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`1,2,3`:       `1|2|3`,
		`[1,2],[3]`:   `[1,2]|[3]`,
		`"a,b",c`:     `"a,b"|c`,
		`{a=1,b=2},x`: `{a=1,b=2}|x`,
		`"q\",",y`:    `"q\","|y`,
		`max(1,2)`:    `max(1,2)`,
		``:            ``,
		`a,`:          `a|`,
	} {
		var parts []string
		for _, p := range splitTopLevel(in) {
			parts = append(parts, in[p[0]:p[1]])
		}
		if got := strings.Join(parts, "|"); got != want {
			t.Errorf("splitTopLevel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSetErrors(t *testing.T) {
	t.Parallel()
	l := NewLoader(testRegistry())
	_, diags := l.LoadSource("testdata/paser.hcl", mustRead(t, "testdata/paser.hcl"), Options{Sets: []string{
		"stage.mask.top_kk=1",
		"stage.mask.top_k=1,x,2.5",
		"stage.nope.a=1",
		"novalue",
	}, Profile: "maxi", Ablation: "topk"})
	type want struct {
		file string
		line int
		col  int
		text string
	}
	wants := []want{
		{"--ablation", 1, 1, `no ablation "topk". Did you mean "top_k"?`},
		{"--profile", 1, 1, `no profile "maxi". Did you mean "mini"?`},
		{"--set", 1, 1, `no input or parameter named "top_kk". Did you mean "top_k"?`},
		{"--set", 2, 20, `Parameter "top_k" of text.mask must be number`},
		{"--set", 2, 22, `must be a whole number; got 2.5`},
		{"--set", 3, 1, `there is no stage "nope"`},
		{"--set", 4, 1, `write --set stage.NAME.ATTRIBUTE=VALUE`},
	}
	if len(diags) != len(wants) {
		var b strings.Builder
		Render(&b, l.Files(), diags)
		t.Fatalf("got %d diagnostics, want %d:\n%s", len(diags), len(wants), b.String())
	}
	for i, w := range wants {
		d := diags[i]
		if d.Subject == nil || d.Subject.Filename != w.file || d.Subject.Start.Line != w.line || d.Subject.Start.Column != w.col ||
			!strings.Contains(d.Summary+": "+d.Detail, w.text) {
			t.Errorf("diag %d = %v: %s: %s; want %s:%d:%d %q", i, d.Subject, d.Summary, d.Detail, w.file, w.line, w.col, w.text)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoadFromDisk(t *testing.T) {
	t.Parallel()
	cfg, diags := NewLoader(testRegistry()).Load("testdata/paser.hcl", Options{})
	if diags.HasErrors() || cfg == nil {
		t.Fatalf("Load: %v", diags)
	}
	_, diags = NewLoader(testRegistry()).Load("testdata/missing.hcl", Options{})
	if !diags.HasErrors() || !strings.Contains(diags[0].Detail, "testdata/missing.hcl") {
		t.Errorf("missing file: %v", diags)
	}
	var _ hcl.Diagnostics = diags
}

func TestValidateEveryProfileAndAblation(t *testing.T) {
	t.Parallel()
	src := string(mustRead(t, "testdata/paser.hcl"))
	dir := t.TempDir()
	path := dir + "/bad.hcl"
	// Wrong only under the profile and in one grid cell: a plain load is
	// clean, Validate finds both.
	bad := strings.Replace(src, "max_steps = 300", `max_steps = "many"`, 1)
	bad = strings.Replace(bad, `[1, 2, 3] }`, `[1, 2, "x"] }`, 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	l := NewLoader(testRegistry())
	if _, diags := l.Load(path, Options{}); diags.HasErrors() {
		t.Fatalf("plain load: %v", diags)
	}
	diags := l.Validate(path, Options{})
	if len(diags) != 2 || !strings.Contains(diags[0].Detail, `"max_steps"`) || !strings.Contains(diags[1].Detail, `"top_k"`) {
		t.Errorf("Validate = %v", diags)
	}
	if diags := l.Validate("testdata/paser.hcl", Options{}); len(diags) != 0 {
		t.Errorf("valid file: %v", diags)
	}
}

func TestTooManyVariants(t *testing.T) {
	t.Parallel()
	var a, b []string
	for i := 0; i < 70; i++ {
		a = append(a, fmt.Sprint(i))
		b = append(b, fmt.Sprint(float64(i)/100))
	}
	_, diags := NewLoader(testRegistry()).LoadSource("testdata/paser.hcl", mustRead(t, "testdata/paser.hcl"), Options{Sets: []string{
		"stage.mask.top_k=" + strings.Join(a, ","), "stage.mask.ratio=" + strings.Join(b, ","),
	}})
	if len(diags) != 1 || diags[0].Summary != "Too many variants" {
		t.Errorf("diags = %v", diags)
	}
}
