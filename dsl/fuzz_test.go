package dsl

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
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
