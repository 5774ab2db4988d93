package dsl

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var moduleSource = regexp.MustCompile(`(source\s*=\s*")\./`)

// FuzzLoadSource checks that no input, however broken, panics the loader or
// the renderer, and that a result is never both a config and an error.
// Seeds: every fixture. Run: go test ./dsl -run '^$' -fuzz FuzzLoadSource -fuzztime 30s
func FuzzLoadSource(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.hcl")
	more, _ := filepath.Glob("testdata/errors/*.hcl")
	for _, p := range append(files, more...) {
		f.Add(string(mustReadF(f, p)), "stage.mask.top_k=1,2", "mini")
	}
	// Files that use modules (inputs, outputs, errors), their sources made
	// relative to this directory, where the fuzz input "fuzz.hcl" lives.
	mods, _ := filepath.Glob("testdata/modules/*.hcl")
	nested, _ := filepath.Glob("testdata/modules/*/*.hcl")
	for _, p := range append(mods, nested...) {
		src := moduleSource.ReplaceAllString(string(mustReadF(f, p)), "${1}./"+filepath.ToSlash(filepath.Dir(p))+"/")
		f.Add(src, "stage.t.init=module.w.model", "ci")
	}
	// Locals holding stage references; --set paths into module stages.
	locals, _ := filepath.Glob("testdata/locals/*.hcl")
	for _, p := range locals {
		f.Add(string(mustReadF(f, p)), "stage.other.layers=8", "mini")
	}
	paths := strings.NewReplacer(`"../inputs/`, `"./testdata/modules/inputs/`, `"./outer.hcl"`, `"./testdata/modules/paths/outer.hcl"`).
		Replace(string(mustReadF(f, "testdata/modules/paths/main.hcl")))
	for _, set := range []string{"module.a.train.learning_rate=1e-4,2e-4", `module.outer.mask["x"].top_k=5`,
		"module.outer.module.inner.train.epochs=2", "module.a.mask.input=stage.corpus.sentences", "module.nope.x.y=1"} {
		f.Add(paths, set, "lr")
	}
	reg := testRegistry()
	f.Fuzz(func(t *testing.T, src, set, profile string) {
		l := NewLoader(reg)
		opts := Options{Sets: []string{set}, Profile: profile, Ablation: profile, Vars: map[string]string{"seed": set}}
		cfg, diags := l.LoadSource("fuzz.hcl", []byte(src), opts)
		if cfg != nil && diags.HasErrors() {
			t.Fatal("config returned with errors")
		}
		if err := Render(io.Discard, l.Files(), diags); err != nil {
			t.Fatal(err)
		}
	})
}

func mustReadF(f *testing.F, p string) []byte {
	data, err := os.ReadFile(p)
	if err != nil {
		f.Fatal(err)
	}
	return data
}
