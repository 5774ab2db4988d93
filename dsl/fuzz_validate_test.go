package dsl

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzValidate runs `repro validate`'s check (every profile and ablation)
// on arbitrary files: no panic, no stack overflow, diagnostics renderable.
// Run: go test ./dsl -run '^$' -fuzz FuzzValidate -fuzztime 30s
func FuzzValidate(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.hcl")
	more, _ := filepath.Glob("testdata/errors/*.hcl")
	for _, p := range append(files, more...) {
		f.Add(string(mustReadF(f, p)))
	}
	reg := testRegistry()
	f.Fuzz(func(t *testing.T, src string) {
		p := filepath.Join(t.TempDir(), "fuzz.hcl")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		l := NewLoader(reg)
		diags := l.Validate(p, Options{})
		if err := Render(io.Discard, l.Files(), diags); err != nil {
			t.Fatal(err)
		}
	})
}
